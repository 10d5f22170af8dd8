// ir/ops/batchnorm.cc — BatchNormalization (versions 1, 6, 7, 9, 14, 15; unchanged up to opset 28),
// inference form only:
//   Y = (X - mean) / sqrt(var + epsilon) * scale + B
// X is [N, C, D1..Dk] (k >= 0), float32. With spatial=1 (the default, and the only form
// from opset 9 on) scale/B/mean/var are [C]; with spatial=0 (opsets < 9) they have the
// shape X.shape[1:] (one set per activation).
// Unsupported: training_mode=1 and any of the training outputs (running mean/var, saved
// mean/var) being present, and is_test=0 (opsets < 7: training mode, the default there).
// momentum is accepted and has no effect in inference.
#include <cmath>

#include "ir/ops/norm.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class BatchNorm : public Op {
 public:
  void parse(AttrReader& a) override {
    a_.eps = a.f("epsilon", 1e-5);
    a.ignore("momentum");
    if (a.opset() < 6) a.ignore("consumed_inputs");
    if (a.opset() < 7) is_test_ = a.i("is_test", 0);
    if (a.opset() < 9) a_.spatial = a.i("spatial", 1);
    if (a.opset() >= 14) training_ = a.i("training_mode", 0);
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 5) n.invalid("expects 5 inputs (X, scale, B, mean, var), got " + std::to_string(n.inputs.size()));
    for (size_t i = 0; i < 5; ++i) expect_float(n, i);
    if (training_ != 0) n.unsupported("training_mode=" + std::to_string(training_) + " is not supported (inference only)");
    if (is_test_ == 0) n.unsupported("is_test=0 (training mode, opsets < 7) is not supported (inference only)");
    for (size_t j = 1; j < n.outputs.size(); ++j)
      if (n.out(j))
        n.unsupported("training output " + std::to_string(j) + " ('" + n.out(j)->name + "') is not supported (inference only)");
    const Shape& xs = n.in(0)->shape;
    if (xs.size() < 2) n.invalid("X " + shape_str(xs) + " must have rank >= 2 (N, C, ...)");
    Shape ps = a_.spatial ? Shape{xs[1]} : Shape(xs.begin() + 1, xs.end());
    static const char* names[] = {"", "scale", "B", "mean", "var"};
    for (size_t i = 1; i < 5; ++i)
      if (n.in(i)->shape != ps)
        n.invalid(std::string(names[i]) + " " + shape_str(n.in(i)->shape) + " must have shape " + shape_str(ps) +
                  (a_.spatial ? "" : " (spatial=0)"));
    a_.C = xs[1];
    a_.S = 1;
    for (size_t d = 2; d < xs.size(); ++d) a_.S *= xs[d];
    set_output(n, 0, DType::F32, xs);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const float* x = in[0]->data<float>();
    float* y = out[0].data<float>();
    int64_t total = in[0]->numel();
    for (int64_t i = 0; i < total; ++i) {
      int64_t c = i / a_.S % a_.C;
      int64_t p = a_.spatial ? c : i % (a_.C * a_.S);  // parameter index
      double sc = in[1]->data<float>()[p], b = in[2]->data<float>()[p];
      double mean = in[3]->data<float>()[p], var = in[4]->data<float>()[p];
      y[i] = static_cast<float>((x[i] - mean) / std::sqrt(var + a_.eps) * sc + b);
    }
  }


  FusionKind kind() const override { return FusionKind::Broadcast; }
  const BatchNormAttrs& attrs() const { return a_; }

 private:
  BatchNormAttrs a_;
  int64_t training_ = 0, is_test_ = 1;
};

}  // namespace

const BatchNormAttrs& batchnorm_attrs(const Node& n) { return op_as<BatchNorm>(n).attrs(); }

void register_batchnorm(OpTable& t) {
  t["BatchNormalization"] = [] { return std::unique_ptr<Op>(std::make_unique<BatchNorm>()); };
}

}  // namespace onnxc
