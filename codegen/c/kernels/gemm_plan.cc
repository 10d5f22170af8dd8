// codegen/c/kernels/gemm_plan.cc — the plan of a Gemm or MatMul's loop nest (see
// gemm_plan.h; the forms themselves at the top of gemm.cc).
#include "codegen/c/kernels/gemm_plan.h"

#include <algorithm>

#include "ir/ops/gemm.h"

namespace onnxc {
namespace {

// Tile sizes of the blocked form: a KB x NB block of B is 32 KiB (L1); MB rows reuse it.
// GEMV-like products (M < 4) take kGemvNB-column chunks of whole rows of B instead.
constexpr int64_t kMB = 32, kNB = 64, kKB = 128, kGemvNB = 512;
// Register-tiled form: products with fewer rows keep the GEMV forms.
constexpr int64_t kPanelMinRows = 4;
// The largest panel a task packs on its stack (K x NR floats).
constexpr int64_t kStackPanelBytes = 64 << 10;
// Dot form: rows of B per task, each against the same row of A.
constexpr int64_t kDotRows = 4;

// The panel form: rows per task, 4 tiles (all rows when each task packs its panel), fewer
// when the tasks leave threads idle.
void plan_panel(const GemmShape& s, const Target& t, GemmPlan* p) {
  const int64_t MR = p->tile.MR;
  p->NP = ceil_div_pos(s.N, p->tile.NR);
  p->MB = p->prepacked ? 4 * MR : ceil_div_pos(s.M, MR) * MR;
  const int64_t want = 4 * std::max(1, t.threads);
  while (p->MB > MR && s.batch * p->NP * ceil_div_pos(s.M, p->MB) < want) p->MB -= MR;
  p->NRB = ceil_div_pos(s.M, p->MB);
  p->MF = s.M / MR * MR, p->MRr = s.M - p->MF;
  // Packed weights come from memory on every run (they outgrow the caches): while the tiles
  // of a task read their panel, each k step also asks for the same row of the next panel.
  p->prefetch = p->prepacked && p->NP > 1;
  if (s.batch > 1) p->tasks.push_back({"bt", s.batch, 1});
  p->tasks.push_back({"jp", p->NP, 1});
  if (p->NRB > 1) p->tasks.push_back({"rb", p->NRB, 1});
  p->parallel = t.parallel(static_cast<double>(s.batch) * s.M * s.N * s.K) && s.batch * p->NP * p->NRB > 1;
}

}  // namespace

PanelTile panel_tile(const Target& t) {
  PanelTile p;
  p.V = std::max<int64_t>(4, t.vector_floats());
  p.NV = p.V <= 16 ? 2 : 1;
  p.NR = p.NV * p.V;
  p.MR = std::max<int64_t>(1, std::min<int64_t>(12, t.tile_registers(p.V) * 3 / 4 / p.NV));
  return p;
}

const char* gemm_form_name(GemmForm f) {
  switch (f) {
    case GemmForm::Panel: return "register-tiled";
    case GemmForm::DotVector:
    case GemmForm::Dot: return "dot";
    case GemmForm::RowStream: return "row-stream";
    case GemmForm::Blocked: return "blocked";
  }
  return "?";
}

GemmPlan plan_gemm(const GemmShape& s, const Target& t) {
  GemmPlan p;
  p.tile = panel_tile(t);
  p.trans_b = s.trans_b;
  const int64_t M = s.M, N = s.N, K = s.K;
  // B packed at compile time; or an activation (attention's products), packed per task when
  // its panel fits the stack.
  if (s.b_panel || (M >= kPanelMinRows && K >= 1 && N >= 1 && K * p.tile.NR * 4 <= kStackPanelBytes && s.b_f32)) {
    p.form = GemmForm::Panel;
    p.prepacked = s.b_panel;
    plan_panel(s, t, &p);
    return p;
  }
  if (N == 1) p.trans_b = true;  // a K x 1 matrix is also a 1 x K one
  const bool dot = p.trans_b && (M < 4 || N == 1);
  const bool par = t.parallel(static_cast<double>(s.batch) * M * N * (K ? K : 1));
  auto task = [&](const char* var, int64_t end, int64_t step) {
    if (end > step) p.tasks.push_back({var, end, step});
  };
  p.DV = std::max<int64_t>(4, t.vector_floats());
  if (dot && N >= 2 && K >= 2 * p.DV && (!s.trans_a || M == 1) && s.a_f32 && s.b_f32) {
    p.form = GemmForm::DotVector;
    p.R = std::min(kDotRows, N), p.NG = ceil_div_pos(N, p.R), p.RL = N - (p.NG - 1) * p.R;
    p.KF = K / (2 * p.DV) * (2 * p.DV);
    task("bt", s.batch, 1), task("i", M, 1), task("jg", p.NG, 1);
  } else if (dot) {
    p.form = GemmForm::Dot;
    task("bt", s.batch, 1), task("i", M, 1), task("j", N, 1);
  } else {
    const bool gemv = M < 4;
    p.form = gemv ? GemmForm::RowStream : GemmForm::Blocked;
    p.TM = gemv ? M : kMB, p.TN = gemv ? kGemvNB : kNB, p.TK = gemv ? std::max<int64_t>(K, 1) : kKB;
    p.pack = K > 0 && (p.trans_b || (!gemv && N > p.TN));
    task("bt", s.batch, 1), task("i0", M, p.TM), task("j0", N, p.TN);
  }
  p.parallel = par && !p.tasks.empty();
  return p;
}

Layout gemm_weight_layout(const Node& n, size_t input, const Target& t) {
  const Value* b = input == 1 ? n.in(1) : nullptr;
  const Value* a = n.in(0);
  if (!b || !a || b->dtype != DType::F32 || a->dtype != DType::F32 || b->shape.size() != 2 || !n.out(0) ||
      n.out(0)->dtype != DType::F32)
    return Layout::plain();
  int64_t rows = 0, N = 0, K = 0;
  bool trans_b = false;
  if (n.op_type == "Gemm") {
    const GemmAttrs& g = gemm_attrs(n);
    rows = g.M, N = g.N, K = g.K, trans_b = g.trans_b != 0;
  } else {
    if (a->shape.size() < 2) return Layout::plain();
    const MatMulGeom& m = matmul_geom(n);
    rows = numel(m.batch) * m.M, N = m.N, K = m.K;
  }
  if (rows < kPanelMinRows || N < 1 || K < 1) return Layout::plain();
  return Layout::panel(panel_tile(t).NR, trans_b);
}

std::string describe(const GemmPlan& p) {
  std::string f;
  switch (p.form) {
    case GemmForm::Panel:
      f = fmt::format("register tile {} rows x {} columns, B in {} panel{} ({}), {} rows per task", p.tile.MR, p.tile.NR, p.NP, p.NP > 1 ? "s" : "",
                      p.prepacked ? "packed at compile time" : "packed by each task", p.MB);
      break;
    case GemmForm::DotVector: f = fmt::format("{} rows of B at once, {} groups", p.R, p.NG); break;
    case GemmForm::Dot: f = "one dot product at a time"; break;
    case GemmForm::RowStream:
    case GemmForm::Blocked: f = fmt::format("tiles of {} rows x {} columns, K in blocks of {}{}", p.TM, p.TN, p.TK, p.pack ? ", blocks of B packed" : ""); break;
  }
  return fmt::format("{}; {}", f, describe_tasks(p.tasks, p.parallel));  // the form is the kernel variant
}

}  // namespace onnxc
