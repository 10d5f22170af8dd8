// driver/command.h — what the driver runs besides the compiler's own steps: shell commands
// (the C compiler, nvcc, the built binaries), their quoting, and wall-clock timing.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace onnxc::driver {

class Timer {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// s as one shell word, in single quotes.
std::string quote(const std::string& s);

// Runs cmd through the shell, its stdout and stderr appended to *output; its exit status (128 +
// the signal when it was killed, -1 when it could not start).
int run_command(const std::string& cmd, std::string* output);

// Whether each of `names` exists in both folders with the same bytes.
bool same_files(const std::string& a, const std::string& b, const std::vector<std::string>& names);

}  // namespace onnxc::driver
