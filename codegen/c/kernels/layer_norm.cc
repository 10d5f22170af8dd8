// codegen/c/kernels/layer_norm.cc — LayerNormalization and RMSNormalization in C
// (ir/ops/layer_norm.cc): one task per row (parallel when the work is large): the mean and the
// variance in double over the contiguous row (vector reductions), then Y = (X - mean) *
// inv_std * Scale + B, and the optional Mean and InvStdDev outputs; RMSNormalization takes
// the mean of squares and Y = X * inv_rms * Scale. With a run-time size (Node::run_a) the rows
// past the run's are skipped.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/layer_norm.h"

namespace onnxc {
namespace {

void emit_layer_norm(CEmit& e) {
  const LayerNormGeom& g = layer_norm_geom(e.node);
  const char* ct = e.in_ctype(0);
  bool has_b = e.has_in(2);
  if (g.rows > 1 && e.parallel(static_cast<double>(g.rows * g.cols * 4))) e.open_nest({.loops = {{"r", g.rows}}});
  else e("for (int64_t r = 0; r < {}; ++r) {{", g.rows);
  // A run-time size (compile-model --dynamic seq=MAX, Node::run_a): the run's rows only.
  if (e.node.run_a != 0) e("if (r >= {} * onnxc_n + {}) continue;", e.node.run_a, e.node.run_b);
  e("const {}* restrict x = {} + r * {};", ct, e.in(0), g.cols);
  e("{}* restrict y = {} + r * {};", ct, e.out(0), g.cols);
  if (g.rms) {
    e("double sq = 0.0;");
    simd(e, g.cols, "reduction(+:sq)");
    e("for (int64_t c = 0; c < {}; ++c) sq += (double)x[c] * (double)x[c];", g.cols);
    e("const {0} is = ({0})(1.0 / sqrt(sq / {1} + {2}));", ct, c_double(static_cast<double>(g.cols)), c_double(g.epsilon));
    simd(e, g.cols);
    e("for (int64_t c = 0; c < {}; ++c) y[c] = x[c] * is * {}[{}];", g.cols, e.in(1), g.scale_per_col ? "c" : "0");
    e("}}");
    return;
  }
  e("double sum = 0.0, sq = 0.0;");
  // The reduction clauses let the sums run in vector lanes (a plain `omp simd` leaves them
  // as one serial chain of double adds, the row's latency bound).
  simd(e, g.cols, "reduction(+:sum)");
  e("for (int64_t c = 0; c < {}; ++c) sum += (double)x[c];", g.cols);
  e("const double mean = sum / {};", c_double(static_cast<double>(g.cols)));
  simd(e, g.cols, "reduction(+:sq)");
  e("for (int64_t c = 0; c < {}; ++c) {{ const double d = (double)x[c] - mean; sq += d * d; }}", g.cols);
  e("const double inv = 1.0 / sqrt(sq / {} + {});", c_double(static_cast<double>(g.cols)), c_double(g.epsilon));
  std::string s = fmt::format("{}[{}]", e.in(1), g.scale_per_col ? "c" : "0");
  std::string b = has_b ? fmt::format(" + {}[{}]", e.in(2), g.bias_per_col ? "c" : "0") : "";
  e("const {0} m = ({0})mean, is = ({0})inv;", ct);
  simd(e, g.cols);
  e("for (int64_t c = 0; c < {}; ++c) y[c] = (x[c] - m) * is * {}{};", g.cols, s, b);
  if (e.node.out(1)) e("{}[r] = m;", e.out(1));
  if (e.node.out(2)) e("{}[r] = is;", e.out(2));
  e("}}");
}

}  // namespace

void register_layer_norm(CKernelTable& t) {
  t["LayerNormalization"] = {emit_layer_norm, nullptr, nullptr, nullptr};
  t["RMSNormalization"] = {emit_layer_norm, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
