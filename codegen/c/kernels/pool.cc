// codegen/c/kernels/pool.cc — MaxPool and AveragePool in C.
//
// Plain NCHW: loops over N*C planes (parallel), then output positions; each position
// computes its clipped window range per dim once, so the window loops carry no bounds
// tests. Dims where no window can be clipped use constant ranges. Window loops are short
// and stay scalar (no omp simd). A 2-D MaxPool without Indices (any of its types, the
// 8-bit ones of quantized models included) runs separably instead: column maxima over the
// window's rows, then row maxima, each a simd loop along the row (emit_max_pool_rows); with
// unit strides and "same" padding on whole planes, each pass one loop over the flattened
// plane and the rows' edges redone (emit_max_pool_flat; vectorized by gcc's -O3 without omp simd).
// Max is the compare-select `v > m ? v : m` in all kernels, not libm's fmaxf (a call per
// tap): with the running maximum m never NaN, a NaN tap is skipped as std::fmax skips it in
// the reference, and the NCHWc lane loop vectorizes.
// NCHWc (float32, no Indices): per output position, window taps outer and the channel-block
// lanes innermost (emit_pool_nchwc), any spatial rank; a window inside the input has its taps
// unrolled within one simd loop over the lanes. Work for the parallel decision: a
// load and a max or add per tap.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/pool.h"

namespace onnxc {
namespace {

// Inside output loop o{i}: the window start p{i} and the valid tap range [lo{i}, hi{i})
// of spatial dim i (shared by the plain and NCHWc kernels); with !bounds, only p{i} where no
// window is clipped in dim i.
void emit_window(CEmit& e, const PoolGeom& g, size_t i, bool bounds = true) {
  const PoolDim& d = g.dims[i];
  std::string start = d.s == 1 ? fmt::format("o{}", i) : fmt::format("o{} * {}", i, d.s);
  if (d.pb) start += fmt::format(" - {}", d.pb);
  e("const int64_t p{} = {};", i, start);
  if (!d.clipped()) {
    if (bounds) e("const int64_t lo{} = 0, hi{} = {};", i, i, d.k);
    return;
  }
  if (d.pb == 0) e("const int64_t lo{} = 0;", i);
  else if (d.d == 1) e("const int64_t lo{0} = p{0} < 0 ? -p{0} : 0;", i);
  else e("const int64_t lo{0} = p{0} < 0 ? (-p{0} + {1}) / {2} : 0;", i, d.d - 1, d.d);
  std::string room = fmt::format("{} - p{}", d.in, i);
  if (d.d != 1) room = fmt::format("({} + {}) / {}", room, d.d - 1, d.d);
  e("const int64_t r{} = {};", i, room);
  e("const int64_t hi{0} = r{0} < {1} ? r{0} : {1};", i, d.k);
}

// Where not PoolGeom::avg_all_full(): `cnt`, the taps of the current window inside the input (or inside the padded
// extent with count_include_pad), from the window bounds lo/hi and the pad offsets p.
void emit_avg_count(CEmit& e, const PoolGeom& g) {
  std::string cnt;
  for (size_t i = 0; i < g.dims.size(); ++i) {
    const PoolDim& d = g.dims[i];
    std::string f;
    if (!g.count_pad) f = fmt::format("(hi{0} - lo{0})", i);
    else if (!d.overhang()) f = std::to_string(d.k);
    else {
      std::string room = fmt::format("{} - p{}", d.in + d.pe, i);
      if (d.d != 1) room = fmt::format("({} + {}) / {}", room, d.d - 1, d.d);
      e("const int64_t e{} = {};", i, room);
      f = fmt::format("(e{0} < {1} ? e{0} : {1})", i, d.k);
    }
    cnt += (cnt.empty() ? "" : " * ") + f;
  }
  e("const int64_t cnt = {};", cnt);
}

// NCHW[b]c: tasks (image and channel block, first output dim); per output position the
// clipped window ranges as in the plain kernel. A window inside the input (up to 64 taps):
// one simd loop over the b lanes with the taps unrolled in it. Otherwise per tap one simd
// loop over the lanes into a lane accumulator. Padding lanes are pooled like the others (they only
// reach padding lanes of the output).
constexpr int64_t kMaxUnrolledTaps = 64;

void emit_pool_nchwc(CEmit& e) {
  const PoolGeom& g = pool_geom(e.node);
  const Shape& xs = e.in_shape(0);
  const size_t r = g.dims.size();
  const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
  ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b) && !e.node.out(1) && e.in_dtype(0) == DType::F32,
               "NCHWc pool on " + e.node.in(0)->type_str());
  int64_t planes = xs[0] * CB, in_sz = 1, out_sz = 1, taps = 1;
  for (auto& d : g.dims) in_sz *= d.in, out_sz *= d.out, taps *= d.k;
  e("/* NCHW{}c {}: per (image, channel block, output position) the window's valid taps, lanes innermost. */", b,
    g.max ? "max pooling" : "average pooling");
  const bool par = e.parallel(static_cast<double>(2 * planes * out_sz * taps * b)) && planes * g.dims[0].out > 1;
  // A window wholly inside the input: its taps at constant offsets, unrolled inside one simd
  // loop over the lanes, the running max or sum a scalar the compiler keeps in a register (a
  // `float a[b]` accumulator under variable-trip tap loops goes through memory every tap).
  // The same taps in the same order as the general path below, so the same results.
  const bool unroll = taps <= kMaxUnrolledTaps;
  std::string full;  // the condition for a whole window, over the dims where it can be clipped
  for (size_t i = 0; i < r; ++i)
    if (g.dims[i].clipped()) full += fmt::format("{}lo{} == 0 && hi{} == {}", full.empty() ? "" : " && ", i, i, g.dims[i].k);
  if (par) e.open_nest({.loops = {{"c", planes}, {"o0", g.dims[0].out}}, .schedule_static = true});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  for (size_t i = 0; i < r; ++i) {
    const PoolDim& d = g.dims[i];
    if (i > 0 || !par) e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", i, d.out);
    if (i == 0) {
      e("const float* restrict x = {} + c * {};", e.in(0), in_sz * b);
      e("float* restrict y = {} + c * {};", e.out(0), out_sz * b);
    }
    emit_window(e, g, i, !unroll || !full.empty());
  }
  std::string oidx = "o0";
  for (size_t i = 1; i < r; ++i) oidx = fmt::format("{} * {} + o{}", i == 1 ? oidx : "(" + oidx + ")", g.dims[i].out, i);
  if (unroll) {
    std::string base = "p0";
    for (size_t i = 1; i < r; ++i) base = fmt::format("{} * {} + p{}", i == 1 ? base : "(" + base + ")", g.dims[i].in, i);
    std::vector<int64_t> offs{0};  // each tap's offset from the window's first position, in positions
    for (size_t i = 0; i < r; ++i) {
      std::vector<int64_t> next;
      for (int64_t o : offs)
        for (int64_t k = 0; k < g.dims[i].k; ++k) next.push_back(o * g.dims[i].in + k * g.dims[i].d);
      offs = std::move(next);
    }
    if (!full.empty()) e("if ({}) {{", full);
    e("const float* restrict xb = x + ({}) * {};", base, b);
    e("float* restrict yp = y + ({}) * {};", oidx, b);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) {{", b);
    e("float m = {};", g.max ? "-INFINITY" : "0.0f");
    for (int64_t o : offs) {
      if (g.max) e("m = xb[{0} + l] > m ? xb[{0} + l] : m;", o * b);
      else e("m += xb[{} + l];", o * b);
    }
    if (g.max) e("yp[l] = m;");
    else e("yp[l] = m / {};", c_float(static_cast<double>(taps)));
    e("}}");
    if (!full.empty()) {
      e("continue;");
      e("}}");
    }
  }
  if (unroll && full.empty()) {  // no window is clipped
    for (size_t i = 0; i < r; ++i) e("}}");
    e("}}");
    return;
  }
  e("float a[{}];", b);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t l = 0; l < {}; ++l) a[l] = {};", b, g.max ? "-INFINITY" : "0.0f");
  for (size_t i = 0; i < r; ++i) {
    const PoolDim& d = g.dims[i];
    std::string pos = d.d == 1 ? fmt::format("p{0} + k{0}", i) : fmt::format("p{0} + k{0} * {1}", i, d.d);
    e("for (int64_t k{0} = lo{0}; k{0} < hi{0}; ++k{0}) {{", i);
    if (i == 0) e("const int64_t q{} = {};", i, pos);
    else e("const int64_t q{} = q{} * {} + {};", i, i - 1, d.in, pos);
  }
  e("const float* restrict xp = x + q{} * {};", r - 1, b);
  e("ONNXC_PRAGMA(omp simd)");
  if (g.max) e("for (int64_t l = 0; l < {}; ++l) a[l] = xp[l] > a[l] ? xp[l] : a[l];", b);
  else e("for (int64_t l = 0; l < {}; ++l) a[l] += xp[l];", b);
  for (size_t i = 0; i < r; ++i) e("}}");
  e("float* restrict yp = y + ({}) * {};", oidx, b);
  if (g.max) {
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l];", b);
  } else {
    const bool all_full = g.avg_all_full();
    std::string div = c_float(static_cast<double>(taps));
    if (!all_full) {
      emit_avg_count(e, g);
      e("const float den = cnt > 0 ? (float)cnt : 1.0f;  /* no taps: a[] is 0 */");
      div.clear();
    }
    e("ONNXC_PRAGMA(omp simd)");
    if (!div.empty()) e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l] / {};", b, div);
    else e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l] / den;", b);
  }
  for (size_t i = 0; i < r; ++i) e("}}");
  e("}}");
}

// The most bytes of column maxima a plain 2-D MaxPool keeps on its stack per task, and the
// widest window whose taps it writes out one by one (wider ones: a loop).
constexpr int64_t kRowMaxBytes = 64 << 10;
constexpr int64_t kRowMaxUnroll = 16;

// Whether a plain MaxPool runs separably (emit_max_pool_rows): 2-D, without Indices.
bool max_pool_rows_apply(const CEmit& e, const PoolGeom& g) {
  if (!g.max || e.node.out(1) || g.dims.size() != 2) return false;
  const PoolDim& w = g.dims[1];
  return ((w.out - 1) * w.s + (w.k - 1) * w.d + 1) * static_cast<int64_t>(dtype_size(e.in_dtype(0))) <= kRowMaxBytes;
}

// Plain 2-D MaxPool, separable: per plane (the parallel tasks) and output row, the maxima over
// the window's input rows of each column of the padded row (the lowest value in the padding),
// by one simd loop per input row, then per output the maximum of its KW columns, one simd loop
// over the row. A tap is then read KH + KW times per KH x KW outputs, in vectors; the
// compare-selects skip NaN as the tap loop's do.
void emit_max_pool_rows(CEmit& e, const PoolGeom& g, const std::string& lowest) {
  const PoolDim& h = g.dims[0];
  const PoolDim& w = g.dims[1];
  const Shape& xs = e.in_shape(0);
  const char* ct = e.in_ctype(0);
  const int64_t planes = xs[0] * xs[1], IWP = (w.out - 1) * w.s + (w.k - 1) * w.d + 1;
  const int64_t cols = std::min(w.in, IWP - w.pb);  // input columns the outputs read
  e.variant = "separable rows";
  const double work = static_cast<double>(planes * h.out) * static_cast<double>(h.k * cols + w.out * w.k);
  if (planes > 1 && e.parallel(work)) e.open_nest({.loops = {{"c", planes}}});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  e("const {}* restrict x = {} + c * {};", ct, e.in(0), h.in * w.in);
  e("{}* restrict y = {} + c * {};", ct, e.out(0), h.out * w.out);
  // (32 spare elements: without them gcc 12 warns -Wstringop-overflow, wrongly, about the vector
  // loops' tails at -O3.)
  e("{} cm[{} + 32];  /* column maxima of the padded row: column t is input column t - {} */", ct, IWP, w.pb);
  e("for (int64_t o0 = 0; o0 < {}; ++o0) {{", h.out);
  emit_window(e, g, 0);
  simd(e, IWP);
  e("for (int64_t t = 0; t < {}; ++t) cm[t] = {};", IWP, lowest);
  e("for (int64_t k0 = lo0; k0 < hi0; ++k0) {{");
  e("const {}* restrict row = x + ({}) * {};", ct, h.d == 1 ? "p0 + k0" : fmt::format("p0 + k0 * {}", h.d), w.in);
  simd(e, cols);
  e("for (int64_t t = 0; t < {0}; ++t) cm[{1}] = row[t] > cm[{1}] ? row[t] : cm[{1}];", cols,
    w.pb ? fmt::format("t + {}", w.pb) : "t");
  e("}}");
  e("{}* restrict yr = y + o0 * {};", ct, w.out);
  simd(e, w.out);
  e("for (int64_t o1 = 0; o1 < {}; ++o1) {{", w.out);
  e("const {}* restrict m0 = cm + {};", ct, w.s == 1 ? "o1" : fmt::format("o1 * {}", w.s));
  e("{} m = m0[0];", ct);
  if (w.k <= kRowMaxUnroll) {
    for (int64_t k = 1; k < w.k; ++k) e("m = m0[{0}] > m ? m0[{0}] : m;", k * w.d);
  } else {
    e("for (int64_t k1 = 1; k1 < {}; ++k1) m = m0[{}] > m ? m0[{}] : m;", w.k, w.d == 1 ? "k1" : fmt::format("k1 * {}", w.d),
      w.d == 1 ? "k1" : fmt::format("k1 * {}", w.d));
  }
  e("yr[o1] = m;");
  e("}}");
  e("}}");
  e("}}");
}

// Whether a plain MaxPool runs on whole planes (emit_max_pool_flat): 2-D, without Indices, unit
// strides and dilations, the output as large as the input ("same" padding, GoogLeNet's 3x3
// pools), a window inside the plane, and a plane of at most kRowMaxBytes.
bool max_pool_flat_apply(const CEmit& e, const PoolGeom& g) {
  if (!g.max || e.node.out(1) || g.dims.size() != 2) return false;
  for (const PoolDim& d : g.dims)
    if (d.s != 1 || d.d != 1 || d.out != d.in || d.k > d.in) return false;
  return g.dims[0].in * g.dims[1].in * static_cast<int64_t>(dtype_size(e.in_dtype(0))) <= kRowMaxBytes;
}

// Plain 2-D "same" MaxPool on whole planes: per plane (the parallel tasks) the maxima over each
// row's window, as one loop over the flattened plane (the few outputs per row whose window
// would cross into the next or previous row are then done again with the row's own taps), then
// the maxima over the window's rows, one loop over the flattened inner rows and one per edge
// row. Short rows (GoogLeNet's 28 and 14 columns) keep their vectors full, where the
// separable kernel's loops were a row long. The compare-selects start from the lowest value and
// skip NaN as the other forms do.
void emit_max_pool_flat(CEmit& e, const PoolGeom& g, const std::string& lowest) {
  const PoolDim& h = g.dims[0];
  const PoolDim& w = g.dims[1];
  const Shape& xs = e.in_shape(0);
  const char* ct = e.in_ctype(0);
  const int64_t planes = xs[0] * xs[1], IH = h.in, IW = w.in, N = IH * IW, KH = h.k, KW = w.k;
  const int64_t PT = h.pb, PL = w.pb, QB = KH - 1 - PT, QR = KW - 1 - PL;
  e.variant = "whole planes";
  const double work = static_cast<double>(planes * N) * static_cast<double>(KH + KW);
  if (planes > 1 && e.parallel(work)) e.open_nest({.loops = {{"c", planes}}});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  e("const {}* restrict x = {} + c * {};", ct, e.in(0), N);
  e("{}* restrict y = {} + c * {};", ct, e.out(0), N);
  e("{} hr[{} + 32];  /* each position's maximum over its row's window */", ct, N);
  // dst (one element) = the maximum of src at at + k * step, k in [k0, k1), from the lowest value.
  auto fold = [&](const std::string& dst, const std::string& src, int64_t k0, int64_t k1, int64_t step, const std::string& at) {
    e("{{");
    e("{} m = {};", ct, lowest);
    for (int64_t k = k0; k < k1; ++k) e("m = {0}[{1} + {2}] > m ? {0}[{1} + {2}] : m;", src, at, k * step);
    e("{} = m;", dst);
    e("}}");
  };
  // The same over p in [p0, p1): one loop, the running maximum in a register. No omp simd on it:
  // clang 14 refuses to vectorize it under the pragma (an error with -Werror); gcc's -O3
  // vectorizes it without (GoogLeNet's byte pools: 7x faster than the separable rows).
  auto fold_loops = [&](const std::string& dst, const std::string& src, int64_t k0, int64_t k1, int64_t step, int64_t off, int64_t p0,
                        int64_t p1) {
    e("for (int64_t p = {}; p < {}; ++p) {{", p0, p1);
    e("{} m = {};", ct, lowest);
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t o = k * step - off;
      const std::string v = o == 0 ? src + "[p]" : fmt::format("{}[p {} {}]", src, o > 0 ? '+' : '-', o > 0 ? o : -o);
      e("m = {0} > m ? {0} : m;", v);
    }
    e("{}[p] = m;", dst);
    e("}}");
  };
  // Rows: the flattened plane, then each row's first PL and last QR positions with their own taps.
  fold_loops("hr", "x", 0, KW, 1, PL, PL, N - QR);
  if (PL > 0 || QR > 0) {
    e("for (int64_t i = 0; i < {}; ++i) {{", IH);
    e("const {}* restrict xr = x + i * {};", ct, IW);
    for (int64_t j = 0; j < PL; ++j) fold(fmt::format("hr[i * {} + {}]", IW, j), "xr", PL - j, KW, 1, std::to_string(j - PL));
    for (int64_t j = IW - QR; j < IW; ++j)
      fold(fmt::format("hr[i * {} + {}]", IW, j), "xr", 0, std::min(KW, IW + PL - j), 1, std::to_string(j - PL));
    e("}}");
  }
  // Columns: the inner rows flattened, then the first PT and last QB rows with their own taps.
  fold_loops("y", "hr", 0, KH, IW, PT * IW, PT * IW, N - QB * IW);
  for (int64_t i = 0; i < IH; ++i) {
    if (i >= PT && i < IH - QB) continue;
    fold_loops("y", "hr", std::max<int64_t>(0, PT - i), std::min(KH, IH + PT - i), IW, PT * IW, i * IW, (i + 1) * IW);
  }
  e("}}");
}

void emit_pool(CEmit& e) {
  if (e.out_layout(0).is_nchwc()) return emit_pool_nchwc(e);
  const PoolGeom& g = pool_geom(e.node);
  const Shape& xs = e.in_shape(0);
  size_t r = g.dims.size();
  DType t = e.in_dtype(0);
  const char* ct = e.in_ctype(0);
  bool want_idx = e.node.out(1) != nullptr;
  int64_t planes = xs[0] * xs[1], in_sz = 1, out_sz = 1, taps = 1;
  for (auto& d : g.dims) in_sz *= d.in, out_sz *= d.out, taps *= d.k;
  std::string lowest = t == DType::F32 || t == DType::F64 ? "(-INFINITY)" : t == DType::U8 ? "0" : "(-128)";
  if (max_pool_flat_apply(e, g)) return emit_max_pool_flat(e, g, lowest);
  if (max_pool_rows_apply(e, g)) return emit_max_pool_rows(e, g, lowest);
  if (planes > 1 && e.parallel(static_cast<double>(2 * planes * out_sz * taps))) e.open_nest({.loops = {{"c", planes}}});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  e("const {}* restrict x = {} + c * {};", ct, e.in(0), in_sz);
  e("{}* restrict y = {} + c * {};", ct, e.out(0), out_sz);
  if (want_idx) e("int64_t* restrict yi = {} + c * {};", e.out(1), out_sz);
  // Output position loops; per dim the window start p{i} and tap range [lo{i}, hi{i}).
  for (size_t i = 0; i < r; ++i) {
    const PoolDim& d = g.dims[i];
    e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", i, d.out);
    emit_window(e, g, i);
  }
  // Output offset of this position.
  std::string oidx = "o0";
  for (size_t i = 1; i < r; ++i) oidx = fmt::format("{} * {} + o{}", i == 1 ? oidx : "(" + oidx + ")", g.dims[i].out, i);
  if (g.max) {
    e("{} m = {};", ct, lowest);
    if (want_idx) e("int64_t mi = -1;");
  } else {
    e("float s = 0.0f;");
  }
  // Window loops; q{i} is the row offset in the plane through dim i.
  for (size_t i = 0; i < r; ++i) {
    const PoolDim& d = g.dims[i];
    std::string pos = d.d == 1 ? fmt::format("p{0} + k{0}", i) : fmt::format("p{0} + k{0} * {1}", i, d.d);
    bool last = i + 1 == r;
    if (last && !want_idx) {
      std::string base = i == 0 ? "x" : fmt::format("x + q{} * {}", i - 1, d.in);
      if (i > 0) e("const {}* restrict row = {};", ct, base);
      e("for (int64_t k{0} = lo{0}; k{0} < hi{0}; ++k{0}) {{", i);
      std::string v = fmt::format("{}[{}]", i > 0 ? "row" : "x", pos);
      if (!g.max) e("s += {};", v);
      else e("m = {0} > m ? {0} : m;", v);
    } else {
      e("for (int64_t k{0} = lo{0}; k{0} < hi{0}; ++k{0}) {{", i);
      if (i == 0) e("const int64_t q{} = {};", i, pos);
      else e("const int64_t q{} = q{} * {} + {};", i, i - 1, d.in, pos);
      if (last) {  // MaxPool with Indices
        e("const {} v = x[q{}];", ct, i);
        e("if (mi < 0 || v > m) {{");
        if (g.storage_order == 0) {
          e("mi = q{};", i);
        } else {
          // Column-major over spatial dims: the index of (h, w, ...) is h + H * (w + W * ...).
          std::string cm = fmt::format("p{0} + k{0}", r - 1);
          if (g.dims[r - 1].d != 1) cm = fmt::format("p{0} + k{0} * {1}", r - 1, g.dims[r - 1].d);
          for (size_t j = r - 1; j-- > 0;) {
            std::string pj = g.dims[j].d == 1 ? fmt::format("p{0} + k{0}", j) : fmt::format("p{0} + k{0} * {1}", j, g.dims[j].d);
            cm = fmt::format("{} + {} * ({})", pj, g.dims[j].in, cm);
          }
          e("mi = {};", cm);
        }
        e("}}");
        e("m = v > m ? v : m;");
      }
    }
  }
  for (size_t i = 0; i < r; ++i) e("}}");
  if (g.max) {
    e("y[{}] = m;", oidx);
    if (want_idx) e("yi[{}] = c * {} + (mi < 0 ? 0 : mi);", oidx, in_sz);
  } else {
    // Divisor: taps inside the input, or inside the padded extent with count_include_pad.
    const bool all_full = g.avg_all_full();
    if (all_full) {
      e("y[{}] = s / {};", oidx, c_float(static_cast<double>(taps)));
    } else {
      emit_avg_count(e, g);
      e("y[{}] = cnt > 0 ? s / (float)cnt : 0.0f;", oidx);
    }
  }
  for (size_t i = 0; i < r; ++i) e("}}");
  e("}}");
}

// NCHWc: float32 without the Indices output (see emit_pool_nchwc).
bool pool_nchwc(const Node& n, int64_t b) {
  return b >= 1 && n.in(0)->dtype == DType::F32 && !n.out(1) && n.in(0)->shape.size() >= 3;
}

}  // namespace

void register_pool(CKernelTable& t) {
  t["MaxPool"] = {emit_pool, pool_nchwc, nullptr, nullptr};
  t["AveragePool"] = {emit_pool, pool_nchwc, nullptr, nullptr};
}

}  // namespace onnxc
