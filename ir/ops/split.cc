// ir/ops/split.cc — Split: cuts the input along `axis` (default 0, may be negative) into
// one piece per output. Any dtype.
//
// Piece sizes come from, in order: the `split` attribute (opset < 13) or the static input 1
// (opset 13+), which must sum to the axis size; the `num_outputs` attribute (opset 18), which
// must equal the number of outputs and gives pieces of ceil(dim / num_outputs) with a smaller
// last piece; otherwise equal pieces, one per output (the axis size must divide evenly).
// Versions: 1 (split as attribute or static input 1), 2 (attribute only), 11 (negative
// axis), 13 (input), 18 (num_outputs); same meaning up to opset 28.
#include <fmt/format.h>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Split : public Op {
 public:
  void parse(AttrReader& a) override {
    axis_attr_ = a.i("axis", 0);
    if (a.opset() < 13) split_attr_ = a.opt_ints("split");
    else if (a.has("split")) a.node().invalid("attribute 'split' became input 1 in opset 13");
    if (a.opset() >= 18) num_outputs_ = a.opt_i("num_outputs");
  }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    size_t max_in = n.opset < 13 && n.opset >= 2 ? 1 : 2;
    if (n.inputs.empty() || n.inputs.size() > max_in)
      n.invalid(fmt::format("expects {} input(s), got {}", max_in == 1 ? "1" : "1 or 2", n.inputs.size()));
    const Value& x = need_input(n, 0, "input");
    int64_t r = static_cast<int64_t>(x.shape.size());
    if (r == 0) n.invalid("cannot split a scalar (rank 0)");
    g_.axis = move_axis(n, axis_attr_, r, "axis");
    int64_t dim = x.shape[static_cast<size_t>(g_.axis)];
    int64_t k = static_cast<int64_t>(n.outputs.size());
    if (k == 0) n.invalid("expects at least 1 output");
    std::optional<std::vector<int64_t>> split = split_attr_;
    if (n.in(1)) split = static_ints(n, 1, "split");
    if (split) {
      if (num_outputs_) n.invalid("input 'split' and attribute 'num_outputs' are both given");
      if (static_cast<int64_t>(split->size()) != k)
        n.invalid(fmt::format("split {} has {} entries for {} outputs", shape_str(*split), split->size(), k));
      int64_t sum = 0;
      for (int64_t s : *split) {
        if (s < 0 || s > dim) n.invalid(fmt::format("split {} has invalid entry {} (axis size {})", shape_str(*split), s, dim));
        sum += s;
      }
      if (sum != dim) n.invalid(fmt::format("split {} sums to {}, the axis size is {}", shape_str(*split), sum, dim));
      g_.sizes = *split;
    } else if (num_outputs_) {
      if (*num_outputs_ != k) n.invalid(fmt::format("num_outputs is {} but the node has {} outputs", *num_outputs_, k));
      int64_t chunk = (dim + k - 1) / k, last = dim - chunk * (k - 1);
      if (last < 0)
        n.invalid(fmt::format("axis size {} cannot be split into {} pieces of {} with a smaller last piece", dim, k, chunk));
      g_.sizes.assign(static_cast<size_t>(k), chunk);
      g_.sizes.back() = last;
    } else {
      if (dim % k != 0) n.invalid(fmt::format("axis size {} does not split evenly into {} outputs", dim, k));
      g_.sizes.assign(static_cast<size_t>(k), dim / k);
    }
    for (size_t j = 0; j < g_.sizes.size(); ++j) {
      Shape s = x.shape;
      s[static_cast<size_t>(g_.axis)] = g_.sizes[j];
      set_output(n, j, x.dtype, s);
    }
  }

  void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& is = in[0]->shape;
    int64_t off = 0;
    for (size_t j = 0; j < out.size(); ++j) {
      for (int64_t i = 0, total = n.out(j) ? out[j].numel() : 0; i < total; ++i) {
        Shape idx = unravel(i, out[j].shape);
        idx[static_cast<size_t>(g_.axis)] += off;
        copy_elem(out[j], i, *in[0], ravel(idx, is));
      }
      off += g_.sizes[j];
    }
  }


  FusionKind kind() const override { return FusionKind::Injective; }
  const SplitGeom& geom() const { return g_; }

 private:
  int64_t axis_attr_ = 0;
  std::optional<std::vector<int64_t>> split_attr_;
  std::optional<int64_t> num_outputs_;
  SplitGeom g_;  // set by infer
};

}  // namespace

const SplitGeom& split_geom(const Node& n) { return op_as<Split>(n).geom(); }

void register_split(OpTable& t) {
  t["Split"] = [] { return std::unique_ptr<Op>(std::make_unique<Split>()); };
}

}  // namespace onnxc
