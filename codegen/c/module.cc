// codegen/c/module.cc — the C module writer (see module.h).
//
// Emitted nodes: every node with at least one output not known at compile time. Each gets
// `static void nK_<name>(inputs..., outputs..., extras...)` whose body comes from the
// backend (Backend::emit_node: the node's kernel and, for a fused group, the group loop of
// codegen/c/fused.h). Tensors are passed in
// their stored layout (Value::physical_shape). Buffers: graph inputs/outputs are the
// caller's pointers; constants live in the weights blob; other tensors live in one arena,
// at the offsets of the memory plan (passes/memory_plan.cc) when there is one, otherwise
// each in its own 64-byte aligned slot. Pointers that may alias another parameter of the
// same function (in-place reuse) are declared without `restrict`.
#include "codegen/c/module.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "codegen/c/emit.h"
#include "codegen/c/vmath.h"
#include "ir/op.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

constexpr uint64_t kAlign = 64;
uint64_t align_up(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

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

// Comment text must not close the comment.
std::string comment_safe(std::string s) {
  for (size_t p; (p = s.find("*/")) != std::string::npos;) s.replace(p, 2, "* /");
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 32) c = ' ';
  return s;
}

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

std::string shape_list(const Shape& s) {
  if (s.empty()) return "0";
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r;
}

void write_file(const fs::path& p, const std::string& data) {
  std::ofstream f(p, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  f.close();
  if (!f) throw CompileError(CompileError::Kind::Io, "cannot write '" + p.string() + "'");
}

struct Module {
  const Graph& g;
  const CodegenOptions& opt;
  const Backend& backend;
  std::vector<const Node*> emitted;
  std::map<const Value*, std::string> name;   // C local name of each buffer
  std::map<const Value*, uint64_t> woff;       // weights offsets
  std::vector<const Value*> weights;           // in blob order
  std::map<const Value*, uint64_t> aoff;       // arena offsets
  std::vector<const Value*> arena;
  std::map<const Value*, size_t> out_index;    // value → first graph output slot it fills
  std::set<std::string> used_names;
  std::map<std::string, int> next_suffix;     // unique(): next suffix to try per stem
  uint64_t wbytes = 0, abytes = 0;

  std::string unique(const std::string& base) {
    std::string s = base.size() > 48 ? base.substr(0, 48) : base;
    std::string r = s;
    // Suffixes continue where the last clash on this stem stopped: many names that share
    // their first 48 characters stay linear, not quadratic.
    for (int& k = next_suffix.try_emplace(s, 2).first->second; !used_names.insert(r).second; ++k) r = s + "_" + std::to_string(k);
    return r;
  }

  void plan() {
    for (auto& n : g.nodes)
      if (!n->folded()) emitted.push_back(n.get());
    for (size_t k = 0; k < g.inputs.size(); ++k) name[g.inputs[k]] = unique("v_" + c_identifier(g.inputs[k]->name));
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const Value* v = g.outputs[k];
      if (!out_index.count(v) && !v->constant && !v->is_input) {
        out_index[v] = k;
        name[v] = unique("v_" + c_identifier(v->name));
      }
    }
    // Offsets are checked for overflow and the totals against the --max-memory cap before
    // weights_blob() allocates the file image.
    auto need_weight = [&](const Value* v) {
      if (woff.count(v)) return;
      woff[v] = wbytes;
      weights.push_back(v);
      wbytes = align_up(add_bytes(wbytes, v->constant->nbytes() + kAlign, "the weights") - kAlign);
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
          abytes = align_up(add_bytes(abytes, v->nbytes() + kAlign, "the arena") - kAlign);
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

  std::string node_function(size_t k, const Node& n, std::string* call) {
    std::vector<std::string> ins(n.inputs.size()), outs(n.outputs.size()), extras(n.extra_inputs.size());
    std::vector<std::string> params, args;
    std::vector<const Value*> all;
    for (const Value* v : n.all_inputs()) all.push_back(v);
    for (const Value* v : n.outputs) all.push_back(v);
    const std::set<const Value*> may_alias = aliased(all);
    auto restrict_kw = [&](const Value* v) { return may_alias.count(v) ? "" : " restrict"; };
    std::string sig_comment;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Value* v = n.inputs[i];
      if (!v) continue;
      sig_comment += fmt::format("{}{} {}{}", sig_comment.empty() ? "" : ", ", v->name, v->type_str(), v->constant ? " const" : "");
      if (n.op->static_input(i)) continue;
      ins[i] = "x" + std::to_string(i);
      params.push_back(fmt::format("const {}*{} {}", dtype_ctype(v->dtype), restrict_kw(v), ins[i]));
      args.push_back(name.at(v));
    }
    std::string outs_comment;
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      const Value* v = n.outputs[j];
      if (!v) continue;
      outs_comment += fmt::format("{}{} {}", outs_comment.empty() ? "" : ", ", v->name, v->type_str());
      outs[j] = "y" + std::to_string(j);
      params.push_back(fmt::format("{}*{} {}", dtype_ctype(v->dtype), restrict_kw(v), outs[j]));
      args.push_back(name.at(v));
    }
    for (size_t j = 0; j < n.extra_inputs.size(); ++j) {
      const Value* v = n.extra_inputs[j];
      sig_comment += fmt::format(", {} {}{} (fused)", v->name, v->type_str(), v->constant ? " const" : "");
      extras[j] = "e" + std::to_string(j);
      params.push_back(fmt::format("const {}*{} {}", dtype_ctype(v->dtype), restrict_kw(v), extras[j]));
      args.push_back(name.at(v));
    }
    const std::string body = backend.emit_node(n, {ins, outs, extras});
    std::string unused;
    const std::set<std::string> used = identifiers(body);
    for (auto* list : {&ins, &outs, &extras})
      for (auto& p : *list)
        if (!p.empty() && !used.count(p)) unused += "  (void)" + p + ";\n";
    std::string fn = func_name(k, n);
    *call = fmt::format("{}({});", fn, fmt::join(args, ", "));
    std::string ops = n.op_type, from = n.origin.empty() ? n.name : fmt::format("{}", fmt::join(n.origin, ", "));
    for (auto& st : n.epilogue) {
      ops += "+" + st->op_type;
      from += ", " + (st->origin.empty() ? st->name : fmt::format("{}", fmt::join(st->origin, ", ")));
    }
    return fmt::format("/* {}: {}({}) -> {} */\nstatic void {}({}) {{\n{}{}}}\n\n", comment_safe(from), ops,
                       comment_safe(sig_comment), comment_safe(outs_comment), fn,
                       params.empty() ? "void" : fmt::format("{}", fmt::join(params, ", ")), unused, body);
  }

  std::string run_params() {
    std::vector<std::string> p;
    for (size_t k = 0; k < g.inputs.size(); ++k) p.push_back(fmt::format("const {}* in{}", dtype_ctype(g.inputs[k]->dtype), k));
    for (size_t k = 0; k < g.outputs.size(); ++k) p.push_back(fmt::format("{}* out{}", dtype_ctype(g.outputs[k]->dtype), k));
    return p.empty() ? "void" : fmt::format("{}", fmt::join(p, ", "));
  }

  std::string tensor_macros(const char* kind, const std::vector<Value*>& vs) {
    std::string s;
    std::string N = opt.name;
    for (size_t k = 0; k < vs.size(); ++k) {
      const Value* v = vs[k];
      s += fmt::format("#define {}_{}{}_NAME {}\n", N, kind, k, c_string(v->name));
      s += fmt::format("#define {}_{}{}_DTYPE {} /* {} */\n", N, kind, k, static_cast<int>(v->dtype), dtype_ctype(v->dtype));
      s += fmt::format("#define {}_{}{}_NDIM {}\n", N, kind, k, v->shape.size());
      s += fmt::format("#define {}_{}{}_SHAPE {{{}}}\n", N, kind, k, shape_list(v->shape));
      s += fmt::format("#define {}_{}{}_SIZE {} /* elements */\n", N, kind, k, numel(v->shape));
    }
    return s;
  }

  std::string header(uint64_t checksum) {
    std::string N = opt.name, G = N;
    for (auto& c : G) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string s = fmt::format(
        "/* {}.h — C API of the model compiled by onnxc from {}.\n"
        " * Call {}_init() once (weights file) or {}_init_from_memory() (whole weights file image),\n"
        " * then {}_run() any number of times, then {}_free(). Functions return ONNXC_OK (0) or an\n"
        " * onnxc_status code; onnxc_status_string()/onnxc_last_error_detail() describe it.\n"
        " * State is global: one instance of the model per process, runs not concurrent. */\n"
        "#ifndef ONNXC_{}_H\n#define ONNXC_{}_H\n#include <stddef.h>\n#include <stdint.h>\n#include \"onnxc_runtime.h\"\n"
        "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n",
        N, comment_safe(opt.source), N, N, N, N, G, G);
    s += fmt::format("#define {}_NUM_INPUTS {}\n", N, g.inputs.size());
    s += tensor_macros("INPUT", g.inputs);
    s += fmt::format("#define {}_NUM_OUTPUTS {}\n", N, g.outputs.size());
    s += tensor_macros("OUTPUT", g.outputs);
    s += fmt::format("#define {}_WEIGHTS_BYTES {}ULL /* payload of {}.weights */\n", N, wbytes, N);
    s += fmt::format("#define {}_WEIGHTS_CHECKSUM 0x{:016x}ULL\n", N, checksum);
    s += fmt::format("#define {}_ARENA_BYTES {}ULL /* intermediate tensors */\n\n", N, abytes);
    s += fmt::format("int {}_init(const char* weights_path);\nint {}_init_from_memory(const void* blob, size_t size);\n", N, N);
    s += fmt::format("int {}_run({});\n", N, run_params());
    s += fmt::format("int {}_run_v(const void* const* inputs, void* const* outputs);\nvoid {}_free(void);\n", N, N);
    s += fmt::format("extern const onnxc_model_info {}_info;\n\n#ifdef __cplusplus\n}}\n#endif\n#endif\n", N);
    return s;
  }

  std::string source() {
    std::string N = opt.name;
    std::string s = fmt::format(
        "/* {}.c — generated by onnxc from {}. Do not edit.\n"
        " * Plain C: one function per node or fused group (the ONNX nodes it came from in its comment), shapes as\n"
        " * constants, activations in the layouts the passes chose (NCHW or NCHW[x]c), weights in {}.weights. */\n"
        "#include \"{}.h\"\n\n#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n"
        "#ifdef _OPENMP\n#define ONNXC_PRAGMA(x) _Pragma(#x)\n#else\n#define ONNXC_PRAGMA(x)\n#endif\n\n"
        "/* ONNXC_FMA(a, b, c) = a * b + c, fused where the target has FMA (gcc does not contract in ISO C mode). */\n"
        "#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)\n#define ONNXC_FMA(a, b, c) fmaf(a, b, c)\n#else\n#define ONNXC_FMA(a, b, c) ((a) * (b) + (c))\n#endif\n\n"
        "static onnxc_weights g_weights;\nstatic unsigned char* g_arena;\nstatic int g_ready;\n\n",
        N, comment_safe(opt.source), N, N);
    std::string calls, functions;
    for (size_t k = 0; k < emitted.size(); ++k) {
      std::string call;
      functions += node_function(k, *emitted[k], &call);
      calls += "  " + call + "\n";
    }
    s += vmath_definitions(functions);  // the inline math helpers the node functions call
    s += functions;
    // Entry points.
    s += fmt::format("static int {}_start(void) {{\n  g_arena = (unsigned char*)onnxc_aligned_alloc({}_ARENA_BYTES);\n", N, N);
    s += "  if (!g_arena) {\n    onnxc_weights_free(&g_weights);\n    return ONNXC_ERR_NOMEM;\n  }\n  g_ready = 1;\n  return ONNXC_OK;\n}\n\n";
    s += fmt::format("int {0}_init(const char* weights_path) {{\n  {0}_free();\n"
                     "  int rc = onnxc_weights_load_file(weights_path, {0}_WEIGHTS_BYTES, {0}_WEIGHTS_CHECKSUM, &g_weights);\n"
                     "  return rc != ONNXC_OK ? rc : {0}_start();\n}}\n\n", N);
    s += fmt::format("int {0}_init_from_memory(const void* blob, size_t size) {{\n  {0}_free();\n"
                     "  int rc = onnxc_weights_from_memory(blob, size, {0}_WEIGHTS_BYTES, {0}_WEIGHTS_CHECKSUM, &g_weights);\n"
                     "  return rc != ONNXC_OK ? rc : {0}_start();\n}}\n\n", N);
    s += fmt::format("void {}_free(void) {{\n  onnxc_weights_free(&g_weights);\n  onnxc_aligned_free(g_arena);\n  g_arena = NULL;\n  g_ready = 0;\n}}\n\n", N);
    s += fmt::format("int {}_run({}) {{\n  if (!g_ready) return ONNXC_ERR_STATE;\n", N, run_params());
    std::vector<std::string> nullchk;
    for (size_t k = 0; k < g.inputs.size(); ++k) nullchk.push_back(fmt::format("!in{}", k));
    for (size_t k = 0; k < g.outputs.size(); ++k) nullchk.push_back(fmt::format("!out{}", k));
    if (!nullchk.empty()) s += fmt::format("  if ({}) return ONNXC_ERR_ARG;\n", fmt::join(nullchk, " || "));
    const std::set<std::string> called_with = identifiers(calls);
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Value* v = g.inputs[k];
      s += fmt::format("  const {}* const {} = in{}; /* {} {} */\n", dtype_ctype(v->dtype), name.at(v), k, comment_safe(v->name), v->type_str());
      // An input only static or shape-only uses read (Shape, Dropout's ratio) is never passed on.
      if (!v->is_output && !called_with.count(name.at(v))) s += fmt::format("  (void){};\n", name.at(v));
    }
    for (size_t k = 0; k < g.outputs.size(); ++k) {  // graph order keeps the C deterministic
      const Value* v = g.outputs[k];
      auto it = out_index.find(v);
      if (it == out_index.end() || it->second != k) continue;
      s += fmt::format("  {}* const {} = out{}; /* {} {} */\n", dtype_ctype(v->dtype), name.at(v), k, comment_safe(v->name), v->type_str());
    }
    for (const Value* v : weights)
      s += fmt::format("  const {0}* const {1} = (const {0}*)(g_weights.data + {2}); /* {3} {4} */\n", dtype_ctype(v->dtype), name.at(v),
                       woff.at(v), comment_safe(v->name), v->type_str());
    for (const Value* v : arena)
      s += fmt::format("  {0}* const {1} = ({0}*)(g_arena + {2}); /* {3} {4} */\n", dtype_ctype(v->dtype), name.at(v), aoff.at(v),
                       comment_safe(v->name), v->type_str());
    s += calls;
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const Value* v = g.outputs[k];
      auto it = out_index.find(v);
      if (it != out_index.end() && it->second == k) continue;
      // An empty output's buffer may be NULL, which memcpy must not get even for 0 bytes.
      if (v->nbytes())
        s += fmt::format("  memcpy(out{}, {}, {});\n", k, name.at(v), v->nbytes());
      else
        s += fmt::format("  (void)out{}; (void){}; /* empty: nothing to copy */\n", k, name.at(v));
    }
    s += "  return ONNXC_OK;\n}\n\n";
    std::vector<std::string> args;
    for (size_t k = 0; k < g.inputs.size(); ++k) args.push_back(fmt::format("(const {}*)inputs[{}]", dtype_ctype(g.inputs[k]->dtype), k));
    for (size_t k = 0; k < g.outputs.size(); ++k) args.push_back(fmt::format("({}*)outputs[{}]", dtype_ctype(g.outputs[k]->dtype), k));
    s += fmt::format("int {}_run_v(const void* const* inputs, void* const* outputs) {{\n", N);
    if (!g.inputs.empty()) s += "  if (!inputs) return ONNXC_ERR_ARG;\n";
    s += "  if (!outputs) return ONNXC_ERR_ARG;\n";
    if (g.inputs.empty()) s += "  (void)inputs;\n";
    s += fmt::format("  return {}_run({});\n}}\n\n", N, fmt::join(args, ", "));
    // Model description for onnxc_main.c.
    auto infos = [&](const char* kind, const std::vector<Value*>& vs) {
      if (vs.empty()) return std::string();
      std::string r;
      for (size_t k = 0; k < vs.size(); ++k)
        r += fmt::format("static const int64_t {}_{}{}_shape[] = {{{}}};\n", N, kind, k, shape_list(vs[k]->shape));
      r += fmt::format("static const onnxc_tensor_info {}_{}s[] = {{\n", N, kind);
      for (size_t k = 0; k < vs.size(); ++k)
        r += fmt::format("  {{{}, {}, {}, {}_{}{}_shape, {}}},\n", c_string(vs[k]->name), static_cast<int>(vs[k]->dtype), vs[k]->shape.size(),
                         N, kind, k, numel(vs[k]->shape));
      return r + "};\n";
    };
    s += infos("input", g.inputs) + infos("output", g.outputs);
    s += fmt::format("const onnxc_model_info {0}_info = {{\n  {1}, {2},\n  {3}, {4},\n  {5}, {6},\n"
                     "  {0}_init, {0}_init_from_memory, {0}_run_v, {0}_free\n}};\n",
                     N, c_string(N), c_string(N + ".weights"), g.inputs.size(), g.inputs.empty() ? "NULL" : N + "_inputs",
                     g.outputs.size(), N + "_outputs");
    return s;
  }

  std::string weights_blob(uint64_t* checksum) {
    std::string payload(wbytes, '\0');
    for (const Value* v : weights)
      std::copy(v->constant->bytes.begin(), v->constant->bytes.end(), payload.begin() + static_cast<std::ptrdiff_t>(woff.at(v)));
    *checksum = fnv1a(reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
    std::string head(64, '\0');
    auto put = [&](size_t off, const void* p, size_t n) { std::memcpy(head.data() + off, p, n); };
    uint32_t version = 1, hsize = 64;
    put(0, "ONNXCWTS", 8);
    put(8, &version, 4);
    put(12, &hsize, 4);
    put(16, &wbytes, 8);
    put(24, checksum, 8);
    return head + payload;
  }
};

}  // namespace

std::string c_identifier(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

CodegenResult emit_c_module(const Graph& g, const CodegenOptions& opt, const Backend& b) {
  Module m{g, opt, b, {}, {}, {}, {}, {}, {}, {}, {}, {}, 0, 0};
  m.plan();
  uint64_t checksum = 0;
  std::string blob = m.weights_blob(&checksum);
  std::string src = m.source();
  fs::path dir(opt.outdir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CompileError(CompileError::Kind::Io, "cannot create output folder '" + opt.outdir + "': " + ec.message());
  CodegenResult r;
  auto put = [&](const std::string& file, const std::string& data) {
    write_file(dir / file, data);
    r.files.push_back(file);
  };
  put(opt.name + ".h", m.header(checksum));
  put(opt.name + ".c", src);
  put(opt.name + ".weights", blob);
  put("onnxc_runtime.h", kRuntimeHeader);
  put("onnxc_runtime.c", kRuntimeSource);
  put("onnxc_main.c", kRuntimeMain);
  put("Makefile", fmt::format(
      "# Builds the model compiled by onnxc: `make` (executable), `make lib{0}.so`.\n"
      "CC ?= cc\nCFLAGS ?= -O3 -march=native\nOMPFLAGS ?= -fopenmp\n\n"
      "{0}: {0}.c {0}.h onnxc_runtime.c onnxc_runtime.h onnxc_main.c\n"
      "\t$(CC) -std=c11 $(CFLAGS) $(OMPFLAGS) -DONNXC_MODEL_INFO={0}_info -o $@ {0}.c onnxc_runtime.c onnxc_main.c -lm\n\n"
      "lib{0}.so: {0}.c {0}.h onnxc_runtime.c onnxc_runtime.h\n"
      "\t$(CC) -std=c11 $(CFLAGS) $(OMPFLAGS) -shared -fPIC -o $@ {0}.c onnxc_runtime.c -lm\n",
      opt.name));
  r.weights_bytes = m.wbytes;
  r.arena_bytes = m.abytes;
  r.functions = m.emitted.size();
  return r;
}

}  // namespace onnxc
