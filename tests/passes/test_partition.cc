// tests/passes/test_partition.cc — the GPU/CPU split (passes/partition.h): which positions
// are cuts, which cut each spec picks on hand-built cost tables (the expected gains worked out
// by hand in the comments), and that the head and the tail computed one after the other give
// the whole graph's outputs.
#include <gtest/gtest.h>

#include <fstream>

#include "pass_test_util.h"
#include "passes/partition.h"

namespace onnxc::test {
namespace {

// x -> conv_a -> relu_a -> conv_b -> relu_b -> pool -> flat -> fc -> y
std::unique_ptr<Graph> chain() {
  GraphBuilder b;
  Value* x = b.input("x", {1, 8, 16, 16});
  Value* a = b.node("Conv", {x, b.random_constant("wa", {8, 8, 3, 3})}, {{"pads", attr_ints({1, 1, 1, 1})}}, "conv_a");
  a = b.node("Relu", {a}, {}, "relu_a");
  Value* c = b.node("Conv", {a, b.random_constant("wb", {8, 8, 3, 3})}, {{"pads", attr_ints({1, 1, 1, 1})}}, "conv_b");
  c = b.node("Relu", {c}, {}, "relu_b");
  Value* p = b.node("GlobalAveragePool", {c}, {}, "pool");
  Value* f = b.node("Flatten", {p}, {}, "flat");
  Value* y = b.node("Gemm", {f, b.random_constant("wf", {4, 8}), b.random_constant("bf", {4})}, {{"transB", attr_int(1)}}, "fc");
  b.output(y);
  return std::move(b.g);
}

// Costs in microseconds per node, GPU and one CPU worker; a free link.
SplitCosts table() {
  SplitCosts c;
  const std::map<std::string, std::pair<double, double>> us = {{"conv_a", {10, 1000}}, {"relu_a", {1, 50}}, {"conv_b", {10, 1000}},
                                                               {"relu_b", {1, 50}},   {"pool", {1, 20}},   {"flat", {1, 1}},
                                                               {"fc", {2, 100}}};
  for (auto& [name, t] : us) {
    c.gpu_measured.push_back({{name}, t.first * 1e-6});
    c.cpu_measured.push_back({{name}, t.second * 1e-6});
  }
  c.cpu_workers = 4;
  c.link_seconds = 0;
  c.link_bandwidth = 1e18;
  c.latency_budget = 0;
  return c;
}

const Target& target() {
  static const Target t = parse_target("generic-vector:16");
  return t;
}

TEST(Partition, CandidatesAreThePositionsFewTensorsCross) {
  auto g = chain();
  SplitPlan p = plan_split(*g, target(), table(), "auto");
  std::vector<std::string> after;
  for (auto& c : p.candidates) {
    after.push_back(c.after);
    ASSERT_EQ(c.tensors.size(), 1u) << c.after;
    EXPECT_EQ(c.tensors[0]->producer->name, c.after);
  }
  EXPECT_EQ(after, (std::vector<std::string>{"conv_a", "relu_a", "conv_b", "relu_b", "pool", "flat"}));
  EXPECT_NEAR(p.gpu_seconds, 26e-6, 1e-12);
  EXPECT_NEAR(p.cpu_seconds, 2221e-6, 1e-12);
}

TEST(Partition, AutoTakesTheBestGain) {
  // Whole model on the GPU: 26 us. Gain of a cut = min(26 / G, 1 + 4 Tg / C):
  //   conv_a 1.052, relu_a 1.051, conv_b min(1.238, 1.117), relu_b min(1.182, 1 + 16/121 = 1.132),
  //   pool min(1.130, 1.119), flat min(1.083, 1.080).
  auto g = chain();
  SplitPlan p = plan_split(*g, target(), table(), "auto");
  EXPECT_EQ(p.chosen.after, "relu_b");
  EXPECT_NEAR(p.chosen.G, 22e-6, 1e-12);
  EXPECT_NEAR(p.chosen.Tg, 4e-6, 1e-12);
  EXPECT_NEAR(p.chosen.C, 121e-6, 1e-12);
  EXPECT_NEAR(p.chosen.gain, 1 + 16.0 / 121, 1e-9);
}

TEST(Partition, TheLatencyBudgetMovesTheCutLater) {
  // G + C: relu_b 143 us, pool 124 us, flat 124 us; within 130 us, pool has the best gain.
  auto g = chain();
  SplitCosts c = table();
  c.latency_budget = 130e-6;
  SplitPlan p = plan_split(*g, target(), c, "auto");
  EXPECT_EQ(p.chosen.after, "pool");
  EXPECT_NEAR(p.chosen.gain, 1 + 12.0 / 101, 1e-9);
  c.latency_budget = 50e-6;  // no tail that short
  EXPECT_THROW(plan_split(*g, target(), c, "auto"), CompileError);
}

TEST(Partition, MoreCpuWorkersTakeMoreOffTheGpu) {
  // With 16 workers: conv_a min(2.6, 1 + 256/1221 = 1.210) and relu_a min(2.364, 1.205) are
  // bound by the CPU, conv_b min(1.238, 1 + 80/171 = 1.468) by the GPU's heads: the best.
  auto g = chain();
  SplitCosts c = table();
  c.cpu_workers = 16;
  SplitPlan p = plan_split(*g, target(), c, "auto");
  EXPECT_EQ(p.chosen.after, "conv_b");
  EXPECT_NEAR(p.chosen.gain, 26.0 / 21, 1e-9);
}

TEST(Partition, ForcedCuts) {
  auto g = chain();
  EXPECT_EQ(plan_split(*g, target(), table(), "after=pool").chosen.after, "pool");
  // Head shares of the GPU time: conv_a 10/26 = 0.385, relu_a 0.423, conv_b 0.808, ...
  EXPECT_EQ(plan_split(*g, target(), table(), "gpu-share=0.5").chosen.after, "relu_a");
  EXPECT_EQ(plan_split(*g, target(), table(), "gpu-share=0.8").chosen.after, "conv_b");
  EXPECT_THROW(plan_split(*g, target(), table(), "after=fc"), CompileError);  // nothing left for the tail
  EXPECT_THROW(plan_split(*g, target(), table(), "after=nope"), CompileError);
  EXPECT_THROW(plan_split(*g, target(), table(), "gpu-share=1.5"), CompileError);
  EXPECT_THROW(plan_split(*g, target(), table(), "gpu-share=x"), CompileError);
  EXPECT_THROW(plan_split(*g, target(), table(), "half"), CompileError);
}

TEST(Partition, NoCutCrossedByAGraphInputOrOutput) {
  // x is read again by the last node, so it crosses every position: there is no cut.
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* c = b.node("Conv", {x, b.random_constant("w", {4, 4, 1, 1})}, {}, "conv_c");
  Value* r = b.node("Relu", {c}, {}, "relu_c");
  Value* s = b.node("Add", {r, x}, {}, "add_x");
  b.output(s);
  EXPECT_THROW(plan_split(*b.g, target(), table(), "auto"), CompileError);
}

TEST(Partition, ResidualCutCrossedByTwoTensors) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* a = b.node("Relu", {b.node("Conv", {x, b.random_constant("w1", {4, 4, 1, 1})}, {}, "c1")}, {}, "r1");
  Value* c = b.node("Conv", {a, b.random_constant("w2", {4, 4, 3, 3})}, {{"pads", attr_ints({1, 1, 1, 1})}}, "c2");
  Value* s = b.node("Add", {c, a}, {}, "add");
  b.output(b.node("Relu", {s}, {}, "r2"));
  SplitPlan p = plan_split(*b.g, target(), SplitCosts{}, "after=c2");
  ASSERT_EQ(p.chosen.tensors.size(), 2u);
  EXPECT_EQ(p.chosen.tensors[0]->name, a->name);  // in the order they are computed
  EXPECT_EQ(p.chosen.tensors[1]->name, c->name);
  EXPECT_DOUBLE_EQ(p.chosen.bytes, 2.0 * 4 * 8 * 8 * 4);
}

// A measured function's time goes to its nodes in proportion to their predicted CPU times.
TEST(Partition, MeasuredTimesReplaceThePredictions) {
  auto g = chain();
  SplitCosts c;
  c.cpu_measured.push_back({{"conv_a", "relu_a", "not_in_graph"}, 1.0});
  SplitPlan predicted = plan_split(*g, target(), SplitCosts{}, "after=relu_a");
  SplitPlan p = plan_split(*g, target(), c, "after=relu_a");
  const SplitCut& at_relu = p.candidates[1];
  ASSERT_EQ(at_relu.after, "relu_a");
  EXPECT_NEAR(p.cpu_seconds - at_relu.C, 1.0, 1e-12);  // the head's CPU time is the measured second
  EXPECT_NEAR(at_relu.C, predicted.candidates[1].C, 1e-12);  // the tail's stays predicted
  const double conv_share = p.cpu_seconds - p.candidates[0].C;
  EXPECT_GT(conv_share, 0.5);  // the conv has far more work than the relu
  EXPECT_LT(conv_share, 1.0);
}

TEST(Partition, ReadsTheProfileTheBinaryWrites) {
  const std::string path = ::testing::TempDir() + "/partition_profile.tsv";
  {
    std::ofstream f(path);
    f << "# onnxc per-op profile of model m: 10 runs, 1 thread\n# seconds per run\tops\tkernel\tnodes\n"
      << "0.00125\tConv+Relu\tConv NCHW16c\tconv_a, relu_a\n2.5e-05\tGemm\tGemm\tfc\n";
  }
  auto ops = read_op_profile(path);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].nodes, (std::vector<std::string>{"conv_a", "relu_a"}));
  EXPECT_DOUBLE_EQ(ops[0].seconds, 0.00125);
  EXPECT_EQ(ops[1].nodes, std::vector<std::string>{"fc"});
  std::ofstream(path) << "0.1\tConv\tconv_a\n";  // a field missing
  EXPECT_THROW(read_op_profile(path), CompileError);
  std::ofstream(path) << "fast\tConv\tk\tconv_a\n";
  EXPECT_THROW(read_op_profile(path), CompileError);
  std::ofstream(path) << "# nothing\n";
  EXPECT_THROW(read_op_profile(path), CompileError);
  EXPECT_THROW(read_op_profile(path + ".missing"), CompileError);
}

// The head's outputs fed to the tail give the whole graph's outputs, at every cut, and both
// parts go through the rest of the pipeline.
TEST(Partition, HeadThenTailIsTheWholeGraph) {
  auto g = chain();
  auto in = random_inputs(*g);
  auto whole = reference_outputs(*g, in);
  SplitPlan p = plan_split(*g, target(), table(), "auto");
  for (const SplitCut& cut : p.candidates) {
    SCOPED_TRACE(cut.after);
    SplitGraphs s = split_graph(*g, cut);
    verify_graph(*s.head);
    verify_graph(*s.tail);
    EXPECT_EQ(s.head->name, "test_head");
    ASSERT_EQ(s.head->outputs.size(), cut.tensors.size());
    ASSERT_EQ(s.tail->inputs.size(), cut.tensors.size());
    std::map<const Value*, Tensor> hin;
    hin[s.head->inputs.at(0)] = in.begin()->second;
    auto cut_values = reference_outputs(*s.head, hin);
    std::map<const Value*, Tensor> tin;
    for (size_t k = 0; k < cut.tensors.size(); ++k) {
      EXPECT_EQ(s.head->outputs[k]->name, cut.tensors[k]->name);
      EXPECT_EQ(s.tail->inputs[k]->name, cut.tensors[k]->name);
      tin[s.tail->inputs[k]] = cut_values[k];
    }
    expect_close(reference_outputs(*s.tail, tin), whole, 1e-6);
    for (Graph* part : {s.head.get(), s.tail.get()}) {
      PassOptions o = test_pass_options();
      run_pipeline(*part, o);
      EXPECT_EQ(check_memory_plan(*part), "");
    }
  }
}

}  // namespace
}  // namespace onnxc::test
