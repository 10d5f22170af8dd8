// codegen/c/kernels/det.cc — Det in C (ir/ops/det.cc; the algorithm is ir/ops/det.h). One
// loop over the matrices, parallel when the work is large: each is copied to a stack buffer
// of doubles (at most kDetMaxM x kDetMaxM), factored in place by Gaussian elimination with
// partial pivoting, and its determinant, the signed product of the pivots, rounded once.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/det.h"

namespace onnxc {
namespace {

void emit_det(CEmit& e) {
  const DetGeom& g = det_geom(e.node);
  const char* ct = e.out_ctype(0);
  const int64_t M = g.M, mm = M * M;
  if (g.batch == 0) return;
  e("/* Det of {} matrices of {} x {}: LU with partial pivoting, in double */", g.batch, M, M);
  if (M == 0) {  // the empty product
    open_loop(e, "b", g.batch);
    e("{}[b] = ({})1;", e.out(0), ct);
    e("}}");
    return;
  }
  const double work = static_cast<double>(g.batch) * (2.0 / 3.0 * static_cast<double>(mm * M) + static_cast<double>(mm));
  if (g.batch > 1 && e.parallel(work)) e.open_nest({.loops = {{"b", g.batch}}});
  else open_loop(e, "b", g.batch);
  e("double a[{}];", mm);
  e("for (int64_t i = 0; i < {}; ++i) a[i] = (double){}[b * {} + i];", mm, e.in(0), mm);
  e("double det = 1.0;");
  e("for (int64_t k = 0; k < {}; ++k) {{", M);
  e("int64_t p = k;");
  e("double best = fabs(a[k * {} + k]);", M);
  e("for (int64_t i = k + 1; i < {}; ++i) {{", M);
  e("const double v = fabs(a[i * {} + k]);", M);
  e("if (v > best) {{");
  e("best = v;");
  e("p = i;");
  e("}}");
  e("}}");
  e("if (a[p * {} + k] == 0.0) {{", M);
  e("det = 0.0;");
  e("break;");
  e("}}");
  e("if (p != k) {{");
  e("for (int64_t j = 0; j < {}; ++j) {{", M);
  e("const double s = a[k * {0} + j];", M);
  e("a[k * {0} + j] = a[p * {0} + j];", M);
  e("a[p * {} + j] = s;", M);
  e("}}");
  e("det = -det;");
  e("}}");
  e("const double piv = a[k * {} + k];", M);
  e("det *= piv;");
  e("for (int64_t i = k + 1; i < {}; ++i) {{", M);
  e("const double f = a[i * {} + k] / piv;", M);
  e("for (int64_t j = k + 1; j < {0}; ++j) a[i * {0} + j] -= f * a[k * {0} + j];", M);
  e("}}");
  e("}}");
  e("{}[b] = ({})det;", e.out(0), ct);
  e("}}");
}

}  // namespace

void register_det(CKernelTable& t) { t["Det"] = {emit_det, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
