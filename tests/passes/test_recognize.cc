// tests/passes/test_recognize.cc — the recognize pass (passes/recognize.cc): which chains
// become LayerNormalization, RMSNormalization, Gelu or Attention, with which attributes and inputs,
// which stay as they are, that the reference evaluator gives the same outputs before and
// after (run_pass_checked), and that the generated C of the result matches the reference.
// tests/passes/recognize_models.py checks PyTorch's exports end to end against ONNX Runtime.
#include "tests/codegen/c_run.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

bool recognize(Graph& g) {
  return run_pass_checked(g, [](Graph& gr) { return recognize_ops(gr, test_pass_options()); });
}

Value* scalar(GraphBuilder& b, const std::string& name, float v) { return b.constant(name, Tensor::from_f32({v}, {})); }

Value* mean(GraphBuilder& b, Value* x, std::vector<int64_t> axes) {
  return b.node("ReduceMean", {x}, {{"axes", attr_ints(std::move(axes))}, {"keepdims", attr_int(1)}});
}

// ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div as PyTorch exports nn.LayerNorm at opset
// 14; returns the normalised value, and the centred one in *centred.
Value* layer_norm_chain(GraphBuilder& b, Value* x, std::vector<int64_t> axes, float eps, Value** centred = nullptr) {
  Value* d = b.node("Sub", {x, mean(b, x, axes)});
  if (centred) *centred = d;
  Value* v = mean(b, b.node("Pow", {d, scalar(b, "two", 2)}), axes);
  return b.node("Div", {d, b.node("Sqrt", {b.node("Add", {v, scalar(b, "eps", eps)})})});
}

const Node* only(const Graph& g, const std::string& op) {
  const Node* r = nullptr;
  for (auto& n : g.nodes)
    if (n->op_type == op) {
      EXPECT_EQ(r, nullptr) << "more than one " << op;
      r = n.get();
    }
  return r;
}


TEST(Recognize, LayerNormWithScaleAndBias) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 5, 24});
  Value* n = layer_norm_chain(b, x, {-1}, 1e-5f);
  Value* gamma = b.random_constant("gamma", {24}, 0.5, 1.5);
  Value* beta = b.random_constant("beta", {24});
  b.output(b.node("Add", {b.node("Mul", {n, gamma}), beta}, {}, "ln_out"));
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node* ln = only(g, "LayerNormalization");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->in(0), x);
  EXPECT_EQ(ln->in(1), gamma);  // already the normalised shape: the same constant
  EXPECT_EQ(ln->in(2), beta);
  EXPECT_EQ(ln->attrs.at("axis").i, 2);
  EXPECT_FLOAT_EQ(static_cast<float>(ln->attrs.at("epsilon").f), 1e-5f);
  EXPECT_EQ(ln->origin.size(), 9u);  // the seven core nodes, the Mul and the Add
  EXPECT_EQ(ln->name, "ln_out");
  EXPECT_EQ(g.outputs[0], ln->out(0));
  expect_c_matches_reference(g, "recognize_ln", 5);
}

// Over the last two dims; gamma [1, 7, 1] and beta [16] vary along some of them only, and
// gamma comes first in its Mul: both become constants of the normalised shape [7, 16].
TEST(Recognize, LayerNormOverTwoDimsBroadcastsScaleAndBias) {
  GraphBuilder b;
  Value* x = b.input("x", {3, 7, 16});
  Value* n = layer_norm_chain(b, x, {1, 2}, 1e-3f);
  Value* gamma = b.random_constant("gamma", {1, 7, 1}, 0.5, 1.5);
  Value* beta = b.random_constant("beta", {16});
  b.output(b.node("Add", {beta, b.node("Mul", {gamma, n})}));
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  const Node* ln = only(g, "LayerNormalization");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(ln->attrs.at("axis").i, 1);
  EXPECT_EQ(ln->in(1)->shape, (Shape{7, 16}));
  EXPECT_EQ(ln->in(2)->shape, (Shape{7, 16}));
}

// Without the affine step: Scale is a constant 1, no B. The square as Mul(d, d).
TEST(Recognize, LayerNormWithoutAffineAndSquareAsMul) {
  GraphBuilder b;
  Value* x = b.input("x", {4, 10});
  Value* d = b.node("Sub", {x, mean(b, x, {1})});
  Value* v = mean(b, b.node("Mul", {d, d}), {1});
  Value* s = b.node("Sqrt", {b.node("Add", {scalar(b, "eps", 1e-6f), v})});
  b.output(b.node("Div", {d, s}));
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  const Node* ln = only(g, "LayerNormalization");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(ln->inputs.size(), 2u);
  EXPECT_EQ(ln->in(1)->shape, (Shape{1}));
  EXPECT_EQ(ln->in(1)->constant->get(0), 1.0);
}

// torch.rsqrt's export: Mul(x, Div(1, Sqrt(...))), then the weight.
TEST(Recognize, RMSNormFromRsqrt) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 32});
  Value* v = mean(b, b.node("Pow", {x, scalar(b, "two", 2)}), {-1});
  Value* r = b.node("Div", {scalar(b, "one", 1), b.node("Sqrt", {b.node("Add", {v, scalar(b, "eps", 1e-6f)})})});
  Value* w = b.random_constant("w", {32}, 0.5, 1.5);
  b.output(b.node("Mul", {b.node("Mul", {x, r}), w}));
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  const Node* rms = only(g, "RMSNormalization");
  ASSERT_NE(rms, nullptr);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(rms->in(1), w);
  EXPECT_EQ(rms->attrs.at("axis").i, 2);
  expect_c_matches_reference(g, "recognize_rms", 5);
}

// Gelu's erf form in PyTorch's grouping ((x · (1 + erf(x / √2))) · 0.5) and the tanh form
// with 0.5 first and x³ as x · (x · x).
TEST(Recognize, GeluErfAndTanh) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 40});
  Value* e = b.node("Erf", {b.node("Div", {x, scalar(b, "sqrt2", 1.4142135f)})});
  Value* erf_gelu = b.node("Mul", {b.node("Mul", {x, b.node("Add", {e, scalar(b, "one", 1)})}), scalar(b, "half", 0.5)});
  Value* y = b.input("y", {2, 40});
  Value* cube = b.node("Mul", {y, b.node("Mul", {y, y})});
  Value* u = b.node("Add", {y, b.node("Mul", {scalar(b, "c", 0.044715f), cube})});
  Value* t = b.node("Tanh", {b.node("Mul", {scalar(b, "k", 0.7978845608f), u})});
  Value* tanh_gelu = b.node("Mul", {b.node("Mul", {scalar(b, "half2", 0.5), y}), b.node("Add", {scalar(b, "one2", 1), t})});
  b.output(erf_gelu);
  b.output(tanh_gelu);
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  ASSERT_EQ(g.nodes.size(), 2u);
  for (auto& n : g.nodes) EXPECT_EQ(n->op_type, "Gelu");
  EXPECT_EQ(g.outputs[0]->producer->in(0), x);
  EXPECT_EQ(g.outputs[0]->producer->attrs.at("approximate").s, "none");
  EXPECT_EQ(g.outputs[1]->producer->in(0), y);
  EXPECT_EQ(g.outputs[1]->producer->attrs.at("approximate").s, "tanh");
  expect_c_matches_reference(g, "recognize_gelu", 5);
}

// Chains that are not taken: a mean over a leading dim, a centred value that is also a graph
// output (what follows it is an RMSNormalization of that value, which is taken), an Erf
// argument scaled by another constant than 1/√2, and an intermediate read twice.
TEST(Recognize, ChainsThatStay) {
  {
    GraphBuilder b;
    Value* x = b.input("x", {4, 6, 8});
    b.output(layer_norm_chain(b, x, {1}, 1e-5f));
    Graph& g = *b.g;
    EXPECT_FALSE(recognize(g));
    EXPECT_EQ(g.nodes.size(), 7u);
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", {4, 8});
    Value* d;
    b.output(layer_norm_chain(b, x, {-1}, 1e-5f, &d));
    b.output(d);
    Graph& g = *b.g;
    EXPECT_TRUE(recognize(g));
    EXPECT_EQ(only(g, "LayerNormalization"), nullptr);
    const Node* rms = only(g, "RMSNormalization");
    ASSERT_NE(rms, nullptr);
    EXPECT_EQ(rms->in(0), d);
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", {4, 8});
    Value* e = b.node("Erf", {b.node("Div", {x, scalar(b, "s", 1.5f)})});
    b.output(b.node("Mul", {b.node("Mul", {x, b.node("Add", {e, scalar(b, "one", 1)})}), scalar(b, "half", 0.5)}));
    Graph& g = *b.g;
    EXPECT_FALSE(recognize(g));
    EXPECT_EQ(g.nodes.size(), 5u);
  }
  {
    GraphBuilder b;
    Value* x = b.input("x", {4, 8});
    Value* e = b.node("Erf", {b.node("Div", {x, scalar(b, "sqrt2", 1.4142135f)})});
    Value* c = b.node("Add", {e, scalar(b, "one", 1)});
    b.output(b.node("Mul", {b.node("Mul", {x, c}), scalar(b, "half", 0.5)}));
    b.output(c);  // 1 + erf(...) is needed on its own
    Graph& g = *b.g;
    EXPECT_FALSE(recognize(g));
    EXPECT_EQ(g.nodes.size(), 5u);
  }
}

// Every value inside a match is read once: a Gelu whose x is another Gelu's output, and an
// LN feeding a Gelu, all match (one sweep), with the nodes in topological order.
TEST(Recognize, ChainsInSequence) {
  GraphBuilder b;
  Value* x = b.input("x", {3, 16});
  Value* h = layer_norm_chain(b, x, {-1}, 1e-5f);
  for (int k = 0; k < 2; ++k) {
    std::string s = std::to_string(k);
    Value* e = b.node("Erf", {b.node("Mul", {h, scalar(b, "r" + s, 0.70710678f)})});
    h = b.node("Mul", {b.node("Mul", {h, scalar(b, "half" + s, 0.5)}), b.node("Add", {scalar(b, "one" + s, 1), e})});
  }
  b.output(h);
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0]->op_type, "LayerNormalization");
  EXPECT_EQ(g.nodes[1]->op_type, "Gelu");
  EXPECT_EQ(g.nodes[2]->op_type, "Gelu");
  EXPECT_EQ(g.nodes[1]->in(0), g.nodes[0]->out(0));
  EXPECT_EQ(g.nodes[2]->in(0), g.nodes[1]->out(0));
}

// Heads split from [B, T, H * D] by Reshape + Transpose, as PyTorch exports multi-head
// attention: q [2, 6, 24] into 3 heads of 8, K transposed by [0, 2, 3, 1].
Value* split_heads(GraphBuilder& b, Value* x, const std::vector<int64_t>& perm) {
  Value* shape = b.constant(x->name + "_heads", Tensor::from_i64({2, 6, 3, 8}));
  return b.node("Transpose", {b.node("Reshape", {x, shape})}, {{"perm", attr_ints(perm)}});
}

TEST(Recognize, AttentionWithJoinedHeads) {
  GraphBuilder b;
  Value* q = b.input("q", {2, 6, 24});
  Value* k = b.input("k", {2, 6, 24});
  Value* v = b.input("v", {2, 6, 24});
  Value* s = b.node("MatMul", {split_heads(b, q, {0, 2, 1, 3}), split_heads(b, k, {0, 2, 3, 1})});
  Value* p = b.node("Softmax", {b.node("Div", {s, scalar(b, "sqrt_d", std::sqrt(8.0f))})}, {{"axis", attr_int(-1)}});
  Value* o = b.node("MatMul", {p, split_heads(b, v, {0, 2, 1, 3})});
  Value* joined = b.node("Transpose", {o}, {{"perm", attr_ints({0, 2, 1, 3})}});
  b.output(b.node("Reshape", {joined, b.constant("joined", Tensor::from_i64({2, 6, 24}))}, {}, "attn_out"));
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node* a = only(g, "Attention");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->inputs, (std::vector<Value*>{q, k, v}));  // the 3-D form: no copies of heads
  EXPECT_EQ(a->attrs.at("q_num_heads").i, 3);
  EXPECT_EQ(a->attrs.at("kv_num_heads").i, 3);
  EXPECT_NEAR(a->attrs.at("scale").f, 1 / std::sqrt(8.0), 1e-7);
  EXPECT_EQ(a->origin.size(), 12u);  // 3 x (Reshape, Transpose), MatMul, Div, Softmax, MatMul, Transpose, Reshape
  EXPECT_EQ(a->name, "attn_out");
  EXPECT_EQ(a->out(0)->shape, (Shape{2, 6, 24}));
  expect_c_matches_reference(g, "recognize_attention_3d", 5);
}

// 4-D heads with a runtime mask added after a Mul scale; K transposed by its last two dims:
// the Transpose stays, permuting K to [B, H, Tk, D] (the identity here, left to simplify).
TEST(Recognize, AttentionWithMaskOn4DHeads) {
  GraphBuilder b;
  Value* q = b.input("q", {1, 2, 5, 8});
  Value* k = b.input("k", {1, 2, 7, 8});
  Value* v = b.input("v", {1, 2, 7, 4});
  Value* mask = b.input("mask", {5, 7});
  Value* kt = b.node("Transpose", {k}, {{"perm", attr_ints({0, 1, 3, 2})}});
  Value* s = b.node("Mul", {scalar(b, "scale", 0.3f), b.node("MatMul", {q, kt})});
  Value* p = b.node("Softmax", {b.node("Add", {mask, s})}, {{"axis", attr_int(3)}});
  b.output(b.node("MatMul", {p, v}));
  Graph& g = *b.g;
  EXPECT_TRUE(recognize(g));
  const Node* a = only(g, "Attention");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->inputs.size(), 4u);
  EXPECT_EQ(a->in(0), q);
  EXPECT_EQ(a->in(1)->shape, (Shape{1, 2, 7, 8}));
  EXPECT_EQ(a->in(1)->producer->op_type, "Transpose");
  EXPECT_EQ(a->in(2), v);
  EXPECT_EQ(a->in(3), mask);
  EXPECT_FALSE(a->attrs.count("q_num_heads"));
  EXPECT_NEAR(a->attrs.at("scale").f, 0.3, 1e-7);
  EXPECT_EQ(g.nodes.size(), 2u);
  expect_c_matches_reference(g, "recognize_attention_4d", 5);
}

// Not attention: the scores are also an output; the softmax runs over the queries; the
// mask's last dim broadcasts over the keys (ONNX's Attention would mask the missing keys).
TEST(Recognize, AttentionChainsThatStay) {
  GraphBuilder b;
  Value* q = b.input("q", {1, 2, 5, 8});
  Value* kt = b.node("Transpose", {b.input("k", {1, 2, 5, 8})}, {{"perm", attr_ints({0, 1, 3, 2})}});
  Value* v = b.input("v", {1, 2, 5, 8});
  Value* s1 = b.node("MatMul", {q, kt});
  b.output(s1);
  b.output(b.node("MatMul", {b.node("Softmax", {s1}, {{"axis", attr_int(-1)}}), v}));
  Value* s2 = b.node("MatMul", {q, b.node("Transpose", {v}, {{"perm", attr_ints({0, 1, 3, 2})}})});
  b.output(b.node("MatMul", {b.node("Softmax", {s2}, {{"axis", attr_int(2)}}), v}));
  Value* s3 = b.node("MatMul", {v, b.node("Transpose", {q}, {{"perm", attr_ints({0, 1, 3, 2})}})});
  Value* m3 = b.node("Add", {s3, b.input("mask", {5, 1})});
  b.output(b.node("MatMul", {b.node("Softmax", {m3}, {{"axis", attr_int(-1)}}), v}));
  Graph& g = *b.g;
  const size_t before = g.nodes.size();
  EXPECT_FALSE(recognize(g));
  EXPECT_EQ(g.nodes.size(), before);
}

}  // namespace
}  // namespace onnxc::test
