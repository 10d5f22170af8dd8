// tests/passes/c_run.h — runs the generated C of a (passed) graph: emit_c_module into a
// temporary folder, build it with the system C compiler as compile-model does (plus
// -Wextra -Werror: generated C must be warning-free), run the binary on raw input files
// and read its raw outputs back, so pass tests check the emitted code of what a pass
// produced against the reference evaluator, not only the reference before and after.
// Known gaps: -O1 only (quick); needs `cc` with OpenMP on PATH; float32/any dtype raw files.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "codegen/c_module.h"
#include "ir/graph.h"

namespace onnxc::test {

// Outputs of the built C module of g on `inputs` (graph inputs → tensors), by graph output
// position; fails the test (and returns {}) when emitting, building or running fails.
inline std::vector<Tensor> run_generated_c(const Graph& g, const std::map<const Value*, Tensor>& inputs, const std::string& tag) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / ("onnxc_c_run_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CodegenOptions opt;
  opt.name = "m";
  opt.outdir = dir.string();
  opt.source = tag;
  emit_c_module(g, opt);
  auto q = [](const fs::path& p) { return "'" + p.string() + "'"; };
  std::string cmd = "cc -std=c11 -O1 -fopenmp -Wall -Wextra -Werror -I" + q(dir) + " -DONNXC_MODEL_INFO=m_info -o " + q(dir / "m") + " " +
                    q(dir / "m.c") + " " + q(dir / "onnxc_runtime.c") + " " + q(dir / "onnxc_main.c") + " -lm > " +
                    q(dir / "cc.log") + " 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(dir / "cc.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    ADD_FAILURE() << "building the generated C failed (" << dir.string() << "):\n" << text;
    return {};
  }
  std::string run = q(dir / "m") + " --quiet --threads 2";
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Tensor& t = inputs.at(g.inputs[k]);
    fs::path f = dir / ("in" + std::to_string(k) + ".bin");
    std::ofstream(f, std::ios::binary).write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.nbytes()));
    run += " --input " + q(g.inputs[k]->name + "=" + f.string());
  }
  for (size_t k = 0; k < g.outputs.size(); ++k)
    run += " --output " + q(g.outputs[k]->name + "=" + (dir / ("out" + std::to_string(k) + ".bin")).string());
  run += " > " + q(dir / "run.log") + " 2>&1";
  if (std::system(run.c_str()) != 0) {
    std::ifstream log(dir / "run.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    ADD_FAILURE() << "running the generated binary failed (" << dir.string() << "):\n" << text;
    return {};
  }
  std::vector<Tensor> out;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const Value* v = g.outputs[k];
    Tensor t(v->dtype, v->shape);
    std::ifstream f(dir / ("out" + std::to_string(k) + ".bin"), std::ios::binary);
    f.read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(t.nbytes()));
    EXPECT_EQ(static_cast<size_t>(f.gcount()), t.nbytes()) << "short output file for '" << v->name << "'";
    out.push_back(std::move(t));
  }
  fs::remove_all(dir);
  return out;
}

}  // namespace onnxc::test
