// codegen/c/kernels/signal.cc — DFT, STFT, the windows and MelWeightMatrix in C
// (ir/ops/signal.cc; the views are ir/ops/signal.h).
//
// DFT and STFT are one kernel over DftGeom: per transform and output bin a direct sum over
// the samples, y[k] = sum_j x[j] w[(k*j) mod n], the twiddles w = exp(-+2 pi i t / n)
// computed in the compiler (unit_root) and emitted as static const tables of exact double
// literals, the index k*j mod n carried along the sum by adding k (no multiplication, no
// division). Sums run in double whatever the float type and are rounded once; that is the
// reference's arithmetic (eval), so float32 results are within about 2^-24 relative of the
// exact transform plus 2^-53 n sum|x| — far inside the 1e-3 relative the node tests allow.
// The inverse of a one-sided spectrum (c2r) sums the real parts, doubled for the bins that
// stand for their conjugates too. The (transform, bin) pairs go parallel when the work is large.
// Known gap: O(n^2) per transform, and the sum is scalar (the twiddle index is carried from
// one sample to the next); an FFT would be O(n log n). Fine for frame-sized transforms.
//
// Windows and MelWeightMatrix are constants of the model (their inputs must be constants)
// and are folded when shapes are inferred; these kernels only run for outputs over the
// folding limit (2^24 elements) or the --max-memory cap. A window is computed with libm's cos in
// double (within a few ulps of double of the folded values, which reduce the angle
// exactly); MelWeightMatrix fills its triangles from the corners the compiler computed.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/signal.h"

namespace onnxc {
namespace {

void emit_dft(CEmit& e) {
  const DftGeom& g = dft_geom(e.node);
  if (g.count_a * g.count_b * g.bins == 0) return;
  const char* ct = e.out_ctype(0);
  std::vector<std::string> wr, wi;
  for (int64_t t = 0; t < g.n; ++t) {
    double c, s;
    unit_root(t, g.n, &c, &s);
    wr.push_back(c_double(c));
    wi.push_back(c_double(g.inverse ? s : -s));
  }
  e("/* {} transform(s) of {} points, {} {} input, {} {} each */", g.count_a * g.count_b, g.n, g.inverse ? "inverse," : "forward,",
    g.c2r ? "one-sided complex" : g.comps == 2 ? "complex" : "real", g.bins, g.c2r ? "real samples" : "bins");
  emit_table(e, "double wr", fmt::format("[{}]", wr.size()), wr);
  emit_table(e, "double wi", fmt::format("[{}]", wi.size()), wi);
  double work = static_cast<double>(g.count_a * g.count_b * g.bins) * static_cast<double>(g.used) * (g.comps == 2 ? 8.0 : 4.0);
  open_tasks(e, {{"a", g.count_a, 1}, {"b", g.count_b, 1}, {"k", g.bins, 1}}, e.parallel(work));
  e("const {}* restrict x = {} + a * {} + b * {};", ct, e.in(0), g.xa, g.xb);
  e("double re = 0.0{};", g.c2r ? "" : ", im = 0.0");
  e("int64_t t = 0;");
  e("for (int64_t j = 0; j < {}; ++j) {{", g.used);
  std::string win = g.window ? fmt::format(" * (double){}[j]", e.in(2)) : "";
  e("const double xr = (double)x[j * {}]{};", g.xs, win);
  if (g.c2r) {  // the real part, twice for the bins that stand for their conjugates too
    e("const double xi = (double)x[j * {} + 1];", g.xs);
    e("re += (j == 0 || j * 2 == {} ? 1.0 : 2.0) * (xr * wr[t] - xi * wi[t]);", g.n);
  } else if (g.comps == 2) {
    e("const double xi = (double)x[j * {} + 1]{};", g.xs, win);
    e("re += xr * wr[t] - xi * wi[t];");
    e("im += xr * wi[t] + xi * wr[t];");
  } else {
    e("re += xr * wr[t];");
    e("im += xr * wi[t];");
  }
  e("t += k;");
  e("if (t >= {0}) t -= {0};", g.n);
  e("}}");
  if (g.inverse) {
    e("re /= {};", c_double(static_cast<double>(g.n)));
    if (!g.c2r) e("im /= {};", c_double(static_cast<double>(g.n)));
  }
  e("{}* restrict y = {} + a * {} + b * {} + k * {};", ct, e.out(0), g.ya, g.yb, g.ys);
  e("y[0] = ({})re;", ct);
  if (!g.c2r) e("y[1] = ({})im;", ct);
  for (int i = 0; i < 3; ++i) e("}}");
}

void emit_window(CEmit& e) {
  const WindowGeom& g = window_geom(e.node);
  if (g.size == 0) return;
  DType t = e.out_dtype(0);
  if (g.period == 0) {  // one sample of a symmetric window: 0/0
    e("{}[0] = {};", e.out(0), c_convert(DType::F64, t, "(double)NAN"));
    return;
  }
  const double kTwoPi = 6.283185307179586476925286766559;
  double ang = kTwoPi / static_cast<double>(g.period);
  std::string v = fmt::format("{} - {} * cos({} * (double)k)", c_double(g.a0), c_double(g.a1), c_double(ang));
  if (g.a2 != 0) v += fmt::format(" + {} * cos({} * (double)k)", c_double(g.a2), c_double(2 * ang));
  if (e.parallel(static_cast<double>(g.size) * 20)) e.open_nest({.loops = {{"k", g.size}}, .schedule_static = true});
  else e("for (int64_t k = 0; k < {}; ++k) {{", g.size);
  e("const double v = {};", v);
  e("{}[k] = {};", e.out(0), c_convert(DType::F64, t, "v"));
  e("}}");
}

void emit_mel(CEmit& e) {
  const MelGeom& g = mel_geom(e.node);
  const int64_t M = g.mel_bins;
  if (M == 0) return;
  DType t = e.out_dtype(0);
  const char* ct = e.out_ctype(0);
  const std::string& y = e.out(0);
  e("memset({}, 0, sizeof({}) * {});", y, ct, g.spec_bins * M);
  std::vector<std::string> pts;
  for (int64_t p : g.points) pts.push_back(c_int(p));
  emit_table(e, "int64_t pt", fmt::format("[{}]", pts.size()), pts);
  e("for (int64_t i = 0; i < {}; ++i) {{", M);
  e("const int64_t lo = pt[i], c = pt[i + 1], hi = pt[i + 2];");
  e("if (c == lo) {{");
  e("{}[c * {} + i] = {};", y, M, c_literal(t, 1.0));
  e("}} else {{");
  e("for (int64_t j = lo; j <= c; ++j) {}[j * {} + i] = {};", y, M, c_convert(DType::F64, t, "((double)(j - lo) / (double)(c - lo))"));
  e("}}");
  e("for (int64_t j = c; j < hi; ++j) {}[j * {} + i] = {};", y, M, c_convert(DType::F64, t, "((double)(hi - j) / (double)(hi - c))"));
  e("}}");
}

}  // namespace

void register_signal(CKernelTable& t) {
  t["DFT"] = {emit_dft, nullptr, nullptr, nullptr};
  t["STFT"] = {emit_dft, nullptr, nullptr, nullptr};
  for (const char* k : {"HannWindow", "HammingWindow", "BlackmanWindow"}) t[k] = {emit_window, nullptr, nullptr, nullptr};
  t["MelWeightMatrix"] = {emit_mel, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
