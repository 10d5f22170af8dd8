// codegen/cuda/kernels/conv.cc — Conv in CUDA, plain NCHW (and any other spatial rank), two
// variants. Groups, depthwise, strides, dilations and pads come from conv_geom (ir/ops/conv.h).
//
// Implicit GEMM (the default): per group, Y[m, p] = sum_k W[m, k] * X_im2col[k, p], with m the
// output channel of the group, p = (image, output position), k = (input channel, kernel tap).
// W's rows are contiguous in k; X_im2col is never materialised: each element of the input tile
// is computed from X when it is loaded into shared memory (zero for taps on the padding). A
// block of 16 x 16 threads computes a TM x TP tile of Y (TM, TP = 64 or 32), thread (ty, tx)
// the channels m0 + ty + 16 i and positions p0 + tx + 16 j (a 4 x 4, 2 x 4... register tile:
// neighbouring threads store neighbouring positions). K runs in slices of 16: the block loads
// the weight tile ws[16][TM] and the input tile xs[16][TP] (each thread always the same column
// of xs, so its position's coordinates are computed once), synchronises, accumulates, and
// synchronises again. 1x1, stride 1, unpadded convolutions read the input tile as plain rows of
// X (k is the input channel). Grid (P / TP, MG / TM, groups). A dimension of at most 32 gets a
// 32-wide tile, and a layer whose 64 x 64 grid has fewer than 132 blocks (one per SM of an H100)
// takes 32-wide tiles, positions first, to spread over more blocks. Index math is int32: the
// variant is only chosen when X, W and Y have fewer than 2^31 elements.
//
// Direct (depthwise and tiny layers: one input channel per group, fewer than 16 output
// channels per group, K = CG * taps below 16, or fewer than 32 positions, where a tile would
// be mostly idle): a thread computes one output position (n, o...) of B consecutive output
// channels of one group (B = 8, 4 or 2 when it divides the group's output channels, else 1):
// it sums over the input channels of its group and the kernel taps, skipping taps that land
// on the padding (the C backend's conv_nchw.cc computes the same sums), reads each input
// element once for its B accumulators (registers: acc0..acc<B-1>), starts from the bias.
// Neighbouring threads compute neighbouring output positions of the same channels.
//
// Both apply the fused group's epilogue (Relu, Clip, SiLU's Sigmoid+Mul, residual Add, SE
// Mul...) to each accumulator before its store. e.variant names the variant and tile.
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

void emit_direct(CuEmit& e) {
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

constexpr int64_t kInt32 = int64_t{1} << 31;

// Whether the layer runs as an implicit GEMM (see the opening comment).
bool use_implicit_gemm(const ConvGeom& g) {
  const int64_t K = g.CG * g.k_size(), P = g.N * g.out_size();
  if (g.CG == 1 || g.MG < 16 || K < 16 || P < 32) return false;
  return g.N * g.C * g.in_size() < kInt32 && g.M * K < kInt32 && g.N * g.M * g.out_size() < kInt32;
}

void emit_implicit_gemm(CuEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const size_t r = g.rank();
  const int64_t osz = g.out_size(), isz = g.in_size(), ksz = g.k_size(), K = g.CG * ksz, P = g.N * osz;
  constexpr int64_t kSlice = 16, kThreads = 256;
  // Tile shape: 32 wide along a short dimension, or to give a small layer more blocks.
  int64_t TM = g.MG <= 32 ? 32 : 64, TP = P <= 32 ? 32 : 64;
  auto blocks = [&] { return (P + TP - 1) / TP * ((g.MG + TM - 1) / TM) * g.G; };
  if (blocks() < 132 && TP == 64) TP = 32;
  if (blocks() < 132 && TM == 64) TM = 32;
  const int64_t RM = TM / 16, RP = TP / 16;
  if ((g.MG + TM - 1) / TM > 65535 || g.G > 65535)
    e.node.unsupported("the CUDA backend's implicit-GEMM convolution runs at most 65535 x 64 output channels per group and 65535 groups");
  bool one_by_one = true;
  for (size_t d = 0; d < r; ++d) one_by_one = one_by_one && g.k[d] == 1 && g.s[d] == 1 && g.pb[d] == 0 && g.pe[d] == 0;
  e.variant = fmt::format("implicit GEMM{}, tile {}x{}", one_by_one ? " 1x1" : "", TM, TP);
  e.grid = fmt::format("dim3({}, {}, {})", (P + TP - 1) / TP, (g.MG + TM - 1) / TM, g.G);
  e.block = "dim3(16, 16)";
  e("__shared__ float ws[{}][{} + 1];  // ws[kk][mm] = W[m0 + mm, k0 + kk] (+1: the transposed stores hit different banks)", kSlice, TM);
  e("__shared__ float xs[{}][{}];  // xs[kk][pp] = X_im2col[k0 + kk, p0 + pp]", kSlice, TP);
  e("const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;");
  e("const int grp = blockIdx.z, m0 = blockIdx.y * {}, p0 = blockIdx.x * {};", TM, TP);
  e("const float* __restrict__ wg = {} + grp * {};", e.in(1), g.MG * K);
  e("// This thread's column of the input tile (the same in every slice): position p = (img, pos).");
  e("const int pp = tid % {}, p = p0 + pp, img = p / {}, pos = p % {};", TP, osz, osz);
  e("const float* __restrict__ xg = {} + (img * {} + grp * {}) * {};", e.in(0), g.C, g.CG, isz);
  // Row-major strides of the output positions and of the kernel taps.
  std::vector<int64_t> ost(r, 1), kst(r, 1);
  for (size_t d = r - 1; d-- > 0;) ost[d] = ost[d + 1] * g.out[d + 1], kst[d] = kst[d + 1] * g.k[d + 1];
  std::vector<std::string> ib(r);
  if (!one_by_one)
    for (size_t d = 0; d < r; ++d) {
      ib[d] = "ib" + std::to_string(d);
      e("const int {} = ({}) * {}{};  // input coordinate of tap 0", ib[d], cu_coord("pos", ost[d], g.out[d]), g.s[d],
        g.pb[d] ? fmt::format(" - {}", g.pb[d]) : "");
    }
  e("float acc[{}][{}] = {{}};  // channels m0 + ty + 16 i, positions p0 + tx + 16 j", RM, RP);
  e("for (int k0 = 0; k0 < {}; k0 += {}) {{", K, kSlice);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) {{", RM);
  e("const int m = m0 + ty + 16 * i, k = k0 + tx;");
  e("ws[tx][ty + 16 * i] = m < {} && k < {} ? wg[m * {} + k] : 0.0f;", g.MG, K, K);
  e("}}");
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) {{", kSlice * TP / kThreads);
  e("const int kk = tid / {} + {} * j, k = k0 + kk;", TP, kThreads / TP);
  e("float v = 0.0f;");
  if (one_by_one) {
    e("if (p < {} && k < {}) v = xg[k * {} + pos];", P, K, isz);
  } else {
    e("if (p < {} && k < {}) {{", P, K);
    if (ksz == 1) e("const int ic = k;");
    else e("const int ic = k / {}, tap = k % {};", ksz, ksz);
    std::string cond, xi;
    std::vector<std::string> in(r);
    for (size_t d = 0; d < r; ++d) {
      in[d] = "in" + std::to_string(d);
      if (ksz == 1) in[d] = ib[d];
      else e("const int {} = {} + ({}){};", in[d], ib[d], cu_coord("tap", kst[d], g.k[d]), g.d[d] == 1 ? "" : fmt::format(" * {}", g.d[d]));
    }
    for (size_t d = 0; d < r; ++d) {
      cond += fmt::format("{}{} >= 0 && {} < {}", d ? " && " : "", in[d], in[d], g.in[d]);
      xi = d == 0 ? in[d] : fmt::format("({}) * {} + {}", xi, g.in[d], in[d]);
    }
    e("if ({}) v = xg[ic * {} + {}];", cond, isz, xi);
    e("}}");
  }
  e("xs[kk][pp] = v;");
  e("}}");
  e("__syncthreads();");
  e("#pragma unroll");
  e("for (int kk = 0; kk < {}; ++kk) {{", kSlice);
  e("float wv[{}], xv[{}];", RM, RP);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) wv[i] = ws[kk][ty + 16 * i];", RM);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) xv[j] = xs[kk][tx + 16 * j];", RP);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i)", RM);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) acc[i][j] = fmaf(wv[i], xv[j], acc[i][j]);", RP);
  e("}}");
  e("__syncthreads();");
  e("}}");
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) {{", RM);
  e("const int m = m0 + ty + 16 * i;");
  e("if (m >= {}) continue;", g.MG);
  e("const int oc = grp * {} + m;", g.MG);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) {{", RP);
  e("const int q = p0 + tx + 16 * j;");
  e("if (q >= {}) continue;", P);
  e("const int at = (q / {} * {} + oc) * {} + q % {};", osz, g.M, osz, osz);
  e("{}", cu_epilogue(e, e.has_in(2) ? fmt::format("acc[i][j] + {}[oc]", e.in(2)) : "acc[i][j]", "at", e.out(0) + "[at]"));
  e("}}");
  e("}}");
}

void emit_conv(CuEmit& e) {
  if (use_implicit_gemm(conv_geom(e.node))) emit_implicit_gemm(e);
  else emit_direct(e);
}

}  // namespace

void register_cuda_conv(CuKernelTable& t) { t["Conv"] = {emit_conv, nullptr, nullptr}; }

}  // namespace onnxc
