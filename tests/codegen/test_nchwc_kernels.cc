// tests/codegen/test_nchwc_kernels.cc — the NCHWc kernels of the C backend (Conv,
// MaxPool/AveragePool, GlobalAveragePool/GlobalMaxPool, Concat, Pad, Resize).
//
// Each test builds the same small network twice by hand: plain, and with the op in NCHWc
// block b as the layout pass would place it (plain input → onnxc.layout_transform → op with
// an NCHWc output, conv weights repacked into the filter layout → layout_transform back →
// graph output). It then checks (a) that the reference evaluator gives the same outputs for
// both graphs (eval converts layouts, so this checks the graph was built as intended) and
// (b) that the generated C for the NCHWc graph, built with -O1 -Werror, matches the
// reference. Several independent sub-networks share one C build to keep the test quick.
// The conv cases cover the register tiles of conv_nchwc.cc: full and remainder tiles of
// pixels and of output-channel chunks, edges, the 1×1 line cut into segments, and fused
// epilogues applied on the tiles (fuse_ops on the blocked graph; the conv's function must
// then have no second sweep over its output).
#include "tests/codegen/c_run.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

// Whether the C backend runs n in NCHWc with block b.
bool supports_blocked(const Node& n, int64_t b) { return test_backend().supports(n, Layout::nchwc(b)); }

// A builder of one network; blk = 0 builds it plain, blk > 0 with NCHW[blk]c ops.
using Build = std::function<void(GraphBuilder& b, int64_t blk)>;

Tensor rand_tensor(GraphBuilder& b, Shape s) {
  Tensor t(DType::F32, std::move(s));
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, d(b.rng));
  return t;
}

Value* to_blocked(GraphBuilder& b, Value* x, int64_t blk) {
  if (blk == 0) return x;
  return b.node("onnxc.layout_transform", {x}, {{"from", attr_int(0)}, {"to", attr_int(blk)}});
}

// x → Abs → Log, in NCHW[blk]c when blk > 0: real lanes become log|x| (finite), padding
// lanes of the last block log(0) = -inf, so a kernel that lets padding lanes reach real
// outputs produces inf or NaN there.
Value* dirty(GraphBuilder& b, Value* x, int64_t blk) {
  x = to_blocked(b, x, blk);
  Value* a = b.node("Abs", {x});
  if (blk) a->layout = Layout::nchwc(blk);
  Value* l = b.node("Log", {a});
  if (blk) l->layout = Layout::nchwc(blk);
  return l;
}

// Marks y (just created) as NCHW[blk]c and appends the transform back to plain.
Value* from_blocked(GraphBuilder& b, Value* y, int64_t blk) {
  if (blk == 0) return y;
  y->layout = Layout::nchwc(blk);
  EXPECT_TRUE(supports_blocked(*y->producer, blk)) << y->producer->where() << " block " << blk;
  return b.node("onnxc.layout_transform", {y}, {{"from", attr_int(blk)}, {"to", attr_int(0)}});
}

// Fused conv groups of g: (group, C body of its function).
std::vector<std::pair<const Node*, std::string>> fused_convs(const Graph& g) {
  std::vector<std::pair<const Node*, std::string>> r;
  for (auto& n : g.nodes) {
    if (n->op_type != "Conv" || n->epilogue.empty()) continue;
    NodeParams p;
    for (size_t i = 0; i < n->inputs.size(); ++i) p.inputs.push_back(n->in(i) && !n->op->static_input(i) ? "x" + std::to_string(i) : "");
    p.outputs = {"y0"};
    for (size_t k = 0; k < n->extra_inputs.size(); ++k) p.extras.push_back("e" + std::to_string(k));
    r.emplace_back(n.get(), test_backend().emit_node(*n, p).body);
  }
  return r;
}

// `fused_steps` > 0: the NCHWc graph goes through the fusion pass, and every conv must then
// anchor a group whose epilogue runs on the conv's tiles (no group loop reading the stored
// output back: "t0 = y0["), with `fused_steps` steps in all the groups together.
void check_nchwc(const Build& build, int64_t blk, double tol = 1e-4, size_t fused_steps = 0, const CRunOptions& o = {}) {
  SCOPED_TRACE("block " + std::to_string(blk));
  GraphBuilder plain, blocked;
  build(plain, 0);
  build(blocked, blk);
  verify_graph(*plain.g);
  verify_graph(*blocked.g);
  if (fused_steps) {
    fuse_ops(*blocked.g, test_pass_options());
    verify_graph(*blocked.g);
    size_t convs = 0;
    for (auto& n : blocked.g->nodes) convs += n->op_type == "Conv";
    auto groups = fused_convs(*blocked.g);
    EXPECT_EQ(groups.size(), convs) << "every conv anchors a group";
    size_t steps = 0;
    for (auto& [n, body] : groups) {
      steps += n->epilogue.size();
      EXPECT_EQ(body.find("t0 = y0["), std::string::npos) << n->where() << ": the epilogue is a second sweep:\n" << body;
      EXPECT_NE(body.find("epilogue on each tile"), std::string::npos) << n->where();
    }
    EXPECT_EQ(steps, fused_steps) << "steps in the conv groups";
  }
  auto in = random_inputs(*blocked.g);
  std::map<const Value*, Tensor> in_plain;
  for (Value* v : plain.g->inputs)
    for (auto& [bv, t] : in)
      if (bv->name == v->name) in_plain[v] = t;
  auto ref_plain = reference_outputs(*plain.g, in_plain);
  auto ref = reference_outputs(*blocked.g, in);
  {
    SCOPED_TRACE("reference: plain graph vs NCHWc graph");
    expect_close(ref_plain, ref, tol);
  }
  auto c = run_c(*blocked.g, in, o);
  SCOPED_TRACE("generated C vs reference");
  expect_close(ref, c, tol);
}

// ---------------------------------------------------------------------------------------
// Conv

// The conv kernels' register tiles are written for the target's vector width (16 floats
// here): built for this machine (-march=native, -ffp-contract=fast), as users build them. Without it gcc lowers
// each 16-float vector to four SSE registers and takes ~10x longer on the unrolled tiles;
// Regular4/8/16 and the node tests (-O1, no -march) build that portable form.
CRunOptions native() {
  CRunOptions o;
  o.cflags = "-O1 -march=native -ffp-contract=fast";
  return o;
}

struct ConvSpec {
  int64_t N = 1, C = 16, M = 16, H = 9, W = 9, KH = 3, KW = 3, group = 1;
  std::vector<int64_t> strides, pads, dilations;
  std::string auto_pad;
  bool bias = true;
  bool first = false;  // NCHWc: read a plain X (first-layer conv)
  bool dirty = false;  // X through dirty() (padding lanes -inf)
  bool winograd = false;  // NCHWc: W in Layout::winograd (a 3×3 stride-1 conv), as pack_weights stores it
};

// The conv of spec s on a new input; its output (NCHW[blk]c when blk > 0), not yet an output.
Value* conv_node(GraphBuilder& b, int64_t blk, const ConvSpec& s, const std::string& name) {
  Value* x = b.input(name + "_x", {s.N, s.C, s.H, s.W});
  Tensor w = rand_tensor(b, {s.M, s.C / s.group, s.KH, s.KW});
  Tensor bias = rand_tensor(b, {s.M});
  std::map<std::string, Attr> at;
  if (s.group != 1) at["group"] = attr_int(s.group);
  if (!s.strides.empty()) at["strides"] = attr_ints(s.strides);
  if (!s.pads.empty()) at["pads"] = attr_ints(s.pads);
  if (!s.dilations.empty()) at["dilations"] = attr_ints(s.dilations);
  if (!s.auto_pad.empty()) at["auto_pad"] = attr_string(s.auto_pad);
  Value* wv;
  Value* xin = x;
  if (blk == 0) {
    wv = b.constant(name + "_w", w);
  } else {
    bool dw = s.group > 1 && s.group == s.C && s.group == s.M;
    wv = add_constant(*b.g, name + "_w", w, s.winograd ? Layout::winograd(blk) : Layout::filter(blk, s.first || dw ? 1 : blk));
    if (!s.first && !s.dirty) xin = to_blocked(b, x, blk);
  }
  if (s.dirty) xin = dirty(b, x, blk);
  std::vector<Value*> ins{xin, wv};
  if (s.bias) ins.push_back(b.constant(name + "_b", bias));
  Value* y = b.node("Conv", ins, at, name);
  if (blk) {
    y->layout = Layout::nchwc(blk);
    EXPECT_TRUE(supports_blocked(*y->producer, blk)) << y->producer->where() << " block " << blk;
  }
  return y;
}

void conv(GraphBuilder& b, int64_t blk, const ConvSpec& s, const std::string& name) {
  b.output(from_blocked(b, conv_node(b, blk, s, name), blk));
}

Build convs(std::vector<ConvSpec> specs) {
  return [specs](GraphBuilder& b, int64_t blk) {
    for (size_t k = 0; k < specs.size(); ++k) conv(b, blk, specs[k], "conv" + std::to_string(k));
  };
}

ConvSpec cs(int64_t C, int64_t M, int64_t H, int64_t W, int64_t K) {
  ConvSpec s;
  s.C = C, s.M = M, s.H = H, s.W = W, s.KH = s.KW = K;
  return s;
}
ConvSpec with(ConvSpec s, std::function<void(ConvSpec&)> f) {
  f(s);
  return s;
}

// Regular convs: channels multiple and not multiple of the block, strides, pads,
// dilations, auto_pad, rectangular kernels, no bias, batch 2.
std::vector<ConvSpec> regular_specs() {
  return {
      with(cs(16, 16, 9, 11, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
      with(cs(20, 48, 8, 8, 3), [](ConvSpec& s) { s.pads = {1, 0, 2, 1}; s.strides = {2, 2}; s.dirty = true; }),
      with(cs(48, 20, 13, 12, 3), [](ConvSpec& s) { s.dilations = {2, 3}; s.pads = {2, 3, 2, 3}; }),
      with(cs(3, 16, 7, 7, 1), [](ConvSpec& s) { s.bias = false; s.N = 2; s.dirty = true; }),
      with(cs(16, 3, 10, 9, 5), [](ConvSpec& s) { s.auto_pad = "SAME_UPPER"; s.strides = {2, 1}; }),
      with(cs(20, 20, 6, 7, 3), [](ConvSpec& s) { s.auto_pad = "SAME_LOWER"; s.KW = 2; }),
      with(cs(8, 24, 12, 12, 7), [](ConvSpec& s) { s.pads = {3, 3, 3, 3}; s.strides = {2, 2}; }),
      with(cs(17, 9, 4, 30, 1), [](ConvSpec& s) { s.strides = {1, 3}; s.dirty = true; }),
      with(cs(16, 16, 5, 5, 3), [](ConvSpec& s) { s.pads = {4, 4, 4, 4}; }),  // rows/cols wholly in padding
      with(cs(5, 7, 3, 3, 3), [](ConvSpec& s) { s.auto_pad = "VALID"; }),
  };
}

TEST(NchwcConv, Regular4) { check_nchwc(convs(regular_specs()), 4); }
TEST(NchwcConv, Regular8) { check_nchwc(convs(regular_specs()), 8); }
TEST(NchwcConv, Regular16) { check_nchwc(convs(regular_specs()), 16); }
TEST(NchwcConv, Regular64) {
  check_nchwc(convs({with(cs(64, 64, 10, 10, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
                     with(cs(48, 130, 6, 7, 3), [](ConvSpec& s) { s.strides = {2, 2}; s.pads = {0, 1, 1, 0}; s.dirty = true; }),
                     with(cs(70, 20, 5, 5, 1), [](ConvSpec&) {})}),
              64, 1e-4, 0, native());
}
TEST(NchwcConv, Regular256) {
  check_nchwc(convs({with(cs(300, 260, 5, 5, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
                     with(cs(20, 48, 4, 6, 1), [](ConvSpec&) {})}),
              256, 1e-4, 0, native());
}

// Register tiles (conv_nchwc.cc): rows with full tiles, a remainder tile and edges; output
// chunks that leave a smaller last tile of chunks (80 = 5 chunks of 16, 4 + 1); 1×1 convs
// as one line in several segments with a remainder (13 × 29 = 377 pixels) and strided;
// dilated and strided 3×3 on wide rows; input channels past the last whole block.
std::vector<ConvSpec> tile_specs() {
  return {
      with(cs(16, 80, 5, 25, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
      with(cs(20, 48, 6, 31, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; s.strides = {2, 2}; s.dirty = true; }),
      with(cs(24, 40, 13, 29, 1), [](ConvSpec& s) { s.dirty = true; }),
      with(cs(32, 20, 9, 13, 1), [](ConvSpec& s) { s.strides = {2, 2}; }),
      with(cs(16, 24, 7, 26, 3), [](ConvSpec& s) { s.dilations = {2, 2}; s.pads = {2, 2, 2, 2}; }),
      with(cs(36, 16, 4, 40, 3), [](ConvSpec& s) { s.pads = {0, 1, 0, 1}; s.bias = false; s.dirty = true; }),
  };
}

TEST(NchwcConv, TileRemainders) {
  for (int64_t blk : {4, 16}) check_nchwc(convs(tile_specs()), blk, 1e-4, 0, native());
  auto t = tile_specs();
  check_nchwc(convs({t[0], t[1], t[2]}), 64, 1e-4, 0, native());
  check_nchwc(convs({t[2], t[5]}), 256, 1e-4, 0, native());
}

std::vector<ConvSpec> depthwise_specs() {
  auto dw = [](int64_t C, int64_t H, int64_t K, std::function<void(ConvSpec&)> f) {
    ConvSpec s = cs(C, C, H, H + 1, K);
    s.group = C;
    f(s);
    return s;
  };
  return {
      dw(16, 9, 3, [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
      dw(20, 10, 3, [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; s.strides = {2, 2}; s.dirty = true; }),
      dw(48, 11, 5, [](ConvSpec& s) { s.pads = {2, 2, 2, 2}; s.bias = false; }),
      dw(3, 8, 3, [](ConvSpec& s) { s.dilations = {2, 2}; s.pads = {2, 1, 2, 1}; s.N = 2; }),
      dw(24, 7, 3, [](ConvSpec& s) { s.auto_pad = "SAME_UPPER"; s.strides = {2, 2}; }),
      dw(40, 9, 5, [](ConvSpec& s) { s.pads = {2, 2, 2, 2}; s.strides = {2, 2}; s.W = 37; s.dirty = true; }),
      dw(32, 5, 3, [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; s.W = 45; }),
  };
}

// Winograd F(2×2, 3×3) (conv_nchwc.cc emit_winograd_kernel), W in Layout::winograd, against
// the reference (a direct convolution of the filter read back from the Winograd domain):
// odd output sizes (a last tile row and column of one pixel), asymmetric pads and no pads,
// input channels past the last whole block with -inf in the padding lanes, output channels
// that leave a smaller last group of chunks, batch 2, no bias, a register tile's remainder
// of tiles, and images of several tasks whose last task is short.
std::vector<ConvSpec> winograd_specs() {
  auto w = [](ConvSpec s) {
    s.winograd = true;
    return s;
  };
  return {
      w(with(cs(16, 16, 9, 11, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; })),
      w(with(cs(20, 48, 8, 8, 3), [](ConvSpec& s) { s.pads = {1, 0, 0, 1}; s.dirty = true; })),
      w(with(cs(5, 7, 6, 7, 3), [](ConvSpec& s) { s.auto_pad = "VALID"; })),
      w(with(cs(36, 80, 7, 9, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; s.bias = false; s.N = 2; })),
      w(with(cs(16, 24, 31, 30, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; s.dirty = true; })),
  };
}

TEST(NchwcConv, Depthwise) {
  for (int64_t blk : {4, 16}) check_nchwc(convs(depthwise_specs()), blk, 1e-4, 0, native());
  check_nchwc(convs({depthwise_specs()[1], depthwise_specs()[2], depthwise_specs()[5]}), 64, 1e-4, 0, native());
  check_nchwc(convs({depthwise_specs()[5]}), 256, 1e-4, 0, native());
}

std::vector<ConvSpec> first_layer_specs() {
  return {
      with(cs(3, 16, 15, 16, 7), [](ConvSpec& s) { s.first = true; s.pads = {3, 3, 3, 3}; s.strides = {2, 2}; }),
      with(cs(3, 20, 9, 9, 3), [](ConvSpec& s) { s.first = true; s.pads = {1, 1, 1, 1}; }),
      with(cs(1, 8, 8, 10, 3), [](ConvSpec& s) { s.first = true; s.bias = false; s.N = 2; }),
      with(cs(4, 48, 9, 9, 3), [](ConvSpec& s) { s.first = true; s.dilations = {2, 1}; s.auto_pad = "SAME_LOWER"; }),
      with(cs(3, 24, 11, 45, 7), [](ConvSpec& s) { s.first = true; s.pads = {3, 3, 3, 3}; s.strides = {2, 2}; }),
  };
}

TEST(NchwcConv, FirstLayer) {
  for (int64_t blk : {8, 16}) check_nchwc(convs(first_layer_specs()), blk, 1e-4, 0, native());
  check_nchwc(convs({first_layer_specs()[0]}), 64, 1e-4, 0, native());
}

TEST(NchwcConv, GroupedWholeBlocks) {
  auto grp = [](int64_t C, int64_t M, int64_t G, std::function<void(ConvSpec&)> f) {
    ConvSpec s = cs(C, M, 8, 9, 3);
    s.group = G;
    f(s);
    return s;
  };
  check_nchwc(convs({grp(32, 64, 4, [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
                     grp(16, 8, 2, [](ConvSpec& s) { s.strides = {2, 2}; }),
                     grp(64, 32, 8, [](ConvSpec& s) { s.KH = s.KW = 1; s.bias = false; })}),
              4, 1e-4, 0, native());
  check_nchwc(convs({grp(64, 64, 4, [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
                     grp(32, 96, 2, [](ConvSpec& s) { s.pads = {0, 1, 0, 1}; })}),
              16, 1e-4, 0, native());
}

// ---------------------------------------------------------------------------------------
// Conv with a fused epilogue, applied on the conv's tiles

enum class Epi { Relu, Clip, ResidualRelu, SkipFirstAdd, ChannelMulAdd, GateMulScalar, SiLU, HardSwishLeaky, SEScale, Leaky, ClipLow };

// Steps the fusion pass puts in the conv's group.
size_t epi_steps(Epi k) { return k == Epi::Relu || k == Epi::Clip || k == Epi::Leaky || k == Epi::ClipLow ? 1 : 2; }

// Conv (spec s) → epilogue k → output. Extra inputs: a residual of the conv's shape (NCHWc,
// padding lanes -inf), per-channel constants ([M,1,1]; NCHWc [1,M,1,1] as the layout pass
// aligns them), a plain [N,1,OH,OW] gate, a scalar, an SE scale [N,M,1,1] (NCHWc).
void conv_epi(GraphBuilder& b, int64_t blk, const ConvSpec& s, Epi k, const std::string& name) {
  auto nc = [&](Value* v) {
    if (blk) v->layout = Layout::nchwc(blk);
    return v;
  };
  Value* y = conv_node(b, blk, s, name);
  const Shape ys = y->shape;
  const int64_t M = ys[1];
  auto channel_const = [&](const std::string& n) {
    Tensor t = rand_tensor(b, {M, 1, 1});
    if (!blk) return b.constant(n, t);
    t.shape = {1, M, 1, 1};
    return add_constant(*b.g, n, t, Layout::nchwc(blk));
  };
  auto scalar = [&](const std::string& n, float v) { return b.constant(n, Tensor::from_f32({v}, {})); };
  Value* r = nullptr;
  switch (k) {
    case Epi::Relu: r = nc(b.node("Relu", {y})); break;
    case Epi::Clip: r = nc(b.node("Clip", {y, scalar(name + "_lo", -0.5f), scalar(name + "_hi", 0.75f)})); break;
    case Epi::ResidualRelu:
      r = nc(b.node("Relu", {nc(b.node("Add", {y, dirty(b, b.input(name + "_skip", ys), blk)}))}));
      break;
    case Epi::SkipFirstAdd:
      r = nc(b.node("Sub", {nc(b.node("Add", {dirty(b, b.input(name + "_skip", ys), blk), y})), scalar(name + "_s", 0.25f)}));
      break;
    case Epi::ChannelMulAdd:
      r = nc(b.node("Add", {nc(b.node("Mul", {y, channel_const(name + "_scale")})), channel_const(name + "_shift")}));
      break;
    case Epi::GateMulScalar:
      r = nc(b.node("Add", {nc(b.node("Mul", {y, b.input(name + "_gate", {ys[0], 1, ys[2], ys[3]})})), scalar(name + "_s", 0.5f)}));
      break;
    case Epi::SiLU: r = nc(b.node("Mul", {y, nc(b.node("Sigmoid", {y}))})); break;
    case Epi::HardSwishLeaky: r = nc(b.node("LeakyRelu", {nc(b.node("HardSwish", {y}))}, {{"alpha", attr_float(0.1)}})); break;
    case Epi::Leaky: r = nc(b.node("LeakyRelu", {y}, {{"alpha", attr_float(0.2)}})); break;
    case Epi::ClipLow: r = nc(b.node("Clip", {y, scalar(name + "_lo", 0.1f)})); break;
    case Epi::SEScale: {
      Value* se = b.input(name + "_se", {ys[0], M, 1, 1});
      r = nc(b.node("Relu", {nc(b.node("Mul", {y, dirty(b, se, blk)}))}));
      break;
    }
  }
  b.output(blk ? b.node("onnxc.layout_transform", {r}, {{"from", attr_int(blk)}, {"to", attr_int(0)}}) : r);
}

using EpiCase = std::pair<ConvSpec, Epi>;

Build conv_epis(std::vector<EpiCase> cases) {
  return [cases](GraphBuilder& b, int64_t blk) {
    for (size_t k = 0; k < cases.size(); ++k) conv_epi(b, blk, cases[k].first, cases[k].second, "conv" + std::to_string(k));
  };
}

void check_epis(const std::vector<EpiCase>& cases, int64_t blk) {
  size_t steps = 0;
  for (auto& c : cases) steps += epi_steps(c.second);
  check_nchwc(conv_epis(cases), blk, 1e-4, steps, native());
}

// Every kernel variant and every kind of extra input, on tiles with remainders.
std::vector<EpiCase> epi_cases() {
  auto t = tile_specs();
  auto d = depthwise_specs();
  auto f = first_layer_specs();
  ConvSpec grouped = with(cs(32, 64, 7, 9, 3), [](ConvSpec& s) { s.group = 2; s.pads = {1, 1, 1, 1}; });
  return {
      {with(cs(16, 20, 6, 19, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }), Epi::Relu},
      {t[0], Epi::ResidualRelu},
      {t[1], Epi::ChannelMulAdd},
      {t[2], Epi::SEScale},
      {t[3], Epi::GateMulScalar},
      {t[4], Epi::SkipFirstAdd},
      {d[1], Epi::SiLU},
      {d[5], Epi::Clip},
      {d[6], Epi::ResidualRelu},
      {f[4], Epi::HardSwishLeaky},
      {grouped, Epi::SEScale},
  };
}

TEST(NchwcConvEpilogue, Blocks4And16) {
  for (int64_t blk : {4, 16}) check_epis(epi_cases(), blk);
}

// The epilogue on the accumulators (fused.h epilogue_vector) where every step has a vector
// form and every extra input is read lane by lane or once for all lanes; else the stored
// tile again, lane by lane ("ye["). Both against the reference.
TEST(NchwcConvEpilogue, OnTheAccumulatorsWhereTheStepsHaveAVectorForm) {
  auto t = tile_specs();
  auto d = depthwise_specs();
  const std::vector<EpiCase> vec = {{t[0], Epi::ResidualRelu}, {t[1], Epi::ChannelMulAdd}, {t[2], Epi::SEScale}, {t[3], Epi::GateMulScalar},
                                    {t[4], Epi::SkipFirstAdd}, {d[5], Epi::Clip},          {d[6], Epi::Leaky},   {t[0], Epi::ClipLow}};
  const std::vector<EpiCase> lanes = {{t[1], Epi::SiLU}, {d[1], Epi::HardSwishLeaky}};
  std::vector<EpiCase> all = vec;
  all.insert(all.end(), lanes.begin(), lanes.end());
  GraphBuilder b;
  conv_epis(all)(b, 16);
  fuse_ops(*b.g, test_pass_options());
  size_t k = 0;
  for (auto& [n, body] : fused_convs(*b.g)) {
    const bool on_acc = k++ < vec.size();
    EXPECT_EQ(body.find(" v0 = a") != std::string::npos, on_acc) << n->where() << ":\n" << body;
    EXPECT_EQ(body.find("ye[") == std::string::npos, on_acc) << n->where();
  }
  EXPECT_EQ(k, all.size());
  check_epis(all, 16);
  check_epis(all, 4);
}

// The Winograd kernel's epilogue, on the output transform's vectors (residual, per-channel
// constants, an SE scale) or lane by lane after the store (SiLU).
TEST(NchwcConvEpilogue, Winograd) {
  auto w = winograd_specs();
  for (int64_t blk : {4, 16})
    check_epis({{w[0], Epi::ResidualRelu}, {w[1], Epi::ChannelMulAdd}, {w[3], Epi::SEScale}, {w[2], Epi::SiLU}, {w[4], Epi::GateMulScalar}}, blk);
}

TEST(NchwcConvEpilogue, Blocks64And256) {
  auto c = epi_cases();
  check_epis({c[0], c[1], c[3], c[6], c[8]}, 64);
  check_epis({c[2], c[3], c[7]}, 256);
}

// An AVX-512 backend whose target `edit` changes (smaller caches, a thread count), and native
// build options that compile with it.
struct EditedTarget {
  std::unique_ptr<Backend> backend;
  CRunOptions options;
  explicit EditedTarget(const std::function<void(Target&)>& edit) {
    Target t = parse_target("x86-64-avx512");
    edit(t);
    backend = make_c_backend(t);
    options = native();
    options.backend = backend.get();
  }
};

TEST(NchwcConv, Winograd) {
  for (int64_t blk : {4, 8, 16}) check_nchwc(convs(winograd_specs()), blk, 1e-4, 0, native());
  // Two threads planned and a small L2: short tasks of one register tile, in parallel.
  const EditedTarget et([](Target& t) { t.l2_bytes = 64 << 10, t.threads = 2, t.parallel_min_work = 1; });
  check_nchwc(convs(winograd_specs()), 16, 1e-4, 0, et.options);
  GraphBuilder b;
  convs(winograd_specs())(b, 16);
  for (auto& n : b.g->nodes) {
    if (n->op_type != "Conv") continue;
    NodeParams p;
    for (size_t i = 0; i < n->inputs.size(); ++i) p.inputs.push_back(n->in(i) && !n->op->static_input(i) ? "x" + std::to_string(i) : "");
    p.outputs = {"y0"};
    const std::string body = et.backend->emit_node(*n, p).body;
    EXPECT_NE(body.find("Winograd F(2x2,3x3)"), std::string::npos) << n->where();
    // One image of one block of tiles (the 4 x 5 VALID conv: 6 tiles) is one task, emitted as a
    // plain block; every other conv here has several tasks and splits them across the threads.
    const bool one_task = body.find("const int64_t n = 0;") != std::string::npos && body.find("const int64_t tb = 0;") != std::string::npos;
    EXPECT_EQ(body.find("omp parallel for") != std::string::npos, !one_task) << n->where() << ":\n" << body;
  }
}

// Reduction in steps (conv_nchwc.cc): on a target with a 32 KiB L2 every tile's weights are
// too large, so tiles accumulate into Y step by step (blocks of rows per task): a partial last
// input block, strides, pads, a 5x5 kernel, batch 2, a grouped conv, and epilogues (run after
// the last step only: a second application would change the values).
TEST(NchwcConv, ReductionSteps) {
  const EditedTarget et([](Target& t) { t.l2_bytes = 32 << 10; });
  Backend* small = et.backend.get();
  const CRunOptions& o = et.options;
  const std::vector<ConvSpec> specs = {
      with(cs(70, 40, 7, 7, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; s.dirty = true; }),
      with(cs(64, 24, 9, 8, 3), [](ConvSpec& s) { s.pads = {1, 0, 1, 1}; s.strides = {2, 2}; s.N = 2; }),
      with(cs(48, 20, 6, 11, 5), [](ConvSpec& s) { s.pads = {2, 2, 2, 2}; s.bias = false; }),
      with(cs(96, 64, 5, 6, 3), [](ConvSpec& s) { s.group = 2; s.pads = {1, 1, 1, 1}; }),
  };
  // Every one of them runs in steps.
  GraphBuilder b;
  for (size_t k = 0; k < specs.size(); ++k) {
    Value* y = conv_node(b, 16, specs[k], "conv" + std::to_string(k));
    NodeParams p{{"x0", "x1", specs[k].bias ? "x2" : ""}, {"y0"}, {}};
    EXPECT_NE(small->emit_node(*y->producer, p).body.find("Reduction in steps"), std::string::npos) << "conv " << k;
  }
  check_nchwc(convs(specs), 16, 1e-4, 0, o);
  check_nchwc(conv_epis({{specs[0], Epi::ResidualRelu}, {specs[1], Epi::SEScale}, {specs[3], Epi::ChannelMulAdd}}), 16, 1e-4, 6, o);
}

// The task order (conv_nchwc.cc): rows or segments outermost when X outweighs W (each thread
// then reads its share of X and all of W) or when groups first would load one thread more,
// groups of chunks outermost otherwise. Both orders
// checked against the reference, with an epilogue and batch 2 on the rows-outermost side.
TEST(NchwcConv, TaskOrderRowsOrGroupsOutermost) {
  const EditedTarget et([](Target& t) { t.l2_bytes = 256 << 10, t.threads = 2; });
  Backend* be = et.backend.get();
  const CRunOptions& o = et.options;
  const std::vector<ConvSpec> rows = {
      cs(64, 128, 16, 16, 1),                                                                  // 1×1: segments outermost
      with(cs(32, 96, 40, 40, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; s.strides = {2, 2}; s.N = 2; }),
      // W outweighs X, but 16 chunks in tiles of 3 leave a short last group: rows first for balance
      with(cs(64, 256, 8, 8, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; }),
  };
  const std::vector<ConvSpec> groups = {with(cs(16, 256, 6, 6, 3), [](ConvSpec& s) { s.pads = {1, 1, 1, 1}; })};
  GraphBuilder b;
  for (size_t k = 0; k < rows.size() + groups.size(); ++k) {
    const ConvSpec& s = k < rows.size() ? rows[k] : groups[k - rows.size()];
    Value* y = conv_node(b, 16, s, "conv" + std::to_string(k));
    const std::string body = be->emit_node(*y->producer, NodeParams{{"x0", "x1", "x2"}, {"y0"}, {}}).body;
    EXPECT_EQ(body.find("Tasks in the order") != std::string::npos, k < rows.size()) << "conv " << k << ":\n" << body;
  }
  std::vector<ConvSpec> all = rows;
  all.insert(all.end(), groups.begin(), groups.end());
  check_nchwc(convs(all), 16, 1e-4, 0, o);
  check_nchwc(conv_epis({{rows[0], Epi::ResidualRelu}, {rows[1], Epi::SEScale}}), 16, 1e-4, 4, o);
}

// 1×1 convs whose tile's weights outgrow two L1s step through the input blocks so a step's
// weights stay in L1 for every tile of the task (conv_nchwc.cc): on a target with a 4 KiB L1
// every one of these does, with a partial last input block, batch 2, segments of the line,
// and epilogues on the last step only (on the accumulators, and lane by lane for SiLU).
TEST(NchwcConv, LineStepsForL1) {
  const EditedTarget et([](Target& t) { t.l1d_bytes = 4 << 10, t.threads = 2; });
  Backend* small = et.backend.get();
  const CRunOptions& o = et.options;
  const std::vector<ConvSpec> specs = {
      cs(96, 32, 24, 24, 1),
      with(cs(90, 48, 20, 20, 1), [](ConvSpec& s) { s.N = 2; }),
      with(cs(160, 512, 7, 7, 1), [](ConvSpec& s) { s.bias = false; }),  // the whole line in one task
  };
  GraphBuilder b;
  for (size_t k = 0; k < specs.size(); ++k) {
    Value* y = conv_node(b, 16, specs[k], "conv" + std::to_string(k));
    NodeParams p{{"x0", "x1", specs[k].bias ? "x2" : ""}, {"y0"}, {}};
    EXPECT_NE(small->emit_node(*y->producer, p).body.find("stay in L1"), std::string::npos) << "conv " << k;
  }
  check_nchwc(convs(specs), 16, 1e-4, 0, o);
  check_nchwc(conv_epis({{specs[0], Epi::ResidualRelu}, {specs[1], Epi::SiLU}, {specs[2], Epi::ChannelMulAdd}}), 16, 1e-4, 6, o);
}

// A target whose vectors hold 64 floats (generic-vector:64): one chunk per 64-lane block,
// 4 per 256-lane block; tiles sized for the host's registers (Target::tile_registers).
TEST(NchwcConv, LongVectorTarget) {
  static const std::unique_ptr<Backend> wide = make_c_backend(parse_target("generic-vector:64"));
  CRunOptions o = native();
  o.backend = wide.get();
  auto t = tile_specs();
  auto d = depthwise_specs();
  auto ep = epi_cases();
  check_nchwc(convs({t[0], t[2], t[3], d[5], first_layer_specs()[0]}), 64, 1e-4, 0, o);
  check_nchwc(conv_epis({ep[1], ep[3], ep[8]}), 64, 1e-4, 6, o);
  check_nchwc(convs({t[1], t[2]}), 256, 1e-4, 0, o);
}

// The register tiles' multiply-adds are plain vector arithmetic (no intrinsics, no
// intrinsics header): gcc fuses them into 512-bit FMAs when the C is built with the
// targets' -ffp-contract=fast and leaves separate multiplies and adds without it (so this
// check can fail); clang fuses them by default. Compiled for x86-64-v4 whatever the host is
// (-c only, nothing runs); objdump -d reads the instructions.
// Instructions on 512-bit registers whose line in `objdump -d` contains `what`.
size_t count_in_disassembly(const std::string& cc, const std::string& flags, const std::string& dir, const std::string& what) {
  const std::string obj = dir + "m_" + cc + ".o", dis = dir + "m_" + cc + ".s";
  const std::string cmd = cc + " -std=c11 " + flags + " -fopenmp -Wall -Wextra -Werror -I" + dir + " -c " + dir + "m.c -o " + obj +
                          " > " + dir + "cc.log 2>&1 && objdump -d --no-show-raw-insn " + obj + " > " + dis;
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << cmd << "\n" << c_run_read_file(dir + "cc.log");
    return 0;
  }
  std::istringstream text(c_run_read_file(dis));
  size_t n = 0;
  for (std::string line; std::getline(text, line);) n += line.find(what) != std::string::npos && line.find("zmm") != std::string::npos;
  return n;
}

TEST(NchwcConv, FusedMultiplyAddsWithoutIntrinsics) {
  namespace fs = std::filesystem;
#if !defined(__x86_64__)
  GTEST_SKIP() << "checks x86-64 object code";
#endif
  if (std::system("objdump --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "objdump not installed";
  GraphBuilder b;
  auto t = tile_specs();
  convs({t[0], depthwise_specs()[0]})(b, 16);
  std::string tmpl = (fs::temp_directory_path() / "onnxc_fma_XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::string d = tmpl + "/";
  CodegenOptions co;
  co.name = "m";
  co.outdir = tmpl;
  co.source = "fma";
  make_c_backend(parse_target("x86-64-avx512"))->write_module(*b.g, co);
  const std::string c = c_run_read_file(d + "m.c");
  ASSERT_NE(c.find("onnxc_vf16"), std::string::npos) << "the register-tiled kernels are in use";
  for (const char* s : {"immintrin.h", "arm_neon.h", "_mm512_", "_mm256_", "_mm_", "vfmaq_", "__asm", "asm("})
    EXPECT_EQ(c.find(s), std::string::npos) << "the generated C names " << s;
  const std::string v4 = "-O3 -march=x86-64-v4 -mprefer-vector-width=512";
  EXPECT_GT(count_in_disassembly("gcc", v4 + " -ffp-contract=fast", d, "vfmadd"), 8u) << "gcc -ffp-contract=fast fuses the multiply-adds";
  EXPECT_EQ(count_in_disassembly("gcc", v4, d, "vfmadd"), 0u) << "gcc -std=c11 alone does not (the check sees the difference)";
  if (std::system("clang --version > /dev/null 2>&1") == 0)
    EXPECT_GT(count_in_disassembly("clang", v4, d, "vfmadd"), 8u) << "clang fuses the multiply-adds by default";
  if (!HasFailure()) fs::remove_all(tmpl);
}

TEST(NchwcConv, SupportsOnlyWhatTheKernelDoes) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 24, 8, 8});
  auto node_of = [](Value* v) { return v->producer; };
  // Groups that are not whole blocks of 16 (but are of 4).
  Value* g3 = b.node("Conv", {x, b.random_constant("w1", {24, 8, 3, 3})}, {{"group", attr_int(3)}});
  EXPECT_FALSE(supports_blocked(*node_of(g3), 16));
  EXPECT_TRUE(supports_blocked(*node_of(g3), 4));
  // Depthwise with a channel multiplier.
  Value* dm = b.node("Conv", {x, b.random_constant("w2", {48, 1, 3, 3})}, {{"group", attr_int(24)}});
  EXPECT_FALSE(supports_blocked(*node_of(dm), 8));
  // Runtime weights.
  Value* wr = b.input("w", {16, 24, 3, 3});
  Value* rw = b.node("Conv", {x, wr});
  EXPECT_FALSE(supports_blocked(*node_of(rw), 16));
  // 1-D and 3-D convs.
  Value* x1 = b.input("x1", {1, 16, 10});
  Value* c1 = b.node("Conv", {x1, b.random_constant("w3", {16, 16, 3})});
  EXPECT_FALSE(supports_blocked(*node_of(c1), 16));
  Value* x3 = b.input("x3", {1, 16, 4, 4, 4});
  Value* c3 = b.node("Conv", {x3, b.random_constant("w4", {16, 16, 3, 3, 3})});
  EXPECT_FALSE(supports_blocked(*node_of(c3), 16));
}

// ---------------------------------------------------------------------------------------
// MaxPool / AveragePool

struct PoolSpec {
  bool max = true;
  Shape x = {1, 16, 9, 9};
  std::vector<int64_t> k = {3, 3}, strides, pads, dilations;
  int64_t ceil = 0, count_include_pad = 0;
  std::string auto_pad;
  bool dirty = false;
};

void pool(GraphBuilder& b, int64_t blk, const PoolSpec& s, const std::string& name) {
  Value* x = b.input(name + "_x", s.x);
  Value* xin = s.dirty ? dirty(b, x, blk) : to_blocked(b, x, blk);
  std::map<std::string, Attr> at{{"kernel_shape", attr_ints(s.k)}};
  if (!s.strides.empty()) at["strides"] = attr_ints(s.strides);
  if (!s.pads.empty()) at["pads"] = attr_ints(s.pads);
  if (!s.dilations.empty()) at["dilations"] = attr_ints(s.dilations);
  if (!s.auto_pad.empty()) at["auto_pad"] = attr_string(s.auto_pad);
  if (s.ceil) at["ceil_mode"] = attr_int(1);
  if (!s.max && s.count_include_pad) at["count_include_pad"] = attr_int(1);
  Value* y = b.node(s.max ? "MaxPool" : "AveragePool", {xin}, at, name);
  b.output(from_blocked(b, y, blk));
}

std::vector<PoolSpec> pool_specs() {
  std::vector<PoolSpec> v;
  for (bool max : {true, false}) {
    auto p = [&](Shape x, std::vector<int64_t> k, std::function<void(PoolSpec&)> f) {
      PoolSpec s;
      s.max = max, s.x = std::move(x), s.k = std::move(k);
      f(s);
      v.push_back(s);
    };
    p({1, 16, 9, 9}, {3, 3}, [](PoolSpec& s) { s.strides = {2, 2}; s.pads = {1, 1, 1, 1}; });
    p({2, 20, 10, 11}, {3, 3}, [](PoolSpec& s) { s.strides = {2, 2}; s.ceil = 1; s.dirty = true; });
    p({1, 3, 8, 9}, {2, 3}, [](PoolSpec& s) { s.pads = {1, 0, 1, 2}; s.count_include_pad = 1; s.dirty = true; });
    p({1, 48, 11, 11}, {3, 3}, [](PoolSpec& s) { s.strides = {2, 2}; s.pads = {1, 1, 0, 0}; s.ceil = 1; s.count_include_pad = 1; });
    p({1, 16, 12, 12}, {3, 2}, [](PoolSpec& s) { s.dilations = {2, 3}; s.pads = {2, 1, 2, 1}; });
    p({1, 20, 7, 8}, {3, 3}, [](PoolSpec& s) { s.auto_pad = "SAME_UPPER"; s.strides = {2, 2}; });
    p({1, 16, 7, 7}, {4, 4}, [](PoolSpec& s) { s.auto_pad = "SAME_LOWER"; });
    p({1, 16, 6, 6}, {2, 2}, [](PoolSpec& s) { s.strides = {2, 2}; });
  }
  return v;
}

Build pools(std::vector<PoolSpec> specs) {
  return [specs](GraphBuilder& b, int64_t blk) {
    for (size_t k = 0; k < specs.size(); ++k) pool(b, blk, specs[k], "pool" + std::to_string(k));
  };
}

TEST(NchwcPool, Blocks4And16) {
  check_nchwc(pools(pool_specs()), 4);
  check_nchwc(pools(pool_specs()), 16);
}

TEST(NchwcPool, Blocks8_64_256) {
  auto all = pool_specs();
  check_nchwc(pools({all[1], all[3], all[9], all[11]}), 8);
  check_nchwc(pools({all[1], all[3], all[9], all[11]}), 64);
  check_nchwc(pools({all[3], all[10]}), 256);
}

TEST(NchwcPool, OneAndThreeSpatialDims) {
  PoolSpec p1;
  p1.x = {1, 20, 13}, p1.k = {3}, p1.strides = {2}, p1.pads = {1, 1};
  PoolSpec p3;
  p3.max = false, p3.x = {1, 16, 5, 6, 7}, p3.k = {2, 3, 3}, p3.pads = {0, 1, 1, 1, 1, 0}, p3.count_include_pad = 1;
  check_nchwc(pools({p1, p3}), 8);
}

TEST(NchwcPool, SupportsOnlyWhatTheKernelDoes) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 16, 8, 8});
  std::map<std::string, Attr> at{{"kernel_shape", attr_ints({2, 2})}};
  auto with_idx = b.node_n("MaxPool", {x}, 2, at);
  EXPECT_FALSE(supports_blocked(*with_idx[0]->producer, 16));
  Value* xi = b.input("xi", {1, 16, 8, 8}, DType::U8);
  Value* mi = b.node("MaxPool", {xi}, at);
  EXPECT_FALSE(supports_blocked(*mi->producer, 16));
  Value* mf = b.node("MaxPool", {x}, at);
  EXPECT_TRUE(supports_blocked(*mf->producer, 16));
}

// ---------------------------------------------------------------------------------------
// GlobalAveragePool / GlobalMaxPool

Build global_pools(std::vector<Shape> shapes) {
  return [shapes](GraphBuilder& b, int64_t blk) {
    for (size_t k = 0; k < shapes.size(); ++k)
      for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
        std::string name = std::string(op) + std::to_string(k);
        Value* x = b.input(name + "_x", shapes[k]);
        Value* xin = k % 2 ? dirty(b, x, blk) : to_blocked(b, x, blk);
        Value* y = b.node(op, {xin}, {}, name);
        b.output(from_blocked(b, y, blk));
      }
  };
}

TEST(NchwcGlobalPool, Ranks3To5) {
  std::vector<Shape> shapes{{1, 16, 7, 7}, {2, 20, 5, 6}, {1, 3, 9}, {1, 48, 3, 4, 5}};
  for (int64_t blk : {4, 16, 64}) check_nchwc(global_pools(shapes), blk);
  check_nchwc(global_pools({{1, 260, 3, 3}}), 256);
}

// ---------------------------------------------------------------------------------------
// Concat

// The last input arrives with -inf in its padding lanes; with all_dirty every input does
// (an input whose padding lanes were copied would put -inf into real output lanes).
Build concat(std::vector<Shape> shapes, bool all_dirty = false) {
  return [shapes, all_dirty](GraphBuilder& b, int64_t blk) {
    std::vector<Value*> ins;
    for (size_t k = 0; k < shapes.size(); ++k) {
      Value* x = b.input("x" + std::to_string(k), shapes[k]);
      ins.push_back(all_dirty || k + 1 == shapes.size() ? dirty(b, x, blk) : to_blocked(b, x, blk));
    }
    Value* y = b.node("Concat", ins, {{"axis", attr_int(1)}}, "concat");
    b.output(from_blocked(b, y, blk));
  };
}

TEST(NchwcConcat, WholeBlocks) {
  check_nchwc(concat({{1, 16, 5, 6}, {1, 32, 5, 6}, {1, 20, 5, 6}}), 16);
  check_nchwc(concat({{2, 16, 5, 6}, {2, 8, 5, 6}, {2, 3, 5, 6}}), 8);
  check_nchwc(concat({{1, 64, 3, 3}, {1, 48, 3, 3}}), 64);
  check_nchwc(concat({{2, 4, 7}, {2, 12, 7}, {2, 16, 7}}), 4);
  check_nchwc(concat({{1, 256, 2, 2}, {1, 20, 2, 2}}), 256);
}

// Inputs that start or end inside a block: lane-shifted copies (GoogLeNet's and DenseNet's
// concats at long blocks), including inputs narrower than a block and shifts that wrap.
TEST(NchwcConcat, PartialBlocks) {
  check_nchwc(concat({{1, 20, 5, 6}, {1, 16, 5, 6}}, true), 16);
  check_nchwc(concat({{2, 3, 4, 5}, {2, 7, 4, 5}, {2, 13, 4, 5}, {2, 1, 4, 5}}, true), 8);
  check_nchwc(concat({{1, 64, 3, 3}, {1, 32, 3, 3}, {1, 32, 3, 3}, {1, 70, 3, 3}}, true), 64);
  check_nchwc(concat({{1, 30, 7}, {1, 50, 7}}, true), 16);
  check_nchwc(concat({{1, 96, 2, 2}, {1, 208, 2, 2}, {1, 48, 2, 2}, {1, 64, 2, 2}}, true), 256);
  check_nchwc(concat({{1, 5, 2, 3, 2}, {1, 6, 2, 3, 2}}, true), 4);
}

TEST(NchwcConcat, SupportsChannelsOnly) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 20, 4, 4});
  Value* z = b.input("z", {1, 16, 4, 4});
  Value* c1 = b.node("Concat", {x, z}, {{"axis", attr_int(1)}});
  EXPECT_TRUE(supports_blocked(*c1->producer, 16));  // 20 % 16 != 0 before the last: lane-shifted
  EXPECT_TRUE(supports_blocked(*c1->producer, 4));
  Value* c2 = b.node("Concat", {z, x}, {{"axis", attr_int(1)}});
  EXPECT_TRUE(supports_blocked(*c2->producer, 16));
  Value* c3 = b.node("Concat", {z, z}, {{"axis", attr_int(2)}});
  EXPECT_FALSE(supports_blocked(*c3->producer, 16));
}

// ---------------------------------------------------------------------------------------
// Pad (spatial pads; constant, reflect and edge; crops; a runtime constant_value)

struct PadSpec {
  Shape x;
  std::vector<int64_t> pads;
  std::string mode = "constant";
  float value = 0;
  bool runtime_value = false;
  bool dirty = false;
};

Build pads(std::vector<PadSpec> specs) {
  return [specs](GraphBuilder& b, int64_t blk) {
    for (size_t k = 0; k < specs.size(); ++k) {
      const PadSpec& s = specs[k];
      std::string name = "pad" + std::to_string(k);
      Value* x = b.input(name + "_x", s.x);
      Value* xin = s.dirty ? dirty(b, x, blk) : to_blocked(b, x, blk);
      std::vector<Value*> ins{xin, b.constant(name + "_pads", Tensor::from_i64(s.pads))};
      if (s.runtime_value) ins.push_back(b.input(name + "_v", {}));
      else if (s.value != 0) ins.push_back(b.constant(name + "_v", Tensor::from_f32({s.value}, {})));
      Value* y = b.node("Pad", ins, {{"mode", attr_string(s.mode)}}, name);
      b.output(from_blocked(b, y, blk));
    }
  };
}

std::vector<PadSpec> pad_specs() {
  return {
      {{1, 20, 5, 6}, {0, 0, 1, 2, 0, 0, 2, 1}, "constant", 0.5f, false, true},
      {{2, 16, 4, 4}, {0, 0, 2, 1, 0, 0, 1, 3}, "reflect"},
      {{1, 3, 5, 5}, {0, 0, 1, 3, 0, 0, 2, 0}, "edge"},
      {{1, 16, 6, 6}, {0, 0, -1, 1, 0, 0, 2, -2}, "constant"},
      {{1, 20, 7}, {0, 0, 2, 0, 0, 3}, "constant", 0, true},
      {{1, 8, 3, 4, 5}, {0, 0, 1, 0, 1, 0, 0, 1, 1, 0}, "edge"},
  };
}

TEST(NchwcPad, SpatialPads) {
  for (int64_t blk : {4, 16}) check_nchwc(pads(pad_specs()), blk);
  check_nchwc(pads({pad_specs()[0], pad_specs()[1]}), 64);
}

TEST(NchwcPad, SupportsOnlySpatialPads) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 16, 4, 4});
  Value* pc = b.node("Pad", {x, b.constant("p1", Tensor::from_i64({0, 1, 0, 0, 0, 0, 0, 0}))});
  EXPECT_FALSE(supports_blocked(*pc->producer, 16));
  Value* ps = b.node("Pad", {x, b.constant("p2", Tensor::from_i64({0, 0, 1, 0, 0, 0, 0, 1}))});
  EXPECT_TRUE(supports_blocked(*ps->producer, 16));
}

// ---------------------------------------------------------------------------------------
// Resize (nearest / linear on the spatial axes)

struct ResizeSpec {
  Shape x;
  std::vector<float> scales;    // or
  std::vector<int64_t> sizes;
  std::vector<float> roi;       // tf_crop_and_resize
  std::map<std::string, Attr> attrs;
  bool dirty = false;
};

Build resizes(std::vector<ResizeSpec> specs) {
  return [specs](GraphBuilder& b, int64_t blk) {
    for (size_t k = 0; k < specs.size(); ++k) {
      const ResizeSpec& s = specs[k];
      std::string name = "resize" + std::to_string(k);
      Value* x = b.input(name + "_x", s.x);
      Value* xin = s.dirty ? dirty(b, x, blk) : to_blocked(b, x, blk);
      Value* roi = s.roi.empty() ? nullptr : b.constant(name + "_roi", Tensor::from_f32(s.roi, {static_cast<int64_t>(s.roi.size())}));
      std::vector<Value*> ins{xin, roi};
      if (!s.scales.empty()) ins.push_back(b.constant(name + "_scales", Tensor::from_f32(s.scales, {static_cast<int64_t>(s.scales.size())})));
      else ins.insert(ins.end(), {nullptr, b.constant(name + "_sizes", Tensor::from_i64(s.sizes))});
      Value* y = b.node("Resize", ins, s.attrs, name);
      b.output(from_blocked(b, y, blk));
    }
  };
}

std::vector<ResizeSpec> resize_specs() {
  auto m = [](const char* mode) { return attr_string(mode); };
  return {
      {{1, 20, 5, 6}, {1, 1, 2, 2}, {}, {}, {{"mode", m("nearest")}}},
      {{2, 16, 4, 6}, {1, 1, 2, 1.5f}, {}, {}, {{"mode", m("linear")}}, true},
      {{1, 3, 4, 5}, {}, {1, 3, 7, 9}, {}, {{"mode", m("linear")}, {"coordinate_transformation_mode", m("align_corners")}}},
      {{1, 16, 8, 8}, {1, 1, 0.5f, 0.5f}, {}, {},
       {{"mode", m("nearest")}, {"coordinate_transformation_mode", m("asymmetric")}, {"nearest_mode", m("floor")}}},
      {{1, 16, 6, 6}, {}, {1, 16, 5, 7}, {0, 0, 0.1f, 0.2f, 1, 1, 1.2f, 0.7f},
       {{"mode", m("linear")}, {"coordinate_transformation_mode", m("tf_crop_and_resize")}, {"extrapolation_value", attr_float(0.25)}}},
      {{1, 20, 7}, {1, 1, 2}, {}, {}, {{"mode", m("linear")}}, true},
  };
}

TEST(NchwcResize, SpatialNearestAndLinear) {
  for (int64_t blk : {4, 16}) check_nchwc(resizes(resize_specs()), blk);
  check_nchwc(resizes({resize_specs()[1], resize_specs()[4]}), 64);
}

TEST(NchwcResize, SupportsOnlySpatialNearestAndLinear) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 16, 4, 4});
  Value* rc = b.node("Resize", {x, nullptr, b.constant("s1", Tensor::from_f32({1, 2, 1, 1}, {4}))});
  EXPECT_FALSE(supports_blocked(*rc->producer, 16));
  Value* cu = b.node("Resize", {x, nullptr, b.constant("s2", Tensor::from_f32({1, 1, 2, 2}, {4}))}, {{"mode", attr_string("cubic")}});
  EXPECT_FALSE(supports_blocked(*cu->producer, 16));
  Value* ok = b.node("Resize", {x, nullptr, b.constant("s3", Tensor::from_f32({1, 1, 2, 2}, {4}))}, {{"mode", attr_string("linear")}});
  EXPECT_TRUE(supports_blocked(*ok->producer, 16));
}

// ---------------------------------------------------------------------------------------
// A small network kept in NCHWc from end to end, as the layout pass would leave it:
// first-layer conv → max pool → conv → depthwise conv → concat → global average pool.
void network(GraphBuilder& b, int64_t blk) {
  auto nc = [&](Value* v) {
    if (blk) v->layout = Layout::nchwc(blk);
    return v;
  };
  auto cw = [&](const std::string& name, Shape s, int64_t bi) {
    Tensor w = rand_tensor(b, s);
    return blk ? add_constant(*b.g, name, w, Layout::filter(blk, bi)) : b.constant(name, w);
  };
  Value* x = b.input("x", {1, 3, 20, 20});
  Value* c1 = nc(b.node("Conv", {x, cw("w1", {16, 3, 3, 3}, 1), b.random_constant("b1", {16})},
                        {{"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({2, 2})}}));
  Value* r1 = nc(b.node("Relu", {c1}));
  Value* p1 = nc(b.node("MaxPool", {r1}, {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}, {"ceil_mode", attr_int(1)}}));
  Value* c2 = nc(b.node("Conv", {p1, cw("w2", {20, 16, 3, 3}, blk), b.random_constant("b2", {20})}, {{"pads", attr_ints({1, 1, 1, 1})}}));
  Value* c3 = nc(b.node("Conv", {p1, cw("w3", {16, 1, 3, 3}, 1)}, {{"pads", attr_ints({1, 1, 1, 1})}, {"group", attr_int(16)}}));
  Value* cat = nc(b.node("Concat", {c3, c2}, {{"axis", attr_int(1)}}));
  Value* gp = nc(b.node("GlobalAveragePool", {cat}));
  b.output(blk ? b.node("onnxc.layout_transform", {gp}, {{"from", attr_int(blk)}, {"to", attr_int(0)}}) : gp);
  if (blk) {  // also an intermediate output
    b.output(b.node("onnxc.layout_transform", {c2}, {{"from", attr_int(blk)}, {"to", attr_int(0)}}));
  } else {
    b.output(c2);
  }
}

TEST(NchwcNetwork, EndToEnd) {
  for (int64_t blk : {8, 16}) check_nchwc(network, blk);
}

// The network and a case of each kernel built as users build it (-O3 -march=native: the
// vector intrinsics of the register tiles) with -Wall -Wextra -Werror.
void o3_warning_free(const std::string& cc) {
  if (std::system((cc + " --version > /dev/null 2>&1").c_str()) != 0) GTEST_SKIP() << cc << " not installed";
  GraphBuilder b;
  network(b, 16);
  pool(b, 16, pool_specs()[3], "pool");
  pool(b, 16, pool_specs()[11], "apool");
  conv(b, 16, depthwise_specs()[3], "dwconv");
  conv(b, 16, regular_specs()[2], "dilated");
  resizes({resize_specs()[1], resize_specs()[4]})(b, 16);
  pads({pad_specs()[0], pad_specs()[4]})(b, 16);
  global_pools({{1, 20, 5, 6}})(b, 16);
  auto t = tile_specs();
  auto ep = epi_cases();
  conv(b, 16, t[2], "line");
  conv_epi(b, 16, ep[1].first, ep[1].second, "epi_regular");
  conv_epi(b, 16, ep[7].first, ep[7].second, "epi_depthwise");
  conv_epi(b, 16, ep[9].first, ep[9].second, "epi_first");
  // Plain kernels with their own loop shapes: float16 widening (a loop inside, no simd
  // hint) and transposes in cache-line tiles (float32 and bytes).
  b.output(b.node("Cast", {b.input("h", {2, 3, 5}, DType::F16)}, {{"to", attr_int(1)}}, "widen"));
  b.output(b.node("Transpose", {b.input("tf", {37, 45})}, {{"perm", attr_ints({1, 0})}}, "tile_f32"));
  b.output(b.node("Transpose", {b.input("tb", {40, 3, 70}, DType::U8)}, {{"perm", attr_ints({2, 1, 0})}}, "tile_u8"));
  fuse_ops(*b.g, test_pass_options());
  auto in = random_inputs(*b.g);
  auto ref = reference_outputs(*b.g, in);
  CRunOptions o;
  o.cc = cc;
  o.cflags = "-O3 -march=native -ffp-contract=fast";
  o.sanitize = false;  // the point is the compilers' warnings (clang's vectorizer too) on the C as users build it
  expect_close(ref, run_c(*b.g, in, o), 1e-4);
}

TEST(NchwcNetwork, ClangO3WarningFree) { o3_warning_free("clang"); }
TEST(NchwcNetwork, GccO3WarningFree) { o3_warning_free("gcc"); }

}  // namespace
}  // namespace onnxc::test
