// tools/compile_model.cc — the compile-model driver: parse flags, import the ONNX model,
// run the pass pipeline (passes/pipeline.cc), emit C, and build it with the system C
// compiler; with --device cuda, emit CUDA (codegen/cuda/, plain NCHW) and build it with
// nvcc (build_cuda). --split cuts the model first (passes/partition.h) and compiles the head
// and the tail as models of their own (compile_split). --verify evaluates the imported graph
// before any pass, so it checks the passes and the generated code together (for --split, the
// head and the tail run one after the other). --parallel tune builds the model with loop, task
// and batch parallelism, times the builds here and compiles it again with the fastest, an
// executable keeping the winner's binary (compile_tuned). Thin by design: the work is in
// frontend/, ir/, passes/ and codegen/.
//
// Exit codes: 0 success; 1 usage or I/O error; 2 invalid model; 3 valid ONNX that onnxc
// does not support (for --device cuda: an op the CUDA backend does not run), or over a limit
// (--max-memory); 4 internal compiler error (emitted C or CUDA that does not compile with the
// target's compiler and flags included: for C the node is named);
// 5 the C compiler or nvcc failed (not found, or the user's --cc/--cflags); 6 --verify found outputs outside tolerance.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

#include "codegen/backend.h"
#include "codegen/c/module.h"
#include "codegen/c/py_module.h"
#include "codegen/cuda/module.h"
#include "codegen/target.h"
#include "frontend/onnx_import.h"
#include "ir/eval.h"
#include "ir/op.h"
#include "passes/batch_items.h"
#include "passes/partition.h"
#include "passes/pass.h"
#include "passes/schedule.h"

namespace fs = std::filesystem;
using namespace onnxc;

namespace {

enum Exit { kOk = 0, kUsage = 1, kInvalid = 2, kUnsupported = 3, kInternal = 4, kCcFailed = 5, kVerifyFailed = 6 };

struct Options {
  std::string model, outdir, name, emit = "exe", cc, cflags, target = "host";
  std::string driver_object;  // --driver-object FILE: a prebuilt onnxc_main.o, built on first use
  std::vector<std::string> input_shapes, print_after, disable_pass;
  std::string layout = "nchwc";
  std::string parallel = "auto";  // --parallel auto|loop|task|batch|tune
  int tune_rounds = 5;             // --tune-rounds N: --parallel tune's alternating rounds of timed runs
  std::string omp_region = "inference";  // --omp-region inference|op
  std::string task_form = "omp-tasks";    // --task-form omp-tasks|groups
  int threads = 0;  // --threads N: threads the code is planned for, 0 = the target's
  int64_t parallel_min_work = 0;  // --parallel-min-work N: 0 = the target's
  int64_t channel_block = 0;  // 0 = from the target
  std::string conv_algorithm = "auto";
  std::string max_memory = "8G";  // --max-memory SIZE (kDefaultMaxMemory)
  bool dump_ir = false, verify = false, list_ops = false, quiet = false, verify_passes = false, profile = false;
  double verify_tol = 1e-3;
  std::string run_with;  // --run-with CMD: --verify runs the binary as `CMD BINARY ...` (an emulator)
  // --split SPEC (passes/partition.h): compile a head and a tail, NAME_head and NAME_tail.
  std::string split, gpu = "h100", cpu_profile, gpu_profile;
  std::string profile_data;  // --profile-data FILE: measured task times for the schedule
  std::vector<MeasuredOp> measured;
  double gpu_tflops = 0, gpu_bandwidth = 0, link_bandwidth = 25, latency_budget_ms = 10;
  int cpu_workers = 0;
  std::string device = "cpu", gpu_arch = "sm_90", nvcc;  // --device cpu|cuda, --gpu-arch, --nvcc PATH
  std::string gpu_libs;  // --gpu-libs cudnn,cublas (either or both)
  bool cudnn = false, cublas = false;
  std::string gpu_precision;  // --gpu-precision fp32|tf32|fp16 (empty: fp32)
  struct Built* built = nullptr;  // where compile_graph reports what it built (--parallel tune)
  // --parallel tune's final build: the folder of the winning candidate (--parallel as here). An
  // executable whose NAME.c and NAME.h are the same as the candidate's takes its binary.
  std::string reuse_dir;
};

// What compile_graph built: --parallel tune tells a task build with no fork-join region (the
// loop build's C) from one with regions.
struct Built {
  size_t regions = 0;
};

class Timer {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

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

// --max-memory SIZE: bytes, or a number with a K, M, G or T suffix (powers of 1024, an
// optional trailing B or iB: 512M, 8G, 8GiB); 0 = no cap.
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

// Whether each of `names` exists in both folders with the same bytes.
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

// Builds the executable or shared library with -Wall -Wextra (the generated C and the runtime
// are warning-free under both; the tests add -Werror); returns the C compiler's exit status.
// NAME.c includes the runtime itself; the executable adds the generic driver onnxc_main.c,
// which runs the model NAME.c points it to when built with -DONNXC_MAIN_MODEL. The driver is
// the same for every model: with --driver-object FILE it is compiled once into FILE (on
// first use; written to a temporary name and renamed, so parallel compiles may share FILE)
// and linked from there, which is how the node tests build ~1000 models.
// Builds the emitted C; the compiler's messages go to stderr and into *output.
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
  if (o.emit == "exe" && !o.driver_object.empty()) {
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
  if (o.emit == "so" || o.emit == "python")
    cmd += fmt::format(" -shared -fPIC -o {}lib{}.so {}{}.c -lm", dir, name, dir, name);
  else
    cmd += fmt::format(" -DONNXC_MAIN_MODEL -o {}{} {}{}.c {} -lm", dir, name, dir, name, driver);
  int rc = run(cmd);
  *seconds = tm.seconds();
  if (rc != 0 || (!o.quiet && !out.empty())) std::cerr << out;
  *output = out;
  return rc;
}

// --device cuda: builds OUTDIR/NAME.cu with nvcc (--nvcc PATH, else $ONNXC_NVCC, else
// /usr/local/cuda/bin/nvcc) for --gpu-arch: -O3, host code with -fPIC -Wall -Wextra, linked
// with the libraries the module calls (--gpu-libs: -lcudnn, -lcublas). The
// executable links the generic driver onnxc_main.c (nvcc hands it to the host C compiler).
// Returns nvcc's exit status; -1 when nvcc is not there.
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
  if (o.emit == "so")
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

// --verify: random inputs and the reference evaluator's outputs on the imported graph.
// `args` are the built binary's --input and --output options; a split model runs the head
// with `args` and the cut tensors as outputs (`cut_args`), then the tail reading them.
struct VerifyData {
  std::vector<std::string> input_names, output_names;
  std::vector<Tensor> refs;
  std::string args, input_args, output_args;
  double ref_s = 0;
};

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

// Runs the compiled binaries (name, arguments) one after the other on the inputs of
// verify_prepare and compares the outputs.
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

// The pass options compile-model's flags give.
PassOptions pass_options(const Options& o, const Target& target, const Backend& backend, bool cuda) {
  PassOptions po;
  po.backend = &backend;
  po.nchwc = o.layout == "nchwc" && !cuda;  // the CUDA backend runs plain NCHW only
  po.channel_block = o.channel_block ? o.channel_block : std::max(4, target.vector_floats());
  // The CUDA module runs its kernels in graph order. (The graph of one batch item runs on the
  // one thread of its item: compile_graph makes that "loop".)
  po.parallel = cuda || o.parallel == "loop" ? TaskRegions::None : o.parallel == "auto" ? TaskRegions::Auto : TaskRegions::Every;
  po.threads = target.threads;
  po.region_form = o.omp_region == "op" ? RegionForm::Sections : o.task_form == "groups" ? RegionForm::Groups : RegionForm::OmpTasks;
  po.measured = o.profile_data.empty() ? nullptr : &o.measured;
  po.disabled.insert(o.disable_pass.begin(), o.disable_pass.end());
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

// Runs the pass pipeline on g, writes the module `name` and builds it (unless --emit c).
// simplified: the whole-graph passes (fold-constants, recognize, simplify) have already run on g
// (batch_item_graph), so they are not run again unless --print-after names them.
int compile_graph(const Options& o, Graph& g, const std::string& name, const Target& target, const Backend& backend, bool cuda,
                  const std::string& makefile = "Makefile", bool simplified = false) {
  auto say = [&](const std::string& s) { if (!o.quiet) fmt::print("{}\n", s); };
  PassOptions po = pass_options(o, target, backend, cuda);
  if (g.batch_items > 1) po.parallel = TaskRegions::None;  // each item runs on one thread
  if (simplified)
    for (const char* p : {"fold-constants", "recognize", "simplify"})
      if (!po.print_after.count(p) && !po.print_after.count("all")) po.disabled.insert(p);
  const std::string part = name == o.name ? "" : name + ": ";
  size_t nodes_before = g.nodes.size();
  Timer t_pass;
  run_pipeline(g, po);
  size_t transforms = 0;
  for (auto& n : g.nodes) transforms += n->op_type == "onnxc.layout_transform";
  say(fmt::format("{}passes: {} → {} nodes, layout {}{} ({:.2f} s)", part, nodes_before, g.nodes.size(), po.nchwc ? o.layout : "nchw",
                  po.nchwc ? fmt::format(" with {}-channel blocks, {} layout transform{}", po.channel_block, transforms,
                                         transforms == 1 ? "" : "s")
                           : "",
                  t_pass.seconds()));
  if (po.verify_each && !po.disabled.count("memory-plan"))
    if (std::string clash = check_memory_plan(g); !clash.empty()) throw InternalError("memory plan: " + clash);
  // How the C runs a fork-join region (codegen/c/region.h).
  const std::string region_form = o.omp_region == "op"        ? "as omp parallel sections (--omp-region op)"
                                  : o.task_form == "omp-tasks" ? "as OpenMP tasks (--task-form omp-tasks)"
                                                               : "on thread groups (--task-form groups)";
  if (!g.task_regions.empty()) {
    size_t lists = 0;
    for (auto& r : g.task_regions) lists += r.groups.size();
    say(fmt::format("{}schedule: {} fork-join region{} ({} lists side by side) at {} threads, --parallel {}, run {}", part, g.task_regions.size(),
                    g.task_regions.size() == 1 ? "" : "s", lists, target.threads, o.parallel, region_form));
  }
  if (g.batch_items > 1)
    say(fmt::format("{}schedule: the {} items of the batch side by side, one thread each (--parallel {})", part, g.batch_items, o.parallel));
  if (o.built) o.built->regions = g.task_regions.size();
  if (o.dump_ir) {
    const TaskGraph tg = build_task_graph(g, target, po.measured, &backend);
    fmt::print("{}target {}\n{}{}{}", part, target.describe(), dump_ir(g), describe_schedule(tg, target.threads, target, &backend),
               describe_regions(g, tg, target.threads, target, po.region_form));
    if (!g.task_regions.empty())
      fmt::print("the regions run {}{}\n", region_form,
                 po.region_form == RegionForm::OmpTasks ? "; the lists above only order the making of the tasks" : "");
  }

  Timer t_gen;
  CodegenOptions co{name, o.outdir, o.model};
  co.makefile = makefile;
  co.profile = o.profile;
  co.one_region = o.omp_region == "inference";
  co.task_form = o.task_form == "groups" ? RegionForm::Groups : RegionForm::OmpTasks;
  co.cudnn = cuda && o.cudnn;
  co.cublas = cuda && o.cublas;
  if (cuda && !o.gpu_precision.empty()) co.gpu_precision = o.gpu_precision;
  CodegenResult r = backend.write_module(g, co);
  std::string plan = g.arena_bytes >= 0 ? fmt::format(" (memory plan; {:.2f} MB without reuse)", g.arena_tensor_bytes / 1e6) : "";
  if (g.batch_items > 1) plan += " per item thread";
  say(fmt::format("{}codegen: {} {}{}, weights {:.2f} MB, arena {:.2f} MB{} -> {}/{}.{} ({:.2f} s)", part, r.functions,
                  cuda ? "kernels" : "functions",
                  r.distinct_functions < r.functions ? fmt::format(" ({} distinct)", r.distinct_functions) : std::string(), r.weights_bytes / 1e6,
                  r.arena_bytes / 1e6, plan, o.outdir, name, cuda ? "cu" : "c", t_gen.seconds()));
  if (o.emit == "c") return kOk;
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
    say(fmt::format("{}nvcc: built {}/{} ({:.2f} s)", part, o.outdir, o.emit == "so" ? "lib" + name + ".so" : name, nv_s));
    return kOk;
  }
  // (Not where a --driver-object FILE is still to be built: that is this build's to write.)
  std::error_code ec;
  if (o.emit == "exe" && !o.reuse_dir.empty() && (o.driver_object.empty() || fs::exists(o.driver_object, ec)) &&
      same_files(o.reuse_dir, o.outdir, {name + ".c", name + ".h"})) {
    fs::copy_file(o.reuse_dir + "/" + name, o.outdir + "/" + name, fs::copy_options::overwrite_existing, ec);
    if (!ec) {
      say(fmt::format("{}cc: the same C as the timed --parallel {} build: its binary -> {}/{}", part, o.parallel, o.outdir, name));
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
  bool lib = o.emit == "so" || o.emit == "python";
  say(fmt::format("{}cc: built {}/{} ({:.2f} s)", part, o.outdir, lib ? "lib" + name + ".so" : name, cc_s));
  if (o.emit == "python") say(fmt::format("python: wrote {}/{} (import {}; {}.Model().run(...))", o.outdir,
                                          emit_python_module(g, co), name, name));
  return kOk;
}

// --parallel batch: the model imported again with every input's first dimension 1, when its
// batch items can run apart (passes/batch_items.h); g, the model at its batch, gets constant
// folding and simplification for the comparison. Null, with *why set, when they cannot.
std::unique_ptr<Graph> batch_item_graph(const Options& o, const ImportOptions& io, Graph& g, const Target& target, const Backend& backend,
                                        bool cuda, std::string* why, bool* simplified) {
  if (cuda) {
    *why = "the CUDA backend runs the model as one";
    return nullptr;
  }
  if (o.profile) {
    *why = "--profile times the functions of one run at a time";
    return nullptr;
  }
  const int64_t items = batch_items_of(g);
  if (!items) {
    *why = "its inputs do not all have the same first (batch) dimension of 2 or more";
    return nullptr;
  }
  ImportOptions one = io;
  one.batch_one = true;
  std::unique_ptr<Graph> g1;
  try {
    g1 = import_onnx_file(o.model, one);
  } catch (const CompileError& e) {
    *why = std::string("at batch 1 it does not import: ") + e.what();
    return nullptr;
  }
  PassOptions po = pass_options(o, target, backend, cuda);
  for (auto& p : pass_names())
    if (p != "fold-constants" && p != "recognize" && p != "simplify") po.disabled.insert(p);
  po.after_pass = nullptr;
  run_pipeline(g, po);
  run_pipeline(*g1, po);
  *simplified = true;
  *why = batch_items_check(g, *g1, items);
  if (!why->empty()) return nullptr;
  g1->batch_items = items;
  return g1;
}

// --split: constant folding and simplification on the whole graph, the cut (passes/
// partition.h), NAME.split.json, then the head and the tail compiled as models of their own.
// With --device cuda the head is CUDA, and the tail is compiled twice: C for the CPU workers
// (NAME_tail) and CUDA for the GPU (NAME_tail_gpu); without, both parts are C (the CPU-only mode).
int compile_split(const Options& o, Graph& g, const Target& target, const Backend& backend, bool cuda, const VerifyData* vd) {
  auto say = [&](const std::string& s) { if (!o.quiet) fmt::print("{}\n", s); };
  PassOptions po = pass_options(o, target, backend, cuda);
  for (auto& p : pass_names())
    if (p != "fold-constants" && p != "recognize" && p != "simplify") po.disabled.insert(p);
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
  const std::unique_ptr<Backend> c_backend = make_c_backend(target);
  std::vector<std::string> names{o.name + "_head", o.name + "_tail"};
  if (cuda) names.push_back(o.name + "_tail_gpu");
  if (int rc = compile_graph(o, *parts.head, names[0], target, backend, cuda, names[0] + ".mk"); rc != kOk) return rc;
  if (int rc = compile_graph(o, *parts.tail, names[1], target, *c_backend, false, names[1] + ".mk"); rc != kOk) return rc;
  if (cuda) {
    SplitGraphs again = split_graph(g, plan.chosen);
    if (int rc = compile_graph(o, *again.tail, names[2], target, backend, true, names[2] + ".mk"); rc != kOk) return rc;
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
  return verify(o, g, *vd, {{o.name + "_head", vd->input_args + cut_out}, {o.name + "_tail", cut_in + vd->output_args}});
}

// --parallel tune: build the model with --parallel loop, task and batch (where the model has
// fork-join regions, or a batch whose items can run apart), time each build on this machine at
// the target's threads (--tune-rounds rounds that alternate the builds, each a --bench of about
// half a second), and compile the model with the fastest. A build's time against loop's is the
// median over the rounds of its median over loop's in the same round: on a shared machine the
// load drifts from round to round (googlenet's loop build took 10.9 to 19.3 ms in five rounds of
// bench/results/parallel.md), and the builds of one round see about the same load.
// The cost model behind auto is a prediction: on one 16-core host it put googlenet's regions at
// 0.99 of loop's time at 2 threads where they took 0.83. Loop wins unless another build is at
// least kTuneMargin faster, so noise does not trade the plain build for a slower one. The
// candidates are built in OUTDIR/.tune, removed at the end. The final build emits the model
// again (what --emit asks, --verify included); an executable then takes the winner's binary,
// built from the same C, instead of running the C compiler again.
constexpr double kTuneMargin = 0.03;

int compile(Options& o);

// target: compile()'s, with o.name settled.
int compile_tuned(Options& o, const Target& target) {
  auto say = [&](const std::string& s) { if (!o.quiet) fmt::print("{}\n", s); };
  const std::string dir = o.outdir + "/.tune";
  std::error_code ec;
  fs::remove_all(dir, ec);
  struct RemoveDir {  // the candidates go, whatever way this returns
    std::string dir;
    ~RemoveDir() { std::error_code e; fs::remove_all(dir, e); }
  } remove_candidates{dir};
  struct Candidate {
    std::string mode, outdir, note;
    bool built = false;
    std::vector<double> medians;  // ms, one per round
  };
  std::vector<Candidate> cands;
  Timer t_build;
  for (const char* mode : {"loop", "task", "batch"}) {
    Candidate c;
    c.mode = mode;
    c.outdir = dir + "/" + mode;
    Options co = o;
    co.parallel = mode;
    co.outdir = c.outdir;
    co.emit = "exe";
    co.quiet = true;
    co.verify = co.dump_ir = false;
    co.print_after.clear();
    co.driver_object = dir + "/onnxc_main.o";
    Built b;
    co.built = &b;
    if (c.mode == "batch" && target.threads < 2) {
      c.note = "one thread";
    } else {
      try {
        int rc = compile(co);
        if (rc != kOk) return rc;  // compile already said why: the same fault would hit every build
        c.built = true;
        if (c.mode == "task" && b.regions == 0) c.built = false, c.note = "no fork-join region (the loop build's C)";
      } catch (const CompileError& e) {
        if (c.mode != "batch" || e.kind() != CompileError::Kind::Unsupported) throw;
        c.note = e.what();
        const std::string apart = "cannot run apart: ";
        if (auto p = c.note.find(apart); p != std::string::npos) c.note = "its items cannot run apart: " + c.note.substr(p + apart.size());
      }
    }
    cands.push_back(c);
  }
  size_t timed = 0;
  for (auto& c : cands) timed += c.built;
  say(fmt::format("tune: built {} candidate{} ({:.2f} s); timing at {} thread{}, {} rounds", timed, timed == 1 ? "" : "s", t_build.seconds(),
                  target.threads, target.threads == 1 ? "" : "s", o.tune_rounds));
  // One timed --bench of a build; its median in ms, or a failure naming the run.
  auto bench = [&](const Candidate& c, int runs) {
    std::string out;
    const std::string cmd = fmt::format("{} --quiet --bench {} --threads {}", quote(c.outdir + "/" + o.name), runs, target.threads);
    int rc = run_command(cmd, &out);
    double ms = 0;
    const auto at = out.find("latency: median ");
    if (rc != 0 || at == std::string::npos || std::sscanf(out.c_str() + at, "latency: median %lf", &ms) != 1)
      throw InternalError(fmt::format("--parallel tune: the --parallel {} build failed to run (exit {}): {}", c.mode, rc, out));
    // Anything else it printed (a sanitizer's warning, say) is passed on.
    std::string rest = out.substr(0, at) + out.substr(std::min(out.size(), out.find('\n', at) + 1));
    if (rest.find_first_not_of(" \n") != std::string::npos) fmt::print(stderr, "tune: the --parallel {} build printed:\n{}", c.mode, rest);
    return ms;
  };
  if (timed > 1) {
    std::map<std::string, int> runs;
    for (auto& c : cands)
      if (c.built) runs[c.mode] = std::clamp(static_cast<int>(500.0 / std::max(1e-3, bench(c, 3))), 3, 1000);
    for (int r = 0; r < o.tune_rounds; ++r)
      for (auto& c : cands)
        if (c.built) c.medians.push_back(bench(c, runs[c.mode]));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  std::string pick = "loop";
  double best = 1.0;
  for (auto& c : cands) {
    if (!c.built) {
      say(fmt::format("tune: --parallel {:<5}  not built: {}", c.mode, c.note));
      continue;
    }
    if (timed < 2) continue;
    std::vector<double> ratios;
    for (size_t r = 0; r < c.medians.size(); ++r) ratios.push_back(c.medians[r] / cands[0].medians[r]);
    const double ratio = median(ratios);
    say(fmt::format("tune: --parallel {:<5}  {:.3f} ms{}", c.mode, median(c.medians),
                    c.mode == "loop" ? "" : fmt::format("  ({:.3f} of loop)", ratio)));
    if (c.mode != "loop" && ratio < 1.0 - kTuneMargin && ratio < best) pick = c.mode, best = ratio;
  }
  say(timed < 2 ? "tune: one candidate: --parallel loop"
                : fmt::format("tune: --parallel {} ({})", pick,
                              pick == "loop" ? fmt::format("no other build was {:.0f}% faster", 100 * kTuneMargin)
                                             : fmt::format("{:.3f} of loop's time", best)));
  // The final build: an executable takes the winner's binary where its C is the same (the
  // candidates' folder goes when this returns).
  o.parallel = pick;
  o.reuse_dir = dir + "/" + pick;
  return compile(o);
}

// --target against what --cc and --cflags compile for (the compiler's predefined macros,
// `cc FLAGS -dM -E`): another architecture, or SVE off or at another fixed length than an
// aarch64-sve:BITS target's, contradicts the target and is refused (exit 1) before anything
// is built. A named x86 target whose extensions the flags leave out builds correct but
// slower code: a warning. The host target with the default compiler and flags cannot
// contradict itself, and --emit c builds nothing here: neither is checked.
int check_target_flags(const Options& o, const Target& t) {
  if (o.emit == "c" || o.device == "cuda" || (o.target == "host" && o.cc.empty() && o.cflags.empty())) return kOk;
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
  if (o.parallel == "tune") return compile_tuned(o, target);
  const bool cuda = o.device == "cuda";
  const std::unique_ptr<Backend> backend = cuda ? make_cuda_backend(target) : make_c_backend(target);
  ImportOptions io;
  io.max_memory = parse_size(o.max_memory);
  for (auto& spec : o.input_shapes) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw CompileError(CompileError::Kind::Io, "--input-shape '" + spec + "' must look like NAME=1,3,224,224");
    io.input_shapes[spec.substr(0, eq)] = parse_dims(spec, spec.substr(eq + 1));
  }
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
  VerifyData vd;
  if (o.verify) vd = verify_prepare(o, *g);
  if (std::count(o.print_after.begin(), o.print_after.end(), "all") || std::count(o.print_after.begin(), o.print_after.end(), "import"))
    fmt::print("// IR after import\n{}\n", dump_ir(*g));
  if (!o.split.empty()) return compile_split(o, *g, target, *backend, cuda, o.verify ? &vd : nullptr);
  // --parallel batch, or auto on a batch of at least as many items as threads: the graph of one
  // batch item, run once per item side by side.
  std::unique_ptr<Graph> item;
  bool simplified = false;  // batch_item_graph folded and simplified g (and the item's graph)
  const int64_t items = batch_items_of(*g);
  if (o.parallel == "batch" || (o.parallel == "auto" && !cuda && !o.profile && target.threads >= 2 && items >= target.threads)) {
    std::string why;
    item = batch_item_graph(o, io, *g, target, *backend, cuda, &why, &simplified);
    if (!item && o.parallel == "batch")
      throw CompileError(CompileError::Kind::Unsupported, "--parallel batch: the batch items of '" + o.model + "' cannot run apart: " + why);
    if (item && o.parallel == "auto") {
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
  if (int rc = compile_graph(o, item ? *item : *g, o.name, target, *backend, cuda, "Makefile", simplified); rc != kOk) return rc;
  if (o.verify && o.emit == "exe") return verify(o, *g, vd, {{o.name, vd.args}});
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "compile-model — compile an ONNX model to C (or CUDA), and build it into an inference executable or library.\n\n"
      "Writes OUTDIR/NAME.c, NAME.h (C API), NAME.weights (binary weights), the onnxc runtime and a Makefile,\n"
      "then (--emit exe, the default) builds OUTDIR/NAME: run `OUTDIR/NAME --help` for its options\n"
      "(--input NAME=FILE.npy, --output NAME=FILE.npy, --bench N, --threads N). --emit so builds OUTDIR/libNAME.so\n"
      "(C API in NAME.h); --emit python also writes OUTDIR/NAME.py (import NAME; NAME.Model().run(x)).\n"
      "--device cuda writes OUTDIR/NAME.cu instead of NAME.c (plain NCHW float32 kernels, the same C API in NAME.h)\n"
      "and builds it with nvcc for --gpu-arch; --gpu-libs cudnn,cublas runs Conv with cuDNN and Gemm/MatMul with cuBLAS.\n"
      "--split SPEC cuts the model in two, a head for a GPU and a tail for the GPU or CPU workers, compiled as NAME_head\n"
      "and NAME_tail (and NAME_tail_gpu with --device cuda), each with its makefile NAME_PART.mk, a Makefile for all, and\n"
      "writes NAME.split.json (see \"Split models\" below).\n\n"
      "Exit codes: 0 ok, 1 usage/I-O error, 2 invalid model, 3 unsupported by onnxc or over --max-memory, 4 internal error (emitted C that does not compile included),\n"
      "5 C compiler or nvcc failed (or not found), 6 --verify mismatch.",
      "compile-model"};
  app.add_option("model", o.model, "ONNX model file (.onnx)");
  app.add_option("-o,--output-dir", o.outdir, "folder for the generated files (created if missing)");
  app.add_option("--name", o.name, "C name of the model: file and symbol prefix (default: the model file's stem)");
  app.add_option("--emit", o.emit,
                 "what to produce: c (sources only), so (shared library), exe (executable), python (shared library and "
                 "NAME.py, a ctypes + numpy wrapper)")
      ->check(CLI::IsMember({"c", "so", "exe", "python"}))->capture_default_str();
  app.add_option("--device", o.device,
                 "what the model runs on: cpu (C, the default) or cuda (CUDA C++ for one NVIDIA GPU, plain NCHW float32; "
                 "an op the CUDA backend does not run is exit 3; --emit c, so or exe)")
      ->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("--gpu-arch", o.gpu_arch, "--device cuda: the GPU architecture nvcc builds for (-arch)")->capture_default_str();
  app.add_option("--gpu-libs", o.gpu_libs,
                 "--device cuda: run Conv with cuDNN and/or Gemm and MatMul with cuBLAS instead of the generated kernels "
                 "(cudnn, cublas or cudnn,cublas; default none), each followed by a generated kernel for its bias and fused "
                 "epilogue; links -lcudnn / -lcublas. For comparing both on a GPU")
      ->type_name("LIBS");
  app.add_option("--gpu-precision", o.gpu_precision,
                 "--device cuda: the arithmetic of convolutions (generated or cuDNN) and cuBLAS's products: fp32 (float32 "
                 "multiply-adds, the default; outputs within 1e-3 of the CPU's), tf32 (tensor cores, operands rounded to "
                 "TF32's 10-bit mantissa) or fp16 (tensor cores, operands rounded to half precision, whose range ends at 65504: "
                 "a larger weight is refused here, a larger activation makes that run fail with ONNXC_ERR_RANGE naming the "
                 "node; not with --split). Tensors stay float32 and "
                 "sums are float32; tf32 and fp16 trade accuracy (on an H200 the zoo's CNNs differed from float32 references by 3e-4 to 7e-4 of the "
                 "output's magnitude) for speed. "
                 "The generated Gemm/MatMul, pools and elementwise kernels stay float32")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16"}))
      ->type_name("P");
  app.add_option("--nvcc", o.nvcc, "--device cuda: the nvcc to build with (default: $ONNXC_NVCC, else /usr/local/cuda/bin/nvcc)")
      ->type_name("PATH");
  app.add_option("--cc", o.cc, "C compiler used to build the output (default: the target's, cc)");
  app.add_option("--cflags", o.cflags, "C compiler flags, replacing the target's (host: \"-O3 -march=native -ffp-contract=fast\", plus -mprefer-vector-width=512 on AVX-512; keep -ffp-contract=fast with gcc or the multiply-adds are not fused)");
  app.add_option("--driver-object", o.driver_object,
                 "--emit exe: link the generic command-line driver from FILE (an object file), compiling it there first "
                 "if FILE does not exist; it is the same for every model built with the same C compiler and flags")
      ->type_name("FILE");
  app.add_option("--input-shape", o.input_shapes, "NAME=d0,d1,... fixes the shape of graph input NAME (repeatable); needed for symbolic dims")
      ->allow_extra_args(false);
  app.add_option("--target", o.target, "the machine to compile for: " + target_names() +
                 ". host is detected with LLVM; the target sets the channel block, the C compiler flags and when loops go parallel. "
                 "A --cc/--cflags that compile for another architecture, or for SVE off or at another length than aarch64-sve:BITS, "
                 "are refused (exit 1). The generated code checks the CPU it runs on: NAME_create (and so the executable, the "
                 "Python wrapper, the split runtime) refuses one that lacks an extension the flags let the compiler use, or runs "
                 "SVE at another length (ONNXC_ERR_TARGET, naming it; onnxc_options.unsafe_skip_cpu_check skips that, unsafely)")
      ->capture_default_str();
  app.add_flag("--dump-ir", o.dump_ir, "print the final IR (after all passes): values with their layouts, fused groups with the ONNX nodes they came from; then the macro-task graph: each task's cost, the critical path, a static schedule onto thread groups at the target's threads and the predicted speed-up at 1-16 threads; then the fork-join regions with their predicted times in the form they run in");
  app.add_option("--parallel", o.parallel,
                 "how the generated code uses its threads: loop (each node in turn, its loops split across the threads), "
                 "task (independent branches - inception branches, shortcut convs - side by side in fork-join regions, "
                 "their nodes OpenMP tasks run as their inputs are ready, or each branch on a group of the threads: see "
                 "--task-form; loops split as before elsewhere), batch (a model with a batch of N >= 2 items runs them "
                 "side by side, one thread per item, each with its own arena: the model compiled at batch 1 and run once per "
                 "item; exit 3 naming the node when a node mixes the items, e.g. a Softmax or Concat along the batch axis) or "
                 "auto (batch when the batch has at least --threads items, they can run apart and the batch-1 model reads at "
                 "most 32 MB of weights only once per item; otherwise branches side by side only where the schedule predicts a "
                 "gain of at least 5% in the form they run in, --task-form). --dump-ir shows the regions. tune: build loop, "
                 "task and batch (those that differ), time each on this machine at --threads in alternating rounds "
                 "(--tune-rounds) and compile with the fastest; loop unless another is at least 3% faster (--target host; "
                 "the model is built up to three times, and an executable keeps the winner's binary)")
      ->check(CLI::IsMember({"auto", "loop", "task", "batch", "tune"}))->capture_default_str();
  app.add_option("--tune-rounds", o.tune_rounds, "--parallel tune: rounds of timed runs, each build once per round")
      ->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--omp-region", o.omp_region,
                 "OpenMP parallel regions of the generated C: inference (one region per run: the threads start once, "
                 "the kernels split their loops among them with `omp for` and the serial nodes run on one of them, a "
                 "barrier between nodes) or op (a fork/join per parallel loop nest, for comparison). A node whose "
                 "function the region cannot share (codegen/c/region.h; in NCHW, strided convs) keeps its own "
                 "fork/join between two regions")
      ->check(CLI::IsMember({"inference", "op"}))->capture_default_str();
  CLI::Option* task_form_opt = app.add_option("--task-form", o.task_form,
                 "how a fork-join region (--parallel task or auto) runs inside the one region (--omp-region inference): "
                 "omp-tasks (each node an OpenMP task with depend clauses on the tensors it reads, its loops taskloops: "
                 "the OpenMP runtime runs them as they become ready and idle threads take loop chunks) or groups (each "
                 "list of the schedule on a group of the threads, split at compile time in proportion to the lists' "
                 "predicted times; the group's members split its loops and wait only for each other). --omp-region op "
                 "runs a region as `omp parallel sections`")
      ->check(CLI::IsMember({"omp-tasks", "groups"}))->capture_default_str();
  app.add_option("--threads", o.threads,
                 "threads the generated code is planned for: when loops go parallel and how many lists a fork-join region "
                 "gets (default: the target's, host = this machine's cores). The binary's --threads sets how many it runs on")
      ->check(CLI::Range(1, 4096));
  app.add_option("--parallel-min-work", o.parallel_min_work,
                 "the least work, in scalar operations, of a loop nest that goes parallel when --threads is above 1 "
                 "(default: the target's, 65536: below it a fork/join costs more than it saves); 1 makes every nest that "
                 "can go parallel do so, which tests those paths on small models")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  app.add_option("--profile-data", o.profile_data,
                 "measured task times for the schedule (--parallel, --dump-ir): the model compiled with --profile and run on "
                 "one thread as `NAME --threads 1 --profile-out FILE` (with the same flags, so that its functions are the tasks)")
      ->type_name("FILE");
  app.add_option("--layout", o.layout, "activation layout: nchwc (blocked channels, the default) or nchw (plain, for ablations)")
      ->check(CLI::IsMember({"nchwc", "nchw"}))->capture_default_str();
  app.add_option("--channel-block", o.channel_block,
                 "NCHWc channel block: a power of two from 4 to 256 (default: the target's vector length in floats, at least 4)")
      ->check([](const std::string& s) {
        try {
          long long v = std::stoll(s);
          if (v >= 4 && v <= 256 && (v & (v - 1)) == 0) return std::string();
        } catch (const std::exception&) {
        }
        return "--channel-block must be a power of two from 4 to 256, got '" + s + "'";
      });
  app.add_option("--conv-algorithm", o.conv_algorithm,
                 "3x3 convolutions (stride 1, NCHWc, a block of one vector): auto runs them as Winograd F(2x2,3x3) (2.25x "
                 "fewer multiply-adds; filters transformed at compile time; outputs differ from direct convolution by "
                 "rounding, about 1e-6 relative) where the transformed filter stays in L2 or the batch has at least 40 tiles of 2x2 output pixels to "
                 "amortise it; direct never; winograd wherever it applies")
      ->check(CLI::IsMember({"auto", "direct", "winograd"}))->capture_default_str();
  std::string pass_list;
  for (auto& p : pass_names()) pass_list += (pass_list.empty() ? "" : ", ") + p;
  app.add_option("--print-after", o.print_after, "print the IR after pass PASS (repeatable; 'all' for every pass, 'import' for the imported graph). Passes: " + pass_list)
      ->allow_extra_args(false);
  app.add_option("--disable-pass", o.disable_pass, "skip pass PASS (repeatable), for ablations and bisecting")->allow_extra_args(false);
  app.add_option("--max-memory", o.max_memory,
                 "cap on memory, in bytes or with a K/M/G/T suffix (512M, 8G), 0 = no cap: the constants the compiler holds "
                 "(initializers, checked before each is read, and folded or repacked tensors), the weights file, the arena of "
                 "intermediate tensors, and each graph input and output. Over it: exit 3, naming the tensor")
      ->capture_default_str();
  app.add_flag("--verify-passes", o.verify_passes, "check the graph's invariants after every pass (always on in debug builds)");
  app.add_flag("--profile", o.profile,
               "time every emitted function at run time: the binary's --profile prints them sorted by time, with their "
               "kernels, shapes, GFLOP/s or GB/s and the share of the machine's measured peak (--device cuda: each node's "
               "GPU time from CUDA events; `NAME --profile-out FILE` then writes what --gpu-profile reads)");
  app.add_flag("--verify", o.verify, "run the reference evaluator and the built binary on one random input and compare");
  app.add_option("--run-with", o.run_with,
                 "--verify: run the built binary through this command, e.g. an emulator for a cross-compiled one: "
                 "--cc aarch64-linux-gnu-gcc --target aarch64-sve:2048 --cflags \"-O2 -march=armv8.2-a+sve -msve-vector-bits=2048 "
                 "-ffp-contract=fast -static\" --run-with \"qemu-aarch64 -cpu max,sve-max-vq=16,sve-default-vector-length=256\" "
                 "(qemu-user runs SVE at 512 bits unless sve-default-vector-length, in bytes, says otherwise)");
  app.add_option("--verify-tol", o.verify_tol, "--verify tolerance: max abs error <= TOL * max(1, max |reference|)")->capture_default_str();
  app.add_option("--split", o.split,
                 "split the model between a GPU and the CPU: compile a head (NAME_head) and a tail (NAME_tail) as models of "
                 "their own, the head's outputs being the tail's inputs, and write NAME.split.json with the cut and its "
                 "predicted costs. SPEC: auto (the cut with the best predicted throughput, for --cpu-workers CPU workers "
                 "taking tails off the GPU, within --latency-budget), after=NODE (the head ends with node NODE, as named "
                 "by --print-after simplify), or gpu-share=F (the head keeps share F of the GPU time, 0 < F < 1)")
      ->type_name("SPEC")->group("Split models");
  app.add_option("--gpu", o.gpu, "--split: the GPU the head is planned for: h100 or h200 (FP32 peak and memory bandwidth)")
      ->check(CLI::IsMember({"h100", "h200"}))->capture_default_str()->group("Split models");
  app.add_option("--gpu-tflops", o.gpu_tflops, "--split: the GPU's FP32 peak in TFLOP/s, replacing --gpu's")
      ->check(CLI::PositiveNumber)->group("Split models");
  app.add_option("--gpu-bandwidth", o.gpu_bandwidth, "--split: the GPU's memory bandwidth in GB/s, replacing --gpu's")
      ->check(CLI::PositiveNumber)->group("Split models");
  app.add_option("--link-bandwidth", o.link_bandwidth, "--split: host-device copy bandwidth in GB/s")
      ->check(CLI::PositiveNumber)->capture_default_str()->group("Split models");
  app.add_option("--cpu-workers", o.cpu_workers, "--split: CPU workers running tails, one thread each (default: --threads, or the target's)")
      ->check(CLI::Range(1, 4096))->group("Split models");
  app.add_option("--cpu-profile", o.cpu_profile,
                 "--split: measured CPU times replacing the predicted ones: the whole model compiled with --profile and run "
                 "on one thread as `NAME --threads 1 --profile-out FILE`")
      ->type_name("FILE")->group("Split models");
  app.add_option("--gpu-profile", o.gpu_profile,
                 "--split: measured GPU times replacing the roofline's, in the same format (seconds per run TAB ops TAB "
                 "kernel TAB ONNX node names, comma-separated): the whole model compiled with --device cuda --profile and "
                 "run on the GPU as `NAME --profile-out FILE`")
      ->type_name("FILE")->group("Split models");
  app.add_option("--latency-budget", o.latency_budget_ms,
                 "--split auto: the longest a request whose tail runs on the CPU may take, head + copy + tail, in ms (0 = none)")
      ->check(CLI::NonNegativeNumber)->capture_default_str()->group("Split models");
  app.add_flag("--list-ops", o.list_ops, "print the supported ONNX op types and exit (with --device cuda: those the CUDA backend runs)");
  app.add_flag("-q,--quiet", o.quiet, "print only errors");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kUsage;
  }
  if (o.list_ops) {
    for (auto& op : o.device == "cuda" ? cuda_supported_ops() : supported_ops()) fmt::print("{}\n", op);
    return kOk;
  }
  if (o.model.empty() || o.outdir.empty()) {
    fmt::print(stderr, "compile-model: error: {} required\n{}", o.model.empty() ? "a model file is" : "-o OUTDIR is", app.help());
    return kUsage;
  }
  for (auto* list : {&o.print_after, &o.disable_pass})
    for (auto& p : *list)
      if (p != "all" && p != "import" && std::find(pass_names().begin(), pass_names().end(), p) == pass_names().end()) {
        std::string names;
        for (auto& q : pass_names()) names += (names.empty() ? "" : ", ") + q;
        fmt::print(stderr, "compile-model: error: unknown pass '{}' (passes: {})\n", p, names);
        return kUsage;
      }
  if (!o.run_with.empty() && !o.verify) {
    fmt::print(stderr, "compile-model: error: --run-with is for --verify\n");
    return kUsage;
  }
  if (task_form_opt->count() > 0 && o.omp_region == "op") {
    fmt::print(stderr, "compile-model: error: --task-form is for the one parallel region of --omp-region inference; "
                       "--omp-region op runs a fork-join region as `omp parallel sections`\n");
    return kUsage;
  }
  if (!o.gpu_precision.empty() && o.device != "cuda") {
    fmt::print(stderr, "compile-model: error: --gpu-precision is for --device cuda\n");
    return kUsage;
  }
  if (!o.gpu_libs.empty()) {
    if (o.device != "cuda") {
      fmt::print(stderr, "compile-model: error: --gpu-libs is for --device cuda\n");
      return kUsage;
    }
    for (size_t p = 0; p <= o.gpu_libs.size();) {
      size_t q = o.gpu_libs.find(',', p);
      if (q == std::string::npos) q = o.gpu_libs.size();
      const std::string lib = o.gpu_libs.substr(p, q - p);
      if (lib == "cudnn") o.cudnn = true;
      else if (lib == "cublas") o.cublas = true;
      else if (lib != "none" || o.gpu_libs != "none") {
        fmt::print(stderr, "compile-model: error: unknown --gpu-libs name '{}' (known: cudnn, cublas; e.g. --gpu-libs cudnn,cublas)\n", lib);
        return kUsage;
      }
      p = q + 1;
    }
  }
  if (!o.split.empty() && o.gpu_precision == "fp16") {
    fmt::print(stderr,
               "compile-model: error: --gpu-precision fp16 is not for --split: the split runtime runs the GPU parts through "
               "NAME_run_device, which cannot report an activation past half precision's range (65504); use tf32 or fp32\n");
    return kUsage;
  }
  if (!o.split.empty() && o.parallel == "batch") {
    fmt::print(stderr,
               "compile-model: error: --parallel batch is not for --split: the split runtime batches requests itself "
               "(max_batch) and runs each tail on one CPU worker; leave --parallel at auto or use loop or task\n");
    return kUsage;
  }
  if (o.parallel == "tune" && (o.target != "host" || o.device != "cpu" || !o.split.empty() || o.profile)) {
    fmt::print(stderr, "compile-model: error: --parallel tune times the builds on this machine: it needs --target host and the CPU, "
                       "without --device cuda, --split or --profile\n");
    return kUsage;
  }
  if (o.device == "cuda" && o.emit == "python") {
    fmt::print(stderr, "compile-model: error: --device cuda does not support --emit python\n");
    return kUsage;
  }
  if (o.verify && o.emit != "exe") {
    fmt::print(stderr, "compile-model: error: --verify needs --emit exe\n");
    return kUsage;
  }
  try {
    return compile(o);
  } catch (const CompileError& e) {
    fmt::print(stderr, "{}: {}\n", o.model, e.what());
    switch (e.kind()) {
      case CompileError::Kind::Io: return kUsage;
      case CompileError::Kind::Invalid: return kInvalid;
      case CompileError::Kind::Unsupported: return kUnsupported;
    }
  } catch (const InternalError& e) {
    fmt::print(stderr, "{}: internal compiler error: {}\n", o.model, e.what());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "{}: out of memory\n", o.model);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: internal compiler error: {}\n", o.model, e.what());
  }
  return kInternal;
}
