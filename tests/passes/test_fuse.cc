// tests/passes/test_fuse.cc — operator fusion (passes/fuse.cc): which nodes form groups,
// what their epilogues and extra inputs are, that the reference evaluator gives the same
// outputs before and after (run_pass_checked), and for several groups that the generated C
// (codegen/c/fused.cc) matches the reference too (tests/codegen/c_run.h).
#include "tests/codegen/c_run.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

PassOptions opts() {
  PassOptions o;
  o.nchwc = false;
  return o;
}

bool fuse(Graph& g) { return run_pass_checked(g, [](Graph& gr) { return fuse_ops(gr, opts()); }); }

std::vector<const Node*> groups(const Graph& g) {
  std::vector<const Node*> r;
  for (auto& n : g.nodes)
    if (!n->epilogue.empty()) r.push_back(n.get());
  return r;
}

// "Conv+Add+Relu"
std::string ops_of(const Node& n) {
  std::string s = n.op_type;
  for (auto& e : n.epilogue) s += "+" + e->op_type;
  return s;
}

const Node* node_named(const Graph& g, const std::string& name) {
  for (auto& n : g.nodes)
    if (n->name == name) return n.get();
  return nullptr;
}


// A Conv with bias and "same" padding.
Value* conv(GraphBuilder& b, Value* x, int64_t cout, int64_t k, const std::string& name) {
  int64_t p = (k - 1) / 2;
  Value* w = b.random_constant(name + "_w", {cout, x->shape[1], k, k});
  Value* bias = b.random_constant(name + "_b", {cout});
  return b.node("Conv", {x, w, bias}, {{"pads", attr_ints({p, p, p, p})}}, name);
}

TEST(Fuse, ConvBiasRelu) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* a = conv(b, x, 8, 3, "conv");
  Value* bias = b.random_constant("bias", {1, 8, 1, 1});
  Value* s = b.node("Add", {a, bias}, {}, "add");
  b.output(b.node("Relu", {s}, {}, "relu"));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = *g.nodes[0];
  EXPECT_EQ(ops_of(n), "Conv+Add+Relu");
  EXPECT_EQ(n.anchor_out, a);
  ASSERT_EQ(n.extra_inputs.size(), 1u);
  EXPECT_EQ(n.extra_inputs[0], bias);  // a constant the Add reads is passed like any operand
  EXPECT_EQ(n.out(0), g.outputs[0]);
  EXPECT_EQ(g.outputs[0]->producer, &n);
  EXPECT_NE(dump_ir(g).find("# conv, add, relu"), std::string::npos) << dump_ir(g);
  expect_c_matches_reference(g, "conv_bias_relu", 11);
}

TEST(Fuse, ConvClipReLU6HasNoExtraInputs) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 6, 6});
  Value* a = conv(b, x, 4, 3, "conv");
  Value* lo = b.constant("lo", Tensor::from_f32({0}, {}));
  Value* hi = b.constant("hi", Tensor::from_f32({6}, {}));
  b.output(b.node("Clip", {a, lo, hi}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(ops_of(*g.nodes[0]), "Conv+Clip");
  EXPECT_TRUE(g.nodes[0]->extra_inputs.empty());  // Clip's constant bounds are static
  expect_c_matches_reference(g, "conv_relu6", 11);
}

TEST(Fuse, ConvLeakyReluHardSigmoidHardSwish) {
  for (const char* act : {"LeakyRelu", "HardSigmoid", "HardSwish"}) {
    SCOPED_TRACE(act);
    GraphBuilder b;
    Value* x = b.input("x", {1, 3, 5, 5});
    Value* a = conv(b, x, 4, 3, "conv");
    std::map<std::string, Attr> attrs;
    if (std::string(act) == "LeakyRelu") attrs["alpha"] = attr_float(0.2);
    if (std::string(act) == "HardSigmoid") attrs["alpha"] = attr_float(0.3), attrs["beta"] = attr_float(0.4);
    b.output(b.node(act, {a}, attrs));
    Graph& g = *b.g;
    EXPECT_TRUE(fuse(g));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(ops_of(*g.nodes[0]), std::string("Conv+") + act);
  }
}

// x * sigmoid(x): both steps read the anchor's output.
TEST(Fuse, ConvSiLU) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 7, 7});
  Value* a = conv(b, x, 6, 3, "conv");
  Value* s = b.node("Sigmoid", {a}, {}, "sig");
  b.output(b.node("Mul", {a, s}, {}, "mul"));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = *g.nodes[0];
  EXPECT_EQ(ops_of(n), "Conv+Sigmoid+Mul");
  EXPECT_TRUE(n.extra_inputs.empty());
  EXPECT_EQ(n.epilogue[1]->in(0), n.anchor_out);  // Mul reads an internal value that is not the latest
  EXPECT_EQ(n.epilogue[1]->in(1), s);
  expect_c_matches_reference(g, "conv_silu", 11);
}

// HardSwish written out: x * Clip(x + 3, 0, 6) / 6.
TEST(Fuse, ConvHardSwishPattern) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 6, 6});
  Value* a = conv(b, x, 4, 3, "conv");
  Value* three = b.constant("three", Tensor::from_f32({3}, {}));
  Value* t = b.node("Add", {a, three});
  Value* c = b.node("Clip", {t, b.constant("lo", Tensor::from_f32({0}, {})), b.constant("hi", Tensor::from_f32({6}, {}))});
  Value* m = b.node("Mul", {a, c});
  b.output(b.node("Div", {m, b.constant("six", Tensor::from_f32({6}, {}))}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(ops_of(*g.nodes[0]), "Conv+Add+Clip+Mul+Div");
  expect_c_matches_reference(g, "conv_hardswish_pattern", 11);
}

// Residual block: the Add's other operand comes from a conv placed after the first one, so
// the group must move after it.
TEST(Fuse, ResidualBlock) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 6, 6});
  Value* a = conv(b, x, 8, 3, "conv_main");
  Value* skip = conv(b, x, 8, 1, "conv_skip");
  Value* s = b.node("Add", {a, skip}, {}, "add");
  b.output(b.node("Relu", {s}, {}, "relu"));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0]->name, "conv_skip");
  EXPECT_TRUE(g.nodes[0]->epilogue.empty());
  EXPECT_EQ(ops_of(*g.nodes[1]), "Conv+Add+Relu");
  EXPECT_EQ(g.nodes[1]->extra_inputs, std::vector<Value*>{skip});
  expect_c_matches_reference(g, "residual", 11);
}

// Residual with the block input as the other operand, as in ResNet's identity blocks.
TEST(Fuse, ResidualIdentity) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 6, 6});
  Value* r0 = b.node("Relu", {x});
  Value* a = conv(b, r0, 4, 3, "c1");
  Value* a1 = b.node("Relu", {a});
  Value* c2 = conv(b, a1, 4, 3, "c2");
  Value* s = b.node("Add", {r0, c2});
  b.output(b.node("Relu", {s}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  auto gs = groups(g);
  ASSERT_EQ(gs.size(), 2u);
  EXPECT_EQ(ops_of(*gs[0]), "Conv+Relu");
  EXPECT_EQ(ops_of(*gs[1]), "Conv+Add+Relu");
  EXPECT_EQ(gs[1]->extra_inputs, std::vector<Value*>{r0});
  EXPECT_EQ(g.nodes.size(), 3u);  // the first Relu has two users and stays alone
  expect_c_matches_reference(g, "residual_identity", 11);
}

TEST(Fuse, ElementwiseChainIsOneLoop) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4});
  Value* y = b.input("y", {2, 3, 4});
  Value* c = b.random_constant("c", {4});
  Value* t = b.node("Add", {x, y});
  Value* u = b.node("Mul", {t, c});
  b.output(b.node("Sigmoid", {u}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = *g.nodes[0];
  EXPECT_EQ(ops_of(n), "Add+Mul+Sigmoid");
  EXPECT_EQ(n.extra_inputs, std::vector<Value*>{c});
  expect_c_matches_reference(g, "elementwise_chain", 11);
}

// SiLU after a value with other users: Sigmoid anchors a one-loop group, x is an extra.
TEST(Fuse, SiLUOnSharedValueIsOneLoop) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 5, 3, 3});
  Value* s = b.node("Sigmoid", {x});
  Value* y = b.node("Mul", {x, s});
  b.output(y);
  b.output(b.node("Relu", {x}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  auto gs = groups(g);
  ASSERT_EQ(gs.size(), 1u);
  EXPECT_EQ(ops_of(*gs[0]), "Sigmoid+Mul");
  EXPECT_EQ(gs[0]->extra_inputs, std::vector<Value*>{x});
  expect_c_matches_reference(g, "silu_one_loop", 11);
}

// Squeeze-excitation: y = r * sigmoid(conv(relu(conv(gap(r))))) + x. The small conv takes
// the Sigmoid; the broadcasting Mul cannot join it (it grows the shape) nor r's producer (r
// has two users), so it anchors its own one-loop group with the residual Add.
TEST(Fuse, SqueezeExcitation) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 8, 6, 6});
  Value* r = b.node("Relu", {conv(b, x, 8, 3, "conv")});
  Value* p = b.node("GlobalAveragePool", {r}, {}, "gap");
  Value* z = b.node("Relu", {conv(b, p, 2, 1, "se_reduce")});
  Value* s = b.node("Sigmoid", {conv(b, z, 8, 1, "se_expand")});
  Value* m = b.node("Mul", {r, s}, {}, "se_mul");
  b.output(b.node("Add", {m, x}, {}, "residual"));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  std::vector<std::string> got;
  for (auto& n : g.nodes) got.push_back(ops_of(*n));
  EXPECT_EQ(got, (std::vector<std::string>{"Conv+Relu", "GlobalAveragePool", "Conv+Relu", "Conv+Sigmoid", "Mul+Add"}));
  const Node* mul = node_named(g, "se_mul");
  ASSERT_TRUE(mul);
  EXPECT_EQ(mul->in(1)->shape, (Shape{1, 8, 1, 1}));
  EXPECT_EQ(mul->extra_inputs, std::vector<Value*>{x});
  expect_c_matches_reference(g, "squeeze_excitation", 11);
}

// The SE Mul as the last node (no tail): it stays a plain broadcast node.
TEST(Fuse, SqueezeExcitationMulAlone) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 5, 5});
  Value* p = b.node("GlobalAveragePool", {x});
  Value* s = b.node("Sigmoid", {conv(b, p, 4, 1, "se")});
  b.output(b.node("Mul", {x, s}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(ops_of(*g.nodes[1]), "Conv+Sigmoid");
  EXPECT_EQ(ops_of(*g.nodes[2]), "Mul");
  expect_c_matches_reference(g, "se_mul_alone", 11);
}

TEST(Fuse, GemmRelu) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 16});
  Value* w = b.random_constant("w", {8, 16});
  Value* c = b.random_constant("c", {8});
  Value* y = b.node("Gemm", {x, w, c}, {{"transB", attr_int(1)}});
  b.output(b.node("Relu", {y}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(ops_of(*g.nodes[0]), "Gemm+Relu");
  expect_c_matches_reference(g, "gemm_relu", 11);
}

TEST(Fuse, MatMulAdd) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 16});
  Value* w = b.random_constant("w", {16, 8});
  Value* bias = b.random_constant("bias", {8});
  Value* y = b.node("MatMul", {x, w});
  b.output(b.node("Add", {y, bias}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(ops_of(*g.nodes[0]), "MatMul+Add");
  EXPECT_EQ(g.nodes[0]->extra_inputs, std::vector<Value*>{bias});
  expect_c_matches_reference(g, "matmul_add", 11);
}

// A conv output read by two elementwise nodes that do not meet again: nothing fuses past it.
TEST(Fuse, TwoUsesStopTheGroup) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* a = conv(b, x, 4, 3, "conv");
  b.output(b.node("Relu", {a}));
  b.output(b.node("Sigmoid", {a}));
  Graph& g = *b.g;
  EXPECT_FALSE(fuse(g));
  EXPECT_EQ(g.nodes.size(), 3u);
  EXPECT_TRUE(groups(g).empty());
}

// The same with a non-elementwise second user.
TEST(Fuse, ConvUserStopsTheGroup) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* a = conv(b, x, 3, 3, "c1");
  Value* r = b.node("Relu", {a});
  Value* c = conv(b, a, 3, 1, "c2");
  b.output(b.node("Add", {r, c}));
  Graph& g = *b.g;
  fuse(g);
  const Node* c1 = node_named(g, "c1");
  ASSERT_TRUE(c1);
  EXPECT_TRUE(c1->epilogue.empty());
  // c2 takes the Add (r comes from outside) before the Relu could; the Relu stays alone.
  const Node* c2 = node_named(g, "c2");
  ASSERT_TRUE(c2);
  EXPECT_EQ(ops_of(*c2), "Conv+Add");
  EXPECT_EQ(g.nodes.size(), 3u);
}

// A graph output in the middle of a chain ends the group there and stays its output.
TEST(Fuse, GraphOutputInTheMiddle) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* a = conv(b, x, 4, 3, "conv");
  Value* r = b.node("Relu", {a}, {}, "relu");
  b.output(r);
  b.output(b.node("Sigmoid", {r}, {}, "sig"));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(ops_of(*g.nodes[0]), "Conv+Relu");
  EXPECT_EQ(g.nodes[0]->out(0), r);
  EXPECT_EQ(ops_of(*g.nodes[1]), "Sigmoid");
  expect_c_matches_reference(g, "output_in_middle", 11);
}

// The conv's own output is a graph output: it cannot become internal.
TEST(Fuse, AnchorOutputIsGraphOutput) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* a = conv(b, x, 4, 3, "conv");
  b.output(a);
  b.output(b.node("Relu", {a}));
  Graph& g = *b.g;
  EXPECT_FALSE(fuse(g));
  EXPECT_EQ(g.nodes.size(), 2u);
}

// A broadcast that grows the running value's shape is not a step.
TEST(Fuse, ShapeChangingBroadcastIsNotAStep) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 1, 1});
  Value* y = b.input("y", {1, 4, 3, 3});
  Value* a = conv(b, x, 4, 1, "conv");
  b.output(b.node("Add", {a, y}));
  Graph& g = *b.g;
  EXPECT_FALSE(fuse(g));
  EXPECT_EQ(g.nodes.size(), 2u);
}

// Integer elementwise ops have no float expression and stay out.
TEST(Fuse, NonFloatStaysOut) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3}, DType::I32);
  Value* y = b.input("y", {2, 3}, DType::I32);
  Value* s = b.node("Add", {x, y});
  b.output(b.node("Mul", {s, y}));
  EXPECT_FALSE(fuse(*b.g));
}

TEST(Fuse, SecondRunChangesNothing) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 6, 6});
  Value* a = conv(b, x, 4, 3, "conv");
  Value* s = b.node("Sigmoid", {a});
  b.output(b.node("Mul", {a, s}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  EXPECT_FALSE(fuse(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0]->epilogue.size(), 2u);
}

// NCHWc activations: a plain constant with one channel and a blocked per-channel constant
// are readable in the blocked layout.
TEST(Fuse, NchwcChain) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 12, 3, 3});
  Value* y = b.input("y", {1, 12, 3, 3});
  auto blocked = [&](Value* v) { return b.node("onnxc.layout_transform", {v}, {{"to", attr_int(8)}}); };
  Value* t = b.node("Add", {blocked(x), blocked(y)}, {}, "add");
  t->layout = Layout::nchwc(8);
  Value* one = b.random_constant("one_channel", {1, 1, 1, 1});
  Value* u = b.node("Mul", {t, one}, {}, "mul");
  u->layout = Layout::nchwc(8);
  Tensor per_c(DType::F32, {1, 12, 1, 1});
  for (int64_t i = 0; i < 12; ++i) per_c.set(i, 0.1 * static_cast<double>(i) - 0.5);
  Value* blocked_c = add_constant(*b.g, "blocked_c", per_c, Layout::nchwc(8));
  Value* z = b.node("Add", {u, blocked_c}, {}, "add2");
  z->layout = Layout::nchwc(8);
  Value* r = b.node("Relu", {z}, {}, "relu");
  r->layout = Layout::nchwc(8);
  b.output(b.node("onnxc.layout_transform", {r}, {{"from", attr_int(8)}}));
  Graph& g = *b.g;
  EXPECT_TRUE(fuse(g));
  const Node* add = node_named(g, "add");
  ASSERT_TRUE(add);
  EXPECT_EQ(ops_of(*add), "Add+Mul+Add+Relu");
  EXPECT_EQ(add->extra_inputs, (std::vector<Value*>{one, blocked_c}));
  EXPECT_EQ(g.nodes.size(), 4u);  // two transforms in, the group, one transform out
  expect_c_matches_reference(g, "nchwc", 11);
}

// A plain [1,C,1,1] operand (C > 1) cannot be read in NCHWc: the group stops before it.
// (Structure and reference only: no layout pass would leave such a graph for codegen.)
TEST(Fuse, NchwcPlainPerChannelOperandIsNotAStep) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 12, 3, 3});
  Value* xb = b.node("onnxc.layout_transform", {x}, {{"to", attr_int(8)}});
  Value* t = b.node("Relu", {xb}, {}, "relu");
  t->layout = Layout::nchwc(8);
  Value* c = b.random_constant("plain_c", {1, 12, 1, 1});
  Value* u = b.node("Mul", {t, c}, {}, "mul");
  u->layout = Layout::nchwc(8);
  b.output(b.node("onnxc.layout_transform", {u}, {{"from", attr_int(8)}}));
  EXPECT_FALSE(fuse(*b.g));
}

// The verifier rejects a group whose internal value escapes.
TEST(Fuse, VerifierRejectsEscapingInternalValue) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* a = conv(b, x, 4, 3, "conv");
  b.output(b.node("Relu", {a}));
  Graph& g = *b.g;
  ASSERT_TRUE(fuse(g));
  g.nodes[0]->anchor_out->is_output = true;
  g.outputs.push_back(g.nodes[0]->anchor_out);
  EXPECT_THROW(verify_graph(g), InternalError);
}

TEST(Fuse, VerifierRejectsUnreadInternalValue) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 5, 5});
  Value* a = conv(b, x, 4, 3, "conv");
  Value* s = b.node("Sigmoid", {a});
  b.output(b.node("Mul", {a, s}));
  Graph& g = *b.g;
  ASSERT_TRUE(fuse(g));
  Node& n = *g.nodes[0];
  n.epilogue[1]->inputs[1] = n.anchor_out;  // nothing reads the Sigmoid's output now
  EXPECT_THROW(verify_graph(g), InternalError);
}

}  // namespace
}  // namespace onnxc::test
