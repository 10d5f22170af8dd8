// codegen/c/kernels/global_pool.cc — GlobalAveragePool and GlobalMaxPool in C: one
// contiguous reduction per N*C plane (SIMD for the sum, and for the max through
// emit_max_reduce), planes in parallel when the tensor is large; max is a compare-select
// that skips NaN elements as the reference's std::fmax does. NCHWc (rank >= 3): per (image,
// channel block) a lane accumulator, positions outer and lanes innermost.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"

namespace onnxc {
namespace {

bool global_pool_nchwc(const Node& n, int64_t b) { return b >= 1 && n.in(0)->shape.size() >= 3 && numel(n.in(0)->shape) > 0; }

// NCHW[b]c: per (image, channel block) one lane accumulator, positions outer, lanes inner.
void emit_global_pool_nchwc(CEmit& e) {
  const bool max = e.node.op_type == "GlobalMaxPool";
  const Shape& xs = e.in_shape(0);
  const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
  ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b), "NCHWc global pool on " + e.node.in(0)->type_str());
  int64_t planes = xs[0] * CB, sz = 1;
  for (size_t i = 2; i < xs.size(); ++i) sz *= xs[i];
  e("/* NCHW{}c global {} pooling: per (image, channel block), positions outer, lanes innermost. */", b, max ? "max" : "average");
  if (planes > 1 && e.parallel(static_cast<double>(planes * sz * b))) e.open_nest({.loops = {{"c", planes}}});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  e("const float* restrict x = {} + c * {};", e.in(0), sz * b);
  e("float* restrict y = {} + c * {};", e.out(0), b);
  e("float a[{}];", b);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t l = 0; l < {}; ++l) a[l] = {};", b, max ? "-INFINITY" : "0.0f");
  e("for (int64_t p = 0; p < {}; ++p) {{", sz);
  e("ONNXC_PRAGMA(omp simd)");
  if (max) e("for (int64_t l = 0; l < {0}; ++l) a[l] = x[p * {0} + l] > a[l] ? x[p * {0} + l] : a[l];", b);
  else e("for (int64_t l = 0; l < {}; ++l) a[l] += x[p * {} + l];", b, b);
  e("}}");
  e("ONNXC_PRAGMA(omp simd)");
  if (max) e("for (int64_t l = 0; l < {}; ++l) y[l] = a[l];", b);
  else e("for (int64_t l = 0; l < {}; ++l) y[l] = a[l] / {};", b, c_float(static_cast<double>(sz)));
  e("}}");
}

void emit_global_pool(CEmit& e) {
  if (e.out_layout(0).is_nchwc()) return emit_global_pool_nchwc(e);
  const bool max = e.node.op_type == "GlobalMaxPool";
  const Shape& xs = e.in_shape(0);
  int64_t planes = xs[0] * xs[1], sz = 1;
  for (size_t i = 2; i < xs.size(); ++i) sz *= xs[i];
  if (planes > 1 && e.parallel(static_cast<double>(planes * sz))) e.open_nest({.loops = {{"c", planes}}});
  else e("for (int64_t c = 0; c < {}; ++c) {{", planes);
  e("const float* restrict x = {} + c * {};", e.in(0), sz);
  if (sz == 0) e("(void)x;");  // empty planes: the reductions below read nothing
  if (max) {
    emit_max_reduce(e, "m", "(-INFINITY)", "x", sz, DType::F32);
    e("{}[c] = m;", e.out(0));
  } else {
    e("float s = 0.0f;");
    e("ONNXC_PRAGMA(omp simd reduction(+:s))");
    e("for (int64_t i = 0; i < {}; ++i) s += x[i];", sz);
    if (sz == 0) e("{}[c] = NAN;", e.out(0));
    else e("{}[c] = s / {};", e.out(0), c_float(static_cast<double>(sz)));
  }
  e("}}");
}

}  // namespace

void register_global_pool(CKernelTable& t) {
  t["GlobalAveragePool"] = {emit_global_pool, global_pool_nchwc, nullptr, nullptr};
  t["GlobalMaxPool"] = {emit_global_pool, global_pool_nchwc, nullptr, nullptr};
}

}  // namespace onnxc
