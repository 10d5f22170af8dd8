// codegen/c/kernels/attention_plan.cc — the plan of the fused Attention kernel (see
// attention_plan.h; the kernel in attention.cc).
#include "codegen/c/kernels/attention_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace onnxc {
namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// The largest of 4, 2, 1 vectors that divides `vecs`.
int64_t chunk_vectors(int64_t vecs) { return vecs % 4 == 0 ? 4 : vecs % 2 == 0 ? 2 : 1; }

}  // namespace

AttentionPlan plan_attention(const AttentionGeom& g, bool has_qk, const Target& t) {
  AttentionPlan p;
  const int64_t V = p.V = std::max<int64_t>(4, t.vector_floats());
  p.DvP = round_up(g.Dv, V);
  p.pack_v = p.DvP != g.Dv;
  const int64_t budget = kAttentionStackBuffer;
  // The stack buffers hold at least a vector of queries by the head size: head sizes up to
  // 4096 (256 KiB at 16 floats a vector).
  if (g.D > 4096 || g.Dv > 4096)
    p.unsupported = fmt::format("head sizes {} and {}: the C kernel keeps the task's queries transposed on the stack, head-size rows of them, up to 4096", g.D, g.Dv);
  // Queries per task: up to 64, fewer when the buffers would outgrow the budget or the tasks
  // would leave threads idle.
  int64_t BQ = std::max<int64_t>(1, std::min<int64_t>(g.Tq, 64));
  while (BQ > 1 && (round_up(BQ, V) * g.D * 4 > budget || BQ * p.DvP * 4 > budget)) BQ = (BQ + 1) / 2;
  const int64_t want = 4 * std::max(1, t.threads);
  while (BQ > 8 && g.B * g.Hq * ((g.Tq + BQ - 1) / BQ) < want) BQ = (BQ + 1) / 2;
  p.BQ = BQ;
  p.BQP = round_up(BQ, V);
  p.NQ = (g.Tq + BQ - 1) / BQ;
  // Keys per tile: up to 256 within the budget of the scores (and of the packed values), then
  // tiles of equal width (197 keys: 2 x 99, not 128 + 69).
  const int64_t Tk = std::max<int64_t>(g.Tk, 1);
  int64_t BK = std::min<int64_t>(Tk, 256);
  while (BK > 1 && (BK * p.BQP * 4 > budget || (p.pack_v && BK * p.DvP * 4 > budget))) BK = (BK + 1) / 2;
  const int64_t tiles = (Tk + BK - 1) / BK;
  p.BK = (Tk + tiles - 1) / tiles;
  p.QV = chunk_vectors(p.BQP / V), p.CVo = chunk_vectors(p.DvP / V);
  const int64_t regs = std::max(8, t.vector_registers) * 3 / 4;
  p.RC = std::clamp<int64_t>(regs / p.QV - 1, 1, 8);
  p.R = std::clamp<int64_t>(regs / p.CVo - 1, 1, 8);
  if (const int64_t last = round_up(g.Tq - (p.NQ - 1) * BQ, V); p.NQ > 1 && last < p.BQP) {
    p.BQPL = last;
    p.QVL = chunk_vectors(last / V);
    p.RCL = std::clamp<int64_t>(regs / p.QVL - 1, 1, 8);
  }
  p.skip = !has_qk;
  p.causal = g.causal;
  const double work = static_cast<double>(g.B) * g.Hq * g.Tq * g.Tk * (g.D + g.Dv + 12);
  p.tasks = {{"b", g.B, 1}, {"h", g.Hq, 1}, {"qt", p.NQ, 1}};
  p.parallel = t.parallel(work) && g.B * g.Hq * p.NQ > 1;
  return p;
}

std::string describe(const AttentionPlan& p) {
  return fmt::format("{} queries (vector lanes) x {} keys per tile, register tiles of {} keys x {} query vectors and {} rows x {} value vectors{}{}{}{}; {}",
                     p.BQ, p.BK, p.RC, p.QV, p.R, p.CVo,
                     p.BQPL ? fmt::format(", the last tile in {} lanes ({} keys x {} query vectors)", p.BQPL, p.RCL, p.QVL) : "",
                     p.pack_v ? ", values packed" : "", p.causal ? ", causal" : "",
                     p.skip ? ", key tiles no query sees skipped" : "", describe_tasks(p.tasks, p.parallel));
}

}  // namespace onnxc
