// codegen/cuda/kernels/conv.cc — Conv in CUDA, plain NCHW (and any other spatial rank):
// direct convolution. A thread computes one output position (n, o...) of B consecutive output
// channels of one group (B = 8, 4 or 2 when it divides the group's output channels, else 1):
// it sums over the input channels of its group and the kernel taps, skipping taps that land
// on the padding (the C backend's conv_nchw.cc computes the same sums), reads each input
// element once for its B accumulators (registers: acc0..acc<B-1>), starts from the bias, and
// applies the fused group's epilogue (Relu, Clip, SiLU's Sigmoid+Mul, residual Add, SE Mul...)
// to each before its store. Neighbouring threads compute neighbouring output positions of the
// same channels: they read the same filter taps (a broadcast), neighbouring input elements,
// and store to neighbouring addresses. Groups, depthwise, strides, dilations and pads come from
// conv_geom (ir/ops/conv.h). Known gap: no shared-memory tiling or implicit GEMM yet.
#include "codegen/cuda/kernels/kernels.h"
#include "ir/ops/conv.h"

namespace onnxc {
namespace {

// Output channels per thread: up to 8 of one group, when the sum per output is long enough
// to be worth sharing its input reads.
int64_t channels_per_thread(const ConvGeom& g) {
  if (g.CG * g.k_size() < 8) return 1;
  for (int64_t b : {8, 4, 2})
    if (g.MG % b == 0) return b;
  return 1;
}

void emit_conv(CuEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const size_t r = g.rank();
  const int64_t osz = g.out_size(), isz = g.in_size(), ksz = g.k_size(), B = channels_per_thread(g), MB = g.M / B;
  e.variant = B > 1 ? fmt::format("direct, {} channels per thread", B) : "direct";
  e.flat(g.N * MB * osz);
  // Thread coordinates: image, block of B output channels (oc0...oc0 + B - 1), spatial position.
  e("const int64_t img = i / {};", MB * osz);
  e("const int64_t oc0 = {};", B > 1 ? fmt::format("({}) * {}", cu_coord("i", osz, MB), B) : cu_coord("i", osz, MB));
  e("const int64_t pos = i % {};", osz);
  int64_t stride = 1;
  std::vector<std::string> o(r);
  for (size_t d = r; d-- > 0;) {
    o[d] = "o" + std::to_string(d);
    e("const int64_t {} = {};", o[d], cu_coord("i", stride, g.out[d]));
    stride *= g.out[d];
  }
  e("const int64_t grp = oc0 / {};", g.MG);
  e("const float* __restrict__ xg = {} + (img * {} + grp * {}) * {};", e.in(0), g.C, g.CG, isz);
  e("const float* __restrict__ wm = {} + oc0 * {};", e.in(1), g.CG * ksz);
  for (int64_t j = 0; j < B; ++j) e("float acc{} = {};", j, e.has_in(2) ? fmt::format("{}[oc0{}]", e.in(2), j ? fmt::format(" + {}", j) : "") : "0.0f");
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
  e("const float xv = xc[{}];", xi);
  e("const int64_t tap = {};", wi);
  for (int64_t j = 0; j < B; ++j) e("acc{0} = fmaf(xv, wc[{1}tap], acc{0});", j, j ? fmt::format("{} + ", j * g.CG * ksz) : "");
  for (size_t d = 0; d < r; ++d) e("}}");
  e("}}");
  // Output channel oc0 + j of this position is element base + j * osz of Y.
  e("const int64_t base = (img * {} + oc0) * {} + pos;", g.M, osz);
  for (int64_t j = 0; j < B; ++j) {
    const std::string at = j ? fmt::format("base + {}", j * osz) : "base";
    e("{}", cu_epilogue(e, "acc" + std::to_string(j), "(" + at + ")", e.out(0) + "[" + at + "]"));
  }
}

}  // namespace

void register_cuda_conv(CuKernelTable& t) { t["Conv"] = {emit_conv, nullptr, nullptr}; }

}  // namespace onnxc
