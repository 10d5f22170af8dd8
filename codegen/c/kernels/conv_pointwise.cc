// codegen/c/kernels/conv_pointwise.cc — C kernels for plain-NCHW 1×1 convolutions:
//  - pointwise (1×1, unpadded; strided 1×1 too where the plane kernel does not fit): a
//    matrix product Y[m,p] = B[m] + Σc W[m,c]·X[c,p] over the flattened positions (strided:
//    per output row, X read with stride SW). Tasks (image, block of positions, 8 output
//    channels), so the X panel of a position block stays in L2 across channel blocks; 4
//    input channels per step, so each Y load/store serves 32 FMAs.
//  - gemv (1×1 with a single output position, e.g. squeeze-excitation): dot products.
// Known gap: a scalar tail when the position count is not a multiple of 8.
#include <algorithm>

#include "codegen/c/kernels/conv.h"

namespace onnxc {

// 1×1 conv with one output position (squeeze-excitation FCs, global features): per image
// a matrix-vector product, a simd reduction over the input channels per output channel.
void emit_conv_gemv(CEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const int64_t XS = g.in_size();
  e("/* 1x1 convolution on one position: per image, {} dot products of length {} */", g.M, g.CG);
  open_tasks(e, {{"n", g.N, 1}, {"m", g.M, 1}}, e.parallel(static_cast<double>(conv_macs(g))));
  e("const float* restrict xn = {} + {};", e.in(0), group_offset(g, XS));
  e("const float* restrict wm = {} + m * {};", e.in(1), g.CG);
  e("float s = {};", e.has_in(2) ? e.in(2) + "[m]" : "0.0f");
  simd(e, g.CG, "reduction(+:s)");
  // (a plain multiply-add: clang does not vectorize reductions through fmaf)
  e("for (int64_t c = 0; c < {}; ++c) s += wm[c] * xn[{}];", g.CG, affine("c", XS, 0));
  e("{}[n * {} + m] = s;", e.out(0), g.M);
  e("}}");
  e("}}");
}

// 1×1, no pads: Y[n,m,p] = B[m] + Σc W[m,c] X[n,c,p']. With unit strides p' = p over the
// flattened positions; with strides (rank <= 2 only) per output row, X read with stride SW.
void emit_conv_pointwise(CEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const size_t r = g.rank();
  bool strided = false;
  for (size_t i = 0; i < r; ++i) strided = strided || g.s[i] != 1;
  const int64_t P = g.out_size(), XS = g.in_size(), CG = g.CG;
  const int64_t OW = g.out[r - 1], SW = g.s[r - 1], SH = r > 1 ? g.s[0] : 1, IW = g.in[r - 1];
  const int64_t R = P / OW;  // output rows (strided form)
  const int64_t OCB = pick_block(g.MG, 8), CU = 4;
  // Positions per task: the X panel (CG × PB floats) should stay in L2 (~512 KiB).
  int64_t PB = std::clamp<int64_t>(131072 / std::max<int64_t>(CG, 1), 64, 1024) / 16 * 16;
  // Flat: blocks of PB positions; strided: blocks of RB output rows.
  const int64_t units = strided ? R : P;
  // (strided: each output row of a block reads one input row of IW floats)
  int64_t UB = strided ? std::max<int64_t>(1, PB / IW) : PB;
  if (units <= UB + UB / 2) UB = units;
  const int64_t NUB = (units + UB - 1) / UB;
  const std::string X = e.in(0), W = e.in(1), Y = e.out(0);
  const std::string u = strided ? "oh" : "p";  // the blocked unit: rows or positions
  e("/* 1x1 convolution as a matrix product: {} output channels x {} input channels (per group) x {} positions{};", g.M, CG, P,
    strided ? fmt::format(" (input read with stride {})", SW) : "");
  e(" * tasks: (image, block of {} {}, {} output channels). */", UB, strided ? "output rows" : "positions", OCB);
  open_tasks(e, {{"n", g.N, 1}, {u + "0", units, UB}, {"m", g.M, OCB}}, e.parallel(static_cast<double>(conv_macs(g))));
  if (NUB > 1) e("const int64_t {0}1 = {0}0 + {1} < {2} ? {0}0 + {1} : {2};", u, UB, units);
  const std::string end = NUB > 1 ? u + "1" : std::to_string(units);
  e("const float* restrict xn = {} + {};", X, group_offset(g, XS));
  for (int64_t j = 0; j < OCB; ++j) {
    e("float* restrict yp{} = {} + (n * {} + {}) * {};", j, Y, g.M, affine("m", 1, j), P);
    e("const float* restrict wm{} = {} + {};", j, W, j ? fmt::format("(m + {}) * {}", j, CG) : fmt::format("m * {}", CG));
  }
  // Loop header(s) over the task's positions; yi indexes the Y row / Y, xi the X row / X.
  auto open_positions = [&](const std::string& rowptrs_y, const std::string& rowptrs_x) {
    if (strided) {
      e("for (int64_t oh = oh0; oh < {}; ++oh) {{", end);
      if (!rowptrs_x.empty()) e("{}", rowptrs_x);
      if (!rowptrs_y.empty()) e("{}", rowptrs_y);
      simd(e, OW);
      e("for (int64_t ow = 0; ow < {}; ++ow) {{", OW);
    } else {
      simd(e, std::min(UB, P));
      e("for (int64_t p = p0; p < {}; ++p) {{", end);
    }
  };
  auto close_positions = [&] { e("}}"); if (strided) e("}}"); };
  const std::string yi = strided ? "ow" : "p", xi = strided ? affine("ow", SW, 0) : "p";
  auto yrow = [&](int64_t j) { return strided ? fmt::format("yr{}", j) : fmt::format("yp{}", j); };
  std::string yptrs;
  for (int64_t j = 0; j < OCB; ++j) yptrs += fmt::format("{}float* restrict yr{} = yp{} + oh * {};", j ? " " : "", j, j, OW);
  // Bias / zero.
  std::string init;
  for (int64_t j = 0; j < OCB; ++j)
    init += fmt::format("{}{}[{}] = {};", j ? " " : "", yrow(j), yi, e.has_in(2) ? fmt::format("{}[{}]", e.in(2), affine("m", 1, j)) : "0.0f");
  open_positions(strided ? yptrs : "", "");
  e("{}", init);
  close_positions();
  auto block = [&](const std::string& c, int64_t cu) {
    for (int64_t k = 0; k < cu; ++k)
      e("const float* restrict xq{} = xn + {};", k, c != "c" ? std::to_string((std::stoll(c) + k) * XS) : k ? fmt::format("(c + {}) * {}", k, XS) : fmt::format("c * {}", XS));
    for (int64_t j = 0; j < OCB; ++j) {
      std::string ws;
      for (int64_t k = 0; k < cu; ++k) ws += fmt::format("{}w{}_{} = wm{}[{}]", k ? ", " : "", j, k, j, affine(c, 1, k));
      e("const float {};", ws);
    }
    std::string xptrs;
    for (int64_t k = 0; k < cu; ++k) xptrs += fmt::format("{}const float* restrict xr{} = xq{} + oh * {};", k ? " " : "", k, k, SH * IW);
    open_positions(strided ? yptrs : "", strided ? xptrs : "");
    std::string xs;
    for (int64_t k = 0; k < cu; ++k) xs += fmt::format("{}a{} = {}{}[{}]", k ? ", " : "", k, strided ? "xr" : "xq", k, xi);
    e("const float {};", xs);
    for (int64_t j = 0; j < OCB; ++j) {
      std::string ex = fmt::format("{}[{}]", yrow(j), yi);
      for (int64_t k = 0; k < cu; ++k) ex = fmt::format("ONNXC_FMA(w{}_{}, a{}, {})", j, k, k, ex);
      e("{}[{}] = {};", yrow(j), yi, ex);
    }
    close_positions();
  };
  if (CG >= CU) {
    open_loop(e, "c", CG / CU * CU, CU);
    block("c", CU);
    e("}}");
  }
  if (CG % CU) {
    e("{{");
    block(std::to_string(CG / CU * CU), CG % CU);
    e("}}");
  }
  e("}}");
  e("}}");
  e("}}");
}

}  // namespace onnxc
