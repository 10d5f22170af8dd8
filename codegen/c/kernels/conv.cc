// codegen/c/kernels/conv.cc — Conv in C: which kernel runs a node, and whether the
// blocked one can (the layout pass asks). Plain NCHW, weights in ONNX's OIHW order, FMAs
// through ONNXC_FMA; one of four kernels (and a fill with the bias when every window lies in
// the padding):
//  - gemv (1×1 with one output position) and pointwise (other 1×1 convs): conv_pointwise.cc
//  - plane (2-D where a tile's buffers fit on the stack, not for depthwise convs on wide
//    planes) and direct (everything else): conv_nchw.cc
// NCHWc (2-D, constant W repacked by the layout pass): conv_nchwc.cc, for the variants of
// conv_blocking (ir/ops/conv.h); the filters of convs that run as Winograd F(2×2, 3×3)
// (conv_winograd) are asked into Layout::winograd from the pack-weights pass. Single-trip loops are emitted as blocks and very short
// loops get no simd hint (codegen/c/loops.h).
// 1-D, 2-D, 3-D (and 4-D) convs, groups, dilations, pads and auto_pad are tested against torch.
// Measured (2-core AVX-512 dev machine, gcc 12 -O3 -march=native, one thread): 3x3 convs
// 40–55 GFLOP/s, 1x1 ~45-50; with -mprefer-vector-width=512 (gcc otherwise picks 256-bit
// vectors) the plane kernel reaches 55–90. Known gaps: no register tiling (accumulators go
// through L1, in the NCHWc kernel too); weights of the plain kernels are not repacked.
#include <algorithm>

#include "codegen/c/kernels/conv.h"
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"

namespace onnxc {

void tap_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t td, int64_t* lo, int64_t* hi) {
  *lo = std::min(out, std::max<int64_t>(0, ceil_div(p - td, s)));
  *hi = std::min(out, floor_div(in - 1 + p - td, s) + 1);
  if (*hi < *lo) *hi = *lo;
}

std::string dim_name(size_t d, size_t r) {
  size_t from_end = r - 1 - d;
  if (from_end == 0) return "w";
  if (from_end == 1) return "h";
  if (from_end == 2) return "d";
  return std::to_string(d);
}

std::string group_offset(const ConvGeom& g, int64_t XS) {
  if (g.G == 1) return fmt::format("n * {}", g.C * XS);
  std::string grp = g.MG == 1 ? "m" : fmt::format("m / {}", g.MG);
  return fmt::format("(n * {} + {}) * {}", g.C, g.CG == 1 ? grp : grp + " * " + std::to_string(g.CG), XS);
}

int64_t pick_block(int64_t n, int64_t maxb) {
  for (int64_t b = maxb; b > 1; b /= 2)
    if (n % b == 0) return b;
  return 1;
}

namespace {

// Whether no output reads any input element: along some spatial dim every tap of every output
// falls in the padding (pads wider than the input with large strides). Such a conv is its
// bias (or zeros); the kernels below would declare weights and pointers they never read.
bool conv_reads_nothing(const ConvGeom& g) {
  for (size_t d = 0; d < g.rank(); ++d) {
    bool any = false;
    for (int64_t t = 0; t < g.k[d] && !any; ++t) {
      int64_t lo = 0, hi = 0;
      tap_range(g.in[d], g.out[d], g.s[d], g.pb[d], t * g.d[d], &lo, &hi);
      any = hi > lo;
    }
    if (!any) return true;
  }
  return false;
}

void emit_conv_padding_only(CEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const int64_t plane = g.out_size();
  if (g.N * g.M * plane == 0) return;
  e("/* every window lies in the padding: the output is {} */", e.has_in(2) ? "the bias" : "zero");
  e("for (int64_t nm = 0; nm < {}; ++nm) {{", g.N * g.M);
  e("const float v = {};", e.has_in(2) ? fmt::format("{}[nm % {}]", e.in(2), g.M) : "0.0f");
  e("float* restrict y = {} + nm * {};", e.out(0), plane);
  simd(e, plane);
  e("for (int64_t i = 0; i < {}; ++i) y[i] = v;", plane);
  e("}}");
}

void emit_conv(CEmit& e) {
  if (e.out_layout(0).is_nchwc()) return emit_conv_nchwc(e);
  const ConvGeom& g = conv_geom(e.node);
  if (conv_reads_nothing(g)) {
    e.variant = "padding";
    return emit_conv_padding_only(e);
  }
  bool one = true, strided = false;
  for (size_t i = 0; i < g.rank(); ++i) {
    one = one && g.k[i] == 1 && g.pb[i] == 0 && g.pe[i] == 0;
    strided = strided || g.s[i] != 1;
  }
  if (one && g.out_size() == 1) e.variant = "gemv", emit_conv_gemv(e);
  else if (one && !strided) e.variant = "pointwise", emit_conv_pointwise(e);
  // Depthwise on wide planes is memory-bound and the direct kernel does better there.
  else if (plane_fits(g) && (g.CG > 1 || g.out[1] < 16)) e.variant = "plane", emit_conv_plane(e);
  else if (one && g.rank() <= 2) e.variant = "pointwise", emit_conv_pointwise(e);
  else e.variant = "direct", emit_conv_direct(e);
}

// NCHWc: 2-D float32 convs with a constant W (the layout pass repacks it) in one of the
// variants of conv_blocking.
bool conv_nchwc(const Node& n, int64_t b) {
  const ConvGeom& g = conv_geom(n);
  if (g.rank() != 2 || b < 1 || !n.in(1) || !n.in(1)->constant || n.in(0)->dtype != DType::F32 || conv_reads_nothing(g)) return false;
  return conv_blocking(n, b, n.in(0)->layout.is_plain()).kind != ConvBlocking::None;
}

// The filter of a conv that runs as Winograd goes into the Winograd domain at compile time.
Layout conv_weight_layout(const Node& n, size_t input, const Target& t) {
  if (input != 1 || !conv_winograd(n, t)) return Layout::plain();
  return Layout::winograd(n.out(0)->layout.block);
}

}  // namespace

void register_conv(CKernelTable& t) { t["Conv"] = {emit_conv, conv_nchwc, nullptr, nullptr, conv_weight_layout}; }

}  // namespace onnxc
