// tests/passes/test_simplify.cc — algebraic simplification (passes/simplify.cc): BN and
// per-channel Mul/Add folded into Conv/Gemm weights, standalone BN as Mul + Add, transpose
// pairs, reshape chains and no-op reshapes, spatial ReduceMean as GlobalAveragePool, conv taps
// that read only padding dropped, 1-D convs as 2-D ones. Every case also checks the outputs before and after the pass
// agree on random inputs.
#include <algorithm>

#include "ir/ops/conv.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

bool run_simplify(Graph& g) {
  return run_pass_checked(g, [](Graph& gr) { return simplify(gr, test_pass_options()); });
}

// BatchNormalization over C channels with random statistics (var in [0.5, 2)).
Value* add_bn(GraphBuilder& b, Value* x, int64_t C, const std::string& name) {
  Value* s = b.random_constant(name + "_scale", {C}, 0.5f, 1.5f);
  Value* bias = b.random_constant(name + "_B", {C});
  Value* mean = b.random_constant(name + "_mean", {C});
  Value* var = b.random_constant(name + "_var", {C}, 0.5f, 2.0f);
  return b.node("BatchNormalization", {x, s, bias, mean, var}, {{"epsilon", attr_float(1e-3)}}, name);
}

const Node* only_node(const Graph& g, const std::string& op) {
  for (auto& n : g.nodes)
    if (n->op_type == op) return n.get();
  return nullptr;
}

bool has_origin(const Node& n, const std::string& name) {
  return std::find(n.origin.begin(), n.origin.end(), name) != n.origin.end();
}

TEST(Simplify, FoldsBatchNormIntoConvWithoutBias) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 8, 8});
  Value* w = b.random_constant("w", {4, 3, 3, 3});
  Value* y = b.node("Conv", {x, w}, {{"pads", attr_ints({1, 1, 1, 1})}}, "conv");
  b.output(add_bn(b, y, 4, "bn"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& conv = *g.nodes[0];
  EXPECT_EQ(conv.op_type, "Conv");
  ASSERT_EQ(conv.inputs.size(), 3u);
  ASSERT_TRUE(conv.in(2) && conv.in(2)->constant);  // a bias was added
  EXPECT_EQ(conv.in(2)->shape, (Shape{4}));
  EXPECT_EQ(g.outputs[0]->name, "bn");  // the graph output keeps its name
  EXPECT_EQ(g.outputs[0]->producer, &conv);
  EXPECT_TRUE(has_origin(conv, "conv") && has_origin(conv, "bn"));
}

TEST(Simplify, FoldsBatchNormIntoGroupedConvWithBias) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 4, 6, 6});
  Value* w = b.random_constant("w", {8, 2, 3, 3});
  Value* bias = b.random_constant("b", {8});
  Value* y = b.node("Conv", {x, w, bias}, {{"group", attr_int(2)}, {"strides", attr_ints({2, 1})}});
  b.output(b.node("Relu", {add_bn(b, y, 8, "bn")}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "BatchNormalization"), 0u);
  EXPECT_EQ(g.nodes.size(), 2u);
  const Node* conv = only_node(g, "Conv");
  ASSERT_TRUE(conv);
  EXPECT_NE(conv->in(1), w);
  EXPECT_NE(conv->in(2), bias);
}

TEST(Simplify, FoldsBatchNormIntoDepthwiseAnd1dConv) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 6, 7, 7});
  Value* w = b.random_constant("w", {6, 1, 3, 3});
  Value* y = b.node("Conv", {x, w}, {{"group", attr_int(6)}, {"pads", attr_ints({1, 1, 1, 1})}});
  b.output(add_bn(b, y, 6, "bn2d"));
  Value* x1 = b.input("x1", {2, 3, 10});
  Value* w1 = b.random_constant("w1", {5, 3, 4});
  Value* y1 = b.node("Conv", {x1, w1}, {{"dilations", attr_ints({2})}});
  b.output(add_bn(b, y1, 5, "bn1d"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "BatchNormalization"), 0u);
  EXPECT_EQ(count_ops(g, "Conv"), 2u);
  EXPECT_EQ(count_ops(g, "Reshape"), 2u);  // the 1-D conv runs as a 2-D one (rewrite 8), after the fold
  EXPECT_EQ(g.nodes.size(), 4u);
}

TEST(Simplify, FoldsBatchNormIntoGemm) {
  for (int trans_b : {0, 1}) {
    SCOPED_TRACE("transB=" + std::to_string(trans_b));
    GraphBuilder b;
    Value* a = b.input("a", {3, 5});
    Value* w = b.random_constant("w", trans_b ? Shape{4, 5} : Shape{5, 4});
    // transB=0: C [4] broadcast over rows; transB=1: C [3, 4] (a full matrix).
    Value* c = b.random_constant("c", trans_b ? Shape{3, 4} : Shape{4});
    Value* y = b.node("Gemm", {a, w, c},
                      {{"transB", attr_int(trans_b)}, {"alpha", attr_float(0.7)}, {"beta", attr_float(trans_b ? 0.5 : 1.3)}});
    b.output(add_bn(b, y, 4, "bn"));
    Graph& g = *b.g;
    EXPECT_TRUE(run_simplify(g));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0]->op_type, "Gemm");
    EXPECT_EQ(g.nodes[0]->in(2)->shape, trans_b ? (Shape{3, 4}) : (Shape{4}));
    EXPECT_EQ(g.outputs[0]->name, "bn");
  }
}

TEST(Simplify, FoldsBatchNormIntoGemmWithoutC) {
  GraphBuilder b;
  Value* a = b.input("a", {2, 6});
  Value* w = b.random_constant("w", {3, 6});
  Value* y = b.node("Gemm", {a, w}, {{"transB", attr_int(1)}});
  b.output(add_bn(b, y, 3, "bn"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_TRUE(g.nodes[0]->in(2));
  EXPECT_EQ(g.nodes[0]->in(2)->shape, (Shape{3}));
}

TEST(Simplify, StandaloneBatchNormRank4BecomesMulAdd) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 5, 3, 4});
  b.output(add_bn(b, b.node("Relu", {x}), 5, "bn"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "BatchNormalization"), 0u);
  const Node* mul = only_node(g, "Mul");
  const Node* add = only_node(g, "Add");
  ASSERT_TRUE(mul && add);
  EXPECT_EQ(mul->in(1)->shape, (Shape{5, 1, 1}));
  EXPECT_EQ(add->in(1)->shape, (Shape{5, 1, 1}));
  EXPECT_EQ(add->in(0), mul->out(0));
  EXPECT_EQ(g.outputs[0]->name, "bn");
  EXPECT_EQ(g.outputs[0]->producer, add);
}

TEST(Simplify, StandaloneBatchNormRank2BecomesMulAdd) {
  GraphBuilder b;
  Value* x = b.input("x", {3, 7});
  b.output(add_bn(b, x, 7, "bn"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "BatchNormalization"), 0u);
  const Node* mul = only_node(g, "Mul");
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->in(0), g.inputs[0]);
  EXPECT_EQ(mul->in(1)->shape, (Shape{7}));
  EXPECT_EQ(count_ops(g, "Add"), 1u);
}

TEST(Simplify, FoldsPerChannelMulAddIntoConv) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 6, 6});
  Value* w = b.random_constant("w", {4, 3, 1, 1});
  Value* y = b.node("Conv", {x, w});
  Value* m = b.node("Mul", {b.random_constant("m", {4, 1, 1}), y});  // constant first
  Value* a = b.node("Add", {m, b.random_constant("a", {1, 4, 1, 1})});
  Value* s = b.node("Sub", {b.random_constant("s", {1}), a});  // v - y
  Value* d = b.node("Div", {s, b.random_constant("d", {}, 0.5f, 2.0f)});  // scalar
  b.output(b.node("Relu", {d}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(count_ops(g, "Conv"), 1u);
  EXPECT_EQ(count_ops(g, "Relu"), 1u);
  const Node* conv = only_node(g, "Conv");
  EXPECT_EQ(conv->origin.size(), 5u);
}

TEST(Simplify, KeepsMulThatIsNotPerChannel) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 4, 4});
  Value* y = b.node("Conv", {x, b.random_constant("w", {2, 3, 1, 1})});
  Value* m = b.node("Mul", {y, b.random_constant("m", {2, 1, 4})});  // varies along W
  Value* d = b.node("Div", {b.random_constant("d", {2, 1, 1}), m});  // v / y is not affine
  b.output(d);
  Graph& g = *b.g;
  EXPECT_FALSE(run_simplify(g));
  EXPECT_EQ(g.nodes.size(), 3u);
}

TEST(Simplify, DoesNotFoldIntoConvWithTwoUses) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* w = b.random_constant("w", {4, 3, 3, 3});
  Value* y = b.node("Conv", {x, w});
  b.output(add_bn(b, y, 4, "bn"));
  b.output(b.node("Relu", {y}));
  b.output(b.node("Mul", {y, b.random_constant("m", {4, 1, 1})}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));  // the BN still becomes Mul + Add
  const Node* conv = only_node(g, "Conv");
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->in(1), w);
  EXPECT_EQ(conv->inputs.size(), 2u);
  EXPECT_EQ(count_ops(g, "BatchNormalization"), 0u);
  EXPECT_EQ(count_ops(g, "Mul"), 2u);
  EXPECT_EQ(count_ops(g, "Add"), 1u);
}

TEST(Simplify, DoesNotFoldIntoConvWhoseOutputIsAGraphOutput) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 2, 4, 4});
  Value* w = b.random_constant("w", {2, 2, 1, 1});
  Value* y = b.node("Conv", {x, w});
  b.output(y);
  b.output(b.node("Add", {y, b.random_constant("a", {2, 1, 1})}));
  Graph& g = *b.g;
  EXPECT_FALSE(run_simplify(g));
  EXPECT_EQ(g.nodes.size(), 2u);
}

TEST(Simplify, CancelsTransposePair) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4});
  Value* t1 = b.node("Transpose", {x}, {{"perm", attr_ints({1, 2, 0})}});
  Value* t2 = b.node("Transpose", {t1}, {{"perm", attr_ints({2, 0, 1})}});
  b.output(b.node("Relu", {t2}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0]->op_type, "Relu");
  EXPECT_EQ(g.nodes[0]->in(0), g.inputs[0]);
}

TEST(Simplify, ComposesTransposePair) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4});
  Value* t1 = b.node("Transpose", {x}, {{"perm", attr_ints({0, 2, 1})}});
  Value* t2 = b.node("Transpose", {t1}, {{"perm", attr_ints({1, 0, 2})}});
  b.output(b.node("Relu", {t2}));
  Value* t3 = b.node("Transpose", {x});  // default perm: reversed
  b.output(b.node("Transpose", {t3}, {{"perm", attr_ints({0, 2, 1})}}, "last"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "Transpose"), 2u);
  for (auto& n : g.nodes)
    if (n->op_type == "Transpose") EXPECT_EQ(n->in(0), g.inputs[0]);
  EXPECT_EQ(g.outputs[1]->name, "last");
}

TEST(Simplify, TransposePairFromInputToOutputKeepsOneCopy) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3});
  Value* t1 = b.node("Transpose", {x});
  b.output(b.node("Transpose", {t1}, {}, "y"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  ASSERT_EQ(g.nodes.size(), 1u);  // an input cannot be renamed into an output
  EXPECT_EQ(g.nodes[0]->in(0), g.inputs[0]);
  EXPECT_EQ(g.outputs[0]->name, "y");
}

TEST(Simplify, MergesReshapeChain) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4});
  Value* r1 = b.node("Reshape", {x, b.constant("s1", Tensor::from_i64({6, -1}))});
  Value* r2 = b.node("Reshape", {r1, b.constant("s2", Tensor::from_i64({0, 2, 2}))});  // [6,2,2]
  Value* r3 = b.node("Reshape", {r2, b.constant("s3", Tensor::from_i64({4, -1}))});
  b.output(b.node("Relu", {r3}));
  Value* f = b.node("Flatten", {x}, {{"axis", attr_int(2)}});
  b.output(b.node("Reshape", {f, b.constant("s4", Tensor::from_i64({3, 8}))}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "Reshape"), 2u);
  EXPECT_EQ(count_ops(g, "Flatten"), 0u);
  for (auto& n : g.nodes) {
    if (n->op_type != "Reshape") continue;
    EXPECT_EQ(n->in(0), g.inputs[0]);
    EXPECT_EQ(n->in(1)->constant->to_i64(), n->out(0)->shape);
  }
}

TEST(Simplify, RemovesNoOpReshape) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4});
  Value* r = b.node("Relu", {x});
  Value* same = b.node("Reshape", {r, b.constant("s", Tensor::from_i64({2, -1, 4}))});
  Value* e = b.node("Exp", {same});
  b.output(b.node("Reshape", {e, b.constant("s2", Tensor::from_i64({2, 3, 4}))}, {}, "y"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "Reshape"), 0u);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.outputs[0]->name, "y");  // Exp's output took the output's name
  EXPECT_EQ(g.outputs[0]->producer->op_type, "Exp");
}

TEST(Simplify, KeepsReshapeFromInputToOutput) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3});
  b.output(b.node("Reshape", {x, b.constant("s", Tensor::from_i64({2, 3}))}, {}, "y"));
  Graph& g = *b.g;
  EXPECT_FALSE(run_simplify(g));
  EXPECT_EQ(g.nodes.size(), 1u);
}

TEST(Simplify, SpatialReduceMeanBecomesGlobalAveragePool) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 5, 3, 4});
  Value* r = b.node("Relu", {x});
  Value* m = b.node("ReduceMean", {r}, {{"axes", attr_ints({-2, 3})}}, "se_mean");
  b.output(b.node("Mul", {r, m}));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "ReduceMean"), 0u);
  const Node* gap = only_node(g, "GlobalAveragePool");
  ASSERT_TRUE(gap);
  EXPECT_EQ(gap->inputs.size(), 1u);
  EXPECT_EQ(gap->out(0)->shape, (Shape{2, 5, 1, 1}));
  EXPECT_TRUE(has_origin(*gap, "se_mean"));
}

TEST(Simplify, KeepsOtherReduceMeans) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 5, 3, 4});
  b.output(b.node("ReduceMean", {x}, {{"axes", attr_ints({2, 3})}, {"keepdims", attr_int(0)}}));
  b.output(b.node("ReduceMean", {x}, {{"axes", attr_ints({1, 2, 3})}}));
  b.output(b.node("ReduceMean", {b.input("y", {2, 3, 4})}, {{"axes", attr_ints({1, 2})}}));
  Graph& g = *b.g;
  EXPECT_FALSE(run_simplify(g));
  EXPECT_EQ(count_ops(g, "ReduceMean"), 3u);
}

TEST(Simplify, NoChangeReportsFalse) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* y = b.node("Conv", {x, b.random_constant("w", {2, 3, 3, 3})});
  Value* r = b.node("Relu", {y});
  b.output(b.node("Transpose", {r}, {{"perm", attr_ints({0, 2, 3, 1})}}));
  EXPECT_FALSE(run_simplify(*b.g));
  EXPECT_EQ(b.g->nodes.size(), 3u);
}

// DeepLab's ASPP at 14x14: rates 24 and 36 leave only the centre tap (a 1x1 conv without
// pads); rate 12 keeps all three taps; asymmetric geometry (stride 2, one dim only, a
// dilation that drops only the trailing tap) keeps the outputs too.
TEST(Simplify, DropsConvTapsThatReadOnlyPadding) {
  for (int64_t rate : {12, 24, 36}) {
    GraphBuilder b;
    Value* x = b.input("x", {1, 8, 14, 14});
    Value* w = b.random_constant("w", {4, 8, 3, 3});
    Value* bias = b.random_constant("b", {4});
    b.output(b.node("Conv", {x, w, bias},
                    {{"kernel_shape", attr_ints({3, 3})}, {"dilations", attr_ints({rate, rate})}, {"pads", attr_ints({rate, rate, rate, rate})}}));
    SCOPED_TRACE("rate " + std::to_string(rate));
    EXPECT_EQ(run_simplify(*b.g), rate > 12);
    const Node* c = only_node(*b.g, "Conv");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->in(1)->shape, rate > 12 ? (Shape{4, 8, 1, 1}) : (Shape{4, 8, 3, 3}));
    if (rate > 12) EXPECT_EQ(conv_geom(*c).pb, (std::vector<int64_t>{0, 0}));
  }
  // W dim only: 1x5 kernel, dilation 4, pads 8 on a 6-wide input with stride 2: outputs 0..2
  // read 2*o - 8 + 4k: tap 0 never inside (at most 2*2 - 8 = -4), tap 4 never (at least 8 >= 6);
  // the pads shrink by one dilation on each side.
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 5, 6});
  Value* w = b.random_constant("w", {5, 3, 1, 5});
  b.output(b.node("Conv", {x, w},
                  {{"kernel_shape", attr_ints({1, 5})}, {"dilations", attr_ints({1, 4})}, {"strides", attr_ints({1, 2})},
                   {"pads", attr_ints({0, 8, 0, 8})}}));
  EXPECT_TRUE(run_simplify(*b.g));
  const Node* c = only_node(*b.g, "Conv");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->in(1)->shape, (Shape{5, 3, 1, 3}));
  EXPECT_EQ(conv_geom(*c).pb, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(conv_geom(*c).pe, (std::vector<int64_t>{0, 4}));
}

// Whisper's front end: two 1-D convs (the second strided, both padded), each followed by an
// activation (Gelu there, Sigmoid here), then a Transpose. Both become 2-D convs over a unit
// height with the activations right after them; the Reshape pair between the convs cancels,
// one Reshape is left at each end.
TEST(Simplify, OneDimensionalConvsRunAsTwoDimensionalOnes) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 6, 20});
  Value* w1 = b.random_constant("w1", {8, 6, 3});
  Value* w2 = b.random_constant("w2", {8, 8, 3});
  Value* c1 = b.node("Conv", {x, w1, b.random_constant("b1", {8})}, {{"pads", attr_ints({1, 1})}}, "conv1");
  Value* g1 = b.node("Sigmoid", {c1}, {}, "gelu1");
  Value* c2 = b.node("Conv", {g1, w2}, {{"strides", attr_ints({2})}, {"auto_pad", attr_string("SAME_UPPER")}}, "conv2");
  Value* g2 = b.node("Sigmoid", {c2}, {}, "gelu2");
  b.output(b.node("Transpose", {g2}, {{"perm", attr_ints({0, 2, 1})}}, "t"));
  // A 1-D conv whose output is the graph's output, without a bias, dilated.
  Value* w3 = b.random_constant("w3", {2, 6, 2});
  b.output(b.node("Conv", {x, w3}, {{"dilations", attr_ints({3})}}, "conv3"));
  Graph& g = *b.g;
  EXPECT_TRUE(run_simplify(g));
  std::vector<std::string> ops;
  for (auto& n : g.nodes) ops.push_back(n->op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Reshape", "Conv", "Sigmoid", "Conv", "Sigmoid", "Reshape", "Transpose", "Reshape", "Conv", "Reshape"}));
  for (auto& n : g.nodes)
    if (n->op_type == "Conv") {
      EXPECT_EQ(n->in(0)->shape.size(), 4u);
      EXPECT_EQ(n->in(1)->shape.size(), 4u);
    }
  EXPECT_EQ(g.outputs[1]->name, "conv3");  // the output keeps its name
  EXPECT_EQ(g.outputs[1]->shape, (Shape{1, 2, 17}));
}

// An activation after a Reshape of something other than a conv stays where it is, as does one after
// a Reshape whose output has another reader.
TEST(Simplify, KeepsElementwiseAfterOtherReshapes) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 6, 4, 5});
  Value* r = b.node("Reshape", {b.node("Relu", {x}), b.constant("s", Tensor::from_i64({2, 6, 20}))}, {}, "r");
  b.output(b.node("Sigmoid", {r}, {}, "gelu"));
  Value* w = b.random_constant("w", {3, 6, 1, 1});
  Value* r2 = b.node("Reshape", {b.node("Conv", {x, w}), b.constant("s2", Tensor::from_i64({2, 3, 20}))}, {}, "r2");
  b.output(b.node("Sigmoid", {r2}, {}, "gelu2"));
  b.output(r2);
  Graph& g = *b.g;
  EXPECT_FALSE(run_simplify(g));
}

}  // namespace
}  // namespace onnxc::test
