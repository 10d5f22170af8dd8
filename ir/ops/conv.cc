// ir/ops/conv.cc — Conv (opsets 1–18): N-D convolution, float32, NCHW (X [N,C,D1..Dk],
// W [M,C/group,K1..Kk], optional B [M], Y [N,M,O1..Ok]), with group (depthwise included),
// strides, dilations, pads, auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID) and
// kernel_shape (optional; checked against W).
//
// Emitted C, plain NCHW, weights read in ONNX's OIHW order, FMAs through ONNXC_FMA; one of
// four kernels (emit() picks):
//  - pointwise (1×1, stride 1, unpadded; also strided 1×1 where the plane kernel does not
//    fit): a matrix product Y[m,p] = B[m] + Σc W[m,c]·X[c,p] over the flattened positions
//    (strided: per output row, X read with stride SW). Tasks (image, block of positions,
//    8 output channels), so the X panel of a position block stays in L2 across channel
//    blocks; 4 input channels per step, so each Y load/store serves 32 FMAs.
//  - plane (2-D, where a tile's buffers fit on the stack; not for depthwise convs on wide
//    planes): per task (image, tile of output rows, block of output channels), chunks of
//    input channels are copied into a zero-padded stack buffer split into stride phases;
//    every tap then reads it with unit stride at a constant offset from the flat output
//    index, so one simd loop over the tile does all taps × 2–8 output channels,
//    accumulating on the stack (see emit_plane).
//  - direct (everything else: 1-D, 3-D and higher ranks, wide depthwise): tasks (image,
//    4 output channels); per output row (all spatial dims but the last) the row starts as
//    the bias, then for each input channel and each valid kernel position of the outer dims
//    (ranges computed per row) the last dimension is done with compile-time bounds: the
//    interior, where all KW taps are in range, as one simd loop doing KW taps × 4 channels
//    per element, and short per-tap edge loops.
//  - gemv (1×1 with a single output position, e.g. squeeze-excitation): dot products.
// NCHWc (2-D, constant W repacked by the layout pass): a fifth kernel, emit_nchwc, for
// regular, depthwise, first-layer (plain X) and whole-block grouped convs; tiles of output
// pixels x channel-block lanes, lanes innermost (see emit_nchwc).
// Compiler notes: in the plane kernel X loads are written inline in the FMA chains (clang 14
// does not vectorize that loop when they are hoisted into locals); the others hoist them
// (gcc 12 is 1.5x slower there with inline loads); single-trip loops are emitted as blocks
// and very short loops get no simd hint (clang warns it cannot vectorize them).
// 1-D, 2-D, 3-D (and 4-D) convs, groups, dilations, pads and auto_pad are tested against torch.
// Measured (2-core AVX-512 dev machine, gcc 12 -O3 -march=native, one thread): 3x3 convs
// 40–55 GFLOP/s, 1x1 ~45-50; with -mprefer-vector-width=512 (gcc otherwise picks 256-bit
// vectors) the plane kernel reaches 55–90. Known gaps: no register tiling (accumulators go
// through L1, in the NCHWc kernel too); the plane kernel copies its input per task (a few % of the
// work); 1x1 convs keep a scalar tail when the position count is not a multiple of 8;
// weights are not repacked.
#include <algorithm>
#include <tuple>

#include "codegen/c_emit.h"
#include "ir/ops/conv_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

// "2 * ow - 1", "ow + 3", "ow", "5" (var empty → constant).
std::string affine(const std::string& var, int64_t coef, int64_t off) {
  std::string s;
  if (!var.empty() && coef != 0) s = coef == 1 ? var : fmt::format("{} * {}", coef, var);
  if (s.empty()) return std::to_string(off);
  if (off > 0) s += fmt::format(" + {}", off);
  if (off < 0) s += fmt::format(" - {}", -off);
  return s;
}

// Valid output range [lo, hi) along one dim for kernel tap t: 0 <= o*s - p + t*d < in.
void tap_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t td, int64_t* lo, int64_t* hi) {
  *lo = std::min(out, std::max<int64_t>(0, ceil_div(p - td, s)));
  *hi = std::min(out, floor_div(in - 1 + p - td, s) + 1);
  if (*hi < *lo) *hi = *lo;
}

// Loop variable names of spatial dim d of r: last = w, then h, then d, then generic.
std::string dim_name(size_t d, size_t r) {
  size_t from_end = r - 1 - d;
  if (from_end == 0) return "w";
  if (from_end == 1) return "h";
  if (from_end == 2) return "d";
  return std::to_string(d);
}

// `omp simd` for a loop of `trip` iterations; none for very short loops (clang warns that
// it cannot vectorize them).
void simd(CEmit& e, int64_t trip) {
  if (trip >= 4) e("ONNXC_PRAGMA(omp simd)");
}

// Opens `for (int64_t v = 0; v < end; v += step) {`, or, when that would run once, a
// block declaring `const int64_t v = 0;` (clang 14 fails to vectorize simd loops nested in
// some single-trip loops). One `}` closes either.
void open_loop(CEmit& e, const std::string& v, int64_t end, int64_t step = 1) {
  if (end > 0 && end <= step) {
    e("{{");
    e("const int64_t {} = 0;", v);
  } else if (step == 1) {
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", v, end);
  } else {
    e("for (int64_t {0} = 0; {0} < {1}; {0} += {2}) {{", v, end, step);
  }
}

// The task loops of a kernel, (variable, end, step) outermost first: the single-trip ones
// become constants, then the others open, the first carrying `omp parallel for` that
// collapses them all when `par`. One `}` per loop closes them.
void open_tasks(CEmit& e, const std::vector<std::tuple<std::string, int64_t, int64_t>>& loops, bool par) {
  int64_t real = 0;
  for (auto& [v, end, step] : loops) real += end > step;
  for (auto& [v, end, step] : loops)
    if (end > 0 && end <= step) open_loop(e, v, end, step);
  bool first = true;
  for (auto& [v, end, step] : loops) {
    if (end > 0 && end <= step) continue;
    if (first && par) {
      if (real > 1) e("ONNXC_PRAGMA(omp parallel for collapse({}) schedule(static))", real);
      else e("ONNXC_PRAGMA(omp parallel for schedule(static))");
    }
    first = false;
    open_loop(e, v, end, step);
  }
}

// Offset of image n's input channels for the group of output channel m, "xn = X + ...".
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
    Shape ys{g.N, g.M};
    g.out.clear();
    for (size_t i = 0; i < g.rank(); ++i) {
      int64_t dk = (g.k[i] - 1) * g.d[i] + 1;
      if (at_.auto_pad == "SAME_UPPER" || at_.auto_pad == "SAME_LOWER") {
        int64_t o = ceil_div(g.in[i], g.s[i]);
        int64_t total = std::max<int64_t>(0, (o - 1) * g.s[i] + dk - g.in[i]);
        g.pb[i] = at_.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        g.pe[i] = total - g.pb[i];
      }
      int64_t span = g.in[i] + g.pb[i] + g.pe[i];
      if (span < dk)
        n.invalid(fmt::format("spatial dim {} of X: size {} plus pads {} is smaller than the dilated kernel {}", i, g.in[i],
                              g.pb[i] + g.pe[i], dk));
      g.out.push_back((span - dk) / g.s[i] + 1);
      ys.push_back(g.out.back());
    }
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

  // NCHWc (ir/layout.h, passes/layout.cc): 2-D float32 convs with a constant W (the layout
  // pass repacks it): regular, depthwise (group == C == M), first layer (group 1, X plain)
  // and grouped convs whose groups are whole channel blocks.
  bool supports_nchwc(const Node& n, int64_t b) const override {
    const ConvGeom& g = g_;
    if (g.rank() != 2 || b < 1 || !n.in(1) || !n.in(1)->constant || n.in(0)->dtype != DType::F32) return false;
    if (g.G == 1 || (g.G == g.C && g.G == g.M)) return true;
    return g.CG % b == 0 && g.MG % b == 0;
  }

  void emit(CEmit& e) const override {
    if (e.out_layout(0).is_nchwc()) return emit_nchwc(e);
    const ConvGeom& g = g_;
    bool one = true, strided = false;
    for (size_t i = 0; i < g.rank(); ++i) {
      one = one && g.k[i] == 1 && g.pb[i] == 0 && g.pe[i] == 0;
      strided = strided || g.s[i] != 1;
    }
    if (one && g.out_size() == 1) emit_gemv(e);
    else if (one && !strided) emit_pointwise(e);
    // Depthwise on wide planes is memory-bound and the direct kernel does better there.
    else if (plane_fits() && (g.CG > 1 || g.out[1] < 16)) emit_plane(e);
    else if (one && g.rank() <= 2) emit_pointwise(e);
    else emit_direct(e);
  }

  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }
  int64_t min_opset() const override { return 1; }  // Conv-1 and Conv-11 mean the same

 private:
  int64_t macs() const { return g_.N * g_.M * g_.out_size() * g_.CG * g_.k_size(); }

  // 1×1 conv with one output position (squeeze-excitation FCs, global features): per image
  // a matrix-vector product, a simd reduction over the input channels per output channel.
  void emit_gemv(CEmit& e) const {
    const ConvGeom& g = g_;
    const int64_t XS = g.in_size();
    e("/* 1x1 convolution on one position: per image, {} dot products of length {} */", g.M, g.CG);
    open_tasks(e, {{"n", g.N, 1}, {"m", g.M, 1}}, macs() >= (1 << 16));
    e("const float* restrict xn = {} + {};", e.in(0), group_offset(g, XS));
    e("const float* restrict wm = {} + m * {};", e.in(1), g.CG);
    e("float s = {};", e.has_in(2) ? e.in(2) + "[m]" : "0.0f");
    if (g.CG >= 4) e("ONNXC_PRAGMA(omp simd reduction(+:s))");
    // (a plain multiply-add: clang does not vectorize reductions through fmaf)
    e("for (int64_t c = 0; c < {}; ++c) s += wm[c] * xn[{}];", g.CG, affine("c", XS, 0));
    e("{}[n * {} + m] = s;", e.out(0), g.M);
    e("}}");
    e("}}");
  }

  // 1×1, no pads: Y[n,m,p] = B[m] + Σc W[m,c] X[n,c,p']. With unit strides p' = p over the
  // flattened positions; with strides (rank <= 2 only) per output row, X read with stride SW.
  void emit_pointwise(CEmit& e) const {
    const ConvGeom& g = g_;
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
    open_tasks(e, {{"n", g.N, 1}, {u + "0", units, UB}, {"m", g.M, OCB}}, macs() >= (1 << 16));
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

  // Plane kernel (2-D). The output is cut into tiles of RT rows; a task is (image, tile,
  // MT output channels). Per task, chunks of CH input channels are copied into a
  // zero-padded stack buffer xb split into stride phases (space-to-depth; only the phases
  // some tap reads), so every kernel tap reads it with unit stride at a constant offset
  // from the flat tile index q = oh * PWL + ow (PWL = phase row pitch; the PWL - OW extra
  // columns per row are computed and dropped). One simd loop over q then does all taps ×
  // OCB channels (kernels with more than 16 taps: a loop over kernel rows, KW taps each);
  // the MT channels' accumulators live on the stack (acc), so each copy serves MT/OCB
  // blocks. Stack use: xb <= 16 KiB, acc <= 32 KiB.
  struct Plane {
    int64_t RT, NT;  // output rows per tile, tiles
    int64_t QV;      // q loop trip count: Q rounded up to 8 (no scalar tail; the extra lanes read
                     // the zeroed slack after xb or the next channel and are dropped)
    int64_t XH, XW, PHL, PWL, PP, CB, Q, QP, CH, OCB, MT;
    std::vector<int64_t> rslot, cslot;  // buffer slot of each row / column phase, -1 = unused
    int64_t ncs;                        // column-phase slots
    int64_t slot(int64_t rph, int64_t cph) const { return (rslot[static_cast<size_t>(rph)] * ncs + cslot[static_cast<size_t>(cph)]) * PP; }
  };
  Plane plane_geom() const {
    const ConvGeom& g = g_;
    const int64_t SH = g.s[0], SW = g.s[1];
    Plane p{};
    p.XW = (g.out[1] - 1) * SW + (g.k[1] - 1) * g.d[1] + 1;
    p.PWL = (p.XW + SW - 1) / SW;
    // Tiles of RT output rows: about kPlaneQ output positions per tile (1x1: a quarter, so
    // that more output channels share each copy), fewer if one channel's copy would not fit.
    const int64_t qt = g.k_size() == 1 ? kPlaneQ / 4 : kPlaneQ;
    p.RT = std::clamp<int64_t>((qt - g.out[1]) / p.PWL + 1, 1, g.out[0]);
    for (;; --p.RT) {
      p.NT = (g.out[0] + p.RT - 1) / p.RT;
      p.RT = (g.out[0] + p.NT - 1) / p.NT;  // even tiles
      p.XH = (p.RT - 1) * SH + (g.k[0] - 1) * g.d[0] + 1;
      p.PHL = (p.XH + SH - 1) / SH;
      p.PP = p.PHL * p.PWL;
      if (p.RT == 1 || SH * SW * p.PP <= kPlaneXbFloats) break;
    }
    // Only the phases some tap reads get a slot (all of them when the kernel-row loop
    // computes phase offsets at run time, see emit_plane).
    bool all = g.k_size() > kPlaneUnrollTaps;
    std::vector<bool> ru(static_cast<size_t>(SH), all), cu(static_cast<size_t>(SW), all);
    for (int64_t kh = 0; kh < g.k[0]; ++kh) ru[static_cast<size_t>(kh * g.d[0] % SH)] = true;
    for (int64_t kw = 0; kw < g.k[1]; ++kw) cu[static_cast<size_t>(kw * g.d[1] % SW)] = true;
    int64_t nrs = 0;
    p.ncs = 0;
    for (bool u : ru) p.rslot.push_back(u ? nrs++ : -1);
    for (bool u : cu) p.cslot.push_back(u ? p.ncs++ : -1);
    p.CB = nrs * p.ncs * p.PP;
    p.Q = (p.RT - 1) * p.PWL + g.out[1];
    p.QV = (p.Q + 7) / 8 * 8;
    p.QP = (p.Q + 15) / 16 * 16;
    // Input channels per copy: what fits the buffer, rounded down to a divisor of CG when
    // that loses less than half.
    p.CH = std::max<int64_t>(1, std::min<int64_t>(g.CG, kPlaneXbFloats / p.CB));
    for (int64_t ch = p.CH; 2 * ch > p.CH; --ch)
      if (g.CG % ch == 0) { p.CH = ch; break; }
    p.OCB = pick_block(g.MG, g.k_size() == 1 ? 4 : p.Q >= 512 ? 8 : 2);
    // Channels per task: as many blocks as the accumulator budget allows, keeping >= 8
    // tasks per image where there are enough channels.
    p.MT = p.OCB;
    while (g.MG % (2 * p.MT) == 0 && 2 * p.MT * p.QP <= kPlaneAccFloats && p.NT * g.M / (2 * p.MT) >= 8) p.MT *= 2;
    return p;
  }
  static constexpr int64_t kPlaneUnrollTaps = 16;
  static constexpr int64_t kPlaneQ = 1024;
  static constexpr int64_t kPlaneXbFloats = 4096, kPlaneAccFloats = 8192;  // 16 + 32 KiB of stack
  bool plane_fits() const {
    if (g_.rank() != 2) return false;
    // Every stride phase needs a slot of the plane buffer, so strides beyond its size never
    // fit (and plane_geom would size its phase tables by them).
    if (g_.s[0] > kPlaneXbFloats || g_.s[1] > kPlaneXbFloats || g_.s[0] * g_.s[1] > kPlaneXbFloats) return false;
    Plane p = plane_geom();
    return p.OCB * p.QP <= kPlaneAccFloats && p.CB <= kPlaneXbFloats;
  }

  void emit_plane(CEmit& e) const {
    const ConvGeom& g = g_;
    const Plane pl = plane_geom();
    const int64_t OCB = pl.OCB, MT = pl.MT, KS = g.k_size(), XS = g.in_size(), YS = g.out_size();
    const int64_t KH = g.k[0], KW = g.k[1], SH = g.s[0], SW = g.s[1], DH = g.d[0], DW = g.d[1];
    const int64_t PT = g.pb[0], PL = g.pb[1], IH = g.in[0], IW = g.in[1], OH = g.out[0], OW = g.out[1];
    const std::string X = e.in(0), W = e.in(1), Y = e.out(0);
    const int64_t RT = pl.RT, NT = pl.NT;
    e("/* direct convolution on a padded copy: tasks (image, {}{} output channels); per chunk of {} input channels,", NT > 1 ? fmt::format("tile of {} output rows, ", RT) : "", MT, pl.CH);
    e(" * a zero-padded, {}x{}-phase split copy ({} x {} per phase) in xb, read with unit stride by all {} taps at", SH, SW, pl.PHL, pl.PWL, KS);
    e(" * constant offsets from the flat output index q = oh * {} + ow; {} channels at a time accumulate in acc. */", pl.PWL, OCB);
    bool par = macs() >= (1 << 16) && g.N * NT * (g.M / MT) > 1;
    if (NT > 1) open_tasks(e, {{"n", g.N, 1}, {"oh0", OH, RT}, {"m", g.M, MT}}, par);
    else open_tasks(e, {{"n", g.N, 1}, {"m", g.M, MT}}, par);
    e("float xb[{}];", pl.CH * pl.CB + pl.QV - pl.Q);
    e("float acc[{}];", MT * pl.QP);
    e("memset(xb, 0, sizeof xb);");
    e("memset(acc, 0, sizeof acc);");
    e("const float* restrict xn = {} + {};", X, group_offset(g, XS));
    open_loop(e, "c0", g.CG, pl.CH);
    std::string cn = std::to_string(pl.CH);
    if (g.CG % pl.CH) {
      e("const int64_t cn = {0} - c0 < {1} ? {0} - c0 : {1};", g.CG, pl.CH);
      cn = "cn";
    }
    // Copy the phases some tap reads: padded row rr = r * SH + rph is input row rr - PT,
    // padded column jj = j * SW + cph is input column jj - PL.
    if (cn == "cn") e("for (int64_t cc = 0; cc < cn; ++cc) {{");
    else open_loop(e, "cc", pl.CH);
    e("const float* restrict xs = xn + (c0 + cc) * {};", XS);
    e("float* restrict xd = xb + cc * {};", pl.CB);
    for (int64_t rph = 0; rph < SH; ++rph) {
      if (pl.rslot[static_cast<size_t>(rph)] < 0) continue;
      // Phase row r of the tile is input row (oh0 + r) * SH + rph - PT.
      int64_t A = ceil_div(PT - rph, SH), B = floor_div(IH - 1 + PT - rph, SH) + 1;
      if (NT == 1) {
        int64_t r0 = std::max<int64_t>(0, A), r1 = std::min(pl.PHL, B);
        if (r1 <= r0) continue;
        e("for (int64_t r = {}; r < {}; ++r) {{", r0, r1);
        e("const float* restrict xsr = xs + ({}) * {};", affine("r", SH, rph - PT), IW);
      } else {
        e("const int64_t r0_{0} = {1} - oh0 > 0 ? {1} - oh0 : 0, r1_{0} = {2} - oh0 < {3} ? {2} - oh0 : {3};", rph, A, B, pl.PHL);
        e("for (int64_t r = r0_{0}; r < r1_{0}; ++r) {{", rph);
        e("const float* restrict xsr = xs + ({}) * {};", affine("(oh0 + r)", SH, rph - PT), IW);
      }
      e("float* restrict xdr = xd + {};", affine("r", pl.PWL, pl.rslot[static_cast<size_t>(rph)] * pl.ncs * pl.PP));
      for (int64_t cph = 0; cph < SW; ++cph) {
        if (pl.cslot[static_cast<size_t>(cph)] < 0) continue;
        int64_t lo = std::max<int64_t>(0, ceil_div(PL - cph, SW)), hi = std::min(pl.PWL, floor_div(IW - 1 + PL - cph, SW) + 1);
        if (hi <= lo) continue;
        e("for (int64_t j = {}; j < {}; ++j) xdr[{}] = xsr[{}];", lo, hi, affine("j", 1, pl.cslot[static_cast<size_t>(cph)] * pl.PP), affine("j", SW, cph - PL));
      }
      e("}}");
    }
    e("}}");
    // Compute: per block of OCB output channels, all channels of the chunk.
    bool unroll_all = KS <= kPlaneUnrollTaps;
    // Offset of tap (kh, kw) from q; kh < 0: the column part only (row part at run time,
    // where every phase has its slot: slot(rph, cph) = (rph * SW + cph) * PP).
    auto tap_off = [&](int64_t kh, int64_t kw) {
      if (kh < 0) return pl.slot(0, kw * DW % SW) + (kw * DW) / SW;
      return pl.slot(kh * DH % SH, kw * DW % SW) + (kh * DH) / SH * pl.PWL + (kw * DW) / SW;
    };
    // Tiny kernels (1x1): CU input channels per step so each accumulator load/store serves
    // CU * KS FMAs.
    int64_t CU = 1;
    if (g.CG % pl.CH == 0)
      while (CU < 4 && pl.CH % (2 * CU) == 0 && 2 * CU * KS <= 4) CU *= 2;
    std::vector<std::pair<std::string, int64_t>> taps;  // (weight index expr, x offset)
    if (unroll_all) {
      for (int64_t u = 0; u < CU; ++u)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) taps.push_back({std::to_string(u * KS + kh * KW + kw), u * pl.CB + tap_off(kh, kw)});
    } else {
      for (int64_t kw = 0; kw < KW; ++kw) taps.push_back({affine("kh", KW, kw), tap_off(-1, kw)});
    }
    if (MT > OCB) e("for (int64_t mb = 0; mb < {}; mb += {}) {{", MT, OCB);
    const std::string mm = MT > OCB ? "m + mb" : "m";
    for (int64_t j = 0; j < OCB; ++j)
      e("float* restrict ac{} = acc{};", j, MT > OCB ? fmt::format(" + (mb + {}) * {}", j, pl.QP) : j ? fmt::format(" + {}", j * pl.QP) : "");
    if (cn == "cn") e("for (int64_t cc = 0; cc < cn; ++cc) {{");  // CU is 1 here
    else open_loop(e, "cc", pl.CH, CU);
    e("const float* restrict xd = xb + cc * {};", pl.CB);
    for (int64_t j = 0; j < OCB; ++j)
      e("const float* restrict wc{} = {} + (({}{}) * {} + c0 + cc) * {};", j, W, mm, j ? fmt::format(" + {}", j) : "", g.CG, KS);
    if (!unroll_all) {
      e("for (int64_t kh = 0; kh < {}; ++kh) {{", KH);
      if (SH == 1) e("const float* restrict xk = xd + kh * {};", DH * pl.PWL);
      else e("const float* restrict xk = xd + kh * {} % {} * {} + kh * {} / {} * {};", DH, SH, SW * pl.PP, DH, SH, pl.PWL);
    }
    const std::string xp = unroll_all ? "xd" : "xk";
    for (int64_t j = 0; j < OCB; ++j) {
      std::string ws;
      for (size_t t = 0; t < taps.size(); ++t) ws += fmt::format("{}w{}_{} = wc{}[{}]", t ? ", " : "", j, t, j, taps[t].first);
      e("const float {};", ws);
    }
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t q = 0; q < {}; ++q) {{", pl.QV);
    for (int64_t j = 0; j < OCB; ++j) {
      std::string ex = fmt::format("ac{}[q]", j);
      for (size_t t = 0; t < taps.size(); ++t) ex = fmt::format("ONNXC_FMA(w{}_{}, {}[{}], {})", j, t, xp, affine("q", 1, taps[t].second), ex);
      e("ac{}[q] = {};", j, ex);
    }
    e("}}");
    if (!unroll_all) e("}}");
    e("}}");
    if (MT > OCB) e("}}");
    e("}}");
    // Write out (+ bias), dropping the extra columns.
    e("for (int64_t j = 0; j < {}; ++j) {{", MT);
    e("float* restrict yp = {} + (n * {} + m + j) * {}{};", Y, g.M, YS, NT > 1 ? fmt::format(" + oh0 * {}", OW) : "");
    e("const float* restrict ap = acc + j * {};", pl.QP);
    e("const float b = {};", e.has_in(2) ? fmt::format("{}[m + j]", e.in(2)) : "0.0f");
    if (NT > 1 && OH % RT) e("for (int64_t oh = 0; oh < {0} && oh0 + oh < {1}; ++oh) {{", RT, OH);
    else e("for (int64_t oh = 0; oh < {}; ++oh) {{", RT);
    simd(e, OW);
    e("for (int64_t ow = 0; ow < {}; ++ow) yp[oh * {} + ow] = ap[oh * {} + ow] + b;", OW, OW, pl.PWL);
    e("}}");
    e("}}");
    e("}}");
    if (NT > 1) e("}}");
    e("}}");
  }

  void emit_direct(CEmit& e) const {
    const ConvGeom& g = g_;
    const size_t r = g.rank(), L = r - 1;
    const int64_t OCB = pick_block(g.MG, 4);
    const int64_t XS = g.in_size(), YS = g.out_size(), KS = g.k_size();
    const int64_t OL = g.out[L], KL = g.k[L], SL = g.s[L], DL = g.d[L], PL = g.pb[L];
    const Shape xst = strides_of(g.in), kst = strides_of(g.k), yst = strides_of(g.out);
    const std::string X = e.in(0), W = e.in(1), Y = e.out(0);
    std::vector<std::string> on(r), kn(r), in_(r);
    for (size_t d = 0; d < r; ++d) on[d] = "o" + dim_name(d, r), kn[d] = "k" + dim_name(d, r), in_[d] = "i" + dim_name(d, r);
    const std::string ow = on[L];

    e("/* direct convolution: tasks (image, {} output channels); per output row, channel and kernel row, the last", OCB);
    e(" * dimension in an interior loop (all {} taps in range) and edge loops per tap. */", KL);
    bool par = macs() >= (1 << 16) && g.N * (g.M / OCB) > 1;
    open_tasks(e, {{"n", g.N, 1}, {"m", g.M, OCB}}, par);
    e("const float* restrict xn = {} + {};", X, group_offset(g, XS));
    for (int64_t j = 0; j < OCB; ++j) {
      e("float* restrict yp{} = {} + (n * {} + {}) * {};", j, Y, g.M, affine("m", 1, j), YS);
      e("const float* restrict wm{} = {} + {};", j, W, j ? fmt::format("(m + {}) * {}", j, g.CG * KS) : fmt::format("m * {}", g.CG * KS));
    }
    if (e.has_in(2)) {
      std::string bs;
      for (int64_t j = 0; j < OCB; ++j) bs += fmt::format("{}b{} = {}[{}]", j ? ", " : "", j, e.in(2), affine("m", 1, j));
      e("const float {};", bs);
    }
    // Outer spatial dims: output loop and the valid kernel range of this row.
    std::vector<std::string> klo(r, "0"), khi(r);
    for (size_t d = 0; d < L; ++d) {
      e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", on[d], g.out[d]);
      e("const int64_t {} = {};", in_[d], affine(on[d], g.s[d], -g.pb[d]));
      khi[d] = std::to_string(g.k[d]);
      bool low_ok = g.pb[d] == 0;
      bool high_ok = (g.out[d] - 1) * g.s[d] - g.pb[d] + (g.k[d] - 1) * g.d[d] <= g.in[d] - 1;
      if (!low_ok) {
        klo[d] = kn[d] + "0";
        if (g.d[d] == 1) e("const int64_t {0} = {1} < 0 ? -{1} : 0;", klo[d], in_[d]);
        else e("const int64_t {0} = {1} < 0 ? (-{1} + {2}) / {3} : 0;", klo[d], in_[d], g.d[d] - 1, g.d[d]);
      }
      if (!high_ok) {
        khi[d] = kn[d] + "1";
        if (g.d[d] == 1) e("const int64_t {0} = {1} - {2} < {3} ? {1} - {2} : {3};", khi[d], g.in[d], in_[d], g.k[d]);
        else
          e("const int64_t {0} = {2} > {1} ? 0 : ({1} - {2}) / {3} + 1 < {4} ? ({1} - {2}) / {3} + 1 : {4};", khi[d],
            g.in[d] - 1, in_[d], g.d[d], g.k[d]);
      }
    }
    std::string yoff;
    for (size_t d = 0; d < L; ++d) yoff += fmt::format("{}{}", yoff.empty() ? "" : " + ", affine(on[d], yst[d], 0));
    for (int64_t j = 0; j < OCB; ++j)
      e("float* restrict r{} = yp{}{};", j, j, yoff.empty() ? "" : " + " + yoff);
    std::string init;
    for (int64_t j = 0; j < OCB; ++j) init += fmt::format(" r{}[{}] = {};", j, ow, e.has_in(2) ? fmt::format("b{}", j) : "0.0f");
    simd(e, OL);
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{{2} }}", ow, OL, init);
    open_loop(e, "c", g.CG);
    e("const float* restrict xc = xn + c * {};", XS);
    for (int64_t j = 0; j < OCB; ++j) e("const float* restrict wc{} = wm{} + c * {};", j, j, KS);
    for (size_t d = 0; d < L; ++d) e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) {{", kn[d], klo[d], khi[d]);
    std::string xoff, woff;
    for (size_t d = 0; d < L; ++d) {
      xoff += fmt::format("{}({} + {}) * {}", xoff.empty() ? "" : " + ", in_[d], affine(kn[d], g.d[d], 0), xst[d]);
      woff += fmt::format("{}{}", woff.empty() ? "" : " + ", affine(kn[d], kst[d], 0));
    }
    e("const float* restrict xr = xc{};", xoff.empty() ? "" : " + " + xoff);
    for (int64_t j = 0; j < OCB; ++j) {
      std::string ws;
      for (int64_t t = 0; t < KL; ++t)
        ws += fmt::format("{}w{}_{} = wc{}[{}]", t ? ", " : "", j, t, j, woff.empty() ? std::to_string(t) : woff + (t ? " + " + std::to_string(t) : ""));
      e("const float {};", ws);
    }
    // Last dim: interior [lo, hi) where all taps are valid, edges per tap.
    std::vector<int64_t> tlo(static_cast<size_t>(KL)), thi(static_cast<size_t>(KL));
    int64_t lo = 0, hi = OL;
    for (int64_t t = 0; t < KL; ++t) {
      tap_range(g.in[L], OL, SL, PL, t * DL, &tlo[static_cast<size_t>(t)], &thi[static_cast<size_t>(t)]);
      lo = std::max(lo, tlo[static_cast<size_t>(t)]);
      hi = std::min(hi, thi[static_cast<size_t>(t)]);
    }
    lo = std::min(lo, OL);
    hi = std::max(hi, lo);
    // Edges first: clang does not vectorize the interior loop when a later edge statement
    // reloads an element the loop read last (GVN turns it into a loop live-out).
    for (int64_t t = 0; t < KL; ++t) {
      int64_t a = tlo[static_cast<size_t>(t)], z = thi[static_cast<size_t>(t)];
      for (auto [s0, s1] : {std::pair{a, std::min(z, lo)}, std::pair{std::max(a, hi), z}}) {
        if (s1 <= s0) continue;
        std::string stmt;
        if (s1 - s0 == 1) {
          for (int64_t j = 0; j < OCB; ++j)
            stmt += fmt::format("{}r{}[{}] = ONNXC_FMA(w{}_{}, xr[{}], r{}[{}]);", j ? " " : "", j, s0, j, t, s0 * SL + t * DL - PL, j, s0);
          e("{}", stmt);
          continue;
        }
        for (int64_t j = 0; j < OCB; ++j)
          stmt += fmt::format(" r{0}[{1}] = ONNXC_FMA(w{0}_{2}, xr[{3}], r{0}[{1}]);", j, ow, t, affine(ow, SL, t * DL - PL));
        e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) {{{3} }}", ow, s0, s1, stmt);
      }
    }
    if (hi > lo) {
      simd(e, hi - lo);
      e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) {{", ow, lo, hi);
      std::string as;
      for (int64_t t = 0; t < KL; ++t) as += fmt::format("{}a{} = xr[{}]", t ? ", " : "", t, affine(ow, SL, t * DL - PL));
      e("const float {};", as);
      for (int64_t j = 0; j < OCB; ++j) {
        std::string ex = fmt::format("r{}[{}]", j, ow);
        for (int64_t t = 0; t < KL; ++t) ex = fmt::format("ONNXC_FMA(w{}_{}, a{}, {})", j, t, t, ex);
        e("r{}[{}] = {};", j, ow, ex);
      }
      e("}}");
    }
    for (size_t d = 0; d < L; ++d) e("}}");  // kernel loops
    e("}}");                                 // c
    for (size_t d = 0; d < L; ++d) e("}}");  // output loops
    e("}}");
    e("}}");
  }

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
  void emit_nchwc(CEmit& e) const {
    const ConvGeom& g = g_;
    const int64_t b = e.out_layout(0).block;
    const bool first = e.in_layout(0).is_plain();
    const bool dw = !first && g.G > 1 && g.G == g.C && g.G == g.M;
    ONNXC_ASSERT(g.rank() == 2, "NCHWc conv of rank " + std::to_string(g.rank()));
    ONNXC_ASSERT(first ? g.G == 1 : e.in_layout(0) == Layout::nchwc(b), "NCHWc conv: X is stored as " + e.node.in(0)->type_str());
    const int64_t bi = first || dw ? 1 : b;
    ONNXC_ASSERT(e.in_layout(1) == Layout::filter(b, bi), "NCHWc conv: W is stored as " + e.node.in(1)->type_str());
    ONNXC_ASSERT(dw || g.G == 1 || (g.CG % b == 0 && g.MG % b == 0), "NCHWc conv: groups are not whole blocks");
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
    open_tasks(e, {{"n", g.N, 1}, {"ob", MB, 1}, {"oh", OH, 1}}, macs() >= (1 << 16) && g.N * MB * OH > 1);
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

  ConvAttrs at_;
  ConvGeom g_;
};

}  // namespace

void register_conv(OpTable& t) {
  t["Conv"] = [] { return std::unique_ptr<Op>(std::make_unique<Conv>()); };
}

}  // namespace onnxc
