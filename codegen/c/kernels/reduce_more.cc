// codegen/c/kernels/reduce_more.cc — ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp and ReduceSumSquare in C (ir/ops/reduce.cc says what they mean; ReduceSum,
// ReduceMean and ReduceMax are kernels/reduce.cc). Plain layout, one loop nest: the kept
// dims outside (the first one parallel when the work is large), an accumulator per output
// element, the reduced dims inside, in input order. Floats accumulate in double and round
// once, integers in uint64_t (wrapping) or, for Min, in their own type. The scalar libm
// calls (sqrt, log, exp) stay out of the inner loop but for LogSumExp's exp.
#include <limits>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/elementwise.h"
#include "ir/ops/reduce.h"

namespace onnxc {
namespace {

void emit_reduce_more(CEmit& e) {
  const ReduceGeom& rg = reduce_geom(e.node);
  const std::string& k = e.node.op_type;
  const Shape& x = e.in_shape(0);
  DType t = e.in_dtype(0);
  const char* ct = e.in_ctype(0);
  int64_t nx = numel(x);
  if (rg.noop) {
    emit_copy_all(e, e.out(0), e.in(0), nx, t);
    return;
  }
  Shape xst = strides_of(x);
  std::vector<size_t> kept, red;
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    (rg.reduced[d] ? red : kept).push_back(d);
  }
  bool fl = dtype_is_float(t), is_min = k == "ReduceMin";
  std::string acc_t = fl ? "double" : is_min ? ct : "uint64_t";
  std::string init = "0";
  if (k == "ReduceProd") init = "1";
  if (is_min) {
    if (fl) init = "INFINITY";
    else if (t == DType::Bool) init = "1";
    else visit_dtype(t, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>) init = c_int(static_cast<int64_t>(std::numeric_limits<T>::max()));
    });
  }
  // acc = combine(acc, v) for an element v (type ct).
  std::string v = fl ? "(double)v" : "(uint64_t)v";
  std::string step;
  // (a compare-select skips NaN like fmin, without a libm call)
  if (is_min) step = fl ? "acc = (double)v < acc ? (double)v : acc;" : "acc = v < acc ? v : acc;";
  else if (k == "ReduceProd") step = fmt::format("acc *= {};", v);
  else if (k == "ReduceL1") step = fl ? "acc += fabs((double)v);" : "acc += v < 0 ? 0 - (uint64_t)v : (uint64_t)v;";
  else if (k == "ReduceL2" || k == "ReduceSumSquare") step = fmt::format("acc += {0} * {0};", v);
  else if (k == "ReduceLogSum") step = fmt::format("acc += {};", v);
  // float32: the inline exp of codegen/c/vmath.h (overflowing like the float32 reference)
  else if (k == "ReduceLogSumExp") step = t == DType::F32 ? "acc += onnxc_expf(v);" : "acc += exp((double)v);";
  std::string fin = "acc";
  if (k == "ReduceL2") fin = "sqrt(acc)";
  if (k == "ReduceLogSum" || k == "ReduceLogSumExp") fin = "log(acc)";
  e("/* {} over dims [{}] of {} */", k, fmt::join(red, ","), shape_str(x));
  Shape kst;  // output strides of the kept dims (the output holds them in input order)
  {
    Shape ks;
    for (size_t d : kept) ks.push_back(x[d]);
    kst = strides_of(ks);
  }
  std::string xi, yi;
  auto add = [](std::string& s, const std::string& term) { s += (s.empty() ? "" : " + ") + term; };
  for (size_t j = 0; j < kept.size(); ++j) {
    size_t d = kept[j];
    if (j == 0 && x[d] > 1 && e.parallel(static_cast<double>(nx))) e.open_nest({.loops = {{fmt::format("k{}", j), x[d]}}});
    else e("for (int64_t k{0} = 0; k{0} < {1}; ++k{0}) {{", j, x[d]);
    add(xi, xst[d] == 1 ? fmt::format("k{}", j) : fmt::format("k{} * {}", j, xst[d]));
    add(yi, kst[j] == 1 ? fmt::format("k{}", j) : fmt::format("k{} * {}", j, kst[j]));
  }
  e("{} acc = {};", acc_t, init);
  for (size_t j = 0; j < red.size(); ++j) {
    size_t d = red[j];
    e("for (int64_t r{0} = 0; r{0} < {1}; ++r{0}) {{", j, x[d]);
    add(xi, xst[d] == 1 ? fmt::format("r{}", j) : fmt::format("r{} * {}", j, xst[d]));
  }
  e("const {} v = {}[{}];", ct, e.in(0), xi.empty() ? "0" : xi);
  e("{}", step);
  for (size_t j = 0; j < red.size(); ++j) e("}}");
  e("{}[{}] = ({})({});", e.out(0), yi.empty() ? "0" : yi, e.out_ctype(0), fin);
  for (size_t j = 0; j < kept.size(); ++j) e("}}");
}

}  // namespace

void register_reduce_more(CKernelTable& t) {
  for (const char* k : {"ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    t[k] = {emit_reduce_more, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
