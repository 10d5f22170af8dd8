// codegen/cuda/kernels/conv.cc — Conv in CUDA, plain NCHW (and any other spatial rank), three
// variants. Groups, depthwise, strides, dilations and pads come from conv_geom (ir/ops/conv.h).
//
// Implicit GEMM (the default): per group, Y[m, p] = sum_k W[m, k] * X_im2col[k, p], with m the
// output channel of the group, p = (image, output position), k = (input channel, kernel tap).
// W's rows are contiguous in k; X_im2col is never materialised: each element of the input tile
// is computed from X when it is loaded (zero for taps on the padding). A block of 16 x 16
// threads computes a TM x TP tile of Y (TM, TP = 32, 64 or 128), thread (ty, tx) the channels
// m0 + ty + 16 i and positions p0 + tx + 16 j (up to an 8 x 8 register tile: neighbouring
// threads store neighbouring positions); tiles of at least 64 x 64 give each thread runs of 4
// channels and 4 positions instead (m0 + 4 ty + 64 (i / 4) + i % 4, p0 + 4 tx + 64 (j / 4) + j % 4)
// and read them from shared memory as float4, a quarter of the shared-memory reads per product.
// K runs in slices of 16: the block stores the slice's
// weight tile ws[16][TM] and input tile xs[16][TP] in shared memory (each thread always the
// same column of xs, so its position's coordinates are computed once), synchronises, issues
// the loads of the next slice into registers, accumulates the current one from shared memory
// while those loads are in flight, and synchronises again. 1x1, stride 1, unpadded convolutions
// read the input tile as plain rows of X (k is the input channel). Grid (P / TP, MG / TM,
// groups). The tile starts at the largest power of two up to 128 covering the group's channels
// and the positions, and halves (positions first) while the grid has fewer than 132 blocks (one
// per SM of an H100). Index math is int32: the variant is only chosen when X, W and Y have
// fewer than 2^31 elements.
//
// --gpu-precision tf32 or fp16: the same implicit GEMM on tensor cores (emit_tensor_core below).
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
#include <cmath>
#include <utility>

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

// Whether the layer is a 1x1, stride-1, unpadded convolution (the input tile is plain rows of X).
bool is_one_by_one(const ConvGeom& g) {
  bool one = true;
  for (size_t d = 0; d < g.rank(); ++d) one = one && g.k[d] == 1 && g.s[d] == 1 && g.pb[d] == 0 && g.pe[d] == 0;
  return one;
}

// The tile TM x TP of an implicit-GEMM layer: from the largest allowed (`max_m`, `max_p`: at most
// the group's channels and the positions, rounded up to a power of two, at least `min_m`,
// `min_p`), halved, positions first, while the grid has fewer than 132 blocks (one per SM of an
// H100) and a side can still halve.
std::pair<int64_t, int64_t> gemm_tile(const ConvGeom& g, int64_t min_m, int64_t max_m, int64_t min_p, int64_t max_p) {
  const int64_t P = g.N * g.out_size();
  int64_t TM = min_m, TP = min_p;
  while (TM < max_m && TM < g.MG) TM *= 2;
  while (TP < max_p && TP < P) TP *= 2;
  auto blocks = [&] { return (P + TP - 1) / TP * ((g.MG + TM - 1) / TM) * g.G; };
  while (blocks() < 132) {
    if (TP > min_p && TP >= TM) TP /= 2;
    else if (TM > min_m) TM /= 2;
    else if (TP > min_p) TP /= 2;
    else break;
  }
  return {TM, TP};
}

// The implicit-GEMM kernels' shared part: the coordinates of this thread's column of the input
// tile (`pp`, position p = (img, pos), the group's input xg, each spatial dimension's input
// coordinate of tap 0) ...
void emit_input_column(CuEmit& e, const ConvGeom& g, bool one_by_one, int64_t TP) {
  const size_t r = g.rank();
  const int64_t osz = g.out_size();
  e("// This thread's column of the input tile (the same in every slice): position p = (img, pos).");
  e("const int pp = tid % {}, p = p0 + pp, img = p / {}, pos = p % {};", TP, osz, osz);
  e("const float* __restrict__ xg = {} + (img * {} + grp * {}) * {};", e.in(0), g.C, g.CG, g.in_size());
  if (one_by_one) return;
  std::vector<int64_t> ost(r, 1);
  for (size_t d = r - 1; d-- > 0;) ost[d] = ost[d + 1] * g.out[d + 1];
  for (size_t d = 0; d < r; ++d)
    e("const int ib{} = ({}) * {}{};  // input coordinate of tap 0", d, cu_coord("pos", ost[d], g.out[d]), g.s[d],
      g.pb[d] ? fmt::format(" - {}", g.pb[d]) : "");
}

// ... and `float v` = X_im2col[k, p] (zero past the ends of K and P and on the padding).
void emit_input_element(CuEmit& e, const ConvGeom& g, bool one_by_one) {
  const size_t r = g.rank();
  const int64_t ksz = g.k_size(), K = g.CG * ksz, P = g.N * g.out_size(), isz = g.in_size();
  e("float v = 0.0f;");
  if (one_by_one) {
    e("if (p < {} && k < {}) v = xg[k * {} + pos];", P, K, isz);
    return;
  }
  std::vector<int64_t> kst(r, 1);
  for (size_t d = r - 1; d-- > 0;) kst[d] = kst[d + 1] * g.k[d + 1];
  e("if (p < {} && k < {}) {{", P, K);
  if (ksz == 1) e("const int ic = k;");
  else e("const int ic = k / {}, tap = k % {};", ksz, ksz);
  std::string cond, xi;
  std::vector<std::string> in(r);
  for (size_t d = 0; d < r; ++d) {
    in[d] = "in" + std::to_string(d);
    if (ksz == 1) in[d] = "ib" + std::to_string(d);
    else e("const int {} = ib{} + ({}){};", in[d], d, cu_coord("tap", kst[d], g.k[d]), g.d[d] == 1 ? "" : fmt::format(" * {}", g.d[d]));
  }
  for (size_t d = 0; d < r; ++d) {
    cond += fmt::format("{}{} >= 0 && {} < {}", d ? " && " : "", in[d], in[d], g.in[d]);
    xi = d == 0 ? in[d] : fmt::format("({}) * {} + {}", xi, g.in[d], in[d]);
  }
  e("if ({}) v = xg[ic * {} + {}];", cond, isz, xi);
  e("}}");
}

// The loads of the K slice starting at `kb` into registers, shared by both implicit GEMMs: per
// thread NW weights wr[i] = W[m, k] with m = `m` and k = kb + `k` (expressions of i), and NX
// input elements xr[j] = X_im2col[kb + tid / TP + (256 / TP) j, p]; with `range_check`,
// out_of_range is set for an input past half precision's range (65504).
void emit_slice_loads(CuEmit& e, const ConvGeom& g, bool one_by_one, const std::string& kb, int64_t NW, const std::string& m,
                      const std::string& k, int64_t NX, int64_t TP, bool range_check) {
  constexpr int64_t kThreads = 256;
  const int64_t K = g.CG * g.k_size();
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) {{", NW);
  e("const int m = {}, k = {} + {};", m, kb, k);
  e("wr[i] = m < {} && k < {} ? wg[m * {} + k] : 0.0f;", g.MG, K, K);
  e("}}");
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) {{", NX);
  e("const int k = {} + tid / {} + {} * j;", kb, TP, kThreads / TP);
  emit_input_element(e, g, one_by_one);
  if (range_check) e("if (fabsf(v) > 65504.0f) out_of_range = 1;");
  e("xr[j] = v;");
  e("}}");
}

// The store of output channel m (of the group) at position q from `value`, with the bias and
// the fused epilogue.
void emit_output_store(CuEmit& e, const ConvGeom& g, const std::string& value) {
  const int64_t osz = g.out_size();
  e("const int oc = grp * {} + m;", g.MG);
  e("const int at = (q / {} * {} + oc) * {} + q % {};", osz, g.M, osz, osz);
  e("{}", cu_epilogue(e, e.has_in(2) ? fmt::format("{} + {}[oc]", value, e.in(2)) : value, "at", e.out(0) + "[at]"));
}

void emit_implicit_gemm(CuEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const int64_t K = g.CG * g.k_size(), P = g.N * g.out_size();
  constexpr int64_t kSlice = 16, kThreads = 256;
  const std::pair<int64_t, int64_t> tile = gemm_tile(g, 32, 128, 32, 128);  // not a structured binding: the lambdas below use it
  const int64_t TM = tile.first, TP = tile.second;
  const int64_t RM = TM / 16, RP = TP / 16;
  if ((g.MG + TM - 1) / TM > 65535 || g.G > 65535)
    e.node.unsupported("the CUDA backend's implicit-GEMM convolution runs at most 65535 x 128 output channels per group and 65535 groups");
  const bool one_by_one = is_one_by_one(g);
  e.variant = fmt::format("implicit GEMM{}, tile {}x{}", one_by_one ? " 1x1" : "", TM, TP);
  e.grid = fmt::format("dim3({}, {}, {})", (P + TP - 1) / TP, (g.MG + TM - 1) / TM, g.G);
  e.block = "dim3(16, 16)";
  // Tiles of at least 64 x 64 read the shared tiles four floats at a time (float4): thread (ty, tx)
  // then owns channels m0 + 4 ty + 64 (i / 4) + i % 4 and positions p0 + 4 tx + 64 (j / 4) + j % 4.
  const bool vec = RM % 4 == 0 && RP % 4 == 0;
  if (vec) {
    e.variant += ", float4 reads";
    e("__shared__ __align__(16) float ws[{}][{} + 4];  // ws[kk][mm] = W[m0 + mm, k0 + kk] (+4: rows stay 16-byte aligned)", kSlice, TM);
    e("__shared__ __align__(16) float xs[{}][{}];  // xs[kk][pp] = X_im2col[k0 + kk, p0 + pp]", kSlice, TP);
  } else {
    e("__shared__ float ws[{}][{} + 1];  // ws[kk][mm] = W[m0 + mm, k0 + kk] (+1: the transposed stores hit different banks)", kSlice, TM);
    e("__shared__ float xs[{}][{}];  // xs[kk][pp] = X_im2col[k0 + kk, p0 + pp]", kSlice, TP);
  }
  e("const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;");
  e("const int grp = blockIdx.z, m0 = blockIdx.y * {}, p0 = blockIdx.x * {};", TM, TP);
  e("const float* __restrict__ wg = {} + grp * {};", e.in(1), g.MG * K);
  emit_input_column(e, g, one_by_one, TP);
  const std::string m_of_i = vec ? "m0 + 4 * ty + 64 * (i / 4) + i % 4" : "m0 + ty + 16 * i";
  const std::string q_of_j = vec ? "p0 + 4 * tx + 64 * (j / 4) + j % 4" : "p0 + tx + 16 * j";
  e("float acc[{}][{}] = {{}};  // channels {}, positions {}", RM, RP, m_of_i, q_of_j);
  const int64_t NX = kSlice * TP / kThreads;
  // The slice starting at kb into registers: W[m0 + ty + 16 i, kb + tx], X_im2col[kb + kk, p].
  auto load = [&](const std::string& kb) { emit_slice_loads(e, g, one_by_one, kb, RM, "m0 + ty + 16 * i", "tx", NX, TP, false); };
  e("float wr[{}], xr[{}];  // the next slice, loaded while the block multiplies the current one", RM, NX);
  load("0");
  e("for (int k0 = 0; k0 < {}; k0 += {}) {{", K, kSlice);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) ws[tx][ty + 16 * i] = wr[i];", RM);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) xs[tid / {} + {} * j][pp] = xr[j];", NX, TP, kThreads / TP);
  e("__syncthreads();");
  e("if (k0 + {} < {}) {{", kSlice, K);
  load(fmt::format("k0 + {}", kSlice));
  e("}}");
  e("#pragma unroll");
  e("for (int kk = 0; kk < {}; ++kk) {{", kSlice);
  e("float wv[{}], xv[{}];", RM, RP);
  if (vec) {
    e("#pragma unroll");
    e("for (int i = 0; i < {}; ++i) {{", RM / 4);
    e("const float4 t = *reinterpret_cast<const float4*>(&ws[kk][4 * ty + 64 * i]);");
    e("wv[4 * i] = t.x; wv[4 * i + 1] = t.y; wv[4 * i + 2] = t.z; wv[4 * i + 3] = t.w;");
    e("}}");
    e("#pragma unroll");
    e("for (int j = 0; j < {}; ++j) {{", RP / 4);
    e("const float4 t = *reinterpret_cast<const float4*>(&xs[kk][4 * tx + 64 * j]);");
    e("xv[4 * j] = t.x; xv[4 * j + 1] = t.y; xv[4 * j + 2] = t.z; xv[4 * j + 3] = t.w;");
    e("}}");
  } else {
    e("#pragma unroll");
    e("for (int i = 0; i < {}; ++i) wv[i] = ws[kk][ty + 16 * i];", RM);
    e("#pragma unroll");
    e("for (int j = 0; j < {}; ++j) xv[j] = xs[kk][tx + 16 * j];", RP);
  }
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i)", RM);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) acc[i][j] = fmaf(wv[i], xv[j], acc[i][j]);", RP);
  e("}}");
  e("__syncthreads();");
  e("}}");
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) {{", RM);
  e("const int m = {};", m_of_i);
  e("if (m >= {}) continue;", g.MG);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) {{", RP);
  e("const int q = {};", q_of_j);
  e("if (q >= {}) continue;", P);
  emit_output_store(e, g, "acc[i][j]");
  e("}}");
  e("}}");
}

// --gpu-precision tf32 or fp16: the implicit GEMM on tensor cores (nvcuda::wmma). A block of 8
// warps (dim3(32, 8)) computes a TM x TP tile of Y (TM = 32, 64 or 128 channels, TP = 64 or 128
// positions); the warps form a 2 x 4 grid, each computing (TM / 2) x (TP / 4) as 16 x 16
// accumulator fragments (float32). K runs in slices of 32: the block stores the weight tile
// ws[TM][32] (row-major, W's rows) and the input tile xs[32][TP] in shared memory, already
// rounded (wmma::__float_to_tf32, or converted to __half), synchronises, and each warp multiplies
// its fragments in steps of 8 (tf32, m16n16k8) or 16 (fp16, m16n16k16). At the end each warp
// stores one accumulator fragment at a time into its own 16 x 16 staging area in shared memory,
// and its lanes apply the bias and the fused epilogue to the staged elements on their way to Y
// (16 neighbouring positions per row). Rows are padded (4 floats, 8 halves) against bank
// conflicts, keeping every fragment's address 32-byte aligned as wmma requires. Half precision
// ends at 65504: fp16 refuses a weight past it at compile time, and a block that loads an input
// past it sets the node's word (*ovf), which NAME_run reports as ONNXC_ERR_RANGE.
void emit_tensor_core(CuEmit& e) {
  const ConvGeom& g = conv_geom(e.node);
  const int64_t K = g.CG * g.k_size(), P = g.N * g.out_size();
  constexpr int64_t kSlice = 32, kThreads = 256;
  const bool half = e.precision == GpuPrecision::Fp16;
  const int64_t KF = half ? 16 : 8, pad = half ? 8 : 4;
  const std::string T = half ? "__half" : "float", AT = half ? "__half" : "wmma::precision::tf32";
  const std::string round = half ? "__float2half" : "wmma::__float_to_tf32";
  const std::pair<int64_t, int64_t> tile = gemm_tile(g, 32, 128, 64, 128);
  const int64_t TM = tile.first, TP = tile.second;
  const int64_t WM = TM / 2, WP = TP / 4, FM = WM / 16, FP = WP / 16;
  if ((g.MG + TM - 1) / TM > 65535 || g.G > 65535)
    e.node.unsupported("the CUDA backend's implicit-GEMM convolution runs at most 65535 x 128 output channels per group and 65535 groups");
  const bool one_by_one = is_one_by_one(g);
  if (half) {
    // Half precision ends at 65504: the weights are known now, the inputs only when it runs.
    const Value* w = e.node.in(1);
    if (w->constant && w->dtype == DType::F32) {
      const float* wv = w->constant->data<float>();
      for (int64_t i = 0; i < w->constant->numel(); ++i)
        if (std::fabs(wv[i]) > 65504.0f)
          e.node.unsupported(fmt::format("--gpu-precision fp16: weight {} of '{}' is {}, past half precision's range (65504); "
                                         "use --gpu-precision tf32 or fp32", i, w->name, wv[i]));
    }
    e.range_check = true;
  }
  e.variant = fmt::format("implicit GEMM{}, {} tensor cores, tile {}x{}", one_by_one ? " 1x1" : "", precision_name(e.precision), TM, TP);
  e.grid = fmt::format("dim3({}, {}, {})", (P + TP - 1) / TP, (g.MG + TM - 1) / TM, g.G);
  e.block = "dim3(32, 8)";
  e("__shared__ __align__(32) {} ws[{}][{} + {}];  // ws[mm][kk] = W[m0 + mm, k0 + kk], {}", T, TM, kSlice, pad, half ? "half precision" : "rounded to TF32");
  e("__shared__ __align__(32) {} xs[{}][{} + {}];  // xs[kk][pp] = X_im2col[k0 + kk, p0 + pp], the same", T, kSlice, TP, pad);
  e("__shared__ __align__(32) float cs[8][16][20];  // each warp's staging of one accumulator fragment");
  e("const int lane = threadIdx.x, warp = threadIdx.y, tid = warp * 32 + lane;");
  e("const int wm = warp / 4, wp = warp % 4;  // this warp's part: channels m0 + {} wm..., positions p0 + {} wp...", WM, WP);
  e("const int grp = blockIdx.z, m0 = blockIdx.y * {}, p0 = blockIdx.x * {};", TM, TP);
  e("const float* __restrict__ wg = {} + grp * {};", e.in(1), g.MG * K);
  emit_input_column(e, g, one_by_one, TP);
  e("wmma::fragment<wmma::accumulator, 16, 16, {}, float> acc[{}][{}];", KF, FM, FP);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i)", FM);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) wmma::fill_fragment(acc[i][j], 0.0f);", FP);
  const int64_t NW = TM * kSlice / kThreads, NX = kSlice * TP / kThreads;
  // The slice starting at kb into registers: W[m0 + tid / 32 + 8 i, kb + tid % 32], X_im2col[kb + kk, p].
  auto load = [&](const std::string& kb) {
    emit_slice_loads(e, g, one_by_one, kb, NW, fmt::format("m0 + tid / {} + {} * i", kSlice, kThreads / kSlice),
                     fmt::format("tid % {}", kSlice), NX, TP, half);
  };
  if (half) e("int out_of_range = 0;  // an input past half precision's range: reported through *ovf");
  e("float wr[{}], xr[{}];  // the next slice, loaded while the warps multiply the current one", NW, NX);
  load("0");
  e("for (int k0 = 0; k0 < {}; k0 += {}) {{", K, kSlice);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) ws[tid / {} + {} * i][tid % {}] = {}(wr[i]);", NW, kSlice, kThreads / kSlice, kSlice, round);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) xs[tid / {} + {} * j][pp] = {}(xr[j]);", NX, TP, kThreads / TP, round);
  e("__syncthreads();");
  e("if (k0 + {} < {}) {{", kSlice, K);
  load(fmt::format("k0 + {}", kSlice));
  e("}}");
  e("#pragma unroll");
  e("for (int ks = 0; ks < {}; ks += {}) {{", kSlice, KF);
  e("wmma::fragment<wmma::matrix_a, 16, 16, {}, {}, wmma::row_major> a[{}];", KF, AT, FM);
  e("wmma::fragment<wmma::matrix_b, 16, 16, {}, {}, wmma::row_major> b[{}];", KF, AT, FP);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i) wmma::load_matrix_sync(a[i], &ws[wm * {} + 16 * i][ks], {});", FM, WM, kSlice + pad);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) wmma::load_matrix_sync(b[j], &xs[ks][wp * {} + 16 * j], {});", FP, WP, TP + pad);
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i)", FM);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);", FP);
  e("}}");
  e("__syncthreads();");
  e("}}");
  e("float (*st)[20] = cs[warp];");
  e("#pragma unroll");
  e("for (int i = 0; i < {}; ++i)", FM);
  e("#pragma unroll");
  e("for (int j = 0; j < {}; ++j) {{", FP);
  e("wmma::store_matrix_sync(&st[0][0], acc[i][j], 20, wmma::mem_row_major);");
  e("__syncwarp();");
  e("for (int t = lane; t < 256; t += 32) {{");
  e("const int m = m0 + wm * {} + 16 * i + t / 16, q = p0 + wp * {} + 16 * j + t % 16;", WM, WP);
  e("if (m < {} && q < {}) {{", g.MG, P);
  emit_output_store(e, g, "st[t / 16][t % 16]");
  e("}}");
  e("}}");
  e("__syncwarp();");
  e("}}");
  if (half) e("if (out_of_range) atomicOr(ovf, 1u);");
}

void emit_conv(CuEmit& e) {
  if (!use_implicit_gemm(conv_geom(e.node))) emit_direct(e);
  else if (e.precision == GpuPrecision::Fp32) emit_implicit_gemm(e);
  else emit_tensor_core(e);
}

}  // namespace

void register_cuda_conv(CuKernelTable& t) { t["Conv"] = {emit_conv, nullptr, nullptr}; }

}  // namespace onnxc
