// ir/ops/stat_norm.cc — normalisations by statistics over a set of axes (stat_norm.h has
// the formulas and the view the backends read):
//   InstanceNormalization(X, scale, B)  X [N, C, D...]: per (n, c) over D..., scale and B [C];
//                                       epsilon (default 1e-5). Versions 1 (consumed_inputs,
//                                       accepted), 6.
//   GroupNormalization(X, scale, bias)  X [N, C, D...], num_groups G (required, divides C):
//                                       per (n, group) over its C/G channels and D...;
//                                       epsilon (default 1e-5). Version 18: scale and bias
//                                       have one value per group [G]; version 21: per channel
//                                       [C] (18's form was deprecated for that). stash_type
//                                       (21): only 1 (float32) is taken, as LayerNormalization.
//   MeanVarianceNormalization(X)        axes (default [0, 2, 3]; negative allowed):
//                                       (X - mean) / (std + 1e-9). Versions 9, 13.
//   LpNormalization(X)                  axis (default -1), p 1 or 2 (default 2): X divided by
//                                       its L1 / L2 norm along the axis; a zero norm gives 0
//                                       (as ONNX Runtime; ONNX's reference gives NaN).
//                                       Versions 1, 22.
// float32 and float64; the statistics and the result in double, rounded once (the reference
// too). Same meanings up to opset 28. The C kernels are kernels/stat_norm.cc.
#include "ir/ops/stat_norm.h"

#include <fmt/format.h>

#include <cmath>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class Which { Instance, Group, MVN, Lp };
using K = StatNormGeom::Kind;

class StatNorm : public Op {
 public:
  explicit StatNorm(Which w) : w_(w) {}

  void parse(AttrReader& a) override {
    const Node& n = a.node();
    switch (w_) {
      case Which::Instance:
        if (a.opset() < 6) a.ignore("consumed_inputs");
        g_.eps = a.f("epsilon", 1e-5);
        break;
      case Which::Group: {
        g_.eps = a.f("epsilon", 1e-5);
        std::optional<int64_t> ng = a.opt_i("num_groups");
        if (!ng) n.invalid("attribute 'num_groups' is required");
        if (*ng < 1) n.invalid(fmt::format("num_groups {} must be at least 1", *ng));
        groups_ = *ng;
        if (a.opset() >= 21) {
          int64_t st = a.i("stash_type", 1);
          if (st != 1) n.unsupported(fmt::format("stash_type {} is not supported (only 1, float32)", st));
        }
        break;
      }
      case Which::MVN: axes_ = a.ints("axes", {0, 2, 3}); break;
      case Which::Lp: {
        axis_ = a.i("axis", -1);
        int64_t p = a.i("p", 2);
        if (p != 1 && p != 2) n.invalid(fmt::format("p = {} is not 1 or 2", p));
        g_.kind = p == 1 ? K::L1 : K::L2;
        break;
      }
    }
    if (w_ == Which::MVN) {
      g_.kind = K::MVN;
      g_.eps = static_cast<double>(1e-9f);
    }
  }

  void infer(Node& n) override {
    size_t want = w_ == Which::Instance || w_ == Which::Group ? 3 : 1;
    if (n.inputs.size() != want) n.invalid(fmt::format("expects {} input(s), got {}", want, n.inputs.size()));
    for (size_t i = 0; i < want; ++i) need_input(n, i, i == 0 ? "X" : i == 1 ? "scale" : "bias");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    const Value& x = *n.in(0);
    const Shape& xs = x.shape;
    int64_t r = static_cast<int64_t>(xs.size());
    g_.dims.clear();
    g_.reduced.clear();
    g_.scale_lo = g_.scale_hi = 0;
    if (w_ == Which::Instance || w_ == Which::Group) {
      if (r < 2) n.invalid(fmt::format("X {} must have rank >= 2 (N, C, ...)", shape_str(xs)));
      int64_t N = xs[0], C = xs[1], S = 1;
      for (size_t d = 2; d < xs.size(); ++d) S *= xs[d];
      Shape ps{C};
      if (w_ == Which::Instance) {
        g_.dims = {N, C, S};
        g_.reduced = {false, false, true};
        g_.scale_lo = 1, g_.scale_hi = 2;
      } else {
        int64_t G = groups_;
        if (C % G != 0) n.invalid(fmt::format("num_groups {} does not divide the {} channels of X {}", G, C, shape_str(xs)));
        g_.dims = {N, G, C / G, S};
        g_.reduced = {false, false, true, true};
        g_.scale_lo = 1;
        g_.scale_hi = n.opset >= 21 ? 3 : 2;
        if (n.opset < 21) ps = {G};
      }
      for (size_t i = 1; i < 3; ++i) {
        const Value* v = n.in(i);
        if (v->dtype != x.dtype) n.invalid(fmt::format("input {} has dtype {}, X has {}", i, dtype_name(v->dtype), dtype_name(x.dtype)));
        if (v->shape != ps)
          n.invalid(fmt::format("{} {} must have shape {}{}", i == 1 ? "scale" : "bias", shape_str(v->shape), shape_str(ps),
                                w_ == Which::Group ? (n.opset >= 21 ? " (one value per channel from opset 21)" : " (one value per group before opset 21)") : ""));
      }
    } else {
      g_.dims = xs;
      g_.reduced.assign(xs.size(), false);
      if (w_ == Which::Lp) {
        if (r < 1) n.invalid("input must have rank >= 1");
        g_.reduced[static_cast<size_t>(move_axis(n, axis_, r, "axis"))] = true;
      } else {
        for (int64_t a : axes_) {
          size_t d = static_cast<size_t>(move_axis(n, a, r, "axes entry"));
          if (g_.reduced[d]) n.invalid(fmt::format("axes lists dim {} twice", d));
          g_.reduced[d] = true;
        }
      }
    }
    set_output(n, 0, x.dtype, xs);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    // kept shape and, per element, its kept position
    Shape kept;
    for (size_t d = 0; d < g_.dims.size(); ++d)
      if (!g_.reduced[d]) kept.push_back(g_.dims[d]);
    int64_t nk = numel(kept), total = x.numel(), cnt = nk ? total / nk : 0;
    std::vector<int64_t> pos(static_cast<size_t>(total)), sidx(static_cast<size_t>(total), 0);
    for (int64_t i = 0; i < total; ++i) {
      Shape p = unravel(i, g_.dims), kp, sp, ss;
      for (size_t d = 0; d < p.size(); ++d) {
        if (!g_.reduced[d]) kp.push_back(p[d]);
        if (d >= g_.scale_lo && d < g_.scale_hi) sp.push_back(p[d]), ss.push_back(g_.dims[d]);
      }
      pos[static_cast<size_t>(i)] = ravel(kp, kept);
      if (!sp.empty()) sidx[static_cast<size_t>(i)] = ravel(sp, ss);
    }
    std::vector<double> s1(static_cast<size_t>(nk), 0), s2(static_cast<size_t>(nk), 0);
    for (int64_t i = 0; i < total; ++i) {
      double v = x.get(i);
      s1[static_cast<size_t>(pos[static_cast<size_t>(i)])] += g_.kind == K::L1 ? std::fabs(v) : g_.kind == K::L2 ? v * v : v;
    }
    if (g_.kind == K::MeanVar || g_.kind == K::MVN) {
      for (auto& s : s1) s /= static_cast<double>(cnt);
      for (int64_t i = 0; i < total; ++i) {
        size_t k = static_cast<size_t>(pos[static_cast<size_t>(i)]);
        double d = x.get(i) - s1[k];
        s2[k] += d * d;
      }
    }
    for (int64_t i = 0; i < total; ++i) {
      size_t k = static_cast<size_t>(pos[static_cast<size_t>(i)]);
      double v = x.get(i), y = 0;
      switch (g_.kind) {
        case K::MeanVar: {
          double inv = 1 / std::sqrt(s2[k] / static_cast<double>(cnt) + g_.eps);
          int64_t c = sidx[static_cast<size_t>(i)];
          y = (v - s1[k]) * inv * in[1]->get(c) + in[2]->get(c);
          break;
        }
        case K::MVN: y = (v - s1[k]) / (std::sqrt(s2[k] / static_cast<double>(cnt)) + g_.eps); break;
        case K::L1: y = s1[k] == 0 ? 0 : v / s1[k]; break;
        case K::L2: y = s1[k] == 0 ? 0 : v / std::sqrt(s1[k]); break;
      }
      out[0].set(i, y);
    }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return w_ == Which::Group ? 18 : w_ == Which::MVN ? 9 : 1; }
  const StatNormGeom& geom() const { return g_; }

 private:
  Which w_;
  int64_t groups_ = 1, axis_ = -1;
  std::vector<int64_t> axes_;
  StatNormGeom g_;
};

}  // namespace

const StatNormGeom& stat_norm_geom(const Node& n) { return op_as<StatNorm>(n).geom(); }

void register_stat_norm(OpTable& t) {
  t["InstanceNormalization"] = [] { return std::unique_ptr<Op>(std::make_unique<StatNorm>(Which::Instance)); };
  t["GroupNormalization"] = [] { return std::unique_ptr<Op>(std::make_unique<StatNorm>(Which::Group)); };
  t["MeanVarianceNormalization"] = [] { return std::unique_ptr<Op>(std::make_unique<StatNorm>(Which::MVN)); };
  t["LpNormalization"] = [] { return std::unique_ptr<Op>(std::make_unique<StatNorm>(Which::Lp)); };
}

}  // namespace onnxc
