// ir/ops/loss.cc — the classification losses (loss.h has the view and the formulas the
// backends read):
//   NegativeLogLikelihoodLoss(input, target, weight?) → loss
//       input [N, C, d1..dk] (k >= 0) holds log-probabilities; loss per position is
//       -input[n, target, d...] * weight[target]. Versions 12, 13 (same meaning, a function
//       body for ONNX's own use), 22 (adds bfloat16, refused by the importer as everywhere).
//   SoftmaxCrossEntropyLoss(scores, labels, weights?) → (output, log_prob?)
//       the same on the log-softmax of scores along C, which the optional second output
//       returns. Versions 12, 13 (adds bfloat16, refused by the importer).
// Attributes: reduction "none" | "sum" | "mean" (default "mean"), ignore_index (optional:
// positions whose label equals it count for nothing, not even in mean's denominator).
// Labels are int32 or int64 and a runtime input like any other; a label outside [0, C) that
// is not ignore_index makes that position's loss NaN (and so a sum or mean NaN) instead of
// reading outside the scores: ONNX calls it an error, the generated node functions have no
// error return, and a NaN cannot pass for a plausible loss. float32 and float64 (float16
// models compute in float32). Same meanings up to opset 28. The C kernel is kernels/loss.cc.
#include "ir/ops/loss.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

using R = LossGeom::Reduction;

class Loss : public Op {
 public:
  explicit Loss(bool softmax) { g_.softmax = softmax; }

  void parse(AttrReader& a) override {
    std::string r = a.s("reduction", "mean");
    if (r == "none") g_.reduction = R::None;
    else if (r == "sum") g_.reduction = R::Sum;
    else if (r == "mean") g_.reduction = R::Mean;
    else a.node().invalid(fmt::format("reduction '{}' is not one of 'none', 'sum', 'mean'", r));
    std::optional<int64_t> ii = a.opt_i("ignore_index");
    g_.has_ignore = ii.has_value();
    g_.ignore_index = ii.value_or(0);
  }

  void infer(Node& n) override {
    // The inputs' names in the op's own schema.
    const char* xn = g_.softmax ? "scores" : "input";
    const char* tn = g_.softmax ? "labels" : "target";
    const char* wn = g_.softmax ? "weights" : "weight";
    if (n.inputs.size() < 2 || n.inputs.size() > 3)
      n.invalid(fmt::format("expects 2 or 3 inputs ({}, {}, optional {}), got {}", xn, tn, wn, n.inputs.size()));
    size_t nout = g_.softmax ? 2 : 1;
    if (n.outputs.empty() || n.outputs.size() > nout || !n.out(0))
      n.invalid(fmt::format("expects {}, got {} output(s)", g_.softmax ? "1 or 2 outputs (output, optional log_prob)" : "1 output (loss)",
                            n.outputs.size()));
    need_input(n, 0, xn);
    need_input(n, 1, tn);
    expect_dtype(n, 0, {DType::F32, DType::F64});
    expect_dtype(n, 1, {DType::I32, DType::I64});
    const Value& x = *n.in(0);
    const Shape& xs = x.shape;
    if (xs.size() < 2) n.invalid(fmt::format("{} {} must have rank >= 2 (N, C, d1, ..., dk)", xn, shape_str(xs)));
    Shape ls{xs[0]};
    ls.insert(ls.end(), xs.begin() + 2, xs.end());
    if (n.in(1)->shape != ls)
      n.invalid(fmt::format("{} {} must have shape {} ({} {} without its class dim)", tn, shape_str(n.in(1)->shape), shape_str(ls), xn,
                            shape_str(xs)));
    g_.N = xs[0];
    g_.C = xs[1];
    g_.D = numel(Shape(xs.begin() + 2, xs.end()));
    const Value* w = n.in(2);
    g_.has_weight = w != nullptr;
    if (w) {
      if (w->dtype != x.dtype) n.invalid(fmt::format("{} has dtype {}, {} has {}", wn, dtype_name(w->dtype), xn, dtype_name(x.dtype)));
      if (w->shape != Shape{g_.C}) n.invalid(fmt::format("{} {} must have shape [{}] (one value per class)", wn, shape_str(w->shape), g_.C));
    }
    set_output(n, 0, x.dtype, g_.reduction == R::None ? ls : Shape{});
    g_.log_prob = g_.softmax && n.out(1) != nullptr;
    if (g_.log_prob) set_output(n, 1, x.dtype, xs);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    const Tensor& lab = *in[1];
    const Tensor* w = in.size() > 2 ? in[2] : nullptr;
    Tensor* lp = g_.log_prob ? &out[1] : nullptr;
    const int64_t N = g_.N, C = g_.C, D = g_.D;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double acc = 0, wsum = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t q = n * D + d;
        auto at = [&](int64_t c) { return (n * C + c) * D + d; };
        double m = -std::numeric_limits<double>::infinity(), ls = 0;
        if (g_.softmax) {
          for (int64_t c = 0; c < C; ++c) m = x.get(at(c)) > m ? x.get(at(c)) : m;  // NaN skipped, as the kernel
          double s = 0;
          for (int64_t c = 0; c < C; ++c) s += std::exp(x.get(at(c)) - m);
          ls = std::log(s);
          if (lp)
            for (int64_t c = 0; c < C; ++c) lp->set(at(c), (x.get(at(c)) - m) - ls);
        }
        const int64_t t = lab.get_i64(q);
        double l, wt;
        if (g_.has_ignore && t == g_.ignore_index) {
          l = 0, wt = 0;
        } else if (t < 0 || t >= C) {
          l = nan, wt = nan;
        } else {
          double v = x.get(at(t));
          if (g_.softmax) v = (v - m) - ls;
          wt = w ? w->get(t) : 1.0;
          l = -v * wt;
        }
        if (g_.reduction == R::None) out[0].set(q, l);
        else acc += l, wsum += wt;
      }
    if (g_.reduction == R::Sum) out[0].set(0, acc);
    if (g_.reduction == R::Mean) out[0].set(0, acc / wsum);  // 0 / 0 = NaN when every position is ignored
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 12; }
  const LossGeom& geom() const { return g_; }

 private:
  LossGeom g_;
};

}  // namespace

const LossGeom& loss_geom(const Node& n) { return op_as<Loss>(n).geom(); }

void register_loss(OpTable& t) {
  t["NegativeLogLikelihoodLoss"] = [] { return std::unique_ptr<Op>(std::make_unique<Loss>(false)); };
  t["SoftmaxCrossEntropyLoss"] = [] { return std::unique_ptr<Op>(std::make_unique<Loss>(true)); };
}

}  // namespace onnxc
