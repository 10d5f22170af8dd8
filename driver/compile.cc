// driver/compile.cc — one compile-model run (see compile.h).
#include "driver/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>

#include "codegen/c/module.h"
#include "codegen/c/py_module.h"
#include "codegen/c/serve_module.h"
#include "codegen/cuda/module.h"
#include "codegen/module_writer.h"
#include "driver/build.h"
#include "driver/calibration.h"
#include "driver/command.h"
#include "driver/split.h"
#include "driver/tune.h"
#include "driver/verify.h"
#include "frontend/onnx_import.h"
#include "ir/eval.h"
#include "ir/op.h"
#include "passes/batch_items.h"
#include "passes/dynamic_dims.h"
#include "passes/partition.h"
#include "passes/quantize_int8.h"
#include "passes/schedule.h"

namespace onnxc::driver {

namespace fs = std::filesystem;

Shape parse_dims(const std::string& spec, const std::string& text) {
  Shape s;
  size_t p = 0;
  while (p <= text.size()) {
    size_t q = text.find(',', p);
    std::string tok = text.substr(p, q == std::string::npos ? std::string::npos : q - p);
    try {
      size_t used = 0;
      long long v = std::stoll(tok, &used);
      if (used != tok.size() || v < 0) throw std::invalid_argument("bad");
      s.push_back(v);
    } catch (const std::exception&) {
      throw CompileError(CompileError::Kind::Io, "--input-shape '" + spec + "': '" + tok + "' is not a non-negative integer");
    }
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return s;
}

uint64_t parse_size(const std::string& text) {
  auto bad = [&]() -> uint64_t {
    throw CompileError(CompileError::Kind::Io, "--max-memory '" + text + "' is not a size (bytes, or a number with K, M, G or T: 512M, 8G; 0 = no cap)");
  };
  size_t p = 0;
  uint64_t v = 0;
  while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p]))) {
    if (v > (UINT64_MAX - 9) / 10) bad();
    v = v * 10 + static_cast<uint64_t>(text[p++] - '0');
  }
  if (p == 0) bad();
  std::string unit = text.substr(p);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty() && std::string("KMGT").find(unit[0]) != std::string::npos) {
    shift = 10 * (1 + static_cast<int>(std::string("KMGT").find(unit[0])));
    unit = unit.substr(1);
  }
  if (!unit.empty() && unit != "B" && (shift == 0 || unit != "IB")) bad();
  if (shift && v > (uint64_t{1} << (63 - shift))) bad();
  v <<= shift;
  if (v > static_cast<uint64_t>(INT64_MAX)) bad();
  return v;
}

std::unique_ptr<Backend> make_backend(const Options& o, const Target& t, Device device) {
  if (device == Device::Cuda) {
    CudaOptions co;
    co.cudnn = o.cudnn;
    co.cublas = o.cublas;
    co.precision = o.gpu_precision.value_or(GpuPrecision::Fp32);
    return make_cuda_backend(t, co);
  }
  COptions co;
  co.one_region = o.omp_region == OmpRegion::Inference;
  co.task_form = o.task_form;
  return make_c_backend(t, co);
}

bool is_cuda(const Backend& b) { return b.name() == "cuda"; }

PassOptions pass_options(const Options& o, const Backend& backend) {
  const Target& target = backend.target();
  const bool cuda = is_cuda(backend);
  PassOptions po;
  po.backend = &backend;
  po.nchwc = o.layout == ActivationLayout::Nchwc && !cuda;  // the CUDA backend runs plain NCHW only
  po.channel_block = o.channel_block ? o.channel_block : std::max(4, target.vector_floats());
  // The CUDA module runs its kernels in graph order. (The graph of one batch item runs on the
  // one thread of its item: compile_graph makes that "loop".)
  po.parallel = cuda || o.parallel == Parallel::Loop   ? TaskRegions::None
                : o.parallel == Parallel::Auto ? TaskRegions::Auto
                                               : TaskRegions::Every;
  po.threads = target.threads;
  po.region_form = region_form(o);
  po.measured = o.profile_data.empty() ? nullptr : &o.measured;
  po.disabled.insert(o.disable_pass.begin(), o.disable_pass.end());
  if (o.quantized == Quantized::Float) po.disabled.insert("integer-ops");
  po.print_after.insert(o.print_after.begin(), o.print_after.end());
#ifndef NDEBUG
  po.verify_each = true;
#else
  po.verify_each = o.verify_passes;
#endif
  po.after_pass = [&o](const std::string& pass, bool changed, const Graph& gr) {
    if (std::count(o.print_after.begin(), o.print_after.end(), "all") || std::count(o.print_after.begin(), o.print_after.end(), pass))
      fmt::print("// IR after {}{}\n{}\n", pass, changed ? "" : " (no change)", dump_ir(gr));
  };
  return po;
}

namespace {

// --dump-ir: the kernel each node gets, and its plan where the kernel has one (Backend::describe_node).
std::string describe_kernels(const Graph& g, const Backend& backend) {
  std::string s;
  for (const auto& n : g.nodes) {
    const std::string d = backend.describe_node(*n);
    if (d.empty() || !n->out(0)) continue;
    s += fmt::format("  %{}: {}\n", n->out(0)->name, d);
  }
  return s.empty() ? "" : "kernels (the backend's choice per node; a plan: register tiles, blocks, tasks):\n" + s;
}

}  // namespace

int compile_graph(const Options& o, Graph& g, const std::string& name, const Backend& backend, const std::string& makefile, bool simplified) {
  const Target& target = backend.target();
  const bool cuda = is_cuda(backend);
  auto say = [&](const std::string& s) { if (!o.quiet) fmt::print("{}\n", s); };
  PassOptions po = pass_options(o, backend);
  if (g.batch_items > 1) po.parallel = TaskRegions::None;  // each item runs on one thread
  if (simplified)
    for (const std::string& p : pass_names())
      if (rewrites_ops_only(p) && !po.print_after.count(p) && !po.print_after.count("all")) po.disabled.insert(p);
  const std::string part = name == o.name ? "" : name + ": ";
  size_t nodes_before = g.nodes.size();
  Timer t_pass;
  run_pipeline(g, po);
  size_t transforms = 0;
  for (auto& n : g.nodes) transforms += n->op_type == "onnxc.layout_transform";
  say(fmt::format("{}passes: {} → {} nodes, layout {}{} ({:.2f} s)", part, nodes_before, g.nodes.size(), po.nchwc ? "nchwc" : "nchw",
                  po.nchwc ? fmt::format(" with {}-channel blocks, {} layout transform{}", po.channel_block, transforms,
                                         transforms == 1 ? "" : "s")
                           : "",
                  t_pass.seconds()));
  if (po.verify_each && !po.disabled.count("memory-plan"))
    if (std::string clash = check_memory_plan(g); !clash.empty()) throw InternalError("memory plan: " + clash);
  // How the C runs a fork-join region (codegen/c/region.h).
  const RegionForm form = region_form(o);
  const std::string runs_as = form == RegionForm::Sections   ? "as omp parallel sections (--omp-region op)"
                              : form == RegionForm::OmpTasks ? "as OpenMP tasks (--task-form omp-tasks)"
                                                             : "on thread groups (--task-form groups)";
  if (!g.task_regions.empty()) {
    size_t lists = 0;
    for (auto& r : g.task_regions) lists += r.groups.size();
    say(fmt::format("{}schedule: {} fork-join region{} ({} lists side by side) at {} threads, --parallel {}, run {}", part, g.task_regions.size(),
                    g.task_regions.size() == 1 ? "" : "s", lists, target.threads, flag_name(o.parallel), runs_as));
  }
  if (g.dynamic_batch)
    say(fmt::format("{}schedule: a batch of 1 to {} items given at run time (--dynamic): as many items as the threads side by side, "
                    "one thread each, the rest one after another on all the threads",
                    part, g.batch_items));
  else if (g.batch_items > 1)
    say(fmt::format("{}schedule: the {} items of the batch side by side, one thread each (--parallel {})", part, g.batch_items, flag_name(o.parallel)));
  if (o.built) o.built->regions = g.task_regions.size();
  if (o.dump_ir) {
    const TaskGraph tg = build_task_graph(g, target, po.measured, &backend);
    fmt::print("{}target {}\n{}{}{}{}", part, target.describe(), dump_ir(g), describe_kernels(g, backend),
               describe_schedule(tg, target.threads, target, &backend), describe_regions(g, tg, target.threads, target, po.region_form));
    if (!g.task_regions.empty())
      fmt::print("the regions run {}{}\n", runs_as,
                 po.region_form == RegionForm::OmpTasks ? "; the lists above only order the making of the tasks" : "");
  }

  Timer t_gen;
  CodegenOptions co{name, o.outdir, o.model};
  co.makefile = makefile;
  co.profile = o.profile;
  CodegenResult r = backend.write_module(g, co);
  std::string plan = g.arena_bytes >= 0 ? fmt::format(" (memory plan; {:.2f} MB without reuse)", g.arena_tensor_bytes / 1e6) : "";
  if (g.batch_items > 1) plan += " per item thread";
  say(fmt::format("{}codegen: {} {}{}, weights {:.2f} MB, arena {:.2f} MB{} -> {}/{}.{} ({:.2f} s)", part, r.functions,
                  cuda ? "kernels" : "functions",
                  r.distinct_functions < r.functions ? fmt::format(" ({} distinct)", r.distinct_functions) : std::string(), r.weights_bytes / 1e6,
                  r.arena_bytes / 1e6, plan, o.outdir, name, cuda ? "cu" : "c", t_gen.seconds()));
  if (o.emit == Emit::C) return kOk;
  if (cuda) {
    double nv_s = 0;
    std::string nv_out, nvcc;
    int rc = build_cuda(o, name, r.libraries, &nv_s, &nv_out, &nvcc);
    if (rc == -1) {
      fmt::print(stderr, "compile-model: error: nvcc '{}' not found (install the CUDA toolkit, or give --nvcc PATH or $ONNXC_NVCC; "
                 "--emit c writes the sources only)\n", nvcc);
      return kCcFailed;
    }
    if (rc != 0) {
      // Errors in the generated file are the compiler's fault; others (a broken toolkit) are not.
      const bool ours = nv_out.find(name + ".cu(") != std::string::npos;
      fmt::print(stderr, "compile-model: {}: nvcc failed (exit {}) on {}/{}.cu{}\n", ours ? "internal error" : "error", rc, o.outdir, name,
                 ours ? fmt::format("; please report it with the model {}", o.model) : "");
      return ours ? kInternal : kCcFailed;
    }
    say(fmt::format("{}nvcc: built {}/{} ({:.2f} s)", part, o.outdir, o.emit == Emit::So ? "lib" + name + ".so" : name, nv_s));
    return kOk;
  }
  // (Not where a --driver-object FILE is still to be built: that is this build's to write.)
  std::error_code ec;
  if (o.emit == Emit::Exe && !o.reuse_dir.empty() && (o.driver_object.empty() || fs::exists(o.driver_object, ec)) &&
      same_files(o.reuse_dir, o.outdir, {name + ".c", name + ".h"})) {
    fs::copy_file(o.reuse_dir + "/" + name, o.outdir + "/" + name, fs::copy_options::overwrite_existing, ec);
    if (!ec) {
      say(fmt::format("{}cc: the same C as the timed --parallel {} build: its binary -> {}/{}", part, flag_name(o.parallel), o.outdir, name));
      return kOk;
    }
  }
  double cc_s = 0;
  std::string cc_out;
  int rc = build(o, name, target, &cc_s, &cc_out);
  if (rc != 0) {
    // An error inside a node's function is the compiler's fault, not the model's: unless the
    // user changed the C compiler or its flags, that is an internal error.
    const std::string where = locate_c_error(o.outdir + "/" + name + ".c", cc_out);
    if (!where.empty()) {
      const bool custom = !o.cc.empty() || !o.cflags.empty();
      fmt::print(stderr, "compile-model: {}: the emitted C does not compile{} (model {}): {}\n", custom ? "error" : "internal error",
                 custom ? " with the given --cc/--cflags" : "; please report it with the model", o.model, where);
      return custom ? kCcFailed : kInternal;
    }
    fmt::print(stderr, "compile-model: error: the C compiler '{}' failed (exit {}) on {}/{}.c\n", target.cc, rc, o.outdir, name);
    return kCcFailed;
  }
  bool lib = o.emit == Emit::So || o.emit == Emit::Python || o.emit == Emit::Ray;
  say(fmt::format("{}cc: built {}/{} ({:.2f} s)", part, o.outdir, lib ? "lib" + name + ".so" : name, cc_s));
  if (o.emit == Emit::Python || o.emit == Emit::Ray)
    say(fmt::format("python: wrote {}/{} (import {}; {}.Model().run(...))", o.outdir, emit_python_module(g, co), name, name));
  if (o.emit == Emit::Ray)
    say(fmt::format("ray: wrote {}/{} (cd {} && serve run --route-prefix /{} {}_serve:app; POST /{} with an .npy body)", o.outdir,
                    emit_serve_module(g, co), o.outdir, name, name, name));
  return kOk;
}

namespace {

// --parallel batch: the model imported again with every input's first dimension 1, when its
// batch items can run apart (passes/batch_items.h); g, the model at its batch, gets constant
// folding and simplification for the comparison. Null, with *why set, when they cannot.
std::unique_ptr<Graph> batch_item_graph(const Options& o, const ImportOptions& io, Graph& g, const Backend& backend, std::string* why,
                                        bool* simplified) {
  if (is_cuda(backend)) {
    *why = "the CUDA backend runs the model as one";
    return nullptr;
  }
  if (o.profile) {
    *why = "--profile times the functions of one run at a time";
    return nullptr;
  }
  if (o.quantize != Quantize::None) {
    *why = "--quantize quantizes the model as imported, one batch";
    return nullptr;
  }
  const int64_t items = batch_items_of(g);
  if (!items) {
    *why = "its inputs do not all have the same first (batch) dimension of 2 or more";
    return nullptr;
  }
  ImportOptions one = io;
  one.batch_one = true;
  one.dynamic_uses = nullptr;
  std::unique_ptr<Graph> g1;
  try {
    g1 = import_onnx_file(o.model, one);
  } catch (const CompileError& e) {
    *why = std::string("at batch 1 it does not import: ") + e.what();
    return nullptr;
  }
  PassOptions po = pass_options(o, backend);
  for (auto& p : pass_names())
    if (!rewrites_ops_only(p)) po.disabled.insert(p);
  po.after_pass = nullptr;
  run_pipeline(g, po);
  run_pipeline(*g1, po);
  *simplified = true;
  *why = batch_items_check(g, *g1, items);
  if (!why->empty()) return nullptr;
  g1->batch_items = items;
  return g1;
}

// --dynamic: "" when io's dynamic dimensions are one batch, the first dimension of every graph
// input of g; else what is not.
std::string dynamic_batch_check(const Graph& g, const std::vector<DynamicDim>& dynamic, const std::vector<DynamicUse>& uses) {
  if (dynamic.size() > 1) return "more than one run-time size";
  for (const DynamicUse& u : uses)
    if (u.axis != 0) return fmt::format("it is dimension {} of input '{}', not the first (the batch)", u.axis, u.input);
  for (const Value* v : g.inputs) {
    bool first = false;
    for (const DynamicUse& u : uses) first = first || u.input == v->name;
    if (!first) return fmt::format("input '{}' {} does not have it as its first dimension", v->name, v->type_str());
  }
  return "";
}

// --dynamic on a dimension other than the batch (a transformer's tokens): the model imported
// again two sizes below the maximum, the three folded and simplified, and followed through by
// passes/dynamic_dims.h. Returns why it cannot be kept a run-time size, or what was found.
std::string dynamic_dims_report(const Options& o, const ImportOptions& io, Graph& g, const Backend& backend, bool* ok) {
  *ok = false;
  const DynamicDim& dd = io.dynamic[0];
  const std::string sym = dd.symbol.empty() ? fmt::format("{}:{}", dd.input, dd.axis) : dd.symbol;
  if (dd.max < 3) return fmt::format("onnxc follows a run-time size other than the batch from 3 up (it imports the model at {0}, {0}-1 "
                                     "and {0}-2 to see where it goes)", sym);
  const std::vector<int64_t> ns{dd.max, dd.max - 1, dd.max - 2};
  std::vector<std::unique_ptr<Graph>> others;
  PassOptions po = pass_options(o, backend);
  for (auto& p : pass_names())
    if (!rewrites_ops_only(p)) po.disabled.insert(p);
  po.after_pass = nullptr;
  run_pipeline(g, po);
  std::vector<const Graph*> gs{&g};
  for (size_t k = 1; k < ns.size(); ++k) {
    ImportOptions at = io;
    at.dynamic_uses = nullptr;
    at.dynamic[0].max = ns[k];
    try {
      others.push_back(import_onnx_file(o.model, at));
    } catch (const CompileError& e) {
      return fmt::format("at {}={} the model does not import: {}", sym, ns[k], e.what());
    }
    run_pipeline(*others.back(), po);
    gs.push_back(others.back().get());
  }
  DynamicDimsPlan plan;
  std::string why = dynamic_dims_check(gs, ns, sym, &plan);
  if (!why.empty()) return why;
  // The generated API takes n for every input and output as the count of its first dimension
  // of more than one entry (a contiguous prefix of the buffer): [1, n, 768], [n, 16].
  int axis = -1;
  for (const std::vector<Value*>* list : {&g.inputs, &g.outputs})
    for (const Value* v : *list) {
      auto it = plan.varying.find(v);
      int a = -1;
      if (it != plan.varying.end())
        for (size_t d = 0; d < it->second.size(); ++d)
          if (it->second[d].varies()) {
            if (a >= 0 || !(it->second[d] == Extent{1, 0})) a = -2;
            else a = static_cast<int>(d);
          }
      for (int d = 0; d < a; ++d)
        if (v->shape[d] != 1) a = -2;
      if (a < 0 || (axis >= 0 && a != axis))
        return fmt::format("{} '{}' is {} at {}={}: onnxc takes a run-time size other than the batch where every input and output "
                           "has it once, as {} itself, after dimensions of 1 only, at the same dimension",
                           v->is_input ? "input" : "output", v->name, shape_str(v->shape), sym, dd.max, sym);
      axis = a;
    }
  *ok = true;
  g.run_size_max = dd.max;
  g.run_size_axis = axis;
  g.run_size_symbol = sym;
  // The nodes that take n: attention over keys that vary (needed), and the products,
  // LayerNorms and Splits over rows of tokens (for speed: a short run then costs what its rows
  // do).
  std::vector<std::string> bounded;
  for (const RunStop& r : plan.bounded) bounded.push_back("'" + r.node->name + "'");
  const size_t products = plan.rows.size();
  for (const std::vector<RunStop>* list : {&plan.bounded, &plan.rows})
    for (const RunStop& r : *list)
      for (auto& n : g.nodes)
        if (n.get() == r.node) n->run_a = r.extent.a, n->run_b = r.extent.b, n->run_queries = r.queries;
  g.run_size_nodes = plan.bounded.size() + products;
  return fmt::format("{} values depend on {}; a build for {}={} computes every run of 1 to {} in the first entries of its tensors{}{}",
                     plan.varying.size(), sym, sym, dd.max, dd.max,
                     bounded.empty() ? std::string()
                                     : fmt::format(" ({} attention node{} at the run's keys: {})", bounded.size(),
                                                   bounded.size() == 1 ? " stops" : "s stop", fmt::join(bounded, ", ")),
                     products ? fmt::format("; {} of its matrix products, LayerNorms and Splits stop at the run's rows", products) : "");
}

}  // namespace

int compile(Options& o) {
  Target target = parse_target(o.target);
  if (!o.cc.empty()) target.cc = o.cc;
  if (!o.cflags.empty()) target.cflags = o.cflags;
  if (int rc = check_target_flags(o, target); rc != kOk) return rc;
  if (o.threads > 0) target.threads = o.threads;
  if (o.parallel_min_work > 0) target.parallel_min_work = o.parallel_min_work;
  target.conv_algorithm = o.conv_algorithm;
  if (o.name.empty()) o.name = fs::path(o.model).stem().string();
  o.name = c_identifier(o.name);
  if (o.parallel == Parallel::Tune) return compile_tuned(o, target);
  const bool cuda = o.device == Device::Cuda;
  const std::unique_ptr<Backend> backend = make_backend(o, target, o.device);
  ImportOptions io;
  io.max_memory = parse_size(o.max_memory);
  for (auto& spec : o.input_shapes) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw CompileError(CompileError::Kind::Io, "--input-shape '" + spec + "' must look like NAME=1,3,224,224");
    io.input_shapes[spec.substr(0, eq)] = parse_dims(spec, spec.substr(eq + 1));
  }
  std::vector<DynamicUse> dynamic_uses;
  io.dynamic = o.dynamic_dims;
  io.fixed = o.fixed_dims;
  io.dynamic_uses = &dynamic_uses;
  if (!o.profile_data.empty()) o.measured = read_op_profile(o.profile_data);
  auto say = [&](const std::string& s) { if (!o.quiet) fmt::print("{}\n", s); };

  Timer t_import;
  auto g = import_onnx_file(o.model, io);
  size_t params = 0;
  for (auto& v : g->values)
    if (v->constant && !v->producer) params += static_cast<size_t>(v->constant->numel());
  say(fmt::format("import: {} nodes, {} inputs, {} outputs, {:.2f} M parameters, opset {} ({:.2f} s)", g->nodes.size(), g->inputs.size(),
                  g->outputs.size(), params / 1e6, g->opset, t_import.seconds()));
  say(cuda ? fmt::format("target: CUDA {} (plain NCHW, float32)", o.gpu_arch) : "target: " + target.describe());
  if (o.quantize == Quantize::Int8) {
    Timer t_quant;
    auto samples = read_calibration(o.calibration, *g);
    QuantizeInt8Report r = quantize_int8(*g, samples);
    if (r.convs == 0)
      throw CompileError(CompileError::Kind::Unsupported, "--quantize int8: '" + o.model + "' has no convolution onnxc quantizes" +
                                                              (r.float_convs.empty() ? std::string() : " (" + r.float_convs[0] + ")"));
    say(fmt::format("quantize: int8, {} convolutions, {} activation tensors, calibrated on {} sample{} ({:.2f} s)", r.convs, r.tensors,
                    r.samples, r.samples == 1 ? "" : "s", t_quant.seconds()));
    for (const std::string& f : r.float_convs) say("quantize: stays float: " + f);
  }
  if (o.quantize == Quantize::Int8Dynamic) {
    Timer t_quant;
    QuantizeDynamicReport r = quantize_dynamic_int8(*g);
    if (r.matmuls == 0)
      throw CompileError(CompileError::Kind::Unsupported,
                         "--quantize int8-dynamic: '" + o.model + "' has no MatMul of a float activation and constant 2-D float weights");
    say(fmt::format("quantize: int8-dynamic, {} matrix products of constant weights (int8 per tensor), {} activations quantized at run "
                    "time ({:.2f} s)", r.matmuls, r.activations, t_quant.seconds()));
  }
  VerifyData vd;
  if (o.verify) vd = verify_prepare(o, *g);
  if (std::count(o.print_after.begin(), o.print_after.end(), "all") || std::count(o.print_after.begin(), o.print_after.end(), "import"))
    fmt::print("// IR after import\n{}\n", dump_ir(*g));
  // --parallel batch, or auto on a batch of at least as many items as threads: the graph of one
  // batch item, run once per item side by side.
  std::unique_ptr<Graph> item;
  bool simplified = false;  // batch_item_graph folded and simplified g (and the item's graph)
  const int64_t items = batch_items_of(*g);
  if (io.dynamic.size() > 1) {
    // Two run-time sizes: the batch (the first dimension of every input, whose items run apart)
    // and another followed through the batch-1 model (a transformer's tokens).
    std::vector<std::string> specs;
    for (const DynamicDim& d : io.dynamic) specs.push_back("--dynamic " + d.spec());
    const std::string spec = fmt::format("{}", fmt::join(specs, " "));
    int b = -1;
    for (int i = 0; i < static_cast<int>(io.dynamic.size()) && io.dynamic.size() == 2; ++i) {
      std::vector<DynamicUse> uses;
      for (const DynamicUse& u : dynamic_uses)
        if (u.dim == &io.dynamic[static_cast<size_t>(i)]) uses.push_back(u);
      if (dynamic_batch_check(*g, {io.dynamic[static_cast<size_t>(i)]}, uses).empty()) b = i;
    }
    if (b < 0)
      throw CompileError(CompileError::Kind::Unsupported,
                         spec + ": onnxc keeps two run-time sizes where one is the batch (the first dimension of every input) and the "
                                "other another dimension (a transformer's tokens); fix the others with --fix-dim (e.g. --fix-dim batch=1)");
    // (--device cuda, --profile and a --parallel other than auto are refused with any --dynamic.)
    if (!o.split.empty())
      throw CompileError(CompileError::Kind::Unsupported, spec + ": two run-time sizes are not for --split builds (the split executor "
                                                                     "hands a batch from part to part, not a token count)");
    const DynamicDim batch = io.dynamic[static_cast<size_t>(b)], size = io.dynamic[static_cast<size_t>(1 - b)];
    std::string why;
    item = batch_item_graph(o, io, *g, *backend, &why, &simplified);
    if (!item) throw CompileError(CompileError::Kind::Unsupported, spec + ": the batch's items cannot run apart: " + why);
    // The batch-1 model followed through at the other size (the batch fixed, at 1).
    ImportOptions one = io;
    one.batch_one = true;
    one.dynamic_uses = nullptr;
    one.dynamic = {size};
    one.fixed.push_back(batch);
    one.fixed.back().max = 1;
    bool kept = false;
    const std::string found = dynamic_dims_report(o, one, *item, *backend, &kept);
    if (!kept) throw CompileError(CompileError::Kind::Unsupported, spec + ": " + found);
    say(fmt::format("dynamic: a batch of 1 to {} items; in each, {}", item->batch_items, found));
    item->dynamic_batch = true;
    if (int rc = compile_graph(o, *item, o.name, *backend, "Makefile", true); rc != kOk) return rc;
    if (o.verify && o.emit == Emit::Exe) return verify(o, *g, vd, {{o.name, vd.args}});
    return kOk;
  }
  if (!io.dynamic.empty()) {
    // --dynamic: the batch at run time, as a loop over the items of the batch-1 model.
    const std::string spec = "--dynamic " + io.dynamic[0].spec();
    std::string why = dynamic_batch_check(*g, io.dynamic, dynamic_uses);
    const bool batch = why.empty();
    if (batch) item = batch_item_graph(o, io, *g, *backend, &why, &simplified);
    if (!batch && io.dynamic.size() == 1 && !cuda) {
      // Another dimension than the batch (a transformer's tokens): followed through the model
      // by passes/dynamic_dims.h, the graph built for the maximum and run for n in place.
      if (!o.split.empty())
        throw CompileError(CompileError::Kind::Unsupported, spec + ": a run-time size other than the batch is not for --split builds "
                                                                       "(the split executor hands a batch from part to part, not a token count)");
      bool kept = false;
      const std::string found = dynamic_dims_report(o, io, *g, *backend, &kept);
      if (!kept) throw CompileError(CompileError::Kind::Unsupported, spec + ": " + found);
      say("dynamic: " + found);
      if (int rc = compile_graph(o, *g, o.name, *backend, "Makefile", true); rc != kOk) return rc;
      if (o.verify && o.emit == Emit::Exe) return verify(o, *g, vd, {{o.name, vd.args}});
      return kOk;
    }
    if (!item)
      throw CompileError(CompileError::Kind::Unsupported, spec + ": " + why +
                                                              " (onnxc keeps one run-time size, the batch: the first dimension "
                                                              "of every input, whose items run apart)");
    item->dynamic_batch = true;
    // --split --dynamic: both parts take the run-time batch (the cut tensors are per item too).
    if (!o.split.empty()) return compile_split(o, *item, *backend, o.verify ? &vd : nullptr, g.get());
  } else if (!o.split.empty()) {
    return compile_split(o, *g, *backend, o.verify ? &vd : nullptr);
  } else if (o.parallel == Parallel::Batch || (o.parallel == Parallel::Auto && !cuda && !o.profile && target.threads >= 2 && items >= target.threads)) {
    std::string why;
    item = batch_item_graph(o, io, *g, *backend, &why, &simplified);
    if (!item && o.parallel == Parallel::Batch)
      throw CompileError(CompileError::Kind::Unsupported, "--parallel batch: the batch items of '" + o.model + "' cannot run apart: " + why);
    if (item && o.parallel == Parallel::Auto) {
      // Each item reads the weights of every layer again. That is free for convolutions, whose
      // weights serve many positions, but a classifier's matrix-vector products read theirs
      // once per item: past the last-level cache (VGG's 494 MB), loops over the whole batch win.
      const double once = weight_bytes_used_once(*item);
      if (once > kBatchItemsMaxOnceBytes) {
        why = fmt::format("its batch-1 layers read {:.0f} MB of weights only once (matrix-vector products), more than {:.0f} MB",
                          once / 1e6, kBatchItemsMaxOnceBytes / 1e6);
        item.reset();
      }
    }
    if (!item) say(fmt::format("schedule: the {} items of the batch run through each layer together (--parallel auto: {})", items, why));
  }
  if (int rc = compile_graph(o, item ? *item : *g, o.name, *backend, "Makefile", simplified); rc != kOk) return rc;
  if (o.verify && o.emit == Emit::Exe) return verify(o, *g, vd, {{o.name, vd.args}});
  return kOk;
}

}  // namespace onnxc::driver
