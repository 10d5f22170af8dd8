// codegen/c/kernels/conv_nchwc.cc — the C kernel of 2-D convolutions on NCHW[b]c
// activations (ir/layout.h), for the variants of conv_blocking (ir/ops/conv.h): regular,
// depthwise, first-layer (plain X) and whole-block grouped convs, with W repacked at
// compile time by the layout pass. Tiles of output pixels x channel-block lanes, lanes
// innermost (see emit_conv_nchwc). Known gap: no register tiling (the accumulators go
// through L1).
#include <algorithm>

#include "codegen/c/kernels/conv.h"

namespace onnxc {

// NCHW[b]c kernel (TVM x86 style): tasks (image, output channel block, output row); each
// row is split at compile time into left edge, interior and right edge, where the interior
// holds the outputs whose KW taps are all inside the input. Interior outputs go in tiles of
// RW pixels × b lanes (RW accumulator arrays, lanes innermost under `omp simd`); edge
// outputs one at a time with their valid tap range. The valid kernel rows of a row are
// computed once per task. Per variant, the reduction and the innermost step:
//   regular / grouped  X NCHWc, W [MB][CG/b][KH][KW][b i][b o]: per input block and real
//                      input lane i, acc[r][l] += x[pixel r][i] * w[i][l];
//   depthwise          X NCHWc, W [MB][1][KH][KW][1][b]: acc[r][l] += x[pixel r][l] * w[l];
//   first layer        X plain NCHW, W [MB][C][KH][KW][1][b]: per input channel c,
//                      acc[r][l] += x[c][pixel r] * w[c][l].
// Output lanes >= M get bias 0 and zero weights, so they stay 0.
void emit_conv_nchwc(CEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const int64_t b = e.out_layout(0).block;
  const ConvBlocked v = conv_blocking(e.node, b, e.in_layout(0).is_plain());
  ONNXC_ASSERT(v.kind != ConvBlocking::None, e.node.where() + ": no NCHWc variant at block " + std::to_string(b));
  const bool first = v.kind == ConvBlocking::FirstLayer;
  const bool dw = v.kind == ConvBlocking::Depthwise;
  e.variant = first ? "first-layer" : dw ? "depthwise" : v.kind == ConvBlocking::Grouped ? "grouped" : "regular";
  ONNXC_ASSERT(g.rank() == 2, "NCHWc conv of rank " + std::to_string(g.rank()));
  ONNXC_ASSERT(first || e.in_layout(0) == Layout::nchwc(b), "NCHWc conv: X is stored as " + e.node.in(0)->type_str());
  const int64_t bi = v.filter_in_block;
  ONNXC_ASSERT(e.in_layout(1) == Layout::filter(b, bi), "NCHWc conv: W is stored as " + e.node.in(1)->type_str());
  const int64_t IH = g.in[0], IW = g.in[1], OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1];
  const int64_t SH = g.s[0], SW = g.s[1], DH = g.d[0], DW = g.d[1], PH = g.pb[0], PW = g.pb[1];
  const int64_t MB = ceil_div(g.M, b), CB = ceil_div(g.C, b), KS = KH * KW;
  const int64_t CBG = ceil_div(g.CG, b);                // input blocks per group (regular)
  const int64_t CBI = first ? g.C : dw ? 1 : CBG;      // W's input blocks
  const int64_t ps = first ? 1 : b;                     // X elements per spatial position
  const std::string X = e.in(0), W = e.in(1), Y = e.out(0);

  e("/* NCHW{}c {} convolution: tasks (image, output block, output row); interior outputs in tiles of", b,
    first ? "first-layer (X plain NCHW)" : dw ? "depthwise" : g.G > 1 ? "grouped" : "regular");
  e(" * pixels x {} lanes, edges one output at a time with their valid taps. */", b);
  open_tasks(e, {{"n", g.N, 1}, {"ob", MB, 1}, {"oh", OH, 1}}, e.parallel(static_cast<double>(conv_macs(g))) && g.N * MB * OH > 1);
  if (first) e("const float* restrict xn = {} + n * {};", X, g.C * IH * IW);
  else if (dw) e("const float* restrict xn = {} + (n * {} + ob) * {};", X, CB, IH * IW * b);
  else if (g.G == 1) e("const float* restrict xn = {} + n * {};", X, CB * IH * IW * b);
  else e("const float* restrict xn = {} + (n * {} + ob / {} * {}) * {};", X, CB, g.MG / b, CBG, IH * IW * b);
  e("const float* restrict wo = {} + ob * {};", W, CBI * KS * bi * b);
  e("float* restrict yr = {} + ((n * {} + ob) * {} + oh) * {};", Y, MB, OH, OW * b);
  const bool bias = e.has_in(2);
  if (bias) {
    e("float bias[{}];", b);
    if (g.M % b == 0) {
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) bias[l] = {}[ob * {} + l];", b, e.in(2), b);
    } else {
      e("for (int64_t l = 0; l < {}; ++l) bias[l] = 0.0f;", b);
      e("for (int64_t l = 0; l < {0} - ob * {1} && l < {1}; ++l) bias[l] = {2}[ob * {1} + l];", g.M, b, e.in(2));
    }
  }
  // Valid kernel rows of this output row.
  e("const int64_t ih0 = {};", affine("oh", SH, -PH));
  std::string kh0 = "0", kh1 = std::to_string(KH);
  if (PH > 0) {
    kh0 = "kh0";
    if (DH == 1) e("const int64_t kh0 = ih0 < 0 ? -ih0 : 0;");
    else e("const int64_t kh0 = ih0 < 0 ? (-ih0 + {}) / {} : 0;", DH - 1, DH);
  }
  if ((OH - 1) * SH - PH + (KH - 1) * DH > IH - 1) {
    kh1 = "kh1";
    std::string room = DH == 1 ? fmt::format("{} - ih0", IH) : fmt::format("({} - ih0 + {}) / {}", IH, DH - 1, DH);
    e("const int64_t kh1 = {0} < {1} ? {0} : {1};", room, KH);
  }
  // Interior [lo, hi) of the row: outputs whose KW taps are all in range.
  int64_t lo = 0, hi = OW;
  for (int64_t t = 0; t < KW; ++t) {
    int64_t a, z;
    tap_range(IW, OW, SW, PW, t * DW, &a, &z);
    lo = std::max(lo, a);
    hi = std::min(hi, z);
  }
  lo = std::min(lo, OW);
  hi = std::max(hi, lo);
  const int64_t RW = std::min<int64_t>(std::clamp<int64_t>(128 / b, 2, 8), std::max<int64_t>(hi - lo, 1));

  // One tile of R outputs starting at `ow`; taps [kw0, kw1) ("" = all KW, else per output).
  auto tile = [&](int64_t R, bool edge) {
    std::string decl;
    for (int64_t r = 0; r < R; ++r) decl += fmt::format("{}a{}[{}]", r ? ", " : "", r, b);
    e("float {};", decl);
    std::string init;
    for (int64_t r = 0; r < R; ++r) init += fmt::format(" a{}[l] = {};", r, bias ? "bias[l]" : "0.0f");
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) {{{} }}", b, init);
    std::string kw0 = "0", kw1 = std::to_string(KW);
    if (edge) {
      kw0 = "kw0", kw1 = "kw1";
      e("const int64_t iw0 = {};", affine("ow", SW, -PW));
      if (DW == 1) e("const int64_t kw0 = iw0 < 0 ? -iw0 : 0;");
      else e("const int64_t kw0 = iw0 < 0 ? (-iw0 + {}) / {} : 0;", DW - 1, DW);
      std::string room = DW == 1 ? fmt::format("{} - iw0", IW) : fmt::format("({} - iw0 + {}) / {}", IW, DW - 1, DW);
      e("const int64_t kw1 = {0} < {1} ? {0} : {1};", room, KW);
    }
    // Reduction over input channels (blocks).
    if (first) {
      e("for (int64_t c = 0; c < {}; ++c) {{", g.C);
      e("const float* restrict xc = xn + c * {};", IH * IW);
      e("const float* restrict wc = wo + c * {};", KS * b);
    } else if (!dw) {
      open_loop(e, "cb", CBG);
      e("const float* restrict xc = xn + cb * {};", IH * IW * b);
      e("const float* restrict wc = wo + cb * {};", KS * b * b);
      if (g.CG % b != 0) e("const int64_t ni = cb < {} ? {} : {};", CBG - 1, b, g.CG % b);
    } else {
      e("{{");
      e("const float* restrict xc = xn;");
      e("const float* restrict wc = wo;");
    }
    e("for (int64_t kh = {}; kh < {}; ++kh) {{", kh0, kh1);
    e("const float* restrict xk = xc + (ih0 + {}) * {};", affine("kh", DH, 0), IW * ps);
    e("const float* restrict wk = wc + kh * {};", KW * bi * b);
    e("for (int64_t kw = {}; kw < {}; ++kw) {{", kw0, kw1);
    e("const float* restrict xw = xk + ({}) * {};", affine("ow", SW, -PW) + (DW == 1 ? " + kw" : fmt::format(" + kw * {}", DW)), ps);
    e("const float* restrict ww = wk + kw * {};", bi * b);
    if (!first && !dw) {
      e("for (int64_t i = 0; i < {}; ++i) {{", g.CG % b != 0 ? "ni" : std::to_string(b));
      std::string xs;
      for (int64_t r = 0; r < R; ++r) xs += fmt::format("{}xv{} = xw[{}]", r ? ", " : "", r, affine("i", 1, r * SW * b));
      e("const float {};", xs);
      e("const float* restrict wv = ww + i * {};", b);
    } else if (first) {
      std::string xs;
      for (int64_t r = 0; r < R; ++r) xs += fmt::format("{}xv{} = xw[{}]", r ? ", " : "", r, r * SW);
      e("const float {};", xs);
    }
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) {{", b);
    e("const float w = {}[l];", !first && !dw ? "wv" : "ww");
    for (int64_t r = 0; r < R; ++r) {
      std::string xv = dw ? fmt::format("xw[{}]", affine("l", 1, r * SW * b)) : fmt::format("xv{}", r);
      e("a{0}[l] = ONNXC_FMA({1}, w, a{0}[l]);", r, xv);
    }
    e("}}");
    if (!first && !dw) e("}}");  // i
    e("}}");                      // kw
    e("}}");                      // kh
    e("}}");                      // reduction
    e("float* restrict yo = yr + ow * {};", b);
    std::string st;
    for (int64_t r = 0; r < R; ++r) st += fmt::format(" yo[{}] = a{}[l];", affine("l", 1, r * b), r);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) {{{} }}", b, st);
  };
  if (lo > 0) {
    e("for (int64_t ow = 0; ow < {}; ++ow) {{", lo);
    tile(1, true);
    e("}}");
  }
  const int64_t ntile = (hi - lo) / RW, rem = (hi - lo) % RW;
  if (ntile > 1) {
    e("for (int64_t ow = {}; ow < {}; ow += {}) {{", lo, lo + ntile * RW, RW);
    tile(RW, false);
    e("}}");
  } else if (ntile == 1) {
    e("{{");
    e("const int64_t ow = {};", lo);
    tile(RW, false);
    e("}}");
  }
  if (rem > 0) {
    e("{{");
    e("const int64_t ow = {};", lo + ntile * RW);
    tile(rem, false);
    e("}}");
  }
  if (hi < OW) {
    e("for (int64_t ow = {}; ow < {}; ++ow) {{", hi, OW);
    tile(1, true);
    e("}}");
  }
  e("}}");
  e("}}");
  e("}}");
}

}  // namespace onnxc
