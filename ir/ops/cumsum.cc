// ir/ops/cumsum.cc — CumSum and CumProd: the running sum (product) of x along `axis` (input
// 1: a one-element int32/int64 tensor, may be negative; it must be a constant, read at
// compile time). exclusive=1 leaves out the element itself (the first sum is 0, the first
// product 1); reverse=1 runs from the end of the axis. Sums and products are sequential, in
// x's dtype (float32 in float32, as ONNX Runtime); integers wrap modulo 2^N. Types: float32,
// float64, int32, int64, uint32, uint64 (float16 models arrive as float32).
// Versions: CumSum 11, 14 (float16/bfloat16); CumProd 26. Same meaning up to opset 28.
// The C kernel is kernels/cumsum.cc.
#include <fmt/format.h>

#include "ir/ops/elementwise.h"
#include "ir/ops/index_ops.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class CumSum : public Op {
 public:
  explicit CumSum(bool prod) { g_.prod = prod; }

  void parse(AttrReader& a) override {
    int64_t ex = a.i("exclusive", 0), rev = a.i("reverse", 0);
    if (ex != 0 && ex != 1) a.node().invalid(fmt::format("attribute 'exclusive' must be 0 or 1, got {}", ex));
    if (rev != 0 && rev != 1) a.node().invalid(fmt::format("attribute 'reverse' must be 0 or 1, got {}", rev));
    g_.exclusive = ex == 1;
    g_.reverse = rev == 1;
  }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects 2 inputs (x, axis)");
    expect_dtype(n, 0, {DType::F32, DType::F64, DType::I32, DType::I64, DType::U32, DType::U64});
    const Shape& x = n.in(0)->shape;
    std::vector<int64_t> ax = static_ints(n, 1, "axis");
    if (ax.size() != 1) n.invalid(fmt::format("axis must have exactly one element, got {}", ax.size()));
    if (x.empty()) n.invalid("x must have rank >= 1");
    int64_t a = move_axis(n, ax[0], static_cast<int64_t>(x.size()), "axis");
    g_.outer = g_.inner = 1;
    for (size_t d = 0; d < x.size(); ++d)
      if (static_cast<int64_t>(d) < a) g_.outer *= x[d];
      else if (static_cast<int64_t>(d) > a) g_.inner *= x[d];
    g_.len = x[static_cast<size_t>(a)];
    set_output(n, 0, n.in(0)->dtype, x);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    visit_dtype(out[0].dtype, [&](auto v) {
      using T = decltype(v);
      const T* x = in[0]->data<T>();
      T* y = out[0].data<T>();
      const bool prod = g_.prod;
      auto add = [prod](T a, T b) -> T {
        if constexpr (std::is_integral_v<T>) {
          const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
          return static_cast<T>(prod ? ua * ub : ua + ub);
        } else {
          return prod ? a * b : a + b;
        }
      };
      for (int64_t o = 0; o < g_.outer; ++o)
        for (int64_t i = 0; i < g_.inner; ++i) {
          T acc = T(g_.prod ? 1 : 0);
          for (int64_t jj = 0; jj < g_.len; ++jj) {
            int64_t j = g_.reverse ? g_.len - 1 - jj : jj;
            int64_t p = (o * g_.len + j) * g_.inner + i;
            if (g_.exclusive) {
              y[p] = acc;
              acc = add(acc, x[p]);
            } else {
              acc = add(acc, x[p]);
              y[p] = acc;
            }
          }
        }
    });
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return g_.prod ? 26 : 11; }
  const CumSumGeom& geom() const { return g_; }

 private:
  CumSumGeom g_;
};

}  // namespace

const CumSumGeom& cumsum_geom(const Node& n) { return op_as<CumSum>(n).geom(); }

void register_cumsum(OpTable& t) {
  t["CumSum"] = [] { return std::unique_ptr<Op>(std::make_unique<CumSum>(false)); };
  t["CumProd"] = [] { return std::unique_ptr<Op>(std::make_unique<CumSum>(true)); };
}

}  // namespace onnxc
