// codegen/c/kernels/attention.cc — Attention in C (ir/ops/attention.cc), fused: the scores
// of a query never leave a stack tile (the FlashAttention formulation, as an online softmax).
//
// Tasks are (batch, query head, tile of up to BQ queries), in parallel. A task walks the keys
// in tiles of BK (a multiple of the vector width):
//  1. packs the tile's key rows transposed, kt[d][c], and its value rows, vp[c][d] (zeros past
//     the last key and past Dv up to a whole vector), from K/V, past_key/past_value or the
//     present outputs, whichever holds row j (3-D and 4-D inputs differ only in strides);
//  2. s = Q · ktᵀ in register tiles of R query rows x CW keys (vector-extension accumulators,
//     codegen/c/vector_types.h; the broadcast-Q-times-key-vector form of the register-tiled
//     GEMM in kernels/gemm.cc);
//  3. per query row: scale, softcap, the bias (attn_mask, causal, window, nonpad and the
//     tile's end as -inf), the tile's maximum m', p = e^(s - max(m, m')), the row's running
//     sum l rescaled by e^(m - max) and the factor that rescales its output accumulators;
//  4. o = o · rescale + p · vp in register tiles of R rows x CWo value columns.
// At the end Y = o / l (0 for a row with every key masked). Causal and window masks skip the
// key tiles no query of the task can see (not when qk_matmul_output is asked for: it has
// every key's value). The working set per task is O(BQ · BK + BK · (D + Dv)): four stack
// buffers of at most 32 KiB each at the head sizes of common models (more for head sizes
// above 256), never the Tq x Tk scores.
// qk_matmul_output (when present) gets each score as the mode asks, written from step 3, and
// for mode 3 normalised at the end with the row's final maximum and sum. The tiles, tasks and
// their parallelism are decided in attention_plan.h; this file prints the plan.
// With a run-time size (compile-model --dynamic seq=MAX, Node::run_a) the function takes the
// run's n (onnxc_n) and the keys stop at run_a * n + run_b, the last key tile at its last
// score chunk with keys; in self-attention (Node::run_queries) a task computes only its queries
// within the run and writes zeros past it.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/c/kernels/attention_plan.h"
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "codegen/c/vector_types.h"
#include "ir/ops/attention.h"

namespace onnxc {
namespace {

// "b * 12 + h * 3 + j * 7" without the zero terms ("0" when all are).
std::string offset(std::initializer_list<std::pair<std::string, int64_t>> terms) {
  std::string s;
  for (auto& [v, st] : terms) {
    if (st == 0) continue;
    if (!s.empty()) s += " + ";
    s += st == 1 ? v : fmt::format("{} * {}", v, st);
  }
  return s.empty() ? "0" : s;
}

// A present output (out): the past rows (input past_in), then the new ones (input in), [B,
// Hkv, Tk, d]. A statement at the top of the function.
void copy_present(CEmit& e, const AttentionGeom& g, size_t out, size_t in, size_t past_in, const HeadStrides& s, const HeadStrides& ps, int64_t d) {
  e.serial();  // before the heads' tasks, which read it: one thread copies, the others wait at its end
  e("for (int64_t b = 0; b < {}; ++b) {{", g.B);
  e("for (int64_t hk = 0; hk < {}; ++hk) {{", g.Hkv);
  e("for (int64_t j = 0; j < {}; ++j) {{", g.Tk);
  e("float* restrict dst = {} + ((b * {} + hk) * {} + j) * {};", e.out(out), g.Hkv, g.Tk, d);
  if (g.past > 0) {
    e("const float* restrict src = j < {} ? {} + {} : {} + {};", g.past, e.in(past_in), offset({{"b", ps.sb}, {"hk", ps.sh}, {"j", ps.st}}),
      e.in(in), offset({{"b", s.sb}, {"hk", s.sh}, {"(j - " + std::to_string(g.past) + ")", s.st}}));
  } else {
    e("const float* restrict src = {} + {};", e.in(in), offset({{"b", s.sb}, {"hk", s.sh}, {"j", s.st}}));
  }
  e("for (int64_t d = 0; d < {}; ++d) dst[d] = src[d];", d);
  e("}}");
  e("}}");
  e("}}");
}

// Row j of the keys (values) of batch b, key/value head hk: from the present output when
// there is one, else from K/V or past_key/past_value.
std::string kv_row(CEmit& e, const AttentionGeom& g, bool key) {
  const size_t out = key ? 1 : 2, in = key ? 1 : 2, past_in = key ? 4 : 5;
  const HeadStrides &s = key ? g.k : g.v, &ps = key ? g.pk : g.pv;
  const int64_t d = key ? g.D : g.Dv;
  if (e.node.out(out) != nullptr) return fmt::format("{} + ((b * {} + hk) * {} + j) * {}", e.out(out), g.Hkv, g.Tk, d);
  std::string cur = fmt::format("{} + {}", e.in(in), offset({{"b", s.sb}, {"hk", s.sh}, {g.past ? "(j - " + std::to_string(g.past) + ")" : "j", s.st}}));
  if (g.past == 0) return cur;
  return fmt::format("(j < {} ? {} + {} : {})", g.past, e.in(past_in), offset({{"b", ps.sb}, {"hk", ps.sh}, {"j", ps.st}}), cur);
}

// The task's start: its queries, the keys valid for its batch, its buffers, and the range of
// keys its queries may see.
void task_prologue(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  const int64_t BQ = p.BQ, BK = p.BK, DvP = p.DvP;
  e("const int64_t hk = h / {};", g.Hq / g.Hkv);
  e("const int64_t q0 = qt * {};", BQ);
  if (g.Tq % BQ == 0) e("const int64_t nq = {};", BQ);
  else e("const int64_t nq = q0 + {0} <= {1} ? {0} : {1} - q0;", BQ, g.Tq);
  e("(void)hk;");
  if (g.has_nonpad) {
    e("const int64_t np = {0}[b] < -{1} ? -{1} : {0}[b] > {1} ? {1} : {0}[b];", e.in(6), c_int(kAttentionMaxOffset));
    e("const int64_t valid = np < 0 ? 0 : np > {0} ? {0} : np;", g.Tk);
    e("const int64_t off = np - {};", g.Tq);
  } else if (e.node.run_a != 0) {
    // A run-time size (compile-model --dynamic seq=MAX): the run's keys are the first
    // run_a * n + run_b of the Tk rows.
    e("const int64_t valid = {} * onnxc_n + {};", e.node.run_a, e.node.run_b);
    e("const int64_t off = {};", g.past);
  } else {
    e("const int64_t valid = {};", g.Tk);
    e("const int64_t off = {};", g.past);
  }
  e("(void)off;");
  e("const float* restrict qb = {} + {};", e.in(0), offset({{"b", g.q.sb}, {"h", g.q.sh}, {"q0", g.q.st}}));
  e("float kt[{}] __attribute__((aligned(64)));", g.D * BK);
  e("float vp[{}] __attribute__((aligned(64)));", BK * DvP);
  e("float s[{}] __attribute__((aligned(64)));", BQ * BK);
  e("float o[{}] __attribute__((aligned(64)));", BQ * DvP);
  e("float m[{0}], l[{0}], al[{0}];", BQ);
  e("for (int64_t i = 0; i < {}; ++i) {{", BQ);
  e("m[i] = -INFINITY;");
  e("l[i] = 0.0f;");
  e("}}");
  simd(e, BQ * DvP);
  e("for (int64_t i = 0; i < {}; ++i) o[i] = 0.0f;", BQ * DvP);
  // The keys the task's queries may see.
  e("int64_t kbeg = 0, kend = valid;");
  if (p.skip) {
    if (g.causal) e("if (q0 + nq + off < kend) kend = q0 + nq + off;");
    if (g.right >= 0) e("if (q0 + nq + off + {} < kend) kend = q0 + nq + off + {};", g.right, g.right);
    if (g.left >= 0) e("if (q0 + off - {} > kbeg) kbeg = q0 + off - {};", g.left, g.left);
  } else if (e.node.run_a == 0) {
    e("kend = {};", g.Tk);
  }
  // Self-attention with a run-time size: the task computes only its queries within the run,
  // nr of them (none: it visits no key); its rows past the run are padding and get zeros at
  // the end. Without one, nr is nq.
  if (e.node.run_a != 0 && e.node.run_queries) {
    e("const int64_t nr = valid - q0 < 0 ? 0 : valid - q0 < nq ? valid - q0 : nq;");
    e("if (nr == 0) kend = kbeg;");
  } else {
    e("const int64_t nr = nq;");
  }
  // With a run-time size the last key tile computes only the score chunks that hold keys; the
  // columns it skips hold zeros or an earlier tile's probabilities, finite, so that the tile's
  // bias (-inf past its last key) makes them -inf.
  if (e.node.run_a != 0) {
    simd(e, BQ * BK);
    e("for (int64_t i = 0; i < {}; ++i) s[i] = 0.0f;", BQ * BK);
  }
}

// 1. Pack the tile's keys (transposed) and values.
void pack_tile(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  const int64_t BK = p.BK, DvP = p.DvP;
  e("for (int64_t c = 0; c < {}; ++c) {{", BK);
  e("if (c < nk) {{");
  e("const int64_t j = k0 + c;");
  e("const float* restrict kr = {};", kv_row(e, g, true));
  e("const float* restrict vr = {};", kv_row(e, g, false));
  e("for (int64_t d = 0; d < {}; ++d) kt[d * {} + c] = kr[d];", g.D, BK);
  simd(e, g.Dv);
  e("for (int64_t d = 0; d < {}; ++d) vp[c * {} + d] = vr[d];", g.Dv, DvP);
  if (DvP > g.Dv) e("for (int64_t d = {}; d < {}; ++d) vp[c * {} + d] = 0.0f;", g.Dv, DvP, DvP);
  e("}} else {{");
  e("for (int64_t d = 0; d < {}; ++d) kt[d * {} + c] = 0.0f;", g.D, BK);
  simd(e, DvP);
  e("for (int64_t d = 0; d < {}; ++d) vp[c * {} + d] = 0.0f;", DvP, DvP);
  e("}}");
  e("}}");
}

// 2. Scores of `rows` query rows from row i: s[i][c] = Q[q0 + i] · kt[.][c], chunks of CV
// vectors of keys, then one of the remaining BK / V % CV vectors.
void score_tile(CEmit& e, const AttentionGeom& g, const AttentionPlan& p, int64_t rows) {
  const int64_t V = p.V, BK = p.BK, CV = p.CV;
  const std::string vt = vector_type(V), vtu = vt + "u";
  e("{{");
  e("const float* restrict qr = qb + i * {};", g.q.st);
  auto chunk = [&](int64_t nv) {
    std::string decl;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < nv; ++v) decl += fmt::format("{}a{}_{} = ({}){{0}}", decl.empty() ? "" : ", ", r, v, vt);
    e("{} {};", vt, decl);
    e("const float* restrict kk = kt + c0;");
    e("for (int64_t d = 0; d < {}; ++d, kk += {}) {{", g.D, BK);
    std::string kl;
    for (int64_t v = 0; v < nv; ++v) kl += fmt::format("{}k{} = *(const {}*)(kk{})", v ? ", " : "", v, vtu, v ? fmt::format(" + {}", v * V) : "");
    e("const {} {};", vt, kl);
    for (int64_t r = 0; r < rows; ++r) {
      std::string l = fmt::format("const float q{} = qr[{}d];", r, r ? fmt::format("{} + ", r * g.q.st) : "");
      for (int64_t v = 0; v < nv; ++v) l += fmt::format(" a{}_{} += q{} * k{};", r, v, r, v);
      e("{}", l);
    }
    e("}}");
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < nv; ++v) e("*({}*)(s + (i + {}) * {} + c0 + {}) = a{}_{};", vtu, r, BK, v * V, r, v);
  };
  const int64_t main = BK / V / CV * CV * V, tail = BK / V % CV;
  const bool run = e.node.run_a != 0;  // a run-time size: the chunks with keys only
  if (main > 0) {
    e("for (int64_t c0 = 0; c0 < {}{}; c0 += {}) {{", main, run ? " && c0 < nk" : "", CV * V);
    chunk(CV);
    e("}}");
  }
  if (tail > 0) {
    if (run) e("if (nk > {}) {{", main);
    else e("{{");
    e("const int64_t c0 = {};", main);
    chunk(tail);
    e("}}");
  }
  e("}}");
}

// The bias of key j for query qi (attn_mask, causal, window, nonpad) added to x, with the
// tile's columns past the last key at -inf.
void key_bias(CEmit& e, const AttentionGeom& g) {
  e("float bj = c < nk ? 0.0f : -INFINITY;");
  if (g.has_mask) {
    // Clamped, so that the tile's columns past the last key (and past a short mask) read in bounds.
    std::string idx = fmt::format("(j < {} ? j : 0)", g.mask_len);
    std::string mv = fmt::format("mk[{}]", g.mj == 1 ? idx : g.mj == 0 ? "0" : fmt::format("{} * {}", idx, g.mj));
    std::string bias = g.mask_bool ? fmt::format("({} ? 0.0f : -INFINITY)", mv) : mv;
    if (g.mask_len < g.Tk) bias = fmt::format("(j < {} ? {} : -INFINITY)", g.mask_len, bias);
    e("bj += {};", bias);
  }
  if (g.causal || g.left >= 0 || g.right >= 0) e("const int64_t diff = qi + off - j;");
  if (g.causal) e("bj = diff < 0 ? -INFINITY : bj;");
  if (g.left >= 0) e("bj = diff > {} ? -INFINITY : bj;", g.left);
  if (g.right >= 0) e("bj = -diff > {} ? -INFINITY : bj;", g.right);
  if (g.has_nonpad) e("bj = j >= valid ? -INFINITY : bj;");
  e("x += bj;");
}

// 3. Per row: scale, softcap, bias (qk_matmul_output written as its mode asks); the online
// softmax step.
void softmax_rows(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  const int64_t BK = p.BK;
  const bool has_qk = e.node.out(3) != nullptr;
  e("for (int64_t i = 0; i < nr; ++i) {{");
  e("float* restrict si = s + i * {};", BK);
  e("const int64_t qi = q0 + i;");
  e("(void)qi;");
  if (has_qk) e("float* restrict qo = {} + ((b * {} + h) * {} + qi) * {} + k0;", e.out(3), g.Hq, g.Tq, g.Tk);
  if (g.has_mask) e("const {}* restrict mk = {} + {};", g.mask_bool ? "uint8_t" : "float", e.in(3), offset({{"b", g.mb}, {"h", g.mh}, {"qi", g.mi}}));
  simd(e, BK);
  e("for (int64_t c = 0; c < {}; ++c) {{", BK);
  e("const int64_t j = k0 + c;");
  e("(void)j;");
  e("float x = si[c] * {};", c_float(g.scale));
  if (has_qk && g.qk_mode == 0) e("if (c < nk) qo[c] = x;");
  if (g.softcap > 0) e("x = {} * onnxc_tanhf(x * {});", c_float(g.softcap), c_float(1.0 / g.softcap));
  if (has_qk && g.qk_mode == 1) e("if (c < nk) qo[c] = x;");
  key_bias(e, g);
  if (has_qk && g.qk_mode >= 2) e("if (c < nk) qo[c] = x;");
  e("si[c] = x;");
  e("}}");
  emit_max_reduce(e, "mx", "(-INFINITY)", "si", BK, DType::F32);
  e("const float mn = mx > m[i] ? mx : m[i];");
  e("if (mn == -INFINITY) {{");
  // Every key so far masked: p = 0, nothing to rescale.
  simd(e, BK);
  e("for (int64_t c = 0; c < {}; ++c) si[c] = 0.0f;", BK);
  e("al[i] = 1.0f;");
  e("continue;");
  e("}}");
  // The probabilities of the tile's keys (with a run-time size only up to its last key: the
  // output reads no further).
  e("float sum = 0.0f;");
  simd(e, BK, "reduction(+:sum)");
  e("for (int64_t c = 0; c < {}; ++c) {{", e.node.run_a != 0 ? std::string("nk") : std::to_string(BK));
  e("const float p = onnxc_expf(si[c] - mn);");
  e("si[c] = p;");
  e("sum += p;");
  e("}}");
  e("al[i] = onnxc_expf(m[i] - mn);");
  e("l[i] = l[i] * al[i] + sum;");
  e("m[i] = mn;");
  e("}}");
}

// 4. o = o * al + p · vp for `rows` rows from row i, CVo vectors at a time.
void output_tile(CEmit& e, const AttentionPlan& p, int64_t rows) {
  const int64_t V = p.V, BK = p.BK, DvP = p.DvP, CVo = p.CVo;
  const std::string vt = vector_type(V), vtu = vt + "u";
  e("{{");
  e("for (int64_t c0 = 0; c0 < {}; c0 += {}) {{", DvP, CVo * V);
  std::string decl;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < CVo; ++v)
      decl += fmt::format("{}a{}_{} = al[i + {}] * *(const {}*)(o + (i + {}) * {} + c0 + {})", decl.empty() ? "" : ", ", r, v, r, vtu, r, DvP, v * V);
  e("{} {};", vt, decl);
  e("const float* restrict vv = vp + c0;");
  e("const float* restrict pr = s + i * {};", BK);
  e("for (int64_t c = 0; c < nk; ++c, vv += {}) {{", DvP);
  std::string vl;
  for (int64_t v = 0; v < CVo; ++v) vl += fmt::format("{}w{} = *(const {}*)(vv{})", v ? ", " : "", v, vtu, v ? fmt::format(" + {}", v * V) : "");
  e("const {} {};", vt, vl);
  for (int64_t r = 0; r < rows; ++r) {
    std::string l = fmt::format("const float p{} = pr[{}c];", r, r ? fmt::format("{} + ", r * BK) : "");
    for (int64_t v = 0; v < CVo; ++v) l += fmt::format(" a{}_{} += p{} * w{};", r, v, r, v);
    e("{}", l);
  }
  e("}}");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < CVo; ++v) e("*({}*)(o + (i + {}) * {} + c0 + {}) = a{}_{};", vtu, r, DvP, v * V, r, v);
  e("}}");
  e("}}");
}

// The task's rows in register tiles of R rows, then one at a time: tile(rows) from row i.
template <class F>
void by_row_tiles(CEmit& e, int64_t R, F&& tile) {
  if (R > 1) {
    e("for (; i + {} <= nr; i += {}) {{", R, R);
    tile(R);
    e("}}");
  }
  e("for (; i < nr; ++i) {{");
  tile(1);
  e("}}");
}

// Y = o / l; qk_matmul_output's mode 3 normalised with the final maximum and sum.
void normalise_rows(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  e("for (int64_t i = 0; i < nq; ++i) {{");
  e("const float r = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;");
  e("float* restrict yr = {} + {};", e.out(0), offset({{"b", g.y.sb}, {"h", g.y.sh}, {"(q0 + i)", g.y.st}}));
  simd(e, g.Dv);
  e("for (int64_t d = 0; d < {}; ++d) yr[d] = o[i * {} + d] * r;", g.Dv, p.DvP);
  if (e.node.out(3) != nullptr && g.qk_mode == 3) {
    e("float* restrict qo = {} + ((b * {} + h) * {} + q0 + i) * {};", e.out(3), g.Hq, g.Tq, g.Tk);
    e("const float mi = m[i];");
    simd(e, g.Tk);
    e("for (int64_t j = 0; j < {}; ++j) qo[j] = mi == -INFINITY ? 0.0f : onnxc_expf(qo[j] - mi) * r;", g.Tk);
  }
  e("}}");
}

void emit_attention(CEmit& e) {
  const AttentionGeom& g = attention_geom(e.node);
  const AttentionPlan p = plan_attention(g, e.node.out(3) != nullptr, e.target);
  e.plan = describe(p);
  if (!p.unsupported.empty()) e.node.unsupported(p.unsupported);
  e.variant = "fused online softmax";
  e("/* Attention: {} batch{} x {} heads ({} key/value heads), {} queries x {} keys ({} past), head sizes {} and {};", g.B,
    g.B > 1 ? "es" : "", g.Hq, g.Hkv, g.Tq, g.Tk, g.past, g.D, g.Dv);
  e(" * tasks of {} queries, key tiles of {}, register tiles of {} rows. */", p.BQ, p.BK, p.R);
  if (e.node.out(1) != nullptr) copy_present(e, g, 1, 1, 4, g.k, g.pk, g.D);
  if (e.node.out(2) != nullptr) copy_present(e, g, 2, 2, 5, g.v, g.pv, g.Dv);
  open_tasks(e, p.tasks, p.parallel);
  task_prologue(e, g, p);
  e("for (int64_t k0 = kbeg; k0 < kend; k0 += {}) {{", p.BK);
  e("const int64_t nk = kend - k0 < {0} ? kend - k0 : {0};", p.BK);
  pack_tile(e, g, p);
  e("int64_t i = 0;");
  by_row_tiles(e, p.R, [&](int64_t rows) { score_tile(e, g, p, rows); });
  softmax_rows(e, g, p);
  e("i = 0;");
  by_row_tiles(e, p.R, [&](int64_t rows) { output_tile(e, p, rows); });
  e("}}");
  normalise_rows(e, g, p);
  for (int k = 0; k < 3; ++k) e("}}");
}

}  // namespace

void register_attention(CKernelTable& t) { t["Attention"] = {emit_attention, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
