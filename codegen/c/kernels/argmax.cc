// codegen/c/kernels/argmax.cc — ArgMax and ArgMin in C (ir/ops/argmax.cc): per (outer,
// inner) position a scan along the axis keeping the best value and its index (NaN skipped
// as in the reference); the outer loop goes parallel when the work is large.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/reduce.h"

namespace onnxc {
namespace {

void emit_argmax(CEmit& e) {
  const ArgGeom& g = arg_geom(e.node);
  const char* ct = e.in_ctype(0);
  bool fl = dtype_is_float(e.in_dtype(0));
  std::string better = fmt::format("c {} bv", g.max ? ">" : "<");
  if (fl) better = fmt::format("({} || (bv != bv && c == c))", better);
  if (g.last) better = fmt::format("({} || c == bv)", better);
  int64_t n = g.outer * g.inner;
  if (n > 1 && e.parallel(static_cast<double>(n * g.len))) e.open_nest({.loops = {{"o", n}}});
  else e("for (int64_t o = 0; o < {}; ++o) {{", n);
  e("const {}* restrict p = {} + (o / {}) * {} + o % {};", ct, e.in(0), g.inner, g.len * g.inner, g.inner);
  e("{} bv = p[0];", ct);
  e("int64_t best = 0;");
  e("for (int64_t j = 1; j < {}; ++j) {{", g.len);
  e("const {} c = p[j * {}];", ct, g.inner);
  e("if ({}) {{ bv = c; best = j; }}", better);
  e("}}");
  e("{}[o] = best;", e.out(0));
  e("}}");
}

void emit_hardmax(CEmit& e) {
  const ArgGeom& g = hardmax_geom(e.node);
  const char* ct = e.in_ctype(0);
  int64_t n = g.outer * g.inner;
  if (n == 0 || g.len == 0) return;
  if (n > 1 && e.parallel(static_cast<double>(n * g.len * 2))) e.open_nest({.loops = {{"q", n}}});
  else e("for (int64_t q = 0; q < {}; ++q) {{", n);
  e("const int64_t base = (q / {}) * {} + q % {};", g.inner, g.len * g.inner, g.inner);
  e("const {}* restrict p = {} + base;", ct, e.in(0));
  e("{}* restrict y = {} + base;", ct, e.out(0));
  e("{} bv = p[0];", ct);
  e("int64_t best = 0;");
  e("for (int64_t j = 1; j < {}; ++j) if (p[j * {}] > bv) {{ bv = p[j * {}]; best = j; }}", g.len, g.inner, g.inner);
  e("for (int64_t j = 0; j < {}; ++j) y[j * {}] = j == best ? 1 : 0;", g.len, g.inner);
  e("}}");
}

}  // namespace

void register_argmax(CKernelTable& t) {
  t["ArgMax"] = {emit_argmax, nullptr, nullptr, nullptr};
  t["ArgMin"] = {emit_argmax, nullptr, nullptr, nullptr};
  t["Hardmax"] = {emit_hardmax, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
