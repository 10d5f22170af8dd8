// codegen/c/kernels/softmax.cc — Softmax and LogSoftmax in C. inner == 1 is three contiguous
// passes per row (max, exp-sum, scale), rows in parallel; inner > 1 keeps per-column max and
// sum for a block of up to 256 columns in small stack arrays and sweeps L with the contiguous
// column block innermost. Every loop vectorizes: exp and log are the inline helpers of
// codegen/c/vmath.h, the maximum is a compare-select that skips NaN as the reference's
// std::fmax does (emit_max_reduce for a row), sums are `omp simd` reductions.
#include <algorithm>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/softmax.h"

namespace onnxc {
namespace {

void emit_softmax(CEmit& e) {
  const SoftmaxGeom& g = softmax_geom(e.node);
  const bool log = e.node.op_type == "LogSoftmax";
  int64_t total = g.outer * g.L * g.inner;
  // Work per element: a max, an expf (counted as 8 operations), an add and a scale.
  bool par = e.parallel(static_cast<double>(total * 11));
  if (g.inner == 1) {
    if (par && g.outer > 1) e.open_nest({.loops = {{"o", g.outer}}});
    else e("for (int64_t o = 0; o < {}; ++o) {{", g.outer);
    e("const float* restrict x = {} + o * {};", e.in(0), g.L);
    e("float* restrict y = {} + o * {};", e.out(0), g.L);
    emit_max_reduce(e, "m", "(-INFINITY)", "x", g.L, DType::F32);
    e("float s = 0.0f;");
    simd(e, g.L, "reduction(+:s)");
    if (log) {
      e("for (int64_t i = 0; i < {}; ++i) s += onnxc_expf(x[i] - m);", g.L);
      e("const float ls = onnxc_logf(s);");
      simd(e, g.L);
      e("for (int64_t i = 0; i < {}; ++i) y[i] = (x[i] - m) - ls;", g.L);
    } else {
      e("for (int64_t i = 0; i < {}; ++i) {{", g.L);
      e("const float v = onnxc_expf(x[i] - m);");
      e("y[i] = v;");
      e("s += v;");
      e("}}");
      e("const float r = 1.0f / s;");
      simd(e, g.L);
      e("for (int64_t i = 0; i < {}; ++i) y[i] *= r;", g.L);
    }
    e("}}");
    return;
  }
  // [outer, L, inner]: column blocks of up to IB, per-column max and sum on the stack.
  const int64_t IB = std::min<int64_t>(g.inner, 256);
  bool blocks = g.inner > IB;
  int nloops = (g.outer > 1) + blocks;
  ParallelNest nest;
  if (g.outer > 1) nest.loops.push_back({"o", g.outer});
  if (blocks) nest.loops.push_back({"i0", g.inner, IB});
  if (par && nloops > 0) {
    e.open_nest(nest);
  } else {
    for (const NestLoop& l : nest.loops) e("{} {{", l.header());
  }
  if (nloops == 0) e("{{");
  if (g.outer == 1) e("const int64_t o = 0;");
  if (!blocks) e("const int64_t i0 = 0;");
  std::string ni = std::to_string(IB);
  if (blocks && g.inner % IB != 0) {
    e("const int64_t ni = i0 + {0} < {1} ? {0} : {1} - i0;", IB, g.inner);
    ni = "ni";
  }
  e("const float* restrict x = {} + o * {} + i0;", e.in(0), g.L * g.inner);
  e("float* restrict y = {} + o * {} + i0;", e.out(0), g.L * g.inner);
  e("float m[{}], s[{}];", IB, IB);
  e("for (int64_t i = 0; i < {}; ++i) {{", ni);
  e("m[i] = -INFINITY;");
  e("s[i] = 0.0f;");
  e("}}");
  e("for (int64_t l = 0; l < {}; ++l) {{", g.L);
  simd(e, IB);
  e("for (int64_t i = 0; i < {0}; ++i) m[i] = x[l * {1} + i] > m[i] ? x[l * {1} + i] : m[i];", ni, g.inner);
  e("}}");
  e("for (int64_t l = 0; l < {}; ++l) {{", g.L);
  simd(e, IB);
  e("for (int64_t i = 0; i < {}; ++i) {{", ni);
  e("const float v = onnxc_expf(x[l * {} + i] - m[i]);", g.inner);
  if (!log) e("y[l * {} + i] = v;", g.inner);
  e("s[i] += v;");
  e("}}");
  e("}}");
  simd(e, IB);
  if (log) e("for (int64_t i = 0; i < {}; ++i) s[i] = onnxc_logf(s[i]);", ni);
  else e("for (int64_t i = 0; i < {}; ++i) s[i] = 1.0f / s[i];", ni);
  e("for (int64_t l = 0; l < {}; ++l) {{", g.L);
  simd(e, IB);
  if (log) e("for (int64_t i = 0; i < {0}; ++i) y[l * {1} + i] = (x[l * {1} + i] - m[i]) - s[i];", ni, g.inner);
  else e("for (int64_t i = 0; i < {}; ++i) y[l * {} + i] *= s[i];", ni, g.inner);
  e("}}");
  for (int k = 0; k < std::max(nloops, 1); ++k) e("}}");
}

}  // namespace

void register_softmax(CKernelTable& t) {
  t["Softmax"] = {emit_softmax, nullptr, nullptr, nullptr};
  t["LogSoftmax"] = {emit_softmax, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
