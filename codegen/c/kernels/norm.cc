// codegen/c/kernels/norm.cc — BatchNormalization and LRN in C, plain NCHW.
//  BatchNormalization (when the simplify pass could not fold it): per (image, channel) the
//    affine factors a = scale / sqrtf(var + eps) and b = B - mean * a, then y = x * a + b
//    over the contiguous spatial extent.
//  LRN: per (image, channel), the output plane first accumulates the window's sum of squares
//    (contiguous simd loops, one per window channel), then is turned into Y in place. Known
//    gap: powf per element (no special case for beta = 0.75).
#include <algorithm>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/norm.h"

namespace onnxc {
namespace {

void emit_batchnorm(CEmit& e) {
  const BatchNormAttrs& a = batchnorm_attrs(e.node);
  int64_t N = e.in_shape(0)[0];
  std::string X = e.in(0), sc = e.in(1), B = e.in(2), mean = e.in(3), var = e.in(4), Y = e.out(0);
  std::string eps = c_float(a.eps);
  open_collapsed(e, {{"n", N}, {"c", a.C}}, e.parallel(static_cast<double>(N * a.C * a.S)) && N * a.C > 1);
  e("const float* restrict xp = {} + (n * {} + c) * {};", X, a.C, a.S);
  e("float* restrict yp = {} + (n * {} + c) * {};", Y, a.C, a.S);
  if (a.spatial) {
    e("const float a = {}[c] / sqrtf({}[c] + {});", sc, var, eps);
    e("const float b = {}[c] - {}[c] * a;", B, mean);
  } else {
    e("const float* restrict sp = {} + c * {};", sc, a.S);
    e("const float* restrict bp = {} + c * {};", B, a.S);
    e("const float* restrict mp = {} + c * {};", mean, a.S);
    e("const float* restrict vp = {} + c * {};", var, a.S);
  }
  if (a.S >= 4) e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t i = 0; i < {}; ++i) {{", a.S);
  if (a.spatial) {
    e("yp[i] = ONNXC_FMA(xp[i], a, b);");
  } else {
    e("const float a = sp[i] / sqrtf(vp[i] + {});", eps);
    e("yp[i] = ONNXC_FMA(xp[i] - mp[i], a, bp[i]);");
  }
  e("}}");
  e("}}");
  e("}}");
}

void emit_lrn(CEmit& e) {
  const LrnAttrs& a = lrn_attrs(e.node);
  int64_t N = e.in_shape(0)[0];
  std::string X = e.in(0), Y = e.out(0);
  // Work per element: the window's FMAs (at most C: the window is clipped to the channels, and
  // size may be anything up to 2^63 - 1) and a powf (counted as 16 operations); in double, so no
  // product overflows.
  const double work = static_cast<double>(N) * static_cast<double>(a.C) * static_cast<double>(a.S) *
                      (static_cast<double>(std::min(a.size, a.C)) + 16);
  open_collapsed(e, {{"n", N}, {"c", a.C}}, e.parallel(work) && N * a.C > 1);
  e("const float* restrict xn = {} + n * {};", X, a.C * a.S);
  e("float* restrict yp = {} + (n * {} + c) * {};", Y, a.C, a.S);
  e("const int64_t q0 = c < {0} ? 0 : c - {0};", a.before());
  e("const int64_t q1 = c + {0} < {1} ? c + {0} : {1};", a.after() + 1, a.C);
  if (a.S >= 4) e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t i = 0; i < {}; ++i) yp[i] = 0.0f;", a.S);
  e("for (int64_t q = q0; q < q1; ++q) {{");
  e("const float* restrict xq = xn + q * {};", a.S);
  if (a.S >= 4) e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t i = 0; i < {}; ++i) yp[i] = ONNXC_FMA(xq[i], xq[i], yp[i]);", a.S);
  e("}}");
  e("const float* restrict xc = xn + c * {};", a.S);
  // (no simd hint: powf has no vector form without a vector math library)
  e("for (int64_t i = 0; i < {}; ++i) yp[i] = xc[i] / powf(ONNXC_FMA({}, yp[i], {}), {});", a.S,
    c_float(a.alpha / static_cast<double>(a.size)), c_float(a.bias), c_float(a.beta));
  e("}}");
  e("}}");
}

}  // namespace

void register_norm(CKernelTable& t) {
  t["BatchNormalization"] = {emit_batchnorm, nullptr, nullptr, nullptr};
  t["LRN"] = {emit_lrn, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
