// ir/ops/lrn.cc — LRN (opsets 1–13): local response normalization across channels,
//   Y[n,c,..] = X[n,c,..] / (bias + alpha / size * Σ_{q in window(c)} X[n,q,..]²) ^ beta
// with window(c) = [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C).
// X is [N, C, D1..Dk] (k >= 0), float32; size is required and must be >= 1.
// Emitted C: per (image, channel), the output plane first accumulates the window's sum of
// squares (contiguous simd loops, one per window channel), then is turned into Y in place.
// Known gaps: powf per element (no special case for beta = 0.75).
#include <cmath>

#include "codegen/c_emit.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Lrn : public Op {
 public:
  void parse(AttrReader& a) override {
    alpha_ = a.f("alpha", 1e-4);
    beta_ = a.f("beta", 0.75);
    bias_ = a.f("bias", 1.0);
    auto size = a.opt_i("size");
    if (!size) a.node().invalid("attribute 'size' is required");
    size_ = *size;
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    expect_float(n, 0);
    if (size_ < 1) n.invalid("size " + std::to_string(size_) + " must be >= 1");
    const Shape& xs = n.in(0)->shape;
    if (xs.size() < 2) n.invalid("X " + shape_str(xs) + " must have rank >= 2 (N, C, ...)");
    C_ = xs[1];
    S_ = 1;
    for (size_t d = 2; d < xs.size(); ++d) S_ *= xs[d];
    set_output(n, 0, DType::F32, xs);
  }

  int64_t before() const { return (size_ - 1) / 2; }       // floor((size-1)/2)
  int64_t after() const { return (size_ - 1) - before(); }  // ceil((size-1)/2)

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const float* x = in[0]->data<float>();
    float* y = out[0].data<float>();
    int64_t N = in[0]->numel() / std::max<int64_t>(1, C_ * S_);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C_; ++c)
        for (int64_t i = 0; i < S_; ++i) {
          double sq = 0;
          for (int64_t q = std::max<int64_t>(0, c - before()); q <= std::min(C_ - 1, c + after()); ++q) {
            double v = x[(n * C_ + q) * S_ + i];
            sq += v * v;
          }
          int64_t k = (n * C_ + c) * S_ + i;
          y[k] = static_cast<float>(x[k] / std::pow(bias_ + alpha_ / static_cast<double>(size_) * sq, beta_));
        }
  }

  int64_t min_opset() const override { return 1; }  // unchanged since opset 1

  void emit(CEmit& e) const override {
    int64_t N = e.in_shape(0)[0];
    std::string X = e.in(0), Y = e.out(0);
    if (N * C_ * S_ >= (1 << 14) && N * C_ > 1) e("ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))");
    e("for (int64_t n = 0; n < {}; ++n) {{", N);
    e("for (int64_t c = 0; c < {}; ++c) {{", C_);
    e("const float* restrict xn = {} + n * {};", X, C_ * S_);
    e("float* restrict yp = {} + (n * {} + c) * {};", Y, C_, S_);
    e("const int64_t q0 = c < {0} ? 0 : c - {0};", before());
    e("const int64_t q1 = c + {0} < {1} ? c + {0} : {1};", after() + 1, C_);
    if (S_ >= 4) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) yp[i] = 0.0f;", S_);
    e("for (int64_t q = q0; q < q1; ++q) {{");
    e("const float* restrict xq = xn + q * {};", S_);
    if (S_ >= 4) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) yp[i] = ONNXC_FMA(xq[i], xq[i], yp[i]);", S_);
    e("}}");
    e("const float* restrict xc = xn + c * {};", S_);
    // (no simd hint: powf has no vector form without a vector math library)
    e("for (int64_t i = 0; i < {}; ++i) yp[i] = xc[i] / powf(ONNXC_FMA({}, yp[i], {}), {});", S_,
      c_float(alpha_ / static_cast<double>(size_)), c_float(bias_), c_float(beta_));
    e("}}");
    e("}}");
  }

 private:
  double alpha_ = 1e-4, beta_ = 0.75, bias_ = 1.0;
  int64_t size_ = 0, C_ = 0, S_ = 1;
};

}  // namespace

void register_lrn(OpTable& t) {
  t["LRN"] = [] { return std::unique_ptr<Op>(std::make_unique<Lrn>()); };
}

}  // namespace onnxc
