// passes/batch_items.cc — see batch_items.h.
#include "passes/batch_items.h"

#include <fmt/format.h>

#include <map>
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

// Why node n (of the batch-N graph) mixes the items along the batch axis `a` of its first input
// although its shapes look per item; "" when it does not.
std::string axis_mixes(const Node& n, int64_t a) {
  const Value* x = n.in(0);
  const size_t r = x ? x->shape.size() : 0;
  const std::string& op = n.op_type;
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    // Before opset 13 the input is flattened to 2-D at `axis`: normalised over axis..r-1.
    const int64_t axis = normal_axis(int_attr(n, "axis", n.opset < 13 ? 1 : -1), r);
    if (axis == a || (n.opset < 13 && a > axis)) return "normalises along the batch axis";
  } else if (op == "Concat") {
    if (normal_axis(int_attr(n, "axis", 0), r) == a) return "concatenates along the batch axis";
  } else if (op == "Split") {
    if (normal_axis(int_attr(n, "axis", 0), r) == a) return "splits along the batch axis";
  } else if (op == "LayerNormalization" || op == "RMSNormalization") {
    if (normal_axis(int_attr(n, "axis", -1), r) <= a) return "normalises over the batch axis";
  } else if (op == "MeanVarianceNormalization") {
    auto it = n.attrs.find("axes");
    const std::vector<int64_t> axes = it == n.attrs.end() ? std::vector<int64_t>{0, 2, 3} : it->second.ints;
    for (int64_t ax : axes)
      if (normal_axis(ax, r) == a) return "normalises over the batch axis";
  } else if (op == "CumSum" || op == "CumProd") {
    const Tensor* t = const_input(n, 1);
    if (!t) return "has an axis computed at run time";
    if (normal_axis(t->get_i64(0), r) == a) return op == "CumSum" ? "sums along the batch axis" : "multiplies along the batch axis";
  } else if (op == "Slice") {
    // Inputs data, starts, ends, axes (default 0..), steps (default 1): the batch axis, when
    // sliced, must be taken whole in order.
    const Tensor* starts = const_input(n, 1);
    const Tensor* axes = const_input(n, 3);
    const Tensor* steps = const_input(n, 4);
    if (!starts || (n.in(3) && !axes) || (n.in(4) && !steps)) return "has bounds computed at run time";
    for (int64_t k = 0; k < starts->numel(); ++k) {
      const int64_t ax = axes ? normal_axis(axes->get_i64(k), r) : k;
      if (ax != a) continue;
      if (starts->get_i64(k) != 0 || (steps && steps->get_i64(k) != 1)) return "slices the batch axis";
    }
  } else if (op == "Tile") {
    const Tensor* reps = const_input(n, 1);
    if (!reps) return "has repeats computed at run time";
    if (reps->numel() > a && reps->get_i64(a) != 1) return "repeats the batch axis";
  } else if (op == "Resize" || op == "Upsample") {
    const Value* y = n.out(0);
    if (!x || !y || x->shape.size() <= static_cast<size_t>(a) || y->shape.size() <= static_cast<size_t>(a) || x->shape[a] != y->shape[a])
      return "resizes the batch axis";
  } else if (op == "Gather") {
    if (normal_axis(int_attr(n, "axis", 0), r) == a && !(x && x->constant)) return "gathers along the batch axis";
  }
  return "";
}

// Ops whose first axis is their own batch (N of NCHW, Attention's batch): the items must be
// there (a digit of it: each index of that axis is computed apart).
bool first_axis_ops(const std::string& op) {
  static const std::set<std::string> ops{"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
                                         "GlobalLpPool", "BatchNormalization", "InstanceNormalization", "LRN", "GroupNormalization",
                                         "DepthToSpace", "SpaceToDepth", "Resize", "Upsample", "LayoutTransform"};
  return ops.count(op) > 0;
}

// Ops that only reinterpret the row-major order: the items' position follows the linear index.
bool reshape_ops(const std::string& op) { return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze"; }

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
  // Where the items are in each value computed from the inputs: one axis `axis` of N times the
  // batch-1 size there (the others the same), whose index is o * N * s + item * s + i (i < s):
  // the item a digit of that axis with s below it. The inputs have it first with s 1; a value
  // may move it (a Transpose, PyTorch's [seq, batch, d] attention) as long as each node computes
  // every item from that item alone.
  struct Pos {
    int64_t axis = 0, s = 1;
  };
  std::map<const Value*, Pos> pos;
  auto batch_axis = [&](const Value* vn, const Value* v1) -> int64_t {  // -1: none or more than one
    if (vn->shape.size() != v1->shape.size()) return -1;
    int64_t a = -1;
    for (size_t d = 0; d < vn->shape.size(); ++d) {
      if (vn->shape[d] == v1->shape[d]) continue;
      if (a >= 0 || vn->shape[d] != N * v1->shape[d]) return -1;
      a = static_cast<int64_t>(d);
    }
    return a;
  };
  for (size_t k = 0; k < gN.inputs.size(); ++k) {
    if (batch_axis(gN.inputs[k], g1.inputs[k]) != 0)
      return fmt::format("input '{}' is {} at batch {} and {} at batch 1", gN.inputs[k]->name, shape_text(gN.inputs[k]->shape), N,
                         shape_text(g1.inputs[k]->shape));
    pos[gN.inputs[k]] = {0, g1.inputs[k]->shape[0]};
  }
  for (size_t k = 0; k < gN.nodes.size(); ++k) {
    const Node& n = *gN.nodes[k];
    const Node& m = *g1.nodes[k];
    if (n.op_type != m.op_type || n.name != m.name)
      return fmt::format("{} at batch {} is {} at batch 1: the graphs differ", n.where(), N, m.where());
    if (n.folded()) continue;
    if (!per_item_ops().count(n.op_type)) return fmt::format("{}: not known to act on each batch item apart", n.where());
    // The computed operands: where their items are, the same digit (aligned to the result's
    // rank) for all; a constant operand is broadcast over them.
    const Value* y = n.out(0);
    const size_t ry = y ? y->shape.size() : 0;
    const Value* first = nullptr;
    Pos in;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Value* v = n.in(i);
      if (!v || v->constant) continue;
      auto it = pos.find(v);
      if (it == pos.end())
        return fmt::format("{}: input '{}' is {} at batch {} and {} at batch 1, so no one axis holds the batch", n.where(), v->name,
                           shape_text(v->shape), N, shape_text(m.in(i) ? m.in(i)->shape : Shape{}));
      if (!first) {
        first = v, in = it->second;
        continue;
      }
      // Elementwise broadcasting, MatMul's leading axes: the same digit of the same aligned axis.
      const int64_t shift = static_cast<int64_t>(ry) - static_cast<int64_t>(v->shape.size()),
                    shift0 = static_cast<int64_t>(ry) - static_cast<int64_t>(first->shape.size());
      const bool elementwise = n.op_type != "MatMul" && n.op_type != "Gemm" && n.op_type != "Gather" && n.op_type != "Attention" &&
                               n.op_type != "Concat";
      if ((elementwise && (it->second.axis + shift != in.axis + shift0 || it->second.s != in.s)) ||
          (!elementwise && n.op_type != "Attention" && it->second.s != in.s))
        return fmt::format("{}: its operands '{}' and '{}' hold the items at different places", n.where(), first->name, v->name);
    }
    if (!first) continue;  // nothing computed from the inputs
    // Attention computes each (batch, head) apart: the items are its batch (the first axis) or
    // the outer digit of its heads (PyTorch's attention merges them: [1, seq, items*heads*d] or
    // [1, items*heads, seq, d], the same place in Q, K, V, past and present).
    bool in_heads = false;
    if (n.op_type == "Attention") {
      in_heads = in.axis != 0;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const Value* v = n.in(i);
        if (!v || v->constant) continue;
        const Pos& q = pos.at(v);
        const size_t r = v->shape.size();
        const bool heads_axis = (i <= 2 || i == 4 || i == 5) && ((r == 3 && q.axis == 2) || (r == 4 && q.axis == 1)) &&
                                m.in(i) && q.s == m.in(i)->shape[static_cast<size_t>(q.axis)];
        if (in_heads ? !heads_axis : (q.axis != 0 || q.s != in.s))
          return fmt::format("{}: '{}' holds the items along dimension {}, neither as its batch nor as the outer digit of its heads, "
                             "as '{}' does", n.where(), v->name, q.axis, first->name);
      }
    }
    if (first_axis_ops(n.op_type) && in.axis != 0)
      return fmt::format("{}: '{}' holds the items along dimension {}, not its batch (the first)", n.where(), first->name, in.axis);
    // The op's own axes against where the items are (in its first input's dimensions).
    const int64_t at = in.axis + (n.in(0) ? static_cast<int64_t>(n.in(0)->shape.size()) - static_cast<int64_t>(first->shape.size()) : 0);
    if (std::string why = axis_mixes(n, at); !why.empty()) return n.where() + ": " + why;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value* vn = n.out(i);
      const Value* v1 = m.out(i);
      if (!vn || !v1) continue;
      const int64_t a = batch_axis(vn, v1);
      if (a < 0)
        return fmt::format("{}: output '{}' is {} at batch {} and {} at batch 1, so no one axis holds the batch", n.where(), vn->name,
                           shape_text(vn->shape), N, shape_text(v1->shape));
      Pos p{a, in.s};
      if (in_heads) {
        p.s = v1->shape[static_cast<size_t>(a)];  // the outer digit of the heads, as in the inputs
      } else if (reshape_ops(n.op_type)) {
        // The row-major order is kept: the items' digit stays where the elements below it are
        // as many (T), now in dimension a with T / (what follows a) below it there.
        int64_t T = in.s, after = 1;
        for (size_t d = static_cast<size_t>(in.axis) + 1; d < first->shape.size(); ++d) T *= first->shape[d];
        for (size_t d = static_cast<size_t>(a) + 1; d < v1->shape.size(); ++d) after *= v1->shape[d];
        if (after == 0 || T % after != 0 || v1->shape[a] % (T / after) != 0)
          return fmt::format("{}: it reshapes {} into {}, which splits the batch's digit across dimensions", n.where(),
                             shape_text(first->shape), shape_text(vn->shape));
        p.s = T / after;
      }
      pos[vn] = p;
    }
  }
  for (size_t k = 0; k < gN.outputs.size(); ++k) {
    const Value* vn = gN.outputs[k];
    const Value* v1 = g1.outputs[k];
    if (!vn->producer && !vn->is_input) return fmt::format("output '{}' is a constant, the same for the whole batch", vn->name);
    auto it = pos.find(vn);
    if (it == pos.end() || it->second.axis != 0 || it->second.s != v1->shape[0])
      return fmt::format("output '{}' is {} at batch {} and {} at batch 1, not one row per item{}", vn->name, shape_text(vn->shape), N,
                         shape_text(v1->shape), it != pos.end() && it->second.axis == 0 ? " (the items interleaved)" : "");
  }
  return "";
}

}  // namespace onnxc
