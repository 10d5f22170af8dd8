// codegen/cuda/kernels/pool.cc — MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool
// in CUDA, plain NCHW, one thread per output element.
//  MaxPool / AveragePool: the window of output o along each spatial dim starts at o*s - pb
//    and has k taps d apart (pool_geom, ir/ops/pool.h). Taps outside the input are skipped;
//    AveragePool divides by the taps inside the input, or with count_include_pad by the
//    taps inside the padded extent [-pb, in + pe) (PoolDim::padded_taps). Max is the
//    NaN-propagating compare-select of the C kernels, from -INFINITY.
//  Global pools: one thread per (image, channel) walks its plane.
// The fused group's epilogue is applied at the store. MaxPool's Indices output is not
// supported by the CUDA backend.
#include "codegen/cuda/kernels/kernels.h"
#include "ir/ops/pool.h"

namespace onnxc {
namespace {

void emit_pool(CuEmit& e) {
  const PoolGeom& g = pool_geom(e.node);
  const Shape& is = e.in_shape(0);
  const Shape& os = e.out_shape(0);
  const size_t r = g.dims.size();
  int64_t isz = 1, osz = 1;
  for (auto& d : g.dims) isz *= d.in, osz *= d.out;
  e.flat(numel(os));
  e("const float* __restrict__ xp = {} + (i / {}) * {};", e.in(0), osz, isz);
  ONNXC_ASSERT(is.size() == r + 2, e.node.where() + ": pool rank");
  int64_t stride = 1;
  std::vector<std::string> o(r);
  for (size_t d = r; d-- > 0;) {
    o[d] = "o" + std::to_string(d);
    e("const int64_t {} = {};", o[d], cu_coord("i", stride, g.dims[d].out));
    stride *= g.dims[d].out;
  }
  if (g.max) e("float v = -INFINITY;");
  else {
    e("float sum = 0.0f;");
    e("int64_t taps = 0;");
  }
  std::string xi, inside;
  for (size_t d = 0; d < r; ++d) {
    const PoolDim& pd = g.dims[d];
    const std::string k = "k" + std::to_string(d), p = "p" + std::to_string(d);
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", k, pd.k);
    e("const int64_t {} = {} * {} - {} + {} * {};", p, o[d], pd.s, pd.pb, k, pd.d);
    if (g.max) {
      e("if ({0} < 0 || {0} >= {1}) continue;", p, pd.in);
    } else {
      e("if ({} >= {}) continue;  /* beyond the padded extent: not counted */", p, pd.in + pd.pe);
      inside += fmt::format("{}{} >= 0 && {} < {}", inside.empty() ? "" : " && ", p, p, pd.in);
    }
    xi = d == 0 ? p : fmt::format("({}) * {} + {}", xi, pd.in, p);
  }
  if (g.max) {
    e("const float x = xp[{}];", xi);
    e("v = x > v || x != x ? x : v;");
  } else {
    if (g.count_pad) e("++taps;");
    e("if ({}) {{", inside);
    e("sum += xp[{}];", xi);
    if (!g.count_pad) e("++taps;");
    e("}}");
  }
  for (size_t d = 0; d < r; ++d) e("}}");
  if (!g.max) e("const float v = sum / (float)taps;");
  e("{}", cu_epilogue(e, "v", "i", e.out(0) + "[i]"));
}

bool pool_ok(const Node& n) { return n.outputs.size() == 1 || !n.out(1); }

void emit_global_pool(CuEmit& e) {
  const Shape& is = e.in_shape(0);
  int64_t S = 1;
  for (size_t d = 2; d < is.size(); ++d) S *= is[d];
  const bool max = e.node.op_type == "GlobalMaxPool";
  e.flat(is[0] * is[1]);
  e("const float* __restrict__ xp = {} + i * {};", e.in(0), S);
  e("float v = {};", max ? "-INFINITY" : "0.0f");
  e("for (int64_t s = 0; s < {}; ++s) {{", S);
  if (max) {
    e("const float x = xp[s];");
    e("v = x > v || x != x ? x : v;");
  } else {
    e("v += xp[s];");
  }
  e("}}");
  if (!max) e("v = v / {};", c_float(static_cast<double>(S)));
  e("{}", cu_epilogue(e, "v", "i", e.out(0) + "[i]"));
}

}  // namespace

void register_cuda_pool(CuKernelTable& t) {
  t["MaxPool"] = {emit_pool, pool_ok, nullptr};
  t["AveragePool"] = {emit_pool, nullptr, nullptr};
  t["GlobalAveragePool"] = {emit_global_pool, nullptr, nullptr};
  t["GlobalMaxPool"] = {emit_global_pool, nullptr, nullptr};
}

}  // namespace onnxc
