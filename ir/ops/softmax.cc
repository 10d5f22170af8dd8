// ir/ops/softmax.cc — Softmax and LogSoftmax.
//
// Opsets < 13 coerce the input to 2-D at `axis` (default 1) and normalise each row of
// prod(dims[axis:]) elements; opsets >= 13 normalise along the single dim `axis`
// (default -1). Both are an [outer, L, inner] problem (inner = 1 for the old form).
// Numerics: the row maximum is subtracted before expf; LogSoftmax is (x - max) - log(sum).
// float32 only. Shape inference resolves the [outer, L, inner] problem (SoftmaxGeom,
// ir/ops/softmax.h); the C kernel is kernels/softmax.cc in the C backend.
// Versions: 1, 11 (negative axis), 13 (single-axis form); unchanged up to opset 28.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/ops/ops.h"
#include "ir/ops/softmax.h"

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
    g_.outer = g_.L = g_.inner = 1;
    for (size_t d = 0; d < x.size(); ++d) {
      int64_t a = static_cast<int64_t>(d);
      if (a < ax) g_.outer *= x[d];
      else if (a == ax || old_) g_.L *= x[d];
      else g_.inner *= x[d];
    }
    set_output(n, 0, DType::F32, x);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    for (int64_t o = 0; o < g_.outer; ++o)
      for (int64_t i = 0; i < g_.inner; ++i) {
        int64_t base = o * g_.L * g_.inner + i;
        double m = -INFINITY, s = 0;
        for (int64_t l = 0; l < g_.L; ++l) m = std::fmax(m, x.get(base + l * g_.inner));
        for (int64_t l = 0; l < g_.L; ++l) s += std::exp(x.get(base + l * g_.inner) - m);
        for (int64_t l = 0; l < g_.L; ++l) {
          double v = x.get(base + l * g_.inner) - m;
          out[0].set(base + l * g_.inner, log_ ? v - std::log(s) : std::exp(v) / s);
        }
      }
  }


  FusionKind kind() const override { return FusionKind::Opaque; }
  const SoftmaxGeom& geom() const { return g_; }

 private:
  bool log_;
  bool old_ = false;
  int64_t axis_ = -1;
  SoftmaxGeom g_;
};

std::unique_ptr<Op> make_softmax() { return std::make_unique<Softmax>(false); }
std::unique_ptr<Op> make_log_softmax() { return std::make_unique<Softmax>(true); }

}  // namespace

const SoftmaxGeom& softmax_geom(const Node& n) { return op_as<Softmax>(n).geom(); }

void register_softmax(OpTable& t) {
  t["Softmax"] = make_softmax;
  t["LogSoftmax"] = make_log_softmax;
}

}  // namespace onnxc
