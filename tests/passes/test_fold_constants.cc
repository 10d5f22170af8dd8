// tests/passes/test_fold_constants.cc — constant folding, identity removal, constant
// deduplication and dead-code elimination (passes/fold_constants.cc).
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

PassOptions opts() { return test_pass_options(); }

TEST(FoldConstants, FoldsShapeSubgraphAndRemovesIt) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4});
  Value* shape = b.node("Shape", {x});
  Value* idx = b.constant("idx", Tensor::from_i64({0}));
  Value* d0 = b.node("Gather", {shape, idx}, {{"axis", attr_int(0)}});
  Value* rest = b.constant("rest", Tensor::from_i64({-1}));
  Value* target = b.node("Concat", {d0, rest}, {{"axis", attr_int(0)}});
  Value* y = b.node("Reshape", {x, target});
  b.output(y);
  Graph& g = *b.g;
  EXPECT_TRUE(run_pass_checked(g, [](Graph& gr) { return fold_constants(gr, opts()); }));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0]->op_type, "Reshape");
  ASSERT_TRUE(g.nodes[0]->in(1)->constant);
  EXPECT_EQ(g.nodes[0]->in(1)->constant->to_i64(), (std::vector<int64_t>{2, -1}));
}

TEST(FoldConstants, FoldsArithmeticOnConstants) {
  GraphBuilder b;
  Value* x = b.input("x", {4});
  Value* c1 = b.random_constant("c1", {4});
  Value* c2 = b.random_constant("c2", {4});
  Value* s = b.node("Add", {c1, c2});
  Value* e = b.node("Exp", {s});
  b.output(b.node("Mul", {x, e}));
  Graph& g = *b.g;
  run_pass_checked(g, [](Graph& gr) { return fold_constants(gr, opts()); });
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(count_ops(g, "Mul"), 1u);
}

TEST(FoldConstants, RemovesIdentityAndDropout) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 8});
  Value* i1 = b.node("Identity", {x});
  Value* r = b.node("Relu", {i1});
  Value* d = b.node("Dropout", {r});
  b.output(b.node("Sigmoid", {d}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_pass_checked(g, [](Graph& gr) { return fold_constants(gr, opts()); }));
  EXPECT_EQ(count_ops(g, "Identity"), 0u);
  EXPECT_EQ(count_ops(g, "Dropout"), 0u);
  EXPECT_EQ(g.nodes.size(), 2u);
}

TEST(FoldConstants, GraphOutputKeepsItsNameWhenIdentityGoes) {
  GraphBuilder b;
  Value* x = b.input("x", {3});
  Value* r = b.node("Relu", {x}, {}, "relu");
  Value* y = b.node("Identity", {r}, {}, "final");
  b.output(y);
  Graph& g = *b.g;
  run_pass_checked(g, [](Graph& gr) { return fold_constants(gr, opts()); });
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.outputs[0]->name, "final");
  EXPECT_EQ(g.outputs[0]->producer, g.nodes[0].get());
}

TEST(FoldConstants, KeepsIdentityFromInputToOutput) {
  GraphBuilder b;
  Value* x = b.input("x", {3});
  b.output(b.node("Identity", {x}, {}, "copy"));
  Graph& g = *b.g;
  run_pass_checked(g, [](Graph& gr) { return fold_constants(gr, opts()); });
  EXPECT_EQ(count_ops(g, "Identity"), 1u);  // an input cannot be renamed into an output
}

TEST(FoldConstants, DeduplicatesEqualConstants) {
  GraphBuilder b;
  Value* x = b.input("x", {4});
  Tensor t = Tensor::from_f32({1, 2, 3, 4}, {4});
  Value* c1 = b.constant("c1", t);
  Value* c2 = b.constant("c2", t);
  Value* a = b.node("Add", {x, c1});
  b.output(b.node("Mul", {a, c2}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_pass_checked(g, [](Graph& gr) { return fold_constants(gr, opts()); }));
  EXPECT_EQ(g.nodes[0]->in(1), g.nodes[1]->in(1));
}

TEST(FoldConstants, RemovesDeadNodes) {
  GraphBuilder b;
  Value* x = b.input("x", {4});
  b.node("Exp", {x});  // unused
  b.output(b.node("Relu", {x}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_pass_checked(g, [](Graph& gr) { return fold_constants(gr, opts()); }));
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(count_ops(g, "Exp"), 0u);
}

TEST(FoldConstants, NoChangeReportsFalse) {
  GraphBuilder b;
  Value* x = b.input("x", {4});
  b.output(b.node("Relu", {x}));
  EXPECT_FALSE(run_pass_checked(*b.g, [](Graph& gr) { return fold_constants(gr, opts()); }));
}

}  // namespace
}  // namespace onnxc::test
