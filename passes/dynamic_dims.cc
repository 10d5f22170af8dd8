// passes/dynamic_dims.cc — see dynamic_dims.h.
#include "passes/dynamic_dims.h"

#include <fmt/format.h>

#include <numeric>
#include <set>

#include "ir/ops/attention.h"

namespace onnxc {
namespace {

// Ops that compute each output entry from the entries of their operands at the same position
// (with ONNX broadcasting).
const std::set<std::string>& elementwise_ops() {
  static const std::set<std::string> ops{
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Gelu",
      "Swish", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus", "Softsign", "Mish", "Clip", "Exp", "Log", "Sqrt",
      "Reciprocal", "Neg", "Abs", "Erf", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Identity", "Dropout", "Cast", "Where",
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf", "ThresholdedRelu",
      "Expand", "QuantizeLinear", "DequantizeLinear", "BitShift", "Mod"};
  return ops;
}

// Inputs that give a shape, axes or bounds rather than data: they may hold numbers computed from
// n (a Reshape to [1, n, 12, 64]); what the node makes of them is checked through its output.
bool shape_operand(const Node& n, size_t k) {
  const std::string& op = n.op_type;
  if (k == 0) return op == "ConstantOfShape" || op == "Range";
  return op == "Reshape" || op == "Expand" || op == "Tile" || op == "Slice" || op == "Range" || op == "Pad" || op == "Squeeze" ||
         op == "Unsqueeze" || op == "Split" || op == "Resize" || op == "Upsample" || op == "TopK" || op == "OneHot" ||
         op.rfind("Reduce", 0) == 0 || (op == "CumSum" && k == 1);
}

int64_t int_attr(const Node& n, const std::string& name, int64_t def) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.i;
}

int64_t normal_axis(int64_t a, size_t r) { return a < 0 ? a + static_cast<int64_t>(r) : a; }

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to && d < s.size(); ++d) p *= s[d];
  return p;
}

class Checker {
 public:
  Checker(const std::vector<const Graph*>& gs, const std::vector<int64_t>& ns, const std::string& sym, DynamicDimsPlan* plan)
      : gs_(gs), ns_(ns), sym_(sym), plan_(plan) {}

  std::string run() {
    if (gs_.size() < 3 || gs_.size() != ns_.size()) return "needs the model at three sizes or more";
    if (std::string why = match(); !why.empty()) return why;
    const Graph& g = *gs_[0];
    for (const Value* v : g.inputs)
      if (std::string why = extents_of(v, "input '" + v->name + "'"); !why.empty()) return why;
    for (const auto& n : g.nodes) {
      if (n->folded()) continue;
      for (const Value* v : n->outputs)
        if (v)
          if (std::string why = extents_of(v, n->where() + ": output '" + v->name + "'"); !why.empty()) return why;
      for (size_t k = 0; k < n->inputs.size(); ++k) {
        const Value* v = n->inputs[k];
        if (!v || !v->constant || shape_operand(*n, k)) continue;
        if (std::string why = extents_of(v, n->where() + ": input '" + v->name + "'"); !why.empty()) return why;
        if (std::string why = padded_constant(*n, v); !why.empty()) return why;
      }
      if (std::string why = node_rule(*n); !why.empty()) return n->where() + ": " + why;
    }
    return "";
  }

 private:
  // Pairs every value of gs_[0] with its counterpart in each other import (node by node).
  std::string match() {
    const Graph& g0 = *gs_[0];
    peers_.assign(gs_.size(), {});
    for (size_t k = 1; k < gs_.size(); ++k) {
      const Graph& gk = *gs_[k];
      if (gk.nodes.size() != g0.nodes.size() || gk.inputs.size() != g0.inputs.size() || gk.outputs.size() != g0.outputs.size())
        return fmt::format("at {}={} the model has {} nodes, {} inputs, {} outputs, at {}={} {}, {}, {}: the graphs differ", sym_, ns_[k],
                           gk.nodes.size(), gk.inputs.size(), gk.outputs.size(), sym_, ns_[0], g0.nodes.size(), g0.inputs.size(),
                           g0.outputs.size());
      auto& m = peers_[k];
      for (size_t i = 0; i < g0.inputs.size(); ++i) m[g0.inputs[i]] = gk.inputs[i];
      for (size_t i = 0; i < g0.outputs.size(); ++i) m[g0.outputs[i]] = gk.outputs[i];
      for (size_t j = 0; j < g0.nodes.size(); ++j) {
        const Node& a = *g0.nodes[j];
        const Node& b = *gk.nodes[j];
        if (a.op_type != b.op_type || a.name != b.name || a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size())
          return fmt::format("{} at {}={} is {} at {}={}: the graphs differ", a.where(), sym_, ns_[0], b.where(), sym_, ns_[k]);
        for (size_t i = 0; i < a.inputs.size(); ++i)
          if (a.inputs[i] && b.inputs[i]) m[a.inputs[i]] = b.inputs[i];
        for (size_t i = 0; i < a.outputs.size(); ++i)
          if (a.outputs[i] && b.outputs[i]) m[a.outputs[i]] = b.outputs[i];
      }
    }
    return "";
  }

  const Value* peer(size_t k, const Value* v) const {
    auto it = peers_[k].find(v);
    return it == peers_[k].end() ? nullptr : it->second;
  }

  std::string sizes_text(const Value* v) const {
    std::vector<std::string> s;
    for (size_t k = 0; k < gs_.size(); ++k) {
      const Value* p = k ? peer(k, v) : v;
      s.push_back(fmt::format("{} at {}={}", p ? shape_text(p->shape) : "?", sym_, ns_[k]));
    }
    return fmt::format("{}", fmt::join(s, ", "));
  }

  // Each dimension of v as a*n + b over the imports; recorded in plan_->varying when one varies.
  std::string extents_of(const Value* v, const std::string& what) {
    if (ext_.count(v)) return "";
    const Shape& s0 = v->shape;
    std::vector<Extent> e(s0.size());
    bool any = false;
    for (size_t k = 1; k < gs_.size(); ++k) {
      const Value* p = peer(k, v);
      if (!p || p->shape.size() != s0.size())
        return fmt::format("{} changes rank with {}: {}", what, sym_, sizes_text(v));
    }
    for (size_t d = 0; d < s0.size(); ++d) {
      const Shape& s1 = peer(1, v)->shape;
      const int64_t dn = ns_[0] - ns_[1];
      if ((s0[d] - s1[d]) % dn != 0)
        return fmt::format("{} has dimension {} not of the form a*{}+b: {}", what, d, sym_, sizes_text(v));
      e[d].a = (s0[d] - s1[d]) / dn;
      e[d].b = s0[d] - e[d].a * ns_[0];
      for (size_t k = 2; k < gs_.size(); ++k)
        if (e[d].at(ns_[k]) != peer(k, v)->shape[d])
          return fmt::format("{} has dimension {} not of the form a*{}+b (a product of sizes?): {}", what, d, sym_, sizes_text(v));
      if (e[d].varies()) {
        if (e[d].a < 0 || e[d].at(1) < 1)
          return fmt::format("{} has dimension {} = {}, {} at {}=1: onnxc keeps dimensions that grow with {} and are not empty at 1",
                             what, d, extent_text(e[d], sym_), e[d].at(1), sym_, sym_);
        any = true;
      }
    }
    ext_[v] = e;
    if (any) plan_->varying[v] = e;
    return "";
  }

  bool varies(const Value* v) const {
    auto it = ext_.find(v);
    if (it == ext_.end()) return false;
    for (const Extent& e : it->second)
      if (e.varies()) return true;
    return false;
  }
  Extent ext(const Value* v, size_t d) const {
    auto it = ext_.find(v);
    if (it == ext_.end() || d >= it->second.size()) return {0, d < v->shape.size() ? v->shape[d] : 1};
    return it->second[d];
  }
  std::vector<size_t> varying_axes(const Value* v) const {
    std::vector<size_t> r;
    for (size_t d = 0; d < v->shape.size(); ++d)
      if (ext(v, d).varies()) r.push_back(d);
    return r;
  }

  // A data constant read by a node: at every size, what it holds must not depend on n except
  // through its shape, and then as the first entries of the one at MAX.
  std::string padded_constant(const Node& n, const Value* v) const {
    const Tensor& t0 = *v->constant;
    for (size_t k = 1; k < gs_.size(); ++k) {
      const Value* p = peer(k, v);
      if (!p || !p->constant) return fmt::format("{}: input '{}' is not a constant at {}={}", n.where(), v->name, sym_, ns_[k]);
      const Tensor& tk = *p->constant;
      const Shape& sk = tk.shape;
      const Shape& s0 = t0.shape;
      // Row-major walk over tk, reading t0 at the same index.
      std::vector<int64_t> idx(sk.size(), 0);
      for (int64_t i = 0; i < tk.numel(); ++i) {
        int64_t off = 0;
        for (size_t d = 0; d < sk.size(); ++d) off = off * s0[d] + idx[d];
        const double a = tk.get(i), b = t0.get(off);
        if (!(a == b || (a != a && b != b)))
          return varies(v) ? fmt::format("{}: constant '{}' at {}={} is not the first entries of the one at {}={}", n.where(), v->name,
                                         sym_, ns_[k], sym_, ns_[0])
                           : fmt::format("{}: constant '{}' holds numbers computed from {} (it differs between {}={} and {}={}); "
                                         "onnxc keeps {} a size, not a number the model computes with",
                                         n.where(), v->name, sym_, sym_, ns_[k], sym_, ns_[0], sym_);
        for (size_t d = sk.size(); d-- > 0;) {
          if (++idx[d] < sk[d]) break;
          idx[d] = 0;
        }
      }
    }
    return "";
  }

  // Operand x of an output y shaped by broadcasting: its dimensions, right-aligned, either the
  // output's run-time ones or constants (1 where the output's varies).
  std::string aligned(const Value* x, const Value* y) const {
    if (!x) return "";
    const size_t r = x->shape.size(), R = y->shape.size();
    if (r > R) return "";
    for (size_t i = 0; i < r; ++i) {
      const Extent ex = ext(x, i), ey = ext(y, R - r + i);
      if (ex.varies() ? !(ex == ey) : (ey.varies() && ex.b != 1))
        return fmt::format("operand '{}' has dimension {} = {} where the result's is {}", x->name, i, extent_text(ex, sym_),
                           extent_text(ey, sym_));
    }
    return "";
  }

  std::string none_vary(const Value* v, const std::vector<int64_t>& axes, const char* does) const {
    for (int64_t a : axes)
      if (a >= 0 && ext(v, static_cast<size_t>(a)).varies())
        return fmt::format("{} along dimension {} of '{}', which is {}", does, a, v->name, extent_text(ext(v, a), sym_));
    return "";
  }

  std::vector<int64_t> axes_of(const Node& n, size_t r, bool all_by_default) const {
    std::vector<int64_t> axes;
    auto it = n.attrs.find("axes");
    if (it != n.attrs.end()) {
      axes = it->second.ints;
    } else if (n.in(1) && n.in(1)->constant) {
      for (int64_t i = 0; i < n.in(1)->constant->numel(); ++i) axes.push_back(n.in(1)->constant->get_i64(i));
    } else if (all_by_default && !(int_attr(n, "noop_with_empty_axes", 0) && n.in(1))) {
      axes.resize(r);
      std::iota(axes.begin(), axes.end(), 0);
    }
    for (int64_t& a : axes) a = normal_axis(a, r);
    return axes;
  }

  // The block rule of Reshape-like nodes: x's one run-time dimension maps onto one of y's.
  std::string reshape_rule(const Value* x, const Value* y) const {
    const std::vector<size_t> vx = varying_axes(x), vy = varying_axes(y);
    if (vx.empty() && vy.empty()) return "";
    if (vx.size() != 1 || vy.size() != 1)
      return fmt::format("reshapes {} into {} with more than one run-time dimension", shape_text(x->shape), shape_text(y->shape));
    const size_t a = vx[0], b = vy[0];
    const int64_t outer_x = product(x->shape, 0, a), outer_y = product(y->shape, 0, b);
    const int64_t inner_x = product(x->shape, a + 1, x->shape.size()), inner_y = product(y->shape, b + 1, y->shape.size());
    const Extent ex = ext(x, a), ey = ext(y, b);
    if (outer_x != outer_y || ex.a * inner_x != ey.a * inner_y || ex.b * inner_x != ey.b * inner_y)
      return fmt::format("reshapes {} ({} at dimension {}) into {} ({} at dimension {}), which moves the entries of a run of {} "
                         "within the tensor of {}={}",
                         shape_text(x->shape), extent_text(ex, sym_), a, shape_text(y->shape), extent_text(ey, sym_), b, sym_, sym_,
                         ns_[0]);
    return "";
  }

  // Records n in plan_->rows when its output's one run-time dimension d comes before `cols`
  // (the product's columns, the LayerNorm's first normalised axis, the Split's axis; just
  // before it with `adjacent`) and after 1s only: its kernel has extent(d) times the
  // dimensions between d and cols rows.
  void rows_stop(const Node& n, size_t cols, bool adjacent) {
    const Value* y = n.out(0);
    if (!y) return;
    const std::vector<size_t> v = varying_axes(y);
    if (v.size() != 1 || v[0] >= cols || (adjacent && v[0] + 1 != cols) || product(y->shape, 0, v[0]) != 1) return;
    const int64_t inner = product(y->shape, v[0] + 1, cols);
    const Extent e = ext(y, v[0]);
    plan_->rows.push_back({&n, {e.a * inner, e.b * inner}});
  }

  std::string node_rule(const Node& n) {
    bool any = false;
    for (const Value* v : n.inputs) any = any || (v && varies(v));
    for (const Value* v : n.outputs) any = any || (v && varies(v));
    if (!any) return "";
    const std::string& op = n.op_type;
    const Value* x = n.in(0);
    const Value* y = n.out(0);
    const size_t r = x ? x->shape.size() : 0;
    if (elementwise_ops().count(op)) {
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (!shape_operand(n, k))
          if (std::string why = aligned(n.inputs[k], y); !why.empty()) return why;
      return "";
    }
    if (op == "MatMul" || op == "Gemm") {
      const Value* B = n.in(1);
      const bool ta = op == "Gemm" && int_attr(n, "transA", 0), tb = op == "Gemm" && int_attr(n, "transB", 0);
      const size_t ka = ta ? r - 2 : r - 1;
      const size_t rb = B->shape.size();
      const size_t kb = rb == 1 ? 0 : (tb ? rb - 1 : rb - 2);
      if (ext(x, ka).varies() || ext(B, kb).varies())
        return fmt::format("contracts over the run-time dimension ({} of '{}' by {} of '{}'); onnxc does not bound a product's depth at "
                           "run time yet",
                           extent_text(ext(x, ka), sym_), x->name, extent_text(ext(B, kb), sym_), B->name);
      // Batch dimensions broadcast as elementwise ops do.
      if (op == "MatMul" && r > 2 && y->shape.size() > 2) {
        for (const Value* v : {x, B}) {
          if (v->shape.size() <= 2) continue;
          for (size_t i = 0; i + 2 < v->shape.size(); ++i) {
            const Extent ev = ext(v, i), eyy = ext(y, y->shape.size() - v->shape.size() + i);
            if (ev.varies() ? !(ev == eyy) : (eyy.varies() && ev.b != 1))
              return fmt::format("operand '{}' has batch dimension {} = {} where the result's is {}", v->name, i, extent_text(ev, sym_),
                                 extent_text(eyy, sym_));
          }
        }
      }
      if (op == "Gemm" && n.in(2)) return aligned(n.in(2), y);
      if (op == "MatMul") rows_stop(n, y->shape.size() - 1, true);
      return "";
    }
    if (op == "ArgMax" || op == "ArgMin") return none_vary(x, {normal_axis(int_attr(n, "axis", 0), r)}, "searches");
    if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
      // Before opset 13 the input is flattened to 2-D at `axis`: normalised over axis..r-1.
      const int64_t axis = normal_axis(int_attr(n, "axis", n.opset < 13 ? 1 : -1), r);
      std::vector<int64_t> axes{axis};
      if (n.opset < 13)
        for (int64_t a = axis + 1; a < static_cast<int64_t>(r); ++a) axes.push_back(a);
      return none_vary(x, axes, "normalises");
    }
    if (op == "LayerNormalization" || op == "RMSNormalization") {
      std::vector<int64_t> axes;
      const int64_t axis = normal_axis(int_attr(n, "axis", -1), r);
      for (int64_t a = axis; a < static_cast<int64_t>(r); ++a) axes.push_back(a);
      if (std::string why = none_vary(x, axes, "normalises"); !why.empty()) return why;
      for (size_t k = 1; k < n.inputs.size(); ++k)
        if (std::string why = aligned(n.inputs[k], y); !why.empty()) return why;
      if (!n.out(1) && !n.out(2)) rows_stop(n, static_cast<size_t>(axis), false);
      return "";
    }
    if (op.rfind("Reduce", 0) == 0) return none_vary(x, axes_of(n, r, true), "reduces");
    if (op == "Transpose") return "";
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return reshape_rule(x, y);
    if (op == "Concat") {
      const int64_t axis = normal_axis(int_attr(n, "axis", 0), r);
      // Along the run-time dimension only the last operand may vary (the run's entries stay a
      // prefix); the other dimensions as the result's.
      for (size_t k = 0; ext(y, axis).varies() && k + 1 < n.inputs.size(); ++k)
        if (ext(n.inputs[k], axis).varies())
          return fmt::format("concatenates along the run-time dimension with operand '{}' ({}) before others", n.inputs[k]->name,
                             extent_text(ext(n.inputs[k], axis), sym_));
      for (const Value* v : n.inputs)
        for (size_t d = 0; d < r; ++d)
          if (static_cast<int64_t>(d) != axis && !(ext(v, d) == ext(y, d)))
            return fmt::format("operand '{}' has dimension {} = {} where the result's is {}", v->name, d, extent_text(ext(v, d), sym_),
                               extent_text(ext(y, d), sym_));
      return "";
    }
    if (op == "Split") {
      const int64_t axis = normal_axis(int_attr(n, "axis", 0), r);
      if (std::string why = none_vary(x, {axis}, "splits"); !why.empty()) return why;
      rows_stop(n, static_cast<size_t>(axis), false);
      return "";
    }
    if (op == "Slice") {
      const Value* starts = n.in(1);
      const Value* axes = n.in(3);
      const Value* steps = n.in(4);
      if (!starts || !starts->constant || (axes && !axes->constant) || (steps && !steps->constant)) return "has bounds computed at run time";
      for (int64_t k = 0; k < starts->constant->numel(); ++k) {
        const int64_t a = axes ? normal_axis(axes->constant->get_i64(k), r) : k;
        if (!ext(x, a).varies()) continue;
        const int64_t s = starts->constant->get_i64(k);
        for (size_t i = 1; i < gs_.size(); ++i) {
          const Value* p = peer(i, starts);
          if (!p || !p->constant || p->constant->get_i64(k) != s)
            return fmt::format("slices the run-time dimension {} from a start computed from {}", a, sym_);
        }
        if (s < 0 || (steps && steps->constant->get_i64(k) != 1))
          return fmt::format("slices the run-time dimension {} from its end or in steps other than 1", a);
      }
      return "";
    }
    if (op == "Gather") {
      const int64_t axis = normal_axis(int_attr(n, "axis", 0), r);
      const Value* idx = n.in(1);
      if (ext(x, axis).varies()) {
        if (!idx->constant) return "gathers along the run-time dimension with indices computed at run time";
        for (int64_t i = 0; i < idx->constant->numel(); ++i) {
          const int64_t j = idx->constant->get_i64(i);
          if (j < 0 || j >= ext(x, axis).at(1))
            return fmt::format("gathers entry {} along the run-time dimension, which a run of {}=1 does not have (or counts from the end)",
                               j, sym_);
        }
        return "";
      }
      if (varies(idx) && !idx->is_input && !idx->constant)
        return fmt::format("gathers with indices '{}' computed from the padded positions of a run", idx->name);
      return "";
    }
    if (op == "CumSum") {
      const Value* a = n.in(1);
      if (!a || !a->constant) return "has an axis computed at run time";
      if (ext(x, normal_axis(a->constant->get_i64(0), r)).varies() && int_attr(n, "reverse", 0))
        return "sums along the run-time dimension backwards";
      return "";
    }
    if (op == "Tile") {
      const Value* reps = n.in(1);
      if (!reps || !reps->constant) return "has repeats computed at run time";
      for (size_t d = 0; d < r; ++d)
        if (ext(x, d).varies() && reps->constant->get_i64(static_cast<int64_t>(d)) != 1) return "repeats the run-time dimension";
      return "";
    }
    if (op == "Attention") {
      const AttentionGeom& g = attention_geom(n);
      const Value* K = n.in(1);
      if (n.in(4) || n.in(5) || n.in(6)) return "has past keys or per-batch key lengths, which onnxc does not combine with a run-time size";
      const size_t t_axis = g.in3d ? 1 : 2;
      for (const Value* v : {n.in(0), n.in(1), n.in(2)}) {
        for (size_t d = 0; d < v->shape.size(); ++d)
          if (d != t_axis && ext(v, d).varies())
            return fmt::format("has heads or head sizes that depend on {} ('{}' dimension {} = {})", sym_, v->name, d,
                               extent_text(ext(v, d), sym_));
      }
      if (ext(K, t_axis).varies()) plan_->bounded.push_back({&n, ext(K, t_axis), ext(n.in(0), t_axis) == ext(K, t_axis)});
      return "";
    }
    return fmt::format("not known to keep the run-time dimension '{}' apart (an operand or result depends on it)", sym_);
  }

  const std::vector<const Graph*>& gs_;
  const std::vector<int64_t>& ns_;
  const std::string& sym_;
  DynamicDimsPlan* plan_;
  std::vector<std::map<const Value*, const Value*>> peers_;
  std::map<const Value*, std::vector<Extent>> ext_;
};

}  // namespace

std::string extent_text(const Extent& e, const std::string& symbol) {
  if (!e.varies()) return std::to_string(e.b);
  std::string s = e.a == 1 ? symbol : fmt::format("{}*{}", e.a, symbol);
  if (e.b > 0) s += fmt::format("+{}", e.b);
  if (e.b < 0) s += fmt::format("{}", e.b);
  return s;
}

std::string dynamic_dims_check(const std::vector<const Graph*>& gs, const std::vector<int64_t>& ns, const std::string& symbol,
                               DynamicDimsPlan* plan) {
  *plan = DynamicDimsPlan{};
  plan->symbol = symbol;
  plan->max = ns.empty() ? 0 : ns[0];
  return Checker(gs, ns, symbol, plan).run();
}

}  // namespace onnxc
