// driver/split.cc — compile-model --split (see split.h).
#include "driver/split.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "driver/command.h"
#include "driver/compile.h"
#include "passes/partition.h"
#include "passes/pass.h"

namespace onnxc::driver {

namespace fs = std::filesystem;

int compile_split(const Options& o, Graph& g, const Backend& backend, const VerifyData* vd, const Graph* whole) {
  auto say = [&](const std::string& s) { if (!o.quiet) fmt::print("{}\n", s); };
  const Target& target = backend.target();
  const bool cuda = is_cuda(backend);
  PassOptions po = pass_options(o, backend);
  for (auto& p : pass_names())
    if (!rewrites_ops_only(p)) po.disabled.insert(p);
  run_pipeline(g, po);
  SplitCosts costs;
  set_gpu_preset(costs, o.gpu);
  if (o.gpu_tflops > 0) costs.gpu_flops = o.gpu_tflops * 1e12;
  if (o.gpu_bandwidth > 0) costs.gpu_bandwidth = o.gpu_bandwidth * 1e9;
  costs.link_bandwidth = o.link_bandwidth * 1e9;
  costs.cpu_workers = o.cpu_workers > 0 ? o.cpu_workers : std::max(1, target.threads);
  costs.latency_budget = o.latency_budget_ms * 1e-3;
  if (!o.cpu_profile.empty()) costs.cpu_measured = read_op_profile(o.cpu_profile);
  if (!o.gpu_profile.empty()) costs.gpu_measured = read_op_profile(o.gpu_profile);
  const SplitPlan plan = plan_split(g, target, costs, o.split);
  say(describe_split(plan));
  const fs::path json = fs::path(o.outdir) / (o.name + ".split.json");
  std::error_code ec;
  fs::create_directories(o.outdir, ec);
  std::ofstream(json) << split_json(plan, o.name, o.model);
  if (ec || !fs::exists(json)) throw CompileError(CompileError::Kind::Io, "cannot write '" + json.string() + "'");
  SplitGraphs parts = split_graph(g, plan.chosen);
  // --dynamic: g is one item of a run-time batch, and so is each part.
  for (Graph* part : {parts.head.get(), parts.tail.get()}) {
    part->batch_items = g.batch_items;
    part->dynamic_batch = g.dynamic_batch;
  }
  const std::unique_ptr<Backend> c_backend = make_backend(o, target, Device::Cpu);
  std::vector<std::string> names{o.name + "_head", o.name + "_tail"};
  if (cuda) names.push_back(o.name + "_tail_gpu");
  if (int rc = compile_graph(o, *parts.head, names[0], backend, names[0] + ".mk"); rc != kOk) return rc;
  if (int rc = compile_graph(o, *parts.tail, names[1], *c_backend, names[1] + ".mk"); rc != kOk) return rc;
  if (cuda) {
    SplitGraphs again = split_graph(g, plan.chosen);
    if (int rc = compile_graph(o, *again.tail, names[2], backend, names[2] + ".mk"); rc != kOk) return rc;
  }
  // One makefile per part (each names its own executable and library); this one builds them all.
  std::string mk = fmt::format("# Builds the parts of {0}, split by onnxc ({0}.split.json): `make` (the parts' executables), `make so`\n"
                               "# (their shared libraries). Each part has its own makefile: `make -f PART.mk`, `make -f PART.mk libPART.so`.\n"
                               "all:\n", o.name);
  for (const std::string& n : names) mk += fmt::format("\t$(MAKE) -f {}.mk\n", n);
  mk += "\nso:\n";
  for (const std::string& n : names) mk += fmt::format("\t$(MAKE) -f {0}.mk lib{0}.so\n", n);
  mk += "\n.PHONY: all so\n";
  const fs::path makefile = fs::path(o.outdir) / "Makefile";
  std::ofstream(makefile) << mk;
  if (!fs::exists(makefile)) throw CompileError(CompileError::Kind::Io, "cannot write '" + makefile.string() + "'");
  say(fmt::format("split: wrote {} ({}_head{}, {}_tail{})", json.string(), o.name, cuda ? " (CUDA)" : "", o.name,
                  cuda ? fmt::format(" (C) and {}_tail_gpu (CUDA)", o.name) : ""));
  if (!vd) return kOk;
  // The head writes the cut tensors, the tail reads them.
  const fs::path vdir = fs::path(o.outdir) / "verify";
  std::string cut_out, cut_in;
  for (size_t k = 0; k < plan.chosen.tensors.size(); ++k) {
    const std::string arg = quote(plan.chosen.tensors[k]->name + "=" + (vdir / ("cut" + std::to_string(k) + ".bin")).string());
    cut_out += " --output " + arg;
    cut_in += " --input " + arg;
  }
  return verify(o, whole ? *whole : g, *vd, {{o.name + "_head", vd->input_args + cut_out}, {o.name + "_tail", cut_in + vd->output_args}});
}

}  // namespace onnxc::driver
