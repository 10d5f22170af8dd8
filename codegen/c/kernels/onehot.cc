// codegen/c/kernels/onehot.cc — OneHot in C (ir/ops/onehot.cc): the output as [outer,
// depth, inner]; off and on read once from `values`, each index converted to int64 (floats
// saturating, as c_convert) and wrapped once, then every output element is a select,
// vectorized over `inner`; the outer loop goes parallel when large.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/index_ops.h"

namespace onnxc {
namespace {

void emit_onehot(CEmit& e) {
  const OneHotGeom& g = onehot_geom(e.node);
  if (g.outer * g.depth * g.inner == 0) return;
  const char* ct = e.out_ctype(0);
  e("const {0} off = {1}[0], on = {1}[1];", ct, e.in(2));
  if (g.outer > 1 && e.parallel(static_cast<double>(g.outer * g.depth * g.inner))) e.open_nest({.loops = {{"o", g.outer}}});
  else open_loop(e, "o", g.outer);
  e("for (int64_t d = 0; d < {}; ++d) {{", g.depth);
  simd(e, g.inner);
  e("for (int64_t i = 0; i < {}; ++i) {{", g.inner);
  e("const {} v = {}[o * {} + i];", e.in_ctype(0), e.in(0), g.inner);
  e("const int64_t k0 = {};", c_convert(e.in_dtype(0), DType::I64, "v"));
  e("const int64_t k = k0 < 0 ? k0 + {} : k0;", g.depth);
  e("{}[(o * {} + d) * {} + i] = k == d ? on : off;", e.out(0), g.depth, g.inner);
  e("}}");
  e("}}");
  e("}}");
}

}  // namespace

void register_onehot(CKernelTable& t) { t["OneHot"] = {emit_onehot, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
