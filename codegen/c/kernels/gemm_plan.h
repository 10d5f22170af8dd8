// codegen/c/kernels/gemm_plan.h — the plan of a Gemm or MatMul's loop nest: which of
// gemm.cc's forms it takes (see the top of gemm.cc), its register tile or blocks, its tasks
// and whether they run in parallel, decided from the product's shape, its operands' dtypes
// and B's layout, and the target. No C is written here; gemm.cc prints the plan and decides
// nothing itself. Also the layout the pack-weights pass gives a constant B
// (gemm_weight_layout).
#pragma once
#include <cstdint>
#include <vector>

#include "codegen/c/nest.h"
#include "codegen/target.h"
#include "ir/graph.h"

namespace onnxc {

// One product Y[bt] (M x N) = op(A[bt]) (M x K) · op(B[bt]) (K x N), `batch` of them.
struct GemmShape {
  int64_t M = 0, N = 0, K = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  bool a_f32 = true, b_f32 = true;  // the operands' dtypes are float32
  bool b_panel = false;             // B is stored in Layout::panel (a constant, packed at compile time)
};

// The register tile of the panel form: V floats per vector, NV vectors per panel row
// (NR = NV * V columns), MR rows; MR * NV accumulators within 3/4 of the vector registers
// (the rest holds the panel row and the broadcasts). A generic-vector target's long vectors
// take several registers of the machine that builds them (Target::tile_registers).
struct PanelTile {
  int64_t V = 0, NV = 0, NR = 0, MR = 0;
};
PanelTile panel_tile(const Target& t);

enum class GemmForm {
  Panel,      // register tiles over panels of B (packed at compile time, or by each task)
  DotVector,  // B stored N x K, few rows: kDotRows rows of B at once, vector accumulators
  Dot,        // B stored N x K, few rows: one dot product at a time
  RowStream,  // few rows, B stored K x N: chunks of columns, rows of B streamed
  Blocked,    // tiles of rows x columns, K in blocks, blocks of B packed
};
const char* gemm_form_name(GemmForm f);  // the kernel variant: "register-tiled", "dot"...

struct GemmPlan {
  GemmForm form = GemmForm::Blocked;
  bool trans_b = false;  // B read as N x K (a K x 1 B is also a 1 x K one)
  // Panel: the tile; B packed at compile time (prepacked) or by each task; NP panels; MB rows
  // per task, NRB blocks of them; MF rows in full tiles, MRr in the last short one; each k
  // step prefetches the next panel's row (prefetch).
  PanelTile tile;
  bool prepacked = false, prefetch = false;
  int64_t NP = 0, MB = 0, NRB = 0, MF = 0, MRr = 0;
  // DotVector: DV floats per vector, R rows of B per group, NG groups, the last of RL; KF
  // elements of K in whole steps of 2 vectors.
  int64_t DV = 0, R = 0, NG = 0, RL = 0, KF = 0;
  // RowStream and Blocked: tiles of TM rows x TN columns, K in blocks of TK; blocks of B
  // packed into a stack buffer (pack).
  int64_t TM = 0, TN = 0, TK = 0;
  bool pack = false;
  // The task loops, outermost first (Dot, DotVector, RowStream and Blocked: only loops of
  // more than one trip), and whether they run in parallel.
  std::vector<NestLoop> tasks;
  bool parallel = false;
};
GemmPlan plan_gemm(const GemmShape& s, const Target& t);
std::string describe(const GemmPlan& p);  // one line, as --dump-ir prints it

// The layout of a Gemm's or MatMul's input `input` that the pack-weights pass stores a
// constant in: B (input 1) in panels when it is a float32 matrix and the product has enough
// rows for the register tile; plain otherwise.
Layout gemm_weight_layout(const Node& n, size_t input, const Target& t);

}  // namespace onnxc
