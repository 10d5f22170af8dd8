// codegen/c/kernels/conv_transpose.cc — ConvTranspose in C, plain NCHW: scatter form,
// tasks (image, output channel); per input row and kernel row the target output row is
// checked once, then for each last-dim tap a loop over the input positions whose target
// lies inside the output (compile-time bounds, no inner checks). Not tuned: no model in the
// target zoo uses ConvTranspose.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/c/kernels/conv.h"
#include "codegen/c/kernels/kernels.h"

namespace onnxc {
namespace {

void emit_conv_transpose(CEmit& e) {
  const ConvGeom& g = conv_transpose_geom(e.node);
  const size_t r = g.rank(), L = r - 1;
  const int64_t XS = g.in_size(), YS = g.out_size(), KS = g.k_size();
  const int64_t IL = g.in[L], OL = g.out[L], KL = g.k[L], SL = g.s[L], DL = g.d[L], PL = g.pb[L];
  const Shape xst = strides_of(g.in), kst = strides_of(g.k), yst = strides_of(g.out);
  const std::string X = e.in(0), W = e.in(1), Y = e.out(0);
  std::vector<std::string> in_(r), kn(r), on(r);
  for (size_t d = 0; d < r; ++d) in_[d] = "i" + dim_name(d, r), kn[d] = "k" + dim_name(d, r), on[d] = "o" + dim_name(d, r);
  // Per last-dim tap t, the input positions i whose target o = i*s - p + t*d lies in [0, OL).
  std::vector<std::string> taps;
  for (int64_t t = 0; t < KL; ++t) {
    int64_t lo = std::max<int64_t>(0, ceil_div(PL - t * DL, SL));
    int64_t hi = std::min(IL, floor_div(OL - 1 + PL - t * DL, SL) + 1);
    if (hi <= lo) continue;
    if (SL == 1 && hi - lo >= 4) taps.push_back("ONNXC_PRAGMA(omp simd)");
    taps.push_back(fmt::format("for (int64_t {0} = {1}; {0} < {2}; ++{0}) yr[{3}] = ONNXC_FMA(wr[{4}], xr[{0}], yr[{3}]);",
                               in_[L], lo, hi, affine(in_[L], SL, t * DL - PL), t));
  }
  int64_t macs = g.N * g.M * XS * g.CG * KS;
  e("/* transposed convolution (scatter): tasks (image, output channel) */");
  open_collapsed(e, {{"n", g.N}, {"m", g.M}}, e.parallel(static_cast<double>(macs)) && g.N * g.M > 1);
  e("float* restrict yp = {} + (n * {} + m) * {};", Y, g.M, YS);
  if (YS >= 4) e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t i = 0; i < {}; ++i) yp[i] = {};", YS, e.has_in(2) ? e.in(2) + "[m]" : "0.0f");
  if (taps.empty()) {  // every input lands outside the output (large strides, output_shape): Y is the bias
    e("/* no tap of the last kernel dim reaches the output */");
    e("}}");
    e("}}");
    return;
  }
  std::string c0 = g.G == 1 ? "0" : fmt::format("m / {} * {}", g.MG, g.CG);
  e("for (int64_t c = {0}; c < {0} + {1}; ++c) {{", c0, g.CG);
  e("const float* restrict xc = {} + (n * {} + c) * {};", X, g.C, XS);
  e("const float* restrict wc = {} + (c * {} + {}) * {};", W, g.MG, g.MG == 1 ? "0" : g.G == 1 ? "m" : fmt::format("m % {}", g.MG), KS);
  std::string yoff, xoff, woff;
  for (size_t d = 0; d < L; ++d) {
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", in_[d], g.in[d]);
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", kn[d], g.k[d]);
    e("const int64_t {} = {} + {};", on[d], affine(in_[d], g.s[d], -g.pb[d]), affine(kn[d], g.d[d], 0));
    e("if ({0} < 0 || {0} >= {1}) continue;", on[d], g.out[d]);
    yoff += fmt::format(" + {}", affine(on[d], yst[d], 0));
    xoff += fmt::format(" + {}", affine(in_[d], xst[d], 0));
    woff += fmt::format(" + {}", affine(kn[d], kst[d], 0));
  }
  e("float* restrict yr = yp{};", yoff);
  e("const float* restrict xr = xc{};", xoff);
  e("const float* restrict wr = wc{};", woff);
  for (auto& line : taps) e("{}", line);
  for (size_t d = 0; d < 2 * L; ++d) e("}}");  // input and kernel loops of the outer dims
  e("}}");
  e("}}");
  e("}}");
}

}  // namespace

void register_conv_transpose(CKernelTable& t) { t["ConvTranspose"] = {emit_conv_transpose, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
