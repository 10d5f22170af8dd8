// codegen/module_writer.cc — what the C and CUDA module writers share (see module_writer.h).
#include "codegen/module_writer.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "ir/op.h"

namespace fs = std::filesystem;

namespace onnxc {

uint64_t fnv1a(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string c_string(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') r += '\\', r += static_cast<char>(c);
    else if (c < 32 || c >= 127) r += fmt::format("\\{:03o}", c);
    else r += static_cast<char>(c);
  }
  return r + "\"";
}

std::string comment_safe(std::string s) {
  for (size_t p = 0; p + 1 < s.size(); ++p)
    if ((s[p] == '*' && s[p + 1] == '/') || (s[p] == '/' && s[p + 1] == '*')) s.insert(p + 1, " ");
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 32) c = ' ';
  return s;
}

std::string shape_list(const Shape& s) {
  if (s.empty()) return "0";
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r;
}

std::string c_identifier(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

std::string weights_file(const std::map<const Value*, uint64_t>& offsets, uint64_t bytes, uint64_t* checksum) {
  std::string payload(bytes, '\0');
  for (const auto& [v, off] : offsets)
    std::copy(v->constant->bytes.begin(), v->constant->bytes.end(), payload.begin() + static_cast<std::ptrdiff_t>(off));
  *checksum = fnv1a(reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
  std::string head(64, '\0');
  auto put = [&](size_t off, const void* p, size_t n) { std::memcpy(head.data() + off, p, n); };
  const uint32_t version = 1, hsize = 64;
  put(0, "ONNXCWTS", 8);
  put(8, &version, 4);
  put(12, &hsize, 4);
  put(16, &bytes, 8);
  put(24, checksum, 8);
  return head + payload;
}

uint64_t place_after(uint64_t x, uint64_t n, uint64_t align, const std::string& what) {
  const uint64_t end = add_bytes(x, add_bytes(n, align, what), what) - align;
  return (end + align - 1) / align * align;
}

ModuleBuffers::ModuleBuffers(const Graph& graph, uint64_t weights_align, uint64_t arena_align)
    : g(graph), walign_(weights_align), aalign_(arena_align) {
  for (auto& n : graph.nodes)
    if (!n->folded()) emitted.push_back(n.get());
}

std::string ModuleBuffers::unique(const std::string& base) {
  std::string s = base.size() > 48 ? base.substr(0, 48) : base;
  std::string r = s;
  // Suffixes continue where the last clash on this stem stopped: many names that share
  // their first 48 characters stay linear, not quadratic.
  for (int& k = next_suffix_.try_emplace(s, 2).first->second; !used_names_.insert(r).second; ++k) r = s + "_" + std::to_string(k);
  return r;
}

std::string ModuleBuffers::weight_and_arena_pointers() const {
  std::string s;
  for (const Value* v : weights)
    s += fmt::format("  const {0}* const {1} = (const {0}*)(weights + {2}); /* {3} {4} */\n", dtype_ctype(v->dtype), name.at(v), woff.at(v),
                     comment_safe(v->name), v->type_str());
  for (const Value* v : arena)
    s += fmt::format("  {0}* const {1} = ({0}*)(arena + {2}); /* {3} {4} */\n", dtype_ctype(v->dtype), name.at(v), aoff.at(v),
                     comment_safe(v->name), v->type_str());
  return s;
}

ModuleBuffers::NodeSignature ModuleBuffers::node_signature(const Node& n, const std::function<std::string(const Value*)>& qualifier) const {
  NodeSignature sg;
  sg.ins.resize(n.inputs.size()), sg.outs.resize(n.outputs.size()), sg.extras.resize(n.extra_inputs.size());
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value* v = n.inputs[i];
    if (!v) continue;
    sg.reads += fmt::format("{}{} {}{}", sg.reads.empty() ? "" : ", ", v->name, v->type_str(), v->constant ? " const" : "");
    if (n.op->static_input(i)) continue;
    sg.ins[i] = "x" + std::to_string(i);
    sg.params.push_back(fmt::format("const {}*{} {}", dtype_ctype(v->dtype), qualifier(v), sg.ins[i]));
    sg.args.push_back(name.at(v));
  }
  for (size_t j = 0; j < n.outputs.size(); ++j) {
    const Value* v = n.outputs[j];
    if (!v) continue;
    sg.writes += fmt::format("{}{} {}", sg.writes.empty() ? "" : ", ", v->name, v->type_str());
    sg.outs[j] = "y" + std::to_string(j);
    sg.params.push_back(fmt::format("{}*{} {}", dtype_ctype(v->dtype), qualifier(v), sg.outs[j]));
    sg.args.push_back(name.at(v));
  }
  for (size_t j = 0; j < n.extra_inputs.size(); ++j) {
    const Value* v = n.extra_inputs[j];
    sg.reads += fmt::format(", {} {}{} (fused)", v->name, v->type_str(), v->constant ? " const" : "");
    sg.extras[j] = "e" + std::to_string(j);
    sg.params.push_back(fmt::format("const {}*{} {}", dtype_ctype(v->dtype), qualifier(v), sg.extras[j]));
    sg.args.push_back(name.at(v));
  }
  sg.ops = n.op_type;
  sg.from = n.origin.empty() ? n.name : fmt::format("{}", fmt::join(n.origin, ", "));
  for (auto& st : n.epilogue) {
    sg.ops += "+" + st->op_type;
    sg.from += ", " + (st->origin.empty() ? st->name : fmt::format("{}", fmt::join(st->origin, ", ")));
  }
  return sg;
}

void ModuleBuffers::place(const std::function<void(const Value*)>& io) {
  for (const Value* v : g.inputs) {
    name[v] = unique("v_" + c_identifier(v->name));
    if (io) io(v);
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const Value* v = g.outputs[k];
    if (!out_index.count(v) && !v->constant && !v->is_input) {
      out_index[v] = k;
      name[v] = unique("v_" + c_identifier(v->name));
      if (io) io(v);
    }
  }
  auto need_weight = [&](const Value* v) {
    if (woff.count(v)) return;
    woff[v] = wbytes;
    weights.push_back(v);
    wbytes = place_after(wbytes, v->constant->nbytes(), walign_, "the weights");
    check_memory_cap(g, wbytes, "the weights file, with constant '" + v->name + "' " + v->type_str() + ",");
    name[v] = unique("w_" + c_identifier(v->name));
  };
  for (const Node* n : emitted) {
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const Value* v = n->inputs[i];
      if (v && v->constant && !n->op->static_input(i)) need_weight(v);
    }
    for (const Value* v : n->extra_inputs)
      if (v->constant) need_weight(v);
    for (const Value* v : n->outputs) {
      if (!v || name.count(v)) continue;
      if (g.arena_bytes >= 0) {
        ONNXC_ASSERT(v->arena_offset >= 0, "value '" + v->name + "' has no place in the memory plan");
        aoff[v] = static_cast<uint64_t>(v->arena_offset);
      } else {
        aoff[v] = abytes;
        abytes = place_after(abytes, v->nbytes(), aalign_, "the arena");
        check_memory_cap(g, abytes, "the arena of intermediate tensors, with '" + v->name + "' " + v->type_str() + ",");
      }
      arena.push_back(v);
      name[v] = unique("t_" + c_identifier(v->name));
    }
  }
  if (g.arena_bytes >= 0) abytes = static_cast<uint64_t>(g.arena_bytes);
  for (const Value* v : g.outputs)
    if (v->constant) need_weight(v);
}

std::string FunctionTable::add(const std::string& key, const std::string& rest, const std::string& comment,
                               const std::function<std::string()>& make_name, bool* fresh) {
  auto [it, added] = index_.emplace(key, fns_.size());
  if (fresh) *fresh = added;
  if (!added) {
    Function& f = fns_[it->second];
    f.comment += comment;
    ++f.uses;
    return f.name;
  }
  fns_.push_back({make_name(), comment, rest, 1});
  return fns_.back().name;
}

std::string FunctionTable::text(const std::string& decl, const std::string& noun, const std::string& same) const {
  std::string s;
  for (const Function& f : fns_) {
    if (f.uses > 1) s += fmt::format("/* One {} for the {} nodes below (the same {}). */\n", noun, f.uses, same);
    s += f.comment + decl + f.name + f.rest;
  }
  return s;
}

ModuleFolder::ModuleFolder(const std::string& outdir) : dir_(outdir) {
  std::error_code ec;
  fs::create_directories(fs::path(outdir), ec);
  if (ec) throw CompileError(CompileError::Kind::Io, "cannot create output folder '" + outdir + "': " + ec.message());
}

void ModuleFolder::put(const std::string& file, const std::string& data) {
  const fs::path p = fs::path(dir_) / file;
  std::ofstream f(p, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  f.close();
  if (!f) throw CompileError(CompileError::Kind::Io, "cannot write '" + p.string() + "'");
  result.files.push_back(file);
}

void ModuleFolder::put_runtime() {
  put("onnxc_types.h", kRuntimeTypes);
  put("onnxc_runtime.h", kRuntimeHeader);
  put("onnxc_runtime.c", kRuntimeSource);
  put("onnxc_main.c", kRuntimeMain);
}

std::string makefile_text(const std::string& name, const std::string& ext, const Makefile& mk, const std::string& make) {
  return fmt::format(
      "{2}{3}RUNTIME = onnxc_types.h onnxc_runtime.h onnxc_runtime.c\n{4}\n"
      "{0}: {0}.{1} {0}.h $(RUNTIME) onnxc_main.o\n\t{5}\n\n"
      "onnxc_main.o: onnxc_main.c $(RUNTIME)\n\t{6}\n\n"
      "lib{0}.so: {0}.{1} {0}.h $(RUNTIME)\n\t{7}\n",
      name, ext, mk.comment(make), mk.variables, mk.after_runtime, mk.executable, mk.driver, mk.library);
}

CodegenResult write_module(const CodegenOptions& opt, const ModuleBuffers& m, const ModuleFiles& f) {
  ModuleFolder folder(opt.outdir);
  folder.put(opt.name + ".h", f.header);
  folder.put(opt.name + "." + f.ext, f.source);
  folder.put(opt.name + ".weights", f.weights);
  folder.put_runtime();
  folder.put(opt.makefile, makefile_text(opt.name, f.ext, f.makefile, opt.makefile == "Makefile" ? "make" : "make -f " + opt.makefile));
  CodegenResult r = std::move(folder.result);
  r.weights_bytes = m.wbytes;
  r.arena_bytes = m.abytes;
  r.functions = m.emitted.size();
  r.distinct_functions = f.distinct_functions;
  return r;
}

std::string info_entry_points(const std::string& N) {
  return fmt::format(
      "/* {0}_info's entry points: the ones above with the instance type erased. */\n"
      "static int {0}_info_create(const char* weights_path, const onnxc_options* options, void** ctx) {{\n"
      "  {0}_ctx* c = NULL;\n  int rc = {0}_create(weights_path, options, ctx ? &c : NULL);\n  if (ctx) *ctx = c;\n  return rc;\n}}\n\n"
      "static int {0}_info_create_from_memory(const void* blob, size_t size, const onnxc_options* options, void** ctx) {{\n"
      "  {0}_ctx* c = NULL;\n  int rc = {0}_create_from_memory(blob, size, options, ctx ? &c : NULL);\n  if (ctx) *ctx = c;\n  return rc;\n}}\n\n"
      "static int {0}_info_run_v(void* ctx, const void* const* inputs, const size_t* input_bytes, void* const* outputs,\n"
      "{1:{2}}const size_t* output_bytes) {{\n"
      "  return {0}_run_v(({0}_ctx*)ctx, inputs, input_bytes, outputs, output_bytes);\n}}\n\n"
      "static int {0}_info_destroy(void** ctx) {{\n"
      "  {0}_ctx* c = ctx ? ({0}_ctx*)*ctx : NULL;\n  int rc = {0}_destroy(ctx ? &c : NULL);\n  if (ctx) *ctx = c;\n  return rc;\n}}\n\n",
      N, "", N.size() + 23);
}

std::string profile_ops_table(const std::string& N, const std::string& what, const std::vector<ProfileRow>& rows) {
  std::string s = fmt::format("/* {}: nodes, ops, kernel, output, FLOPs, bytes. */\n"
                              "static const onnxc_op_info {}_ops[{}_PROFILE_OPS] = {{\n", what, N, N);
  for (const ProfileRow& r : rows)
    s += fmt::format("  {{{}, {}, {}, {}, {:.17g}, {:.17g}}},\n", c_string(r.nodes), c_string(r.ops), c_string(r.kernel), c_string(r.output),
                     r.cost.flops, r.cost.bytes);
  return s + fmt::format("}};\n\n"
                         "int {0}_profile(const {0}_ctx* ctx, double* seconds) {{\n"
                         "  if (!ctx || !seconds) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_profile: ctx or seconds is NULL\");\n"
                         "  memcpy(seconds, ctx->prof, sizeof ctx->prof);\n  return ONNXC_OK;\n}}\n\n",
                         N);
}

std::string run_params(const std::string& N, const Graph& g) {
  std::vector<std::string> p{N + "_ctx* ctx"};
  for (size_t k = 0; k < g.inputs.size(); ++k) p.push_back(fmt::format("const {}* in{}", dtype_ctype(g.inputs[k]->dtype), k));
  for (size_t k = 0; k < g.outputs.size(); ++k) p.push_back(fmt::format("{}* out{}", dtype_ctype(g.outputs[k]->dtype), k));
  return fmt::format("{}", fmt::join(p, ", "));
}

std::string header_comment(const std::string& N, const std::string& source, const std::string& compiled_for, const std::string& body) {
  return fmt::format("/* {}.h — C API of the model compiled by onnxc{} from {}.\n *\n{} */\n", N, compiled_for, comment_safe(source), body);
}

std::string header_open(const std::string& N) {
  std::string G = N;
  for (auto& c : G) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return fmt::format(
      "#ifndef ONNXC_{0}_H\n#define ONNXC_{0}_H\n#include <stddef.h>\n#include <stdint.h>\n#include \"onnxc_types.h\"\n"
      "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n",
      G);
}

std::string header_close() { return "#ifdef __cplusplus\n}\n#endif\n#endif\n"; }

namespace {

std::string tensor_macros(const std::string& N, const Graph& g, const char* kind, const std::vector<Value*>& vs) {
  std::string s;
  for (size_t k = 0; k < vs.size(); ++k) {
    const Value* v = vs[k];
    s += fmt::format("#define {}_{}{}_NAME {}\n", N, kind, k, c_string(v->name));
    s += fmt::format("#define {}_{}{}_DTYPE {} /* {} */\n", N, kind, k, static_cast<int>(v->dtype), dtype_ctype(v->dtype));
    s += fmt::format("#define {}_{}{}_NDIM {}\n", N, kind, k, v->shape.size());
    s += fmt::format("#define {}_{}{}_SHAPE {{{}}}\n", N, kind, k, shape_list(g.api_shape(v)));
    s += fmt::format("#define {}_{}{}_SIZE {} /* elements */\n", N, kind, k, numel(g.api_shape(v)));
  }
  return s;
}

std::string tensor_table(const std::string& N, const Graph& g, const char* kind, const std::vector<Value*>& vs) {
  if (vs.empty()) return std::string();
  std::string r;
  for (size_t k = 0; k < vs.size(); ++k)
    r += fmt::format("static const int64_t {}_{}{}_shape[] = {{{}}};\n", N, kind, k, shape_list(g.api_shape(vs[k])));
  r += fmt::format("static const onnxc_tensor_info {}_{}s[] = {{\n", N, kind);
  for (size_t k = 0; k < vs.size(); ++k)
    r += fmt::format("  {{{}, {}, {}, {}_{}{}_shape, {}}},\n", c_string(vs[k]->name), static_cast<int>(vs[k]->dtype), vs[k]->shape.size(), N,
                     kind, k, numel(g.api_shape(vs[k])));
  return r + "};\n";
}

}  // namespace

std::string io_macros(const std::string& N, const Graph& g, uint64_t weights_bytes, uint64_t checksum) {
  std::string s = fmt::format("#define {}_NUM_INPUTS {}\n", N, g.inputs.size());
  s += tensor_macros(N, g, "INPUT", g.inputs);
  s += fmt::format("#define {}_NUM_OUTPUTS {}\n", N, g.outputs.size());
  s += tensor_macros(N, g, "OUTPUT", g.outputs);
  s += fmt::format("#define {}_WEIGHTS_BYTES {}ULL /* payload of {}.weights */\n", N, weights_bytes, N);
  s += fmt::format("#define {}_WEIGHTS_CHECKSUM 0x{:016x}ULL\n", N, checksum);
  return s;
}

std::string api_declarations(const std::string& N, const Graph& g, const ApiComments& c) {
  return fmt::format(
      "{4}typedef struct {0}_ctx {0}_ctx;\n\n"
      "{5}int {0}_create(const char* weights_path, const onnxc_options* options, {0}_ctx** ctx);\n"
      "{6}int {0}_create_from_memory(const void* blob, size_t size, const onnxc_options* options, {0}_ctx** ctx);\n"
      "{7}int {0}_create_sharing(const {0}_ctx* other, const onnxc_options* options, {0}_ctx** ctx);\n"
      "{8}int {0}_run({1});\n"
      "{9}int {0}_run_v({0}_ctx* ctx, const void* const* inputs, const size_t* input_bytes, void* const* outputs,\n"
      "{2:{3}}const size_t* output_bytes);\n"
      "{10}{11}int {0}_destroy({0}_ctx** ctx);\n"
      "const char* {0}_status_string(int code); /* e.g. \"size mismatch\" */\n"
      "const char* {0}_last_error(void);        /* detail of the last failure in this thread, \"\" if none */\n"
      "/* Names, dtypes, shapes and entry points, for generic drivers (onnxc_main.c). */\n"
      "extern const onnxc_model_info {0}_info;\n\n{12}",
      N, run_params(N, g), "", N.size() + 11, c.ctx, c.create, c.create_from_memory, c.create_sharing, c.run, c.run_v, c.after_run_v, c.destroy,
      c.after_info);
}

std::string tensor_tables(const std::string& N, const Graph& g) {
  return tensor_table(N, g, "input", g.inputs) + tensor_table(N, g, "output", g.outputs) + "\n";
}

std::string status_functions(const std::string& N) {
  return fmt::format(
      "const char* {0}_status_string(int code) {{ return onnxc_status_string(code); }}\n\n"
      "const char* {0}_last_error(void) {{ return onnxc_last_error_detail(); }}\n\n",
      N);
}

std::string create_functions(const std::string& N, const std::string& attrs, const std::string& dest,
                             const std::function<std::string(const std::string& fn, const std::string& load)>& body) {
  auto one = [&](const std::string& fn, const std::string& params, const std::string& load) {
    return fmt::format("{0}int {1}({2}) {{\n  int rc = {3}_check_create(\"{1}\", options, ctx);\n  if (rc) return rc;\n", attrs, fn, params, N) +
           body(fn, load) + "}\n\n";
  };
  return one(N + "_create", fmt::format("const char* weights_path, const onnxc_options* options, {}_ctx** ctx", N),
             fmt::format("onnxc_weights_load_file(weights_path, {0}_WEIGHTS_BYTES, {0}_WEIGHTS_CHECKSUM, {1})", N, dest)) +
         one(N + "_create_from_memory", fmt::format("const void* blob, size_t size, const onnxc_options* options, {}_ctx** ctx", N),
             fmt::format("onnxc_weights_from_memory(blob, size, {0}_WEIGHTS_BYTES, {0}_WEIGHTS_CHECKSUM, {1})", N, dest));
}

std::string create_sharing_function(const std::string& N, const std::string& attrs, const std::string& add_ref, const std::string& instance_args) {
  return fmt::format(
      "{1}int {0}_create_sharing(const {0}_ctx* other, const onnxc_options* options, {0}_ctx** ctx) {{\n"
      "  int rc = {0}_check_create(\"{0}_create_sharing\", options, ctx);\n  if (rc) return rc;\n"
      "  if (!other) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_create_sharing: other is NULL (no instance to share the weights of)\");\n"
      "  {2};\n"
      "  return {0}_new_instance(\"{0}_create_sharing\", other->shared{3}, ctx);\n}}\n\n",
      N, attrs, add_ref, instance_args);
}

std::string destroy_opening(const std::string& N) {
  return fmt::format(
      "int {0}_destroy({0}_ctx** ctx) {{\n"
      "  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_destroy: ctx is NULL (pass the address of the handle)\");\n"
      "  if (!*ctx) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_destroy: *ctx is NULL (never created, or already destroyed)\");\n"
      "  {0}_ctx* c = *ctx;\n  *ctx = NULL;\n",
      N);
}

std::string run_v_function(const std::string& N, const Graph& g) {
  std::string s = fmt::format("int {0}_run_v({0}_ctx* ctx, const void* const* inputs, const size_t* input_bytes, void* const* outputs,\n"
                              "{1:{2}}const size_t* output_bytes) {{\n"
                              "  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_run_v: ctx is NULL (never created, or destroyed)\");\n",
                              N, "", N.size() + 11);
  if (g.dynamic_batch && g.run_size_max > 0) {
    // Two run-time sizes: the buffers' sizes give only their product. NAME_info_run_dims (for
    // onnxc_model_info.run_dims) takes both and checks the sizes.
    s += fmt::format("  (void)inputs; (void)input_bytes; (void)outputs; (void)output_bytes;\n"
                     "  return onnxc_fail(ONNXC_ERR_ARG, \"{0}_run_v: the model takes two run-time sizes, the batch and {1}, which the \"\n"
                     "                    \"buffers' sizes do not tell apart: call {0}_run_dims (or onnxc_model_info.run_dims)\");\n}}\n\n",
                     N, g.run_size_symbol);
    const size_t ni = g.inputs.size(), no = g.outputs.size();
    s += fmt::format("/* {0}_info.run_dims: {0}_run_dims with the buffers in arrays, each checked to be the run's size. */\n"
                     "static int {0}_info_run_dims(void* ctx, int64_t batch, int64_t n, const void* const* inputs, const size_t* input_bytes,\n"
                     "{1:{2}}void* const* outputs, const size_t* output_bytes) {{\n"
                     "  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_info.run_dims: ctx is NULL (never created, or destroyed)\");\n"
                     "  if (batch < 1 || batch > {0}_MAX_BATCH || n < 1 || n > {0}_MAX_SIZE)\n"
                     "    return onnxc_fail(ONNXC_ERR_ARG, \"{0}_info.run_dims: batch %lld of 1..%d and {3} = %lld of 1..%d: outside\",\n"
                     "                      (long long)batch, {0}_MAX_BATCH, (long long)n, {0}_MAX_SIZE);\n"
                     "  onnxc_tensor_info t[{4}], item;\n"
                     "  int64_t shapes[{4}][ONNXC_MAX_NDIM], item_shape[ONNXC_MAX_NDIM];\n"
                     "  for (int k = 0; k < {4}; ++k) {{\n"
                     "    onnxc_tensor_info_count(k < {5} ? &{0}_inputs[k] : &{0}_outputs[k - {5}], 0, batch, &item, item_shape);\n"
                     "    onnxc_tensor_info_count(&item, {6}, n, &t[k], shapes[k]);\n"
                     "  }}\n",
                     N, "", N.size() + 25, g.run_size_symbol, ni + no, ni, g.run_size_axis);
    if (ni)
      s += fmt::format("  int rc = onnxc_check_buffers(\"{0}_info.run_dims\", \"input\", t, {1}, inputs, input_bytes);\n", N, ni);
    else
      s += "  int rc = ONNXC_OK;\n  (void)inputs; (void)input_bytes;\n";
    if (no)
      s += fmt::format("  if (!rc) rc = onnxc_check_buffers(\"{0}_info.run_dims\", \"output\", t + {1}, {2}, (const void* const*)outputs, "
                       "output_bytes);\n", N, ni, no);
    else
      s += "  (void)outputs; (void)output_bytes;\n";
    std::vector<std::string> args{"(" + N + "_ctx*)ctx", "batch", "n"};
    for (size_t k = 0; k < ni; ++k) args.push_back(fmt::format("(const {}*)inputs[{}]", dtype_ctype(g.inputs[k]->dtype), k));
    for (size_t k = 0; k < no; ++k) args.push_back(fmt::format("({}*)outputs[{}]", dtype_ctype(g.outputs[k]->dtype), k));
    return s + fmt::format("  return rc ? rc : {}_run_dims({});\n}}\n\n", N, fmt::join(args, ", "));
  }
  bool rc_declared = false;
  // --dynamic: the buffers' sizes give the batch (dynamic_batch) or the run-time size n
  // (run_size_max, as rows of each tensor's run-time dimension).
  const bool counted = g.dynamic_batch || g.run_size_max > 0;
  const std::string max = N + (g.dynamic_batch ? "_MAX_BATCH" : "_MAX_SIZE");
  auto array_checks = [&](const char* kind, const char* bufs, const char* bytes, size_t n, const char* cast) {
    if (n == 0) return fmt::format("  (void){}; (void){};\n", bufs, bytes);
    std::string r = fmt::format("  if (!{1} || !{2})\n"
                                "    return onnxc_fail(ONNXC_ERR_ARG, \"{0}_run_v: {1} or {2} is NULL (the model has {3} {4}{5})\");\n"
                                "  {6}rc = onnxc_check_buffers(\"{0}_run_v\", \"{4}\", {0}_{4}s, {3}, {7}{1}, {8});\n  if (rc) return rc;\n",
                                N, bufs, bytes, n, kind, n == 1 ? "" : "s", rc_declared ? "" : "int ", cast,
                                counted ? "NULL" : bytes);
    if (counted)
      r += g.dynamic_batch ? fmt::format("  rc = onnxc_batch_of_sizes(\"{0}_run_v\", \"{1}\", {0}_{1}s, {2}, {3}, {4}, &batch);\n  if (rc) return rc;\n",
                                         N, kind, n, bytes, max)
                           : fmt::format("  rc = onnxc_count_of_sizes(\"{0}_run_v\", \"{1}\", {0}_{1}s, {2}, {3}, {5}, {4}, &batch);\n"
                                         "  if (rc) return rc;\n",
                                         N, kind, n, bytes, max, g.run_size_axis);
    rc_declared = true;
    return r;
  };
  if (counted) s += "  int64_t batch = 0;  /* --dynamic: the items (or rows of the run-time size) the buffers hold */\n";
  s += array_checks("input", "inputs", "input_bytes", g.inputs.size(), "");
  s += array_checks("output", "outputs", "output_bytes", g.outputs.size(), "(const void* const*)");
  std::vector<std::string> args{"ctx"};
  if (counted) args.push_back("batch");
  for (size_t k = 0; k < g.inputs.size(); ++k) args.push_back(fmt::format("(const {}*)inputs[{}]", dtype_ctype(g.inputs[k]->dtype), k));
  for (size_t k = 0; k < g.outputs.size(); ++k) args.push_back(fmt::format("({}*)outputs[{}]", dtype_ctype(g.outputs[k]->dtype), k));
  return s + fmt::format("  return {}_run{}({});\n}}\n\n", N, g.dynamic_batch ? "_batch" : g.run_size_max > 0 ? "_size" : "",
                         fmt::join(args, ", "));
}

std::string model_info(const std::string& N, const Graph& g, const ModuleInfo& info) {
  std::string s = info_entry_points(N);
  if (info.profile)
    s += fmt::format("static int {0}_info_profile(const void* ctx, double* seconds) {{ return {0}_profile((const {0}_ctx*)ctx, seconds); }}\n\n", N);
  const bool two = g.dynamic_batch && g.run_size_max > 0;
  s += fmt::format("const onnxc_model_info {0}_info = {{\n  {1}, {2},\n  {3}, {4},\n  {5}, {6},\n{7}"
                   "  {0}_info_create, {0}_info_create_from_memory, {0}_info_run_v, {0}_info_destroy, {0}_status_string, {0}_last_error,\n"
                   "  {8},\n  {9},\n  {10},\n  {11},\n  {12},\n  {13},\n  {14},\n  {15}\n}};\n\n",
                   N, c_string(N), c_string(N + ".weights"), g.inputs.size(), g.inputs.empty() ? "NULL" : N + "_inputs", g.outputs.size(),
                   g.outputs.empty() ? "NULL" : N + "_outputs", info.openmp,
                   info.profile ? fmt::format("{0}_PROFILE_OPS, {0}_ops, {0}_info_profile", N) : "0, NULL, NULL", info.device, info.target,
                   g.dynamic_batch     ? fmt::format("{}_MAX_BATCH /* --dynamic: a run takes 1 to this many items */", N)
                   : g.run_size_max > 0 ? fmt::format("{}_MAX_SIZE /* --dynamic {}: a run takes 1 to this many rows */", N, g.run_size_symbol)
                                        : "0",
                   g.run_size_max > 0 && !two
                       ? fmt::format("{} /* the dimension of the inputs and outputs that max_batch counts */", g.run_size_axis)
                       : "0",
                   two ? fmt::format("{}_MAX_SIZE /* --dynamic {}: an item takes 1 to this many rows */", N, g.run_size_symbol) : "0",
                   two ? fmt::format("{} /* the dimension of the inputs and outputs that max_size counts */", g.run_size_axis) : "0",
                   two ? N + "_info_run_dims" : "NULL");
  return s + info.extra +
         fmt::format("#ifdef ONNXC_MAIN_MODEL\n"
                     "/* The model onnxc_main.c runs, when this file is built into an executable with it. */\n"
                     "{1}const onnxc_model_info* const onnxc_main_model = &{0}_info;\n#endif\n",
                     N, info.cplusplus ? "extern \"C\" " : "");
}

}  // namespace onnxc
