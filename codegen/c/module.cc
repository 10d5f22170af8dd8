// codegen/c/module.cc — the C module writer (see module.h).
//
// Emitted nodes: every node with at least one output not known at compile time. Each gets
// `static void nK_<name>(inputs..., outputs..., extras...)` whose body comes from the
// backend (Backend::emit_node: the node's kernel and, for a fused group, the group loop of
// codegen/c/fused.h). Nodes whose functions would be identical but for the name (the
// repeated blocks of ResNet, ViT...: same kernel, shapes and parameters) share the first
// one's function, whose comment lists them all: less C for the compiler (resnet50: 53 conv
// functions become 23) and for the instruction cache. Tensors are passed in
// their stored layout (Value::physical_shape). Buffers: graph inputs/outputs are the
// caller's pointers; constants live in the weights blob; other tensors live in the
// instance's arena, at the offsets of the memory plan (passes/memory_plan.cc) when there is
// one, otherwise each in its own 64-byte aligned slot. Pointers that may alias another
// parameter of the same function (in-place reuse) are declared without `restrict`.
//
// Entry points: the node functions never see the instance; NAME_run takes the weights and
// arena pointers from its ctx (a struct private to NAME.c: the arena, a reference-counted
// holder of the weights, the options, a busy flag) and passes buffers to the node functions
// as before, in graph order, inside one OpenMP parallel region (COptions::one_region:
// every thread calls the nodes whose loops it shares, one thread the serial ones; bodies from
// codegen/c/region.h, and a node that cannot share keeps its own fork/join between regions);
// the nodes of a fork-join region (Graph::task_regions, the schedule pass) there, each an
// OpenMP task with depend clauses, its loops taskloops (COptions::task_form OmpTasks,
// the default), or each list on a group of the threads that share its loops (Groups; both
// codegen/c/region.h); or as `omp parallel sections` without the one region, a section per list. With
// --parallel batch (Graph::batch_items) NAME_run runs those calls once per item of the batch,
// side by side; with --dynamic (Graph::dynamic_batch) NAME_run_batch runs them as
// NAME_run_item for a batch given at run time, the one region kept inside each item; with a
// run-time size other than the batch (Graph::run_size_max) NAME_run_size copies the run's n
// rows of the inputs into buffers of the maximum after the arena, runs the calls there (the
// nodes with Node::run_a get n as onnxc_n) and copies the outputs' n rows out; with both,
// NAME_run_dims runs NAME_run_item per item, each copying its n rows in and out so. The
// runtime is #included at the top of NAME.c, so its functions are static; NAME_info's entry
// points are small static adapters with the instance type erased.
#include "codegen/c/module.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "codegen/c/emit.h"
#include "codegen/c/node.h"
#include "codegen/c/region.h"
#include "codegen/c/vector_types.h"
#include "codegen/c/vmath.h"
#include "ir/cost.h"
#include "ir/op.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

// NAME.h's paragraph on instances, threads, the CPU check, errors and symbols ({0}: NAME).
constexpr const char* kHeaderAbout = R"( * Instances: {0}_create() loads {0}.weights ({0}_create_from_memory() takes the file's image) into a
 * new instance with its own arena of intermediate tensors ({0}_ARENA_BYTES). {0}_create_sharing()
 * makes another instance that shares an existing one's read-only weights; they are reference-counted
 * and released with the last instance using them. {0}_run() takes typed pointers, {0}_run_v() arrays
 * of buffers with their sizes in bytes (checked). {0}_destroy() frees an instance and sets the handle
 * to NULL, so a second destroy or a run through that handle is an error, not a crash.
 * Threads: different instances run concurrently from different threads. One instance runs one
 * inference at a time: it is not meant to run concurrently with itself (a second run while one is in
 * progress returns ONNXC_ERR_STATE). onnxc_options.num_threads sets the instance's OpenMP threads
 * for the duration of each of its runs.
 * CPU: each create function first checks that this CPU has what the flags {0}.c was compiled
 * with let the compiler use (instruction set extensions, SVE's vector length), and returns
 * ONNXC_ERR_TARGET naming what it lacks rather than die of an illegal instruction or compute
 * garbage; onnxc_options.unsafe_skip_cpu_check skips it (unsafe).
 * Errors: every function returns ONNXC_OK (0) or an onnxc_status code (onnxc_types.h): a NULL handle
 * or buffer, a wrong size, weights of another model or of another format version, out of memory.
 * {0}_status_string(code) names the code; {0}_last_error() is the detail of the last failure in the
 * calling thread. Nothing prints, aborts or exits.
 * Symbols: every external symbol of the model starts with {0}_; its runtime is private to {0}.c, so
 * any number of models link into one program, statically or as shared libraries.
 *
)";

constexpr uint64_t kAlign = 64;

// The target as the CPU check names it: "x86-64-avx512", or "host (x86-64 znver4)".
std::string target_label(const Target& t) { return t.name == "host" ? fmt::format("host ({} {})", t.arch, t.cpu) : t.name; }

// The C identifiers (words of [A-Za-z0-9_]) in text, to ask which names it mentions.
std::set<std::string> identifiers(const std::string& text) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::set<std::string> r;
  for (size_t p = 0; p < text.size();) {
    if (!word(text[p])) { ++p; continue; }
    size_t q = p;
    while (q < text.size() && word(text[q])) ++q;
    r.insert(text.substr(p, q - p));
    p = q;
  }
  return r;
}

struct Module : ModuleBuffers {
  Module(const Graph& graph, const CodegenOptions& o, const COptions& co, const Backend& b)
      : ModuleBuffers(graph, kAlign, kAlign), opt(o), copt(co), backend(b) {}
  const CodegenOptions& opt;
  const COptions& copt;
  const Backend& backend;
  // --profile: one row per emitted function, in call order (onnxc_op_info).
  std::vector<ProfileRow> op_rows;

  void plan() { place(); }

  std::string func_name(size_t k, const Node& n) { return unique("n" + std::to_string(k) + "_" + c_identifier(n.name)); }

  // The arena values among `vs` that overlap another value of `vs` (in-place reuse): their
  // parameters may alias and lose `restrict`. Sorted by offset, so a node with many
  // parameters (a Sum of thousands of inputs) costs n log n, not n^2.
  std::set<const Value*> aliased(const std::vector<const Value*>& vs) const {
    struct Span { uint64_t begin, end; const Value* v; };
    std::vector<Span> spans;
    std::set<const Value*> seen;
    for (const Value* v : vs) {
      auto it = v ? aoff.find(v) : aoff.end();
      if (it == aoff.end() || !seen.insert(v).second) continue;
      uint64_t bytes = v->nbytes();
      if (bytes) spans.push_back({it->second, it->second + bytes, v});
    }
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
    std::set<const Value*> r;
    uint64_t max_end = 0;  // of the spans before i
    for (size_t i = 0; i < spans.size(); ++i) {
      if (i > 0 && max_end > spans[i].begin) r.insert(spans[i].v);
      if (i + 1 < spans.size() && spans[i + 1].begin < spans[i].end) r.insert(spans[i].v), r.insert(spans[i + 1].v);
      max_end = std::max(max_end, spans[i].end);
    }
    return r;
  }

  // The function of node k ("" when an identical one exists: then *call calls that one and
  // its comment gains this node's names). in_region: the node runs inside the inference's one
  // parallel region (codegen/c/region.h), written in the form *role says.
  // in_group: the node is in a fork-join region inside the one region; its function is in task
  // form (RegionRole::Task, task_body) with COptions::task_form OmpTasks, else in group
  // form (RegionRole::Group, taking `onnxc_group* onnxc_g`), where the rewrite can write it.
  std::string node_function(size_t k, const Node& n, std::string* call, bool in_region, bool in_group, RegionRole* role) {
    std::vector<const Value*> all;
    for (const Value* v : n.all_inputs()) all.push_back(v);
    for (const Value* v : n.outputs) all.push_back(v);
    const std::set<const Value*> may_alias = aliased(all);
    NodeSignature sg = node_signature(n, [&](const Value* v) { return std::string(may_alias.count(v) ? "" : " restrict"); });
    std::vector<std::string>&ins = sg.ins, &outs = sg.outs, &extras = sg.extras, &params = sg.params, &args = sg.args;
    const CNodeCode emitted_node = emit_c_node(n, {ins, outs, extras}, backend.target());
    RegionBody region{RegionRole::Alone, emitted_node.body, emitted_node.own_region};
    if ((in_region || in_group) && emitted_node.own_region.empty()) region = region_body(emitted_node.body);
    if (in_group) {
      const bool tasks = copt.task_form == RegionForm::OmpTasks;
      std::string why;
      std::string grouped = region.role != RegionRole::Shared ? "" : tasks ? task_body(region.body, &why) : group_body(region.body, &why);
      if (!grouped.empty()) region = {tasks ? RegionRole::Task : RegionRole::Group, {std::move(grouped), {}, "", {}}, ""};
      else if (region.role == RegionRole::Shared) region = {RegionRole::Alone, emitted_node.body, why};
    }
    *role = region.role;
    // Why a node of the one region keeps its own fork/join, for the reader of the C.
    const std::string body = ((in_region || in_group) && region.role == RegionRole::Alone && !region.reason.empty()
                                  ? "  /* its own fork/join inside the run's parallel region: " + comment_safe(region.reason) + " */\n"
                                  : "") +
                             region.body.text;
    // A function whose loops are shared in the region takes its buffers without `restrict`,
    // as the body of an `omp parallel for` sees them (through the data block of the outlined
    // function): the kernels are tuned that way, and with restrict parameters gcc 12's PRE
    // keeps more vectors live across the Gemm register tile's reduction loop and spills
    // two of them per step (vit_b_16's MatMuls 1.9x slower).
    if (region.role == RegionRole::Shared || region.role == RegionRole::Group || region.role == RegionRole::Task)
      for (std::string& prm : params)
        if (size_t at = prm.find("* restrict "); at != std::string::npos) prm.replace(at, 11, "* ");
    // A run-time size (Graph::run_size_max): the node takes n, which a kernel may leave unused
    // (a plan without the bound).
    std::vector<std::string> run_size;
    if (n.run_a != 0) {
      run_size.push_back("onnxc_n");
      params.push_back("const int64_t onnxc_n");
      args.push_back("onnxc_n");
    }
    std::vector<std::string> group_outs;  // the group parameter, "onnxc_g" (unused when the body has no loop)
    if (region.role == RegionRole::Group) {
      params.push_back("onnxc_group* onnxc_g");
      args.push_back("&onnxc_g");
      group_outs.push_back("onnxc_g");
    }
    std::string unused;
    const std::set<std::string> used = identifiers(body);
    for (auto* list : {&ins, &outs, &extras, &group_outs, &run_size})
      for (auto& p : *list)
        if (!p.empty() && !used.count(p)) unused += "  (void)" + p + ";\n";
    const std::string &ops = sg.ops, &from = sg.from, &sig_comment = sg.reads, &outs_comment = sg.writes;
    op_rows.push_back({from, ops, emitted_node.kernel, outs_comment, node_cost(n)});
    const std::string rest = fmt::format("({}) {{\n{}{}}}\n\n", params.empty() ? "void" : fmt::format("{}", fmt::join(params, ", ")), unused, body);
    const std::string comment = fmt::format("/* {}: {}({}) -> {} */\n", comment_safe(from), ops, comment_safe(sig_comment), comment_safe(outs_comment));
    bool fresh = false;
    const std::string fn = functions.add(rest, rest, comment, [&] { return func_name(k, n); }, &fresh);
    *call = fmt::format("{}({});", fn, fmt::join(args, ", "));
    return fresh ? fn : "";
  }

  // The node functions in order of first use; a shared one's comment names every node it computes.
  FunctionTable functions;

  std::string functions_text() const { return functions.text("static void ", "function", "kernel, shapes and parameters"); }

  std::string run_params() const { return onnxc::run_params(opt.name, g); }
  // NAME_run_batch's parameters (--dynamic): NAME_run's with the batch after ctx.
  std::string batch_params() const {
    const std::string ctx = opt.name + "_ctx* ctx";
    return ctx + ", int64_t batch" + run_params().substr(ctx.size());
  }
  // NAME_run_size's (a run-time size other than the batch): NAME_run's with n after ctx.
  std::string size_params() const {
    const std::string ctx = opt.name + "_ctx* ctx";
    return ctx + ", int64_t n" + run_params().substr(ctx.size());
  }
  // NAME_run_dims's (both): NAME_run's with the batch and n after ctx.
  std::string dims_params() const {
    const std::string ctx = opt.name + "_ctx* ctx";
    return ctx + ", int64_t batch, int64_t n" + run_params().substr(ctx.size());
  }

  // Graph::run_size_max: the copies of the inputs, then of the outputs, at the maximum, after
  // the planned arena (64-byte aligned): their offsets in graph order, and where they end.
  std::vector<uint64_t> stage_offsets() const {
    std::vector<uint64_t> r;
    uint64_t at = (abytes + 63) / 64 * 64;
    for (const std::vector<Value*>* list : {&g.inputs, &g.outputs})
      for (const Value* v : *list) {
        r.push_back(at);
        at += (v->nbytes() + 63) / 64 * 64;
      }
    r.push_back(at);
    return r;
  }
  uint64_t stage_end() const { return stage_offsets().back(); }

  // The shape and type of a graph input or output as the C API sees them: with --parallel
  // batch (Graph::batch_items), the graph is one item and the API's tensors hold every item.
  Shape api_shape(const Value* v) const { return g.api_shape(v); }
  std::string api_type(const Value* v) const {
    return g.batch_items > 1 ? std::string(dtype_name(v->dtype)) + shape_str(api_shape(v)) : v->type_str();
  }

  // The opening comment's example: create, run on zero-filled buffers, print, destroy.
  std::string header_example() {
    std::string N = opt.name, e, args = "ctx", frees;
    auto buffers = [&](const char* kind, const char* var, const std::vector<Value*>& vs) {
      for (size_t k = 0; k < vs.size(); ++k) {
        const char* ct = dtype_ctype(vs[k]->dtype);
        e += fmt::format(" *     {0}* {1}{2} = calloc({3}_{4}{2}_SIZE, sizeof({0}));  // {5} '{6}' {7}\n", ct, var, k, N, kind,
                         var[0] == 'i' ? "input" : "output", comment_safe(vs[k]->name), api_type(vs[k]));
        args += fmt::format(", {}{}", var, k);
        frees += fmt::format(" *     free({}{});\n", var, k);
      }
    };
    e += fmt::format(
        " * Example (build: cc -std=c11 -O3 -ffp-contract=fast -fopenmp example.c {0}.c -lm; run next to {0}.weights):\n *\n"
        " *   #include <stdio.h>\n *   #include <stdlib.h>\n *   #include \"{0}.h\"\n *\n"
        " *   int main(void) {{\n"
        " *     {0}_ctx* ctx = NULL;\n"
        " *     onnxc_options options = {{0}};  // options.num_threads = 0: OpenMP's default\n"
        " *     int rc = {0}_create(\"{0}.weights\", &options, &ctx);\n"
        " *     if (rc != ONNXC_OK) {{\n"
        " *       fprintf(stderr, \"%s: %s\\n\", {0}_status_string(rc), {0}_last_error());\n"
        " *       return 1;\n"
        " *     }}\n",
        N);
    buffers("INPUT", "in", g.inputs);
    buffers("OUTPUT", "out", g.outputs);
    e += fmt::format(" *     rc = {}_run({});\n", N, args);
    e += fmt::format(" *     if (rc != ONNXC_OK) fprintf(stderr, \"%s: %s\\n\", {0}_status_string(rc), {0}_last_error());\n", N);
    if (!g.outputs.empty() && numel(g.outputs[0]->shape) > 0)
      e += fmt::format(" *     else printf(\"%s[0] = %g\\n\", {}_OUTPUT0_NAME, (double)out0[0]);\n", N);
    e += frees;
    e += fmt::format(" *     {}_destroy(&ctx);  // sets ctx to NULL\n *     return rc != ONNXC_OK;\n *   }}\n", N);
    return e;
  }

  std::string header(uint64_t checksum) {
    const std::string N = opt.name;
    const std::string about = fmt::format(fmt::runtime(kHeaderAbout), N);
    std::string s = header_comment(N, opt.source, "", about + header_example());
    s += header_open(N) + io_macros(N, g, wbytes, checksum);
    s += fmt::format("/* The compile-model target it was built for; {}_create refuses a CPU that lacks what the\n"
                     " * flags it is compiled with let the compiler use (ONNXC_ERR_TARGET). */\n"
                     "#define {}_TARGET {}\n",
                     N, N, c_string(target_label(backend.target())));
    if (g.dynamic_batch && g.run_size_max > 0)
      s += fmt::format("/* compile-model --dynamic batch and {3}: a run takes a batch of 1 to {1} items of {3} = 1 to {2}, given to\n"
                       " * {0}_run_dims ({0}_run runs the most of both), and runs the batch-1 model once per item, each on\n"
                       " * the item's first n rows along dimension {4} (the dimensions between are 1): as many items side by\n"
                       " * side as the instance's threads, one thread each, the rest one after another on all of them. A run of b\n"
                       " * items of n uses the first b * n * (one row) elements of each tensor, item by item. An instance holds\n"
                       " * an arena of {0}_ARENA_BYTES (an item's tensors and the copies of its inputs and outputs at {2}) for\n"
                       " * each thread it runs on (at most {1}). */\n"
                       "#define {0}_MAX_BATCH {1}\n"
                       "#define {0}_MAX_SIZE {2}\n"
                       "#define {0}_ARENA_BYTES {5}ULL /* an item's intermediate tensors and copies, per thread of an instance */\n\n",
                       N, g.batch_items, g.run_size_max, g.run_size_symbol, g.run_size_axis, stage_end());
    else if (g.dynamic_batch)
      s += fmt::format("/* compile-model --dynamic: a run takes a batch of 1 to {1} items, given to {0}_run_batch (or read from\n"
                       " * the buffers' sizes by {0}_run_v; {0}_run runs {1}), and runs the batch-1 model once per item: as many\n"
                       " * items side by side as the instance's threads, one thread each, the rest one after another on all of\n"
                       " * them. The shapes above hold {1} items; a batch of b uses the first b of each tensor's {1} rows. An\n"
                       " * instance holds an arena of {0}_ARENA_BYTES for each thread it runs on (at most {1}). */\n"
                       "#define {0}_MAX_BATCH {1}\n"
                       "#define {0}_ARENA_BYTES {2}ULL /* intermediate tensors of one item, per thread of an instance */\n\n",
                       N, g.batch_items, abytes);
    else if (g.batch_items > 1)
      s += fmt::format("/* compile-model --parallel batch: a run computes the {1} items of the batch side by side, one thread\n"
                       " * each; an instance holds an arena of {0}_ARENA_BYTES for each thread it runs on (at most {1}). */\n"
                       "#define {0}_BATCH_ITEMS {1}\n"
                       "#define {0}_ARENA_BYTES {2}ULL /* intermediate tensors of one item, per thread of an instance */\n\n",
                       N, g.batch_items, abytes);
    else if (g.run_size_max > 0)
      s += fmt::format("/* compile-model --dynamic {2}={1}: a run takes {2} = 1 to {1}, given to {0}_run_size (or read from the\n"
                       " * buffers' sizes by {0}_run_v; {0}_run runs {1}). Every input and output has {2} entries along its dimension\n"
                       " * {3} (the dimensions before it are 1): a run of n uses the first n of each tensor's {1} rows there. The\n"
                       " * model is computed for {1} in place, the run's rows first; an instance copies the inputs and outputs of a\n"
                       " * run through buffers of {1} rows in its arena. */\n"
                       "#define {0}_MAX_SIZE {1}\n"
                       "#define {0}_ARENA_BYTES {4}ULL /* intermediate tensors and the copies of the inputs and outputs, per instance */\n\n",
                       N, g.run_size_max, g.run_size_symbol, g.run_size_axis, stage_end());
    else
      s += fmt::format("#define {}_ARENA_BYTES {}ULL /* intermediate tensors, per instance */\n\n", N, abytes);
    ApiComments c;
    c.ctx = "/* An instance of the model: its arena and a reference to its weights. */\n";
    c.create = fmt::format("/* New instance with the weights of a {}.weights file; options may be NULL (defaults). On failure\n"
                           " * *ctx is NULL. */\n", N);
    c.create_from_memory = "/* The same from the image of a weights file. The image is used in place when blob + 64 is 64-byte\n"
                           " * aligned (it must then outlive every instance using it), otherwise copied. */\n";
    c.create_sharing = "/* New instance sharing other's weights (no copy, no reload), with its own arena and options. other may be\n"
                       " * destroyed before or after the new instance, but not during this call. */\n";
    c.run = fmt::format("/* One inference: in{{k}}/out{{k}} hold {0}_INPUT{{k}}_SIZE/{0}_OUTPUT{{k}}_SIZE elements. */\n", N);
    c.run_v = "/* The same with buffers in arrays; input_bytes[k]/output_bytes[k] must be each tensor's size in bytes\n"
              " * (ONNXC_ERR_SIZE otherwise, naming the tensor, the bytes given and expected). */\n";
    c.destroy = "/* Frees *ctx (and the weights when no other instance shares them) and sets *ctx to NULL. */\n";
    if (g.run_size_max > 0) {
      c.run = fmt::format("/* One inference of {1} = {0}_MAX_SIZE: {0}_run_size(ctx, {0}_MAX_SIZE, ...). */\n", N, g.run_size_symbol);
      c.run_v = fmt::format(
          "/* The same with buffers in arrays, their sizes in bytes giving {1}: input_bytes[k] and output_bytes[k]\n"
          " * must be the same number of rows, 1 to {0}_MAX_SIZE, of each tensor (ONNXC_ERR_SIZE otherwise, naming\n"
          " * the tensor, the bytes given and one row's). */\n",
          N, g.run_size_symbol);
      c.after_run_v = fmt::format(
          "/* One inference with {2} = n (1 to {0}_MAX_SIZE, ONNXC_ERR_ARG otherwise): in{{k}}/out{{k}} hold the first n of\n"
          " * the {0}_MAX_SIZE rows of {0}_INPUT{{k}}_SIZE/{0}_OUTPUT{{k}}_SIZE elements. */\n"
          "int {0}_run_size({1});\n",
          N, size_params(), g.run_size_symbol);
    }
    if (g.dynamic_batch && g.run_size_max > 0) {
      c.run = fmt::format("/* One inference of {0}_MAX_BATCH items of {1} = {0}_MAX_SIZE: {0}_run_dims(ctx, {0}_MAX_BATCH, {0}_MAX_SIZE, ...). */\n",
                          N, g.run_size_symbol);
      c.run_v = fmt::format(
          "/* Refused (ONNXC_ERR_ARG): the buffers' sizes give the batch times {1}, not each; {0}_run_dims takes both\n"
          " * (onnxc_model_info.run_dims, with the sizes checked, too). */\n",
          N, g.run_size_symbol);
      c.after_run_v = fmt::format(
          "/* One inference of `batch` items (1 to {0}_MAX_BATCH) of {2} = n (1 to {0}_MAX_SIZE; ONNXC_ERR_ARG otherwise):\n"
          " * in{{k}}/out{{k}} hold batch items of n rows each, item after item. */\n"
          "int {0}_run_dims({1});\n",
          N, dims_params(), g.run_size_symbol);
    } else if (g.dynamic_batch) {
      c.run = fmt::format("/* One inference of {0}_MAX_BATCH items: {0}_run_batch(ctx, {0}_MAX_BATCH, ...). */\n", N);
      c.run_v = fmt::format(
          "/* The same with buffers in arrays, their sizes in bytes giving the batch: input_bytes[k] and output_bytes[k]\n"
          " * must be the same number of items, 1 to {0}_MAX_BATCH, of each tensor (ONNXC_ERR_SIZE otherwise, naming\n"
          " * the tensor, the bytes given and one item's). */\n",
          N);
      c.after_run_v = fmt::format(
          "/* One inference of `batch` items (1 to {0}_MAX_BATCH, ONNXC_ERR_ARG otherwise): in{{k}}/out{{k}} hold the first\n"
          " * batch of the {0}_MAX_BATCH rows of {0}_INPUT{{k}}_SIZE/{0}_OUTPUT{{k}}_SIZE elements. */\n"
          "int {0}_run_batch({1});\n",
          N, batch_params());
    }
    s += api_declarations(N, g, c);
    if (opt.profile)
      s += fmt::format(
          "/* Built with compile-model --profile: every run times each of the model's {1} functions.\n"
          " * {0}_profile copies each one's seconds, summed over the instance's runs so far, into\n"
          " * seconds[0..{0}_PROFILE_OPS-1]; {0}_info.ops describes them (nodes, kernel, cost). */\n"
          "#define {0}_PROFILE_OPS {1}\n"
          "int {0}_profile(const {0}_ctx* ctx, double* seconds);\n\n",
          N, emitted.size());
    return s + header_close();
  }

  // NAME_run's node calls (source()): per position in g.nodes, the call, the function's index
  // (profile rows) and how it runs in the inference's parallel region; the calls' text and
  // the forms of fork-join region it uses, whose helpers the file then needs.
  struct Calls {
    std::vector<std::string> at;
    std::vector<size_t> fn;
    std::vector<RegionRole> role;
    bool any_shared = false;
    bool classic_sections = false, thread_groups = false, omp_task_regions = false;
    std::string text;
  };

  // Per position in g.nodes: the call, the function's index (profile rows) and how it runs
  // in the inference's parallel region (codegen/c/region.h). The region is for the loop
  // schedule: not with --parallel batch (the items' loop is the region), nor for the nodes of
  // a fork-join region (their lists run on one thread each, the functions as written).
  Calls plan_calls() {
    Calls cs;
    cs.at.assign(g.nodes.size(), "");
    cs.fn.assign(g.nodes.size(), 0);
    cs.role.assign(g.nodes.size(), RegionRole::Alone);
    {
      std::map<const Node*, size_t> pos;
      for (size_t k = 0; k < g.nodes.size(); ++k) pos[g.nodes[k].get()] = k;
      std::vector<bool> in_task_region(g.nodes.size(), false);
      for (const auto& r : g.task_regions)
        for (size_t p = r.first; p <= r.last && p < g.nodes.size(); ++p) in_task_region[p] = true;
      for (size_t k = 0; k < emitted.size(); ++k) {
        const size_t p = pos.at(emitted[k]);
        const bool one = copt.one_region && (g.batch_items <= 1 || g.dynamic_batch);
        node_function(k, *emitted[k], &cs.at[p], one && !in_task_region[p], one && in_task_region[p], &cs.role[p]);
        cs.fn[p] = k;
        cs.any_shared = cs.any_shared || cs.role[p] == RegionRole::Shared;
      }
      // Fork-join regions run in the one region, as OpenMP tasks or on thread groups.
      cs.any_shared = cs.any_shared || (copt.one_region && (g.batch_items <= 1 || g.dynamic_batch) && !g.task_regions.empty());
    }
    return cs;
  }

  // Node p's call, timed by the thread that makes it with --profile.
  std::string timed(const Calls& cs, size_t p) const {
    return opt.profile ? fmt::format("{{ const double t0 = onnxc_now_seconds(); {} ctx->prof[{}] += onnxc_now_seconds() - t0; }}", cs.at[p],
                                     cs.fn[p])
                       : cs.at[p];
  }

  // A fork-join region in the one region: each list on a group of the threads
  // (onnxc_group_join, codegen/c/region.h); every member calls the list's group functions, the
  // first member the others, followed by the group's barrier; the team's barrier ends it.
  std::string group_region(Calls& cs, const Graph::TaskRegion& r, size_t index, const std::string& ind) {
    cs.thread_groups = true;
    std::string c = fmt::format("{}/* Fork-join region {}: {} lists side by side, each on a group of the threads (predicted at {} threads: {:.1f} us; "
                                "{:.1f} us one after another) */\n{}{{\n",
                                ind, index, r.groups.size(), r.threads, r.task_seconds * 1e6, r.loop_seconds * 1e6, ind);
    std::string costs;
    for (size_t l = 0; l < r.groups.size(); ++l)
      costs += fmt::format("{}{}", l ? ", " : "", std::max<int64_t>(1, std::llround(r.list_seconds.at(l) * 1e9)));
    c += fmt::format("{}  static const int64_t onnxc_cost[{}] = {{{}}}; /* each list's predicted ns at one thread */\n", ind, r.groups.size(), costs);
    c += ind + "  onnxc_group onnxc_g;\n";
    for (size_t l = 0; l < r.groups.size(); ++l) {
      c += fmt::format("{}  if (onnxc_group_join(&onnxc_g, onnxc_sync{}, {}, onnxc_cost, {})) {{\n", ind, index, r.groups.size(), l);
      for (size_t q : r.groups[l]) {
        if (cs.at[q].empty()) continue;
        const bool all = cs.role[q] == RegionRole::Group;
        std::string call = all ? cs.at[q] : "if (onnxc_g.rank == 0) { " + cs.at[q] + " } onnxc_group_barrier(&onnxc_g);";
        if (opt.profile)
          call = fmt::format("{{ const double t0 = onnxc_now_seconds(); {} if (onnxc_g.rank == 0) ctx->prof[{}] += onnxc_now_seconds() - t0; }}", call,
                             cs.fn[q]);
        c += ind + "    " + call + "\n";
      }
      c += ind + "  }\n";
    }
    return c + ind + "}\n" + ind + "ONNXC_PRAGMA(omp barrier)\n";
  }

  // The region's nodes with a call, in list order.
  std::vector<size_t> task_nodes(const Calls& cs, const Graph::TaskRegion& r) const {
    std::vector<size_t> nodes;
    for (const auto& list : r.groups)
      for (size_t q : list)
        if (!cs.at[q].empty()) nodes.push_back(q);
    return nodes;
  }

  // A fork-join region as OpenMP tasks (--task-form omp-tasks): one thread makes each node of
  // the lists a task, in list order (the longest list first), with `depend` clauses on one
  // byte per node (onnxc_depR, declared before the parallel region) for the tensors it reads
  // from the region's other nodes; the team runs them as they become ready. The barrier at
  // the end of the `single` waits for all of them, and a thread waiting there, the creator
  // included, takes any task, also the chunks of a Task function's taskloops (a taskwait
  // would let the creator run only the nodes' tasks, not the chunks).
  std::string task_region(Calls& cs, const Graph::TaskRegion& r, size_t index, const std::string& ind) {
    cs.omp_task_regions = true;
    std::map<const Node*, size_t> at;
    for (size_t q = r.first; q <= r.last && q < g.nodes.size(); ++q) at[g.nodes[q].get()] = q;
    const std::vector<size_t> nodes = task_nodes(cs, r);
    std::vector<size_t> slot(g.nodes.size(), SIZE_MAX);
    for (size_t i = 0; i < nodes.size(); ++i) slot[nodes[i]] = i;
    // The tasks node q waits for: the producers of its inputs inside the region (through
    // nodes with no call of their own).
    std::function<void(size_t, std::set<size_t>&)> preds = [&](size_t q, std::set<size_t>& out) {
      for (const Value* v : g.nodes[q]->all_inputs()) {
        auto it = v && v->producer ? at.find(v->producer) : at.end();
        if (it == at.end() || it->second == q) continue;
        if (slot[it->second] != SIZE_MAX) out.insert(slot[it->second]);
        else preds(it->second, out);
      }
    };
    std::string c = fmt::format("{}/* Fork-join region {}: {} nodes as OpenMP tasks, run as their inputs are ready, made in the order of the "
                                "schedule's {} lists (predicted at {} threads: {:.1f} us; {:.1f} us one after another) */\n",
                                ind, index, nodes.size(), r.groups.size(), r.threads, r.task_seconds * 1e6, r.loop_seconds * 1e6);
    c += fmt::format("{}ONNXC_PRAGMA(omp single)\n{}{{\n", ind, ind);
    for (size_t q : nodes) {
      std::set<size_t> in;
      preds(q, in);
      std::string deps = fmt::format("depend(out: onnxc_dep{}[{}])", index, slot[q]);
      if (!in.empty()) {
        std::vector<std::string> items;
        for (size_t d : in) items.push_back(fmt::format("onnxc_dep{}[{}]", index, d));
        deps += fmt::format(" depend(in: {})", fmt::join(items, ", "));
      }
      std::string call = cs.at[q];
      if (opt.profile)
        call = fmt::format("const double t0 = onnxc_now_seconds(); {} const double dt = onnxc_now_seconds() - t0; ONNXC_PRAGMA(omp atomic) "
                           "ctx->prof[{}] += dt;",
                           call, cs.fn[q]);
      c += fmt::format("{}  ONNXC_PRAGMA(omp task {})\n{}  {{ {} }}\n", ind, deps, ind, call);
    }
    return c + ind + "}\n";
  }

  // A fork-join region outside the one region: `omp parallel sections`, a section per list.
  std::string sections_region(const Calls& cs, const Graph::TaskRegion& r, size_t index, const std::string& ind) const {
    std::string c = fmt::format("{}/* Fork-join region {}: {} lists side by side, one thread each (predicted {:.1f} us; {:.1f} us one after another) */\n",
                                ind, index, r.groups.size(), r.task_seconds * 1e6, r.loop_seconds * 1e6);
    c += fmt::format("{}ONNXC_PRAGMA(omp parallel sections num_threads(onnxc_region_threads({})))\n{}{{\n", ind, r.groups.size(), ind);
    for (const auto& list : r.groups) {
      c += ind + "  ONNXC_PRAGMA(omp section)\n" + ind + "  {\n";
      for (size_t q : list)
        if (!cs.at[q].empty()) c += ind + "    " + timed(cs, q) + "\n";
      c += ind + "  }\n";
    }
    return c + ind + "}\n";
  }

  // Calls in graph order. Without the one region (or where no node shares its loops): each
  // call as it is, a fork-join region (Graph::task_regions) as `omp parallel sections` with
  // one section per list, each on one thread. With it: the calls between two Alone ones in
  // one `omp parallel` (when one of them shares its loops): Shared calls made by every
  // thread, runs of Serial ones in one `omp single`, a fork-join region as OpenMP tasks or on
  // thread groups. With --profile the region's first thread times each node from the end of
  // the one before: every node ends at a barrier (in a fork-join region, each task times its
  // call, or the group's first member the list's calls).
  void write_calls(Calls& cs) {
    // The program in order: a node position, or a fork-join region (its first position).
    struct Step { size_t p; int region; };
    std::vector<Step> steps;
    for (size_t p = 0, next = 0; p < g.nodes.size(); ++p) {
      if (next < g.task_regions.size() && g.task_regions[next].first == p) {
        steps.push_back({p, static_cast<int>(next)});
        p = g.task_regions[next++].last;
      } else if (!cs.at[p].empty()) {
        steps.push_back({p, -1});
      }
    }
    for (size_t i = 0; i < steps.size();) {
      const Step& st = steps[i];
      if (!cs.any_shared || (st.region < 0 && cs.role[st.p] == RegionRole::Alone)) {
        if (st.region >= 0) cs.text += sections_region(cs, g.task_regions[st.region], st.region, "  "), cs.classic_sections = true;
        else cs.text += "  " + timed(cs, st.p) + "\n";
        ++i;
        continue;
      }
      // A run of steps up to the next Alone call: one region when one of them shares its loops.
      size_t j = i;
      bool shares = false;
      for (; j < steps.size() && (steps[j].region >= 0 || cs.role[steps[j].p] != RegionRole::Alone); ++j)
        shares = shares || steps[j].region >= 0 || cs.role[steps[j].p] == RegionRole::Shared;
      if (!shares) {
        for (; i < j; ++i) cs.text += "  " + timed(cs, steps[i].p) + "\n";
        continue;
      }
      for (size_t q = i; q < j; ++q) {
        if (steps[q].region < 0) continue;
        const auto& r = g.task_regions[steps[q].region];
        if (copt.task_form == RegionForm::OmpTasks) {
          cs.text += fmt::format("  char onnxc_dep{0}[{1}]; /* region {0}'s depend objects, one per node */\n  (void)onnxc_dep{0};\n", steps[q].region,
                               std::max<size_t>(task_nodes(cs, r).size(), 1));
        } else {
          cs.text += fmt::format("  onnxc_group_sync onnxc_sync{0}[{1}];\n  onnxc_group_sync_init(onnxc_sync{0}, {1});\n", steps[q].region,
                               r.groups.size());
        }
      }
      cs.text += "  /* One parallel region for these nodes (compile-model --omp-region inference): every thread calls the\n"
               "   * nodes that share their loops, one thread the serial ones; each node ends at a barrier. */\n"
               "  ONNXC_PRAGMA(omp parallel)\n  {\n";
      if (opt.profile)
        cs.text += "#ifdef _OPENMP\n    const int onnxc_lead = omp_get_thread_num() == 0;\n#else\n    const int onnxc_lead = 1;\n#endif\n"
                 "    double onnxc_t = onnxc_now_seconds();\n";
      auto mark = [&](const std::string& add) {  // the lead thread's clock after a barrier
        if (!opt.profile) return std::string();
        return fmt::format("    if (onnxc_lead) {{ const double t = onnxc_now_seconds(); {}onnxc_t = t; }}\n", add);
      };
      std::vector<size_t> serial;  // a run of Serial calls, for one `omp single`
      auto flush = [&]() {
        if (serial.empty()) return;
        cs.text += "    ONNXC_PRAGMA(omp single)\n    {\n";
        for (size_t q : serial) cs.text += "      " + timed(cs, q) + "\n";
        cs.text += "    }\n" + mark("");
        serial.clear();
      };
      for (; i < j; ++i) {
        const Step& s2 = steps[i];
        if (s2.region >= 0) {
          flush();
          const auto& r = g.task_regions[s2.region];
          cs.text += (copt.task_form == RegionForm::OmpTasks ? task_region(cs, r, s2.region, "    ") : group_region(cs, r, s2.region, "    ")) + mark("");
        } else if (cs.role[s2.p] == RegionRole::Serial) {
          serial.push_back(s2.p);
          if (opt.profile) flush();
        } else {
          flush();
          cs.text += "    " + cs.at[s2.p] + "\n" + mark(fmt::format("ctx->prof[{}] += t - onnxc_t; ", cs.fn[s2.p]));
        }
      }
      flush();
      cs.text += "  }\n";
    }
  }

  // The file's opening: what it is, the runtime, includes and macros, the instance types.
  std::string source_prelude() {
    const std::string N = opt.name;
    return fmt::format(
        "/* {}.c — generated by onnxc from {}. Do not edit.\n"
        " * Plain C: one function per node or fused group (the ONNX nodes it came from in its comment), shapes as\n"
        " * constants, activations in the layouts the passes chose (NCHW or NCHW[x]c), weights in {}.weights.\n"
        " * The entry points (at the end, see {}.h) work on instances: each holds its own arena and a reference-counted\n"
        " * pointer to the read-only weights. The runtime is included first and is private to this file.\n"
        " * Meant to be built with -ffp-contract=fast (or -std=gnu11): the kernels write multiply-adds as plain\n"
        " * a * b + c, which gcc in -std=c11 mode does not fuse; without it the results are correct but slower. */\n"
        "#include \"onnxc_runtime.c\" /* first: it sets _POSIX_C_SOURCE; all its functions are static */\n"
        "#include \"{}.h\"\n\n#include <math.h>\n#include <stdatomic.h>\n#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
        "#ifdef _OPENMP\n#include <omp.h>\n#define ONNXC_PRAGMA(x) _Pragma(#x)\n#else\n#define ONNXC_PRAGMA(x)\n#endif\n\n"
        "/* ONNXC_FMA(a, b, c) = a * b + c, fused where the target has FMA (gcc does not contract in ISO C mode). */\n"
        "#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)\n#define ONNXC_FMA(a, b, c) fmaf(a, b, c)\n#else\n#define ONNXC_FMA(a, b, c) ((a) * (b) + (c))\n#endif\n"
        "/* ONNXC_PREFETCH(p): a hint to bring the line at p toward the core (into L2); nothing without GNU C. */\n"
        "#if defined(__GNUC__)\n#define ONNXC_PREFETCH(p) __builtin_prefetch((p), 0, 2)\n#else\n#define ONNXC_PREFETCH(p) ((void)(p))\n#endif\n\n"
        "/* The weights, shared by the instances made from one another ({}_create_sharing), freed with the last. */\n"
        "typedef struct {{\n  atomic_size_t refs;\n  onnxc_weights weights;\n}} {}_shared;\n\n"
        "struct {}_ctx {{\n  {}_shared* shared;\n  unsigned char* arena; /* {}_ARENA_BYTES, this instance's own */\n"
        "  int num_threads;      /* onnxc_options.num_threads */\n  atomic_int busy;      /* 1 while a run is in progress */\n{}{}}};\n\n",
        N, comment_safe(opt.source), N, N, N, N, N, N, N, N,
        g.batch_items > 1 ? "  int slots;            /* arenas of --parallel batch: items that can run at once */\n" : "",
        opt.profile ? fmt::format("  double prof[{}_PROFILE_OPS]; /* seconds per function, summed over the runs */\n", N) : "");
  }

  // The tensor tables, the --profile table, and the functions that make and free instances.
  std::string instance_functions() {
    const std::string N = opt.name;
    std::string s;
    // Model description: tensor tables (also used by the entry points' checks), then the entry points.
    s += tensor_tables(N, g);
    if (opt.profile) {
      s += profile_ops_table(N, "The functions the profile times, in call order", op_rows);
    }
    s += status_functions(N);
    s += fmt::format(
        "/* Drops one reference to the weights; the last one frees them. */\n"
        "static void {0}_release({0}_shared* shared) {{\n"
        "  if (atomic_fetch_sub(&shared->refs, 1) == 1) {{\n    onnxc_weights_free(&shared->weights);\n    free(shared);\n  }}\n}}\n\n"
        "/* Checks this CPU (onnxc_check_cpu: first, in baseline code, before any instruction the\n"
        " * model's flags allow runs) and the arguments every create function takes; *ctx is NULL\n"
        " * afterwards. */\n"
        "static ONNXC_BASELINE int {0}_check_create(const char* fn, const onnxc_options* options, {0}_ctx** ctx) {{\n"
        "  if (ctx) *ctx = NULL;\n"
        "  if (!(options && options->unsafe_skip_cpu_check)) {{\n"
        "    int rc = onnxc_check_cpu(\"{0}\", {0}_TARGET);\n    if (rc) return rc;\n  }}\n"
        "  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"%s: ctx is NULL (pass the address of a {0}_ctx* to receive the instance)\", fn);\n"
        "  if (options && options->num_threads < 0)\n"
        "    return onnxc_fail(ONNXC_ERR_ARG, \"%s: options->num_threads is %d; use 0 for OpenMP's default or a thread count\", fn,\n"
        "                      options->num_threads);\n"
        "  return ONNXC_OK;\n}}\n\n"
        "/* A new instance on `shared`, whose reference it takes over (released on failure). */\n"
        "static int {0}_new_instance(const char* fn, {0}_shared* shared, const onnxc_options* options, {0}_ctx** ctx) {{\n"
        "  {0}_ctx* c = ({0}_ctx*)calloc(1, sizeof *c);\n{1}"
        "  unsigned char* arena = c ? (unsigned char*)onnxc_aligned_alloc({2}) : NULL;\n"
        "  if (!arena) {{\n    free(c);\n    {0}_release(shared);\n"
        "    return onnxc_fail(ONNXC_ERR_NOMEM, \"%s: cannot allocate an instance with its %llu-byte arena\", fn, {2});\n  }}\n"
        "  c->shared = shared;\n  c->arena = arena;\n  c->num_threads = options ? options->num_threads : 0;\n{3}"
        "  atomic_init(&c->busy, 0);\n  *ctx = c;\n  return ONNXC_OK;\n}}\n\n",
        N,
        g.batch_items > 1 ? fmt::format("  /* --parallel batch: an arena per thread, as many as the instance's threads and at most the items */\n"
                                        "  int slots = options && options->num_threads > 0 ? options->num_threads : 1;\n"
                                        "#ifdef _OPENMP\n  if (!(options && options->num_threads > 0)) slots = omp_get_max_threads();\n#endif\n"
                                        "  if (slots > {0}_{1}) slots = {0}_{1};\n", N, g.dynamic_batch ? "MAX_BATCH" : "BATCH_ITEMS")
                          : "",
        g.batch_items > 1 ? fmt::format("(unsigned long long)slots * {}_ARENA_BYTES", N) : N + "_ARENA_BYTES",
        g.batch_items > 1 ? "  c->slots = slots;\n" : "");
    // create and create_from_memory differ in how they load the weights.
    s += create_functions(N, "ONNXC_BASELINE ", "&shared->weights", [&](const std::string& fn, const std::string& load) {
      return fmt::format(
          "  {0}_shared* shared = ({0}_shared*)calloc(1, sizeof *shared);\n"
          "  if (!shared) return onnxc_fail(ONNXC_ERR_NOMEM, \"{1}: out of memory\");\n"
          "  rc = {2};\n"
          "  if (rc) {{\n    free(shared);\n    onnxc_prefix_error_detail(\"{1}\");\n    return rc;\n  }}\n"
          "  atomic_init(&shared->refs, 1);\n"
          "  return {0}_new_instance(\"{1}\", shared, options, ctx);\n",
          N, fn, load);
    });
    s += create_sharing_function(N, "ONNXC_BASELINE ", "atomic_fetch_add(&other->shared->refs, 1)", ", options");
    s += destroy_opening(N) + fmt::format("  onnxc_aligned_free(c->arena);\n  {0}_release(c->shared);\n  free(c);\n  return ONNXC_OK;\n}}\n\n", N);
    return s;
  }

  // NAME_run (NAME_run_batch with --dynamic): the checks, the instance's threads, then the
  // buffers' pointers and the node calls: once, once per item side by side (--parallel batch),
  // or through NAME_run_item (--dynamic).
  std::string run_function(const Calls& cs) {
    const std::string N = opt.name;
    const bool dynamic = g.dynamic_batch, sized = g.run_size_max > 0;
    const std::string fn = N + (dynamic && sized ? "_run_dims" : dynamic ? "_run_batch" : sized ? "_run_size" : "_run");
    std::string s = dynamic ? item_function(cs) : "";
    s += fmt::format("int {}({}) {{\n", fn, dynamic && sized ? dims_params() : dynamic ? batch_params() : sized ? size_params() : run_params());
    s += run_checks(fn);
    if (!weights.empty()) s += "  const unsigned char* const weights = ctx->shared->weights.data;\n";
    if (dynamic) {
      s += dynamic_items();
    } else if (sized) {
      s += "  unsigned char* const arena = ctx->arena;\n" + sized_run(cs, false);
    } else if (g.batch_items <= 1) {
      s += (arena.empty() ? "" : "  unsigned char* const arena = ctx->arena;\n") + item_body(cs, false);
    } else {
      // One parallel loop over the items, each thread on its own arena; the node functions' own
      // parallel loops run on the item's one thread (nthreads 1 for the regions it starts).
      const std::string body =
          (arena.empty() ? "" : fmt::format("#ifdef _OPENMP\n  unsigned char* const arena = ctx->arena + (size_t)omp_get_thread_num() * {0}_ARENA_BYTES;\n"
                                            "#else\n  unsigned char* const arena = ctx->arena;\n#endif\n", N)) +
          item_body(cs, true);
      s += fmt::format("  /* --parallel batch: the {1} items side by side, one thread each (at most ctx->slots, one arena each) */\n"
                       "#ifdef _OPENMP\n  const int item_threads = omp_get_max_threads() < ctx->slots ? omp_get_max_threads() : ctx->slots;\n#endif\n"
                       "  ONNXC_PRAGMA(omp parallel for num_threads(item_threads) schedule(static))\n"
                       "  for (int64_t item = 0; item < {0}_BATCH_ITEMS; ++item) {{\n"
                       "#ifdef _OPENMP\n    omp_set_num_threads(1);\n#endif\n",
                       N, g.batch_items);
      s += indented(body) + "  }\n";
    }
    s += "#ifdef _OPENMP\n  if (ctx->num_threads > 0) omp_set_num_threads(caller_threads);\n#endif\n"
         "  atomic_store(&ctx->busy, 0);\n  return ONNXC_OK;\n}\n\n";
    if (dynamic && sized)
      s += fmt::format("int {0}_run({1}) {{\n  return {0}_run_dims(ctx, {0}_MAX_BATCH, {0}_MAX_SIZE{2});\n}}\n\n", N, run_params(),
                       io_arguments());
    else if (dynamic)
      s += fmt::format("int {0}_run({1}) {{\n  return {0}_run_batch(ctx, {0}_MAX_BATCH{2});\n}}\n\n", N, run_params(),
                       io_arguments());
    else if (sized)
      s += fmt::format("int {0}_run({1}) {{\n  return {0}_run_size(ctx, {0}_MAX_SIZE{2});\n}}\n\n", N, run_params(), io_arguments());
    return s;
  }

  // Graph::run_size_max: a run of n rows. The inputs' n rows are copied into buffers of the
  // maximum in the arena (the rest zeroed, so that padded positions hold valid indices), the
  // model computed there in place (the nodes that need n take onnxc_n), and the outputs' n
  // rows copied out. With `items` (a run-time batch too), item `item`'s rows: the tensors hold
  // the run's items one after another, n rows each.
  std::string sized_run(const Calls& cs, bool items) const {
    const std::string N = opt.name;
    size_t taking = 0;
    for (const auto& n : g.nodes) taking += n->run_a != 0;
    if (taking != g.run_size_nodes)
      throw InternalError(fmt::format("--dynamic {}: {} nodes must stop at the run's rows, {} do after the passes", g.run_size_symbol,
                                      g.run_size_nodes, taking));
    const std::vector<uint64_t> at = stage_offsets();
    std::string s;
    auto row_bytes = [&](const Value* v) { return v->nbytes() / static_cast<uint64_t>(g.run_size_max); };
    // The item's rows in the caller's buffer k of `dir` ("in", "out").
    auto rows_of = [&](const char* dir, size_t k, uint64_t row, bool in) {
      if (!items) return fmt::format("{}{}", dir, k);
      return fmt::format("({}unsigned char*){}{} + (size_t)item * (size_t)n * {}", in ? "const " : "", dir, k, row);
    };
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Value* v = g.inputs[k];
      const uint64_t row = row_bytes(v);
      s += fmt::format("  unsigned char* const stage_in{0} = arena + {1}; /* '{2}' at {3} rows */\n", k, at[k], comment_safe(v->name),
                       g.run_size_max);
      if (row)
        s += fmt::format("  memcpy(stage_in{0}, {3}, (size_t)n * {1});\n  memset(stage_in{0} + (size_t)n * {1}, 0, (size_t)({2} - n) * {1});\n",
                         k, row, g.run_size_max, rows_of("in", k, row, true));
    }
    for (size_t k = 0; k < g.outputs.size(); ++k)
      s += fmt::format("  unsigned char* const stage_out{0} = arena + {1}; /* '{2}' at {3} rows */\n", k, at[g.inputs.size() + k],
                       comment_safe(g.outputs[k]->name), g.run_size_max);
    s += "  {\n    /* the model at the maximum, on the copies; the run's rows first */\n    const int64_t onnxc_n = n;\n    (void)onnxc_n;\n";
    for (size_t k = 0; k < g.inputs.size(); ++k)
      s += fmt::format("    const {0}* const in{1} = (const {0}*)stage_in{1};\n", dtype_ctype(g.inputs[k]->dtype), k);
    for (size_t k = 0; k < g.outputs.size(); ++k)
      s += fmt::format("    {0}* const out{1} = ({0}*)stage_out{1};\n", dtype_ctype(g.outputs[k]->dtype), k);
    s += indented(item_body(cs, false)) + "  }\n";
    for (size_t k = 0; k < g.outputs.size(); ++k)
      if (const uint64_t row = row_bytes(g.outputs[k]))
        s += fmt::format("  memcpy({2}, stage_out{0}, (size_t)n * {1});\n", k, row, rows_of("out", k, row, false));
    return s;
  }

  // body's lines two spaces further in (preprocessor lines stay in column 0).
  static std::string indented(const std::string& body) {
    std::string s;
    for (size_t p = 0; p < body.size();) {
      size_t e = body.find('\n', p);
      if (e == std::string::npos) e = body.size();
      const std::string line = body.substr(p, e - p);
      s += (line.empty() || line[0] == '#' ? "" : "  ") + line + "\n";
      p = e + 1;
    }
    return s;
  }

  // "in0, in1" for var "in" and n 2: NAME_run's buffer parameters.
  static std::string buffer_list(const char* var, size_t n) {
    std::vector<std::string> r;
    for (size_t k = 0; k < n; ++k) r.push_back(fmt::format("{}{}", var, k));
    return fmt::format("{}", fmt::join(r, ", "));
  }

  // ", in0, in1, out0": the buffers NAME_run passes on, after the arguments before them.
  std::string io_arguments() const {
    std::string r;
    if (!g.inputs.empty()) r += ", " + buffer_list("in", g.inputs.size());
    if (!g.outputs.empty()) r += ", " + buffer_list("out", g.outputs.size());
    return r;
  }

  // The checks of NAME_run (fn): the buffers, --dynamic's batch, one run at a time; then the
  // instance's threads for the run.
  std::string run_checks(const std::string& fn) const {
    const std::string N = opt.name;
    std::string s = fmt::format("  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"{0}: ctx is NULL (never created, or destroyed)\");\n", fn);
    if (!g.inputs.empty())
      s += fmt::format("  int rc = onnxc_check_buffers(\"{0}\", \"input\", {1}_inputs, {2}, (const void* const[]){{{3}}}, NULL);\n", fn, N,
                       g.inputs.size(), buffer_list("in", g.inputs.size()));
    else
      s += "  int rc = ONNXC_OK;\n";
    if (!g.outputs.empty())
      s += fmt::format("  if (!rc) rc = onnxc_check_buffers(\"{0}\", \"output\", {1}_outputs, {2}, (const void* const[]){{{3}}}, NULL);\n",
                       fn, N, g.outputs.size(), buffer_list("out", g.outputs.size()));
    s += "  if (rc) return rc;\n";
    if (g.run_size_max > 0)
      s += fmt::format("  if (n < 1 || n > {1}_MAX_SIZE)\n"
                       "    return onnxc_fail(ONNXC_ERR_ARG, \"{0}: {2} = %lld is outside 1..%d (the model was compiled with --dynamic {2}=%d)\",\n"
                       "                      (long long)n, {1}_MAX_SIZE, {1}_MAX_SIZE);\n",
                       fn, N, g.run_size_symbol);
    if (g.dynamic_batch)
      s += fmt::format("  if (batch < 1 || batch > {1}_MAX_BATCH)\n"
                       "    return onnxc_fail(ONNXC_ERR_ARG, \"{0}: batch %lld is outside 1..%d (the model was compiled with --dynamic up to %d)\",\n"
                       "                      (long long)batch, {1}_MAX_BATCH, {1}_MAX_BATCH);\n",
                       fn, N);
    s += fmt::format("  if (atomic_exchange(&ctx->busy, 1))\n"
                     "    return onnxc_fail(ONNXC_ERR_STATE, \"{0}: the instance is already running (one run at a time per instance: \"\n"
                     "                      \"give each thread its own, {1}_create_sharing shares the weights)\");\n"
                     "#ifdef _OPENMP\n  const int caller_threads = omp_get_max_threads();\n"
                     "  if (ctx->num_threads > 0) omp_set_num_threads(ctx->num_threads);\n#endif\n",
                     fn, N);
    return s;
  }

  // The buffers' pointers (at the item's rows with `items`), the weights' and arena's, the
  // node calls and the copies into outputs that are not written in place.
  std::string item_body(const Calls& cs, bool items) const {
    std::string body;
    auto row = [&](const Value* v) { return items ? fmt::format(" + item * {}", numel(v->shape)) : std::string(); };
    const std::set<std::string> called_with = identifiers(cs.text);
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Value* v = g.inputs[k];
      body += fmt::format("  const {}* const {} = in{}{}; /* {} {} */\n", dtype_ctype(v->dtype), name.at(v), k, row(v), comment_safe(v->name),
                          v->type_str());
      // An input only static or shape-only uses read (Shape, Dropout's ratio) is never passed on.
      if (!v->is_output && !called_with.count(name.at(v))) body += fmt::format("  (void){};\n", name.at(v));
    }
    for (size_t k = 0; k < g.outputs.size(); ++k) {  // graph order keeps the C deterministic
      const Value* v = g.outputs[k];
      auto it = out_index.find(v);
      if (it == out_index.end() || it->second != k) continue;
      body += fmt::format("  {}* const {} = out{}{}; /* {} {} */\n", dtype_ctype(v->dtype), name.at(v), k, row(v), comment_safe(v->name),
                          v->type_str());
    }
    body += weight_and_arena_pointers();
    body += cs.text;
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const Value* v = g.outputs[k];
      auto it = out_index.find(v);
      if (it != out_index.end() && it->second == k) continue;
      // An empty output's buffer may be NULL, which memcpy must not get even for 0 bytes.
      if (v->nbytes())
        body += fmt::format("  memcpy(out{}{}, {}, {});\n", k, row(v), name.at(v), v->nbytes());
      else
        body += fmt::format("  (void)out{}; (void){}; /* empty: nothing to copy */\n", k, name.at(v));
    }
    return body;
  }

  // --dynamic: one item of a run's batch, on its thread's arena.
  std::string item_function(const Calls& cs) const {
    const std::string N = opt.name;
    if (identifiers(cs.text).count("ctx")) throw InternalError("--dynamic: a node call reads the instance (ctx)");
    const std::string ctx = N + "_ctx* ctx";
    if (g.run_size_max > 0)
      return fmt::format("/* --dynamic: item `item` of a run's batch, n rows, on arena, the arena of the thread that runs it. */\n"
                         "static void {0}_run_item(const unsigned char* weights, unsigned char* arena, int64_t item, int64_t n{1}) {{\n"
                         "  (void)weights;\n{2}}}\n\n",
                         N, run_params().substr(ctx.size()), sized_run(cs, true));
    return fmt::format("/* --dynamic: item `item` of a run's batch on arena, the arena of the thread that runs it. */\n"
                       "static void {0}_run_item(const unsigned char* weights, unsigned char* arena, int64_t item{1}) {{\n"
                       "  (void)weights; (void)arena;\n{2}}}\n\n",
                       N, run_params().substr(ctx.size()), item_body(cs, true));
  }

  // --dynamic: a run's batch, as many items side by side as the threads and the rest one
  // after another on all of them (the items' node functions then split their loops).
  std::string dynamic_items() const {
    const std::string N = opt.name, io = (g.run_size_max > 0 ? ", n" : "") + io_arguments(),
                      weights_arg = weights.empty() ? "NULL" : "weights";
    return fmt::format(
        "  /* --dynamic: as many items side by side as the threads (at most ctx->slots, one arena each), one thread each;\n"
        "   * the rest one after another on all the threads */\n"
        "  int64_t side = 0;\n"
        "#ifdef _OPENMP\n"
        "  const int item_threads = omp_get_max_threads() < ctx->slots ? omp_get_max_threads() : ctx->slots;\n"
        "  if (item_threads > 1) side = batch - batch % item_threads;\n"
        "  ONNXC_PRAGMA(omp parallel for num_threads(item_threads) schedule(static) if(side > 0))\n"
        "  for (int64_t item = 0; item < side; ++item) {{\n"
        "    omp_set_num_threads(1);\n"
        "    {0}_run_item({2}, ctx->arena + (size_t)omp_get_thread_num() * {0}_ARENA_BYTES, item{1});\n"
        "  }}\n"
        "#endif\n"
        "  for (int64_t item = side; item < batch; ++item) {0}_run_item({2}, ctx->arena, item{1});\n",
        N, io, weights_arg);
  }

  std::string source() {
    const std::string N = opt.name;
    std::string s = source_prelude();
    Calls cs = plan_calls();
    write_calls(cs);
    if (cs.classic_sections)
      s += "#ifdef _OPENMP\n/* Threads of a fork-join region: one per list, at most the run's threads. */\n"
           "static int onnxc_region_threads(int lists) {\n  const int t = omp_get_max_threads();\n  return lists < t ? lists : t;\n}\n#endif\n\n";
    if (cs.thread_groups) s += group_runtime_c();
    if (cs.omp_task_regions) s += task_runtime_c();
    const std::string functions = functions_text();
    s += intrinsic_includes(functions);       // <immintrin.h> where a node function calls an intrinsic
    s += vector_type_definitions(functions);  // the vector types the node functions name
    s += vmath_definitions(functions);  // the inline math helpers the node functions call
    s += functions;
    s += instance_functions();
    s += run_function(cs);
    s += run_v_function(N, g);
    ModuleInfo info;
    info.openmp = "#ifdef _OPENMP\n  1,\n#else\n  0,\n#endif\n";
    info.device = "NULL /* device: the CPU */";
    info.target = N + "_TARGET";
    info.profile = opt.profile;
    s += model_info(N, g, info);
    return s;
  }
};

}  // namespace

CodegenResult emit_c_module(const Graph& g, const CodegenOptions& opt, const COptions& copt, const Backend& b) {
  const Target& t = b.target();
  const std::string& N = opt.name;
  Module m(g, opt, copt, b);
  ModuleFiles f = module_files(m, "c");
  f.distinct_functions = m.functions.functions().size();
  f.makefile.comment = [&](const std::string& make) {
    return fmt::format(
        "# Builds the model compiled by onnxc: `{1}` (executable {0}), `{1} lib{0}.so` (shared library).\n"
        "# {0}.c includes the runtime (onnxc_runtime.c), private to it. The driver onnxc_main.c does not depend on\n"
        "# the model: onnxc_main.o links with any model's C built with -DONNXC_MAIN_MODEL.\n"
        "# CC and CFLAGS: the compiler and flags compile-model used (its target; `make CC=... CFLAGS=...` overrides).\n",
        N, make);
  };
  f.makefile.variables = fmt::format("CC = {}\nCFLAGS ?= {}\nOMPFLAGS ?= -fopenmp\n", t.cc.empty() ? std::string("cc") : t.cc,
                                     t.cflags.empty() ? std::string("-O3 -march=native -ffp-contract=fast") : t.cflags);
  f.makefile.executable = fmt::format("$(CC) -std=c11 $(CFLAGS) $(OMPFLAGS) -DONNXC_MAIN_MODEL -o $@ {}.c onnxc_main.o -lm", N);
  f.makefile.driver = "$(CC) -std=c11 $(CFLAGS) -c -o $@ onnxc_main.c";
  f.makefile.library = fmt::format("$(CC) -std=c11 $(CFLAGS) $(OMPFLAGS) -shared -fPIC -o $@ {}.c -lm", N);
  return write_module(opt, m, f);
}

std::string locate_c_error(const std::string& c_path, const std::string& compiler_output) {
  // The first "<c_path>:LINE:COL: error: MESSAGE" line (gcc and clang both print it so).
  const std::string key = c_path + ":";
  int64_t line = -1;
  std::string message;
  for (size_t p = 0; p < compiler_output.size();) {
    size_t e = compiler_output.find('\n', p);
    if (e == std::string::npos) e = compiler_output.size();
    const std::string l = compiler_output.substr(p, e - p);
    p = e + 1;
    if (l.compare(0, key.size(), key) != 0) continue;
    const size_t err = l.find(": error: ");
    if (err == std::string::npos) continue;
    line = std::atoll(l.c_str() + key.size());
    message = l.substr(err + 9);
    break;
  }
  if (line <= 0) return "";
  // The node functions: "/* FROM: OPS(SIGNATURE) -> OUTPUTS */" then "static void nK_...(" up
  // to a "}" in column 0 (bodies are indented).
  std::ifstream in(c_path);
  std::string text, prev, header;
  for (int64_t k = 1; k <= line && std::getline(in, text); ++k) {
    if (text.compare(0, 13, "static void n") == 0 && text.size() > 13 && std::isdigit(static_cast<unsigned char>(text[13])) &&
        prev.compare(0, 3, "/* ") == 0)
      header = prev;
    else if (text == "}" && k < line)
      header.clear();
    prev = text;
  }
  // header: "/* FROM: OPS(SIGNATURE) -> OUTPUTS */"
  const size_t colon = header.find(": "), paren = header.find('(');
  if (header.compare(0, 3, "/* ") != 0 || colon == std::string::npos || paren == std::string::npos || paren < colon) return "";
  return fmt::format("node '{}' ({}) at {}:{}: {}", header.substr(3, colon - 3), header.substr(colon + 2, paren - colon - 2), c_path, line,
                     message);
}

}  // namespace onnxc
