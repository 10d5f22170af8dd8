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
  const int64_t budget = kAttentionStackBuffer;
  int64_t BK = std::min<int64_t>(round_up(std::max<int64_t>(g.Tk, 1), V), 256);
  while (BK > V && (g.D * BK * 4 > budget || BK * p.DvP * 4 > budget)) BK -= V;
  // Tiles of equal width over the keys (197 keys: 2 x 112, not 128 + 128 with 59 columns idle).
  const int64_t tiles = (std::max<int64_t>(g.Tk, 1) + BK - 1) / BK;
  p.BK = round_up((std::max<int64_t>(g.Tk, 1) + tiles - 1) / tiles, V);
  // The stack buffers hold at least a vector's width of keys by the head size: head sizes up
  // to 4096 (256 KiB at 16 floats a vector).
  if (g.D > 4096 || g.Dv > 4096)
    p.unsupported = fmt::format("head sizes {} and {}: the C kernel keeps a key tile of head-size rows on the stack, up to 4096", g.D, g.Dv);
  int64_t BQ = std::max<int64_t>(1, std::min<int64_t>(g.Tq, 64));
  while (BQ > 1 && (BQ * p.BK * 4 > budget || BQ * p.DvP * 4 > budget)) BQ = (BQ + 1) / 2;
  const int64_t want = 4 * std::max(1, t.threads);
  while (BQ > 8 && g.B * g.Hq * ((g.Tq + BQ - 1) / BQ) < want) BQ = (BQ + 1) / 2;
  p.BQ = BQ;
  p.NQ = (g.Tq + BQ - 1) / BQ;
  p.CV = std::min<int64_t>(4, p.BK / V), p.CVo = chunk_vectors(p.DvP / V);
  const int64_t regs = std::max(8, t.vector_registers) * 3 / 4;
  p.R = std::clamp<int64_t>(regs / std::max(p.CV, p.CVo) - 1, 1, 8);
  p.skip = !has_qk;
  p.causal = g.causal;
  const double work = static_cast<double>(g.B) * g.Hq * g.Tq * g.Tk * (g.D + g.Dv + 12);
  p.tasks = {{"b", g.B, 1}, {"h", g.Hq, 1}, {"qt", p.NQ, 1}};
  p.parallel = t.parallel(work) && g.B * g.Hq * p.NQ > 1;
  return p;
}

std::string describe(const AttentionPlan& p) {
  return fmt::format("{} queries x {} keys per tile, register tiles of {} rows{}{}; {}", p.BQ, p.BK, p.R, p.causal ? ", causal" : "",
                     p.skip ? ", key tiles no query sees skipped" : "", describe_tasks(p.tasks, p.parallel));
}

}  // namespace onnxc
