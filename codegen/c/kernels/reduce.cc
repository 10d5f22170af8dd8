// codegen/c/kernels/reduce.cc — ReduceSum, ReduceMean and ReduceMax in C. The loop nest
// drops size-1 dims and merges neighbouring dims that are both reduced or both kept. One
// trailing reduced group is a parallel set of contiguous reductions into a local
// accumulator (SIMD for sums; for max emit_max_reduce's lane maxima); any other pattern
// initialises Y, accumulates in a loop nest whose innermost loop runs over contiguous
// memory, and (Mean) divides at the end. Only a leading kept group runs in parallel. Max is
// the compare-select `v > acc ? v : acc` for every dtype: the accumulator is never NaN, so a
// NaN element is skipped as std::fmax skips it in the reference.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/reduce.h"

namespace onnxc {
namespace {

void emit_reduce(CEmit& e) {
  const ReduceGeom& rg = reduce_geom(e.node);
  const bool is_max = e.node.op_type == "ReduceMax", is_mean = e.node.op_type == "ReduceMean";
  const Shape& x = e.in_shape(0);
  DType t = e.in_dtype(0);
  const char* ct = e.in_ctype(0);
  int64_t ny = numel(e.out_shape(0)), nx = numel(x);
  if (rg.noop) {
    e("memcpy({}, {}, {});", e.out(0), e.in(0), nx * static_cast<int64_t>(dtype_size(t)));
    return;
  }
  // Groups of neighbouring dims with the same role, size-1 dims dropped.
  std::vector<int64_t> size;
  std::vector<bool> red;
  int64_t count = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (rg.reduced[d]) count *= x[d];
    if (x[d] == 1) continue;
    if (!red.empty() && red.back() == rg.reduced[d]) size.back() *= x[d];
    else size.push_back(x[d]), red.push_back(rg.reduced[d]);
  }
  bool fl = t == DType::F32, dbl = t == DType::F64;
  std::string init = !is_max ? c_literal(t, 0)
                   : fl || dbl     ? "(-INFINITY)"
                   : t == DType::I32 ? "INT32_MIN"
                   : t == DType::I64 ? "INT64_MIN"
                   : t == DType::I8  ? "INT8_MIN"
                                     : "0";
  auto combine = [&](const std::string& a, const std::string& b) {  // a: the accumulator
    if (!is_max) return fmt::format("{} + {}", a, b);
    return fmt::format("{1} > {0} ? {1} : {0}", a, b);
  };
  // `acc`, the sum or maximum of x[0..n).
  auto emit_acc = [&](const std::string& x, int64_t n) {
    if (is_max) return emit_max_reduce(e, "acc", init, x, n, t);
    e("{} acc = {};", ct, init);
    e("ONNXC_PRAGMA(omp simd reduction(+:acc))");
    e("for (int64_t i = 0; i < {}; ++i) acc = {};", n, combine("acc", x + "[i]"));
  };
  std::string divisor = c_literal(t, static_cast<double>(count));
  auto finish = [&](const std::string& v) { return is_mean ? fmt::format("{} / {}", v, divisor) : v; };
  size_t m = size.size();
  int nred = 0;
  for (bool r : red) nred += r;

  if (nred == 0) {  // only size-1 dims are reduced: a copy (Mean divides by 1)
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) {}[i] = {}[i];", nx, e.out(0), e.in(0));
    return;
  }
  if (nred == 1 && red.back()) {  // [outer, R]: one contiguous reduction per output
    int64_t r = size.back();
    if (ny > 1 && e.parallel(static_cast<double>(nx))) e.open_nest({.loops = {{"o", ny}}});
    else e("for (int64_t o = 0; o < {}; ++o) {{", ny);
    e("const {}* restrict x = {} + o * {};", ct, e.in(0), r);
    if (r == 0) e("(void)x; /* an empty reduction: every output is the initial value */");
    emit_acc("x", r);
    e("{}[o] = {};", e.out(0), finish("acc"));
    e("}}");
    return;
  }
  // General: Y = init; accumulate over a loop nest in input order; Mean divides at the end.
  e.serial();
  e("for (int64_t o = 0; o < {}; ++o) {}[o] = {};", ny, e.out(0), init);
  Shape xst = strides_of(Shape(size.begin(), size.end()));
  Shape kept;
  for (size_t g = 0; g < m; ++g)
    if (!red[g]) kept.push_back(size[g]);
  Shape kst = strides_of(kept);
  std::vector<int64_t> yst(m, 0);
  for (size_t g = 0, k = 0; g < m; ++g)
    if (!red[g]) yst[g] = kst[k++];
  auto index = [&](const std::vector<int64_t>& st, size_t upto) {
    std::string s;
    for (size_t g = 0; g < upto; ++g)
      if (st[g]) s += fmt::format("{}g{}{}", s.empty() ? "" : " + ", g, st[g] == 1 ? "" : fmt::format(" * {}", st[g]));
    return s.empty() ? std::string("0") : s;
  };
  std::vector<int64_t> xs(xst.begin(), xst.end());
  bool par = !red[0] && size[0] > 1 && e.parallel(static_cast<double>(nx));
  for (size_t g = 0; g + 1 < m; ++g) {
    if (g == 0 && par) e.open_nest({.loops = {{fmt::format("g{}", g), size[g]}}});
    else e("for (int64_t g{0} = 0; g{0} < {1}; ++g{0}) {{", g, size[g]);
  }
  std::string xi = index(xs, m - 1), yi = index(yst, m - 1);
  if (red.back()) {
    e("const {}* restrict x = {} + {};", ct, e.in(0), xi);
    emit_acc("x", size.back());
    e("{0}[{1}] = {2};", e.out(0), yi, combine(fmt::format("{}[{}]", e.out(0), yi), "acc"));
  } else {
    e("const {}* restrict x = {} + {};", ct, e.in(0), xi);
    e("{}* restrict y = {} + {};", ct, e.out(0), yi);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) y[i] = {};", size.back(), combine("y[i]", "x[i]"));
  }
  for (size_t g = 0; g + 1 < m; ++g) e("}}");
  if (is_mean) {
    e.serial();
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t o = 0; o < {}; ++o) {}[o] = {};", ny, e.out(0), finish(fmt::format("{}[o]", e.out(0))));
  }
}

}  // namespace

void register_reduce(CKernelTable& t) {
  for (const char* k : {"ReduceSum", "ReduceMean", "ReduceMax"}) t[k] = {emit_reduce, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
