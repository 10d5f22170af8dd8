// driver/build.cc — the C compiler and nvcc on the generated module (see build.h).
#include "driver/build.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <utility>

#include "driver/command.h"

namespace onnxc::driver {

namespace fs = std::filesystem;

int build(const Options& o, const std::string& name, const Target& t, double* seconds, std::string* output) {
  Timer tm;
  std::string dir = quote(o.outdir) + "/";
  std::string cc = fmt::format("{} -std=c11 {} -fopenmp -Wall -Wextra -I{}", t.cc, t.cflags, quote(o.outdir));
  std::string out;
  auto run = [&](const std::string& cmd) {
    if (!o.quiet) fmt::print("cc: {}\n", cmd);
    return run_command(cmd, &out);
  };
  std::string driver = dir + "onnxc_main.c";
  if (o.emit == Emit::Exe && !o.driver_object.empty()) {
    driver = quote(o.driver_object);
    std::error_code ec;
    if (!fs::exists(o.driver_object, ec)) {
      std::string tmp = o.driver_object + ".tmp" + std::to_string(getpid());
      int rc = run(fmt::format("{} -c -o {} {}onnxc_main.c", cc, quote(tmp), dir));
      if (rc == 0) fs::rename(tmp, o.driver_object, ec);
      if (rc != 0 || ec) {
        fs::remove(tmp, ec);
        *seconds = tm.seconds();
        std::cerr << out << (rc == 0 ? "compile-model: error: cannot write --driver-object '" + o.driver_object + "'\n" : "");
        return rc != 0 ? rc : 1;
      }
    }
  }
  std::string cmd = cc;
  if (o.emit == Emit::So || o.emit == Emit::Python || o.emit == Emit::Ray)
    cmd += fmt::format(" -shared -fPIC -o {}lib{}.so {}{}.c -lm", dir, name, dir, name);
  else
    cmd += fmt::format(" -DONNXC_MAIN_MODEL -o {}{} {}{}.c {} -lm", dir, name, dir, name, driver);
  int rc = run(cmd);
  *seconds = tm.seconds();
  if (rc != 0 || (!o.quiet && !out.empty())) std::cerr << out;
  *output = out;
  return rc;
}

int build_cuda(const Options& o, const std::string& name, const std::vector<std::string>& libs, double* seconds, std::string* output,
               std::string* nvcc_used) {
  Timer tm;
  std::string nvcc = o.nvcc;
  if (nvcc.empty()) {
    const char* env = std::getenv("ONNXC_NVCC");
    nvcc = env && *env ? env : "/usr/local/cuda/bin/nvcc";
  }
  *nvcc_used = nvcc;
  if (nvcc.find('/') != std::string::npos ? access(nvcc.c_str(), X_OK) != 0 : run_command("command -v " + quote(nvcc), output) != 0) {
    *seconds = tm.seconds();
    return -1;
  }
  output->clear();
  const std::string dir = quote(o.outdir) + "/";
  std::string cmd = fmt::format("{} -arch={} -O3 -Xcompiler -fPIC,-Wall,-Wextra -I{}", quote(nvcc), o.gpu_arch, quote(o.outdir));
  if (o.emit == Emit::So)
    cmd += fmt::format(" -shared -o {}lib{}.so {}{}.cu", dir, name, dir, name);
  else
    cmd += fmt::format(" -DONNXC_MAIN_MODEL -o {}{} {}{}.cu {}onnxc_main.c", dir, name, dir, name, dir);
  for (const std::string& l : libs) cmd += " -l" + l;  // --gpu-libs, when the module calls the library
  if (!o.quiet) fmt::print("nvcc: {}\n", cmd);
  int rc = run_command(cmd, output);
  *seconds = tm.seconds();
  if (rc != 0 || (!o.quiet && !output->empty())) std::cerr << *output;
  return rc;
}

int check_target_flags(const Options& o, const Target& t) {
  if (o.emit == Emit::C || o.device == Device::Cuda || (o.target == "host" && o.cc.empty() && o.cflags.empty())) return kOk;
  const char* example_cc = t.arch == "aarch64" ? "aarch64-linux-gnu-gcc" : "x86_64-linux-gnu-gcc";  // a compiler for t.arch
  std::string out;
  if (run_command(fmt::format("{} {} -dM -E -x c /dev/null", t.cc, t.cflags), &out) != 0) {
    const std::string hint = t.arch == host_target().arch ? "" : fmt::format(" (--target {} is for {}: pass --cc with a compiler for it, "
                                                                             "e.g. {}, and its --cflags)", t.name, t.arch, example_cc);
    fmt::print(stderr, "compile-model: error: the C compiler '{}' refuses the flags '{}'{}: {}\n", t.cc, t.cflags, hint,
               out.substr(0, 2000));
    return kCcFailed;
  }
  auto defined = [&](const std::string& m) { return out.find("#define " + m + " ") != std::string::npos; };
  auto value = [&](const std::string& m) -> long {
    const size_t p = out.find("#define " + m + " ");
    return p == std::string::npos ? -1 : std::strtol(out.c_str() + p + m.size() + 9, nullptr, 10);
  };
  const std::string compiles_for = defined("__x86_64__") ? "x86-64" : defined("__aarch64__") ? "aarch64" : "another architecture";
  const std::string with = fmt::format("'{}{}{}'", t.cc, t.cflags.empty() ? "" : " ", t.cflags);
  if (t.arch != "generic" && compiles_for != t.arch) {
    fmt::print(stderr, "compile-model: error: --target {} is for {}, but {} compiles for {}: pass --cc with a compiler for {} "
                       "(e.g. {}), or another --target\n",
               t.name, t.arch, with, compiles_for, t.arch, example_cc);
    return kUsage;
  }
  if (t.arch == "aarch64" && t.name != "aarch64-neon" && t.name != "host") {
    const long bits = defined("__ARM_FEATURE_SVE") ? value("__ARM_FEATURE_SVE_BITS") : -1;
    if (bits != t.vector_bits) {
      fmt::print(stderr, "compile-model: error: --target {} plans for SVE at {} bits, but {} {}: add -march=armv8.2-a+sve "
                         "-msve-vector-bits={} to --cflags\n",
                 t.name, t.vector_bits, with,
                 !defined("__ARM_FEATURE_SVE") ? std::string("does not enable SVE")
                 : bits <= 0                   ? std::string("builds SVE code for any vector length")
                                               : fmt::format("fixes SVE's vector length at {} bits", bits),
                 t.vector_bits);
      return kUsage;
    }
  }
  if (t.arch == "x86-64" && t.name != "host") {
    // The extension the target's vectors need: its macro and its name.
    const auto [macro, name] = t.vector_bits >= 512   ? std::pair("__AVX512F__", "AVX-512")
                               : t.vector_bits >= 256 ? std::pair("__AVX2__", "AVX2")
                                                      : std::pair("__SSE4_2__", "SSE4.2");
    if (!defined(macro) && !o.quiet)
      fmt::print(stderr, "compile-model: warning: --target {} plans {}-bit vectors, but {} lets the compiler use no {}: the "
                         "code is correct but slower\n",
                 t.name, t.vector_bits, with, name);
  }
  return kOk;
}

}  // namespace onnxc::driver
