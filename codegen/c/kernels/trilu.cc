// codegen/c/kernels/trilu.cc — Trilu in C (ir/ops/trilu.cc): per matrix row i the column
// where the kept part starts (upper) or ends (lower) is clamp(i + k (+1 for lower), 0,
// cols); the row is two loops, one zeroing, one copying. Any dtype; the matrices go
// parallel when large. EyeLike: the output zeroed, then its diagonal set to 1.
#include <algorithm>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/index_ops.h"

namespace onnxc {
namespace {

void emit_trilu(CEmit& e) {
  const TriluGeom& g = trilu_geom(e.node);
  if (g.batch * g.rows * g.cols == 0) return;
  const char* ct = e.out_ctype(0);
  int64_t shift = g.upper ? g.k : g.k + 1;
  open_tasks(e, {{"b", g.batch, 1}, {"i", g.rows, 1}}, g.batch * g.rows > 1 && e.parallel(static_cast<double>(g.batch * g.rows * g.cols)));
  e("const {}* restrict x = {} + (b * {} + i) * {};", ct, e.in(0), g.rows, g.cols);
  e("{}* restrict y = {} + (b * {} + i) * {};", ct, e.out(0), g.rows, g.cols);
  e("const int64_t s = i + ({});", shift);
  e("const int64_t c = s < 0 ? 0 : s > {0} ? {0} : s;", g.cols);
  e("for (int64_t j = 0; j < c; ++j) y[j] = {};", g.upper ? "0" : "x[j]");
  e("for (int64_t j = c; j < {}; ++j) y[j] = {};", g.cols, g.upper ? "x[j]" : "0");
  e("}}");
  e("}}");
}

void emit_eyelike(CEmit& e) {
  const TriluGeom& g = eyelike_geom(e.node);
  if (g.rows * g.cols == 0) return;
  e("memset({}, 0, {} * sizeof({}));", e.out(0), g.rows * g.cols, e.out_ctype(0));
  // rows i with 0 <= i + k < cols
  int64_t lo = std::max<int64_t>(0, -g.k), hi = std::min<int64_t>(g.rows, g.cols - g.k);
  if (lo < hi) e("for (int64_t i = {}; i < {}; ++i) {}[i * {} + i + ({})] = 1;", lo, hi, e.out(0), g.cols, g.k);
}

}  // namespace

void register_trilu(CKernelTable& t) {
  t["Trilu"] = {emit_trilu, nullptr, nullptr, nullptr};
  t["EyeLike"] = {emit_eyelike, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
