/* bench/peak_rss.c — runs a command and reports its peak resident memory and wall time, for
 * bench/run_bench.py.
 *
 * Why not wait4() from Python: Linux keeps a process's peak RSS across execve, so a child that
 * Python forks (or vforks) and that then executes the benchmark starts with Python's own peak
 * (hundreds of MiB with numpy and onnx loaded). This small program forks the command itself, so
 * the command's peak starts from this program's few hundred KiB.
 * Usage: peak_rss REPORT.json COMMAND [ARG...] — runs COMMAND (stdin, stdout, stderr inherited),
 * writes {"maxrss_kib": N, "wall_s": S} to REPORT.json (the command's and its children's largest
 * RSS; fork to exit) and exits with the command's status (128 + signal if it was killed).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s REPORT.json COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) {
    perror("peak_rss: fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror("peak_rss: exec");
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("peak_rss: wait4");
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror("peak_rss: report file");
    return 2;
  }
  fprintf(f, "{\"maxrss_kib\": %ld, \"wall_s\": %.6f}\n", ru.ru_maxrss,
          (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  fclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
