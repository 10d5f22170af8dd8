// ir/ops/argmax.cc — ArgMax and ArgMin: the int64 index of the largest / smallest element
// along `axis` (default 0, may be negative), keepdims (default 1) keeping that dim as 1.
// The first index wins ties, the last with select_last_index=1 (opset 12). NaN elements
// are skipped unless every element is NaN (then index 0). Any numeric dtype.
// Versions: 1, 11 (negative axis), 12 (select_last_index), 13 (bfloat16); same meaning at
// every opset up to 28. What backends read: ArgGeom (outer, axis length, inner); the C
// kernel is kernels/argmax.cc in the C backend.
//
// Hardmax: 1 at the first largest element along the axis, 0 elsewhere (same shape and
// dtype, float32/float64; NaN is never the largest unless first). Versions 1 and 11: X is
// coerced to 2-D at `axis` (default 1), the row is every dim from `axis` on; 13: `axis`
// (default -1) is one dim.
#include <fmt/format.h>

#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"
#include "ir/ops/reduce.h"

namespace onnxc {
namespace {

class ArgMax : public Op {
 public:
  explicit ArgMax(bool max) { g_.max = max; }

  void parse(AttrReader& a) override {
    axis_ = a.i("axis", 0);
    keepdims_ = a.i("keepdims", 1);
    if (a.opset() >= 12) g_.last = a.i("select_last_index", 0) != 0;
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32,
                        DType::U64});
    const Shape& x = n.in(0)->shape;
    int64_t ax = axis_;
    if (!normalize_axis(ax, static_cast<int64_t>(x.size())))
      n.invalid(fmt::format("axis {} is out of range for input {}", axis_, shape_str(x)));
    if (x[static_cast<size_t>(ax)] == 0) n.invalid("cannot take the arg of an empty axis");
    g_.outer = g_.inner = 1;
    Shape y;
    for (size_t d = 0; d < x.size(); ++d) {
      int64_t a = static_cast<int64_t>(d);
      if (a < ax) g_.outer *= x[d];
      if (a > ax) g_.inner *= x[d];
      if (a != ax) y.push_back(x[d]);
      else if (keepdims_) y.push_back(1);
    }
    g_.len = x[static_cast<size_t>(ax)];
    set_output(n, 0, DType::I64, y);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    visit_dtype(in[0]->dtype, [&](auto v) {
      using T = decltype(v);
      const T* x = in[0]->data<T>();
      int64_t* y = out[0].data<int64_t>();
      for (int64_t o = 0; o < g_.outer; ++o)
        for (int64_t i = 0; i < g_.inner; ++i) {
          const T* p = x + o * g_.len * g_.inner + i;
          int64_t best = 0;
          T bv = p[0];
          for (int64_t j = 1; j < g_.len; ++j) {
            T c = p[j * g_.inner];
            bool better = g_.max ? c > bv : c < bv;
            if constexpr (std::is_floating_point_v<T>) better = better || (std::isnan(bv) && !std::isnan(c));
            if (better || (g_.last && c == bv)) bv = c, best = j;
          }
          y[o * g_.inner + i] = best;
        }
    });
  }

  FusionKind kind() const override { return FusionKind::Reduction; }
  const ArgGeom& geom() const { return g_; }

 private:
  int64_t axis_ = 0, keepdims_ = 1;
  ArgGeom g_;
};

class Hardmax : public Op {
 public:
  void parse(AttrReader& a) override { axis_ = a.i("axis", a.opset() < 13 ? 1 : -1); }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    const Shape& x = n.in(0)->shape;
    int64_t ax = axis_;
    if (!normalize_axis(ax, static_cast<int64_t>(x.size())))
      n.invalid(fmt::format("axis {} is out of range for input {}", axis_, shape_str(x)));
    g_.outer = g_.len = g_.inner = 1;
    for (size_t d = 0; d < x.size(); ++d) {
      int64_t a = static_cast<int64_t>(d);
      if (a < ax) g_.outer *= x[d];
      else if (a == ax || n.opset < 13) g_.len *= x[d];
      else g_.inner *= x[d];
    }
    set_output(n, 0, n.in(0)->dtype, x);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    for (int64_t o = 0; o < g_.outer; ++o)
      for (int64_t i = 0; i < g_.inner; ++i) {
        int64_t base = o * g_.len * g_.inner + i, best = 0;
        double bv = x.get(base);
        for (int64_t j = 1; j < g_.len; ++j)
          if (x.get(base + j * g_.inner) > bv) bv = x.get(base + j * g_.inner), best = j;
        for (int64_t j = 0; j < g_.len; ++j) out[0].set(base + j * g_.inner, j == best ? 1 : 0);
      }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  const ArgGeom& geom() const { return g_; }

 private:
  int64_t axis_ = -1;
  ArgGeom g_;
};

}  // namespace

const ArgGeom& arg_geom(const Node& n) { return op_as<ArgMax>(n).geom(); }
const ArgGeom& hardmax_geom(const Node& n) { return op_as<Hardmax>(n).geom(); }

void register_argmax(OpTable& t) {
  t["ArgMax"] = [] { return std::unique_ptr<Op>(std::make_unique<ArgMax>(true)); };
  t["ArgMin"] = [] { return std::unique_ptr<Op>(std::make_unique<ArgMax>(false)); };
  t["Hardmax"] = [] { return std::unique_ptr<Op>(std::make_unique<Hardmax>()); };
}

}  // namespace onnxc
