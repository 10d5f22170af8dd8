// ir/ops/topk.cc — TopK(X, K) → (Values, Indices): the k largest (largest=1, default) or
// smallest elements along `axis` (default -1, may be negative), best first, and their
// int64 indices. Equal values keep the lower index first (as ONNX specifies). k must be a
// constant (it fixes the output shape), 0 <= k <= the axis length. sorted=0 lets the order
// be anything; onnxc returns them sorted all the same. NaN compares false with everything:
// it never displaces a number. Any numeric dtype.
// Versions: 1 (k attribute), 10 (K input), 11 (largest, sorted, negative axis), 24
// (bfloat16 only). Same meaning up to opset 28. The C kernel is kernels/topk.cc.
#include <fmt/format.h>

#include "ir/ops/elementwise.h"
#include "ir/ops/index_ops.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class TopK : public Op {
 public:
  void parse(AttrReader& a) override {
    axis_ = a.i("axis", -1);
    if (a.opset() < 10) {
      std::optional<int64_t> k = a.opt_i("k");
      if (!k) a.node().invalid("attribute 'k' is required before opset 10");
      k_attr_ = *k;
    }
    if (a.opset() >= 11) {
      int64_t l = a.i("largest", 1), s = a.i("sorted", 1);
      if (l != 0 && l != 1) a.node().invalid(fmt::format("attribute 'largest' must be 0 or 1, got {}", l));
      if (s != 0 && s != 1) a.node().invalid(fmt::format("attribute 'sorted' must be 0 or 1, got {}", s));
      g_.largest = l == 1;
    }
  }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    size_t want = n.opset < 10 ? 1 : 2;
    if (n.inputs.size() != want) n.invalid(fmt::format("expects {} input(s), got {}", want, n.inputs.size()));
    if (n.outputs.size() != 2 || !n.out(0) || !n.out(1)) n.invalid("expects 2 outputs (Values, Indices)");
    expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32,
                        DType::U64});
    const Shape& x = n.in(0)->shape;
    if (x.empty()) n.invalid("X must have rank >= 1");
    int64_t a = move_axis(n, axis_, static_cast<int64_t>(x.size()), "axis");
    int64_t k = k_attr_;
    if (n.opset >= 10) {
      std::vector<int64_t> kv = static_ints(n, 1, "K");
      if (kv.size() != 1) n.invalid(fmt::format("K must have exactly one element, got {}", kv.size()));
      k = kv[0];
    }
    g_.outer = g_.inner = 1;
    for (size_t d = 0; d < x.size(); ++d)
      if (static_cast<int64_t>(d) < a) g_.outer *= x[d];
      else if (static_cast<int64_t>(d) > a) g_.inner *= x[d];
    g_.len = x[static_cast<size_t>(a)];
    if (k < 0 || k > g_.len) n.invalid(fmt::format("k = {} is not in [0, {}] (axis {} of X {})", k, g_.len, a, shape_str(x)));
    g_.k = k;
    Shape y = x;
    y[static_cast<size_t>(a)] = k;
    set_output(n, 0, n.in(0)->dtype, y);
    set_output(n, 1, DType::I64, y);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    visit_dtype(in[0]->dtype, [&](auto v) {
      using T = decltype(v);
      const T* x = in[0]->data<T>();
      T* yv = out[0].data<T>();
      int64_t* yi = out[1].data<int64_t>();
      auto better = [&](T a, T b) { return g_.largest ? a > b : a < b; };
      const int64_t K = g_.k, in_ = g_.inner;
      if (K == 0) return;
      // Insertion into the sorted k best, as the C kernel does.
      for (int64_t o = 0; o < g_.outer; ++o)
        for (int64_t i = 0; i < in_; ++i) {
          T* bv = yv + o * K * in_ + i;
          int64_t* bi = yi + o * K * in_ + i;
          int64_t cnt = 0;
          for (int64_t j = 0; j < g_.len; ++j) {
            T c = x[(o * g_.len + j) * in_ + i];
            if (cnt == K && !better(c, bv[(K - 1) * in_])) continue;
            int64_t p = cnt < K ? cnt++ : K - 1;
            for (; p > 0 && better(c, bv[(p - 1) * in_]); --p) {
              bv[p * in_] = bv[(p - 1) * in_];
              bi[p * in_] = bi[(p - 1) * in_];
            }
            bv[p * in_] = c;
            bi[p * in_] = j;
          }
        }
    });
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  const TopKGeom& geom() const { return g_; }

 private:
  int64_t axis_ = -1, k_attr_ = 0;
  TopKGeom g_;
};

}  // namespace

const TopKGeom& topk_geom(const Node& n) { return op_as<TopK>(n).geom(); }

void register_topk(OpTable& t) {
  t["TopK"] = [] { return std::unique_ptr<Op>(std::make_unique<TopK>()); };
}

}  // namespace onnxc
