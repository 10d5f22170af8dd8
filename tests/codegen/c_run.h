// tests/codegen/c_run.h — running a hand-built graph through the C backend in a test: the
// module is written by the test backend (tests/passes/pass_test_util.h; or the backend of
// CRunOptions) into a fresh
// temporary directory, built with the
// system C compiler (warnings are errors, as tools/compile_model.cc builds it, plus
// -Wextra) together with the generic main (the model's C includes the runtime), and run on raw input files;
// the raw output files come back as Tensors in graph output order. ONNXC_TEST_GENERATED_CFLAGS
// (tests/CMakeLists.txt: ASan+UBSan flags in the sanitized build, else empty) is added to
// every build unless CRunOptions::sanitize is off; a sanitizer report in the run's output fails the test like a non-zero exit.
//
// Conventions: graph inputs and outputs must be plain (they always are); inputs are passed
// by name. A failure (emit error, compiler diagnostics, non-zero exit) is a gtest failure
// carrying the log, and the result is then empty. The directory is removed on success and
// kept (its path printed) on failure, for a look at the generated C.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/c/module.h"
#include "ir/graph.h"
#include "tests/passes/pass_test_util.h"

#ifndef ONNXC_TEST_GENERATED_CFLAGS
#define ONNXC_TEST_GENERATED_CFLAGS ""
#endif

namespace onnxc::test {

struct CRunOptions {
  std::string cc = "cc";
  std::string cflags = "-O1";  // optimisation / target flags added to the fixed ones
  int threads = 0;             // --threads for the binary (0: its default)
  // Add ONNXC_TEST_GENERATED_CFLAGS. Off for checks of what the optimizer does with the
  // plain C (clang warns that it cannot vectorize `omp simd` loops once ASan instruments them).
  bool sanitize = true;
  const Backend* backend = nullptr;  // the backend that writes the module (nullptr: test_backend())
  // Functions the model's object code must not call: NAME.c is also compiled alone (-c) and
  // any of these among its undefined symbols (nm -u) fails the test.
  std::vector<std::string> forbid_calls;
  RegionForm task_form = RegionForm::OmpTasks;  // COptions::task_form (codegen/c/module.h): how fork-join regions run
};

inline std::string c_run_read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The undefined symbols of an object file (nm -u), without version suffixes; empty and a
// gtest failure when nm fails.
inline std::vector<std::string> undefined_symbols(const std::string& object) {
  std::string out = object + ".nm";
  if (std::system(("nm -u " + object + " > " + out + " 2>&1").c_str()) != 0) {
    ADD_FAILURE() << "nm -u " << object << " failed";
    return {};
  }
  std::vector<std::string> r;
  std::istringstream in(c_run_read_file(out));
  for (std::string line; std::getline(in, line);) {
    std::istringstream w(line);
    std::string kind, name;
    if (!(w >> kind >> name) || kind != "U") continue;
    r.push_back(name.substr(0, name.find('@')));
  }
  return r;
}

// Builds the C program `source` (one file) with `gcc -std=c11 -Wall -Wextra -Werror ... FLAGS` in
// a fresh temporary folder and runs it; its standard output (and error) in *out. Returns ""
// when both succeed, else what failed: the command and the compiler's or program's messages.
inline std::string build_and_run_c(const std::string& source, const std::string& flags, std::string* out) {
  namespace fs = std::filesystem;
  std::string t = (fs::temp_directory_path() / "onnxc_program_XXXXXX").string();
  if (mkdtemp(t.data()) == nullptr) return "cannot make a temporary folder";
  const std::string d = t + "/";
  std::ofstream(d + "p.c") << source;
  const std::string cmd = "gcc -std=c11 -Wall -Wextra -Werror " + d + "p.c -o " + d + "p " + flags + " > " + d + "log.txt 2>&1 && " + d +
                          "p > " + d + "out.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  *out = c_run_read_file(d + "out.txt");
  const std::string failure = rc == 0 ? "" : cmd + "\n" + c_run_read_file(d + "log.txt") + *out;
  fs::remove_all(t);
  return failure;
}

// Emits, builds and runs g on `in` (keyed by graph input Value); returns the outputs.
inline std::vector<Tensor> run_c(const Graph& g, const std::map<const Value*, Tensor>& in, const CRunOptions& o = {}) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "onnxc_c_run_XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    ADD_FAILURE() << "mkdtemp failed";
    return {};
  }
  const fs::path dir = tmpl;
  const std::string name = "m";
  auto fail = [&](const std::string& what) {
    ADD_FAILURE() << what << " (files kept in " << dir.string() << ")";
    return std::vector<Tensor>{};
  };
  try {
    CodegenOptions co;
    co.name = name;
    co.outdir = dir.string();
    co.source = g.model_path;
    const Backend& backend = o.backend ? *o.backend : test_backend();
    // The C backend's own option, when it is not the default: the same target, that form.
    std::unique_ptr<Backend> formed;
    if (o.task_form != COptions{}.task_form) formed = make_c_backend(backend.target(), COptions{.task_form = o.task_form});
    (formed ? *formed : backend).write_module(g, co);
  } catch (const std::exception& ex) {
    return fail(std::string("write_module: ") + ex.what());
  }
  const std::string d = dir.string() + "/";
  const std::string cc = o.cc + " -std=c11 " + o.cflags + (o.sanitize ? " " ONNXC_TEST_GENERATED_CFLAGS : "") +
                         " -fopenmp -Wall -Wextra -Werror -I" + d;
  std::string cmd = cc + " -DONNXC_MAIN_MODEL -o " + d + name + " " + d + name + ".c " + d + "onnxc_main.c -lm > " + d + "cc.log 2>&1";
  if (std::system(cmd.c_str()) != 0) return fail("C build failed: " + cmd + "\n" + c_run_read_file(dir / "cc.log"));
  if (!o.forbid_calls.empty()) {
    std::string obj = cc + " -c " + d + name + ".c -o " + d + name + ".o > " + d + "cc.log 2>&1";
    if (std::system(obj.c_str()) != 0) return fail("C build failed: " + obj + "\n" + c_run_read_file(dir / "cc.log"));
    bool called = false;
    for (const std::string& sym : undefined_symbols(d + name + ".o"))
      if (std::find(o.forbid_calls.begin(), o.forbid_calls.end(), sym) != o.forbid_calls.end()) {
        ADD_FAILURE() << "the model's object code (" << o.cc << " " << o.cflags << ") calls " << sym;
        called = true;
      }
    if (called) return fail("forbidden calls");
  }
  std::string run = d + name + " --weights " + d + name + ".weights";
  if (o.threads > 0) run += " --threads " + std::to_string(o.threads);
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Value* v = g.inputs[k];
    auto it = in.find(v);
    if (it == in.end()) return fail("no data for input '" + v->name + "'");
    fs::path f = dir / ("in" + std::to_string(k) + ".bin");
    std::ofstream(f, std::ios::binary)
        .write(reinterpret_cast<const char*>(it->second.bytes.data()), static_cast<std::streamsize>(it->second.bytes.size()));
    run += " --input " + v->name + "=" + f.string();
  }
  for (size_t k = 0; k < g.outputs.size(); ++k)
    run += " --output " + g.outputs[k]->name + "=" + (dir / ("out" + std::to_string(k) + ".bin")).string();
  run += " > " + d + "run.log 2>&1";
  int rc = std::system(run.c_str());
  std::string log = c_run_read_file(dir / "run.log");
  bool report = log.find("runtime error:") != std::string::npos || log.find("Sanitizer") != std::string::npos;
  if (rc != 0 || report) return fail("run failed: " + run + "\n" + log);
  std::vector<Tensor> out;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const Value* v = g.outputs[k];
    Tensor t(v->dtype, v->shape);
    std::string bytes = c_run_read_file(dir / ("out" + std::to_string(k) + ".bin"));
    if (bytes.size() != t.bytes.size())
      return fail("output '" + v->name + "': " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(t.bytes.size()));
    std::copy(bytes.begin(), bytes.end(), t.bytes.begin());
    out.push_back(std::move(t));
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return out;
}

// run_c with 2 threads; `tag` names the case in failure messages.
inline std::vector<Tensor> run_generated_c(const Graph& g, const std::map<const Value*, Tensor>& in, const std::string& tag) {
  SCOPED_TRACE("generated C of " + tag);
  CRunOptions o;
  o.threads = 2;
  return run_c(g, in, o);
}

// The generated C of g computes what the reference evaluator computes, on random inputs
// from `seed` (pass tests check a pass's output graph this way).
inline void expect_c_matches_reference(const Graph& g, const std::string& tag, unsigned seed) {
  auto in = random_inputs(g, seed);
  auto ref = reference_outputs(g, in);
  auto got = run_generated_c(g, in, tag);
  if (got.empty()) return;  // the failure is reported
  expect_close(ref, got, 1e-4);
}

}  // namespace onnxc::test
