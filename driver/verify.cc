// driver/verify.cc — compile-model --verify (see verify.h).
#include "driver/verify.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include "driver/command.h"
#include "ir/error.h"
#include "ir/eval.h"

namespace onnxc::driver {

namespace fs = std::filesystem;

VerifyData verify_prepare(const Options& o, const Graph& g) {
  VerifyData d;
  fs::path vdir = fs::path(o.outdir) / "verify";
  std::error_code ec;
  fs::create_directories(vdir, ec);
  if (ec) throw CompileError(CompileError::Kind::Io, "cannot create '" + vdir.string() + "': " + ec.message());
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::map<const Value*, Tensor> inputs;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Value* v = g.inputs[k];
    Tensor t(v->dtype, v->shape);
    if (v->dtype == DType::F32)
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, dist(rng));
    fs::path f = vdir / ("input" + std::to_string(k) + ".bin");
    std::ofstream(f, std::ios::binary).write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.nbytes()));
    d.input_args += fmt::format(" --input {}", quote(v->name + "=" + f.string()));
    inputs[v] = std::move(t);
  }
  for (size_t k = 0; k < g.outputs.size(); ++k)
    d.output_args += fmt::format(" --output {}", quote(g.outputs[k]->name + "=" + (vdir / ("output" + std::to_string(k) + ".bin")).string()));
  d.args = d.input_args + d.output_args;
  Timer tm;
  auto ref = run_reference(g, inputs);
  d.ref_s = tm.seconds();
  for (const Value* v : g.outputs) d.refs.push_back(ref.at(v));
  return d;
}

int verify(const Options& o, const Graph& g, const VerifyData& d, const std::vector<std::pair<std::string, std::string>>& runs) {
  fs::path vdir = fs::path(o.outdir) / "verify";
  const std::string prefix = o.run_with.empty() ? std::string() : o.run_with + " ";
  for (auto& [name, args] : runs) {
    std::string out;
    int rc = run_command(prefix + quote((fs::path(o.outdir) / name).string()) + " --quiet" + args, &out);
    if (rc != 0) {
      std::cerr << out << fmt::format("verify: the generated binary {} failed (exit {})\n", name, rc);
      return kVerifyFailed;
    }
  }
  bool ok = true;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const Value* v = g.outputs[k];
    const Tensor& r = d.refs[k];
    std::ifstream f(vdir / ("output" + std::to_string(k) + ".bin"), std::ios::binary);
    Tensor got(v->dtype, v->shape);
    if (got.numel() != r.numel() || v->dtype != r.dtype)
      throw InternalError(fmt::format("verify: output '{}' is {}, its reference has {} elements", v->name, v->type_str(), r.numel()));
    f.read(reinterpret_cast<char*>(got.bytes.data()), static_cast<std::streamsize>(got.nbytes()));
    double max_abs = 0, max_rel = 0, max_ref = 0;
    for (int64_t i = 0; i < r.numel(); ++i) {
      double a = got.get(i), b = r.get(i);
      double d = std::fabs(a - b);
      if (std::isnan(a) != std::isnan(b)) d = INFINITY;
      else if (std::isnan(a)) d = 0;
      max_abs = std::max(max_abs, d);
      if (!std::isnan(b)) max_ref = std::max(max_ref, std::fabs(b));
      if (std::fabs(b) > 1e-6) max_rel = std::max(max_rel, d / std::fabs(b));
    }
    bool pass = max_abs <= o.verify_tol * std::max(1.0, max_ref);
    ok = ok && pass;
    fmt::print("verify: output '{}' {}: max abs error {:.3g}, max rel error {:.3g}, max |ref| {:.3g} — {}\n", v->name, v->type_str(),
               max_abs, max_rel, max_ref, pass ? "ok" : "MISMATCH");
  }
  fmt::print("verify: reference evaluation took {:.2f} s\n", d.ref_s);
  return ok ? kOk : kVerifyFailed;
}

}  // namespace onnxc::driver
