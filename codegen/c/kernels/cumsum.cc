// codegen/c/kernels/cumsum.cc — CumSum and CumProd in C (ir/ops/cumsum.cc): x as [outer, len,
// inner]; per outer block the rows along the axis in order (reverse: from the end), each row
// the previous row of sums (products) and the current (exclusive: previous) row of x,
// vectorized over `inner`; the outer blocks go parallel when large. Integers add and multiply
// in uint64_t (wrapping).
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/index_ops.h"

namespace onnxc {
namespace {

void emit_cumsum(CEmit& e) {
  const CumSumGeom& g = cumsum_geom(e.node);
  if (g.outer * g.len * g.inner == 0) return;
  DType t = e.out_dtype(0);
  const char* ct = e.out_ctype(0);
  const char* op = g.prod ? "*" : "+";
  auto add = [&](const std::string& a, const std::string& b) {
    if (dtype_is_int(t)) return fmt::format("({})((uint64_t){} {} (uint64_t){})", ct, a, op, b);
    return fmt::format("{} {} {}", a, op, b);
  };
  std::string zero = c_literal(t, g.prod ? 1 : 0);
  if (g.outer > 1 && e.parallel(static_cast<double>(g.outer * g.len * g.inner))) e.open_nest({.loops = {{"o", g.outer}}});
  else open_loop(e, "o", g.outer);
  e("const {}* restrict x = {} + o * {};", ct, e.in(0), g.len * g.inner);
  e("{}* restrict y = {} + o * {};", ct, e.out(0), g.len * g.inner);
  // Row j of the scan (0 = first) is row `R(j)` of the tensor.
  auto row = [&](const std::string& j) { return g.reverse ? fmt::format("({} - {})", g.len - 1, j) : j; };
  std::string r0 = row("0");
  simd(e, g.inner);
  e("for (int64_t i = 0; i < {}; ++i) y[{} * {} + i] = {};", g.inner, r0, g.inner, g.exclusive ? zero : add(zero, fmt::format("x[{} * {} + i]", r0, g.inner)));
  if (g.len > 1) {
    e("for (int64_t j = 1; j < {}; ++j) {{", g.len);
    e("const int64_t cur = {} * {}, prev = {} * {};", row("j"), g.inner, row("(j - 1)"), g.inner);
    simd(e, g.inner);
    e("for (int64_t i = 0; i < {}; ++i) y[cur + i] = {};", g.inner, add("y[prev + i]", g.exclusive ? "x[prev + i]" : "x[cur + i]"));
    e("}}");
  }
  e("}}");
}

}  // namespace

void register_cumsum(CKernelTable& t) {
  t["CumSum"] = {emit_cumsum, nullptr, nullptr, nullptr};
  t["CumProd"] = {emit_cumsum, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
