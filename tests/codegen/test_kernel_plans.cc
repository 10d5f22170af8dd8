// tests/codegen/test_kernel_plans.cc — the plans of the C kernels that have one, on layers of
// the zoo's models, against the choices their design states. The NCHWc convs
// (codegen/c/kernels/conv_nchwc_plan.h): the register tile a 7-wide row and 8 output chunks get, a masked row's
// tiles, the reduction in steps where a tile's weights outgrow the caches, the task order of
// wide and narrow 1×1 reductions, the balance of a 1×1 line's segments over the threads and
// the Winograd parts and blocks of a 14×14 output. Gemm and MatMul
// (codegen/c/kernels/gemm_plan.h): the form each shape of product takes, the panel form's
// tile and tasks, and the layout of a constant B. Attention
// (codegen/c/kernels/attention_plan.h): key tiles of equal width within the stack budget,
// the register tiles and the tasks. The one-line descriptions compile-model --dump-ir prints.
// No C is written or compiled: a plan is numbers.
#include <gtest/gtest.h>

#include "codegen/c/kernels/attention_plan.h"
#include "codegen/c/kernels/conv_nchwc_plan.h"
#include "codegen/c/kernels/gemm_plan.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

// A 512-bit machine with 32 vector registers, 32 KiB L1 and 1 MiB L2 per core (a Zen 4).
Target machine(int threads) {
  Target t;
  t.arch = "x86-64";
  t.vector_bits = 512;
  t.vector_registers = 32;
  t.fma = true;
  t.l1d_bytes = 32 << 10;
  t.l2_bytes = 1 << 20;
  t.threads = threads;
  return t;
}

struct Layer {
  int64_t C, M, H, W, K = 3, pad = 1, stride = 1, group = 1;
};

// The Conv of layer l (batch 1) as the kernels see it at block 16.
NchwcConv conv_of(const Layer& l, const Target& t, GraphBuilder& b) {
  Value* x = b.input("x" + std::to_string(b.g->nodes.size()), {1, l.C, l.H, l.W});
  Value* w = b.random_constant("w" + std::to_string(b.g->nodes.size()), {l.M, l.C / l.group, l.K, l.K});
  std::map<std::string, Attr> at{{"pads", attr_ints({l.pad, l.pad, l.pad, l.pad})}, {"strides", attr_ints({l.stride, l.stride})}};
  if (l.group > 1) at["group"] = attr_int(l.group);
  Value* y = b.node("Conv", {x, w}, at);
  const bool dw = l.group > 1 && l.group == l.C && l.group == l.M;
  return nchwc_conv(*y->producer, 16, false, dw, t);
}

// The busiest thread's share of the work over the mean, tasks split as schedule(static) does:
// the broadcast plan's tasks in order, each worth (chunks of its group) × (pixels of its
// segment).
double busiest(const NchwcConv& c, const BroadcastPlan& p, int threads) {
  const int64_t tasks = p.NG * p.rows;
  std::vector<double> work;
  for (int64_t i = 0; i < tasks; ++i) {
    const int64_t grp = p.rows_outer ? i % p.NG : i / p.rows, seg = p.rows_outer ? i / p.NG : i % p.rows;
    const int64_t px = seg == p.rows - 1 ? c.OW - seg * p.row.SEG : p.row.SEG;
    work.push_back(static_cast<double>((grp == p.NG - 1 ? p.RCL : p.RC) * px));
  }
  double most = 0, total = 0;
  for (int t = 0, i = 0; t < threads; ++t) {
    double w = 0;
    for (int64_t end = i + tasks / threads + (t < tasks % threads ? 1 : 0); i < end; ++i) w += work[static_cast<size_t>(i)];
    most = std::max(most, w), total += w;
  }
  return most * threads / total;
}

TEST(ConvPlan, SevenWideRowInOneTileOfThreeChunks) {
  // resnet50's layer4 3×3 512→512 on 7×7: 3 chunks × 7 pixels, the whole row one masked tile.
  GraphBuilder b;
  const Target t = machine(1);
  const NchwcConv c = conv_of({512, 512, 7, 7}, t, b);
  const BroadcastPlan p = plan_broadcast(c, t);
  EXPECT_EQ(p.RC, 3);
  EXPECT_EQ(p.row.RW, 7);
  ASSERT_TRUE(p.row.masked);
  ASSERT_EQ(p.row.tiles.size(), 1u);
  EXPECT_EQ(p.row.tiles[0].start, 0);
  EXPECT_EQ(p.row.tiles[0].len, 7);
  EXPECT_TRUE(p.row.tiles[0].masked);
}

// --dump-ir's line for a plan (describe): the numbers the plan holds, in words.
TEST(ConvPlan, DescriptionSaysTheTileTheReductionAndTheTasks) {
  EXPECT_EQ(describe_tasks({{"n", 1}, {"grp", 4}, {"oh", 56}}, true), "224 tasks (4 grp x 56 oh), parallel");
  EXPECT_EQ(describe_tasks({{"n", 1}}, false), "one task");
  EXPECT_EQ(describe_tasks({{.var = "seg", .end = 90, .step = 3}}, false), "30 tasks (30 seg), serial");
  GraphBuilder b;
  const Target t = machine(1);
  const BroadcastPlan p = plan_broadcast(conv_of({512, 512, 7, 7}, t, b), t);
  EXPECT_EQ(describe(p).rfind("register tile 3 chunks x 7 pixels (masked row); reduction over 32 blocks of 16 lanes", 0), 0u) << describe(p);
  EXPECT_NE(describe(p).find(describe_tasks(p.tasks, p.parallel)), std::string::npos) << describe(p);
}

TEST(ConvPlan, EightChunksInTilesOfFour) {
  GraphBuilder b;
  const Target t = machine(1);
  const BroadcastPlan p = plan_broadcast(conv_of({64, 128, 56, 56}, t, b), t);
  EXPECT_EQ(p.RC, 4);
  EXPECT_EQ(p.NG, 2);
  EXPECT_EQ(p.RCL, 4);
  // A 56-wide row with pads 1: tiles of one width, only the first and last masked.
  ASSERT_TRUE(p.row.masked);
  const std::vector<RowTile>& row = p.row.tiles;
  ASSERT_GE(row.size(), 2u);
  int64_t covered = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    EXPECT_EQ(row[i].start, covered);
    EXPECT_EQ(row[i].masked, i == 0 || i + 1 == row.size()) << "tile " << i;
    covered += row[i].len;
  }
  EXPECT_EQ(covered, 56);
}

TEST(ConvPlan, ReductionInStepsWhereTheWeightsOutgrowTheCaches) {
  GraphBuilder b;
  const Target t = machine(2);
  // resnet50's layer4 3×3 512→512 on 7×7: a tile's weights over all 32 input blocks take
  // 27 KB per block, 864 KB in all: past half of L2, and past two L1s.
  const NchwcConv big = conv_of({512, 512, 7, 7}, t, b);
  const BroadcastPlan p = plan_broadcast(big, t);
  EXPECT_EQ(p.NB, 32);
  EXPECT_TRUE(p.steps);
  EXPECT_LT(p.NBB, p.NB);
  EXPECT_EQ(p.NB % p.NBB, 0) << "steps of equal size";
  EXPECT_STREQ(p.rowvar, "rb");
  EXPECT_EQ(p.NRB * p.RB >= big.OH && (p.NRB - 1) * p.RB < big.OH, true);
  // One input block: nothing to step over.
  const BroadcastPlan small = plan_broadcast(conv_of({16, 64, 56, 56}, t, b), t);
  EXPECT_EQ(small.NB, 1);
  EXPECT_FALSE(small.steps);
  EXPECT_STREQ(small.rowvar, "oh");
}

TEST(ConvPlan, TaskOrderOfOneByOneReductions) {
  GraphBuilder b;
  const Target t = machine(2);
  // layer2's 1×1 512→128 on 28×28 (X 1.6 MB, W 256 KB): rows (segments) outermost, each
  // thread reading its share of X.
  const NchwcConv wide = conv_of({512, 128, 28, 28, 1, 0}, t, b);
  ASSERT_TRUE(wide.line);
  const BroadcastPlan pw = plan_broadcast(wide, t);
  EXPECT_TRUE(pw.rows_outer);
  ASSERT_EQ(pw.tasks.size(), 3u);
  EXPECT_EQ(pw.tasks[1].var, "seg");
  EXPECT_EQ(pw.tasks[2].var, "grp");
  // layer3's 1×1 256→1024 on 14×14 (X 200 KB, W 1 MB): groups of chunks outermost, each
  // thread keeping its groups' weights.
  const BroadcastPlan pn = plan_broadcast(conv_of({256, 1024, 14, 14, 1, 0}, t, b), t);
  EXPECT_FALSE(pn.rows_outer);
  EXPECT_EQ(pn.tasks[1].var, "grp");
  EXPECT_TRUE(pw.parallel && pn.parallel);
}

TEST(ConvPlan, LineSegmentsBalanceTheThreads) {
  // 1×1 convs on 14×14 and 7×7 (a line of 196 and 49 pixels): the tasks' static split gives
  // no thread more than 10% over the mean, at 2 and 4 threads.
  for (int threads : {2, 4})
    for (const Layer& l : {Layer{1536, 768, 14, 14, 1, 0}, Layer{768, 1536, 14, 14, 1, 0}, Layer{2048, 512, 7, 7, 1, 0}}) {
      GraphBuilder b;
      const Target t = machine(threads);
      const NchwcConv c = conv_of(l, t, b);
      const BroadcastPlan p = plan_broadcast(c, t);
      ASSERT_TRUE(c.line);
      EXPECT_EQ(p.row.SEG % p.row.RW, 0) << "segments of whole tiles";
      EXPECT_EQ(p.row.NSEG, (c.OW + p.row.SEG - 1) / p.row.SEG);
      EXPECT_LE(busiest(c, p, threads), 1.10) << l.C << "->" << l.M << " on " << l.H << "x" << l.W << ", " << threads << " threads";
    }
}

TEST(ConvPlan, DepthwiseRowOfMaskedTiles) {
  // mobilenet's 3×3 depthwise on 112×112, pads 1: tiles of 16 pixels over the whole row (32
  // registers less the 3 weight vectors of a kernel row and 2 for loads), the edges inside the
  // first and last.
  GraphBuilder b;
  const Target t = machine(2);
  const NchwcConv c = conv_of({32, 32, 112, 112, 3, 1, 1, 32}, t, b);
  ASSERT_TRUE(c.dw);
  const DepthwisePlan p = plan_depthwise(c, t);
  EXPECT_EQ(p.row.RW, 16);
  ASSERT_TRUE(p.row.masked);
  ASSERT_EQ(p.row.tiles.size(), 7u);
  EXPECT_TRUE(p.row.tiles.front().masked && p.row.tiles.back().masked);
  for (size_t i = 1; i + 1 < p.row.tiles.size(); ++i) EXPECT_FALSE(p.row.tiles[i].masked);
  ASSERT_EQ(p.tasks.size(), 3u);
  EXPECT_TRUE(p.parallel);
}

TEST(ConvPlan, WinogradPartsBeforeShorterBlocks) {
  GraphBuilder b;
  const Target t = machine(2);
  // 256→256 on 14×14 at two threads: 49 tiles in 3 blocks of whole register tiles (18, 18
  // and 13); the 4 groups of chunks split into 2 parts, 6 tasks, 3 per thread.
  const NchwcConv wide = conv_of({256, 256, 14, 14}, t, b);
  const WinogradPlan pw = winograd_plan(t, wide.g, 16, 16);
  EXPECT_EQ(pw.RC, 4);
  EXPECT_EQ(pw.TB % pw.RT, 0);
  EXPECT_EQ(pw.NTB, 3);
  EXPECT_EQ(pw.NOG, 2);
  EXPECT_EQ(pw.GPO, 2);
  ASSERT_EQ(pw.tasks.size(), 3u);
  EXPECT_EQ(pw.tasks[1].var, "og");
  EXPECT_TRUE(pw.parallel);
  // 64→64 on 14×14: one group of chunks, no parts to split: shorter blocks, until every
  // thread has at least 2 tasks and the busiest thread's tiles are within 5% of the mean.
  const NchwcConv narrow = conv_of({64, 64, 14, 14}, t, b);
  const WinogradPlan pn = winograd_plan(t, narrow.g, 16, 16);
  EXPECT_EQ(pn.NOG, 1);
  ASSERT_EQ(pn.tasks.size(), 2u);
  EXPECT_EQ(pn.tasks[1].var, "tb");
  const int64_t TT = 49;
  EXPECT_EQ(pn.NTB, (TT + pn.TB - 1) / pn.TB);
  EXPECT_GE(pn.NTB, 2 * t.threads);
  int64_t first = 0, second = 0;  // tiles per thread: the first ceil(NTB / 2) blocks, the rest
  for (int64_t i = 0; i < pn.NTB; ++i) (i < (pn.NTB + 1) / 2 ? first : second) += std::min(pn.TB, TT - i * pn.TB);
  EXPECT_LE(std::max(first, second) * 2.0 / TT, 1.05) << pn.NTB << " blocks of " << pn.TB;
}

GemmShape product(int64_t M, int64_t N, int64_t K, bool trans_b = false) {
  GemmShape s;
  s.M = M, s.N = N, s.K = K, s.trans_b = trans_b;
  return s;
}

TEST(GemmPlan, FormsByShape) {
  const Target t = machine(2);
  // A transformer's projection with packed weights: register tiles of 12 rows x 2 vectors
  // (24 accumulators of 32 registers), tasks (panel, block of rows) in parallel.
  GemmShape proj = product(384, 768, 768);
  proj.b_panel = true;
  const GemmPlan pp = plan_gemm(proj, t);
  EXPECT_EQ(pp.form, GemmForm::Panel);
  EXPECT_TRUE(pp.prepacked);
  EXPECT_EQ(pp.tile.MR, 12);
  EXPECT_EQ(pp.tile.NR, 32);
  EXPECT_EQ(pp.NP, 24);
  EXPECT_EQ(pp.MB, 48) << "4 tiles of rows per task";
  EXPECT_EQ(pp.MF + pp.MRr, 384);
  EXPECT_TRUE(pp.prefetch);
  EXPECT_TRUE(pp.parallel);
  EXPECT_EQ(pp.tasks.front().var, "jp");
  // Attention's scores (an activation B, 64 deep): each task packs its panel, all rows in one
  // block unless the threads would lack tasks.
  GemmShape scores = product(128, 128, 64, true);
  scores.batch = 12;
  const GemmPlan ps = plan_gemm(scores, t);
  EXPECT_EQ(ps.form, GemmForm::Panel);
  EXPECT_FALSE(ps.prepacked || ps.prefetch);
  EXPECT_EQ(ps.tasks.front().var, "bt");
  EXPECT_GE(12 * ps.NP * ps.NRB, 4 * t.threads);
  // A batch-1 classifier (B stored N x K): 4 rows of B per task against the one row of A.
  const GemmPlan pc = plan_gemm(product(1, 1000, 2048, true), t);
  EXPECT_EQ(pc.form, GemmForm::DotVector);
  EXPECT_EQ(pc.R, 4);
  EXPECT_EQ(pc.NG, 250);
  EXPECT_EQ(pc.KF, 2048);
  ASSERT_EQ(pc.tasks.size(), 1u);
  EXPECT_EQ(pc.tasks[0].var, "jg");
  // Two rows against a K x N activation B too deep for a stack panel: columns in chunks,
  // rows of B streamed.
  const GemmPlan pr = plan_gemm(product(2, 4096, 2048), t);
  EXPECT_EQ(pr.form, GemmForm::RowStream);
  EXPECT_EQ(pr.TN, 512);
  // Int64 operands: no vector forms.
  GemmShape ints = product(64, 64, 600);
  ints.a_f32 = ints.b_f32 = false;
  const GemmPlan pi = plan_gemm(ints, t);
  EXPECT_EQ(pi.form, GemmForm::Blocked);
  EXPECT_TRUE(pi.pack == false) << "B rows of 64 are one block wide";
  // One thread: nothing in parallel.
  EXPECT_FALSE(plan_gemm(proj, machine(1)).parallel);
}

AttentionGeom heads(int64_t B, int64_t H, int64_t T, int64_t D) {
  AttentionGeom g;
  g.B = B, g.Hq = g.Hkv = H, g.Tq = g.Tk = g.Tnew = T, g.D = g.Dv = D;
  return g;
}

TEST(AttentionPlan, TilesWithinTheStackBudget) {
  const Target t = machine(2);
  // BERT-base (12 heads of 64, 128 tokens): tasks of 64 queries in 4 vectors of lanes (24 of
  // them), one key tile of 128 (scores 32 KiB), score tiles of 5 keys x 4 query vectors,
  // output tiles of 5 rows x 4 value vectors; values read in place.
  const AttentionPlan bert = plan_attention(heads(1, 12, 128, 64), false, t);
  EXPECT_EQ(bert.BK, 128);
  EXPECT_EQ(bert.BQ, 64);
  EXPECT_EQ(bert.BQP, 64);
  EXPECT_EQ(bert.NQ, 2);
  EXPECT_EQ(bert.QV, 4);
  EXPECT_EQ(bert.RC, 5);
  EXPECT_EQ(bert.CVo, 4);
  EXPECT_EQ(bert.R, 5);
  EXPECT_FALSE(bert.pack_v);
  EXPECT_TRUE(bert.parallel);
  EXPECT_TRUE(bert.unsupported.empty());
  EXPECT_EQ(bert.BQPL, 0) << "128 queries: two whole tiles";
  // ViT's 197 tokens: 2 key tiles of 99, not 128 + 69; 3 tiles of 64 queries, then 5 in one
  // vector of lanes (not four), with a score tile of 8 keys x 1 query vector.
  const AttentionPlan vit = plan_attention(heads(1, 12, 197, 64), false, t);
  EXPECT_EQ(vit.BK, 99);
  EXPECT_EQ(vit.NQ, 4);
  EXPECT_EQ(vit.BQPL, 16);
  EXPECT_EQ(vit.QVL, 1);
  EXPECT_EQ(vit.RCL, 8);
  EXPECT_LE(vit.RCL * vit.QVL + vit.QVL, 32);
  // Whisper's 1500 tokens: 12 key tiles of 125.
  EXPECT_EQ(plan_attention(heads(1, 6, 1500, 64), false, t).BK, 125);
  // A head size of 40 is not whole vectors: the values are packed per key tile.
  const AttentionPlan odd = plan_attention(heads(1, 8, 100, 40), false, t);
  EXPECT_TRUE(odd.pack_v);
  EXPECT_EQ(odd.DvP, 48);
  for (const AttentionPlan& p : {bert, vit, odd}) {
    EXPECT_LE(64 * p.BQP * 4, kAttentionStackBuffer);
    EXPECT_LE(p.BQP * p.BK * 4, kAttentionStackBuffer);
    EXPECT_LE(p.BQ * p.DvP * 4, kAttentionStackBuffer);
    EXPECT_LE(p.RC * p.QV + p.QV, 32) << "score accumulators and query vectors fit the registers";
    EXPECT_LE(p.R * p.CVo + p.CVo, 32);
  }
  // One head of one query (decoding): one task, not worth a thread team.
  EXPECT_FALSE(plan_attention(heads(1, 1, 1, 64), false, t).parallel);
  // Key tiles are skipped only when no score of every key is asked for.
  EXPECT_TRUE(bert.skip);
  EXPECT_FALSE(plan_attention(heads(1, 12, 128, 64), true, t).skip);
  // Head sizes past 4096 do not fit the kernel's stack tiles: said, not attempted.
  EXPECT_FALSE(plan_attention(heads(1, 1, 16, 8192), false, t).unsupported.empty());
}

}  // namespace
}  // namespace onnxc::test
