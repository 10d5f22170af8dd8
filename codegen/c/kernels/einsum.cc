// codegen/c/kernels/einsum.cc — Einsum in C (ir/ops/einsum.cc; labels resolved in
// ir/ops/einsum.h). One loop per label, each input indexed with its own label strides.
// Two loop orders, picked by where the stride-1 dims are:
//   axpy  the last output label innermost (it is contiguous in the output and in some
//         input: "bij,bjk->bik" runs as y[b,i,:] += A[b,i,j] * B[b,j,:]): the output row
//         is zeroed, the summed labels loop around it; accumulation in the output's dtype.
//   dot   otherwise ("bhid,bhjd->bhij", "ij->i", transposes): every output element is a
//         sum over the summed labels (the innermost contiguous in the inputs) in double.
// The first output loop goes parallel when the work is large. Known gap: no register or
// cache tiling (MatMul's kernel is faster for plain matrix products).
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/einsum.h"

namespace onnxc {
namespace {

void emit_einsum(CEmit& e) {
  const EinsumGeom& g = einsum_geom(e.node);
  double total = 1;  // the work, in double: the product of all label sizes may pass 2^63
  for (int64_t d : g.dims) total *= static_cast<double>(d);
  int64_t nout = numel(e.out_shape(0));
  if (nout == 0) return;
  const char* ct = e.out_ctype(0);
  if (total == 0) {  // an empty summed label: every sum is 0
    e("memset({}, 0, {} * sizeof({}));", e.out(0), nout, ct);
    return;
  }
  size_t ni = e.node.inputs.size();
  auto v = [](size_t l) { return fmt::format("l{}", l); };
  auto offset = [&](const Shape& st, const std::vector<size_t>& labels) {
    std::string s;
    for (size_t l : labels)
      if (st[l] != 0 && g.dims[l] > 1) s += fmt::format("{}{} * {}", s.empty() ? "" : " + ", v(l), st[l]);
    return s.empty() ? std::string("0") : s;
  };
  std::vector<size_t> all = g.out;
  all.insert(all.end(), g.summed.begin(), g.summed.end());
  std::string prod;
  for (size_t i = 0; i < ni; ++i)
    prod += fmt::format("{}{}[{}]", i ? " * " : "", e.in(i), offset(g.in_stride[i], all));
  bool axpy = false;
  if (!g.out.empty() && g.dims[g.out.back()] > 1)
    for (size_t i = 0; i < ni; ++i) axpy = axpy || g.in_stride[i][g.out.back()] == 1;
  e("/* Einsum '{}': {} loop order */", g.equation, axpy ? "axpy" : "dot");
  bool par = e.parallel(total * static_cast<double>(ni));
  size_t nouter = axpy ? g.out.size() - 1 : g.out.size();
  size_t opened = 0;
  for (size_t k = 0; k < nouter; ++k) {
    size_t l = g.out[k];
    if (g.dims[l] == 1) continue;  // index 0, left out of every offset
    if (opened == 0 && par) e.open_nest({.loops = {{v(l), g.dims[l]}}});
    else open_loop(e, v(l), g.dims[l]);
    ++opened;
  }
  if (axpy) {
    size_t last = g.out.back();
    int64_t n = g.dims[last];
    std::vector<size_t> outer(g.out.begin(), g.out.end() - 1);
    e("{}* restrict y = {} + {};", ct, e.out(0), offset(g.out_stride, outer));
    simd(e, n);
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) y[{0}] = 0;", v(last), n);
    size_t nsum = 0;
    for (size_t l : g.summed)
      if (g.dims[l] > 1) open_loop(e, v(l), g.dims[l]), ++nsum;
    simd(e, n);
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) y[{0}] += {2};", v(last), n, prod);
    for (size_t j = 0; j < nsum; ++j) e("}}");
  } else {
    e("double acc = 0.0;");
    std::vector<size_t> sl;
    for (size_t l : g.summed)
      if (g.dims[l] > 1) sl.push_back(l);
    for (size_t j = 0; j < sl.size(); ++j) {
      if (j + 1 == sl.size() && g.dims[sl[j]] >= 4) e("ONNXC_PRAGMA(omp simd reduction(+:acc))");
      open_loop(e, v(sl[j]), g.dims[sl[j]]);
    }
    std::string dprod;
    for (size_t i = 0; i < ni; ++i)
      dprod += fmt::format("{}(double){}[{}]", i ? " * " : "", e.in(i), offset(g.in_stride[i], all));
    e("acc += {};", dprod);
    for (size_t j = 0; j < sl.size(); ++j) e("}}");
    e("{}[{}] = ({})acc;", e.out(0), offset(g.out_stride, g.out), ct);
  }
  for (size_t j = 0; j < opened; ++j) e("}}");
}

}  // namespace

void register_einsum(CKernelTable& t) { t["Einsum"] = {emit_einsum, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
