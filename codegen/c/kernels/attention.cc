// codegen/c/kernels/attention.cc — Attention in C (ir/ops/attention.cc), fused: the scores
// of a query never leave a stack tile (the FlashAttention formulation, as an online softmax).
//
// Tasks are (batch, query head, tile of up to BQ queries), in parallel. The task's queries are
// the vector lanes: it first copies them transposed, qtr[d][i] (zeros in the lanes past its
// queries; the last tile, where its queries fill fewer whole vectors, is a second copy of the
// body in that many lanes: ViT's 197 queries take 13 vectors, not 16), then walks the keys in
// tiles of BK:
//  1. when Dv is not whole vectors, copies the tile's value rows, zero-padded, into vp;
//  2. sᵀ = K · qtr in register tiles of RC keys x QV vectors of queries (vector-extension
//     accumulators, codegen/c/vector_types.h; the register-tiled GEMM's form in kernels/gemm.cc
//     with K's rows, read in place from K, past_key or present_key, as the broadcast operand);
//  3. per key, across the query lanes: scale, softcap, the bias (attn_mask, causal, window,
//     nonpad) and each query's running maximum; then per query at once, p = e^(s - max(m, m')),
//     the running sum l rescaled by e^(m - max) and the factor al that rescales its output
//     accumulators; no horizontal reductions;
//  4. o = o · al + p · V in register tiles of R query rows x CVo value vectors, V's rows read
//     in place (or from vp).
// At the end Y = o / l (0 for a row with every key masked). Causal and window masks skip the
// key tiles no query of the task can see (not when qk_matmul_output is asked for: it has
// every key's value). Neither K nor V is copied per task (the transposed key tiles an earlier
// form packed for every task cost a quarter of Whisper's attention at 1500 tokens). The working
// set per task is O(BQ · (BK + D + Dv)): stack buffers of at most 32 KiB each at the head sizes
// of common models (more for head sizes above 512), never the Tq x Tk scores.
// qk_matmul_output (when present) gets each score as the mode asks, written from step 3, and
// for mode 3 normalised at the end with the row's final maximum and sum. The tiles, tasks and
// their parallelism are decided in attention_plan.h; this file prints the plan.
// With a run-time size (compile-model --dynamic seq=MAX, Node::run_a) the function takes the
// run's n (onnxc_n) and the keys stop at run_a * n + run_b; in self-attention
// (Node::run_queries) a task computes only its queries within the run (the other lanes hold
// zeros) and writes zeros past it.
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

// Row `j` (a C expression) of the keys (values) of batch b, key/value head hk: from the
// present output when there is one, else from K/V or past_key/past_value.
std::string kv_row(CEmit& e, const AttentionGeom& g, bool key, const std::string& j) {
  const size_t out = key ? 1 : 2, in = key ? 1 : 2, past_in = key ? 4 : 5;
  const HeadStrides &s = key ? g.k : g.v, &ps = key ? g.pk : g.pv;
  const int64_t d = key ? g.D : g.Dv;
  const std::string jp = "(" + j + ")";
  if (e.node.out(out) != nullptr) return fmt::format("{} + ((b * {} + hk) * {} + {}) * {}", e.out(out), g.Hkv, g.Tk, jp, d);
  std::string cur = fmt::format("{} + {}", e.in(in), offset({{"b", s.sb}, {"hk", s.sh}, {g.past ? "(" + jp + " - " + std::to_string(g.past) + ")" : jp, s.st}}));
  if (g.past == 0) return cur;
  return fmt::format("({} < {} ? {} + {} : {})", jp, g.past, e.in(past_in), offset({{"b", ps.sb}, {"hk", ps.sh}, {jp, ps.st}}), cur);
}

// The task's start: its queries, the keys valid for its batch, its buffers with the queries
// transposed into qtr, and the range of keys its queries may see.
void task_prologue(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  const int64_t BQ = p.BQ, BQP = p.BQP, BK = p.BK, DvP = p.DvP;
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
  e("float qtr[{}] __attribute__((aligned(64)));", g.D * BQP);
  if (p.pack_v) e("float vp[{}] __attribute__((aligned(64)));", BK * DvP);
  e("float s[{}] __attribute__((aligned(64)));", BK * BQP);
  e("float o[{}] __attribute__((aligned(64)));", BQ * DvP);
  e("float m[{0}], l[{0}], al[{0}], mx[{0}], sm[{0}];", BQP);
  simd(e, BQP);
  e("for (int64_t i = 0; i < {}; ++i) {{", BQP);
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
  // The queries transposed, qtr[d][i], zeros in the lanes past the task's rows.
  e("for (int64_t i = 0; i < {}; ++i) {{", BQP);
  e("const float* restrict qr = qb + (i < nr ? i : 0) * {};", g.q.st);
  e("for (int64_t d = 0; d < {}; ++d) qtr[d * {} + i] = i < nr ? qr[d] : 0.0f;", g.D, BQP);
  e("}}");
}

// 1. The tile's value rows, copied with zeros up to whole vectors (when Dv is not whole
// vectors; otherwise the output tiles read them in place).
void pack_values(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  if (!p.pack_v) return;
  e("for (int64_t c = 0; c < nk; ++c) {{");
  e("const float* restrict vr = {};", kv_row(e, g, false, "k0 + c"));
  simd(e, g.Dv);
  e("for (int64_t d = 0; d < {}; ++d) vp[c * {} + d] = vr[d];", g.Dv, p.DvP);
  e("for (int64_t d = {}; d < {}; ++d) vp[c * {} + d] = 0.0f;", g.Dv, p.DvP, p.DvP);
  e("}}");
}

// 2. Scores of `keys` keys from key c against every query lane: s[c][i] = K[k0 + c] · qtr[.][i],
// chunks of QV vectors of queries. K's rows are read in place, one broadcast per element.
void score_tile(CEmit& e, const AttentionGeom& g, const AttentionPlan& p, int64_t keys) {
  const int64_t V = p.V, BQP = p.BQP, QV = p.QV;
  const std::string vt = vector_type(V), vtu = vt + "u";
  e("{{");
  for (int64_t r = 0; r < keys; ++r) e("const float* restrict kr{} = {};", r, kv_row(e, g, true, fmt::format("k0 + c + {}", r)));
  e("for (int64_t c0 = 0; c0 < {}; c0 += {}) {{", BQP, QV * V);
  std::string decl;
  for (int64_t r = 0; r < keys; ++r)
    for (int64_t v = 0; v < QV; ++v) decl += fmt::format("{}a{}_{} = ({}){{0}}", decl.empty() ? "" : ", ", r, v, vt);
  e("{} {};", vt, decl);
  e("const float* restrict qq = qtr + c0;");
  e("for (int64_t d = 0; d < {}; ++d, qq += {}) {{", g.D, BQP);
  std::string ql;
  for (int64_t v = 0; v < QV; ++v) ql += fmt::format("{}w{} = *(const {}*)(qq{})", v ? ", " : "", v, vtu, v ? fmt::format(" + {}", v * V) : "");
  e("const {} {};", vt, ql);
  for (int64_t r = 0; r < keys; ++r) {
    std::string l = fmt::format("const float k{0} = kr{0}[d];", r);
    for (int64_t v = 0; v < QV; ++v) l += fmt::format(" a{}_{} += k{} * w{};", r, v, r, v);
    e("{}", l);
  }
  e("}}");
  for (int64_t r = 0; r < keys; ++r)
    for (int64_t v = 0; v < QV; ++v) e("*({}*)(s + (c + {}) * {} + c0 + {}) = a{}_{};", vtu, r, BQP, v * V, r, v);
  e("}}");
  e("}}");
}

// The bias of key j for query qi (attn_mask, causal, window, nonpad) added to x. The mask is
// read at the query's row, at the task's first row in the lanes past its queries.
void key_bias(CEmit& e, const AttentionGeom& g) {
  e("float bj = 0.0f;");
  if (g.has_mask) {
    std::string idx = fmt::format("(j < {} ? j : 0)", g.mask_len);
    std::string at = g.mj == 1 ? idx : g.mj == 0 ? "" : fmt::format("{} * {}", idx, g.mj);
    if (g.mi != 0) at = (at.empty() ? "" : at + " + ") + fmt::format("(i < nq ? qi : q0) * {}", g.mi);
    std::string mv = fmt::format("mk[{}]", at.empty() ? "0" : at);
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

// 3. Per key, across the query lanes: scale, softcap, bias (qk_matmul_output written as its
// mode asks), each query's maximum; then the online softmax step of every query at once.
void softmax_lanes(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  const int64_t BQP = p.BQP;
  const bool has_qk = e.node.out(3) != nullptr;
  simd(e, BQP);
  e("for (int64_t i = 0; i < {}; ++i) mx[i] = -INFINITY;", BQP);
  if (g.has_mask) e("const {}* restrict mk = {} + {};", g.mask_bool ? "uint8_t" : "float", e.in(3), offset({{"b", g.mb}, {"h", g.mh}}));
  e("for (int64_t c = 0; c < nk; ++c) {{");
  e("float* restrict sc = s + c * {};", BQP);
  e("const int64_t j = k0 + c;");
  e("(void)j;");
  if (has_qk) e("float* restrict qo = {} + ((b * {} + h) * {} + q0) * {} + j;", e.out(3), g.Hq, g.Tq, g.Tk);
  simd(e, BQP);
  e("for (int64_t i = 0; i < {}; ++i) {{", BQP);
  e("const int64_t qi = q0 + i;");
  e("(void)qi;");
  e("float x = sc[i] * {};", c_float(g.scale));
  const std::string qk_store = fmt::format("if (i < nr) qo[i * {}] = x;", g.Tk);
  if (has_qk && g.qk_mode == 0) e("{}", qk_store);
  if (g.softcap > 0) e("x = {} * onnxc_tanhf(x * {});", c_float(g.softcap), c_float(1.0 / g.softcap));
  if (has_qk && g.qk_mode == 1) e("{}", qk_store);
  key_bias(e, g);
  if (has_qk && g.qk_mode >= 2) e("{}", qk_store);
  e("sc[i] = x;");
  e("mx[i] = x > mx[i] ? x : mx[i];");
  e("}}");
  e("}}");
  // The new maximum; a query that has seen only masked keys so far (maximum -inf) takes 0
  // in its place, so that its p = e^(-inf) = 0 and its al = 0 leaves o and l at 0.
  simd(e, BQP);
  e("for (int64_t i = 0; i < {}; ++i) {{", BQP);
  e("const float mn = mx[i] > m[i] ? mx[i] : m[i];");
  e("al[i] = m[i];");
  e("m[i] = mn;");
  e("mx[i] = mn == -INFINITY ? 0.0f : mn;");
  e("sm[i] = 0.0f;");
  e("}}");
  e("for (int64_t c = 0; c < nk; ++c) {{");
  e("float* restrict sc = s + c * {};", BQP);
  simd(e, BQP);
  e("for (int64_t i = 0; i < {}; ++i) {{", BQP);
  e("const float pr = onnxc_expf(sc[i] - mx[i]);");
  e("sc[i] = pr;");
  e("sm[i] += pr;");
  e("}}");
  e("}}");
  simd(e, BQP);
  e("for (int64_t i = 0; i < {}; ++i) {{", BQP);
  e("al[i] = onnxc_expf(al[i] - mx[i]);");
  e("l[i] = l[i] * al[i] + sm[i];");
  e("}}");
}

// 4. o = o * al + p · V for `rows` rows from row i, CVo vectors at a time; V's rows read in
// place (or from vp).
void output_tile(CEmit& e, const AttentionGeom& g, const AttentionPlan& p, int64_t rows) {
  const int64_t V = p.V, BQP = p.BQP, DvP = p.DvP, CVo = p.CVo;
  const std::string vt = vector_type(V), vtu = vt + "u";
  e("{{");
  e("for (int64_t c0 = 0; c0 < {}; c0 += {}) {{", DvP, CVo * V);
  std::string decl;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < CVo; ++v)
      decl += fmt::format("{}a{}_{} = al[i + {}] * *(const {}*)(o + (i + {}) * {} + c0 + {})", decl.empty() ? "" : ", ", r, v, r, vtu, r, DvP, v * V);
  e("{} {};", vt, decl);
  e("const float* restrict pr = s + i;");
  e("for (int64_t c = 0; c < nk; ++c, pr += {}) {{", BQP);
  if (p.pack_v) e("const float* restrict vv = vp + c * {} + c0;", DvP);
  else e("const float* restrict vv = {} + c0;", kv_row(e, g, false, "k0 + c"));
  std::string vl;
  for (int64_t v = 0; v < CVo; ++v) vl += fmt::format("{}w{} = *(const {}*)(vv{})", v ? ", " : "", v, vtu, v ? fmt::format(" + {}", v * V) : "");
  e("const {} {};", vt, vl);
  for (int64_t r = 0; r < rows; ++r) {
    std::string l = fmt::format("const float p{} = pr[{}];", r, r);
    for (int64_t v = 0; v < CVo; ++v) l += fmt::format(" a{}_{} += p{} * w{};", r, v, r, v);
    e("{}", l);
  }
  e("}}");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < CVo; ++v) e("*({}*)(o + (i + {}) * {} + c0 + {}) = a{}_{};", vtu, r, DvP, v * V, r, v);
  e("}}");
  e("}}");
}

// Tiles of R items (rows, keys) up to `end`, then one at a time: tile(items) from `var`.
template <class F>
void by_tiles(CEmit& e, const char* var, const char* end, int64_t R, F&& tile) {
  if (R > 1) {
    e("for (; {0} + {1} <= {2}; {0} += {1}) {{", var, R, end);
    tile(R);
    e("}}");
  }
  e("for (; {0} < {1}; ++{0}) {{", var, end);
  tile(1);
  e("}}");
}

// Y = o / l; qk_matmul_output's mode 3 normalised with the final maximum and sum.
void normalise_rows(CEmit& e, const AttentionGeom& g, const AttentionPlan& p) {
  e("for (int64_t i = 0; i < nq; ++i) {{");
  e("const float r = i < nr && l[i] > 0.0f ? 1.0f / l[i] : 0.0f;");
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
  e(" * tasks of {} queries in vector lanes, key tiles of {}, register tiles of {} keys and {} rows. */", p.BQ, p.BK, p.RC, p.R);
  if (e.node.out(1) != nullptr) copy_present(e, g, 1, 1, 4, g.k, g.pk, g.D);
  if (e.node.out(2) != nullptr) copy_present(e, g, 2, 2, 5, g.v, g.pv, g.Dv);
  open_tasks(e, p.tasks, p.parallel);
  // A task's body for plan q (the last tile's lanes differ where it fills fewer vectors).
  auto task = [&](const AttentionPlan& q) {
    task_prologue(e, g, q);
    e("for (int64_t k0 = kbeg; k0 < kend; k0 += {}) {{", q.BK);
    e("const int64_t nk = kend - k0 < {0} ? kend - k0 : {0};", q.BK);
    pack_values(e, g, q);
    e("int64_t c = 0;");
    by_tiles(e, "c", "nk", q.RC, [&](int64_t keys) { score_tile(e, g, q, keys); });
    softmax_lanes(e, g, q);
    e("int64_t i = 0;");
    by_tiles(e, "i", "nr", q.R, [&](int64_t rows) { output_tile(e, g, q, rows); });
    e("}}");
    normalise_rows(e, g, q);
  };
  if (p.BQPL > 0) {
    AttentionPlan last = p;
    last.BQP = p.BQPL, last.QV = p.QVL, last.RC = p.RCL;
    e("if (qt == {}) {{", p.NQ - 1);
    task(last);
    e("}} else {{");
    task(p);
    e("}}");
  } else {
    task(p);
  }
  for (int k = 0; k < 3; ++k) e("}}");
}

}  // namespace

void register_attention(CKernelTable& t) { t["Attention"] = {emit_attention, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
