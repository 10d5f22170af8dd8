// passes/batch_items.cc — see batch_items.h.
#include "passes/batch_items.h"

#include <fmt/format.h>

#include <set>

#include "ir/cost.h"

namespace onnxc {
namespace {

// Ops that compute each item of their first axis from that item alone, given operands whose
// first axis is the batch (the shape rule checks that) or constants broadcast over it. Those
// with an axis are checked further in axis_mixes().
const std::set<std::string>& per_item_ops() {
  static const std::set<std::string> ops{
      // convolution, pooling, normalisation over channels and positions
      "Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
      "BatchNormalization", "InstanceNormalization", "LRN", "GroupNormalization", "LayerNormalization", "RMSNormalization", "MeanVarianceNormalization",
      // products: the batch is A's rows or a leading batch axis; attention per batch and head
      // (the batch first in Q, K, V, past, mask and every output, or a constant mask)
      "Gemm", "MatMul", "Attention",
      // elementwise
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Gelu", "Swish", "SwiGLU",
      "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus", "Softsign", "Mish", "Clip", "Exp", "Log", "Sqrt", "Reciprocal",
      "Neg", "Abs", "Erf", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Identity", "Dropout", "Cast", "Where", "Equal",
      "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf", "ThresholdedRelu",
      // along one axis (not the first: axis_mixes)
      "Softmax", "LogSoftmax", "Hardmax", "Concat", "Split", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "CumSum", "CumProd",
      // movement whose first axis stays the batch (the shape rule), or checked in axis_mixes
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Pad", "Tile", "Expand", "Resize", "Upsample",
      "DepthToSpace", "SpaceToDepth", "Gather",
      // onnxc's own (inserted by passes)
      "LayoutTransform"};
  return ops;
}

int64_t int_attr(const Node& n, const std::string& name, int64_t def) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.i;
}

// The axis `a` of a rank-r operand as 0..r-1 (ONNX allows -r..r-1).
int64_t normal_axis(int64_t a, size_t r) { return a < 0 ? a + static_cast<int64_t>(r) : a; }

const Tensor* const_input(const Node& n, size_t k) {
  const Value* v = n.in(k);
  return v && v->constant ? v->constant.get() : nullptr;
}

// Why node n (of the batch-N graph) mixes the items along the first axis although its shapes
// look per item; "" when it does not.
std::string axis_mixes(const Node& n) {
  const Value* x = n.in(0);
  const size_t r = x ? x->shape.size() : 0;
  const std::string& op = n.op_type;
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    if (normal_axis(int_attr(n, "axis", n.opset < 13 ? 1 : -1), r) == 0) return "normalises along the batch axis";
  } else if (op == "Concat") {
    if (normal_axis(int_attr(n, "axis", 0), r) == 0) return "concatenates along the batch axis";
  } else if (op == "Split") {
    if (normal_axis(int_attr(n, "axis", 0), r) == 0) return "splits along the batch axis";
  } else if (op == "LayerNormalization" || op == "RMSNormalization") {
    if (normal_axis(int_attr(n, "axis", -1), r) == 0) return "normalises over the batch axis";
  } else if (op == "MeanVarianceNormalization") {
    auto it = n.attrs.find("axes");
    const std::vector<int64_t> axes = it == n.attrs.end() ? std::vector<int64_t>{0, 2, 3} : it->second.ints;
    for (int64_t a : axes)
      if (normal_axis(a, r) == 0) return "normalises over the batch axis";
  } else if (op == "CumSum" || op == "CumProd") {
    const Tensor* t = const_input(n, 1);
    if (!t) return "has an axis computed at run time";
    if (normal_axis(t->get_i64(0), r) == 0) return op == "CumSum" ? "sums along the batch axis" : "multiplies along the batch axis";
  } else if (op == "Slice") {
    // Inputs data, starts, ends, axes (default 0..), steps (default 1): the batch axis, when
    // sliced, must be taken whole in order.
    const Tensor* starts = const_input(n, 1);
    const Tensor* axes = const_input(n, 3);
    const Tensor* steps = const_input(n, 4);
    if (!starts || (n.in(3) && !axes) || (n.in(4) && !steps)) return "has bounds computed at run time";
    for (int64_t k = 0; k < starts->numel(); ++k) {
      const int64_t a = axes ? normal_axis(axes->get_i64(k), r) : k;
      if (a != 0) continue;
      if (starts->get_i64(k) != 0 || (steps && steps->get_i64(k) != 1)) return "slices the batch axis";
    }
  } else if (op == "Tile") {
    const Tensor* reps = const_input(n, 1);
    if (!reps) return "has repeats computed at run time";
    if (reps->numel() > 0 && reps->get_i64(0) != 1) return "repeats the batch axis";
  } else if (op == "Resize" || op == "Upsample") {
    const Value* y = n.out(0);
    if (!x || !y || x->shape.empty() || y->shape.empty() || x->shape[0] != y->shape[0]) return "resizes the batch axis";
  } else if (op == "Expand") {
    const Value* y = n.out(0);
    if (!x || !y || x->shape.size() != y->shape.size() || x->shape.empty() || x->shape[0] != y->shape[0])
      return "broadcasts along the batch axis";
  } else if (op == "Gather") {
    if (normal_axis(int_attr(n, "axis", 0), r) == 0 && !(x && x->constant)) return "gathers along the batch axis";
  }
  return "";
}

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

}  // namespace

int64_t batch_items_of(const Graph& g) {
  int64_t n = 0;
  for (const Value* v : g.inputs) {
    if (v->shape.empty() || v->shape[0] < 2) return 0;
    if (n && v->shape[0] != n) return 0;
    n = v->shape[0];
  }
  return n;
}

double weight_bytes_used_once(const Graph& g) {
  double total = 0;
  for (const auto& n : g.nodes) {
    if (n->folded()) continue;
    double elements = 0, bytes = 0;
    for (const Value* v : n->inputs)
      if (v && v->constant) {
        elements += static_cast<double>(v->constant->numel());
        bytes += static_cast<double>(v->nbytes());
      }
    if (elements > 0 && node_cost(*n).flops <= 4 * elements) total += bytes;
  }
  return total;
}

std::string batch_items_check(const Graph& gN, const Graph& g1, int64_t N) {
  if (gN.inputs.size() != g1.inputs.size() || gN.outputs.size() != g1.outputs.size() || gN.nodes.size() != g1.nodes.size())
    return fmt::format("at batch 1 the model has {} nodes, {} inputs, {} outputs, at batch {} {}, {}, {}", g1.nodes.size(),
                       g1.inputs.size(), g1.outputs.size(), N, gN.nodes.size(), gN.inputs.size(), gN.outputs.size());
  // A value computed from the inputs: N times the batch-1 first dimension, the same others.
  auto per_item = [&](const Value* vn, const Value* v1) {
    if (vn->shape.empty() || vn->shape.size() != v1->shape.size()) return false;
    if (vn->shape[0] != N * v1->shape[0]) return false;
    for (size_t d = 1; d < vn->shape.size(); ++d)
      if (vn->shape[d] != v1->shape[d]) return false;
    return true;
  };
  for (size_t k = 0; k < gN.outputs.size(); ++k) {
    const Value* vn = gN.outputs[k];
    const Value* v1 = g1.outputs[k];
    if (!vn->producer && !vn->is_input) return fmt::format("output '{}' is a constant, the same for the whole batch", vn->name);
    if (!per_item(vn, v1))
      return fmt::format("output '{}' is {} at batch {} and {} at batch 1, not one row per item", vn->name, shape_text(vn->shape), N,
                         shape_text(v1->shape));
  }
  for (size_t k = 0; k < gN.nodes.size(); ++k) {
    const Node& n = *gN.nodes[k];
    const Node& m = *g1.nodes[k];
    if (n.op_type != m.op_type || n.name != m.name)
      return fmt::format("{} at batch {} is {} at batch 1: the graphs differ", n.where(), N, m.where());
    if (n.folded()) continue;
    if (!per_item_ops().count(n.op_type)) return fmt::format("{}: not known to act on each batch item apart", n.where());
    // Every computed operand and result must have the batch axis first (a computed operand
    // without it mixes the items; a constant one is broadcast over them).
    auto operands = [&](const char* kind, const std::vector<Value*>& vns, auto&& of_m) -> std::string {
      for (size_t i = 0; i < vns.size(); ++i) {
        const Value* vn = vns[i];
        const Value* v1 = of_m(i);
        if (!vn || !v1 || vn->constant || per_item(vn, v1)) continue;
        return fmt::format("{}: {} '{}' is {} at batch {} and {} at batch 1, so its first axis is not the batch", n.where(), kind,
                           vn->name, shape_text(vn->shape), N, shape_text(v1->shape));
      }
      return "";
    };
    if (std::string why = operands("output", n.outputs, [&](size_t i) { return m.out(i); }); !why.empty()) return why;
    if (std::string why = operands("input", n.inputs, [&](size_t i) { return m.in(i); }); !why.empty()) return why;
    const std::string why = axis_mixes(n);
    if (!why.empty()) return n.where() + ": " + why;
  }
  return "";
}

}  // namespace onnxc
