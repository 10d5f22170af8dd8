// ir/ops/onehot.cc — OneHot(indices, depth, values): an output of indices' rank + 1 with
// a new dim of size `depth` at `axis` (default -1, counted in the output's rank); element
// [.., d, ..] is values[1] (on) where indices[..] == d, else values[0] (off). The output
// has values' dtype. depth (one element, any numeric dtype, truncated to an integer >= 1)
// must be a constant: it fixes the output shape. Indices of any numeric dtype (floats
// truncated toward zero, saturating), negative ones count from the end (+depth);
// indices outside [-depth, depth-1] give a row of `off`. values: 2 elements, runtime or
// constant.
// Versions: 9, 11 (negative indices and axis; onnxc wraps negative indices at 9 too), 28
// (bfloat16 values only). Same meaning up to opset 28. The C kernel is kernels/onehot.cc.
#include <fmt/format.h>

#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/index_ops.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class OneHot : public Op {
 public:
  void parse(AttrReader& a) override { axis_ = a.i("axis", -1); }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    if (n.inputs.size() != 3) n.invalid(fmt::format("expects 3 inputs (indices, depth, values), got {}", n.inputs.size()));
    const Value& ix = need_input(n, 0, "indices");
    need_input(n, 2, "values");
    if (ix.dtype == DType::Bool) n.invalid("indices must be numeric, got bool");
    const Tensor& dt = static_tensor(n, 1, "depth");
    if (dt.numel() != 1) n.invalid(fmt::format("depth must have exactly one element, got shape {}", shape_str(dt.shape)));
    double d = dt.get(0);
    if (!(d >= 1) || d > 1e12) n.invalid(fmt::format("depth {} must be at least 1", d));
    g_.depth = static_cast<int64_t>(d);
    if (numel(n.in(2)->shape) != 2) n.invalid(fmt::format("values must have 2 elements (off, on), got shape {}", shape_str(n.in(2)->shape)));
    int64_t r = static_cast<int64_t>(ix.shape.size());
    int64_t a = move_axis(n, axis_, r + 1, "axis");
    g_.outer = g_.inner = 1;
    Shape os;
    for (int64_t k = 0; k < r; ++k) {
      if (k == a) os.push_back(g_.depth);
      os.push_back(ix.shape[static_cast<size_t>(k)]);
      (k < a ? g_.outer : g_.inner) *= ix.shape[static_cast<size_t>(k)];
    }
    if (a == r) os.push_back(g_.depth);
    set_output(n, 0, n.in(2)->dtype, os);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    std::vector<int64_t> idx(static_cast<size_t>(g_.outer * g_.inner));
    visit_dtype(in[0]->dtype, [&](auto v) {
      using T = decltype(v);
      const T* p = in[0]->data<T>();
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = convert_value<int64_t>(p[i], false);
    });
    for (int64_t o = 0; o < g_.outer; ++o)
      for (int64_t d = 0; d < g_.depth; ++d)
        for (int64_t i = 0; i < g_.inner; ++i) {
          int64_t k = idx[static_cast<size_t>(o * g_.inner + i)];
          if (k < 0) k += g_.depth;
          copy_elem(out[0], (o * g_.depth + d) * g_.inner + i, *in[2], k == d ? 1 : 0);
        }
  }

  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t min_opset() const override { return 9; }
  const OneHotGeom& geom() const { return g_; }

 private:
  int64_t axis_ = -1;
  OneHotGeom g_;
};

}  // namespace

const OneHotGeom& onehot_geom(const Node& n) { return op_as<OneHot>(n).geom(); }

void register_onehot(OpTable& t) {
  t["OneHot"] = [] { return std::unique_ptr<Op>(std::make_unique<OneHot>()); };
}

}  // namespace onnxc
