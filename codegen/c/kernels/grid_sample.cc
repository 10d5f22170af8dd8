// codegen/c/kernels/grid_sample.cc — GridSample in C (ir/ops/grid_sample.cc; the arithmetic
// is ir/ops/grid_sample.h). Plain layout, 2-D form. One loop over the output points
// (n, oy, ox), parallel when the work is large: each point reads its grid location once,
// works out its taps (row offsets and columns, already padded) and weights, then runs over
// the channels, each a weighted sum of K x K pixels (1, 2 or 4 per axis). With zeros
// padding a tap outside reads 0 (index -1); border and reflection taps always land inside.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/grid_sample.h"

namespace onnxc {
namespace {

void emit_grid_sample(CEmit& e) {
  const GridSampleGeom& g = grid_sample_geom(e.node);
  DType t = e.out_dtype(0);
  const char* ct = dtype_ctype(t);
  const bool dbl = t == DType::F64;
  const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo, points = g.N * oplane;
  const int64_t total = points * g.C;
  if (total == 0) return;
  if (plane == 0) {  // no pixel to read
    e("memset({}, 0, {} * sizeof({}));", e.out(0), total, ct);
    return;
  }
  auto lit = [&](double v) { return c_literal(t, v); };
  const char* mode = g.mode == GridMode::Nearest ? "nearest" : g.mode == GridMode::Linear ? "linear" : "cubic";
  const char* pad = g.pad == GridPad::Zeros ? "zeros" : g.pad == GridPad::Border ? "border" : "reflection";
  e("/* GridSample {}, {} padding, align_corners {}: X [{},{},{},{}] at grid [{},{},{},2] */", mode, pad, g.align_corners ? 1 : 0,
    g.N, g.C, g.H, g.W, g.N, g.Ho, g.Wo);
  const int K = g.mode == GridMode::Nearest ? 1 : g.mode == GridMode::Linear ? 2 : 4;
  const double taps = static_cast<double>(K * K);
  if (points > 1 && e.parallel(static_cast<double>(total) * (2 * taps + 4))) e.open_nest({.loops = {{"q", points}}});
  else open_loop(e, "q", points);
  e("const int64_t n = q / {};", oplane);
  // the location in pixels, clamped (NaN to the low end)
  auto denorm = [&](const char* v, const char* src, int64_t len) {
    if (g.align_corners)
      e("{} {} = ({} + {}) / {} * {};", ct, v, src, lit(1), lit(2), lit(static_cast<double>(len - 1)));
    else
      e("{} {} = (({} + {}) * {} - {}) / {};", ct, v, src, lit(1), lit(static_cast<double>(len)), lit(1), lit(2));
    e("{0} = !({0} >= {1}) ? {1} : {0} > {2} ? {2} : {0};", v, lit(-kGridSampleLimit), lit(kGridSampleLimit));
  };
  denorm("x", fmt::format("({}){}[q * 2]", ct, e.in(1)).c_str(), g.W);
  denorm("y", fmt::format("({}){}[q * 2 + 1]", ct, e.in(1)).c_str(), g.H);
  // taps[j] = the padded index of integer position `first + j` along a dim of length L
  auto taps_of = [&](const char* arr, const std::string& first, int64_t L, bool rows) {
    e("int64_t {}[{}];", arr, K);
    e("for (int64_t j = 0; j < {}; ++j) {{", K);
    e("int64_t v = {} + j;", first);
    switch (g.pad) {
      case GridPad::Zeros: e("v = v >= 0 && v < {} ? v : -1;", L); break;
      case GridPad::Border: e("v = v < 0 ? 0 : v > {0} ? {0} : v;", L - 1); break;
      case GridPad::Reflection: {
        if (g.align_corners && L == 1) {
          e("v = 0;");
          break;
        }
        int64_t period = g.align_corners ? 2 * (L - 1) : 2 * L;
        e("v %= {};", period);
        e("if (v < 0) v += {};", period);
        e("v = v < {} ? v : {} - v;", L, g.align_corners ? period : period - 1);
        break;
      }
    }
    if (rows) e("{}[j] = {};", arr, g.pad == GridPad::Zeros ? fmt::format("v < 0 ? -1 : v * {}", g.W) : fmt::format("v * {}", g.W));
    else e("{}[j] = v;", arr);
    e("}}");
  };
  const char* fl = dbl ? "floor" : "floorf";
  if (g.mode == GridMode::Nearest) {
    taps_of("ry", fmt::format("(int64_t){}(y)", dbl ? "nearbyint" : "nearbyintf"), g.H, true);
    taps_of("cx", fmt::format("(int64_t){}(x)", dbl ? "nearbyint" : "nearbyintf"), g.W, false);
  } else if (g.mode == GridMode::Linear) {
    e("const int64_t ix1 = (int64_t){}(x), iy1 = (int64_t){}(y);", fl, fl);
    e("const {0} wx[2] = {{({0})(ix1 + 1) - x, x - ({0})ix1}};", ct);
    e("const {0} wy[2] = {{({0})(iy1 + 1) - y, y - ({0})iy1}};", ct);
    taps_of("ry", "iy1", g.H, true);
    taps_of("cx", "ix1", g.W, false);
  } else {
    e("const int64_t ix0 = (int64_t){}(x) - 1, iy0 = (int64_t){}(y) - 1;", fl, fl);
    // Keys' cubic convolution weights (A = -0.75) of the fraction s
    auto cubic = [&](const char* w, const char* s) {
      std::string A = lit(-0.75);
      e("{} {}[4];", ct, w);
      e("{{");
      e("{} s = {};", ct, s);
      e("s = s < 0 ? -s : s;");
      e("{0}[0] = (({1} * (s + {2}) - {3} * {1}) * (s + {2}) + {4} * {1}) * (s + {2}) - {5} * {1};", w, A, lit(1), lit(5), lit(8),
        lit(4));
      e("{0}[1] = (({1} + {2}) * s - ({1} + {3})) * s * s + {4};", w, A, lit(2), lit(3), lit(1));
      e("{0}[2] = (({1} + {2}) * ({4} - s) - ({1} + {3})) * ({4} - s) * ({4} - s) + {4};", w, A, lit(2), lit(3), lit(1));
      e("{0}[3] = (({1} * ({2} - s) - {3} * {1}) * ({2} - s) + {4} * {1}) * ({2} - s) - {5} * {1};", w, A, lit(2), lit(5), lit(8),
        lit(4));
      e("}}");
    };
    cubic("wx", fmt::format("x - ({})ix0 - {}", ct, lit(1)).c_str());
    cubic("wy", fmt::format("y - ({})iy0 - {}", ct, lit(1)).c_str());
    taps_of("ry", "iy0", g.H, true);
    taps_of("cx", "ix0", g.W, false);
  }
  e("const {}* restrict xn = {} + n * {};", ct, e.in(0), g.C * plane);
  e("{}* restrict yq = {} + n * {} + q;", ct, e.out(0), (g.C - 1) * oplane);
  e("for (int64_t c = 0; c < {}; ++c) {{", g.C);
  e("const {}* restrict xc = xn + c * {};", ct, plane);
  std::string pix = g.pad == GridPad::Zeros ? fmt::format("(ry[i] >= 0 && cx[j] >= 0 ? xc[ry[i] + cx[j]] : {})", lit(0))
                                            : std::string("xc[ry[i] + cx[j]]");
  if (K == 1) {
    e("const int64_t i = 0, j = 0;");
    e("yq[c * {}] = {};", oplane, pix);
  } else {
    e("{} acc = {};", ct, lit(0));
    e("for (int64_t i = 0; i < {}; ++i) {{", K);
    e("{} v = {};", ct, lit(0));
    e("for (int64_t j = 0; j < {}; ++j) v += wx[j] * {};", K, pix);
    e("acc += wy[i] * v;");
    e("}}");
    e("yq[c * {}] = acc;", oplane);
  }
  e("}}");
  e("}}");
}

}  // namespace

void register_grid_sample(CKernelTable& t) { t["GridSample"] = {emit_grid_sample, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
