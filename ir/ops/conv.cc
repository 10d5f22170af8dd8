// ir/ops/conv.cc — Conv (versions 1, 11, 22; 22 only adds bfloat16): N-D convolution, float32, NCHW (X [N,C,D1..Dk],
// W [M,C/group,K1..Kk], optional B [M], Y [N,M,O1..Ok]), with group (depthwise included),
// strides, dilations, pads, auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID) and
// kernel_shape (optional; checked against W). Shape inference resolves the geometry
// (ConvGeom, ir/ops/conv.h) that the backends' kernels read through conv_geom(); how a
// conv runs on blocked channels is conv_blocking(). The C kernels are in
// kernels/conv*.cc in the C backend.
#include <fmt/format.h>

#include <algorithm>

#include "ir/ops/conv.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Conv : public Op {
 public:
  void parse(AttrReader& a) override { at_.parse(a, false); }

  void infer(Node& n) override {
    ConvGeom& g = g_;
    check_conv_inputs(n, at_, g);
    const Shape& xs = n.in(0)->shape;
    const Shape& ws = n.in(1)->shape;
    g.M = ws[0];
    if (g.C % g.G != 0 || g.M % g.G != 0)
      n.invalid(fmt::format("group {} does not divide the input channels {} and output channels {}", g.G, g.C, g.M));
    g.CG = g.C / g.G, g.MG = g.M / g.G;
    if (ws[1] != g.CG)
      n.invalid(fmt::format("W {} has {} input channels per group, expected C/group = {}/{} = {}", shape_str(ws), ws[1], g.C,
                            g.G, g.CG));
    if (g.M < 1) n.invalid("W " + shape_str(ws) + " has no output channels");
    if (n.in(2) && n.in(2)->shape != Shape{g.M})
      n.invalid("B " + shape_str(n.in(2)->shape) + " must have shape [" + std::to_string(g.M) + "]");
    g.in.assign(xs.begin() + 2, xs.end());
    g.k.assign(ws.begin() + 2, ws.end());
    for (int64_t k : g.k)
      if (k < 1) n.invalid("W " + shape_str(ws) + " has an empty kernel");
    read_conv_attrs(n, at_, g);
    resolve_conv_output(n, at_, g, "X");
    Shape ys{g.N, g.M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    set_output(n, 0, DType::F32, ys);
  }

  // Reference: for each output row (outer spatial index), each input channel and kernel
  // position, accumulate over the valid part of the last dimension; double accumulators.
  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const ConvGeom& g = g_;
    const float* x = in[0]->data<float>();
    const float* w = in[1]->data<float>();
    const float* b = in.size() > 2 && in[2] ? in[2]->data<float>() : nullptr;
    float* y = out[0].data<float>();
    size_t r = g.rank(), L = r - 1;
    Shape xst = strides_of(g.in), kst = strides_of(g.k);
    int64_t XS = g.in_size(), YS = g.out_size(), KS = g.k_size(), OL = g.out[L];
    std::vector<double> acc(static_cast<size_t>(YS));
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t m = 0; m < g.M; ++m) {
        std::fill(acc.begin(), acc.end(), b ? b[m] : 0.0);
        int64_t grp = m / g.MG;
        for (int64_t c = 0; c < g.CG; ++c) {
          const float* xc = x + (n * g.C + grp * g.CG + c) * XS;
          const float* wc = w + (m * g.CG + c) * KS;
          for (int64_t kpos = 0; kpos < KS; ++kpos) {
            std::vector<int64_t> kk(r);
            for (size_t d = 0; d < r; ++d) kk[d] = kpos / kst[d] % g.k[d];
            double wv = wc[kpos];
            for (int64_t row = 0; row < YS / OL; ++row) {
              // Outer output index → input offset; skip rows whose outer input index is out of range.
              int64_t rem = row, xoff = 0;
              bool ok = true;
              for (size_t d = L; d-- > 0;) {
                int64_t o = rem % g.out[d];
                rem /= g.out[d];
                int64_t i = o * g.s[d] - g.pb[d] + kk[d] * g.d[d];
                if (i < 0 || i >= g.in[d]) ok = false;
                xoff += i * xst[d];
              }
              if (!ok) continue;
              for (int64_t o = 0; o < OL; ++o) {
                int64_t i = o * g.s[L] - g.pb[L] + kk[L] * g.d[L];
                if (i >= 0 && i < g.in[L]) acc[static_cast<size_t>(row * OL + o)] += wv * xc[xoff + i];
              }
            }
          }
        }
        float* yp = y + (n * g.M + m) * YS;
        for (int64_t i = 0; i < YS; ++i) yp[i] = static_cast<float>(acc[static_cast<size_t>(i)]);
      }
  }



  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }
  const ConvGeom& geom() const { return g_; }

 private:







  ConvAttrs at_;
  ConvGeom g_;
};

}  // namespace

void resolve_conv_output(const Node& n, const ConvAttrs& a, ConvGeom& g, const char* x_name) {
  g.out.clear();
  for (size_t i = 0; i < g.rank(); ++i) {
    int64_t dk = (g.k[i] - 1) * g.d[i] + 1;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      int64_t o = ceil_div(g.in[i], g.s[i]);
      int64_t total = std::max<int64_t>(0, (o - 1) * g.s[i] + dk - g.in[i]);
      g.pb[i] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pe[i] = total - g.pb[i];
    }
    int64_t span = g.in[i] + g.pb[i] + g.pe[i];
    if (span < dk)
      n.invalid(fmt::format("spatial dim {} of {}: size {} plus pads {} is smaller than the dilated kernel {}", i, x_name, g.in[i],
                            g.pb[i] + g.pe[i], dk));
    g.out.push_back((span - dk) / g.s[i] + 1);
  }
}

const ConvGeom& conv_geom(const Node& n) { return op_as<Conv>(n).geom(); }

ConvBlocked conv_blocking(const Node& n, int64_t b, bool x_plain) {
  const ConvGeom& g = conv_geom(n);
  if (b < 1) return {};
  if (g.G == 1) return x_plain && g.C < b ? ConvBlocked{ConvBlocking::FirstLayer, 1} : ConvBlocked{ConvBlocking::Regular, b};
  if (g.G == g.C && g.G == g.M) return {ConvBlocking::Depthwise, 1};
  if (g.CG % b == 0 && g.MG % b == 0) return {ConvBlocking::Grouped, b};
  return {};
}

void register_conv(OpTable& t) {
  t["Conv"] = [] { return std::unique_ptr<Op>(std::make_unique<Conv>()); };
}

}  // namespace onnxc
