// codegen/cuda/kernels/gemm.cc — Gemm and MatMul in CUDA. Products of fewer than 8 rows
// (per batch: the batch-1 classifier layers) run one thread per output element, a plain dot
// product over K — or, for a Gemm whose A rows and B columns are both contiguous along K
// (transB = 1, the classifiers' layout) with K of at least 512, one block of 256 threads per
// output element: the threads read consecutive elements of both (coalesced) and their partial
// sums are added in shared memory. (One thread per element there read each B column alone,
// strided across the warp, on as few SMs as there are 256 outputs: VGG19's 4096 x 25088
// classifier took most of its batch-1 time on an H200.) The others run a shared-memory tiled
// product: a block of 16 x 16 threads computes a 16 x 16 tile of Y (thread (ty, tx) the
// element (row, col)); for each 64-wide slice of K, every thread loads 4 elements of the A
// tile and 4 of the B tile (zeros outside the matrices), along K for an operand contiguous
// along K and across it otherwise, so that a warp's loads are coalesced whatever the
// transposes (with transB = 1 a warp used to read 16 rows of B 4 bytes each: VGG19's batch-32
// classifier ran at 4.3 TFLOP/s on an H200); the block stores them to shared memory,
// synchronises, issues the next slice's loads and accumulates the current slice's 64 products
// while they are in flight. Gemm's transposes are read through the operands' indices (no
// copy), alpha scales the product, beta * C is added with C's broadcast strides (gemm_attrs,
// ir/ops/gemm.h); MatMul's batch is the grid's z dimension, each operand offset by its batch
// strides (matmul_geom). The fused group's epilogue is applied at the store.
#include <functional>

#include "codegen/cuda/kernels/kernels.h"
#include "ir/ops/gemm.h"

namespace onnxc {
namespace {

constexpr int64_t kTile = 16, kSlice = 64;

// An operand of the tiled product: the C expression of its element at (r, k) of the tile's
// rows and K (for B: k, then the column), given the index expressions, and whether it is
// contiguous along K (then the threads' x index runs along K when loading it, else along the
// rows or columns, so that a warp's loads are coalesced either way).
struct TileOperand {
  std::function<std::string(const std::string& r, const std::string& k)> at;
  bool k_contiguous = false;
};

// The tiled loop: leaves the sum in `acc`, with `row` and `col` in scope. A block of 16 x 16
// threads owns a 16 x 16 tile of Y (thread (ty, tx) the element (row0 + ty, col0 + tx)); K runs
// in slices of 64: each thread loads 4 elements of each operand's slice into registers, stores
// them to shared memory (as[r][kk], bs[kk][c]; rows padded by one float so that neither the
// stores along K nor the reads hit one bank twice), and after the block synchronises it issues
// the next slice's loads before its 64 products of the current one.
void tiled_product(CuEmit& e, int64_t M, int64_t N, int64_t K, int64_t batch, const TileOperand& A, const TileOperand& B) {
  if ((M + kTile - 1) / kTile > 65535 || batch > 65535) e.node.unsupported("the CUDA backend's product runs at most 65535 x 16 rows and 65535 batches");
  e.grid = fmt::format("dim3({}, {}, {})", (N + kTile - 1) / kTile, (M + kTile - 1) / kTile, batch);
  e.block = fmt::format("dim3({}, {})", kTile, kTile);
  e("__shared__ float as[{}][{} + 1];  // as[r][kk] = A(row0 + r, k0 + kk)", kTile, kSlice);
  e("__shared__ float bs[{}][{} + 1];  // bs[kk][c] = B(k0 + kk, col0 + c)", kSlice, kTile);
  e("const int tx = threadIdx.x, ty = threadIdx.y;");
  e("const int64_t row0 = (int64_t)blockIdx.y * {0}, col0 = (int64_t)blockIdx.x * {0};", kTile);
  e("const int64_t row = row0 + ty, col = col0 + tx;");
  // Thread (ty, tx)'s q-th element of an operand's slice: its tile index (ar, bc) and its k within
  // the slice (ak, bk); tx runs along K for an operand contiguous along K.
  const std::string ar = A.k_contiguous ? "ty" : "tx", ak = A.k_contiguous ? "tx + 16 * q" : "ty + 16 * q";
  const std::string bc = B.k_contiguous ? "ty" : "tx", bk = B.k_contiguous ? "tx + 16 * q" : "ty + 16 * q";
  auto load = [&](const std::string& kb) {
    e("#pragma unroll");
    e("for (int q = 0; q < {}; ++q) {{", kSlice / kTile);
    e("const int64_t r = row0 + {}, ka = {} + {};", ar, kb, ak);
    e("ar[q] = r < {} && ka < {} ? {} : 0.0f;", M, K, A.at("r", "ka"));
    e("const int64_t c = col0 + {}, kb = {} + {};", bc, kb, bk);
    e("br[q] = kb < {} && c < {} ? {} : 0.0f;", K, N, B.at("kb", "c"));
    e("}}");
  };
  e("float ar[{0}], br[{0}];  // the next slice, loaded while the block multiplies the current one", kSlice / kTile);
  load("0");
  e("float acc = 0.0f;");
  e("for (int64_t k0 = 0; k0 < {}; k0 += {}) {{", K, kSlice);
  e("#pragma unroll");
  e("for (int q = 0; q < {}; ++q) {{", kSlice / kTile);
  e("as[{}][{}] = ar[q];", ar, ak);
  e("bs[{}][{}] = br[q];", bk, bc);
  e("}}");
  e("__syncthreads();");
  e("if (k0 + {} < {}) {{", kSlice, K);
  load(fmt::format("k0 + {}", kSlice));
  e("}}");
  e("#pragma unroll");
  e("for (int kk = 0; kk < {}; ++kk) acc = fmaf(as[ty][kk], bs[kk][tx], acc);", kSlice);
  e("__syncthreads();");
  e("}}");
}

// Products of fewer rows than this (batch-1 classifier layers) run one thread per output
// element, a dot product over K: a 16 x 16 tile would leave most of its threads idle.
constexpr int64_t kDotRows = 8;

// One thread per element (batch bz, row, col) of Y, summing over K in `acc`.
void dot_product(CuEmit& e, int64_t M, int64_t N, int64_t K, int64_t batch, const std::string& a_elem, const std::string& b_elem) {
  e.flat(batch * M * N);
  e("const int64_t col = {};", M * N * batch == N ? "i" : cu_coord("i", 1, N));
  e("const int64_t row = {};", M == 1 ? "0" : cu_coord("i", N, M));
  if (batch > 1) e("const int64_t bz = i / {};", M * N);
  e("float acc = 0.0f;");
  e("for (int64_t k = 0; k < {}; ++k) acc = fmaf({}, {}, acc);", K, a_elem, b_elem);
}

// Threads of the block-per-element dot product (block_dot), and the least K it is used for.
constexpr int64_t kDotThreads = 256, kBlockDotK = 512;

// One block per element (row, col) of the M x N output: `k` strides over K by the block's
// 256 threads (a 32 x 8 block), the partial sums are added in shared memory, and thread 0
// goes on with `acc`, `row`, `col` and `i` (the element's index) in scope; the others return.
void block_dot(CuEmit& e, int64_t M, int64_t N, int64_t K, const std::string& a_elem, const std::string& b_elem) {
  if (M * N > 2147483647) e.node.unsupported("the CUDA backend launches at most 2^31 - 1 blocks");
  e.grid = std::to_string(M * N);
  e.block = fmt::format("dim3(32, {})", kDotThreads / 32);
  e("__shared__ float part[{}];", kDotThreads);
  e("const int t = threadIdx.y * 32 + threadIdx.x;");
  e("const int64_t i = blockIdx.x;");
  e("const int64_t col = {};", cu_coord("i", 1, N));
  e("const int64_t row = {};", M == 1 ? "0" : fmt::format("i / {}", N));
  e("float acc = 0.0f;");
  e("for (int64_t k = t; k < {}; k += {}) acc = fmaf({}, {}, acc);", K, kDotThreads, a_elem, b_elem);
  e("part[t] = acc;");
  e("__syncthreads();");
  for (int64_t s = kDotThreads / 2; s >= 1; s /= 2) {
    e("if (t < {0}) part[t] += part[t + {0}];", s);
    e("__syncthreads();");
  }
  e("if (t != 0) return;");
  e("acc = part[0];");
}

void emit_gemm(CuEmit& e) {
  const GemmAttrs& a = gemm_attrs(e.node);
  const std::string A = e.in(0), B = e.in(1);
  // A(r, k) and B(k, c) through the transposes; a_at / b_at: at this thread's row / column.
  auto a_rk = [&](const std::string& r, const std::string& k) { return a.trans_a ? fmt::format("{}[{} * {} + {}]", A, k, a.M, r) : fmt::format("{}[{} * {} + {}]", A, r, a.K, k); };
  auto b_kc = [&](const std::string& k, const std::string& c) { return a.trans_b ? fmt::format("{}[{} * {} + {}]", B, c, a.K, k) : fmt::format("{}[{} * {} + {}]", B, k, a.N, c); };
  auto a_at = [&](const std::string& k) { return a_rk("row", k); };
  auto b_at = [&](const std::string& k) { return b_kc(k, "col"); };
  const bool dot = a.M < kDotRows;
  if (dot && !a.trans_a && a.trans_b && a.K >= kBlockDotK) {
    e.variant = "dot, a block per element";
    block_dot(e, a.M, a.N, a.K, a_at("k"), b_at("k"));
  } else if (dot) {
    e.variant = "dot";
    dot_product(e, a.M, a.N, a.K, 1, a_at("k"), b_at("k"));
  } else {
    e.variant = "tiled 16x16, K slices of 64";
    tiled_product(e, a.M, a.N, a.K, 1, {a_rk, a.trans_a == 0}, {b_kc, a.trans_b != 0});
    e("if (row < {} && col < {}) {{", a.M, a.N);
    e("const int64_t i = row * {} + col;", a.N);
  }
  std::string v = a.alpha == 1 ? "acc" : c_float(a.alpha) + " * acc";
  if (e.has_in(2) && a.beta != 0) {
    std::string c = fmt::format("{}[row * {} + col * {}]", e.in(2), a.c_si, a.c_sj);
    v += " + " + (a.beta == 1 ? c : c_float(a.beta) + " * " + c);
  }
  e("{}", cu_epilogue(e, v, "i", e.out(0) + "[i]"));
  if (!dot) e("}}");
}

void emit_matmul(CuEmit& e) {
  const MatMulGeom& g = matmul_geom(e.node);
  int64_t batch = 1;
  for (int64_t b : g.batch) batch *= b;
  const bool dot = g.M < kDotRows;
  // Operand offsets of batch index z: its coordinates times each operand's batch strides.
  const std::string z = dot ? "bz" : "(int64_t)blockIdx.z";
  std::string aoff, boff;
  int64_t stride = 1;
  for (size_t d = g.batch.size(); d-- > 0;) {
    const std::string c = "(" + cu_coord(z, stride, g.batch[d]) + ")";
    if (g.a_st[d]) aoff += fmt::format("{} * {} + ", c, g.a_st[d]);
    if (g.b_st[d]) boff += fmt::format("{} * {} + ", c, g.b_st[d]);
    stride *= g.batch[d];
  }
  auto a_rk = [&](const std::string& r, const std::string& k) { return fmt::format("{}[{}{} * {} + {}]", e.in(0), aoff, r, g.K, k); };
  auto b_kc = [&](const std::string& k, const std::string& c) { return fmt::format("{}[{}{} * {} + {}]", e.in(1), boff, k, g.N, c); };
  auto a_at = [&](const std::string& k) { return a_rk("row", k); };
  auto b_at = [&](const std::string& k) { return b_kc(k, "col"); };
  if (dot) {
    e.variant = "dot";
    dot_product(e, g.M, g.N, g.K, batch, a_at("k"), b_at("k"));
  } else {
    e.variant = "tiled 16x16, K slices of 64";
    tiled_product(e, g.M, g.N, g.K, batch, {a_rk, true}, {b_kc, false});
    e("if (row < {} && col < {}) {{", g.M, g.N);
    e("const int64_t i = (int64_t)blockIdx.z * {} + row * {} + col;", g.M * g.N, g.N);
  }
  e("{}", cu_epilogue(e, "acc", "i", e.out(0) + "[i]"));
  if (!dot) e("}}");
}

}  // namespace

void register_cuda_gemm(CuKernelTable& t) {
  t["Gemm"] = {emit_gemm, nullptr, nullptr};
  t["MatMul"] = {emit_matmul, nullptr, nullptr};
}

}  // namespace onnxc
