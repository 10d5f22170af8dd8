// ir/ops/layer_norm.cc — LayerNormalization (17): normalises X over its dims from `axis`
// (default -1, may be negative):
//   Mean = mean(X), InvStdDev = 1 / sqrt(mean((X - Mean)²) + epsilon)   per row
//   Y = (X - Mean) * InvStdDev * Scale + B
// Scale and the optional B broadcast to X.shape[axis:]; onnxc takes them with that whole
// shape's element count (one value per column) or a single element, and refuses other
// partial broadcasts (exit 3). Outputs Mean and InvStdDev (optional) have X's shape with
// the normalised dims as 1. float32 and float64; statistics in double (the reference
// too), whatever stash_type says (1, float32, is the only value ONNX defines).
// RMSNormalization (23): the same without the mean: Y = X / sqrt(mean(X²) + epsilon) * Scale,
// inputs X and Scale, one output; stash_type as LayerNormalization's.
// Versions: LayerNormalization 17, RMSNormalization 23; same meanings at every opset up to
// 28. The C kernel is kernels/layer_norm.cc in the C backend.
#include <fmt/format.h>

#include <cmath>

#include "ir/ops/layer_norm.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class LayerNorm : public Op {
 public:
  explicit LayerNorm(bool rms) { g_.rms = rms; }

  void parse(AttrReader& a) override {
    axis_ = a.i("axis", -1);
    g_.epsilon = a.f("epsilon", 1e-5);
    int64_t st = a.i("stash_type", 1);
    if (st != 1) a.node().unsupported(fmt::format("stash_type {} is not supported (only 1, float32)", st));
  }

  void infer(Node& n) override {
    if (g_.rms) {
      if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects inputs X and Scale");
      if (n.outputs.size() != 1) n.invalid("has one output (Y)");
    } else {
      if (n.inputs.size() < 2 || n.inputs.size() > 3 || !n.in(0) || !n.in(1)) n.invalid("expects inputs X, Scale and optional B");
      if (n.outputs.size() > 3) n.invalid("has at most 3 outputs (Y, Mean, InvStdDev)");
    }
    expect_dtype(n, 0, {DType::F32, DType::F64});
    const Shape& x = n.in(0)->shape;
    int64_t ax = axis_;
    if (!normalize_axis(ax, static_cast<int64_t>(x.size())))
      n.invalid(fmt::format("axis {} is out of range for input {}", axis_, shape_str(x)));
    g_.rows = g_.cols = 1;
    Shape stat;
    for (size_t d = 0; d < x.size(); ++d) {
      bool inner = static_cast<int64_t>(d) >= ax;
      (inner ? g_.cols : g_.rows) *= x[d];
      stat.push_back(inner ? 1 : x[d]);
    }
    Shape norm(x.begin() + ax, x.end());
    auto check = [&](size_t i, const char* what, bool* per_col) {
      const Value* v = n.in(i);
      if (!v) return;
      if (v->dtype != n.in(0)->dtype) n.invalid(fmt::format("{} has dtype {}, X has {}", what, dtype_name(v->dtype), dtype_name(n.in(0)->dtype)));
      Shape b;
      if (!broadcast_shapes(norm, v->shape, &b) || b != norm)
        n.invalid(fmt::format("{} {} does not broadcast to the normalised shape {}", what, shape_str(v->shape), shape_str(norm)));
      int64_t k = numel(v->shape);
      if (k != g_.cols && k != 1)
        n.unsupported(fmt::format("{} {} broadcasts partially over the normalised shape {}; onnxc takes one value per element or one "
                                  "for all", what, shape_str(v->shape), shape_str(norm)));
      *per_col = k != 1;
    };
    check(1, "Scale", &g_.scale_per_col);
    check(2, "B", &g_.bias_per_col);
    set_output(n, 0, n.in(0)->dtype, x);
    if (n.out(1)) set_output(n, 1, n.in(0)->dtype, stat);
    if (n.out(2)) set_output(n, 2, n.in(0)->dtype, stat);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    for (int64_t r = 0; r < g_.rows; ++r) {
      double mean = 0, var = 0;
      if (!g_.rms) {
        for (int64_t c = 0; c < g_.cols; ++c) mean += x.get(r * g_.cols + c);
        mean /= static_cast<double>(g_.cols);
      }
      for (int64_t c = 0; c < g_.cols; ++c) {
        double d = x.get(r * g_.cols + c) - mean;
        var += d * d;
      }
      double inv = 1 / std::sqrt(var / static_cast<double>(g_.cols) + g_.epsilon);
      for (int64_t c = 0; c < g_.cols; ++c) {
        double s = in[1]->get(g_.scale_per_col ? c : 0), b = in.size() > 2 && in[2] ? in[2]->get(g_.bias_per_col ? c : 0) : 0;
        out[0].set(r * g_.cols + c, (x.get(r * g_.cols + c) - mean) * inv * s + b);
      }
      if (out.size() > 1 && !out[1].bytes.empty()) out[1].set(r, mean);
      if (out.size() > 2 && !out[2].bytes.empty()) out[2].set(r, inv);
    }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return g_.rms ? 23 : 17; }
  const LayerNormGeom& geom() const { return g_; }

 private:
  int64_t axis_ = -1;
  LayerNormGeom g_;
};

}  // namespace

const LayerNormGeom& layer_norm_geom(const Node& n) { return op_as<LayerNorm>(n).geom(); }

void register_layer_norm(OpTable& t) {
  t["LayerNormalization"] = [] { return std::unique_ptr<Op>(std::make_unique<LayerNorm>(false)); };
  t["RMSNormalization"] = [] { return std::unique_ptr<Op>(std::make_unique<LayerNorm>(true)); };
}

}  // namespace onnxc
