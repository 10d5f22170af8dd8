// ir/ops/pool_gemm.cc — the matrix-product loop nest of Gemm and MatMul (see pool_gemm.h).
//
// Three shapes of loop nest:
//  - dot form, when B is stored N x K (trans_b) and M < 4, or N == 1: every output is one
//    contiguous SIMD dot product over K; (batch, i, j) run in parallel. This is the
//    batch-1 classifier layer (GEMV), bound by reading B once.
//  - row-stream form, M < 4 and B stored K x N: parallel chunks of 512 columns; for each k
//    the chunk of row k of B is streamed once into the Y chunk (which stays in L1).
//  - blocked form otherwise: tiles of 32 rows x 64 columns run in parallel; inside a tile,
//    K in blocks of 128; each 128 x 64 block of B is packed into a contiguous stack buffer
//    (32 KiB, transposed when B is N x K; skipped when B rows are no longer than a block),
//    then i, k, j with j innermost, so the block stays in L1 across the tile's rows and the
//    long row stride of B causes no cache-set conflicts.
// Y starts as beta * C (or 0) and accumulates alpha * A[i][k] * B[k][j] with ONNXC_FMA
// (fmaf where the target has FMA). The dot form keeps `s += a * b`: an fmaf recurrence is
// not a reduction clang's vectorizer recognises.
// Gaps: no register tiling or micro-kernel yet; bench/ decides when it is worth one.
#include "ir/ops/pool_gemm.h"

#include <fmt/format.h>

#include <algorithm>

namespace onnxc {
namespace {

// Tile sizes: a KB x NB block of B is 32 KiB (L1); MB rows reuse it. GEMV-like products
// (M < 4) take kGemvNB-column chunks of whole rows of B instead.
constexpr int64_t kMB = 32, kNB = 64, kKB = 128, kGemvNB = 512;

// "i * 5 + j" pieces; empty when the stride is 0.
std::string term(const std::string& var, int64_t stride) {
  if (stride == 0) return "";
  return stride == 1 ? var : fmt::format("{} * {}", var, stride);
}

std::string sum(std::initializer_list<std::string> parts) {
  std::string s;
  for (auto& p : parts)
    if (!p.empty() && p != "0") s += (s.empty() ? "" : " + ") + p;
  return s.empty() ? "0" : s;
}

// Element offset of batch `bt` in an operand with per-batch-dim strides st.
std::string batch_offset(const GemmSpec& g, const Shape& st, int64_t mat) {
  Shape cont = strides_of(g.batch_shape);
  bool zero = true, full = true;
  for (size_t d = 0; d < st.size(); ++d) {
    zero = zero && (st[d] == 0 || g.batch_shape[d] == 1);
    full = full && (g.batch_shape[d] == 1 || st[d] == cont[d] * mat);
  }
  if (zero) return "0";
  if (full) return term("bt", mat);
  std::string s;
  for (size_t d = 0; d < st.size(); ++d) {
    if (st[d] == 0 || g.batch_shape[d] == 1) continue;
    std::string idx = cont[d] == 1 ? "bt" : fmt::format("bt / {}", cont[d]);
    if (d > 0) idx = cont[d] == 1 ? fmt::format("bt % {}", g.batch_shape[d]) : fmt::format("({}) % {}", idx, g.batch_shape[d]);
    s += fmt::format("{}({}){}", s.empty() ? "" : " + ", idx, st[d] == 1 ? "" : fmt::format(" * {}", st[d]));
  }
  return s;
}

std::string scaled(double f, const std::string& x) {
  return f == 1.0 ? x : fmt::format("{} * {}", c_float(f), x);
}

}  // namespace

void emit_gemm(CEmit& e, const GemmSpec& g) {
  const int64_t M = g.M, N = g.N, K = g.K;
  int64_t batch = numel(g.batch_shape);
  bool trans_b = g.trans_b;
  if (N == 1) trans_b = true;  // a K x 1 matrix is also a 1 x K one
  bool dot = trans_b && (M < 4 || N == 1);
  double work = static_cast<double>(batch) * M * N * (K ? K : 1);
  bool par = work >= static_cast<double>(1 << 18);
  std::string aoff = batch > 1 ? batch_offset(g, g.a_bstride, M * K) : "0";
  std::string boff = batch > 1 ? batch_offset(g, g.b_bstride, K * N) : "0";
  std::string yoff = batch > 1 ? term("bt", M * N) : "0";
  // A(i, k) and the bias term C(i, j) as C expressions.
  auto A = [&](const std::string& i, const std::string& k) {
    return g.trans_a ? fmt::format("A[{}]", sum({term(k, M), i})) : fmt::format("A[{}]", sum({term(i, K), k}));
  };
  auto bias = [&](const std::string& i, const std::string& j) {
    return scaled(g.beta, fmt::format("{}[{}]", g.c, sum({term(i, g.c_si), term(j, g.c_sj)})));
  };
  auto pointers = [&]() {
    e("const float* restrict A = {};", aoff == "0" ? g.a : fmt::format("{} + {}", g.a, aoff));
    e("const float* restrict B = {};", boff == "0" ? g.b : fmt::format("{} + {}", g.b, boff));
    e("float* restrict Y = {};", yoff == "0" ? g.y : fmt::format("{} + {}", g.y, yoff));
  };

  if (dot) {
    // Every Y(i, j) is a dot product of row i of op(A) and row j of B (stored N x K).
    std::vector<std::string> loops;
    if (batch > 1) loops.push_back(fmt::format("for (int64_t bt = 0; bt < {}; ++bt) {{", batch));
    if (M > 1) loops.push_back(fmt::format("for (int64_t i = 0; i < {}; ++i) {{", M));
    if (N > 1) loops.push_back(fmt::format("for (int64_t j = 0; j < {}; ++j) {{", N));
    if (par && !loops.empty())
      e("ONNXC_PRAGMA(omp parallel for{})", loops.size() > 1 ? fmt::format(" collapse({})", loops.size()) : "");
    for (auto& l : loops) e("{}", l);
    if (loops.empty()) e("{{");
    if (M == 1) e("const int64_t i = 0;");
    if (N == 1) e("const int64_t j = 0;");
    pointers();
    e("float s = 0.0f;");
    e("ONNXC_PRAGMA(omp simd reduction(+:s))");
    e("for (int64_t k = 0; k < {}; ++k) s += {} * B[{}];", K, A("i", "k"), sum({term("j", K), "k"}));
    std::string v = scaled(g.alpha, "s");
    if (!g.c.empty()) v += " + " + bias("i", "j");
    e("Y[{}] = {};", sum({term("i", N), "j"}), v);
    for (size_t k = 0; k < std::max<size_t>(loops.size(), 1); ++k) e("}}");
    return;
  }

  // Blocked form: parallel tiles of MB x NB outputs. Few rows (GEMV-like) use long column
  // chunks and no k blocks, so B streams row by row; otherwise KB x NB blocks of B are
  // packed into pk (transposed when B is N x K) unless B rows are already short.
  bool gemv = M < 4;
  const int64_t MB = gemv ? M : kMB, NB = gemv ? kGemvNB : kNB, KB = gemv ? std::max<int64_t>(K, 1) : kKB;
  bool pack = K > 0 && (trans_b || (!gemv && N > NB));
  std::vector<std::string> loops;
  if (batch > 1) loops.push_back(fmt::format("for (int64_t bt = 0; bt < {}; ++bt) {{", batch));
  if (M > MB) loops.push_back(fmt::format("for (int64_t i0 = 0; i0 < {}; i0 += {}) {{", M, MB));
  if (N > NB) loops.push_back(fmt::format("for (int64_t j0 = 0; j0 < {}; j0 += {}) {{", N, NB));
  if (par && !loops.empty())
    e("ONNXC_PRAGMA(omp parallel for{})", loops.size() > 1 ? fmt::format(" collapse({})", loops.size()) : "");
  for (auto& l : loops) e("{}", l);
  if (loops.empty()) e("{{");
  if (M <= MB) e("const int64_t i0 = 0;");
  if (N <= NB) e("const int64_t j0 = 0;");
  pointers();
  // Tile bounds: literal when every tile is full.
  std::string i1 = M <= MB ? std::to_string(M) : M % MB == 0 ? fmt::format("i0 + {}", MB) : "i1";
  if (i1 == "i1") e("const int64_t i1 = i0 + {0} < {1} ? i0 + {0} : {1};", MB, M);
  std::string nj = N <= NB ? std::to_string(N) : N % NB == 0 ? std::to_string(NB) : "nj";
  if (nj == "nj") e("const int64_t nj = j0 + {0} < {1} ? {0} : {1} - j0;", NB, N);
  if (pack) e("float pk[{} * {}]; /* block of B as k x j */", KB, NB);
  // Y tile = beta * C or 0.
  e("for (int64_t i = i0; i < {}; ++i) {{", i1);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t jj = 0; jj < {}; ++jj) Y[i * {} + j0 + jj] = {};", nj, N, g.c.empty() ? "0.0f" : bias("i", "(j0 + jj)"));
  e("}}");
  if (K > 0) {
    if (K > KB) {
      e("for (int64_t k0 = 0; k0 < {}; k0 += {}) {{", K, KB);
    } else {
      e("{{");
      e("const int64_t k0 = 0;");
    }
    std::string nk = K <= KB ? std::to_string(K) : K % KB == 0 ? std::to_string(KB) : "nk";
    if (nk == "nk") e("const int64_t nk = k0 + {0} < {1} ? {0} : {1} - k0;", KB, K);
    if (pack && trans_b) {
      e("for (int64_t jj = 0; jj < {}; ++jj) {{", nj);
      e("const float* restrict Bj = B + (j0 + jj) * {} + k0;", K);
      e("for (int64_t kk = 0; kk < {}; ++kk) pk[kk * {} + jj] = Bj[kk];", nk, NB);
      e("}}");
    } else if (pack) {
      e("for (int64_t kk = 0; kk < {}; ++kk) {{", nk);
      e("const float* restrict Bk = B + (k0 + kk) * {} + j0;", N);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t jj = 0; jj < {}; ++jj) pk[kk * {} + jj] = Bk[jj];", nj, NB);
      e("}}");
    }
    e("for (int64_t i = i0; i < {}; ++i) {{", i1);
    e("float* restrict Yi = Y + i * {} + j0;", N);
    e("for (int64_t kk = 0; kk < {}; ++kk) {{", nk);
    e("const float a = {};", scaled(g.alpha, A("i", "(k0 + kk)")));
    if (pack) e("const float* restrict Bk = pk + kk * {};", NB);
    else e("const float* restrict Bk = B + (k0 + kk) * {} + j0;", N);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t jj = 0; jj < {}; ++jj) Yi[jj] = ONNXC_FMA(a, Bk[jj], Yi[jj]);", nj);
    e("}}");
    e("}}");
    e("}}");
  }
  for (size_t k = 0; k < std::max<size_t>(loops.size(), 1); ++k) e("}}");
}

}  // namespace onnxc
