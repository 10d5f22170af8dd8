// ir/ops/softmax.cc — Softmax and LogSoftmax.
//
// Opsets < 13 coerce the input to 2-D at `axis` (default 1) and normalise each row of
// prod(dims[axis:]) elements; opsets >= 13 normalise along the single dim `axis`
// (default -1). Both are an [outer, L, inner] problem (inner = 1 for the old form).
// Numerics: the row maximum is subtracted before expf; LogSoftmax is (x - max) - log(sum).
// C code: inner == 1 is three contiguous passes per row (max, exp-sum, scale), rows in
// parallel; inner > 1 keeps per-column max and sum for a block of up to 256 columns in
// small stack arrays and sweeps L with the contiguous column block innermost.
// Loops calling expf and scalar max reductions carry no `omp simd`: without fast-math
// neither gcc nor clang can vectorize them, and clang warns when asked to.
// float32 only.
#include <algorithm>
#include <cmath>

#include "codegen/c_emit.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Softmax : public Op {
 public:
  explicit Softmax(bool log) : log_(log) {}

  void parse(AttrReader& a) override {
    old_ = a.opset() < 13;
    axis_ = a.i("axis", old_ ? 1 : -1);
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    expect_float(n, 0);
    const Shape& x = n.in(0)->shape;
    int64_t ax = axis_;
    if (!normalize_axis(ax, static_cast<int64_t>(x.size())))
      n.invalid(fmt::format("axis {} is out of range for input {}", axis_, shape_str(x)));
    outer_ = L_ = inner_ = 1;
    for (size_t d = 0; d < x.size(); ++d) {
      int64_t a = static_cast<int64_t>(d);
      if (a < ax) outer_ *= x[d];
      else if (a == ax || old_) L_ *= x[d];
      else inner_ *= x[d];
    }
    set_output(n, 0, DType::F32, x);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    for (int64_t o = 0; o < outer_; ++o)
      for (int64_t i = 0; i < inner_; ++i) {
        int64_t base = o * L_ * inner_ + i;
        double m = -INFINITY, s = 0;
        for (int64_t l = 0; l < L_; ++l) m = std::fmax(m, x.get(base + l * inner_));
        for (int64_t l = 0; l < L_; ++l) s += std::exp(x.get(base + l * inner_) - m);
        for (int64_t l = 0; l < L_; ++l) {
          double v = x.get(base + l * inner_) - m;
          out[0].set(base + l * inner_, log_ ? v - std::log(s) : std::exp(v) / s);
        }
      }
  }

  void emit(CEmit& e) const override {
    int64_t total = outer_ * L_ * inner_;
    bool par = total >= (1 << 15);
    if (inner_ == 1) {
      if (par && outer_ > 1) e("ONNXC_PRAGMA(omp parallel for)");
      e("for (int64_t o = 0; o < {}; ++o) {{", outer_);
      e("const float* restrict x = {} + o * {};", e.in(0), L_);
      e("float* restrict y = {} + o * {};", e.out(0), L_);
      e("float m = -INFINITY;");
      e("for (int64_t i = 0; i < {}; ++i) m = fmaxf(m, x[i]);", L_);
      e("float s = 0.0f;");
      if (log_) {
        e("for (int64_t i = 0; i < {}; ++i) s += expf(x[i] - m);", L_);
        e("const float ls = logf(s);");
        e("ONNXC_PRAGMA(omp simd)");
        e("for (int64_t i = 0; i < {}; ++i) y[i] = (x[i] - m) - ls;", L_);
      } else {
        e("for (int64_t i = 0; i < {}; ++i) {{", L_);
        e("const float v = expf(x[i] - m);");
        e("y[i] = v;");
        e("s += v;");
        e("}}");
        e("const float r = 1.0f / s;");
        e("ONNXC_PRAGMA(omp simd)");
        e("for (int64_t i = 0; i < {}; ++i) y[i] *= r;", L_);
      }
      e("}}");
      return;
    }
    // [outer, L, inner]: column blocks of up to IB, per-column max and sum on the stack.
    const int64_t IB = std::min<int64_t>(inner_, 256);
    bool blocks = inner_ > IB;
    int nloops = (outer_ > 1) + blocks;
    if (par && nloops > 0) e("ONNXC_PRAGMA(omp parallel for{})", nloops > 1 ? " collapse(2)" : "");
    if (outer_ > 1) e("for (int64_t o = 0; o < {}; ++o) {{", outer_);
    if (blocks) e("for (int64_t i0 = 0; i0 < {}; i0 += {}) {{", inner_, IB);
    if (nloops == 0) e("{{");
    if (outer_ == 1) e("const int64_t o = 0;");
    if (!blocks) e("const int64_t i0 = 0;");
    std::string ni = std::to_string(IB);
    if (blocks && inner_ % IB != 0) {
      e("const int64_t ni = i0 + {0} < {1} ? {0} : {1} - i0;", IB, inner_);
      ni = "ni";
    }
    e("const float* restrict x = {} + o * {} + i0;", e.in(0), L_ * inner_);
    e("float* restrict y = {} + o * {} + i0;", e.out(0), L_ * inner_);
    e("float m[{}], s[{}];", IB, IB);
    e("for (int64_t i = 0; i < {}; ++i) {{", ni);
    e("m[i] = -INFINITY;");
    e("s[i] = 0.0f;");
    e("}}");
    e("for (int64_t l = 0; l < {}; ++l) {{", L_);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) m[i] = fmaxf(m[i], x[l * {} + i]);", ni, inner_);
    e("}}");
    e("for (int64_t l = 0; l < {}; ++l) {{", L_);
    e("for (int64_t i = 0; i < {}; ++i) {{", ni);
    e("const float v = expf(x[l * {} + i] - m[i]);", inner_);
    if (!log_) e("y[l * {} + i] = v;", inner_);
    e("s[i] += v;");
    e("}}");
    e("}}");
    if (log_) e("for (int64_t i = 0; i < {}; ++i) s[i] = logf(s[i]);", ni);
    else e("for (int64_t i = 0; i < {}; ++i) s[i] = 1.0f / s[i];", ni);
    e("for (int64_t l = 0; l < {}; ++l) {{", L_);
    e("ONNXC_PRAGMA(omp simd)");
    if (log_) e("for (int64_t i = 0; i < {0}; ++i) y[l * {1} + i] = (x[l * {1} + i] - m[i]) - s[i];", ni, inner_);
    else e("for (int64_t i = 0; i < {}; ++i) y[l * {} + i] *= s[i];", ni, inner_);
    e("}}");
    for (int k = 0; k < std::max(nloops, 1); ++k) e("}}");
  }

  FusionKind kind() const override { return FusionKind::Opaque; }

 private:
  bool log_;
  bool old_ = false;
  int64_t axis_ = -1;
  int64_t outer_ = 1, L_ = 1, inner_ = 1;
};

std::unique_ptr<Op> make_softmax() { return std::make_unique<Softmax>(false); }
std::unique_ptr<Op> make_log_softmax() { return std::make_unique<Softmax>(true); }

}  // namespace

void register_softmax(OpTable& t) {
  t["Softmax"] = make_softmax;
  t["LogSoftmax"] = make_log_softmax;
}

}  // namespace onnxc
