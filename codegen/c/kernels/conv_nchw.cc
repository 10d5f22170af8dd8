// codegen/c/kernels/conv_nchw.cc — C kernels for plain-NCHW convolutions with a spatial
// kernel (weights read in ONNX's OIHW order):
//  - plane (2-D, where a tile's buffers fit on the stack; not for depthwise convs on wide
//    planes): per task (image, tile of output rows, block of output channels), chunks of
//    input channels are copied into a zero-padded stack buffer split into stride phases;
//    every tap then reads it with unit stride at a constant offset from the flat output
//    index, so one simd loop over the tile does all taps × 2–8 output channels,
//    accumulating on the stack (see emit_conv_plane).
//  - direct (everything else: 1-D, 3-D and higher ranks, wide depthwise): tasks (image,
//    4 output channels); per output row (all spatial dims but the last) the row starts as
//    the bias, then for each input channel and each valid kernel position of the outer dims
//    (ranges computed per row) the last dimension is done with compile-time bounds: the
//    interior, where all KW taps are in range, as one simd loop doing KW taps × 4 channels
//    per element, and short per-tap edge loops.
// Compiler notes: in the plane kernel X loads are written inline in the FMA chains (clang 14
// does not vectorize that loop when they are hoisted into locals); the direct kernel hoists
// them (gcc 12 is 1.5x slower there with inline loads). Known gap: the plane kernel copies
// its input per task (a few % of the work).
#include <algorithm>

#include "codegen/c/kernels/conv.h"

namespace onnxc {
namespace {

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

constexpr int64_t kPlaneUnrollTaps = 16;
constexpr int64_t kPlaneQ = 1024;
constexpr int64_t kPlaneXbFloats = 4096, kPlaneAccFloats = 8192;  // 16 + 32 KiB of stack

Plane plane_geom(const ConvGeom& g) {
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

}  // namespace

bool plane_fits(const ConvGeom& g) {
  if (g.rank() != 2) return false;
  // Every stride phase needs a slot of the plane buffer, so strides beyond its size never
  // fit (and plane_geom would size its phase tables by them).
  if (g.s[0] > kPlaneXbFloats || g.s[1] > kPlaneXbFloats || g.s[0] * g.s[1] > kPlaneXbFloats) return false;
  Plane p = plane_geom(g);
  return p.OCB * p.QP <= kPlaneAccFloats && p.CB <= kPlaneXbFloats;
}

namespace {

// The parts of the plane conv's task (emit_conv_plane): the chunk's padded phase copy, the
// accumulation of its channels, the write-out.
struct PlaneConv {
  CEmit& e;
  const ConvGeom& g;
  const Plane pl;
  PlaneConv(CEmit& em, const ConvGeom& geom) : e(em), g(geom), pl(plane_geom(geom)) {}

  // Copy the phases some tap reads of cn channels from c0: padded row rr = r * SH + rph is
  // input row rr - PT, padded column jj = j * SW + cph is input column jj - PL.
  void copy_phases(const std::string& cn) {
    const int64_t XS = g.in_size(), SH = g.s[0], SW = g.s[1], PT = g.pb[0], PL = g.pb[1], IH = g.in[0], IW = g.in[1];
    if (cn == "cn") e("for (int64_t cc = 0; cc < cn; ++cc) {{");
    else open_loop(e, "cc", pl.CH);
    e("const float* restrict xs = xn + (c0 + cc) * {};", XS);
    e("float* restrict xd = xb + cc * {};", pl.CB);
    for (int64_t rph = 0; rph < SH; ++rph) {
      if (pl.rslot[static_cast<size_t>(rph)] < 0) continue;
      // The columns each phase copies (the same for every row); none when a pad wider than the
      // input leaves every column of the tile in padding: then the row loop copies nothing.
      auto col_range = [&](int64_t cph) {
        return std::pair{std::max<int64_t>(0, ceil_div(PL - cph, SW)), std::min(pl.PWL, floor_div(IW - 1 + PL - cph, SW) + 1)};
      };
      bool any_col = false;
      for (int64_t cph = 0; cph < SW; ++cph)
        if (pl.cslot[static_cast<size_t>(cph)] >= 0 && col_range(cph).second > col_range(cph).first) any_col = true;
      if (!any_col) continue;
      // Phase row r of the tile is input row (oh0 + r) * SH + rph - PT.
      int64_t A = ceil_div(PT - rph, SH), B = floor_div(IH - 1 + PT - rph, SH) + 1;
      if (pl.NT == 1) {
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
        auto [lo, hi] = col_range(cph);
        if (hi <= lo) continue;
        e("for (int64_t j = {}; j < {}; ++j) xdr[{}] = xsr[{}];", lo, hi, affine("j", 1, pl.cslot[static_cast<size_t>(cph)] * pl.PP),
          affine("j", SW, cph - PL));
      }
      e("}}");
    }
    e("}}");
  }

  // Offset of tap (kh, kw) from q; kh < 0: the column part only (row part at run time,
  // where every phase has its slot: slot(rph, cph) = (rph * SW + cph) * PP).
  int64_t tap_off(int64_t kh, int64_t kw) const {
    const int64_t SH = g.s[0], SW = g.s[1], DH = g.d[0], DW = g.d[1];
    if (kh < 0) return pl.slot(0, kw * DW % SW) + (kw * DW) / SW;
    return pl.slot(kh * DH % SH, kw * DW % SW) + (kh * DH) / SH * pl.PWL + (kw * DW) / SW;
  }

  // Per block of OCB output channels, all cn channels of the chunk into acc.
  void accumulate(const std::string& cn) {
    const int64_t OCB = pl.OCB, MT = pl.MT, KS = g.k_size(), KH = g.k[0], KW = g.k[1], SH = g.s[0], SW = g.s[1], DH = g.d[0];
    const bool unroll_all = KS <= kPlaneUnrollTaps;
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
      e("const float* restrict wc{} = {} + (({}{}) * {} + c0 + cc) * {};", j, e.in(1), mm, j ? fmt::format(" + {}", j) : "", g.CG, KS);
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
  }

  // Write out (+ bias), dropping the extra columns.
  void write_out() {
    const int64_t RT = pl.RT, OH = g.out[0], OW = g.out[1];
    e("for (int64_t j = 0; j < {}; ++j) {{", pl.MT);
    e("float* restrict yp = {} + (n * {} + m + j) * {}{};", e.out(0), g.M, g.out_size(), pl.NT > 1 ? fmt::format(" + oh0 * {}", OW) : "");
    e("const float* restrict ap = acc + j * {};", pl.QP);
    e("const float b = {};", e.has_in(2) ? fmt::format("{}[m + j]", e.in(2)) : "0.0f");
    if (pl.NT > 1 && OH % RT) e("for (int64_t oh = 0; oh < {0} && oh0 + oh < {1}; ++oh) {{", RT, OH);
    else e("for (int64_t oh = 0; oh < {}; ++oh) {{", RT);
    simd(e, OW);
    e("for (int64_t ow = 0; ow < {}; ++ow) yp[oh * {} + ow] = ap[oh * {} + ow] + b;", OW, OW, pl.PWL);
    e("}}");
    e("}}");
  }
};

}  // namespace

void emit_conv_plane(CEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  PlaneConv k(e, g);
  const Plane& pl = k.pl;
  e("/* direct convolution on a padded copy: tasks (image, {}{} output channels); per chunk of {} input channels,", pl.NT > 1 ? fmt::format("tile of {} output rows, ", pl.RT) : "", pl.MT, pl.CH);
  e(" * a zero-padded, {}x{}-phase split copy ({} x {} per phase) in xb, read with unit stride by all {} taps at", g.s[0], g.s[1], pl.PHL, pl.PWL, g.k_size());
  e(" * constant offsets from the flat output index q = oh * {} + ow; {} channels at a time accumulate in acc. */", pl.PWL, pl.OCB);
  bool par = e.parallel(static_cast<double>(conv_macs(g))) && g.N * pl.NT * (g.M / pl.MT) > 1;
  // A strided conv's tap loop over the phases of xb: clang 14 does not vectorize it as an
  // orphaned `omp for` (a value of the loop stays live after it; -Wpass-failed), so its tasks
  // keep their own fork/join in the run's parallel region.
  if (g.s[0] * g.s[1] > 1) e.own_region = "a strided conv's tap loop does not vectorize as an orphaned omp for";
  if (pl.NT > 1) open_tasks(e, {{"n", g.N, 1}, {"oh0", g.out[0], pl.RT}, {"m", g.M, pl.MT}}, par);
  else open_tasks(e, {{"n", g.N, 1}, {"m", g.M, pl.MT}}, par);
  e("float xb[{}];", pl.CH * pl.CB + pl.QV - pl.Q);
  e("float acc[{}];", pl.MT * pl.QP);
  e("memset(xb, 0, sizeof xb);");
  e("memset(acc, 0, sizeof acc);");
  e("const float* restrict xn = {} + {};", e.in(0), group_offset(g, g.in_size()));
  open_loop(e, "c0", g.CG, pl.CH);
  std::string cn = std::to_string(pl.CH);
  if (g.CG % pl.CH) {
    e("const int64_t cn = {0} - c0 < {1} ? {0} - c0 : {1};", g.CG, pl.CH);
    cn = "cn";
  }
  k.copy_phases(cn);
  k.accumulate(cn);
  e("}}");
  k.write_out();
  e("}}");
  if (pl.NT > 1) e("}}");
  e("}}");
}

namespace {

// The parts of the direct conv's task (emit_conv_direct): the loops over the outer output
// dims with each one's valid kernel range, and the taps of the last dim.
struct DirectConv {
  CEmit& e;
  const ConvGeom& g;
  size_t r, L;  // rank, the last dim
  int64_t OCB;  // output channels per task
  std::vector<std::string> on, kn, in_;  // per dim: output, kernel and input index names
  std::vector<std::string> klo, khi;     // per outer dim: its valid kernel range
  DirectConv(CEmit& em, const ConvGeom& geom) : e(em), g(geom), r(geom.rank()), L(r - 1), OCB(pick_block(geom.MG, 4)), on(r), kn(r), in_(r) {
    for (size_t d = 0; d < r; ++d) on[d] = "o" + dim_name(d, r), kn[d] = "k" + dim_name(d, r), in_[d] = "i" + dim_name(d, r);
    klo.assign(r, "0");
    khi.assign(r, "");
  }

  // Outer spatial dims: the output loop and the valid kernel range of this row.
  void open_outer() {
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
  }

  // The last dim's taps for the input row at xr (weights at woff in wcJ): the edges per tap,
  // then the interior [lo, hi) where all taps are valid.
  void last_dim(const std::string& xoff, const std::string& woff) {
    const int64_t OL = g.out[L], KL = g.k[L], SL = g.s[L], DL = g.d[L], PL = g.pb[L];
    const std::string ow = on[L];
    std::vector<int64_t> tlo(static_cast<size_t>(KL)), thi(static_cast<size_t>(KL));
    int64_t lo = 0, hi = OL;
    for (int64_t t = 0; t < KL; ++t) {
      tap_range(g.in[L], OL, SL, PL, t * DL, &tlo[static_cast<size_t>(t)], &thi[static_cast<size_t>(t)]);
      lo = std::max(lo, tlo[static_cast<size_t>(t)]);
      hi = std::min(hi, thi[static_cast<size_t>(t)]);
    }
    lo = std::min(lo, OL);
    hi = std::max(hi, lo);
    // Only the taps that reach some output column get a weight (a pad wider than the input can
    // leave a tap that reaches none: its weight would be an unused variable); with none, the row
    // pointer is unused too.
    auto tap_used = [&](int64_t t) { return thi[static_cast<size_t>(t)] > tlo[static_cast<size_t>(t)]; };
    bool any_tap = false;
    for (int64_t t = 0; t < KL; ++t) any_tap = any_tap || tap_used(t);
    e("const float* restrict xr = xc{};", xoff.empty() ? "" : " + " + xoff);
    if (!any_tap) e("(void)xr;");
    for (int64_t j = 0; j < OCB && any_tap; ++j) {
      std::string ws;
      for (int64_t t = 0; t < KL; ++t)
        if (tap_used(t))
          ws += fmt::format("{}w{}_{} = wc{}[{}]", ws.empty() ? "" : ", ", j, t, j,
                            woff.empty() ? std::to_string(t) : woff + (t ? " + " + std::to_string(t) : ""));
      e("const float {};", ws);
    }
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
    if (hi <= lo) return;
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
};

}  // namespace

void emit_conv_direct(CEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  DirectConv k(e, g);
  const size_t L = k.L;
  const int64_t OCB = k.OCB, XS = g.in_size(), KS = g.k_size(), OL = g.out[L];
  const Shape xst = strides_of(g.in), kst = strides_of(g.k), yst = strides_of(g.out);
  const std::string ow = k.on[L];

  e("/* direct convolution: tasks (image, {} output channels); per output row, channel and kernel row, the last", OCB);
  e(" * dimension in an interior loop (all {} taps in range) and edge loops per tap. */", g.k[L]);
  bool par = e.parallel(static_cast<double>(conv_macs(g))) && g.N * (g.M / OCB) > 1;
  open_tasks(e, {{"n", g.N, 1}, {"m", g.M, OCB}}, par);
  e("const float* restrict xn = {} + {};", e.in(0), group_offset(g, XS));
  for (int64_t j = 0; j < OCB; ++j) {
    e("float* restrict yp{} = {} + (n * {} + {}) * {};", j, e.out(0), g.M, affine("m", 1, j), g.out_size());
    e("const float* restrict wm{} = {} + {};", j, e.in(1), j ? fmt::format("(m + {}) * {}", j, g.CG * KS) : fmt::format("m * {}", g.CG * KS));
  }
  if (e.has_in(2)) {
    std::string bs;
    for (int64_t j = 0; j < OCB; ++j) bs += fmt::format("{}b{} = {}[{}]", j ? ", " : "", j, e.in(2), affine("m", 1, j));
    e("const float {};", bs);
  }
  k.open_outer();
  std::string yoff;
  for (size_t d = 0; d < L; ++d) yoff += fmt::format("{}{}", yoff.empty() ? "" : " + ", affine(k.on[d], yst[d], 0));
  for (int64_t j = 0; j < OCB; ++j)
    e("float* restrict r{} = yp{}{};", j, j, yoff.empty() ? "" : " + " + yoff);
  std::string init;
  for (int64_t j = 0; j < OCB; ++j) init += fmt::format(" r{}[{}] = {};", j, ow, e.has_in(2) ? fmt::format("b{}", j) : "0.0f");
  simd(e, OL);
  e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{{2} }}", ow, OL, init);
  open_loop(e, "c", g.CG);
  e("const float* restrict xc = xn + c * {};", XS);
  for (int64_t j = 0; j < OCB; ++j) e("const float* restrict wc{} = wm{} + c * {};", j, j, KS);
  for (size_t d = 0; d < L; ++d) e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) {{", k.kn[d], k.klo[d], k.khi[d]);
  std::string xoff, woff;
  for (size_t d = 0; d < L; ++d) {
    xoff += fmt::format("{}({} + {}) * {}", xoff.empty() ? "" : " + ", k.in_[d], affine(k.kn[d], g.d[d], 0), xst[d]);
    woff += fmt::format("{}{}", woff.empty() ? "" : " + ", affine(k.kn[d], kst[d], 0));
  }
  k.last_dim(xoff, woff);
  for (size_t d = 0; d < L; ++d) e("}}");  // kernel loops
  e("}}");                                 // c
  for (size_t d = 0; d < L; ++d) e("}}");  // output loops
  e("}}");
  e("}}");
}

}  // namespace onnxc
