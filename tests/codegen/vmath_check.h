// tests/codegen/vmath_check.h — checking the inline math helpers of the generated C
// (codegen/c/vmath.h) against double-precision libm: the translation unit under test holds
// the helpers exactly as the module writer emits them (vmath_definitions) behind the includes
// of the module prelude, and one omp simd loop per checked function; it is built with the
// compiler and flags under test (-Wall -Wextra -Werror) and linked with the driver
// tests/codegen/vmath_check.c (built at -O2), which prints the error figures this parses.
//
// The bounds are the figures codegen/c/vmath.cc states for each helper: measured over all
// 2^32 inputs with gcc and clang at -O3 -march=native (vmath_exhaustive.cc, label `long`).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/c/vmath.h"

#ifndef ONNXC_VMATH_DRIVER
#error "ONNXC_VMATH_DRIVER (the path of tests/codegen/vmath_check.c) must be defined"
#endif

namespace onnxc::test {

struct VMathFunction {
  const char* name;     // as vmath_check.c names it
  const char* element;  // the C the kernels write for one element x
  // Bounds stated in codegen/c/vmath.cc: ulps over all inputs, over the inputs the driver's
  // main_ulp covers (vmath_check.c: all but siluf's x < -87.34), and absolute error (< 0: not
  // bounded, exp and log grow without bound).
  double max_ulp, main_ulp, max_abs;
};

inline const std::vector<VMathFunction>& vmath_functions() {
  static const std::vector<VMathFunction> f = {
      {"expf", "onnxc_expf(x)", 0.90, 0.90, -1},
      {"logf", "onnxc_logf(x)", 0.87, 0.87, -1},
      {"tanhf", "onnxc_tanhf(x)", 1.04, 1.04, 6.2e-8},
      {"erff", "onnxc_erff(x)", 1.30, 1.30, 7.8e-8},
      {"sigmoidf", "onnxc_sigmoidf(x)", 2.41, 2.41, 9.0e-8},
      // The fused x * Sigmoid(x): below x = -87.34 the sigmoid is a denormal rounded to
      // 2^-149, an error the product scales by |x| <= 104 (52 ulps of a result below 1e-36).
      {"siluf", "(x) * onnxc_sigmoidf(x)", 52.02, 3.23, -1},
  };
  return f;
}

// The translation unit under test; `loop_lines` receives, per function, the line of its loop.
inline std::string vmath_helpers_tu(std::map<std::string, int>* loop_lines = nullptr) {
  std::vector<std::string> names = vmath_helper_names();
  std::string all;
  for (auto& n : names) all += n + "\n";
  std::string s = "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n" + vmath_definitions(all);
  for (const VMathFunction& f : vmath_functions()) {
    std::string el = f.element;
    for (size_t p; (p = el.find("(x)")) != std::string::npos;) el.replace(p, 3, "(x[i])");
    s += "void vmath_run_" + std::string(f.name) + "(const float* restrict x, float* restrict y, int64_t n);\n";
    s += "void vmath_run_" + std::string(f.name) + "(const float* restrict x, float* restrict y, int64_t n) {\n";
    s += "#pragma omp simd\n";
    if (loop_lines) (*loop_lines)[f.name] = static_cast<int>(std::count(s.begin(), s.end(), '\n')) + 1;
    s += "  for (int64_t i = 0; i < n; ++i) y[i] = " + el + ";\n}\n";
  }
  return s;
}

struct VMathStats {
  long long checked = 0, bad = 0;
  double max_ulp = 0, main_ulp = 0, max_abs = 0;
  std::string at_ulp, at_main, at_abs;
};

inline std::string vmath_read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A fresh temporary directory (removed by the caller on success).
inline std::filesystem::path vmath_tmpdir() {
  std::string t = (std::filesystem::temp_directory_path() / "onnxc_vmath_XXXXXX").string();
  if (!mkdtemp(t.data())) return {};
  return t;
}

// The float bit patterns a check covers: every `stride`-th of [first, end).
struct VMathInputs {
  uint64_t stride = 1, first = 0, end = uint64_t{1} << 32;
  std::string str() const {
    std::string s = stride == 1 ? "all inputs" : "every " + std::to_string(stride) + "th input";
    if (first == 0 && end == uint64_t{1} << 32) return s;
    return s + (first == 0 ? " with the sign bit clear" : end == uint64_t{1} << 32 ? " with the sign bit set" : " in a range");
  }
};

// Builds the helpers with `cc cflags` and the driver, runs it over `in` (and the special
// inputs) for `fns`; the figures per function, or empty after a gtest failure. `log`
// receives the driver's output.
inline std::map<std::string, VMathStats> run_vmath_check(const std::string& cc, const std::string& cflags, const VMathInputs& in,
                                                         const std::vector<std::string>& fns, std::string* log = nullptr) {
  namespace fs = std::filesystem;
  const fs::path dir = vmath_tmpdir();
  if (dir.empty()) {
    ADD_FAILURE() << "mkdtemp failed";
    return {};
  }
  const std::string d = dir.string() + "/";
  {
    std::ofstream f(d + "helpers.c");
    f << vmath_helpers_tu();
  }
  auto sh = [&](const std::string& cmd, const std::string& what) {
    if (std::system((cmd + " > " + d + "out.txt 2>&1").c_str()) == 0) return true;
    ADD_FAILURE() << what << " failed (files kept in " << d << "): " << cmd << "\n" << vmath_read(d + "out.txt");
    return false;
  };
  if (!sh(cc + " -std=c11 " + cflags + " -fopenmp -Wall -Wextra -Werror -c " + d + "helpers.c -o " + d + "helpers.o",
          "building the helpers") ||
      !sh("cc -std=c11 -O2 -fopenmp -Wall -Wextra -Werror " ONNXC_VMATH_DRIVER " " + d + "helpers.o -o " + d + "check -lm",
          "building the driver"))
    return {};
  std::string cmd = d + "check " + std::to_string(in.stride) + " " + std::to_string(in.first) + " " + std::to_string(in.end);
  for (auto& f : fns) cmd += " " + f;
  if (!sh(cmd, "running the driver")) return {};
  const std::string out = vmath_read(d + "out.txt");
  if (log) *log = out;
  std::map<std::string, VMathStats> r;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    char name[32], at_ulp[64], at_main[64], at_abs[64];
    VMathStats s;
    if (std::sscanf(line.c_str(), "%31s checked %lld max_ulp %lf at %63s main_ulp %lf at %63s max_abs %lf at %63s bad %lld", name,
                    &s.checked, &s.max_ulp, at_ulp, &s.main_ulp, at_main, &s.max_abs, at_abs, &s.bad) == 9) {
      s.at_ulp = at_ulp;
      s.at_main = at_main;
      s.at_abs = at_abs;
      r[name] = s;
    }
  }
  for (auto& f : fns)
    if (!r.count(f)) ADD_FAILURE() << "no figures for " << f << " in the driver's output:\n" << out;
  if (r.size() == fns.size()) fs::remove_all(dir);
  return r;
}

// Runs the check and expects every function within its bounds, no bad input, and every input
// of `in` checked.
inline void expect_vmath_accurate(const std::string& cc, const std::string& cflags, const VMathInputs& in,
                                  const std::vector<std::string>& fns) {
  std::string log;
  auto r = run_vmath_check(cc, cflags, in, fns, &log);
  const long long min_checked = static_cast<long long>((in.end - in.first) / in.stride);
  for (const VMathFunction& f : vmath_functions()) {
    auto it = r.find(f.name);
    if (it == r.end()) continue;
    const VMathStats& s = it->second;
    SCOPED_TRACE(cc + " " + cflags + ", " + in.str() + ": " + f.name);
    std::printf("%s %s: %s checked %lld, max %.4f ulp at %s (main range: %.4f at %s), max abs %.3g at %s, bad %lld\n", cc.c_str(),
                cflags.c_str(), f.name, s.checked, s.max_ulp, s.at_ulp.c_str(), s.main_ulp, s.at_main.c_str(), s.max_abs, s.at_abs.c_str(),
                s.bad);
    EXPECT_GE(s.checked, min_checked);
    EXPECT_EQ(s.bad, 0) << log;
    EXPECT_LE(s.max_ulp, f.max_ulp);
    EXPECT_LE(s.main_ulp, f.main_ulp);
    if (f.max_abs >= 0) EXPECT_LE(s.max_abs, f.max_abs);
  }
}

}  // namespace onnxc::test
