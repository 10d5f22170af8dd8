// codegen/c/kernels/layout_transform.cc — onnxc.layout_transform in C: over (n, channel
// block) or (n, channel), the inner loop over positions, lanes innermost (contiguous writes
// for plain → blocked); parallel when the tensor is large enough.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/layout_transform.h"

namespace onnxc {
namespace {

void emit_layout_transform(CEmit& e) {
  const LayoutTransformBlocks lt = layout_transform_blocks(e.node);
  const Shape& s = e.in_shape(0);
  int64_t N = s[0], C = s[1], S = 1;
  for (size_t d = 2; d < s.size(); ++d) S *= s[d];
  const char* ct = e.in_ctype(0);
  if (N * C * S == 0) return;
  const bool par = e.parallel(static_cast<double>(N * C * S));
  if (lt.to != 0 && lt.from == 0) {  // plain → blocked: per (n, block), lanes innermost
    int64_t b = lt.to, CB = (C + b - 1) / b;
    open_collapsed(e, {{"n", N}, {"cb", CB}}, par);
    e("{}* restrict yb = {} + (n * {} + cb) * {};", ct, e.out(0), CB, S * b);
    e("const {}* restrict xb = {} + (n * {} + cb * {}) * {};", ct, e.in(0), C, b, S);
    e("const int64_t lanes = {} - cb * {} < {} ? {} - cb * {} : {};", C, b, b, C, b, b);
    e("for (int64_t p = 0; p < {}; ++p) {{", S);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) yb[p * {} + l] = l < lanes ? xb[l * {} + p] : ({})0;", b, b, S, ct);
    e("}}");
    e("}}");
    e("}}");
    return;
  }
  if (lt.to == 0) {  // blocked → plain: per (n, channel), positions innermost
    int64_t b = lt.from, CB = (C + b - 1) / b;
    open_collapsed(e, {{"n", N}, {"c", C}}, par);
    e("const {}* restrict xb = {} + ((n * {} + c / {}) * {}) * {} + c % {};", ct, e.in(0), CB, b, S, b, b);
    e("{}* restrict yc = {} + (n * {} + c) * {};", ct, e.out(0), C, S);
    e("for (int64_t p = 0; p < {}; ++p) yc[p] = xb[p * {}];", S, b);
    e("}}");
    e("}}");
    return;
  }
  // blocked → blocked with another block size: per output (n, block, position, lane).
  int64_t bi = lt.from, bo = lt.to, CBi = (C + bi - 1) / bi, CBo = (C + bo - 1) / bo;
  open_collapsed(e, {{"n", N}, {"cb", CBo}}, par);
  e("for (int64_t p = 0; p < {}; ++p) {{", S);
  e("for (int64_t l = 0; l < {}; ++l) {{", bo);
  e("const int64_t c = cb * {} + l;", bo);
  e("{}[((n * {} + cb) * {} + p) * {} + l] = c < {} ? {}[((n * {} + c / {}) * {} + p) * {} + c % {}] : ({})0;", e.out(0), CBo, S, bo,
    C, e.in(0), CBi, bi, S, bi, bi, ct);
  e("}}");
  e("}}");
  e("}}");
  e("}}");
}

}  // namespace

void register_layout_transform(CKernelTable& t) { t["onnxc.layout_transform"] = {emit_layout_transform, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
