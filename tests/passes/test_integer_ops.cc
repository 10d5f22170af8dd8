// tests/passes/test_integer_ops.cc — the integer-ops pass (passes/integer_ops.cc): which
// DQ → Conv → Q sandwiches become QLinearConv, which DQ, DQ → Add → Q ones onnxc.qdq_add and
// which functions of one 8-bit tensor (DQ → elementwise float ops → Q) onnxc.lookup, which
// DQ → MaxPool → Q and DQ... → Concat → Q ones a pool and a Concat on bytes, with which
// inputs, which stay, and that the reference evaluator's outputs after the pass
// (QLinearConv's integer arithmetic) are within one output step of those before it (a float
// convolution of dequantized values, rounded), equal for most elements; the generated C of
// the convolutions matches the reference (tests/quant/run_qdq_models.py checks onnxc.qdq_add's
// C against ONNX Runtime).
// tests/zoo (NAME_qdq models) checks ONNX Runtime's quantized models end to end.
#include <cmath>

#include "tests/codegen/c_run.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

constexpr float kYScale = 0.05f;

Value* scalar_f32(GraphBuilder& b, const std::string& name, float v) { return b.constant(name, Tensor::from_f32({v}, {})); }
Value* scalar_int(GraphBuilder& b, const std::string& name, int64_t v, DType t) { return b.constant(name, Tensor::from_i64({v}, t, {})); }

struct Options {
  DType act = DType::U8;   // activations' type
  bool per_channel = true;
  bool bias = true;
  float bias_scale_error = 0;  // relative error put into the bias scale
  bool relu = false;
  float clip_hi = 0;  // > 0: Clip(0, clip_hi) with constant bounds instead of the Relu
  int64_t y_zero = 3;
  int64_t group = 1;
  bool conv_read_twice = false;
};

// x (float) → Q → DQ → Conv(DQ(W int8), DQ(B int32)) [→ Relu] → Q → DQ → output, M = 6
// output channels, C = 4 input channels, 3×3 kernel, pads 1, stride 2 over 9×7.
Graph& sandwich(GraphBuilder& b, const Options& o) {
  const int64_t M = 6, C = 4, CG = C / o.group;
  const int64_t xz = o.act == DType::U8 ? 128 : -5;
  const float sx = 0.02f;
  Value* x = b.input("x", {1, C, 9, 7});
  Value* xq = b.node("QuantizeLinear", {x, scalar_f32(b, "sx", sx), scalar_int(b, "zx", xz, o.act)});
  Value* xf = b.node("DequantizeLinear", {xq, scalar_f32(b, "sx2", sx), scalar_int(b, "zx2", xz, o.act)});
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> wd(-127, 127);
  Tensor w(DType::I8, {M, CG, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.set(i, wd(rng));
  std::vector<float> sw;
  for (int64_t m = 0; m < M; ++m) sw.push_back(0.004f + 0.001f * static_cast<float>(m));
  Value* ws = o.per_channel ? b.constant("sw", Tensor::from_f32(sw, {M})) : scalar_f32(b, "sw", sw[0]);
  Value* wz = o.per_channel ? b.constant("zw", Tensor::from_i64(std::vector<int64_t>(M, 0), DType::I8, {M}))
                            : scalar_int(b, "zw", 0, DType::I8);
  Value* wf = b.node("DequantizeLinear", {b.constant("wq", w), ws, wz}, {{"axis", attr_int(0)}});
  std::vector<Value*> conv_in = {xf, wf};
  if (o.bias) {
    Tensor bq(DType::I32, {M});
    std::vector<float> sb;
    for (int64_t m = 0; m < M; ++m) {
      bq.set(m, static_cast<double>(wd(rng) * 40));
      sb.push_back(sx * sw[o.per_channel ? m : 0] * (1 + o.bias_scale_error));
    }
    conv_in.push_back(b.node("DequantizeLinear", {b.constant("bq", bq), b.constant("sb", Tensor::from_f32(sb, {M})),
                                                  b.constant("zb", Tensor::from_i64(std::vector<int64_t>(M, 0), DType::I32, {M}))},
                             {{"axis", attr_int(0)}}));
  }
  Value* y = b.node("Conv", conv_in,
                    {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({2, 2})},
                     {"group", attr_int(o.group)}},
                    "conv");
  if (o.conv_read_twice) b.output(b.node("Relu", {y}));
  if (o.relu && o.clip_hi > 0) y = b.node("Clip", {y, scalar_f32(b, "lo", 0.0f), scalar_f32(b, "hi", o.clip_hi)});
  else if (o.relu) y = b.node("Relu", {y});
  Value* yq = b.node("QuantizeLinear", {y, scalar_f32(b, "sy", kYScale), scalar_int(b, "zy", o.y_zero, o.act)});
  b.output(b.node("DequantizeLinear", {yq, scalar_f32(b, "sy2", kYScale), scalar_int(b, "zy2", o.y_zero, o.act)}));
  return *b.g;
}

// Runs the pass; the outputs before and after are at most one step apart.
bool integer(Graph& g) {
  return run_pass_checked(g, [](Graph& gr) { return integer_ops(gr, test_pass_options()); }, kYScale * 1.001);
}

TEST(IntegerOps, PerChannelConvWithBias) {
  GraphBuilder b;
  Graph& g = sandwich(b, {});
  EXPECT_TRUE(integer(g));
  ASSERT_EQ(count_ops(g, "QLinearConv"), 1u);
  EXPECT_EQ(count_ops(g, "Conv"), 0u);
  EXPECT_EQ(count_ops(g, "QuantizeLinear"), 1u);    // the input's
  EXPECT_EQ(count_ops(g, "DequantizeLinear"), 1u);  // the output's
  for (auto& n : g.nodes)
    if (n->op_type == "QLinearConv") {
      EXPECT_EQ(n->inputs.size(), 9u);
      EXPECT_EQ(n->in(0)->dtype, DType::U8);
      EXPECT_EQ(n->in(3)->dtype, DType::I8);
      EXPECT_EQ(n->in(8)->dtype, DType::I32);
      EXPECT_EQ(n->out(0)->dtype, DType::U8);
      EXPECT_EQ(n->attrs.at("strides").ints, (std::vector<int64_t>{2, 2}));
      EXPECT_EQ(n->origin.size(), 5u);  // DQ x, DQ W, DQ B, Conv, Q
    }
  expect_c_matches_reference(g, "integer_ops_conv", 3);
}

// The integer result is exact where the float one is not: most elements agree exactly.
TEST(IntegerOps, MostElementsEqualTheFloatSandwich) {
  GraphBuilder b;
  Graph& g = sandwich(b, {});
  auto in = random_inputs(g);
  auto before = reference_outputs(g, in);
  ASSERT_TRUE(integer_ops(g, test_pass_options()));
  auto after = reference_outputs(g, in);
  int64_t same = 0, n = before[0].numel();
  for (int64_t i = 0; i < n; ++i) same += before[0].get(i) == after[0].get(i);
  EXPECT_GE(same, n * 9 / 10) << same << " of " << n << " equal";
}

TEST(IntegerOps, Int8ActivationsPerTensorNoBias) {
  GraphBuilder b;
  Options o;
  o.act = DType::I8;
  o.per_channel = false;
  o.bias = false;
  Graph& g = sandwich(b, o);
  EXPECT_TRUE(integer(g));
  EXPECT_EQ(count_ops(g, "QLinearConv"), 1u);
  expect_c_matches_reference(g, "integer_ops_s8", 4);
}

TEST(IntegerOps, GroupedConv) {
  GraphBuilder b;
  Options o;
  o.group = 2;
  Graph& g = sandwich(b, o);
  EXPECT_TRUE(integer(g));
  EXPECT_EQ(count_ops(g, "QLinearConv"), 1u);
}

// Relu goes when the output zero point is the type's lowest value (saturation is the Relu).
TEST(IntegerOps, ReluAtTheZeroPointGoes) {
  GraphBuilder b;
  Options o;
  o.relu = true;
  o.y_zero = 0;
  Graph& g = sandwich(b, o);
  EXPECT_TRUE(integer(g));
  EXPECT_EQ(count_ops(g, "QLinearConv"), 1u);
  EXPECT_EQ(count_ops(g, "Relu"), 0u);
}

// Clip(0, hi) goes when the saturation clips there too: zero point 0, and hi at or past the
// top of the output's range (Relu6 with the range's end within 6)...
TEST(IntegerOps, ClipTheSaturationEnforcesGoes) {
  GraphBuilder b;
  Options o;
  o.relu = true;
  o.y_zero = 0;
  o.clip_hi = 255 * kYScale;  // exactly the top: Q(hi) = 255
  Graph& g = sandwich(b, o);
  EXPECT_TRUE(integer(g));
  EXPECT_EQ(count_ops(g, "QLinearConv"), 1u);
  EXPECT_EQ(count_ops(g, "Clip"), 0u);
}

// ... and stays when its upper bound falls inside the range (Q(hi) < 255: it clips more).
TEST(IntegerOps, ClipInsideTheRangeStays) {
  GraphBuilder b;
  Options o;
  o.relu = true;
  o.y_zero = 0;
  o.clip_hi = 100 * kYScale;
  Graph& g = sandwich(b, o);
  EXPECT_FALSE(integer(g));
  EXPECT_EQ(count_ops(g, "Clip"), 1u);
}

TEST(IntegerOps, ReluAboveTheZeroPointStays) {
  GraphBuilder b;
  Options o;
  o.relu = true;
  Graph& g = sandwich(b, o);
  EXPECT_FALSE(integer(g));
  EXPECT_EQ(count_ops(g, "Conv"), 1u);
}

TEST(IntegerOps, BiasAtAnotherScaleStays) {
  GraphBuilder b;
  Options o;
  o.bias_scale_error = 1e-3f;
  Graph& g = sandwich(b, o);
  EXPECT_FALSE(integer(g));
  EXPECT_EQ(count_ops(g, "QLinearConv"), 0u);
}

TEST(IntegerOps, ConvReadElsewhereStays) {
  GraphBuilder b;
  Options o;
  o.conv_read_twice = true;
  Graph& g = sandwich(b, o);
  EXPECT_FALSE(integer(g));
  EXPECT_EQ(count_ops(g, "Conv"), 1u);
}

// ---------------------------------------------------------------- residual adds (onnxc.qdq_add)

struct AddOptions {
  bool relu = false;
  int64_t y_zero = 3;
  bool add_read_twice = false;
  bool a_per_axis = false;  // a's DequantizeLinear per channel: stays float
};

// Two float inputs → Q → DQ each → Add [→ Relu] → Q → DQ → output.
Graph& residual(GraphBuilder& b, const AddOptions& o) {
  const int64_t C = 4;
  Value* x1 = b.input("x1", {1, C, 5, 6});
  Value* x2 = b.input("x2", {1, C, 5, 6});
  Value* q1 = b.node("QuantizeLinear", {x1, scalar_f32(b, "s1", 0.02f), scalar_int(b, "z1", 128, DType::U8)});
  Value* q2 = b.node("QuantizeLinear", {x2, scalar_f32(b, "s2", 0.03f), scalar_int(b, "z2", 120, DType::U8)});
  Value* a = o.a_per_axis ? b.node("DequantizeLinear",
                                   {q1, b.constant("s1c", Tensor::from_f32({0.02f, 0.021f, 0.019f, 0.02f}, {C})),
                                    b.constant("z1c", Tensor::from_i64({128, 128, 127, 128}, DType::U8, {C}))},
                                   {{"axis", attr_int(1)}})
                          : b.node("DequantizeLinear", {q1, scalar_f32(b, "s1d", 0.02f), scalar_int(b, "z1d", 128, DType::U8)});
  Value* c = b.node("DequantizeLinear", {q2, scalar_f32(b, "s2d", 0.03f), scalar_int(b, "z2d", 120, DType::U8)});
  Value* y = b.node("Add", {a, c}, {}, "add");
  if (o.add_read_twice) b.output(b.node("Neg", {y}));
  if (o.relu) y = b.node("Relu", {y});
  Value* yq = b.node("QuantizeLinear", {y, scalar_f32(b, "sy", kYScale), scalar_int(b, "zy", o.y_zero, DType::U8)});
  b.output(b.node("DequantizeLinear", {yq, scalar_f32(b, "sy2", kYScale), scalar_int(b, "zy2", o.y_zero, DType::U8)}));
  return *b.g;
}

// The Add, its DequantizeLinear inputs, the Relu (the saturation at zero point 0 is the Relu)
// and the QuantizeLinear become one onnxc.qdq_add of the two uint8 tensors; the reference's
// outputs stay within one step (the same float arithmetic; an FMA may round once less).
TEST(IntegerOps, ResidualAddBecomesQdqAdd) {
  GraphBuilder b;
  AddOptions o;
  o.relu = true;
  o.y_zero = 0;
  Graph& g = residual(b, o);
  EXPECT_TRUE(integer(g));
  ASSERT_EQ(count_ops(g, "onnxc.qdq_add"), 1u);
  EXPECT_EQ(count_ops(g, "Add"), 0u);
  EXPECT_EQ(count_ops(g, "Relu"), 0u);
  EXPECT_EQ(count_ops(g, "QuantizeLinear"), 2u);    // the inputs'
  EXPECT_EQ(count_ops(g, "DequantizeLinear"), 1u);  // the output's
  for (auto& n : g.nodes)
    if (n->op_type == "onnxc.qdq_add") {
      EXPECT_EQ(n->inputs.size(), 8u);
      EXPECT_EQ(n->in(0)->dtype, DType::U8);
      EXPECT_EQ(n->in(3)->dtype, DType::U8);
      EXPECT_EQ(n->out(0)->dtype, DType::U8);
      EXPECT_EQ(n->origin.size(), 5u);  // DQ a, DQ b, Add, Relu, Q
    }
}

TEST(IntegerOps, AddWithReluAboveTheZeroPointStays) {
  GraphBuilder b;
  AddOptions o;
  o.relu = true;
  Graph& g = residual(b, o);
  EXPECT_FALSE(integer(g));
  EXPECT_EQ(count_ops(g, "Add"), 1u);
}

TEST(IntegerOps, AddReadElsewhereStays) {
  GraphBuilder b;
  AddOptions o;
  o.add_read_twice = true;
  Graph& g = residual(b, o);
  EXPECT_FALSE(integer(g));
  EXPECT_EQ(count_ops(g, "Add"), 1u);
}

TEST(IntegerOps, AddOfPerAxisDequantizeStays) {
  GraphBuilder b;
  AddOptions o;
  o.a_per_axis = true;
  Graph& g = residual(b, o);
  EXPECT_FALSE(integer(g));
  EXPECT_EQ(count_ops(g, "onnxc.qdq_add"), 0u);
}


// ---------------------------------------------------------------- functions of one tensor (onnxc.lookup)

struct LookupOptions {
  DType act = DType::U8;
  bool sigmoid_is_output = false;  // the Sigmoid's output is also a graph output
  bool second_tensor = false;      // Mul's other factor dequantizes another tensor
  bool per_axis = false;           // x's DequantizeLinear per channel
  bool channel_bias = false;       // a per-channel constant added before the Q
};

// x (float) → Q → DQ → SiLU as quantize_static writes it (x * DQ(Q(Sigmoid(x)))) → Q → DQ → output.
Graph& silu(GraphBuilder& b, const LookupOptions& o) {
  const int64_t C = 4;
  const int64_t z = o.act == DType::U8 ? 128 : -2;
  Value* x = b.input("x", {1, C, 5, 6});
  Value* xq = b.node("QuantizeLinear", {x, scalar_f32(b, "sx", 0.011f), scalar_int(b, "zx", z, o.act)});
  Value* d = o.per_axis ? b.node("DequantizeLinear",
                                 {xq, b.constant("sxc", Tensor::from_f32({0.011f, 0.012f, 0.011f, 0.01f}, {C})),
                                  b.constant("zxc", Tensor::from_i64(std::vector<int64_t>(C, z), o.act, {C}))},
                                 {{"axis", attr_int(1)}})
                        : b.node("DequantizeLinear", {xq, scalar_f32(b, "sx2", 0.011f), scalar_int(b, "zx2", z, o.act)});
  Value* sg = b.node("Sigmoid", {d}, {}, "sigmoid");
  if (o.sigmoid_is_output) b.output(sg);
  Value* sq = b.node("QuantizeLinear", {sg, scalar_f32(b, "ss", 1.0f / 255), scalar_int(b, "zs", 0, DType::U8)});
  Value* sd = b.node("DequantizeLinear", {sq, scalar_f32(b, "ss2", 1.0f / 255), scalar_int(b, "zs2", 0, DType::U8)});
  Value* other = d;
  if (o.second_tensor) {
    Value* x2 = b.input("x2", {1, C, 5, 6});
    Value* q2 = b.node("QuantizeLinear", {x2, scalar_f32(b, "s2", 0.02f), scalar_int(b, "z2", z, o.act)});
    other = b.node("DequantizeLinear", {q2, scalar_f32(b, "s22", 0.02f), scalar_int(b, "z22", z, o.act)});
  }
  Value* y = b.node("Mul", {other, sd}, {}, "mul");
  if (o.channel_bias) y = b.node("Add", {y, b.constant("bias", Tensor::from_f32({0.1f, -0.1f, 0.2f, 0.0f}, {C, 1, 1}))});
  Value* yq = b.node("QuantizeLinear", {y, scalar_f32(b, "sy", 0.009f), scalar_int(b, "zy", z, o.act)});
  b.output(b.node("DequantizeLinear", {yq, scalar_f32(b, "sy2", 0.009f), scalar_int(b, "zy2", z, o.act)}));
  return *b.g;
}

// Runs the pass; the reference's outputs before and after are equal (the table holds what the
// reference ops compute).
bool integer_exact(Graph& g) {
  return run_pass_checked(g, [](Graph& gr) { return integer_ops(gr, test_pass_options()); }, 0.0);
}

// The SiLU, its inner QuantizeLinear/DequantizeLinear pair and the outer QuantizeLinear become
// one onnxc.lookup of the input's bytes (the inner pair's own region goes with the larger one).
TEST(IntegerOps, SiluBecomesLookup) {
  for (DType act : {DType::U8, DType::I8}) {
    GraphBuilder b;
    LookupOptions o;
    o.act = act;
    Graph& g = silu(b, o);
    EXPECT_TRUE(integer_exact(g));
    ASSERT_EQ(count_ops(g, "onnxc.lookup"), 1u);
    EXPECT_EQ(count_ops(g, "Sigmoid"), 0u);
    EXPECT_EQ(count_ops(g, "Mul"), 0u);
    EXPECT_EQ(count_ops(g, "onnxc.qdq_mul"), 0u);  // the SiLU's Mul goes with the table
    EXPECT_EQ(count_ops(g, "QuantizeLinear"), 1u);    // the input's
    EXPECT_EQ(count_ops(g, "DequantizeLinear"), 1u);  // the output's
    for (auto& n : g.nodes)
      if (n->op_type == "onnxc.lookup") {
        EXPECT_EQ(n->in(0)->dtype, act);
        EXPECT_EQ(n->in(1)->shape, Shape{256});
        ASSERT_TRUE(n->in(1)->constant);
        EXPECT_EQ(n->out(0)->dtype, act);
        EXPECT_EQ(n->origin.size(), 6u);  // DQ, Sigmoid, Q, DQ, Mul, Q
      }
  }
}

// Runs the pass on silu(o): whether it changes the graph, and how many nodes of each op type
// are left.
void expect_silu(const LookupOptions& o, bool changed, const std::map<std::string, size_t>& counts) {
  GraphBuilder b;
  Graph& g = silu(b, o);
  EXPECT_EQ(integer_exact(g), changed);
  for (const auto& [op, n] : counts) EXPECT_EQ(count_ops(g, op), n) << op;
}

// The Sigmoid's output is read outside: neither the SiLU nor the Sigmoid alone is a function
// whose inner values can go (no table); the product of x and the quantized Sigmoid is then one
// of two tensors (onnxc.qdq_mul).
TEST(IntegerOps, LookupWithAnInnerValueReadElsewhereStays) {
  LookupOptions o;
  o.sigmoid_is_output = true;
  expect_silu(o, true, {{"onnxc.lookup", 0}, {"Sigmoid", 1}, {"onnxc.qdq_mul", 1}});
}

// x2 * sigmoid(x), a squeeze-and-excitation's product: a function of two tensors; sigmoid(x)'s
// own Q region (DQ → Sigmoid → Q) becomes a table, the product between quantize steps
// onnxc.qdq_mul (exact: the same float operations).
TEST(IntegerOps, ProductOfTwoTensorsBecomesQdqMul) {
  LookupOptions o;
  o.second_tensor = true;
  expect_silu(o, true, {{"onnxc.lookup", 1}, {"onnxc.qdq_mul", 1}, {"Mul", 0}});
}

TEST(IntegerOps, LookupOfPerAxisDequantizeStays) {
  LookupOptions o;
  o.per_axis = true;
  expect_silu(o, false, {{"onnxc.lookup", 0}});
}

// A per-channel constant makes the function differ between channels: the SiLU's Sigmoid region
// alone becomes a table, the Mul and Add stay.
TEST(IntegerOps, LookupWithAPerChannelConstantStays) {
  LookupOptions o;
  o.channel_bias = true;
  expect_silu(o, true, {{"onnxc.lookup", 1}, {"Add", 1}, {"Mul", 1}});
}

// Clip's bounds are static inputs of one element: DQ(int8) → Clip(0, 6) → Q is a table too.
TEST(IntegerOps, ClipOfInt8BecomesLookup) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 7});
  Value* xq = b.node("QuantizeLinear", {x, scalar_f32(b, "sx", 0.03f), scalar_int(b, "zx", -10, DType::I8)});
  Value* d = b.node("DequantizeLinear", {xq, scalar_f32(b, "sx2", 0.03f), scalar_int(b, "zx2", -10, DType::I8)});
  Value* c = b.node("Clip", {d, scalar_f32(b, "lo", 0.0f), scalar_f32(b, "hi", 0.5f)});
  Value* yq = b.node("QuantizeLinear", {c, scalar_f32(b, "sy", 0.004f), scalar_int(b, "zy", 3, DType::U8)});
  b.output(b.node("DequantizeLinear", {yq, scalar_f32(b, "sy2", 0.004f), scalar_int(b, "zy2", 3, DType::U8)}));
  EXPECT_TRUE(integer_exact(*b.g));
  EXPECT_EQ(count_ops(*b.g, "onnxc.lookup"), 1u);
  EXPECT_EQ(count_ops(*b.g, "Clip"), 0u);
}


// ---------------------------------------------------------------- max pools and concatenations on bytes

// x (float) → Q → DQ → MaxPool(3x3, stride 2, pads 1) → Q (at scale sy) → DQ → output.
Graph& max_pool(GraphBuilder& b, float sy) {
  Value* x = b.input("x", {1, 3, 9, 8});
  Value* xq = b.node("QuantizeLinear", {x, scalar_f32(b, "sx", 0.01f), scalar_int(b, "zx", 120, DType::U8)});
  Value* d = b.node("DequantizeLinear", {xq, scalar_f32(b, "sx2", 0.01f), scalar_int(b, "zx2", 120, DType::U8)});
  Value* p = b.node("MaxPool", {d}, {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})}},
                    "pool");
  Value* yq = b.node("QuantizeLinear", {p, scalar_f32(b, "sy", sy), scalar_int(b, "zy", 120, DType::U8)});
  b.output(b.node("DequantizeLinear", {yq, scalar_f32(b, "sy2", sy), scalar_int(b, "zy2", 120, DType::U8)}));
  return *b.g;
}

// The same scale and zero point on both sides: the pool runs on the bytes, exactly.
TEST(IntegerOps, MaxPoolBetweenTheSameQuantizationRunsOnBytes) {
  GraphBuilder b;
  Graph& g = max_pool(b, 0.01f);
  EXPECT_TRUE(integer_exact(g));
  ASSERT_EQ(count_ops(g, "MaxPool"), 1u);
  EXPECT_EQ(count_ops(g, "QuantizeLinear"), 1u);    // the input's
  EXPECT_EQ(count_ops(g, "DequantizeLinear"), 1u);  // the output's
  for (auto& n : g.nodes)
    if (n->op_type == "MaxPool") {
      EXPECT_EQ(n->in(0)->dtype, DType::U8);
      EXPECT_EQ(n->out(0)->dtype, DType::U8);
      EXPECT_EQ(n->origin.size(), 3u);  // DQ, MaxPool, Q
    }
}

// The C of the pools the pass leaves, over a window wider than the separable kernel writes out
// tap by tap (kRowMaxUnroll): the float pool before the pass and the uint8 one after it (strided,
// dilated, padded unevenly) compute what the reference does.
TEST(IntegerOps, WideMaxPoolsInC) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 7, 70});
  Value* xq = b.node("QuantizeLinear", {x, scalar_f32(b, "sx", 0.01f), scalar_int(b, "zx", 120, DType::U8)});
  Value* d = b.node("DequantizeLinear", {xq, scalar_f32(b, "sx2", 0.01f), scalar_int(b, "zx2", 120, DType::U8)});
  Value* p = b.node("MaxPool", {d},
                    {{"kernel_shape", attr_ints({3, 18})}, {"strides", attr_ints({1, 2})}, {"pads", attr_ints({1, 3, 1, 5})},
                     {"dilations", attr_ints({1, 2})}},
                    "pool");
  Value* yq = b.node("QuantizeLinear", {p, scalar_f32(b, "sy", 0.01f), scalar_int(b, "zy", 120, DType::U8)});
  b.output(b.node("DequantizeLinear", {yq, scalar_f32(b, "sy2", 0.01f), scalar_int(b, "zy2", 120, DType::U8)}));
  expect_c_matches_reference(*b.g, "wide_pool_float", 7);
  EXPECT_TRUE(integer_exact(*b.g));
  for (auto& n : b.g->nodes)
    if (n->op_type == "MaxPool") EXPECT_EQ(n->in(0)->dtype, DType::U8);
  expect_c_matches_reference(*b.g, "wide_pool_u8", 7);
}

TEST(IntegerOps, MaxPoolBetweenScalesStays) {
  GraphBuilder b;
  Graph& g = max_pool(b, 0.02f);
  EXPECT_FALSE(integer_exact(g));
  EXPECT_EQ(count_ops(g, "QuantizeLinear"), 2u);
}

// Concat of three dequantized tensors (scales 0.01, 0.02 and the output's 0.03) → Q: a Concat
// of bytes, the first two through onnxc.lookup tables (Q(DQ(·)) at the output's scale), the
// third as it is.
TEST(IntegerOps, ConcatRequantizesItsInputsByTables) {
  GraphBuilder b;
  std::vector<Value*> parts;
  const float scales[] = {0.01f, 0.02f, 0.03f};
  for (int i = 0; i < 3; ++i) {
    const std::string k = std::to_string(i);
    Value* x = b.input("x" + k, {1, 2 + i, 4, 5});
    Value* xq = b.node("QuantizeLinear", {x, scalar_f32(b, "s" + k, scales[i]), scalar_int(b, "z" + k, 100 + i, DType::U8)});
    parts.push_back(b.node("DequantizeLinear", {xq, scalar_f32(b, "sd" + k, scales[i]), scalar_int(b, "zd" + k, 100 + i, DType::U8)}));
  }
  Value* c = b.node("Concat", parts, {{"axis", attr_int(1)}}, "concat");
  Value* yq = b.node("QuantizeLinear", {c, scalar_f32(b, "sy", 0.03f), scalar_int(b, "zy", 102, DType::U8)});
  b.output(b.node("DequantizeLinear", {yq, scalar_f32(b, "sy2", 0.03f), scalar_int(b, "zy2", 102, DType::U8)}));
  Graph& g = *b.g;
  EXPECT_TRUE(integer_exact(g));
  EXPECT_EQ(count_ops(g, "onnxc.lookup"), 2u);
  EXPECT_EQ(count_ops(g, "QuantizeLinear"), 3u);    // the inputs'
  EXPECT_EQ(count_ops(g, "DequantizeLinear"), 1u);  // the output's
  for (auto& n : g.nodes)
    if (n->op_type == "Concat") {
      EXPECT_EQ(n->out(0)->dtype, DType::U8);
      EXPECT_EQ(n->in(2)->producer->op_type, "QuantizeLinear");  // the third, as it is
    }
}

}  // namespace
}  // namespace onnxc::test
