// codegen/c/kernels/pad.cc — Pad in C, any dtype. Plain: axes without padding are merged;
// padded outer axes index a static table of source rows (-1 = pad value); the innermost
// row is left pad, a memcpy of the kept part, right pad (work for the parallel decision: a
// table lookup and a copy per element). NCHWc (spatial pads only, any mode): per output
// position the source position from per-axis tables, b lanes copied or filled.
#include <algorithm>
#include <cstdint>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/pad.h"

namespace onnxc {
namespace {

// NCHWc: pads on the spatial axes only (any mode; padding lanes get the pad value too).
bool pad_nchwc(const Node& n, int64_t b) {
  const PadGeom& g = pad_geom(n);
  if (b < 1 || g.axis.size() < 3 || numel(n.out(0)->shape) == 0) return false;
  return g.axis[0].pb == 0 && g.axis[0].pe == 0 && g.axis[1].pb == 0 && g.axis[1].pe == 0;
}

// NCHW[b]c: per (image, channel block) and output position, the source position from
// one table per spatial axis (-1 = pad value), then b lanes copied or filled.
void emit_pad_nchwc(CEmit& e) {
  const PadGeom& g = pad_geom(e.node);
  const char* ct = e.in_ctype(0);
  const Shape& xs = e.in_shape(0);
  const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
  ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b), "NCHWc pad on " + e.node.in(0)->type_str());
  const size_t r = g.axis.size();
  int64_t IS = 1, OS = 1;
  for (size_t d = 2; d < r; ++d) IS *= g.axis[d].in, OS *= g.axis[d].out;
  std::string v = c_literal(e.in_dtype(0), g.value);
  if (g.runtime_value) {
    e.local("const {} v = {}[0];", ct, e.in(2));
    v = "v";
  }
  static const char* names[] = {"constant", "reflect", "edge", "wrap"};
  e("/* NCHW{}c {} pad of the spatial axes: source position per axis from a table (-1 = pad value). */", b,
    names[static_cast<int>(g.mode)]);
  for (size_t d = 2; d < r; ++d) {
    std::vector<int64_t> t;
    for (int64_t o = 0; o < g.axis[d].out; ++o) t.push_back(pad_source(g.axis[d], g.mode, o));
    emit_table(e, fmt::format("int64_t src{}", d), t);
  }
  const int64_t planes = xs[0] * CB;
  if (planes > 1 && e.parallel(static_cast<double>(planes * OS * b))) e.open_nest({.loops = {{"c", planes}}, .schedule_static = true});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  e("const {}* restrict x = {} + c * {};", ct, e.in(0), IS * b);
  e("{}* restrict y = {} + c * {};", ct, e.out(0), OS * b);
  for (size_t d = 2; d < r; ++d) {
    e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", d, g.axis[d].out);
    e("const int64_t s{0} = src{0}[o{0}];", d);
  }
  std::string any_pad, src = "s2", dst = "o2";
  for (size_t d = 2; d < r; ++d) {
    any_pad += fmt::format("{}s{} < 0", d > 2 ? " || " : "", d);
    if (d > 2) {
      src = fmt::format("({}) * {} + s{}", src, g.axis[d].in, d);
      dst = fmt::format("({}) * {} + o{}", dst, g.axis[d].out, d);
    }
  }
  e("{}* restrict yp = y + ({}) * {};", ct, dst, b);
  e("if ({}) {{", any_pad);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t l = 0; l < {}; ++l) yp[l] = {};", b, v);
  e("}} else {{");
  e("const {}* restrict xp = x + ({}) * {};", ct, src, b);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t l = 0; l < {}; ++l) yp[l] = xp[l];", b);
  e("}}");
  for (size_t d = 2; d < r; ++d) e("}}");
  e("}}");
}

void emit_pad(CEmit& e) {
  if (e.out_layout(0).is_nchwc()) return emit_pad_nchwc(e);
  const PadGeom& g = pad_geom(e.node);
  const char* ct = e.in_ctype(0);
  DType dt = e.in_dtype(0);
  int64_t total = numel(e.out_shape(0));
  if (total == 0) { e("/* empty output */"); return; }
  std::string v = c_literal(dt, g.value);
  if (g.runtime_value) {
    e.local("const {} v = {}[0];", ct, e.in(2));
    v = "v";
  }
  // Merge runs of unpadded axes; an axis of which nothing is kept makes the output all pad value.
  std::vector<PadAxis> dims;
  std::vector<size_t> orig;  // original axis of each merged dim (for table names)
  bool all_pad = false;
  for (size_t d = 0; d < g.axis.size(); ++d) {
    const PadAxis& a = g.axis[d];
    if (a.kept() == 0) all_pad = true;
    bool plain = a.pb == 0 && a.pe == 0;
    if (plain && a.in == 1) continue;  // nothing to loop over
    if (plain && !dims.empty() && dims.back().pb == 0 && dims.back().pe == 0) {
      dims.back().in *= a.in;
      dims.back().out *= a.out;
      continue;
    }
    dims.push_back(a);
    orig.push_back(d);
  }
  if (all_pad) {
    e("/* nothing of the input is kept: the output is all pad value */");
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) {}[i] = {};", total, e.out(0), v);
    return;
  }
  if (dims.empty()) { dims.push_back(PadAxis{}); orig.push_back(0); }
  Shape loop_dims;
  for (auto& D : dims) loop_dims.push_back(D.out);
  static const char* names[] = {"constant", "reflect", "edge", "wrap"};
  e("/* {}: {} -> {}; loops over {} (unpadded axes merged); srcA = source index along input axis A{} */",
    names[static_cast<int>(g.mode)], shape_str(e.in_shape(0)), shape_str(e.out_shape(0)), shape_str(loop_dims),
    g.mode == PadMode::Constant ? " (-1 = pad value)" : "");
  size_t k = dims.size();
  Shape ist(k), ost(k);
  for (size_t d = k, si = 1, so = 1; d-- > 0;) {
    ist[d] = static_cast<int64_t>(si);
    ost[d] = static_cast<int64_t>(so);
    si *= static_cast<size_t>(dims[d].in);
    so *= static_cast<size_t>(dims[d].out);
  }
  // Tables: source index of each output index along padded outer dims; the innermost
  // dim's reflect and wrap pads get one table per side.
  for (size_t d = 0; d + 1 < k; ++d) {
    const PadAxis& a = dims[d];
    if (a.pb == 0 && a.pe == 0) continue;
    std::vector<int64_t> t;
    for (int64_t o = 0; o < a.out; ++o) t.push_back(pad_source(a, g.mode, o));
    emit_table(e, fmt::format("int64_t src{}", orig[d]), t);
  }
  const PadAxis& w = dims[k - 1];
  int64_t L = w.lead(), M = w.kept(), R = w.out - L - M, s = w.start();
  size_t wa = orig[k - 1];
  if (g.mode == PadMode::Reflect || g.mode == PadMode::Wrap) {
    std::vector<int64_t> lt, rt;
    for (int64_t o = 0; o < L; ++o) lt.push_back(pad_source(w, g.mode, o));
    for (int64_t o = L + M; o < w.out; ++o) rt.push_back(pad_source(w, g.mode, o));
    if (L > 0) emit_table(e, fmt::format("int64_t lsrc{}", wa), lt);
    if (R > 0) emit_table(e, fmt::format("int64_t rsrc{}", wa), rt);
  }
  // Outer loops.
  std::string xoff, yoff;
  auto add = [](std::string& acc, const std::string& term) { acc += (acc.empty() ? "" : " + ") + term; };
  auto scaled = [](const std::string& i, int64_t st) { return st == 1 ? i : fmt::format("{} * {}", i, st); };
  for (size_t d = 0; d + 1 < k; ++d) {
    const PadAxis& a = dims[d];
    if (d == 0 && e.parallel(static_cast<double>(2 * total)) && a.out > 1) e.open_nest({.loops = {{fmt::format("i{}", d), a.out}}});
    else e("for (int64_t i{0} = 0; i{0} < {1}; ++i{0}) {{", d, a.out);
    add(yoff, scaled("i" + std::to_string(d), ost[d]));
    if (a.pb == 0 && a.pe == 0) {
      add(xoff, scaled("i" + std::to_string(d), ist[d]));
      continue;
    }
    e("const int64_t s{0} = src{1}[i{0}];", d, orig[d]);
    if (g.mode == PadMode::Constant) {
      e("if (s{} < 0) {{", d);
      e("{}* restrict yb = {} + {};", ct, e.out(0), yoff);
      e("for (int64_t i = 0; i < {}; ++i) yb[i] = {};", ost[d], v);
      e("continue;");
      e("}}");
    }
    add(xoff, scaled("s" + std::to_string(d), ist[d]));
  }
  // Innermost row: left pad, kept part, right pad.
  std::string xr = xoff.empty() ? e.in(0) : fmt::format("{} + {}", e.in(0), xoff);
  std::string yr = yoff.empty() ? e.out(0) : fmt::format("{} + {}", e.out(0), yoff);
  e("const {}* restrict xr = {};", ct, xr);
  e("{}* restrict yr = {};", ct, yr);
  auto side = [&](int64_t from, int64_t n, const char* table) {
    if (n <= 0) return;
    std::string val = g.mode == PadMode::Constant ? v
                    : g.mode == PadMode::Edge ? fmt::format("xr[{}]", from == 0 ? s : s + M - 1)
                                             : fmt::format("xr[{}{}[i]]", table, wa);
    if (from == 0) e("for (int64_t i = 0; i < {}; ++i) yr[i] = {};", n, val);
    else e("for (int64_t i = 0; i < {}; ++i) yr[{} + i] = {};", n, from, val);
  };
  side(0, L, "lsrc");
  e("memcpy(yr{}, xr{}, {} * sizeof({}));", L ? fmt::format(" + {}", L) : "", s ? fmt::format(" + {}", s) : "", M, ct);
  side(L + M, R, "rsrc");
  for (size_t d = 0; d + 1 < k; ++d) e("}}");
}

}  // namespace

void register_pad(CKernelTable& t) { t["Pad"] = {emit_pad, pad_nchwc, nullptr, nullptr}; }

}  // namespace onnxc
