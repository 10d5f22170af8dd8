// tests/passes/test_batch_items.cc — whether a batch's items can run apart
// (passes/batch_items.h): the same hand-built model at batch 4 and at batch 1, accepted when
// every node acts on each item apart, wherever the items are (moved by a Transpose, merged with
// heads by a Reshape, as PyTorch's attention does), and refused, naming the node, when one mixes
// them (along the batch axis by its attribute) or an output does not hold them first, one block
// per item; and the weights a batch-1 model reads only once (what --parallel auto weighs).
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/batch_items.h"

namespace onnxc::test {
namespace {

// x[n,8,8,8] -> conv -> relu -> (last(n) or pool -> flat -> fc) -> y. `last` builds the
// node(s) that end the model, given the builder and relu's output.
using Tail = std::function<Value*(GraphBuilder&, Value*)>;

std::unique_ptr<Graph> model(int64_t n, const Tail& last) {
  GraphBuilder b;
  Value* x = b.input("x", {n, 8, 8, 8});
  Value* a = b.node("Conv", {x, b.random_constant("w", {8, 8, 3, 3})}, {{"pads", attr_ints({1, 1, 1, 1})}}, "conv");
  a = b.node("Relu", {a}, {}, "relu");
  b.output(last(b, a));
  return std::move(b.g);
}

Value* classifier(GraphBuilder& b, Value* a) {
  Value* p = b.node("GlobalAveragePool", {a}, {}, "pool");
  Value* f = b.node("Flatten", {p}, {}, "flat");
  return b.node("Gemm", {f, b.random_constant("wf", {1000, 8}), b.random_constant("bf", {1000})}, {{"transB", attr_int(1)}}, "fc");
}

std::string check(const Tail& last) {
  auto gN = model(4, last);
  auto g1 = model(1, last);
  EXPECT_EQ(batch_items_of(*gN), 4);
  EXPECT_EQ(batch_items_of(*g1), 0);
  return batch_items_check(*gN, *g1, 4);
}

TEST(BatchItems, ClassifierRunsApart) { EXPECT_EQ(check(classifier), ""); }

TEST(BatchItems, ConcatAlongChannelsRunsApart) {
  EXPECT_EQ(check([](GraphBuilder& b, Value* a) { return b.node("Concat", {a, a}, {{"axis", attr_int(1)}}, "cat"); }), "");
}

TEST(BatchItems, ConcatAlongTheBatchIsRefused) {
  // Its shapes look per item ([8,...] at batch 4, [2,...] at batch 1): only its axis tells.
  const std::string why = check([](GraphBuilder& b, Value* a) { return b.node("Concat", {a, a}, {{"axis", attr_int(0)}}, "cat"); });
  EXPECT_NE(why.find("node 'cat'"), std::string::npos) << why;
  EXPECT_NE(why.find("concatenates along the batch axis"), std::string::npos) << why;
}

TEST(BatchItems, SoftmaxAlongTheBatchIsRefused) {
  const std::string why = check([](GraphBuilder& b, Value* a) {
    Value* f = b.node("Flatten", {a}, {}, "flat");
    return b.node("Softmax", {f}, {{"axis", attr_int(0)}}, "soft");
  });
  EXPECT_NE(why.find("node 'soft'"), std::string::npos) << why;
  EXPECT_NE(why.find("along the batch axis"), std::string::npos) << why;
}

TEST(BatchItems, AttentionRunsApart) {
  // relu's [n, 8, 8, 8] as n items of 8 tokens of 64 features, self-attention over them.
  EXPECT_EQ(check([](GraphBuilder& b, Value* a) {
              b.g->opset = 23;
              Tensor s(DType::I64, {3});
              s.set_i64(0, 0);
              s.set_i64(1, 8);
              s.set_i64(2, 64);
              Value* t = b.node("Reshape", {a, b.constant("tokens", std::move(s))}, {}, "tokens");
              return b.node("Attention", {t, t, t}, {{"q_num_heads", attr_int(2)}, {"kv_num_heads", attr_int(2)}}, "attention");
            }),
            "");
}

Value* shape_of(GraphBuilder& b, const std::string& name, const std::vector<int64_t>& dims) {
  Tensor t(DType::I64, {static_cast<int64_t>(dims.size())});
  for (size_t i = 0; i < dims.size(); ++i) t.set_i64(static_cast<int64_t>(i), dims[i]);
  return b.constant(name, std::move(t));
}

TEST(BatchItems, MovingTheBatchAxisAndBackRunsApart) {
  // Each item is computed alone wherever its axis is; only the outputs must have it first.
  EXPECT_EQ(check([](GraphBuilder& b, Value* a) {
              Value* t = b.node("Transpose", {a}, {{"perm", attr_ints({1, 0, 2, 3})}}, "swap");
              t = b.node("Relu", {t}, {}, "relu2");
              return b.node("Transpose", {t}, {{"perm", attr_ints({1, 0, 2, 3})}}, "back");
            }),
            "");
}

TEST(BatchItems, AnOutputWithTheBatchMovedIsRefused) {
  const std::string why = check([](GraphBuilder& b, Value* a) { return b.node("Transpose", {a}, {{"perm", attr_ints({1, 0, 2, 3})}}, "swap"); });
  EXPECT_NE(why.find("not one row per item"), std::string::npos) << why;
}

TEST(BatchItems, ItemsInterleavedByAReshapeAreRefused) {
  // [8, n, 64] flattened to [8n, 64]: row t * n + item, so an item's rows are not a block.
  const std::string why = check([](GraphBuilder& b, Value* a) {
    Value* t = b.node("Transpose", {a}, {{"perm", attr_ints({1, 0, 2, 3})}}, "swap");
    return b.node("Reshape", {t, shape_of(b, "rows", {-1, 64})}, {}, "rows");
  });
  EXPECT_NE(why.find("the items interleaved"), std::string::npos) << why;
}

TEST(BatchItems, PyTorchMultiheadAttentionRunsApart) {
  // nn.MultiheadAttention's export: tokens first ([8, n, 64]), the batch merged with 2 heads
  // ([8, 2n, 32]), heads first for the products ([2n, 8, 32]), and back: the items move and
  // merge with the heads, but each is computed alone.
  EXPECT_EQ(check([](GraphBuilder& b, Value* a) {
              const int64_t n = a->shape[0];
              Value* x = b.node("Reshape", {a, shape_of(b, "tokens", {n, 8, 64})}, {}, "tokens");
              Value* t = b.node("Transpose", {x}, {{"perm", attr_ints({1, 0, 2})}}, "seq_first");
              t = b.node("Reshape", {t, shape_of(b, "heads", {8, 2 * n, 32})}, {}, "heads");
              Value* h = b.node("Transpose", {t}, {{"perm", attr_ints({1, 0, 2})}}, "heads_first");
              Value* kt = b.node("Transpose", {h}, {{"perm", attr_ints({0, 2, 1})}}, "kt");
              Value* s = b.node("MatMul", {h, kt}, {}, "scores");
              s = b.node("Softmax", {s}, {{"axis", attr_int(-1)}}, "softmax");
              Value* o = b.node("MatMul", {s, h}, {}, "context");
              o = b.node("Transpose", {o}, {{"perm", attr_ints({1, 0, 2})}}, "seq_first2");
              o = b.node("Reshape", {o, shape_of(b, "joined", {8, n, 64})}, {}, "joined");
              return b.node("Transpose", {o}, {{"perm", attr_ints({1, 0, 2})}}, "batch_first");
            }),
            "");
}

TEST(BatchItems, ASoftmaxOverMovedItemsIsRefused) {
  const std::string why = check([](GraphBuilder& b, Value* a) {
    Value* t = b.node("Transpose", {a}, {{"perm", attr_ints({1, 2, 3, 0})}}, "last");
    t = b.node("Softmax", {t}, {{"axis", attr_int(-1)}}, "soft");
    return b.node("Transpose", {t}, {{"perm", attr_ints({3, 0, 1, 2})}}, "first");
  });
  EXPECT_NE(why.find("node 'soft'"), std::string::npos) << why;
  EXPECT_NE(why.find("along the batch axis"), std::string::npos) << why;
}

TEST(BatchItems, AnOpNotKnownToActPerItemIsRefused) {
  const std::string why = check([](GraphBuilder& b, Value* a) { return b.node("LpNormalization", {a}, {{"axis", attr_int(1)}}, "lpn"); });
  EXPECT_NE(why.find("node 'lpn'"), std::string::npos) << why;
  EXPECT_NE(why.find("not known to act on each batch item apart"), std::string::npos) << why;
}

TEST(BatchItems, WeightsUsedOnceAreTheMatrixVectorProducts) {
  // The conv uses each of its 8*8*3*3 weights at 64 positions; the classifier's 1000x8 weights
  // and 1000 biases are used once each at batch 1.
  auto g1 = model(1, classifier);
  EXPECT_DOUBLE_EQ(weight_bytes_used_once(*g1), (1000.0 * 8 + 1000) * 4);
}

}  // namespace
}  // namespace onnxc::test
