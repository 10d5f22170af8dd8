// codegen/cuda/kernels/conv.cc — Conv in CUDA, plain NCHW (and any other spatial rank):
// direct convolution, one thread per output element (n, m, o...). The thread sums over the
// input channels of its group and the kernel taps, skipping taps that land on the padding
// (the C backend's conv_nchw.cc computes the same sum), starts from the bias, and applies the
// fused group's epilogue (bias is input 2; Relu, Clip, SiLU's Sigmoid+Mul, residual Add, SE
// Mul... are steps) before its one store. Neighbouring threads compute neighbouring output
// positions of one output channel: they read the same filter taps (a broadcast) and
// neighbouring input elements. Groups, depthwise, strides, dilations and pads come from
// conv_geom (ir/ops/conv.h). Known gap: no shared-memory tiling or implicit GEMM yet.
#include "codegen/cuda/kernels/kernels.h"
#include "ir/ops/conv.h"

namespace onnxc {
namespace {

void emit_conv(CuEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const size_t r = g.rank();
  const int64_t osz = g.out_size(), isz = g.in_size(), ksz = g.k_size();
  e.variant = "direct";
  e.flat(g.N * g.M * osz);
  // Output coordinates: image, output channel, spatial position.
  e("const int64_t img = i / {};", g.M * osz);
  e("const int64_t oc = {};", cu_coord("i", osz, g.M));
  int64_t stride = 1;
  std::vector<std::string> o(r);
  for (size_t d = r; d-- > 0;) {
    o[d] = "o" + std::to_string(d);
    e("const int64_t {} = {};", o[d], cu_coord("i", stride, g.out[d]));
    stride *= g.out[d];
  }
  e("const int64_t grp = oc / {};", g.MG);
  e("const float* __restrict__ xg = {} + (img * {} + grp * {}) * {};", e.in(0), g.C, g.CG, isz);
  e("const float* __restrict__ wm = {} + oc * {};", e.in(1), g.CG * ksz);
  e("float acc = {};", e.has_in(2) ? e.in(2) + "[oc]" : "0.0f");
  e("for (int64_t ic = 0; ic < {}; ++ic) {{", g.CG);
  e("const float* __restrict__ xc = xg + ic * {};", isz);
  e("const float* __restrict__ wc = wm + ic * {};", ksz);
  std::string xi, wi;
  for (size_t d = 0; d < r; ++d) {
    const std::string k = "k" + std::to_string(d), p = "p" + std::to_string(d);
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", k, g.k[d]);
    e("const int64_t {} = {} * {} - {} + {} * {};", p, o[d], g.s[d], g.pb[d], k, g.d[d]);
    e("if ({0} < 0 || {0} >= {1}) continue;", p, g.in[d]);
    xi = d == 0 ? p : fmt::format("({}) * {} + {}", xi, g.in[d], p);
    wi = d == 0 ? k : fmt::format("({}) * {} + {}", wi, g.k[d], k);
  }
  e("acc = fmaf(xc[{}], wc[{}], acc);", xi, wi);
  for (size_t d = 0; d < r; ++d) e("}}");
  e("}}");
  e("{}", cu_epilogue(e, "acc", "i", e.out(0) + "[i]"));
}

}  // namespace

void register_cuda_conv(CuKernelTable& t) { t["Conv"] = {emit_conv, nullptr, nullptr}; }

}  // namespace onnxc
