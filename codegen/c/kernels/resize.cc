// codegen/c/kernels/resize.cc — Resize and Upsample in C, from the tap tables of
// ResizeGeom (ir/ops/resize.h): loops over gathers from static const tables. Identity axes
// are merged into blocks, the taps of outer resized axes are hoisted into row pointers and
// weights, and the innermost loop is a gather (or a contiguous read for an innermost
// identity block). With several outer taps the source rows are first combined into a local
// row (contiguous), so the gather runs once. Nearest upsampling copies an output block when
// its source equals the previous one's. Filters with many taps (antialias at strong
// downscaling, cubic on 3+ axes) use tap loops in the innermost body instead.
// NCHWc (float32 nearest / linear of the spatial axes): per output position the same tap
// tables, b lanes innermost.
#include <algorithm>
#include <cstdint>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/resize.h"

namespace onnxc {
namespace {

std::string scaled(const std::string& i, int64_t st) { return st == 1 ? i : fmt::format("{} * {}", i, st); }
void add_term(std::string& acc, const std::string& t) { acc += (acc.empty() ? "" : " + ") + t; }

// A static const table of `rows` x `k` literals ([rows] when k == 1), packed several per line.
void emit_table(CEmit& e, const std::string& type, const std::string& name, size_t rows, size_t k,
                const std::vector<std::string>& v) {
  std::vector<std::string> items(rows);
  for (size_t r = 0; r < rows; ++r) {
    if (k == 1) {
      items[r] = v[r];
      continue;
    }
    items[r] = "{";
    for (size_t t = 0; t < k; ++t) items[r] += (t ? ", " : "") + v[r * k + t];
    items[r] += "}";
  }
  emit_table(e, type + " " + name, fmt::format("[{}]{}", rows, k == 1 ? "" : fmt::format("[{}]", k)), items);
}

// NCHWc: float32 nearest / linear resizes of the spatial axes (N and C unchanged).
bool resize_nchwc(const Node& n, int64_t b) {
  const ResizeGeom& g = resize_geom(n);
  if (b < 1 || g.axis.size() < 3 || n.in(0)->dtype != DType::F32 || numel(n.out(0)->shape) == 0) return false;
  if (g.interp != Interp::Nearest && g.interp != Interp::Linear) return false;
  return g.tables[0].identity(g.axis[0]) && g.tables[1].identity(g.axis[1]);
}

// NCHW[b]c: per (image, channel block) and output position, the taps of every spatial
// axis from the same tables as the plain kernel; each tap combination adds weight × b
// lanes (a plain copy when every axis is a pure gather).
void emit_resize_nchwc(CEmit& e) {
  const ResizeGeom& g = resize_geom(e.node);
  const Shape& xs = e.in_shape(0);
  const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
  ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b), "NCHWc resize on " + e.node.in(0)->type_str());
  const size_t r = g.axis.size();
  int64_t IS = 1, OS = 1;
  bool unit = true;
  for (size_t d = 2; d < r; ++d) IS *= g.axis[d].in, OS *= g.axis[d].out, unit = unit && g.tables[d].unit();
  e("/* NCHW{}c resize ({}) of the spatial axes: srcA, wtA = input indices and weights of the taps along axis A. */", b, g.desc);
  for (size_t d = 2; d < r; ++d) {
    const AxisTable& t = g.tables[d];
    size_t rows = static_cast<size_t>(g.axis[d].out);
    std::vector<std::string> src, wt;
    for (size_t j = 0; j < rows * t.k; ++j) {
      src.push_back(std::to_string(t.idx[j]));
      wt.push_back(c_float(t.w[j]));
    }
    emit_table(e, "int64_t", fmt::format("src{}", d), rows, t.k, src);
    if (!unit) emit_table(e, "float", fmt::format("wt{}", d), rows, t.k, wt);
  }
  const int64_t planes = xs[0] * CB;
  if (planes > 1 && e.parallel(static_cast<double>(planes * OS * b))) e.open_nest({.loops = {{"c", planes}}, .schedule_static = true});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  e("const float* restrict x = {} + c * {};", e.in(0), IS * b);
  e("float* restrict y = {} + c * {};", e.out(0), OS * b);
  std::string outside, dst = "o2";
  for (size_t d = 2; d < r; ++d) {
    e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", d, g.axis[d].out);
    if (d > 2) dst = fmt::format("({}) * {} + o{}", dst, g.axis[d].out, d);
    const AxisTable& t = g.tables[d];
    if (t.lo > 0) outside += fmt::format("{}o{} < {}", outside.empty() ? "" : " || ", d, t.lo);
    if (t.hi < g.axis[d].out) outside += fmt::format("{}o{} >= {}", outside.empty() ? "" : " || ", d, t.hi);
  }
  e("float* restrict yp = y + ({}) * {};", dst, b);
  if (!outside.empty()) {
    e("if ({}) {{", outside);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) yp[l] = {};", b, c_float(g.extrapolation));
    e("continue;");
    e("}}");
  }
  auto tap = [&](size_t d) { return g.tables[d].k == 1 ? fmt::format("src{0}[o{0}]", d) : fmt::format("src{0}[o{0}][t{0}]", d); };
  std::string src = tap(2);
  for (size_t d = 3; d < r; ++d) src = fmt::format("({}) * {} + {}", src, g.axis[d].in, tap(d));
  if (unit) {
    e("const float* restrict xp = x + ({}) * {};", src, b);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) yp[l] = xp[l];", b);
  } else {
    e("float a[{}];", b);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) a[l] = 0.0f;", b);
    std::string w;
    for (size_t d = 2; d < r; ++d) {
      if (g.tables[d].k > 1) e("for (int64_t t{0} = 0; t{0} < {1}; ++t{0}) {{", d, g.tables[d].k);
      w += fmt::format("{}{}", w.empty() ? "" : " * ",
                       g.tables[d].k == 1 ? fmt::format("wt{0}[o{0}]", d) : fmt::format("wt{0}[o{0}][t{0}]", d));
    }
    e("const float w = {};", w);
    e("const float* restrict xp = x + ({}) * {};", src, b);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) a[l] = ONNXC_FMA(w, xp[l], a[l]);", b);
    for (size_t d = 2; d < r; ++d)
      if (g.tables[d].k > 1) e("}}");
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l];", b);
  }
  for (size_t d = 2; d < r; ++d) e("}}");
  e("}}");
}

// The innermost body when taps are not hoisted: one loop per resized dim over its taps
// (float data only: many taps only arise from linear/cubic filters).
template <class DimT, class LevelT>
void emit_tap_loops(CEmit& e, const ResizeGeom& g, const std::vector<DimT>& dims, const std::vector<LevelT>& looped,
                    const std::string& pend_inner, const std::string& iv) {
  auto tab = [&](const char* name, const DimT& D, const std::string& i, const std::string& t) {
    return g.tables[D.axis].k == 1 ? fmt::format("{}{}[{}]", name, D.axis, i) : fmt::format("{}{}[{}][{}]", name, D.axis, i, t);
  };
  e("float acc = 0.0f;");
  std::string ptr = e.in(0), wt;
  size_t open = 0;
  for (const auto& L : looped) {
    const DimT& D = dims[L.d];
    const AxisTable& t = g.tables[D.axis];
    std::string i = fmt::format("i{}", L.d), tv = fmt::format("t{}", L.d);
    if (t.k > 1) {
      e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", tv, t.k);
      ++open;
    }
    std::string off = L.pend;
    add_term(off, tab("src", D, i, tv));
    std::string q = fmt::format("q{}", L.d);
    e("const float* restrict {} = {} + {};", q, ptr, off);
    ptr = q;
    if (!t.unit()) {
      std::string b = fmt::format("b{}", L.d);
      e("const float {} = {}{};", b, wt.empty() ? "" : wt + " * ", tab("wt", D, i, tv));
      wt = b;
    }
  }
  const DimT& D = dims.back();
  std::string pre = wt.empty() ? "" : wt + " * ";
  if (!D.resized) {
    std::string off = pend_inner;
    add_term(off, iv);
    e("acc += {}{}[{}];", pre, ptr, off);
  } else {
    const AxisTable& t = g.tables[D.axis];
    std::string base = pend_inner.empty() ? "" : pend_inner + " + ";
    std::string tv = "t";
    if (t.k > 1) e("for (int64_t t = 0; t < {}; ++t) {{", t.k);
    std::string g = fmt::format("{}[{}{}]", ptr, base, tab("src", D, iv, tv));
    e("acc += {}{}{};", pre, t.unit() ? "" : tab("wt", D, iv, tv) + " * ", g);
    if (t.k > 1) e("}}");
  }
  for (size_t k = 0; k < open; ++k) e("}}");
  e("yr[{}] = acc;", iv);
}

// The printer of a plain-layout Resize. Runs of identity axes are merged into one dim each,
// resized axes stay one dim each; tables give each resized dim's taps (src: input element
// offsets, the index times the dim's stride; wt: weights). The outer dims are loops; with
// few tap combinations (hoist) each resized outer level multiplies the row pointers (p) and
// their weights (a) by its taps, and the innermost loop sums them; otherwise the taps become
// loops in the innermost body (emit_tap_loops).
struct PlainResize {
  struct Dim {
    bool resized;
    size_t axis;
    int64_t in, out;
  };
  struct Combo {
    std::string ptr, wt;
  };
  struct Level {
    size_t d;
    std::string pend;
  };
  CEmit& e;
  const ResizeGeom& g;
  const char* ct;
  std::string ext;  // the extrapolation value, a literal of the output's type
  std::vector<Dim> dims;
  size_t nd = 0;
  Shape ist, ost;  // the dims' strides in the input and the output
  bool hoist = false, par = false;
  size_t inner_k = 1;  // the innermost dim's taps
  std::vector<Combo> cs;      // the row pointers and weights so far (hoist)
  std::vector<Level> looped;  // the resized levels whose taps are loops (not hoist)
  std::string yoff, pend;     // the output's offset; the input's identity offsets since the last resized level

  explicit PlainResize(CEmit& em) : e(em), g(resize_geom(em.node)), ct(em.in_ctype(0)), ext(c_literal(em.out_dtype(0), g.extrapolation)) {
    for (size_t d = 0; d < g.axis.size(); ++d) {
      const ResizeAxis& a = g.axis[d];
      bool resized = !g.tables[d].identity(a);
      if (!resized && a.out == 1) continue;  // nothing to loop over
      if (!resized && !dims.empty() && !dims.back().resized) {
        dims.back().in *= a.in;
        dims.back().out *= a.out;
        continue;
      }
      dims.push_back({resized, d, a.in, a.out});
    }
    if (dims.empty()) dims.push_back({false, 0, 1, 1});
    nd = dims.size();
    ist.resize(nd), ost.resize(nd);
    for (size_t d = nd, si = 1, so = 1; d-- > 0;) {
      ist[d] = static_cast<int64_t>(si);
      ost[d] = static_cast<int64_t>(so);
      si *= static_cast<size_t>(dims[d].in);
      so *= static_cast<size_t>(dims[d].out);
    }
    cs = {{e.in(0), ""}};
  }

  std::string tab(const char* name, const Dim& D, const std::string& i, const std::string& t) const {
    return g.tables[D.axis].k == 1 ? fmt::format("{}{}[{}]", name, D.axis, i) : fmt::format("{}{}[{}][{}]", name, D.axis, i, t);
  }

  // The comment and the tables; whether the taps hoist.
  void tables() {
    Shape loop_dims;
    for (auto& D : dims) loop_dims.push_back(D.out);
    e("/* {}: {} -> {}; loops over {}", g.desc, shape_str(e.in_shape(0)), shape_str(e.out_shape(0)), shape_str(loop_dims));
    e("   (identity axes merged); srcA, wtA = input offsets and weights of the taps along input axis A */");
    size_t combos = 1;
    for (size_t d = 0; d < nd; ++d) {
      if (!dims[d].resized) continue;
      const AxisTable& t = g.tables[dims[d].axis];
      int64_t maxoff = (dims[d].in - 1) * ist[d];
      std::vector<std::string> src, wt;
      for (size_t j = 0; j < t.idx.size(); ++j) {
        src.push_back(std::to_string(t.idx[j] * ist[d]));
        wt.push_back(c_float(t.w[j]));
      }
      size_t rows = static_cast<size_t>(dims[d].out);
      emit_table(e, maxoff <= INT32_MAX ? "int32_t" : "int64_t", fmt::format("src{}", dims[d].axis), rows, t.k, src);
      if (!t.unit()) emit_table(e, "float", fmt::format("wt{}", dims[d].axis), rows, t.k, wt);
      if (d + 1 < nd) combos *= t.k;
      else inner_k = t.k;
    }
    hoist = combos <= 8 && combos * inner_k <= 16;  // larger unrolled sums do not vectorize with clang
  }

  // Outside the crop, the block of output dim d at iv is the extrapolation value.
  void crop_guard(size_t d, const std::string& iv, const std::string& yhere) {
    const Dim& D = dims[d];
    const AxisTable& t = g.tables[D.axis];
    if (t.lo <= 0 && t.hi >= D.out) return;
    std::string cond = t.lo > 0 && t.hi < D.out ? fmt::format("{0} < {1} || {0} >= {2}", iv, t.lo, t.hi)
                       : t.lo > 0                ? fmt::format("{} < {}", iv, t.lo)
                                                 : fmt::format("{} >= {}", iv, t.hi);
    e("/* outside the crop */");
    e("if ({}) {{", cond);
    e("{}* restrict yb = {} + {};", ct, e.out(0), yhere);
    e("for (int64_t j = 0; j < {}; ++j) yb[j] = {};", ost[d], ext);
    e("continue;");
    e("}}");
  }

  // Nearest upsampling repeats source rows: copy the block just written instead.
  void repeat_guard(size_t d, const std::string& iv, const std::string& yhere) {
    const AxisTable& t = g.tables[dims[d].axis];
    if (!t.unit()) return;
    bool repeats = false;
    for (int64_t o = std::max<int64_t>(t.lo, 1); o < t.hi; ++o)
      repeats = repeats || t.idx[static_cast<size_t>(o)] == t.idx[static_cast<size_t>(o - 1)];
    if (!repeats) return;
    e("/* same source as the previous block */");
    e("if ({0} > {1} && src{2}[{0}] == src{2}[{0} - 1]) {{", iv, t.lo, dims[d].axis);
    e("{}* restrict yb = {} + {};", ct, e.out(0), yhere);
    e("memcpy(yb, yb - {0}, {0} * sizeof({1}));", ost[d], ct);
    e("continue;");
    e("}}");
  }

  // Hoisted taps of resized outer dim d: each row pointer so far times each tap.
  void hoist_taps(size_t d, const std::string& iv) {
    const Dim& D = dims[d];
    const AxisTable& t = g.tables[D.axis];
    std::vector<Combo> next;
    for (const Combo& c : cs) {
      for (size_t k = 0; k < t.k; ++k) {
        std::string p = fmt::format("p{}_{}", d, next.size());
        std::string off = pend;
        add_term(off, tab("src", D, iv, std::to_string(k)));
        e("const {}* restrict {} = {} + {};", ct, p, c.ptr, off);
        std::string w = c.wt;
        if (!t.unit()) {
          w = fmt::format("a{}_{}", d, next.size());
          e("const float {} = {}{};", w, c.wt.empty() ? "" : c.wt + " * ", tab("wt", D, iv, std::to_string(k)));
        }
        next.push_back({p, w});
      }
    }
    cs = next;
    pend.clear();
  }

  // Outer dim d: its loop (the first one parallel when the work is large) and what its
  // iteration adds to the offsets.
  void outer(size_t d) {
    const Dim& D = dims[d];
    std::string iv = fmt::format("i{}", d);
    const bool parallel_here = d == 0 && par && D.out > 1;
    if (parallel_here) e.open_nest({.loops = {{iv, D.out}}});
    else e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", iv, D.out);
    std::string yhere = yoff;
    add_term(yhere, scaled(iv, ost[d]));
    if (D.resized) crop_guard(d, iv, yhere);
    yoff = yhere;
    if (!D.resized) {
      add_term(pend, scaled(iv, ist[d]));
      return;
    }
    if (!parallel_here) repeat_guard(d, iv, yhere);
    if (!hoist) {
      looped.push_back({d, pend});
      pend.clear();
      return;
    }
    hoist_taps(d, iv);
  }

  // The hoisted sum of one output element of the innermost dim at iv.
  std::string hoisted_sum(const std::string& iv) const {
    const Dim& D = dims.back();
    std::string sum;
    for (const Combo& c : cs) {
      std::string inner;
      if (!D.resized) inner = fmt::format("{}[{}]", c.ptr, iv);
      else {
        const AxisTable& t = g.tables[D.axis];
        for (size_t k = 0; k < t.k; ++k) {
          std::string x = fmt::format("{}[{}]", c.ptr, tab("src", D, iv, std::to_string(k)));
          add_term(inner, t.unit() ? x : fmt::format("{} * {}", tab("wt", D, iv, std::to_string(k)), x));
        }
        if (t.k > 1 && !c.wt.empty()) inner = "(" + inner + ")";
      }
      add_term(sum, c.wt.empty() ? inner : fmt::format("{} * {}", c.wt, inner));
    }
    return sum;
  }

  // The innermost dim: the crop's outside parts, the source rows combined once where that
  // pays, and the loop over the output row.
  void inner() {
    const Dim& D = dims.back();
    std::string iv = fmt::format("i{}", nd - 1);
    const std::string yr = fmt::format("{}* restrict yr = {}{};", ct, e.out(0), yoff.empty() ? "" : " + " + yoff);
    if (nd == 1) e.local("{}", yr);  // at the top of the function: every thread of a region may declare it
    else e("{}", yr);
    int64_t lo = 0, hi = D.out;
    if (D.resized) lo = g.tables[D.axis].lo, hi = g.tables[D.axis].hi;
    if (lo > 0) {
      if (nd == 1) e.serial();
      e("for (int64_t {0} = 0; {0} < {1}; ++{0}) yr[{0}] = {2};  /* outside the crop */", iv, lo, ext);
    }
    if (hoist && !pend.empty()) {  // identity offsets since the last resized level
      for (size_t c = 0; c < cs.size(); ++c) {
        std::string q = fmt::format("r_{}", c);
        e("const {}* restrict {} = {} + {};", ct, q, cs[c].ptr, pend);
        cs[c].ptr = q;
      }
      pend.clear();
    }
    if (hi > lo && hoist && cs.size() > 1 && D.resized && D.in <= 4096 && D.in <= 2 * D.out * static_cast<int64_t>(inner_k)) {
      // Combine the source rows of the outer taps once (contiguous), then gather from that row.
      std::string sum;
      for (const Combo& c : cs) add_term(sum, c.wt.empty() ? c.ptr + "[j]" : fmt::format("{} * {}[j]", c.wt, c.ptr));
      e("float row[{}];", D.in);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t j = 0; j < {}; ++j) row[j] = {};", D.in, sum);
      cs = {{"row", ""}};
    }
    if (hi > lo) {
      // Tap loops inside the body do not vectorize (clang warns about a failed simd request).
      if (nd == 1 && par) {
        e.open_nest({.loops = {{.var = iv, .end = hi, .lo = lo}}, .simd = hoist});
      } else {
        if (hoist) e("ONNXC_PRAGMA(omp simd)");
        e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) {{", iv, lo, hi);
      }
      if (hoist) e("yr[{}] = {};", iv, hoisted_sum(iv));
      else emit_tap_loops(e, g, dims, looped, pend, iv);
      e("}}");
    }
    if (hi < D.out) {
      if (nd == 1) e.serial();
      e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) yr[{0}] = {3};  /* outside the crop */", iv, hi, D.out, ext);
    }
  }
};

void emit_resize(CEmit& e) {
  if (e.out_layout(0).is_nchwc()) return emit_resize_nchwc(e);
  const ResizeGeom& g = resize_geom(e.node);
  int64_t total = numel(e.out_shape(0));
  if (total == 0) { e("/* empty output */"); return; }
  for (size_t d = 0; d < g.axis.size(); ++d) {
    if (g.tables[d].lo < g.tables[d].hi) continue;
    e("/* axis {} lies wholly outside the crop: the output is all extrapolation_value */", d);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) {}[i] = {};", total, e.out(0), c_literal(e.out_dtype(0), g.extrapolation));
    return;
  }
  PlainResize r(e);
  r.tables();
  // Work per output element: a table lookup and a load per tap (at least one).
  r.par = e.parallel(static_cast<double>(2 * total));
  for (size_t d = 0; d + 1 < r.nd; ++d) r.outer(d);
  r.inner();
  for (size_t d = 0; d + 1 < r.nd; ++d) e("}}");
}

}  // namespace

void register_resize(CKernelTable& t) {
  t["Resize"] = {emit_resize, resize_nchwc, nullptr, nullptr};
  t["Upsample"] = {emit_resize, resize_nchwc, nullptr, nullptr};
}

}  // namespace onnxc
