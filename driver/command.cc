// driver/command.cc — shell commands and their quoting (see command.h).
#include "driver/command.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>

namespace onnxc::driver {

std::string quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

int run_command(const std::string& cmd, std::string* output) {
  std::string full = cmd + " 2>&1";
  FILE* p = popen(full.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

bool same_files(const std::string& a, const std::string& b, const std::vector<std::string>& names) {
  auto bytes = [](const std::string& path, std::string* out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return !f.bad();
  };
  for (const std::string& n : names) {
    std::string x, y;
    if (!bytes(a + "/" + n, &x) || !bytes(b + "/" + n, &y) || x != y) return false;
  }
  return true;
}

}  // namespace onnxc::driver
