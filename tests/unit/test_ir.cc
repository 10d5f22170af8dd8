// Unit tests of IR basics: shapes and broadcasting, tensor element access,
// attribute reading, and one-node reference evaluation against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "ir/eval.h"
#include "ir/op.h"
#include "ir/ops/signal.h"

using namespace onnxc;

TEST(Shape, NumelAndStrides) {
  EXPECT_EQ(numel({2, 3, 4}), 24);
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({5, 0, 7}), 0);
  EXPECT_EQ(strides_of({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_THROW(numel({-1, 3}), CompileError);
  EXPECT_THROW(numel({int64_t{1} << 40, int64_t{1} << 40}), CompileError);
}

TEST(Shape, Broadcast) {
  Shape out;
  ASSERT_TRUE(broadcast_shapes({2, 1, 4}, {3, 1}, &out));
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  ASSERT_TRUE(broadcast_shapes({}, {5}, &out));
  EXPECT_EQ(out, (Shape{5}));
  EXPECT_FALSE(broadcast_shapes({2, 3}, {4, 3}, &out));
}

TEST(Shape, NormalizeAxis) {
  int64_t a = -1;
  EXPECT_TRUE(normalize_axis(a, 4));
  EXPECT_EQ(a, 3);
  a = 4;
  EXPECT_FALSE(normalize_axis(a, 4));
  a = -5;
  EXPECT_FALSE(normalize_axis(a, 4));
}

TEST(Tensor, GenericAccessSaturatesAndKeepsInt64) {
  Tensor t(DType::I8, {3});
  t.set(0, 300.0);
  t.set(1, -300.0);
  t.set(2, std::nan(""));
  EXPECT_EQ(t.get(0), 127);
  EXPECT_EQ(t.get(1), -128);
  EXPECT_EQ(t.get(2), 0);
  Tensor big(DType::I64, {1});
  big.set_i64(0, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(big.get_i64(0), std::numeric_limits<int64_t>::max());
  Tensor b(DType::Bool, {2});
  b.set(0, 0.5);
  EXPECT_EQ(b.get(0), 1);
  EXPECT_EQ(b.get(1), 0);
}

// Builds a graph with one node over constant inputs and runs import-style preparation.
struct OneNode {
  Graph g;
  Node* n = nullptr;
  OneNode(const std::string& op, std::vector<Tensor> ins, int64_t opset = 13) {
    g.opset = opset;
    auto node = std::make_unique<Node>();
    node->name = "n";
    node->op_type = op;
    node->opset = opset;
    for (size_t i = 0; i < ins.size(); ++i) {
      Value* v = g.add_value("in" + std::to_string(i));
      v->dtype = ins[i].dtype;
      v->shape = ins[i].shape;
      v->shape_known = true;
      v->constant = std::make_shared<Tensor>(ins[i]);
      node->inputs.push_back(v);
    }
    Value* out = g.add_value("out");
    out->producer = node.get();
    out->is_output = true;
    node->outputs.push_back(out);
    g.outputs.push_back(out);
    n = node.get();
    g.nodes.push_back(std::move(node));
  }
  const Tensor& run() {
    prepare_ops(g);
    infer_shapes(g);
    verify_graph(g);
    return *g.outputs[0]->constant;
  }
};

// float16: every one of the 65536 values widens exactly and narrows back to itself; every
// midpoint between two neighbours rounds to the even one, and one float ulp off it to the
// nearer one. The widened values are checked against the definition of binary16.
TEST(Float16, ExhaustiveAgainstTheDefinition) {
  auto value = [](uint16_t h) {  // (-1)^s * 2^(e-15) * 1.m, or 2^-14 * 0.m
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const double mag = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -mag : mag;
  };
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    const double want = value(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
    ASSERT_EQ(float_to_half(f), h) << h;
    // the midpoint to the next value up in magnitude (finite, same sign)
    if ((h & 0x7fff) >= 0x7bff) continue;
    const double up = value(static_cast<uint16_t>(h + 1)), mid = (want + up) / 2;
    const float fm = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(fm), mid) << h;  // midpoints are exact floats
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(float_to_half(fm), even) << h;
    const float toward = std::nextafter(fm, static_cast<float>(want)), away = std::nextafter(fm, static_cast<float>(up));
    ASSERT_EQ(float_to_half(toward), h) << h;
    ASSERT_EQ(float_to_half(away), h + 1) << h;
  }
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);  // 65504, the largest half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // the midpoint to 65536 rounds to even: inf
  EXPECT_EQ(float_to_half(-1e30f), 0xfc00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0);           // half the smallest subnormal: ties to 0
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 1);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(Eval, AddBroadcastsLikeNumpy) {
  OneNode t("Add", {Tensor::from_f32({1, 2, 3, 4, 5, 6}, {2, 3}), Tensor::from_f32({10, 20, 30}, {3})});
  const Tensor& r = t.run();
  EXPECT_EQ(r.shape, (Shape{2, 3}));
  std::vector<float> want{11, 22, 33, 14, 25, 36};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.data<float>()[i], want[i]);
}

TEST(Eval, IntegerDivTruncatesAndAddWraps) {
  OneNode d("Div", {Tensor::from_i64({7, -7}, DType::I64), Tensor::from_i64({2, 2}, DType::I64)});
  EXPECT_EQ(d.run().to_i64(), (std::vector<int64_t>{3, -3}));
  OneNode a("Add", {Tensor::from_i64({250}, DType::U8), Tensor::from_i64({10}, DType::U8)});
  EXPECT_EQ(a.run().to_i64(), (std::vector<int64_t>{4}));
}

TEST(Eval, LeakyReluReadsAlphaAndRejectsUnknownAttributes) {
  OneNode t("LeakyRelu", {Tensor::from_f32({-2, 3}, {2})});
  Attr a;
  a.type = Attr::Type::Float;
  a.f = 0.5;
  t.n->attrs["alpha"] = a;
  const Tensor& r = t.run();
  EXPECT_EQ(r.data<float>()[0], -1.0f);
  EXPECT_EQ(r.data<float>()[1], 3.0f);
  OneNode u("LeakyRelu", {Tensor::from_f32({1}, {1})});
  u.n->attrs["alpah"] = a;
  try {
    u.run();
    FAIL() << "unknown attribute accepted";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown attribute 'alpah'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 'n' (LeakyRelu, opset 13)"), std::string::npos) << e.what();
  }
}

TEST(Eval, AttributeOfWrongTypeIsAnError) {
  OneNode t("LeakyRelu", {Tensor::from_f32({1}, {1})});
  Attr a;
  a.type = Attr::Type::Int;
  a.i = 1;
  t.n->attrs["alpha"] = a;
  EXPECT_THROW(t.run(), CompileError);
}

TEST(Ops, RegistryKnowsTheCoreOps) {
  for (const char* op : {"Relu", "Add", "Conv", "Gemm", "Reshape", "Concat", "MaxPool", "Resize"})
    EXPECT_NE(find_op(op), nullptr) << op;
  EXPECT_EQ(find_op("NoSuchOp"), nullptr);
}

// The DFT twiddles and the windows: exact at the eighth turns, within an ulp or two of
// double elsewhere, periodic in t (negative t included).
TEST(Signal, UnitRootIsExactWhereItCanBe) {
  double c, s;
  const int64_t quarter[][3] = {{0, 1, 0}, {1, 0, 1}, {2, -1, 0}, {3, 0, -1}};
  for (auto& q : quarter) {
    unit_root(q[0] * 5, 20, &c, &s);
    EXPECT_EQ(c, static_cast<double>(q[1])) << q[0];
    EXPECT_EQ(s, static_cast<double>(q[2])) << q[0];
  }
  unit_root(1, 8, &c, &s);
  EXPECT_EQ(c, s);
  EXPECT_EQ(c, std::sqrt(0.5));
  for (int64_t n : {1, 3, 7, 10, 12, 97, 1024, 48000})
    for (int64_t t = -2 * n; t < 2 * n; t += n / 7 + 1) {
      unit_root(t, n, &c, &s);
      const long double a = 2 * 3.141592653589793238462643383279502884L * static_cast<long double>(((t % n) + n) % n) / n;
      EXPECT_NEAR(c, static_cast<double>(cosl(a)), 4e-16) << t << "/" << n;
      EXPECT_NEAR(s, static_cast<double>(sinl(a)), 4e-16) << t << "/" << n;
    }
}
