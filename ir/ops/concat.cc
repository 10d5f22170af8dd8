// ir/ops/concat.cc — Concat: joins N inputs along `axis` (required; negative counts from
// the rank). Any dtype; all inputs share dtype, rank and every dimension except `axis`.
// Versions: 1 (axis optional, default 1), 4 (axis required), 11 (negative axis), 13
// (bfloat16); same meaning up to opset 28.

#include <fmt/format.h>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Concat : public Op {
 public:
  void parse(AttrReader& a) override {
    auto axis = a.opt_i("axis");
    if (!axis && a.opset() < 4) axis = 1;
    if (!axis) a.node().invalid("attribute 'axis' is required");
    axis_attr_ = *axis;
  }

  void infer(Node& n) override {
    if (n.inputs.empty()) n.invalid("expects at least 1 input");
    const Value& x0 = need_input(n, 0, "inputs");
    int64_t r = static_cast<int64_t>(x0.shape.size());
    if (r == 0) n.invalid("cannot concatenate scalars (rank 0)");
    axis_ = move_axis(n, axis_attr_, r, "axis");
    Shape out = x0.shape;
    out[static_cast<size_t>(axis_)] = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& x = need_input(n, k, "inputs");
      if (x.dtype != x0.dtype)
        n.invalid(fmt::format("input {} has dtype {}, input 0 has {}", k, dtype_name(x.dtype), dtype_name(x0.dtype)));
      bool ok = x.shape.size() == x0.shape.size();
      for (size_t d = 0; ok && d < x.shape.size(); ++d) ok = static_cast<int64_t>(d) == axis_ || x.shape[d] == x0.shape[d];
      if (!ok)
        n.invalid(fmt::format("input {} has shape {}, which does not match input 0 {} outside axis {}", k, shape_str(x.shape),
                              shape_str(x0.shape), axis_));
      out[static_cast<size_t>(axis_)] += x.shape[static_cast<size_t>(axis_)];
    }
    set_output(n, 0, x0.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& os = out[0].shape;
    int64_t off = 0;
    for (const Tensor* x : in) {
      for (int64_t i = 0, total = x->numel(); i < total; ++i) {
        Shape idx = unravel(i, x->shape);
        idx[static_cast<size_t>(axis_)] += off;
        copy_elem(out[0], ravel(idx, os), *x, i);
      }
      off += x->shape[static_cast<size_t>(axis_)];
    }
  }




  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t axis() const { return axis_; }

 private:
  int64_t axis_attr_ = 0, axis_ = 0;
};

}  // namespace

int64_t concat_axis(const Node& n) { return op_as<Concat>(n).axis(); }

void register_concat(OpTable& t) {
  t["Concat"] = [] { return std::unique_ptr<Op>(std::make_unique<Concat>()); };
}

}  // namespace onnxc
