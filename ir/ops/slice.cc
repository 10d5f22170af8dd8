// ir/ops/slice.cc — Slice: a strided window of the input. Any dtype.
//
// Opsets 1-9 take starts/ends/axes as attributes, 10+ as inputs 1-4 (starts, ends, optional
// axes and steps), which must be compile-time constants. Semantics follow numpy/ONNX: axes
// may be negative and must be distinct; a negative start/end has the axis size added; then
// for step > 0 both are clamped to [0, dim], for step < 0 start to [0, dim-1] and end to
// [-1, dim-1], so INT64_MAX / INT64_MIN mean "to the end". step 0 is invalid.
// Versions: 1, 10 (inputs, steps), 11 (negative values), 13 (bfloat16); same up to opset 28.
#include <fmt/format.h>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Slice : public Op {
 public:
  void parse(AttrReader& a) override {
    if (a.opset() >= 10) return;
    auto s = a.opt_ints("starts"), en = a.opt_ints("ends");
    if (!s || !en) a.node().invalid("attributes 'starts' and 'ends' are required");
    starts_attr_ = *s;
    ends_attr_ = *en;
    axes_attr_ = a.opt_ints("axes");
  }

  bool static_input(size_t i) const override { return i >= 1 && i <= 4; }

  void infer(Node& n) override {
    const Value& x = need_input(n, 0, "data");
    int64_t r = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> starts, ends, steps;
    std::optional<std::vector<int64_t>> axes;
    if (n.opset < 10) {
      if (n.inputs.size() != 1) n.invalid("expects exactly 1 input before opset 10, got " + std::to_string(n.inputs.size()));
      starts = starts_attr_;
      ends = ends_attr_;
      axes = axes_attr_;
    } else {
      if (n.inputs.size() < 3 || n.inputs.size() > 5) n.invalid("expects 3 to 5 inputs, got " + std::to_string(n.inputs.size()));
      need_input(n, 1, "starts");
      need_input(n, 2, "ends");
      starts = static_ints(n, 1, "starts");
      ends = static_ints(n, 2, "ends");
      if (n.in(3)) axes = static_ints(n, 3, "axes");
      if (n.in(4)) steps = static_ints(n, 4, "steps");
    }
    size_t k = starts.size();
    if (ends.size() != k) n.invalid(fmt::format("starts {} and ends {} differ in length", shape_str(starts), shape_str(ends)));
    if (axes && axes->size() != k) n.invalid(fmt::format("axes {} and starts {} differ in length", shape_str(*axes), shape_str(starts)));
    if (n.in(4) && steps.size() != k) n.invalid(fmt::format("steps {} and starts {} differ in length", shape_str(steps), shape_str(starts)));
    if (!axes) {
      if (static_cast<int64_t>(k) > r) n.invalid(fmt::format("{} starts for an input of rank {}", k, r));
      axes = std::vector<int64_t>(k);
      for (size_t i = 0; i < k; ++i) (*axes)[i] = static_cast<int64_t>(i);
    }
    if (steps.empty()) steps.assign(k, 1);
    g_.start.assign(static_cast<size_t>(r), 0);
    g_.step.assign(static_cast<size_t>(r), 1);
    Shape out = x.shape;
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (size_t i = 0; i < k; ++i) {
      size_t a = static_cast<size_t>(move_axis(n, (*axes)[i], r, "axes entry"));
      if (seen[a]) n.invalid(fmt::format("axes {} repeats axis {}", shape_str(*axes), a));
      seen[a] = true;
      int64_t dim = x.shape[a], st = steps[i], b = starts[i], en = ends[i];
      if (st == 0) n.invalid(fmt::format("steps {} has a 0 (axis {})", shape_str(steps), a));
      if (b < 0) b += dim;  // no overflow: b is negative, dim >= 0
      if (en < 0) en += dim;
      int64_t len;
      if (st > 0) {
        b = std::min(std::max(b, int64_t{0}), dim);
        en = std::min(std::max(en, int64_t{0}), dim);
        len = en > b ? static_cast<int64_t>(static_cast<uint64_t>(en - b - 1) / static_cast<uint64_t>(st)) + 1 : 0;
      } else {
        b = std::min(std::max(b, int64_t{0}), dim - 1);
        en = std::min(std::max(en, int64_t{-1}), dim - 1);
        uint64_t mag = uint64_t{0} - static_cast<uint64_t>(st);  // |st| without overflow at INT64_MIN
        len = b > en ? static_cast<int64_t>(static_cast<uint64_t>(b - en - 1) / mag) + 1 : 0;
      }
      out[a] = len;
      g_.start[a] = len > 0 ? b : 0;
      g_.step[a] = len > 1 ? st : 1;  // |step| < dim when it matters, so strides cannot overflow
    }
    set_output(n, 0, x.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& is = in[0]->shape;
    const Shape& os = out[0].shape;
    for (int64_t i = 0, total = out[0].numel(); i < total; ++i) {
      Shape idx = unravel(i, os);
      for (size_t d = 0; d < idx.size(); ++d) idx[d] = g_.start[d] + idx[d] * g_.step[d];
      copy_elem(out[0], i, *in[0], ravel(idx, is));
    }
  }


  FusionKind kind() const override { return FusionKind::Injective; }
  const SliceGeom& geom() const { return g_; }

 private:
  std::vector<int64_t> starts_attr_, ends_attr_;
  std::optional<std::vector<int64_t>> axes_attr_;
  SliceGeom g_;  // set by infer
};

}  // namespace

const SliceGeom& slice_geom(const Node& n) { return op_as<Slice>(n).geom(); }

void register_slice(OpTable& t) {
  t["Slice"] = [] { return std::unique_ptr<Op>(std::make_unique<Slice>()); };
}

}  // namespace onnxc
