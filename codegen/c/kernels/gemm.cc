// codegen/c/kernels/gemm.cc — Gemm and MatMul in C: one matrix-product loop nest (emit_gemm)
// for Y[bt] (M x N, row-major, contiguous batches) = alpha * op(A[bt]) * op(B[bt]) + beta * C,
// float32. MatMul folds its batch into M when B has no batch of its own and A's batches are
// contiguous (activations times a weight matrix), so the tiles see one tall matrix. Which
// form a product takes, its tile, blocks and tasks are decided in gemm_plan.h (with the
// layout of a constant B); this file prints the plan.
//
// Four shapes of loop nest:
//  - register-tiled form (ONNX Runtime's MLAS SGEMM kernels, written as C), for M >= 4 when B
//    is float32: a tile of MR rows x NR columns of Y is held in MR x NR/V vector-extension
//    accumulators (codegen/c/vector_types.h: 12 x 2 vectors of 16 floats on AVX-512, 6 x 2 of
//    8 on AVX2) over the whole of K: per k, the NR floats of a panel row of B are loaded once
//    and every row's A element is broadcast against them. B is read in panels of NR columns
//    ([K][NR] contiguous, zeros past N): a constant B is stored so at compile time by the
//    pack-weights pass (Layout::panel, asked through gemm_weight_layout); an activation B
//    (attention's batched MatMuls) is packed by each task into a stack buffer (K x NR floats,
//    at most kStackPanelBytes). The panel stays in L1/L2 while the rows of A stream past it;
//    with packed weights, each k step also prefetches the same row of the next panel (the
//    next task's), as weights come from memory on every run.
//    Tasks: (batch, panel, block of rows), panel-major. Each tile goes through a local buffer
//    to Y with alpha, beta * C and the fused group's epilogue (bias Add, Relu, Gelu, residual
//    Add...) applied on the way, so the last panel's columns past N and every C broadcast
//    need no special tile.
//  - dot form, when B is stored N x K (trans_b) and M < 4, or N == 1: every output is one
//    contiguous dot product over K. This is the batch-1 classifier layer (GEMV), bound by
//    reading B once. Float32 rows of A at least two vectors long go 4 rows of B at a time,
//    in vector-extension accumulators (2 per row), so 4 streams of B are read together;
//    (batch, i, group of 4 rows) run in parallel. Otherwise one row at a time, a SIMD
//    reduction, (batch, i, j) in parallel.
//  - row-stream form, M < 4 and B stored K x N: parallel chunks of 512 columns; for each k
//    the chunk of row k of B is streamed once into the Y chunk (which stays in L1).
//  - blocked form otherwise (an activation B whose panel would not fit the stack, other
//    dtypes): tiles of 32 rows x 64 columns run in parallel; inside a tile,
//    K in blocks of 128; each 128 x 64 block of B is packed into a contiguous stack buffer
//    (32 KiB, transposed when B is N x K; skipped when B rows are no longer than a block),
//    then i, k, j with j innermost, so the block stays in L1 across the tile's rows and the
//    long row stride of B causes no cache-set conflicts.
//    Y starts as beta * C (or 0) and accumulates alpha * A[i][k] * B[k][j] with ONNXC_FMA
//    (fmaf where the target has FMA).
// The dot form keeps `s += a * b`: an fmaf recurrence is not a reduction clang's vectorizer
// recognises.
// Gaps: K is not blocked in the register-tiled form (a panel of a long K streams from L2);
// the blocked form has no register tile.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/c/fused.h"
#include "codegen/c/kernels/gemm_plan.h"
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "codegen/c/vector_types.h"
#include "ir/ops/elementwise.h"
#include "ir/ops/gemm.h"

namespace onnxc {
namespace {

// One product: batch offsets of A and B come from the broadcast batch shape and per-dim
// element strides (0 = broadcast). C, when named, is indexed C[i * c_si + j * c_sj] (0
// strides broadcast) and is the same for every batch.
struct GemmSpec {
  int64_t M = 0, N = 0, K = 0;
  std::string a, b, y;           // C array names
  bool trans_a = false, trans_b = false;
  Shape batch_shape;             // output batch dims (empty: one product)
  Shape a_bstride, b_bstride;    // element stride of A / B per batch dim, 0 on broadcast
  double alpha = 1.0;
  std::string c;                 // bias array, empty for none
  double beta = 1.0;
  int64_t c_si = 0, c_sj = 0;
};


// Element offset of batch `bt` in an operand with per-batch-dim strides st.
std::string batch_offset(const GemmSpec& g, const Shape& st, int64_t mat) {
  Shape cont = strides_of(g.batch_shape);
  bool zero = true, full = true;
  for (size_t d = 0; d < st.size(); ++d) {
    zero = zero && (st[d] == 0 || g.batch_shape[d] == 1);
    full = full && (g.batch_shape[d] == 1 || st[d] == cont[d] * mat);
  }
  if (zero) return "0";
  if (full) return index_term("bt", mat);
  std::string s;
  for (size_t d = 0; d < st.size(); ++d) {
    if (st[d] == 0 || g.batch_shape[d] == 1) continue;
    std::string idx = cont[d] == 1 ? "bt" : fmt::format("bt / {}", cont[d]);
    if (d > 0) idx = cont[d] == 1 ? fmt::format("bt % {}", g.batch_shape[d]) : fmt::format("({}) % {}", idx, g.batch_shape[d]);
    s += fmt::format("{}({}){}", s.empty() ? "" : " + ", idx, st[d] == 1 ? "" : fmt::format(" * {}", st[d]));
  }
  return s;
}

// Item bt's matrix of operand `base` (a batched product: base + its offset), or base itself
// where every item reads the same one.
std::string item_pointer(const GemmSpec& g, const std::string& base, const Shape& st, int64_t mat) {
  const std::string off = numel(g.batch_shape) > 1 ? batch_offset(g, st, mat) : "0";
  return off == "0" ? base : fmt::format("{} + {}", base, off);
}

std::string scaled(double f, const std::string& x) {
  return f == 1.0 ? x : fmt::format("{} * {}", c_float(f), x);
}

// The task's panel of an activation B: pk[k][c] = op(B)(k, j0 + c), zeros past N.
void pack_panel(CEmit& e, const GemmSpec& g, const GemmPlan& p, const std::string& b) {
  const int64_t N = g.N, K = g.K, NR = p.tile.NR;
  e("const float* restrict B = {};", b);
  e("float pk[{}] __attribute__((aligned(64)));", K * NR);
  if (g.trans_b) {
    e("for (int64_t c = 0; c < {}; ++c) {{", NR);
    e("if (c < nc) {{");
    e("for (int64_t k = 0; k < {}; ++k) pk[k * {} + c] = B[(j0 + c) * {} + k];", K, NR, K);
    e("}} else {{");
    e("for (int64_t k = 0; k < {}; ++k) pk[k * {} + c] = 0.0f;", K, NR);
    e("}}");
    e("}}");
  } else {
    e("for (int64_t k = 0; k < {}; ++k) {{", K);
    e("const float* restrict Bk = B + k * {} + j0;", N);
    simd(e, NR);
    e("for (int64_t c = 0; c < {}; ++c) pk[k * {} + c] = c < nc ? Bk[c] : 0.0f;", NR, NR);
    e("}}");
  }
  e("const float* restrict Bp = pk;");
}

// One register tile of the panel form: R rows from row i, the panel's NR columns, over the
// whole of K; then through a local buffer to Y with alpha, beta * C and the epilogue (extras:
// its extra inputs at (i + r, j0 + c)).
void panel_tile_code(CEmit& e, const GemmSpec& g, const GemmPlan& p, int64_t R, const std::vector<std::string>& extras) {
  const int64_t M = g.M, N = g.N, K = g.K, NR = p.tile.NR, V = p.tile.V, NV = p.tile.NV;
  const std::string vt = vector_type(V), vtu = vt + "u";
  std::string decl;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t v = 0; v < NV; ++v) decl += fmt::format("{}c{}_{} = ({}){{0}}", decl.empty() ? "" : ", ", r, v, vt);
  e("{} {};", vt, decl);
  // One pointer to the tile's rows of A, the rows at constant offsets from it: one register
  // for all of them, where a pointer per row spills some to the stack (5% slower at 12 rows).
  e("const float* restrict ai = A + {};", g.trans_a ? "i" : fmt::format("i * {}", K));
  if (p.prefetch) e("const int64_t pn = jp + 1 < {} ? {} : 0;  /* the next panel, or this one */", p.NP, K * NR);
  e("const float* restrict bk = Bp;");
  e("for (int64_t k = 0; k < {}; ++k, bk += {}) {{", K, NR);
  if (p.prefetch)
    for (int64_t l = 0; l < std::max<int64_t>(1, NR * 4 / 64); ++l) e("ONNXC_PREFETCH(bk + pn{});", l ? fmt::format(" + {}", l * 16) : "");
  std::string bl;
  for (int64_t v = 0; v < NV; ++v) bl += fmt::format("{}b{} = *(const {}*)(bk{})", v ? ", " : "", v, vtu, v ? fmt::format(" + {}", v * V) : "");
  e("const {} {};", vt, bl);
  for (int64_t r = 0; r < R; ++r) {
    e("const float av{} = ai[{}];", r, g.trans_a ? index_sum({index_term("k", M), std::to_string(r)}) : index_sum({std::to_string(r * K), "k"}));
    std::string l;
    for (int64_t v = 0; v < NV; ++v) l += fmt::format("{}c{}_{} += av{} * b{};", v ? " " : "", r, v, r, v);
    e("{}", l);
  }
  e("}}");
  e("float t[{}];", R * NR);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t v = 0; v < NV; ++v) e("*({}*)(t + {}) = c{}_{};", vtu, r * NR + v * V, r, v);
  open_loop(e, "r", R);
  simd(e, NR);
  e("for (int64_t c = 0; c < nc; ++c) {{");
  std::string val = scaled(g.alpha, "t[r * " + std::to_string(NR) + " + c]");
  if (!g.c.empty()) val += " + " + scaled(g.beta, fmt::format("{}[{}]", g.c, index_sum({index_term("(i + r)", g.c_si), index_term("(j0 + c)", g.c_sj)})));
  const std::string dst = fmt::format("Y[(i + r) * {} + j0 + c]", N);
  if (!e.node.epilogue.empty()) e("{}", epilogue_element(e, val, extras, dst));
  else e("{} = {};", dst, val);
  e("}}");
  e("}}");
}

// The panel form (see the top): B prepacked in Layout::panel(NR) (constant, 2-D, no batch),
// or each task packs its panel of B[bt] into a stack buffer first.
void emit_gemm_panel(CEmit& e, const GemmSpec& g, const GemmPlan& p) {
  const int64_t M = g.M, N = g.N, K = g.K, NR = p.tile.NR, MR = p.tile.MR, batch = numel(g.batch_shape);
  const Node& n = e.node;
  const bool epi = !n.epilogue.empty();
  e("/* Register tile {} rows x {} columns ({} accumulators of {}); B in {} panel{} of {} columns{}", MR, NR, MR * p.tile.NV,
    vector_type(p.tile.V), p.NP, p.NP > 1 ? "s" : "", NR,
    p.prepacked ? " packed at compile time (" + e.in_layout(1).str(2) + ")" : ", each packed by its task");
  e(" * tasks ({}panel, block of {} rows){}. */", batch > 1 ? "batch, " : "", p.MB, epi ? "; epilogue on each tile" : "");
  open_tasks(e, p.tasks, p.parallel);
  e("const float* restrict A = {};", item_pointer(g, g.a, g.a_bstride, M * K));
  e("float* restrict Y = {};", batch > 1 ? fmt::format("{} + {}", g.y, index_term("bt", M * N)) : g.y);
  e("const int64_t j0 = {};", index_term("jp", NR) == "" ? "0" : index_term("jp", NR));
  if (N % NR == 0) e("const int64_t nc = {};", NR);
  else e("const int64_t nc = j0 + {0} <= {1} ? {0} : {1} - j0;", NR, N);
  if (p.prepacked) e("const float* restrict Bp = {} + {};", g.b, index_term("jp", K * NR));
  else pack_panel(e, g, p, item_pointer(g, g.b, g.b_bstride, K * N));
  // A run-time size (compile-model --dynamic seq=MAX, Node::run_a): A's rows are the run's
  // first run_a * n + run_b; the tiles stop at the first that covers them (the rows past the
  // run's in the last tile are padding nobody reads). The block's loop keeps its constant
  // bounds and leaves at the run's end (with the run-time bound in the loop's condition a
  // bert_base build for 128 tokens measured up to 5% slower than the static build at 128 on
  // AVX2; this form within 1-2%).
  const bool run_rows = n.run_a != 0 && batch == 1 && !g.trans_a;
  if (run_rows) e("const int64_t rows = {} * onnxc_n + {};", n.run_a, n.run_b);
  if (p.MF > 0) {
    e("const int64_t i0 = {};", p.NRB > 1 ? index_term("rb", p.MB) : "0");
    e("const int64_t i1 = i0 + {0} < {1} ? i0 + {0} : {1};", p.MB, p.MF);
  }
  // The epilogue's extra inputs at element (row, col) of Y (plain, its logical shape).
  const std::vector<std::string> extras = matrix_epilogue_extras(e, batch > 1 ? fmt::format("(bt * {} + i + r)", M) : "(i + r)", "(j0 + c)");
  if (p.MF > 0) {
    e("for (int64_t i = i0; i < i1; i += {}) {{", MR);
    if (run_rows) e("if (i >= rows) break;");
    panel_tile_code(e, g, p, MR, extras);
    e("}}");
  }
  if (p.MRr > 0) {
    e.line(p.NRB > 1 ? fmt::format("if (rb == {}{}) {{", p.NRB - 1, run_rows ? fmt::format(" && rows > {}", p.MF) : "")
                     : run_rows ? fmt::format("if (rows > {}) {{", p.MF) : std::string("{"));
    e("const int64_t i = {};", p.MF);
    panel_tile_code(e, g, p, p.MRr, extras);
    e("}}");
  }
  for (size_t k = 0; k < p.tasks.size(); ++k) e("}}");
  if (epi) e.epilogue_done = true;
}

// The other forms' task loops (single trips left out, their variables constants) and the
// operand pointers; returns the braces to close.
size_t open_gemm_tasks(CEmit& e, const GemmSpec& g, const GemmPlan& p) {
  if (p.parallel) e.open_nest({.loops = p.tasks});
  else
    for (const NestLoop& l : p.tasks) e("{} {{", l.header());
  if (p.tasks.empty()) e("{{");
  const int64_t M = g.M, N = g.N, K = g.K, batch = numel(g.batch_shape);
  switch (p.form) {
    case GemmForm::DotVector:
    case GemmForm::Dot:
      if (M == 1) e("const int64_t i = 0;");
      if (p.form == GemmForm::DotVector ? p.NG == 1 : N == 1) e("const int64_t {} = 0;", p.form == GemmForm::DotVector ? "jg" : "j");
      break;
    default:
      if (M <= p.TM) e("const int64_t i0 = 0;");
      if (N <= p.TN) e("const int64_t j0 = 0;");
  }
  const std::string yoff = batch > 1 ? index_term("bt", M * N) : "0";
  e("const float* restrict A = {};", item_pointer(g, g.a, g.a_bstride, M * K));
  e("const float* restrict B = {};", item_pointer(g, g.b, g.b_bstride, K * N));
  e("float* restrict Y = {};", yoff == "0" ? g.y : fmt::format("{} + {}", g.y, yoff));
  return std::max<size_t>(p.tasks.size(), 1);
}

// A(i, k) and the bias term C(i, j) as C expressions.
std::string a_at(const GemmSpec& g, const std::string& i, const std::string& k) {
  return g.trans_a ? fmt::format("A[{}]", index_sum({index_term(k, g.M), i})) : fmt::format("A[{}]", index_sum({index_term(i, g.K), k}));
}
std::string bias_at(const GemmSpec& g, const std::string& i, const std::string& j) {
  return scaled(g.beta, fmt::format("{}[{}]", g.c, index_sum({index_term(i, g.c_si), index_term(j, g.c_sj)})));
}

// The dot form over vectors: kDotRows rows of B at once against one row of A: per step of 2
// vectors of k, each A vector is loaded once for the rows, 2 accumulators per row; the rows
// are separate streams, which keeps more of B's reads in flight than one dot product at a
// time (vgg19's 4096 x 25088 classifier, one thread: 15 GB/s one row at a time, 18 with 4;
// two threads 25 and 35 GB/s).
void emit_gemm_dot_vector(CEmit& e, const GemmSpec& g, const GemmPlan& p) {
  const int64_t N = g.N, K = g.K, DV = p.DV, R = p.R, NG = p.NG, KF = p.KF;
  const std::string vt = vector_type(DV), vtu = vt + "u";
  const size_t open = open_gemm_tasks(e, g, p);
  e("const float* restrict ar = A + {};", index_term("i", K).empty() ? "0" : index_term("i", K));
  auto group = [&](int64_t RR) {
    e("const float* restrict br = B + jg * {};", R * K);
    std::string d;
    for (int64_t r = 0; r < RR; ++r) d += fmt::format("{0}s{1} = ({2}){{0}}, t{1} = ({2}){{0}}", r ? ", " : "", r, vt);
    e("{} {};", vt, d);
    e("for (int64_t k = 0; k < {}; k += {}) {{", KF, 2 * DV);
    e("const {0} a0 = *(const {1}*)(ar + k), a1 = *(const {1}*)(ar + k + {2});", vt, vtu, DV);
    for (int64_t r = 0; r < RR; ++r)
      e("s{0} += a0 * *(const {1}*)(br + {2}k); t{0} += a1 * *(const {1}*)(br + {2}k + {3});", r, vtu, r ? fmt::format("{} + ", r * K) : "", DV);
    e("}}");
    for (int64_t r = 0; r < RR; ++r) {
      e("{{");
      e("const {} u = s{} + t{};", vt, r, r);
      e("float s = 0.0f;");
      e("for (int64_t l = 0; l < {}; ++l) s += u[l];", DV);
      if (KF < K) e("for (int64_t k = {}; k < {}; ++k) s += ar[k] * br[{}k];", KF, K, r ? fmt::format("{} + ", r * K) : "");
      std::string v = scaled(g.alpha, "s");
      const std::string j = NG > 1 ? fmt::format("jg * {} + {}", R, r) : std::to_string(r);
      if (!g.c.empty()) v += " + " + bias_at(g, "i", "(" + j + ")");
      e("Y[{}] = {};", index_sum({index_term("i", N), j}), v);
      e("}}");
    }
  };
  if (p.RL == R) {
    group(R);
  } else {
    e("if (jg < {}) {{", NG - 1);
    group(R);
    e("}} else {{");
    group(p.RL);
    e("}}");
  }
  for (size_t k = 0; k < open; ++k) e("}}");
}

// Every Y(i, j) is a dot product of row i of op(A) and row j of B (stored N x K).
void emit_gemm_dot(CEmit& e, const GemmSpec& g, const GemmPlan& p) {
  const size_t open = open_gemm_tasks(e, g, p);
  e("float s = 0.0f;");
  e("ONNXC_PRAGMA(omp simd reduction(+:s))");
  e("for (int64_t k = 0; k < {}; ++k) s += {} * B[{}];", g.K, a_at(g, "i", "k"), index_sum({index_term("j", g.K), "k"}));
  std::string v = scaled(g.alpha, "s");
  if (!g.c.empty()) v += " + " + bias_at(g, "i", "j");
  e("Y[{}] = {};", index_sum({index_term("i", g.N), "j"}), v);
  for (size_t k = 0; k < open; ++k) e("}}");
}

// Blocked and row-stream forms: parallel tiles of TM x TN outputs. Few rows (GEMV-like) use
// long column chunks and no k blocks, so B streams row by row; otherwise TK x TN blocks of B
// are packed into pk (transposed when B is N x K) unless B rows are already short.
void emit_gemm_blocked(CEmit& e, const GemmSpec& g, const GemmPlan& p) {
  const int64_t M = g.M, N = g.N, K = g.K, MB = p.TM, NB = p.TN, KB = p.TK;
  const size_t open = open_gemm_tasks(e, g, p);
  // Tile bounds: literal when every tile is full.
  std::string i1 = M <= MB ? std::to_string(M) : M % MB == 0 ? fmt::format("i0 + {}", MB) : "i1";
  if (i1 == "i1") e("const int64_t i1 = i0 + {0} < {1} ? i0 + {0} : {1};", MB, M);
  std::string nj = N <= NB ? std::to_string(N) : N % NB == 0 ? std::to_string(NB) : "nj";
  if (nj == "nj") e("const int64_t nj = j0 + {0} < {1} ? {0} : {1} - j0;", NB, N);
  if (p.pack) e("float pk[{} * {}]; /* block of B as k x j */", KB, NB);
  // Y tile = beta * C or 0.
  e("for (int64_t i = i0; i < {}; ++i) {{", i1);
  e("ONNXC_PRAGMA(omp simd)");
  e("for (int64_t jj = 0; jj < {}; ++jj) Y[i * {} + j0 + jj] = {};", nj, N, g.c.empty() ? "0.0f" : bias_at(g, "i", "(j0 + jj)"));
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
    if (p.pack && p.trans_b) {
      e("for (int64_t jj = 0; jj < {}; ++jj) {{", nj);
      e("const float* restrict Bj = B + (j0 + jj) * {} + k0;", K);
      e("for (int64_t kk = 0; kk < {}; ++kk) pk[kk * {} + jj] = Bj[kk];", nk, NB);
      e("}}");
    } else if (p.pack) {
      e("for (int64_t kk = 0; kk < {}; ++kk) {{", nk);
      e("const float* restrict Bk = B + (k0 + kk) * {} + j0;", N);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t jj = 0; jj < {}; ++jj) pk[kk * {} + jj] = Bk[jj];", nj, NB);
      e("}}");
    }
    e("for (int64_t i = i0; i < {}; ++i) {{", i1);
    e("float* restrict Yi = Y + i * {} + j0;", N);
    e("for (int64_t kk = 0; kk < {}; ++kk) {{", nk);
    e("const float a = {};", scaled(g.alpha, a_at(g, "i", "(k0 + kk)")));
    if (p.pack) e("const float* restrict Bk = pk + kk * {};", NB);
    else e("const float* restrict Bk = B + (k0 + kk) * {} + j0;", N);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t jj = 0; jj < {}; ++jj) Yi[jj] = ONNXC_FMA(a, Bk[jj], Yi[jj]);", nj);
    e("}}");
    e("}}");
    e("}}");
  }
  for (size_t k = 0; k < open; ++k) e("}}");
}

void emit_gemm(CEmit& e, const GemmSpec& g) {
  GemmShape s;
  s.M = g.M, s.N = g.N, s.K = g.K, s.batch = numel(g.batch_shape);
  s.trans_a = g.trans_a, s.trans_b = g.trans_b;
  s.a_f32 = e.in_dtype(0) == DType::F32, s.b_f32 = e.in_dtype(1) == DType::F32;
  s.b_panel = e.in_layout(1).is_panel();
  const GemmPlan p = plan_gemm(s, e.target);
  e.plan = describe(p);
  if (s.b_panel) {
    ONNXC_ASSERT(g.batch_shape.empty() && g.trans_b == (e.in_layout(1).kind == Layout::Kind::PanelT),
                 e.node.where() + ": panel-packed B of a batched product");
    ONNXC_ASSERT(p.tile.NR == e.in_layout(1).block, e.node.where() + ": B packed for another tile width");
  }
  e.variant = gemm_form_name(p.form);
  switch (p.form) {
    case GemmForm::Panel: emit_gemm_panel(e, g, p); break;
    case GemmForm::DotVector: emit_gemm_dot_vector(e, g, p); break;
    case GemmForm::Dot: emit_gemm_dot(e, g, p); break;
    case GemmForm::RowStream:
    case GemmForm::Blocked: emit_gemm_blocked(e, g, p); break;
  }
}

void emit_gemm_node(CEmit& e) {
  const GemmAttrs& a = gemm_attrs(e.node);
  GemmSpec g;
  g.M = a.M, g.N = a.N, g.K = a.K;
  g.a = e.in(0), g.b = e.in(1), g.y = e.out(0);
  g.trans_a = a.trans_a, g.trans_b = a.trans_b;
  g.alpha = a.alpha;
  if (e.has_in(2) && a.beta != 0.0) {
    g.c = e.in(2), g.beta = a.beta, g.c_si = a.c_si, g.c_sj = a.c_sj;
  }
  emit_gemm(e, g);
}

void emit_matmul(CEmit& e) {
  const MatMulGeom& m = matmul_geom(e.node);
  GemmSpec g;
  g.M = m.M, g.N = m.N, g.K = m.K;
  g.a = e.in(0), g.b = e.in(1), g.y = e.out(0);
  g.batch_shape = m.batch, g.a_bstride = m.a_st, g.b_bstride = m.b_st;
  bool b_shared = true, a_full = true;
  Shape cont = strides_of(m.batch);
  for (size_t d = 0; d < m.batch.size(); ++d) {
    b_shared = b_shared && (m.b_st[d] == 0 || m.batch[d] == 1);
    a_full = a_full && (m.batch[d] == 1 || m.a_st[d] == cont[d] * m.M * m.K);
  }
  if (b_shared && a_full) {  // [..., M, K] x [K, N]: one (batch * M) x K product
    g.M = numel(m.batch) * m.M;
    g.batch_shape.clear(), g.a_bstride.clear(), g.b_bstride.clear();
  }
  emit_gemm(e, g);
}

}  // namespace

void register_gemm(CKernelTable& t) {
  t["Gemm"] = {emit_gemm_node, nullptr, nullptr, nullptr, gemm_weight_layout};
  t["MatMul"] = {emit_matmul, nullptr, nullptr, nullptr, gemm_weight_layout};
}

}  // namespace onnxc
