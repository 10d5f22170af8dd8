// ir/ops/global_pool.cc — GlobalAveragePool and GlobalMaxPool: N x C x D1 x ... x Dr →
// N x C x 1 x ... x 1 (rank >= 2; rank 2 is a copy).
//
// The C code runs one contiguous reduction per N*C plane (SIMD for the sum), planes in
// parallel when the tensor is large. The mean is the float sum divided by the size; max
// uses fmaxf (a NaN element is skipped). float32 only. NCHWc (rank >= 3): per (image,
// channel block) a lane accumulator, positions outer and lanes innermost (emit_nchwc).
#include <cmath>

#include "codegen/c_emit.h"
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

  bool supports_nchwc(const Node& n, int64_t b) const override { return b >= 1 && n.in(0)->shape.size() >= 3 && numel(n.in(0)->shape) > 0; }

  // NCHW[b]c: per (image, channel block) one lane accumulator, positions outer, lanes inner.
  void emit_nchwc(CEmit& e) const {
    const Shape& xs = e.in_shape(0);
    const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
    ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b), "NCHWc global pool on " + e.node.in(0)->type_str());
    int64_t planes = xs[0] * CB, sz = 1;
    for (size_t i = 2; i < xs.size(); ++i) sz *= xs[i];
    e("/* NCHW{}c global {} pooling: per (image, channel block), positions outer, lanes innermost. */", b, max_ ? "max" : "average");
    if (planes > 1 && planes * sz * b >= (1 << 16)) e("ONNXC_PRAGMA(omp parallel for)");
    e("for (int64_t c = 0; c < {}; ++c) {{", planes);
    e("const float* restrict x = {} + c * {};", e.in(0), sz * b);
    e("float* restrict y = {} + c * {};", e.out(0), b);
    e("float a[{}];", b);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) a[l] = {};", b, max_ ? "-INFINITY" : "0.0f");
    e("for (int64_t p = 0; p < {}; ++p) {{", sz);
    e("ONNXC_PRAGMA(omp simd)");
    if (max_) e("for (int64_t l = 0; l < {}; ++l) a[l] = fmaxf(a[l], x[p * {} + l]);", b, b);
    else e("for (int64_t l = 0; l < {}; ++l) a[l] += x[p * {} + l];", b, b);
    e("}}");
    e("ONNXC_PRAGMA(omp simd)");
    if (max_) e("for (int64_t l = 0; l < {}; ++l) y[l] = a[l];", b);
    else e("for (int64_t l = 0; l < {}; ++l) y[l] = a[l] / {};", b, c_float(static_cast<double>(sz)));
    e("}}");
  }

  void emit(CEmit& e) const override {
    if (e.out_layout(0).is_nchwc()) return emit_nchwc(e);
    const Shape& xs = e.in_shape(0);
    int64_t planes = xs[0] * xs[1], sz = 1;
    for (size_t i = 2; i < xs.size(); ++i) sz *= xs[i];
    if (planes > 1 && planes * sz >= (1 << 16)) e("ONNXC_PRAGMA(omp parallel for)");
    e("for (int64_t c = 0; c < {}; ++c) {{", planes);
    e("const float* restrict x = {} + c * {};", e.in(0), sz);
    if (max_) {
      e("float m = -INFINITY;");
      e("for (int64_t i = 0; i < {}; ++i) m = fmaxf(m, x[i]);", sz);
      e("{}[c] = m;", e.out(0));
    } else {
      e("float s = 0.0f;");
      e("ONNXC_PRAGMA(omp simd reduction(+:s))");
      e("for (int64_t i = 0; i < {}; ++i) s += x[i];", sz);
      if (sz == 0) e("{}[c] = NAN;", e.out(0));
      else e("{}[c] = s / {};", e.out(0), c_float(static_cast<double>(sz)));
    }
    e("}}");
  }

  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }
  int64_t min_opset() const override { return 1; }  // unchanged since opset 1

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
