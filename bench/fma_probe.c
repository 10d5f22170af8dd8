/* bench/fma_probe.c — this machine's FP32 multiply-add peak, for bench/run_bench.py.
 *
 * The same probe as the generated binaries' --profile (runtime/onnxc_main.c): 12 independent
 * chains of vector multiply-adds of the target's width per thread, enough to hide the latency
 * of two FMA units. Unlike --profile, which multiplies one core's result by the thread count, this runs
 * the chains on every thread at once (one OpenMP parallel region, threads started before the
 * clock) and reports the sum, so a shared or throttled core shows up in the number.
 * Build: cc -O3 -march=native -fopenmp bench/fma_probe.c -o fma_probe (what run_bench.py does).
 * Usage: fma_probe THREADS... — prints one JSON line {"1": GFLOP/s, "2": GFLOP/s, ...}: for
 * each thread count the best of 5 trials of about 0.1 s each.
 * The vectors are 64 bytes on AVX-512, 32 on AVX and 16 otherwise: 12 chains of 64-byte
 * vectors split on AVX2 into 24 of its 16 registers and spill, which measured 7.5 GFLOP/s per
 * core on a Zen 3 whose FMAs do 99.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__AVX512F__)
#define PROBE_BYTES 64
#elif defined(__AVX__)
#define PROBE_BYTES 32
#else
#define PROBE_BYTES 16
#endif
typedef float vec __attribute__((vector_size(PROBE_BYTES)));

#if defined(__clang__)
static double chains(long iters) {
#pragma clang fp contract(fast)
#else
__attribute__((optimize("fp-contract=fast"))) static double chains(long iters) {
#endif
  const vec z = {0};
  vec a0 = z + 0.1f, a1 = z + 0.2f, a2 = z + 0.3f, a3 = z + 0.4f, a4 = z + 0.5f, a5 = z + 0.6f, a6 = z + 0.7f, a7 = z + 0.8f,
      a8 = z + 0.9f, a9 = z + 1.0f, a10 = z + 1.1f, a11 = z + 1.2f;
  const vec m = z + 0.999999f, c = z + 1e-6f;
  for (long i = 0; i < iters; ++i) {
    a0 = a0 * m + c; a1 = a1 * m + c; a2 = a2 * m + c; a3 = a3 * m + c; a4 = a4 * m + c; a5 = a5 * m + c;
    a6 = a6 * m + c; a7 = a7 * m + c; a8 = a8 * m + c; a9 = a9 * m + c; a10 = a10 * m + c; a11 = a11 * m + c;
  }
  vec s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  return s[0];
}

/* GFLOP/s of `threads` threads each running `iters` iterations (the slowest thread's time). */
static double trial(int threads, long iters) {
  double t_end = 0, t_start = 0;
  volatile double sink = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp barrier
#pragma omp single
    t_start = omp_get_wtime();
    double r = chains(iters);
#pragma omp atomic
    sink += r;
#pragma omp barrier
#pragma omp single
    t_end = omp_get_wtime();
  }
  double t = t_end - t_start;
  return t > 0 ? 12.0 * (PROBE_BYTES / 4) * 2 * (double)iters * threads / t * 1e-9 : 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s THREADS...\n", argv[0]);
    return 2;
  }
  long iters = 1 << 14;
  volatile double sink = 0;
  while (iters < (1L << 36)) { /* calibrate on one thread: about 0.1 s per trial */
    double t0 = omp_get_wtime();
    sink += chains(iters); /* used, so the call is not removed */
    if (omp_get_wtime() - t0 > 0.1) break;
    iters *= 2;
  }
  printf("{");
  for (int k = 1; k < argc; ++k) {
    int threads = atoi(argv[k]);
    if (threads < 1) {
      fprintf(stderr, "%s: bad thread count '%s'\n", argv[0], argv[k]);
      return 2;
    }
    double best = 0;
    for (int r = 0; r < 5; ++r) {
      double g = trial(threads, iters);
      if (g > best) best = g;
    }
    printf("%s\"%d\": %.2f", k > 1 ? ", " : "", threads, best);
  }
  printf("}\n");
  return 0;
}
