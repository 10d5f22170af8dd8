// tests/passes/test_dynamic_dims.cc — following a run-time token dimension through a model
// (passes/dynamic_dims.h): the same hand-built model at n = 16, 15 and 14 tokens; accepted with
// the extents of its values when a build for 16 computes every n in its first entries (attention
// listed as needing n), refused naming the node when a node mixes the tokens (softmax or a
// reduction over them, a product contracting them, a reshape merging them with the batch, a
// number computed from n, a concatenation after them, a gather counting from the end).
#include <gtest/gtest.h>

#include <cmath>

#include "pass_test_util.h"
#include "passes/dynamic_dims.h"

namespace onnxc::test {
namespace {

// Builds the model's nodes after input x[batch, n, 16] and returns its output.
using Body = std::function<Value*(GraphBuilder&, Value* x, int64_t n)>;

std::unique_ptr<Graph> model(int64_t n, const Body& body, int64_t batch, int opset) {
  GraphBuilder b;
  b.g->opset = opset;
  Value* x = b.input("x", {batch, n, 16});
  b.output(body(b, x, n));
  return std::move(b.g);
}

struct Result {
  std::string why;
  DynamicDimsPlan plan;
  std::vector<std::unique_ptr<Graph>> gs;
};

Result check(const Body& body, int64_t batch = 1, int opset = 14) {
  Result r;
  const std::vector<int64_t> ns{16, 15, 14};
  std::vector<const Graph*> views;
  for (int64_t n : ns) {
    r.gs.push_back(model(n, body, batch, opset));
    views.push_back(r.gs.back().get());
  }
  r.why = dynamic_dims_check(views, ns, "seq", &r.plan);
  return r;
}

Value* shape_constant(GraphBuilder& b, const std::string& name, const std::vector<int64_t>& dims) {
  Tensor t(DType::I64, {static_cast<int64_t>(dims.size())});
  for (size_t i = 0; i < dims.size(); ++i) t.set_i64(static_cast<int64_t>(i), dims[i]);
  return b.constant(name, std::move(t));
}

// One encoder layer: packed Q/K/V projection, Split, Attention (2 heads of 8), output
// projection, residual Add, LayerNormalization.
Value* encoder(GraphBuilder& b, Value* x, int64_t) {
  Value* qkv = b.node("MatMul", {x, b.random_constant("wqkv", {16, 48})}, {}, "qkv");
  qkv = b.node("Add", {qkv, b.random_constant("bqkv", {48})}, {}, "qkv_bias");
  std::vector<Value*> s = b.node_n("Split", {qkv, shape_constant(b, "sizes", {16, 16, 16})}, 3, {{"axis", attr_int(2)}}, "split");
  Value* a = b.node("Attention", {s[0], s[1], s[2]}, {{"q_num_heads", attr_int(2)}, {"kv_num_heads", attr_int(2)}}, "attention");
  Value* p = b.node("MatMul", {a, b.random_constant("wo", {16, 16})}, {}, "proj");
  Value* h = b.node("Add", {p, x}, {}, "residual");
  return b.node("LayerNormalization", {h, b.random_constant("gamma", {16}), b.random_constant("beta", {16})}, {{"axis", attr_int(-1)}},
                "ln");
}

TEST(DynamicDims, AnEncoderLayerKeepsTheTokensApartButItsAttention) {
  Result r = check(encoder, 1, 23);
  ASSERT_EQ(r.why, "");
  const Graph& g = *r.gs[0];
  const Value* x = g.inputs[0];
  ASSERT_TRUE(r.plan.varying.count(x));
  const std::vector<Extent> ex = r.plan.varying.at(x);
  EXPECT_EQ(ex[0], (Extent{0, 1}));
  EXPECT_EQ(ex[1], (Extent{1, 0}));
  EXPECT_EQ(ex[2], (Extent{0, 16}));
  ASSERT_EQ(r.plan.bounded.size(), 1u);
  EXPECT_EQ(r.plan.bounded[0].node->name, "attention");
  EXPECT_TRUE(r.plan.bounded[0].queries);
  EXPECT_TRUE(r.plan.varying.count(g.outputs[0]));
  EXPECT_EQ(r.plan.max, 16);
  // For speed: the products, the Split of Q, K and V and the LayerNorm stop at the run's n rows.
  std::vector<std::string> rows;
  for (const RunStop& s : r.plan.rows) {
    rows.push_back(s.node->name);
    EXPECT_EQ(s.extent, (Extent{1, 0})) << s.node->name;
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"qkv", "split", "proj", "ln"}));
}

TEST(DynamicDims, HeadsSplitByReshapeAndTransposeAreKept) {
  Result r = check([](GraphBuilder& b, Value* x, int64_t n) {
    Value* h = b.node("Reshape", {x, shape_constant(b, "heads", {1, n, 2, 8})}, {}, "split_heads");
    h = b.node("Transpose", {h}, {{"perm", attr_ints({0, 2, 1, 3})}}, "to_heads");
    h = b.node("Relu", {h}, {}, "relu");
    h = b.node("Transpose", {h}, {{"perm", attr_ints({0, 2, 1, 3})}}, "from_heads");
    return b.node("Reshape", {h, shape_constant(b, "joined", {1, n, 16})}, {}, "join_heads");
  });
  EXPECT_EQ(r.why, "");
  EXPECT_TRUE(r.plan.bounded.empty());
}

TEST(DynamicDims, MergingTheTokensWithTheFeaturesIsKept) {
  // [1, n, 16] -> [1, 16n]: the run's entries are still the first 16n of the row.
  Result r = check([](GraphBuilder& b, Value* x, int64_t n) {
    return b.node("Reshape", {x, shape_constant(b, "flat", {1, 16 * n})}, {}, "flat");
  });
  ASSERT_EQ(r.why, "");
  const Value* y = r.gs[0]->outputs[0];
  EXPECT_EQ(r.plan.varying.at(y)[1], (Extent{16, 0}));
  EXPECT_EQ(extent_text(r.plan.varying.at(y)[1], "seq"), "16*seq");
}

TEST(DynamicDims, MergingTheTokensWithABatchIsRefused) {
  // [2, n, 16] -> [2n, 16]: at n < 16 the second item's rows would start at row n, not 16.
  const std::string why = check([](GraphBuilder& b, Value* x, int64_t n) {
    return b.node("Reshape", {x, shape_constant(b, "rows", {2 * n, 16})}, {}, "rows");
  }, 2).why;
  EXPECT_NE(why.find("node 'rows'"), std::string::npos) << why;
  EXPECT_NE(why.find("moves the entries"), std::string::npos) << why;
}

TEST(DynamicDims, SoftmaxOverTheTokensIsRefused) {
  const std::string why = check([](GraphBuilder& b, Value* x, int64_t) {
    Value* t = b.node("Transpose", {x}, {{"perm", attr_ints({0, 2, 1})}}, "t");
    return b.node("Softmax", {t}, {{"axis", attr_int(-1)}}, "soft");
  }).why;
  EXPECT_NE(why.find("node 'soft'"), std::string::npos) << why;
  EXPECT_NE(why.find("normalises along dimension 2"), std::string::npos) << why;
}

TEST(DynamicDims, MeanOverTheTokensIsRefused) {
  const std::string why = check([](GraphBuilder& b, Value* x, int64_t) {
    return b.node("ReduceMean", {x}, {{"axes", attr_ints({1})}}, "pool");
  }).why;
  EXPECT_NE(why.find("node 'pool'"), std::string::npos) << why;
  EXPECT_NE(why.find("reduces along dimension 1"), std::string::npos) << why;
}

TEST(DynamicDims, AProductContractingTheTokensIsRefused) {
  const std::string why = check([](GraphBuilder& b, Value* x, int64_t) {
    Value* t = b.node("Transpose", {x}, {{"perm", attr_ints({0, 2, 1})}}, "t");
    return b.node("MatMul", {t, x}, {}, "gram");
  }).why;
  EXPECT_NE(why.find("node 'gram'"), std::string::npos) << why;
  EXPECT_NE(why.find("contracts over the run-time dimension"), std::string::npos) << why;
}

TEST(DynamicDims, ScoresOfTokensByTokensAreKeptButNotFlattened) {
  // x xᵀ is [1, n, n]: two run-time dimensions, fine; flattened to [1, n*n] it is not a*n+b.
  Result ok = check([](GraphBuilder& b, Value* x, int64_t) {
    Value* t = b.node("Transpose", {x}, {{"perm", attr_ints({0, 2, 1})}}, "t");
    return b.node("MatMul", {x, t}, {}, "scores");
  });
  EXPECT_EQ(ok.why, "");
  const std::string why = check([](GraphBuilder& b, Value* x, int64_t n) {
    Value* t = b.node("Transpose", {x}, {{"perm", attr_ints({0, 2, 1})}}, "t");
    Value* s = b.node("MatMul", {x, t}, {}, "scores");
    return b.node("Reshape", {s, shape_constant(b, "flat", {1, n * n})}, {}, "flat");
  }).why;
  EXPECT_NE(why.find("node 'flat'"), std::string::npos) << why;
  EXPECT_NE(why.find("not of the form a*seq+b"), std::string::npos) << why;
}

TEST(DynamicDims, ANumberComputedFromTheSizeIsRefused) {
  // x / n: right at MAX only.
  const std::string why = check([](GraphBuilder& b, Value* x, int64_t n) {
    Tensor c(DType::F32, {});
    c.set(0, static_cast<double>(n));
    return b.node("Div", {x, b.constant("count", std::move(c))}, {}, "mean");
  }).why;
  EXPECT_NE(why.find("node 'mean'"), std::string::npos) << why;
  EXPECT_NE(why.find("holds numbers computed from seq"), std::string::npos) << why;
}

// A [n, n] mask added to the token-by-token scores: causal (the same first entries at every n)
// or one that is not (its values shift with n).
Body masked(bool causal) {
  return [causal](GraphBuilder& b, Value* x, int64_t n) {
    Value* t = b.node("Transpose", {x}, {{"perm", attr_ints({0, 2, 1})}}, "t");
    Value* s = b.node("MatMul", {x, t}, {}, "scores");
    Tensor m(DType::F32, {n, n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) m.set(i * n + j, causal ? (j > i ? -INFINITY : 0.0) : static_cast<double>(n - j));
    return b.node("Add", {s, b.constant("mask", std::move(m))}, {}, "masked");
  };
}

TEST(DynamicDims, ACausalMaskIsKept) { EXPECT_EQ(check(masked(true)).why, ""); }

TEST(DynamicDims, AMaskThatShiftsWithTheSizeIsRefused) {
  const std::string why = check(masked(false)).why;
  EXPECT_NE(why.find("node 'masked'"), std::string::npos) << why;
  EXPECT_NE(why.find("is not the first entries of the one at seq=16"), std::string::npos) << why;
}

TEST(DynamicDims, AClassTokenBeforeTheTokensIsKeptAfterThemRefused) {
  auto cat = [](bool first) {
    return [first](GraphBuilder& b, Value* x, int64_t) {
      Value* cls = b.random_constant("cls", {1, 1, 16});
      return b.node("Concat", first ? std::vector<Value*>{cls, x} : std::vector<Value*>{x, cls}, {{"axis", attr_int(1)}}, "cat");
    };
  };
  Result ok = check(cat(true));
  ASSERT_EQ(ok.why, "");
  EXPECT_EQ(ok.plan.varying.at(ok.gs[0]->outputs[0])[1], (Extent{1, 1}));
  const std::string why = check(cat(false)).why;
  EXPECT_NE(why.find("node 'cat'"), std::string::npos) << why;
  EXPECT_NE(why.find("concatenates along the run-time dimension"), std::string::npos) << why;
}

TEST(DynamicDims, GatheringTheFirstTokenIsKeptTheLastRefused) {
  auto pick = [](int64_t i) {
    return [i](GraphBuilder& b, Value* x, int64_t) {
      Tensor t(DType::I64, {});
      t.set_i64(0, i);
      return b.node("Gather", {x, b.constant("index", std::move(t))}, {{"axis", attr_int(1)}}, "pick");
    };
  };
  EXPECT_EQ(check(pick(0)).why, "");
  const std::string why = check(pick(-1)).why;
  EXPECT_NE(why.find("node 'pick'"), std::string::npos) << why;
  EXPECT_NE(why.find("counts from the end"), std::string::npos) << why;
}

TEST(DynamicDims, GraphsThatDifferAreRefused) {
  const std::string why = check([](GraphBuilder& b, Value* x, int64_t n) {
    return n == 16 ? b.node("Relu", {x}, {}, "act") : b.node("Sigmoid", {x}, {}, "act");
  }).why;
  EXPECT_NE(why.find("the graphs differ"), std::string::npos) << why;
}

}  // namespace
}  // namespace onnxc::test
