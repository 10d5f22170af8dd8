// ir/ops/global_pool.cc — GlobalAveragePool and GlobalMaxPool: N x C x D1 x ... x Dr →
// N x C x 1 x ... x 1 (rank >= 2; rank 2 is a copy).
//
// The mean is the sum divided by the size; max skips NaN elements (fmaxf). float32 only.
// The C kernel is kernels/global_pool.cc in the C backend.
// Versions: 1, 22 (bfloat16 only): the same meaning at every opset up to 28.
#include <cmath>

#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class GlobalPool : public Op {
 public:
  explicit GlobalPool(bool max) : max_(max) {}

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    expect_float(n, 0);
    const Shape& x = n.in(0)->shape;
    if (x.size() < 2) n.invalid("input " + shape_str(x) + " must have rank >= 2 (N, C, spatial...)");
    Shape y(x.size(), 1);
    y[0] = x[0];
    y[1] = x[1];
    set_output(n, 0, DType::F32, y);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    int64_t planes = x.shape[0] * x.shape[1], sz = planes ? x.numel() / planes : 0;
    for (int64_t c = 0; c < planes; ++c) {
      double acc = max_ ? -INFINITY : 0.0;
      for (int64_t i = 0; i < sz; ++i) {
        double v = x.get(c * sz + i);
        acc = max_ ? std::fmax(acc, v) : acc + v;
      }
      if (!max_) acc = sz ? acc / static_cast<double>(sz) : NAN;
      out[0].set(c, acc);
    }
  }




  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }

 private:
  bool max_;
};

std::unique_ptr<Op> make_max() { return std::make_unique<GlobalPool>(true); }
std::unique_ptr<Op> make_avg() { return std::make_unique<GlobalPool>(false); }

}  // namespace

void register_global_pool(OpTable& t) {
  t["GlobalMaxPool"] = make_max;
  t["GlobalAveragePool"] = make_avg;
}

}  // namespace onnxc
