// ir/ops/conv_transpose.cc — ConvTranspose (versions 1, 11, 22; 22 only adds bfloat16): N-D transposed convolution,
// float32, X [N,C,D1..Dk], W [C, M/group, K1..Kk], optional B [M], Y [N,M,O1..Ok].
// Attributes: group, strides, dilations, pads, output_padding, output_shape, auto_pad,
// kernel_shape (checked against W). Output size per spatial dim:
//   output_shape given:  O as given (the last k entries when it lists N and C too), pads
//                        derived from total = s*(I-1) + output_padding + (K-1)*d + 1 - O:
//                        SAME_UPPER → begin = floor(total/2), else begin = total - floor(total/2);
//                        end = total - begin (negative pads add zero rows/columns)
//   auto_pad SAME_*:     O = I*s, pads derived as above
//   otherwise:           O = s*(I-1) + output_padding + (K-1)*d + 1 - pads_begin - pads_end
// Semantics: Y[n,m,o] = B[m] + Σ_{c in group(m), i, k : o = i*s - pad_begin + k*d} X[n,c,i] W[c,m%MG,k].
// The C kernel is kernels/conv_transpose.cc in the C backend.
#include <fmt/format.h>

#include <algorithm>

#include "ir/ops/conv.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class ConvTranspose : public Op {
 public:
  void parse(AttrReader& a) override { at_.parse(a, true); }

  void infer(Node& n) override {
    ConvGeom& g = g_;
    check_conv_inputs(n, at_, g);
    const Shape& xs = n.in(0)->shape;
    const Shape& ws = n.in(1)->shape;
    if (ws[0] != g.C) n.invalid(fmt::format("W {} must have X's {} input channels in dim 0", shape_str(ws), g.C));
    if (g.C % g.G != 0) n.invalid(fmt::format("group {} does not divide the input channels {}", g.G, g.C));
    g.CG = g.C / g.G, g.MG = ws[1], g.M = g.MG * g.G;
    if (g.M < 1) n.invalid("W " + shape_str(ws) + " has no output channels");
    if (n.in(2) && n.in(2)->shape != Shape{g.M})
      n.invalid("B " + shape_str(n.in(2)->shape) + " must have shape [" + std::to_string(g.M) + "]");
    g.in.assign(xs.begin() + 2, xs.end());
    g.k.assign(ws.begin() + 2, ws.end());
    for (int64_t k : g.k)
      if (k < 1) n.invalid("W " + shape_str(ws) + " has an empty kernel");
    read_conv_attrs(n, at_, g);
    size_t r = g.rank();
    std::vector<int64_t> op = spatial_attr(n, "output_padding", at_.output_padding, r, 0, 0);
    std::vector<int64_t> os;
    if (!at_.output_shape.empty()) {
      if (at_.output_shape.size() == r) os = at_.output_shape;
      else if (at_.output_shape.size() == r + 2) os.assign(at_.output_shape.begin() + 2, at_.output_shape.end());
      else n.invalid(fmt::format("output_shape {} has {} entries, expected {}", shape_str(at_.output_shape), at_.output_shape.size(), r));
      for (int64_t v : os)
        if (v < 1 || v > kConvAttrMax) n.invalid("output_shape " + shape_str(at_.output_shape) + " has a value out of [1, 2^31]");
    }
    bool same = at_.auto_pad == "SAME_UPPER" || at_.auto_pad == "SAME_LOWER";
    Shape ys{g.N, g.M};
    g.out.clear();
    for (size_t i = 0; i < r; ++i) {
      int64_t full = g.s[i] * (g.in[i] - 1) + op[i] + (g.k[i] - 1) * g.d[i] + 1;
      int64_t o;
      if (!os.empty() || same) {
        o = !os.empty() ? os[i] : g.in[i] * g.s[i];
        int64_t total = full - o;
        g.pb[i] = at_.auto_pad == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
        g.pe[i] = total - g.pb[i];
      } else {
        o = full - g.pb[i] - g.pe[i];
      }
      if (o < 1) n.invalid(fmt::format("spatial dim {} of the output would be {} (input {}, pads {}+{})", i, o, g.in[i], g.pb[i], g.pe[i]));
      g.out.push_back(o);
      ys.push_back(o);
    }
    set_output(n, 0, DType::F32, ys);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const ConvGeom& g = g_;
    const float* x = in[0]->data<float>();
    const float* w = in[1]->data<float>();
    const float* b = in.size() > 2 && in[2] ? in[2]->data<float>() : nullptr;
    float* y = out[0].data<float>();
    size_t r = g.rank();
    Shape xst = strides_of(g.in), kst = strides_of(g.k), yst = strides_of(g.out);
    int64_t XS = g.in_size(), YS = g.out_size(), KS = g.k_size();
    std::vector<double> acc(static_cast<size_t>(YS));
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t m = 0; m < g.M; ++m) {
        std::fill(acc.begin(), acc.end(), b ? b[m] : 0.0);
        int64_t grp = m / g.MG, mg = m % g.MG;
        for (int64_t c = grp * g.CG; c < (grp + 1) * g.CG; ++c)
          for (int64_t ip = 0; ip < XS; ++ip) {
            double xv = x[(n * g.C + c) * XS + ip];
            for (int64_t kp = 0; kp < KS; ++kp) {
              int64_t yoff = 0;
              bool ok = true;
              for (size_t d = 0; d < r; ++d) {
                int64_t o = ip / xst[d] % g.in[d] * g.s[d] - g.pb[d] + kp / kst[d] % g.k[d] * g.d[d];
                if (o < 0 || o >= g.out[d]) ok = false;
                yoff += o * yst[d];
              }
              if (ok) acc[static_cast<size_t>(yoff)] += xv * w[(c * g.MG + mg) * KS + kp];
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

const ConvGeom& conv_transpose_geom(const Node& n) { return op_as<ConvTranspose>(n).geom(); }

void register_conv_transpose(OpTable& t) {
  t["ConvTranspose"] = [] { return std::unique_ptr<Op>(std::make_unique<ConvTranspose>()); };
}

}  // namespace onnxc
