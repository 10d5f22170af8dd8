// codegen/c/kernels/roi_align.cc — RoiAlign in C (ir/ops/roi_align.cc; the arithmetic is
// ir/ops/roi_align.h). Plain layout. One loop over (roi, output row), parallel when the work
// is large: each works out its roi (batch index clamped to [0, N - 1], corners, bin sizes,
// samples per bin, which may depend on the roi at run time), then per output bin and
// sample the four bilinear taps once and runs over the channels, accumulating into Y
// (avg: divided by the count at the end; max: the first sample sets it).
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/roi_align.h"

namespace onnxc {
namespace {

void emit_roi_align(CEmit& e) {
  const RoiAlignGeom& g = roi_align_geom(e.node);
  DType t = e.out_dtype(0);
  const char* ct = dtype_ctype(t);
  const bool dbl = t == DType::F64;
  const int64_t plane = g.H * g.W, bins = g.PH * g.PW, total = g.R * g.C * bins;
  if (total == 0) return;
  if (g.N * g.C * plane == 0) {  // no image to sample
    e("memset({}, 0, {} * sizeof({}));", e.out(0), total, ct);
    return;
  }
  auto lit = [&](double v) { return c_literal(t, v); };
  e("/* RoiAlign {}, {}, spatial_scale {}, sampling_ratio {}: X [{},{},{},{}], {} rois -> bins {}x{} */", g.max ? "max" : "avg",
    g.half_pixel ? "half_pixel" : "output_half_pixel", g.scale, g.sampling_ratio, g.N, g.C, g.H, g.W, g.R, g.PH, g.PW);
  const int64_t rows = g.R * g.PH;
  const int64_t per_bin = g.sampling_ratio > 0 ? g.sampling_ratio * g.sampling_ratio : 4;
  if (rows > 1 && e.parallel(static_cast<double>(total * per_bin * 8))) e.open_nest({.loops = {{"q", rows}}});
  else open_loop(e, "q", rows);
  e("const int64_t r = q / {}, ph = q % {};", g.PH, g.PH);
  e("int64_t b = (int64_t){}[r];", e.in(2));
  e("b = b < 0 ? 0 : b > {0} ? {0} : b;", g.N - 1);
  e("const {}* restrict xb = {} + b * {};", ct, e.in(0), g.C * plane);
  const std::string sc = lit(g.scale), off = lit(g.half_pixel ? 0.5 : 0.0);
  e("const {} sw = {}[r * 4] * {} - {}, sh = {}[r * 4 + 1] * {} - {};", ct, e.in(1), sc, off, e.in(1), sc, off);
  e("const {} ew = {}[r * 4 + 2] * {} - {}, eh = {}[r * 4 + 3] * {} - {};", ct, e.in(1), sc, off, e.in(1), sc, off);
  e("{} rw = ew - sw, rh = eh - sh;", ct);
  if (!g.half_pixel) {
    e("rw = rw < {0} ? {0} : rw;", lit(1));
    e("rh = rh < {0} ? {0} : rh;", lit(1));
  }
  e("const {} bh = rh / {}, bw = rw / {};", ct, lit(static_cast<double>(g.PH)), lit(static_cast<double>(g.PW)));
  if (g.sampling_ratio > 0) {
    e("const int64_t gh = {0}, gw = {0};", g.sampling_ratio);
  } else {
    e("int64_t gh, gw;");
    for (const char* a : {"h", "w"}) {
      e("{{");
      e("const {} c = {}(r{} / {});", ct, dbl ? "ceil" : "ceilf", a, lit(static_cast<double>(a[0] == 'h' ? g.PH : g.PW)));
      e("g{} = !(c >= {}) ? 0 : c > {} ? {} : (int64_t)c;", a, lit(1), lit(static_cast<double>(kRoiAlignMaxGrid)), kRoiAlignMaxGrid);
      e("}}");
    }
  }
  if (!g.max) e("const {0} count = ({0})(gh * gw > 1 ? gh * gw : 1);", ct);
  e("for (int64_t pw = 0; pw < {}; ++pw) {{", g.PW);
  e("{}* restrict yo = {} + r * {} + ph * {} + pw;", ct, e.out(0), g.C * bins, g.PW);
  e("for (int64_t c = 0; c < {}; ++c) yo[c * {}] = {};", g.C, bins, lit(0));
  e("for (int64_t iy = 0; iy < gh; ++iy) {{");
  e("const {0} yy = sh + ({0})ph * bh + ({0})((double)iy + 0.5) * bh / ({0})gh;", ct);
  e("for (int64_t ix = 0; ix < gw; ++ix) {{");
  e("const {0} xx = sw + ({0})pw * bw + ({0})((double)ix + 0.5) * bw / ({0})gw;", ct);
  e("int64_t p1 = 0, p2 = 0, p3 = 0, p4 = 0;");
  e("{} w1 = {}, w2 = {}, w3 = {}, w4 = {};", ct, lit(0), lit(0), lit(0), lit(0));
  e("if (yy >= {0} && yy <= {1} && xx >= {0} && xx <= {2}) {{", lit(-1), lit(static_cast<double>(g.H)), lit(static_cast<double>(g.W)));
  e("{0} y = yy <= {1} ? {1} : yy, x = xx <= {1} ? {1} : xx;", ct, lit(0));
  e("int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;");
  e("if (yl >= {0}) {{", g.H - 1);
  e("yh = yl = {};", g.H - 1);
  e("y = ({})yl;", ct);
  e("}} else {{");
  e("yh = yl + 1;");
  e("}}");
  e("if (xl >= {0}) {{", g.W - 1);
  e("xh = xl = {};", g.W - 1);
  e("x = ({})xl;", ct);
  e("}} else {{");
  e("xh = xl + 1;");
  e("}}");
  e("const {0} ly = y - ({0})yl, lx = x - ({0})xl, hy = {1} - ly, hx = {1} - lx;", ct, lit(1));
  e("p1 = yl * {0} + xl, p2 = yl * {0} + xh, p3 = yh * {0} + xl, p4 = yh * {0} + xh;", g.W);
  e("w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;");
  e("}}");
  e("for (int64_t c = 0; c < {}; ++c) {{", g.C);
  e("const {}* restrict xc = xb + c * {};", ct, plane);
  if (!g.max) {
    e("yo[c * {}] += w1 * xc[p1] + w2 * xc[p2] + w3 * xc[p3] + w4 * xc[p4];", bins);
  } else {
    e("{0} v = w1 * xc[p1], u = w2 * xc[p2];", ct);
    e("v = v < u ? u : v;");
    e("u = w3 * xc[p3];");
    e("v = v < u ? u : v;");
    e("u = w4 * xc[p4];");
    e("v = v < u ? u : v;");
    e("const {} o = yo[c * {}];", ct, bins);
    e("yo[c * {}] = (iy == 0 && ix == 0) || o < v ? v : o;", bins);
  }
  e("}}");
  e("}}");
  e("}}");
  if (!g.max) e("for (int64_t c = 0; c < {}; ++c) yo[c * {}] /= count;", g.C, bins);
  e("}}");
  e("}}");
}

}  // namespace

void register_roi_align(CKernelTable& t) { t["RoiAlign"] = {emit_roi_align, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
