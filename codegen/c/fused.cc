// codegen/c/fused.cc — fused group loops (see fused.h).
#include "codegen/c/fused.h"

#include <algorithm>
#include <map>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "codegen/c/vector_types.h"
#include "ir/op.h"
#include "ir/ops/elementwise.h"

namespace onnxc {

namespace {

// Arguments of node m's element expression: "" for absent/static inputs and for constants that are
// not extra inputs (an integer group's scales: passes/fuse.cc), reads of the anchor's inputs
// (when `anchor`), the local of an internal value of the group (`locals`), or reads of
// extra inputs (extra k at index idx[inputs + k], or the element expression extra_elems[k]
// when given).
std::vector<std::string> expr_args(const CEmit& e, const Node& m, bool anchor, const std::map<const Value*, std::string>& locals,
                                   const std::vector<std::string>& idx, const std::vector<std::string>* extra_elems = nullptr) {
  const Node& n = e.node;
  std::vector<std::string> args;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const Value* v = m.inputs[i];
    if (!v || m.op->static_input(i)) { args.emplace_back(); continue; }
    if (anchor) { args.push_back(fmt::format("{}[{}]", e.in(i), idx.at(i))); continue; }
    if (auto it = locals.find(v); it != locals.end()) { args.push_back(it->second); continue; }
    auto it = std::find(n.extra_inputs.begin(), n.extra_inputs.end(), v);
    if (it == n.extra_inputs.end() && v->constant) { args.emplace_back(); continue; }  // the step's C bakes it in (onnxc.qdq_add)
    ONNXC_ASSERT(it != n.extra_inputs.end(), m.where() + ": input '" + v->name + "' is not an extra input of its group");
    size_t k = static_cast<size_t>(it - n.extra_inputs.begin());
    if (extra_elems) args.push_back(extra_elems->at(k));
    else args.push_back(fmt::format("{}[{}]", e.extra(k), idx.at(n.inputs.size() + k)));
  }
  return args;
}

// `const float <dst> = <m's element>;` from m's kernel (CKernel::expr or stmts).
std::string element(const Node& m, const std::vector<std::string>& args, const std::string& dst) {
  const CKernel* k = find_c_kernel(m.op_type);
  ONNXC_ASSERT(k && (k->expr || k->stmts), m.where() + ": fused step has no C expression");
  if (k->stmts) return k->stmts(m, args, dst);
  return fmt::format("const float {} = {};", dst, k->expr(m, args));
}

// The offset in an extra input of the epilogue (strides st against Y's logical shape ov, N
// its last dim) of element (row, col): rows are every dim of Y but the last, `row` the flat
// index over them.
std::string epilogue_index(const Shape& ov, int64_t N, const Shape& st, const std::string& row, const std::string& col) {
  const size_t rd = ov.size() - 1;  // row dims: [0, rd)
  const Shape os = strides_of(ov);
  bool zero = true, same = true;
  for (size_t d = 0; d < rd; ++d) {
    zero = zero && (ov[d] == 1 || st[d] == 0);
    same = same && (ov[d] == 1 || st[d] == os[d]);
  }
  std::string r = index_term(col, st[rd]);
  if (zero) return index_sum({r});
  if (same) return index_sum({index_term(row, N), r});
  int64_t inner = 1;  // product of the row dims after d
  for (size_t d = rd; d-- > 0;) {
    if (ov[d] != 1 && st[d] != 0) {
      std::string c = inner == 1 ? row : fmt::format("{} / {}", row, inner);
      if (d > 0) c = fmt::format("({}) % {}", c, ov[d]);
      r = index_sum({r, index_term("(" + c + ")", st[d])});
    }
    inner *= ov[d];
  }
  return r;
}

}  // namespace

void emit_group_loop(CEmit& e) {
  const Node& n = e.node;
  bool one = is_index_aligned_elementwise(n);
  // Loop operands: the anchor's inputs (one loop only), then the extra inputs.
  std::vector<Shape> shapes;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    shapes.push_back(one && n.in(i) && !n.op->static_input(i) ? e.in_view(i) : e.out_view(0));  // unused slots: any shape
  for (const Value* v : n.extra_inputs) shapes.push_back(e.view_of(v));
  // After the kernel, at the top of its function: a statement that changes no local (its
  // values are locals of the loop body), which one thread of a region may run for all.
  e.serial();
  emit_broadcast(e, e.out_view(0), shapes, [&](const std::vector<std::string>& idx, const std::string& o) {
    // Internal value k of the group is the local t<k>: t0 the anchor's output, t<k> step k's.
    std::map<const Value*, std::string> locals;
    std::string s = "{ ";
    if (one) {
      s += element(n, expr_args(e, n, true, locals, idx), "t0");
    } else {
      s += fmt::format("const float t0 = {}[{}];", e.out(0), o);
    }
    locals[n.anchor_out] = "t0";
    size_t k = 0;
    for (auto& step : n.epilogue) {
      ++k;
      s += " " + element(*step, expr_args(e, *step, false, locals, idx), "t" + std::to_string(k));
      locals[step->out(0)] = "t" + std::to_string(k);
    }
    return s + fmt::format(" {}[{}] = t{}; }}", e.out(0), o, k);
  });
}

std::string epilogue_element(const CEmit& e, const std::string& src, const std::vector<std::string>& extra_elems,
                             const std::string& dst) {
  const Node& n = e.node;
  ONNXC_ASSERT(extra_elems.size() == n.extra_inputs.size(), n.where() + ": epilogue element without its extra inputs");
  std::map<const Value*, std::string> locals{{n.anchor_out, "t0"}};
  std::string s = fmt::format("const float t0 = {};", src);
  size_t k = 0;
  for (auto& step : n.epilogue) {
    ++k;
    s += " " + element(*step, expr_args(e, *step, false, locals, {}, &extra_elems), "t" + std::to_string(k));
    locals[step->out(0)] = "t" + std::to_string(k);
  }
  return s + fmt::format(" {} = t{};", dst, k);
}

std::string epilogue_vector(const CEmit& e, int64_t V, const std::string& src, const std::vector<std::string>& extra_vecs,
                            const std::string& dst) {
  const Node& n = e.node;
  ONNXC_ASSERT(extra_vecs.size() == n.extra_inputs.size(), n.where() + ": vector epilogue without its extra inputs");
  const std::string vt = vector_type(V), vi = vector_int_type(V);
  std::map<const Value*, std::string> locals{{n.anchor_out, "v0"}};
  std::string s = fmt::format("{} v0 = {};", vt, src);
  // c ? a : b on each lane, c a comparison (an int vector of all-ones or zeros lanes).
  auto select = [&](const std::string& c, const std::string& a, const std::string& b) {
    return fmt::format("({0})((({1}) & ({2})({3})) | (~({1}) & ({2})({4})))", vt, c, vi, a, b);
  };
  size_t k = 0;
  for (auto& step : n.epilogue) {
    const Node& m = *step;
    ++k;
    if (!m.out(0) || m.out(0)->dtype != DType::F32) return "";
    for (const Value* v : m.inputs)
      if (v && v->dtype != DType::F32) return "";
    const std::vector<std::string> a = expr_args(e, m, false, locals, {}, &extra_vecs);
    const std::string d = "v" + std::to_string(k);
    const std::string& t = m.op_type;
    std::string x;
    if (t == "Relu") {
      x = fmt::format("({})(({}){} & ({} > 0.0f))", vt, vi, a.at(0), a.at(0));  // NaN > 0 is false: 0, as x > 0 ? x : 0
    } else if (t == "LeakyRelu") {
      x = select(fmt::format("{} >= 0.0f", a.at(0)), a.at(0), fmt::format("{} * {}", c_float(unary_attrs(m).alpha), a.at(0)));
    } else if (t == "Clip") {
      std::string lo, hi;
      if (m.opset < 11) {
        lo = c_float(clip_attrs(m).lo), hi = c_float(clip_attrs(m).hi);
      } else {
        for (size_t i = 1; i < 3; ++i) {
          const Value* b = m.in(i);
          if (!b) continue;
          if (!b->constant) return "";
          (i == 1 ? lo : hi) = c_elem_literal(*b->constant, 0);
        }
      }
      // x < lo ? lo : x, then x > hi ? hi : x (a NaN stays NaN), as the scalar Clip.
      std::string c = a.at(0);
      if (!lo.empty()) {
        s += fmt::format(" const {} {}l = {};", vt, d, select(fmt::format("{} < {}", c, lo), fmt::format("({}){{0}} + {}", vt, lo), c));
        c = d + "l";
      }
      x = hi.empty() ? c : select(fmt::format("{} > {}", c, hi), fmt::format("({}){{0}} + {}", vt, hi), c);
    } else if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") {
      const char* op = t == "Add" ? "+" : t == "Sub" ? "-" : t == "Mul" ? "*" : "/";
      x = fmt::format("({}) {} ({})", a.at(0), op, a.at(1));
    } else {
      return "";
    }
    s += fmt::format(" const {} {} = {};", vt, d, x);
    locals[m.out(0)] = d;
  }
  return s + fmt::format(" {} = v{};", dst, k);
}

std::vector<std::string> matrix_epilogue_extras(const CEmit& e, const std::string& row, const std::string& col) {
  const Node& n = e.node;
  const Shape ov = e.out_shape(0);
  const int64_t N = ov.back();
  std::vector<std::string> extras;
  for (size_t x = 0; x < n.extra_inputs.size(); ++x)
    extras.push_back(fmt::format("{}[{}]", e.extra(x), epilogue_index(ov, N, broadcast_strides(ov, e.view_of(n.extra_inputs[x])), row, col)));
  return extras;
}

}  // namespace onnxc
