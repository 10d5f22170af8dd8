// ir/ops/lrn.cc — LRN (versions 1, 13: bfloat16; unchanged up to opset 28): local response normalization across channels,
//   Y[n,c,..] = X[n,c,..] / (bias + alpha / size * Σ_{q in window(c)} X[n,q,..]²) ^ beta
// with window(c) = [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
// X is [N, C, D1..Dk] (k >= 0), float32; size is required and must be >= 1.
#include <cmath>

#include "ir/ops/norm.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Lrn : public Op {
 public:
  void parse(AttrReader& a) override {
    a_.alpha = a.f("alpha", 1e-4);
    a_.beta = a.f("beta", 0.75);
    a_.bias = a.f("bias", 1.0);
    auto size = a.opt_i("size");
    if (!size) a.node().invalid("attribute 'size' is required");
    a_.size = *size;
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    expect_float(n, 0);
    if (a_.size < 1) n.invalid("size " + std::to_string(a_.size) + " must be >= 1");
    const Shape& xs = n.in(0)->shape;
    if (xs.size() < 2) n.invalid("X " + shape_str(xs) + " must have rank >= 2 (N, C, ...)");
    a_.C = xs[1];
    a_.S = 1;
    for (size_t d = 2; d < xs.size(); ++d) a_.S *= xs[d];
    set_output(n, 0, DType::F32, xs);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const float* x = in[0]->data<float>();
    float* y = out[0].data<float>();
    int64_t N = in[0]->numel() / std::max<int64_t>(1, a_.C * a_.S);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < a_.C; ++c)
        for (int64_t i = 0; i < a_.S; ++i) {
          double sq = 0;
          for (int64_t q = std::max<int64_t>(0, c - a_.before()); q <= std::min(a_.C - 1, c + a_.after()); ++q) {
            double v = x[(n * a_.C + q) * a_.S + i];
            sq += v * v;
          }
          int64_t k = (n * a_.C + c) * a_.S + i;
          y[k] = static_cast<float>(x[k] / std::pow(a_.bias + a_.alpha / static_cast<double>(a_.size) * sq, a_.beta));
        }
  }

  const LrnAttrs& attrs() const { return a_; }


 private:
  LrnAttrs a_;
};

}  // namespace

const LrnAttrs& lrn_attrs(const Node& n) { return op_as<Lrn>(n).attrs(); }

void register_lrn(OpTable& t) {
  t["LRN"] = [] { return std::unique_ptr<Op>(std::make_unique<Lrn>()); };
}

}  // namespace onnxc
