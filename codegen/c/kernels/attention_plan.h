// codegen/c/kernels/attention_plan.h — the plan of the fused Attention kernel
// (attention.cc): the query and key tiles, the register tiles of its two products, the tasks
// and their parallelism, decided from the op's geometry (ir/ops/attention.h) and the target.
// No C is written here; attention.cc prints the plan and decides nothing itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/c/nest.h"
#include "codegen/target.h"
#include "ir/ops/attention.h"

namespace onnxc {

struct AttentionPlan {
  int64_t V = 0;    // floats per vector
  int64_t DvP = 0;  // Dv rounded up to whole vectors (a row of the output accumulators)
  // Each task BQ queries, NQ tiles of them per head, held in BQP = BQ rounded up to whole
  // vectors of lanes (the queries are the vector lanes of the scores); key tiles of BK keys
  // (equal widths over the keys). Stack buffers (qtr: D x BQP, s: BK x BQP, o: BQ x DvP, vp:
  // BK x DvP when the values are packed) within kAttentionStackBuffer bytes each where the
  // head sizes allow.
  int64_t BK = 0, BQ = 0, BQP = 0, NQ = 0;
  // Register tiles: RC keys x QV vectors of queries (scores), R query rows x CVo value
  // vectors (the output's update).
  int64_t RC = 0, QV = 0, R = 0, CVo = 0;
  // The last tile of queries when it fills fewer whole vectors than BQP (ViT's 197 queries: 3
  // tiles of 64, then 5 queries in one vector of lanes, not four): its lanes and its score
  // register tile (0: the same as the others).
  int64_t BQPL = 0, QVL = 0, RCL = 0;
  bool pack_v = false;  // Dv is not whole vectors: value rows copied (zero-padded) per key tile
  bool skip = false;  // skip the key tiles no query of the task can see (causal, window)
  bool causal = false;  // is_causal (--dump-ir says so)
  std::vector<NestLoop> tasks;  // (batch, query head, tile of queries)
  bool parallel = false;
  std::string unsupported;  // why the kernel cannot run this geometry ("" when it can)
};

// The largest stack buffer a task keeps, in bytes.
constexpr int64_t kAttentionStackBuffer = 32 << 10;

// The plan for geometry g; has_qk: qk_matmul_output is asked for (every key's score).
AttentionPlan plan_attention(const AttentionGeom& g, bool has_qk, const Target& t);
std::string describe(const AttentionPlan& p);  // one line, as --dump-ir prints it

}  // namespace onnxc
