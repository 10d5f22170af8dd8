// tests/passes/test_layout.cc — the NCHW → NCHWc layout pass (passes/layout.cc) and the
// repacking it relies on (ir/layout.cc, the onnxc.layout_transform op).
//
//  - Repack: NCHW ↔ NCHWc round trips through ir/layout.h and through the transform op's
//    own eval (two implementations that must agree with each other and with the index math
//    written here), blocked → blocked, and conv filter repacking element by element.
//  - Pass: hand-built graphs (chain, residual block, inception concat, depthwise block,
//    squeeze-excitation), each checked for numerical equivalence and for the contract's
//    layout rules (check_contract), with exact transform counts. Each runs twice: with the
//    C backend's answers (Backend::supports, "Ops") and with `contract_supports` below, a
//    model of the answers the contract asks Conv, pools, global pools and Concat to give
//    ("Contract"). Counts that depend on which ops say yes are guarded by those answers, so
//    the tests hold whichever kernels have NCHWc.
//  - Generated C: elementwise chains on NCHWc and transforms compiled with cc and run.
#include <filesystem>
#include <fstream>

#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

namespace fs = std::filesystem;
using Query = std::function<bool(const Node&, int64_t)>;
const char* kT = "onnxc.layout_transform";

int64_t attr_or(const Node& n, const char* name, int64_t def) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.i;
}

bool ops_supports(const Node& n, int64_t b) { return test_backend().supports(n, Layout::nchwc(b)); }

// The contract's answers for the ops whose NCHWc emitters live with the ops
// (Conv, MaxPool/AveragePool, global pools, Concat on channels), on top of the ops' own.
bool contract_supports(const Node& n, int64_t b) {
  if (ops_supports(n, b)) return true;
  const Value* y = n.out(0);
  if (!y || y->dtype != DType::F32 || y->shape.size() != 4) return false;
  const std::string& t = n.op_type;
  if (t == "Conv") {
    int64_t g = attr_or(n, "group", 1), C = n.in(0)->shape[1], M = n.in(1)->shape[0];
    return g == 1 || (g == C && C == M) || ((C / g) % b == 0 && (M / g) % b == 0);
  }
  if (t == "MaxPool" || t == "AveragePool") return !n.out(1);
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool") return true;
  if (t == "Concat") return attr_or(n, "axis", 0) == 1;
  return false;
}

size_t transforms(const Graph& g) { return count_ops(g, kT); }

bool is_elementwise(const Node& n) {
  return n.op->kind() == FusionKind::Elementwise || n.op->kind() == FusionKind::Broadcast;
}

// The contract's layout rules, checked on the graph after the pass.
void check_contract(const Graph& g, int64_t b) {
  std::map<std::pair<const Value*, int64_t>, int> made;
  for (auto& np : g.nodes) {
    const Node& n = *np;
    if (n.op_type == kT) {
      const Value* x = n.in(0);
      int64_t from = attr_or(n, "from", -1), to = attr_or(n, "to", -1);
      EXPECT_EQ(x->layout, from ? Layout::nchwc(from) : Layout::plain()) << n.name;
      EXPECT_EQ(n.out(0)->layout, to ? Layout::nchwc(to) : Layout::plain()) << n.name;
      EXPECT_EQ(++made[std::make_pair(x, to)], 1) << "two transforms of '" << x->name << "' to block " << to;
      if (x->producer && x->producer->op_type == kT)
        EXPECT_NE(attr_or(*x->producer, "from", -1), to) << n.name << " undoes the transform before it";
      continue;
    }
    const Value* y = n.out(0);
    if (!y) continue;
    if (!y->layout.is_nchwc()) {
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (n.in(i) && !n.op->static_input(i)) EXPECT_TRUE(n.in(i)->layout.is_plain()) << n.name << " input " << i;
      continue;
    }
    EXPECT_EQ(y->layout, Layout::nchwc(b)) << n.name;
    for (const Value* o : n.outputs)
      if (o) EXPECT_EQ(o->layout, Layout::nchwc(b)) << n.name;
    if (n.op_type == "Conv") {
      const Value *x = n.in(0), *w = n.in(1);
      int64_t g = attr_or(n, "group", 1), C = x->shape[1], M = w->shape[0];
      bool first = x->layout.is_plain();
      if (first) EXPECT_TRUE(g == 1 && C < b && (!x->producer || !x->producer->out(0)->layout.is_nchwc())) << n.name;
      else EXPECT_EQ(x->layout, Layout::nchwc(b)) << n.name;
      int64_t bi = first || (g == C && C == M) ? 1 : b;
      EXPECT_EQ(w->layout, Layout::filter(b, bi)) << n.name;
      if (n.in(2)) EXPECT_TRUE(n.in(2)->layout.is_plain()) << n.name;
      continue;
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Value* v = n.in(i);
      if (!v || n.op->static_input(i)) continue;
      if (!is_elementwise(n)) {
        EXPECT_EQ(v->layout, Layout::nchwc(b)) << n.name << " input " << i;
        continue;
      }
      Shape view;
      EXPECT_TRUE(nchwc_broadcast_view(v->shape, v->layout, y->shape, b, &view)) << n.name << " input " << i << " " << v->type_str();
      // A plain input reads one value for every lane: it must have one channel.
      if (v->layout.is_plain() && y->shape[1] != 1) EXPECT_TRUE(view.size() >= 2 && view[1] == 1) << n.name;
      if (v->layout.is_nchwc()) EXPECT_EQ(v->shape[1], y->shape[1]) << n.name << " input " << i;
    }
  }
}

// ---- graph building ----

Value* conv(GraphBuilder& gb, Value* x, int64_t M, int64_t k, int64_t group = 1, const std::string& name = "") {
  int64_t C = x->shape[1];
  float r = 1.0f / std::sqrt(static_cast<float>(C / group * k * k));
  Value* w = gb.random_constant(gb.g->fresh_name("w"), {M, C / group, k, k}, -r, r);
  Value* bias = gb.random_constant(gb.g->fresh_name("bias"), {M}, -0.1f, 0.1f);
  int64_t p = k / 2;
  return gb.node("Conv", {x, w, bias},
                 {{"kernel_shape", attr_ints({k, k})}, {"pads", attr_ints({p, p, p, p})}, {"group", attr_int(group)}}, name);
}

Value* relu(GraphBuilder& gb, Value* x) { return gb.node("Relu", {x}); }

// GlobalAveragePool → Flatten → Gemm: the classifier every zoo model ends with.
Value* classifier(GraphBuilder& gb, Value* x, int64_t classes = 5) {
  Value* p = gb.node("GlobalAveragePool", {x});
  Value* f = gb.node("Flatten", {p}, {{"axis", attr_int(1)}});
  Value* w = gb.random_constant(gb.g->fresh_name("fc_w"), {classes, x->shape[1]});
  Value* c = gb.random_constant(gb.g->fresh_name("fc_b"), {classes});
  return gb.node("Gemm", {f, w, c}, {{"transB", attr_int(1)}}, "fc");
}

// ---- repacking ----

// Stored index of activation element (n, c, s) in NCHW[b]c, written out independently.
int64_t nchwc_index(int64_t n, int64_t c, int64_t s, int64_t C, int64_t S, int64_t b) {
  int64_t CB = (C + b - 1) / b;
  return ((n * CB + c / b) * S + s) * b + c % b;
}

Tensor random_tensor(Shape s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(0.5f, 1.5f);  // never zero: padding stays visible
  Tensor t(DType::F32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, (i % 2 ? -1 : 1) * d(rng));
  return t;
}

// The transform op's own eval on a stored tensor (eval_node: layout-native, no conversion).
Tensor eval_transform(const Shape& logical, int64_t from, int64_t to, const Tensor& stored) {
  GraphBuilder gb;
  Value* x = gb.input("x", logical);
  x->layout = from ? Layout::nchwc(from) : Layout::plain();
  Value* y = gb.node(kT, {x}, {{"from", attr_int(from)}, {"to", attr_int(to)}});
  EXPECT_EQ(y->layout, to ? Layout::nchwc(to) : Layout::plain());
  return eval_node(*y->producer, {&stored})[0];
}

TEST(LayoutRepack, RoundTripAndTransformOpAgree) {
  for (int64_t b : {4, 8, 16, 32, 64, 128, 256})
    for (int64_t C : {b, 2 * b, b - 1, b + 3, int64_t{3}}) {
      SCOPED_TRACE("b=" + std::to_string(b) + " C=" + std::to_string(C));
      const int64_t N = 2, H = 3, W = 2, S = H * W, CB = (C + b - 1) / b;
      Shape s{N, C, H, W};
      Tensor x = random_tensor(s, static_cast<unsigned>(b * 1000 + C));
      Tensor blocked = to_layout(x, Layout::nchwc(b));
      ASSERT_EQ(blocked.shape, (Shape{N, CB, H, W, b}));
      // Element by element against the index math; padding lanes zero.
      std::vector<bool> real(static_cast<size_t>(blocked.numel()), false);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t p = 0; p < S; ++p) {
            int64_t q = nchwc_index(n, c, p, C, S, b);
            real[static_cast<size_t>(q)] = true;
            ASSERT_EQ(blocked.get(q), x.get((n * C + c) * S + p));
          }
      for (int64_t q = 0; q < blocked.numel(); ++q)
        if (!real[static_cast<size_t>(q)]) ASSERT_EQ(blocked.get(q), 0.0) << "padding lane " << q;
      EXPECT_EQ(to_plain(blocked, s, Layout::nchwc(b)).bytes, x.bytes);
      // The transform op agrees both ways.
      Tensor by_op = eval_transform(s, 0, b, x);
      EXPECT_EQ(by_op.shape, blocked.shape);
      EXPECT_EQ(by_op.bytes, blocked.bytes);
      EXPECT_EQ(eval_transform(s, b, 0, blocked).bytes, x.bytes);
      // Blocked → blocked, to a smaller and a larger block, and back.
      for (int64_t b2 : {b / 2, b * 2}) {
        if (b2 < 1) continue;
        Tensor other = eval_transform(s, b, b2, blocked);
        EXPECT_EQ(other.bytes, to_layout(x, Layout::nchwc(b2)).bytes) << "b2=" << b2;
        EXPECT_EQ(eval_transform(s, b2, b, other).bytes, blocked.bytes) << "b2=" << b2;
      }
    }
}

TEST(LayoutRepack, RoundTripOtherRanks) {
  for (Shape s : {Shape{1, 5, 7}, Shape{2, 9, 2, 3, 2}}) {
    Tensor x = random_tensor(s, 3);
    for (int64_t b : {4, 8})
      EXPECT_EQ(to_plain(eval_transform(s, 0, b, x), s, Layout::nchwc(b)).bytes, x.bytes) << shape_str(s) << " b=" << b;
  }
}

// Stored index of filter element (o, i, kh, kw) in OIHW{bi}i{bo}o, written out independently.
int64_t filter_index(int64_t o, int64_t i, int64_t k, int64_t I, int64_t K, int64_t bo, int64_t bi) {
  int64_t IB = (I + bi - 1) / bi;
  return ((((o / bo) * IB + i / bi) * K + k) * bi + i % bi) * bo + o % bo;
}

// Checks `stored` is `w` (logical OIHW) in Layout::filter(bo, bi), zero-padded.
void expect_filter(const Tensor& w, const Tensor& stored, int64_t bo, int64_t bi) {
  const int64_t O = w.shape[0], I = w.shape[1], K = w.shape[2] * w.shape[3];
  ASSERT_EQ(stored.numel(), (O + bo - 1) / bo * bo * ((I + bi - 1) / bi * bi) * K);
  int64_t nonzero = 0;
  for (int64_t q = 0; q < stored.numel(); ++q) nonzero += stored.get(q) != 0;
  EXPECT_EQ(nonzero, w.numel()) << "padding is not zero";
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t k = 0; k < K; ++k)
        ASSERT_EQ(stored.get(filter_index(o, i, k, I, K, bo, bi)), w.get((o * I + i) * K + k)) << o << "," << i << "," << k;
}

TEST(LayoutRepack, ConvFilters) {
  for (int64_t b : {4, 16, 64}) {
    SCOPED_TRACE("b=" + std::to_string(b));
    expect_filter(random_tensor({2 * b, b, 3, 3}, 1), to_layout(random_tensor({2 * b, b, 3, 3}, 1), Layout::filter(b, b)), b, b);
    Tensor odd = random_tensor({b + 3, b - 1, 1, 1}, 2);  // regular, neither count a multiple
    expect_filter(odd, to_layout(odd, Layout::filter(b, b)), b, b);
    Tensor grouped = random_tensor({4 * b, b, 3, 3}, 3);  // group 2 of whole blocks: C = 2b → M = 4b
    expect_filter(grouped, to_layout(grouped, Layout::filter(b, b)), b, b);
    Tensor dw = random_tensor({b + 5, 1, 3, 3}, 4);  // depthwise
    expect_filter(dw, to_layout(dw, Layout::filter(b, 1)), b, 1);
    Tensor first = random_tensor({b + 1, 3, 7, 7}, 5);  // first layer: NCHW input, 3 channels
    expect_filter(first, to_layout(first, Layout::filter(b, 1)), b, 1);
    EXPECT_EQ(to_plain(to_layout(first, Layout::filter(b, 1)), first.shape, Layout::filter(b, 1)).bytes, first.bytes);
  }
}

// Layout::pairs: int8 weights [O, I, KH, KW] at [o/b][i/g][kh][kw][o%b][i%g] (pairs, g = 2, and
// quads, g = 4), checked element by element against that formula, with zeros in the lanes past O
// and in the last group's missing partners, and the way back giving the same bytes.
TEST(LayoutRepack, PairsFilter) {
  for (int64_t g : {2, 4}) {
    for (int64_t b : {4, 8, 16}) {
      for (const Shape& s : {Shape{b + 3, 5, 3, 3}, Shape{2 * b, 4, 1, 1}, Shape{b - 1, 7, 5, 3}}) {
        SCOPED_TRACE("g=" + std::to_string(g) + " b=" + std::to_string(b) + " shape " + shape_str(s));
        const int64_t O = s[0], I = s[1], K = s[2] * s[3], OB = (O + b - 1) / b, IP = (I + g - 1) / g;
        Tensor w(DType::I8, s);
        for (size_t j = 0; j < w.bytes.size(); ++j) w.bytes[j] = static_cast<uint8_t>(j * 37 % 251 + 1);  // never 0
        const Layout l = Layout::pairs(b, g);
        EXPECT_EQ(l.str(4), "OIHW" + std::to_string(b) + "o" + std::to_string(g) + "i");
        const Tensor p = to_layout(w, l);
        ASSERT_EQ(p.shape, (Shape{OB, IP, s[2], s[3], b, g}));
        ASSERT_EQ(p.bytes.size(), static_cast<size_t>(OB * IP * K * b * g));
        std::vector<bool> seen(p.bytes.size(), false);
        for (int64_t o = 0; o < O; ++o)
          for (int64_t i = 0; i < I; ++i)
            for (int64_t k = 0; k < K; ++k) {
              const int64_t at = ((((o / b) * IP + i / g) * K + k) * b + o % b) * g + i % g;
              ASSERT_EQ(p.bytes[at], w.bytes[(o * I + i) * K + k]) << o << "," << i << "," << k;
              seen[at] = true;
            }
        for (size_t j = 0; j < seen.size(); ++j)
          if (!seen[j]) ASSERT_EQ(p.bytes[j], 0) << "padding byte " << j;
        EXPECT_EQ(to_plain(p, s, l).bytes, w.bytes);
      }
    }
  }
}

// Layout::quads: an integer matrix [K, N] at [n/b][k/4][n%b][k%4] (MatMulInteger's B for the
// byte-quads kernel), checked element by element against that formula, with zeros in the columns
// past N and the rows past K, and the way back giving the same bytes.
TEST(LayoutRepack, QuadsMatrix) {
  for (int64_t b : {16, 32, 64}) {
    for (const Shape& s : {Shape{37, b + 5}, Shape{8, 2 * b}, Shape{3, b - 1}}) {
      SCOPED_TRACE("b=" + std::to_string(b) + " shape " + shape_str(s));
      const int64_t K = s[0], N = s[1], NP = (N + b - 1) / b, KQ = (K + 3) / 4;
      Tensor w(DType::U8, s);
      for (size_t j = 0; j < w.bytes.size(); ++j) w.bytes[j] = static_cast<uint8_t>(j * 37 % 251 + 1);  // never 0
      const Layout l = Layout::quads(b);
      EXPECT_EQ(l.str(2), "KN" + std::to_string(b) + "n4k");
      const Tensor p = to_layout(w, l);
      ASSERT_EQ(p.shape, (Shape{NP, KQ, b, 4}));
      std::vector<bool> seen(p.bytes.size(), false);
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n) {
          const int64_t at = (((n / b) * KQ + k / 4) * b + n % b) * 4 + k % 4;
          ASSERT_EQ(p.bytes[at], w.bytes[k * N + n]) << k << "," << n;
          seen[at] = true;
        }
      for (size_t j = 0; j < seen.size(); ++j)
        if (!seen[j]) ASSERT_EQ(p.bytes[j], 0) << "padding byte " << j;
      EXPECT_EQ(to_plain(p, s, l).bytes, w.bytes);
    }
  }
}

// Layout::winograd: for every (o, i), A^T [U ⊙ (B^T d B)] A on a random 4×4 patch d must be
// the 2×2 correlation of d with the filter, computed here directly (Lavin & Gray's B, A
// written out); lanes past O are zeros; the way back gives the filter within rounding.
TEST(LayoutRepack, WinogradFilter) {
  const double BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  const double AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int64_t b : {4, 16}) {
    SCOPED_TRACE("b=" + std::to_string(b));
    const int64_t O = b + 3, I = 5, OB = (O + b - 1) / b;
    const Tensor w = random_tensor({O, I, 3, 3}, 11);
    const Layout l = Layout::winograd(b);
    const Tensor u = to_layout(w, l);
    ASSERT_EQ(u.shape, (Shape{16, OB, I, b}));
    for (int64_t p = 0; p < 16; ++p)
      for (int64_t i = 0; i < I; ++i)
        for (int64_t o = O; o < OB * b; ++o) ASSERT_EQ(u.get(((p * OB + o / b) * I + i) * b + o % b), 0.0f) << "padding lane " << o;
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < I; ++i) {
        double d[4][4], m[4][4];
        for (auto& r : d)
          for (double& x : r) x = dist(rng);
        for (int a = 0; a < 4; ++a)
          for (int c = 0; c < 4; ++c) {
            double t = 0;
            for (int x = 0; x < 4; ++x)
              for (int y = 0; y < 4; ++y) t += BT[a][x] * d[x][y] * BT[c][y];
            m[a][c] = t * u.get(((static_cast<int64_t>(a * 4 + c) * OB + o / b) * I + i) * b + o % b);
          }
        for (int y = 0; y < 2; ++y)
          for (int x = 0; x < 2; ++x) {
            double wino = 0, direct = 0;
            for (int a = 0; a < 4; ++a)
              for (int c = 0; c < 4; ++c) wino += AT[y][a] * m[a][c] * AT[x][c];
            for (int r = 0; r < 3; ++r)
              for (int c = 0; c < 3; ++c) direct += d[y + r][x + c] * w.get(((o * I + i) * 3 + r) * 3 + c);
            ASSERT_NEAR(wino, direct, 1e-5) << "o=" << o << " i=" << i << " y=" << y << " x=" << x;
          }
      }
    const Tensor back = to_plain(u, w.shape, l);
    for (int64_t q = 0; q < w.numel(); ++q) ASSERT_NEAR(back.get(q), w.get(q), 1e-6) << q;
  }
}

// ---- the pass ----

struct Case {
  bool contract;
  int64_t b;
};
void PrintTo(const Case& c, std::ostream* os) { *os << (c.contract ? "contract" : "ops") << ", b=" << c.b; }

class LayoutPass : public ::testing::TestWithParam<Case> {
 protected:
  int64_t b() const { return GetParam().b; }
  Query query() const { return GetParam().contract ? Query(contract_supports) : Query(ops_supports); }
  bool yes(Value* produced_by) const { return query()(*produced_by->producer, b()); }
  bool all_yes(std::initializer_list<Value*> vs) const {
    for (Value* v : vs)
      if (!yes(v)) return false;
    return true;
  }
  bool none_yes(std::initializer_list<Value*> vs) const {
    for (Value* v : vs)
      if (yes(v)) return false;
    return true;
  }

  // Runs the pass (checking numerical equivalence and the contract); returns what it returned.
  bool run(Graph& g) {
    std::vector<std::string> names;
    for (Value* v : g.outputs) names.push_back(v->name);
    PassOptions o = test_pass_options();
    o.channel_block = b();
    Query q = query();
    bool changed = run_pass_checked(g, [&](Graph& gr) {
      return GetParam().contract ? layout_nchwc_with(gr, o, q) : layout_nchwc(gr, o);
    });
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      EXPECT_EQ(g.outputs[k]->name, names[k]) << "graph outputs keep their names";
      EXPECT_TRUE(g.outputs[k]->layout.is_plain());
    }
    check_contract(g, b());
    // Running it again changes nothing.
    EXPECT_FALSE(GetParam().contract ? layout_nchwc_with(g, o, q) : layout_nchwc(g, o));
    verify_graph(g);
    return changed;
  }
};

// x[1,3,H,W] → Conv → Relu → Conv → Mul(per-channel) → Add(per-channel) → Relu → MaxPool → classifier.
TEST_P(LayoutPass, Chain) {
  for (int64_t C : {b(), b() + 3}) {
    GraphBuilder gb;
    Value* x = gb.input("x", {1, 3, 6, 6});
    Value* c1 = conv(gb, x, C, 3);
    Value* c2 = conv(gb, relu(gb, c1), C + 4, 3);
    Value* m = gb.node("Mul", {c2, gb.random_constant("scale", {C + 4, 1, 1})});
    Value* a = gb.node("Add", {m, gb.random_constant("shift", {1, C + 4, 1, 1})});
    Value* p = gb.node("MaxPool", {relu(gb, a)}, {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}});
    Value* y = classifier(gb, p);
    gb.output(y);
    Graph& g = *gb.g;
    const bool all = all_yes({c1, c2, p, y->producer->in(0)->producer->in(0)});
    if (GetParam().contract) ASSERT_TRUE(all) << "the contract says yes to every anchor here";
    const bool none = none_yes({c1, c2, p, y->producer->in(0)->producer->in(0)});
    bool changed = run(g);
    if (all) {
      // The first conv reads the NCHW input; one transform before Flatten.
      EXPECT_EQ(transforms(g), 1u);
      EXPECT_TRUE(c1->producer->in(0)->is_input);
      EXPECT_EQ(c1->producer->in(1)->layout, Layout::filter(b(), 1));
      EXPECT_EQ(c2->producer->in(1)->layout, Layout::filter(b(), b()));
      // The per-channel constants became rank-aligned NCHWc constants with the same values.
      for (Node* n : {m->producer, a->producer}) {
        Value* k = n->in(1);
        EXPECT_EQ(k->shape, (Shape{1, C + 4, 1, 1}));
        EXPECT_EQ(k->layout, Layout::nchwc(b()));
      }
      Node* t = g.find("fc")->producer->in(0)->producer->in(0)->producer;
      EXPECT_EQ(t->op_type, kT);
    }
    if (none) {
      EXPECT_EQ(transforms(g), 0u);
      EXPECT_FALSE(changed);
    }
  }
}

// A graph that only has elementwise ops on its input stays plain: blocking it would cost
// two transforms and gain nothing.
TEST_P(LayoutPass, ElementwiseOnInputStaysPlain) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 2 * b(), 3, 3});
  Value* a = gb.node("Add", {relu(gb, x), gb.random_constant("c", {2 * b(), 1, 1})});
  gb.output(gb.node("Sigmoid", {a}));
  Graph& g = *gb.g;
  EXPECT_FALSE(run(g));
  EXPECT_EQ(transforms(g), 0u);
}

TEST_P(LayoutPass, DisabledDoesNothing) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 3, 4, 4});
  gb.output(relu(gb, conv(gb, x, b(), 3)));
  PassOptions o = test_pass_options();
  o.nchwc = false;
  o.channel_block = b();
  EXPECT_FALSE(run_pass_checked(*gb.g, [&](Graph& g) { return layout_nchwc_with(g, o, query()); }));
  for (auto& v : gb.g->values) EXPECT_TRUE(v->layout.is_plain());
}

// Stem conv → [Conv → Relu → Conv] + skip → Relu → classifier; the skip reads the stem's
// blocked output, so the block needs no transform at all.
TEST_P(LayoutPass, ResidualBlock) {
  for (int64_t C : {b(), 2 * b() + 1, int64_t{3}}) {
    GraphBuilder gb;
    Value* x = gb.input("x", {1, 3, 5, 5});
    Value* s = relu(gb, conv(gb, x, C, 3));
    Value* c1 = conv(gb, s, C, 3);
    Value* c2 = conv(gb, relu(gb, c1), C, 1);
    Value* r = relu(gb, gb.node("Add", {c2, s}));
    Value* y = classifier(gb, r);
    gb.output(y);
    // A second output in the middle: blocked, it gets its own transform and keeps its name.
    gb.output(c2);
    Graph& g = *gb.g;
    Value* stem = s->producer->in(0);
    Value* gap = y->producer->in(0)->producer->in(0);
    const bool all = all_yes({stem, c1, c2, gap}), none = none_yes({stem, c1, c2, gap});
    if (GetParam().contract) ASSERT_TRUE(all) << "the contract says yes to every anchor here";
    run(g);
    if (all) EXPECT_EQ(transforms(g), 2u);
    if (none) EXPECT_EQ(transforms(g), 0u);
  }
}

// A residual block on the graph input itself (C ≥ b): the input is transformed once and the
// transform is shared by the conv and the skip Add.
TEST_P(LayoutPass, ResidualOnInputSharesTransform) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, b() + 2, 4, 4});
  Value* c1 = conv(gb, x, b() + 2, 3);
  Value* a = gb.node("Add", {c1, x});
  gb.output(relu(gb, a));
  Graph& g = *gb.g;
  const bool conv_ok = yes(c1);
  if (GetParam().contract) ASSERT_TRUE(conv_ok);
  run(g);
  if (conv_ok) {
    EXPECT_EQ(transforms(g), 2u);  // x → blocked (shared), result → plain
    EXPECT_EQ(c1->producer->in(0), a->producer->in(1));
  } else {
    EXPECT_EQ(transforms(g), 0u);
  }
}

// Stem → three branches (1×1 conv; 3×3 conv; 3×3 max pool → 1×1 conv) → Concat → Relu →
// Conv → classifier. Branch widths: all whole blocks; only the last one not; the first not.
TEST_P(LayoutPass, InceptionConcat) {
  const int64_t B = b();
  struct Widths { int64_t a, c, d; };
  for (Widths w : {Widths{B, 2 * B, B}, Widths{B, B, 3}, Widths{B + 2, B, B}}) {
    GraphBuilder gb;
    Value* x = gb.input("x", {1, 3, 4, 4});
    Value* s = relu(gb, conv(gb, x, 8, 3));
    Value* br1 = relu(gb, conv(gb, s, w.a, 1));
    Value* br2 = relu(gb, conv(gb, s, w.c, 3));
    Value* mp = gb.node("MaxPool", {s}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
    Value* br3 = relu(gb, conv(gb, mp, w.d, 1));
    Value* cat = gb.node("Concat", {br1, br2, br3}, {{"axis", attr_int(1)}});
    Value* c = conv(gb, relu(gb, cat), 6, 3);
    Value* y = classifier(gb, c);
    gb.output(y);
    Graph& g = *gb.g;
    Value* gap = y->producer->in(0)->producer->in(0);
    std::initializer_list<Value*> anchors = {s->producer->in(0), br1->producer->in(0), br2->producer->in(0), mp,
                                             br3->producer->in(0), c, gap};
    const bool all = all_yes(anchors), none = none_yes(anchors) && !yes(cat), cat_ok = yes(cat);
    if (GetParam().contract) ASSERT_TRUE(all) << "the contract says yes to every anchor here";
    run(g);
    SCOPED_TRACE("widths " + std::to_string(w.a) + "," + std::to_string(w.c) + "," + std::to_string(w.d));
    if (all && GetParam().contract) EXPECT_TRUE(cat_ok) << "any split of the channels concatenates blocked";
    // Blocked concat: one transform (before Flatten). Plain concat: one per branch into
    // it, one after it (the conv reading it), one before Flatten.
    if (all) EXPECT_EQ(transforms(g), cat_ok ? 1u : 5u);
    if (none) EXPECT_EQ(transforms(g), 0u);
  }
}

// MobileNet-v2 block: expand 1×1 → Clip (ReLU6) → depthwise 3×3 → Clip → project 1×1 →
// + skip; plus a grouped conv with whole-block groups and one whose groups are not.
TEST_P(LayoutPass, DepthwiseAndGroupedBlock) {
  const int64_t B = b();
  for (int64_t C : {B, B + 3}) {
    GraphBuilder gb;
    Value* x = gb.input("x", {1, 3, 5, 5});
    Value* lo = gb.constant("lo", Tensor::from_f32({0}, {}));
    Value* hi = gb.constant("hi", Tensor::from_f32({6}, {}));
    Value* s = conv(gb, x, C, 3);
    Value* e = gb.node("Clip", {conv(gb, s, 2 * C, 1), lo, hi});
    Value* dw = conv(gb, e, 2 * C, 3, 2 * C);
    Value* p = conv(gb, gb.node("Clip", {dw, lo, hi}), C, 1);
    Value* r = gb.node("Add", {p, s});
    Value* wide = conv(gb, r, 2 * B, 1);
    Value* grouped = conv(gb, wide, 2 * B, 3, 2);  // groups of B → B channels: whole blocks
    Value* odd = conv(gb, grouped, 6, 3, 2);         // groups of B → 3 channels: not
    Value* y = classifier(gb, odd);
    gb.output(y);
    Graph& g = *gb.g;
    Value* gap = y->producer->in(0)->producer->in(0);
    Value* expand = e->producer->in(0);
    const bool all = all_yes({s, expand, dw, p, wide, grouped, gap});
    if (GetParam().contract) ASSERT_TRUE(all) << "the contract says yes to every anchor here";
    const bool none = none_yes({s, expand, dw, p, wide, grouped, odd, gap});
    if (GetParam().contract) EXPECT_FALSE(yes(odd));
    run(g);
    if (all) {
      EXPECT_EQ(dw->producer->in(1)->layout, Layout::filter(B, 1));
      EXPECT_EQ(grouped->producer->in(1)->layout, Layout::filter(B, B));
      // One transform: before Flatten, or before the plain grouped conv (then the global
      // pool and Flatten follow it in plain).
      EXPECT_EQ(transforms(g), 1u);
      EXPECT_EQ(odd->layout.is_nchwc(), yes(odd));
    }
    if (none) EXPECT_EQ(transforms(g), 0u);
  }
}

// Squeeze-excitation: x * Sigmoid(Conv(Relu(Conv(GlobalAveragePool(x))))), the product is a
// graph output (4-D, so it leaves through a transform).
TEST_P(LayoutPass, SqueezeExcitation) {
  for (int64_t C : {2 * b(), b() + 5}) {
    GraphBuilder gb;
    Value* in = gb.input("x", {1, 3, 4, 4});
    Value* x = relu(gb, conv(gb, in, C, 3));
    Value* gap = gb.node("GlobalAveragePool", {x});
    Value* sq = conv(gb, gap, 2, 1);
    Value* ex = conv(gb, relu(gb, sq), C, 1);
    Value* y = gb.node("Mul", {x, gb.node("Sigmoid", {ex})}, {}, "se_out");
    gb.output(y);
    Graph& g = *gb.g;
    Value* stem = x->producer->in(0);
    const bool all = all_yes({stem, gap, sq, ex}), none = none_yes({stem, gap, sq, ex});
    if (GetParam().contract) ASSERT_TRUE(all) << "the contract says yes to every anchor here";
    run(g);
    if (all) {
      EXPECT_EQ(transforms(g), 1u);
      EXPECT_EQ(g.outputs[0]->producer->op_type, kT);
      EXPECT_EQ(g.find("se_out")->producer->op_type, kT);
      // The squeeze conv reads 2 < b channels but from a blocked producer: not a first layer.
      EXPECT_EQ(ex->producer->in(0)->layout, Layout::nchwc(b()));
    }
    if (none) EXPECT_EQ(transforms(g), 0u);
  }
}

// A blocked value needed plain by two consumers and blocked by a third gets one transform,
// and none reads a transform's output back (check_contract).
TEST_P(LayoutPass, TransformsAreSharedNotChained) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 3, 4, 4});
  Value* c = conv(gb, x, b() + 1, 3);
  Value* f1 = gb.node("Flatten", {c});
  Value* f2 = gb.node("LRN", {c}, {{"size", attr_int(3)}});
  Value* c2 = conv(gb, c, 4, 1);
  gb.output(f1);
  gb.output(f2);
  gb.output(c2);
  Graph& g = *gb.g;
  const bool c_ok = yes(c), c2_ok = yes(c2);
  if (GetParam().contract) ASSERT_TRUE(c_ok && c2_ok);
  run(g);
  if (c_ok) EXPECT_EQ(transforms(g), c2_ok ? 2u : 1u);  // c → plain (shared); c2 → plain
  else if (!c2_ok) EXPECT_EQ(transforms(g), 0u);
}

// Per-channel and broadcast inputs of elementwise ops on a blocked activation: full-channel
// constants of any rank are re-created as [1,C,1,1] NCHWc, channel-1 ones and scalars stay
// plain, a full-channel activation of lower rank keeps the node plain.
TEST_P(LayoutPass, ElementwiseBroadcastInputs) {
  const int64_t C = b() + 3;
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 3, 4, 5});
  Value* z = gb.input("z", {C, 4, 5});  // full channels, rank 3: cannot be read blocked
  Value* c = conv(gb, x, C, 3);
  Value* m = gb.node("Mul", {c, gb.random_constant("per_c", {C, 1, 1})});
  Value* a = gb.node("Add", {m, gb.random_constant("spatial", {1, 1, 4, 5})});
  Value* d = gb.node("Div", {a, gb.constant("two", Tensor::from_f32({2}, {}))});
  Value* full = gb.node("Sub", {d, gb.random_constant("full", {1, C, 4, 5})});
  Value* pr = gb.node("PRelu", {full, gb.random_constant("slope", {C, 1, 1})});
  Value* mixed = gb.node("Add", {pr, z});
  gb.output(mixed);
  Graph& g = *gb.g;
  const bool conv_ok = yes(c);
  if (GetParam().contract) ASSERT_TRUE(conv_ok);
  run(g);
  if (!conv_ok) {
    EXPECT_EQ(transforms(g), 0u);
    return;
  }
  for (Value* v : {m, full, pr}) {
    Value* k = v->producer->in(1);
    EXPECT_EQ(k->layout, Layout::nchwc(b())) << v->name;
    EXPECT_EQ(k->shape.size(), 4u) << v->name;
    EXPECT_EQ(v->layout, Layout::nchwc(b())) << v->name;
  }
  EXPECT_TRUE(a->producer->in(1)->layout.is_plain());
  EXPECT_TRUE(d->producer->in(1)->layout.is_plain());
  EXPECT_TRUE(mixed->layout.is_plain());  // z cannot be blocked: the Add reads pr through a transform
  EXPECT_EQ(transforms(g), 1u);
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  return std::string(i.param.contract ? "Contract" : "Ops") + "_b" + std::to_string(i.param.b);
}

INSTANTIATE_TEST_SUITE_P(Blocks, LayoutPass,
                         ::testing::Values(Case{true, 4}, Case{true, 16}, Case{true, 256}, Case{false, 4}, Case{false, 16},
                                           Case{false, 256}),
                         case_name);

// Weight repacking through the pass: every conv's W is its original OIHW tensor in
// Layout::filter(b, bi), element by element.
TEST(LayoutPassFilters, WeightsRepackedElementByElement) {
  for (int64_t b : {4, 16, 32}) {
    GraphBuilder gb;
    Value* x = gb.input("x", {1, 3, 5, 5});
    Value* first = conv(gb, x, b + 1, 3);                // first layer, bi = 1
    Value* reg = conv(gb, first, 2 * b, 3);              // regular, I not a multiple of b
    Value* dw = conv(gb, reg, 2 * b, 3, 2 * b);          // depthwise
    Value* grp = conv(gb, dw, 4 * b, 1, 2);              // two groups of whole blocks
    gb.output(relu(gb, grp));
    Graph& g = *gb.g;
    std::vector<std::pair<Node*, std::shared_ptr<const Tensor>>> before;
    for (Value* v : {first, reg, dw, grp}) before.push_back({v->producer, v->producer->in(1)->constant});
    PassOptions o = test_pass_options();
    o.channel_block = b;
    EXPECT_TRUE(run_pass_checked(g, [&](Graph& gr) { return layout_nchwc_with(gr, o, contract_supports); }));
    check_contract(g, b);
    const int64_t bis[] = {1, b, 1, b};
    for (size_t k = 0; k < before.size(); ++k) {
      SCOPED_TRACE("b=" + std::to_string(b) + " conv " + std::to_string(k));
      Value* w = before[k].first->in(1);
      ASSERT_EQ(w->layout, Layout::filter(b, bis[k]));
      expect_filter(*before[k].second, *w->constant, b, bis[k]);
    }
    EXPECT_EQ(transforms(g), 1u);
  }
}

// ---- generated C ----

// Builds the C of `g` (after the pass) with cc, runs it on `in` and compares with `ref`.
void expect_c_matches(const Graph& g, const std::map<const Value*, Tensor>& in, const std::vector<Tensor>& ref,
                      const std::string& tag) {
  fs::path dir = fs::path(::testing::TempDir()) / ("onnxc_layout_" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  test_backend().write_module(g, CodegenOptions{"m", dir.string(), "test.onnx"});
  std::string d = dir.string() + "/";
  std::string cmd = "cc -std=c11 -O1 -fopenmp -Wall -Wextra -Werror -I" + d + " -DONNXC_MAIN_MODEL -o " + d + "m " + d + "m.c " + d +
                    "onnxc_main.c -lm > " + d + "cc.log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "cc failed, see " << d << "cc.log";
  std::string run = d + "m --quiet";
  for (auto& [v, t] : in) {
    std::string f = d + v->name + ".bin";
    std::ofstream(f, std::ios::binary).write(reinterpret_cast<const char*>(t.bytes.data()), static_cast<std::streamsize>(t.nbytes()));
    run += " --input " + v->name + "=" + f;
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) run += " --output " + g.outputs[k]->name + "=" + d + "out" + std::to_string(k) + ".bin";
  ASSERT_EQ(std::system((run + " > " + d + "run.log 2>&1").c_str()), 0) << run;
  std::vector<Tensor> got;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    Tensor t(g.outputs[k]->dtype, g.outputs[k]->shape);
    std::ifstream(d + "out" + std::to_string(k) + ".bin", std::ios::binary)
        .read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(t.nbytes()));
    got.push_back(std::move(t));
  }
  expect_close(ref, got, 1e-5);
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);  // kept for a look when it failed
}

// Elementwise ops on NCHWc in C: the chain follows a blocked value (made here by an
// explicit transform, as a blocked conv would) with per-channel, channel-1, scalar and
// full inputs, a blocked → blocked transform, a plain consumer in the middle and two
// blocked graph outputs.
TEST(LayoutCodegen, ElementwiseChainsOnNchwc) {
  for (int64_t b : {4, 16, 64, 256})
    for (int64_t C : {b, b + 3, int64_t{5}}) {
      SCOPED_TRACE("b=" + std::to_string(b) + " C=" + std::to_string(C));
      GraphBuilder gb;
      Value* x = gb.input("x", {2, C, 3, 5});
      Value* w = gb.input("w", {1, C, 3, 5});
      Value* t0 = gb.node(kT, {x}, {{"from", attr_int(0)}, {"to", attr_int(b / 2)}});
      Value* t = gb.node(kT, {t0}, {{"from", attr_int(b / 2)}, {"to", attr_int(b)}});
      Value* r = gb.node("Relu", {t});
      Value* m = gb.node("Mul", {r, gb.random_constant("per_c", {C, 1, 1})});
      Value* a = gb.node("Add", {m, gb.random_constant("spatial", {1, 1, 3, 5})});
      Value* s = gb.node("Sigmoid", {gb.node("Sub", {a, w})});
      Value* lo = gb.constant("lo", Tensor::from_f32({0.2f}, {}));
      Value* hi = gb.constant("hi", Tensor::from_f32({0.7f}, {}));
      Value* cl = gb.node("Clip", {s, lo, hi}, {}, "clipped");
      Value* sum = gb.node("Sum", {cl, m, gb.constant("one", Tensor::from_f32({1}, {}))}, {}, "summed");
      Value* fl = gb.node("Flatten", {a}, {{"axis", attr_int(1)}}, "flat");
      gb.output(sum);
      gb.output(cl);
      gb.output(fl);
      Graph& g = *gb.g;
      auto in = random_inputs(g);
      auto ref = reference_outputs(g, in);
      PassOptions o = test_pass_options();
      o.channel_block = b;
      EXPECT_TRUE(layout_nchwc(g, o));
      verify_graph(g);
      check_contract(g, b);
      EXPECT_EQ(sum->layout, Layout::nchwc(b));
      EXPECT_EQ(g.outputs[0]->name, "summed");
      // Transforms: the two given, w → blocked, a → plain (Flatten), two outputs → plain.
      EXPECT_EQ(transforms(g), 6u);
      expect_close(ref, reference_outputs(g, in));
      expect_c_matches(g, in, ref, "ew_b" + std::to_string(b) + "_c" + std::to_string(C));
    }
}

// A QDQ model's QuantizeLinear / DequantizeLinear pairs (per tensor) between blocked convs
// run on the blocked channels, uint8 between them: no transform but the output's. Per axis
// they stay plain. Built and run in C, padding lanes included (C = b + 3).
TEST(LayoutCodegen, QuantizeDequantizePerTensorOnNchwc) {
  for (int64_t b : {8, 16})
    for (bool per_axis : {false, true}) {
      SCOPED_TRACE("b=" + std::to_string(b) + (per_axis ? " per axis" : " per tensor"));
      const int64_t C = b + 3;
      GraphBuilder gb;
      Value* x = gb.input("x", {1, 3, 6, 6});
      Value* c1 = conv(gb, x, C, 3);
      Value* s = per_axis ? gb.random_constant("s", {C}, 0.01f, 0.02f) : gb.constant("s", Tensor::from_f32({0.02f}, {}));
      Value* z = per_axis ? gb.constant("z", Tensor::from_i64(std::vector<int64_t>(static_cast<size_t>(C), 7), DType::U8, {C}))
                          : gb.constant("z", Tensor::from_i64({7}, DType::U8, {}));
      Value* q = gb.node("QuantizeLinear", {c1, s, z}, {{"axis", attr_int(1)}});
      Value* d = gb.node("DequantizeLinear", {q, s, z}, {{"axis", attr_int(1)}});
      Value* c2 = conv(gb, d, 4, 3, 1, "c2");
      gb.output(c2);
      Graph& g = *gb.g;
      auto in = random_inputs(g);
      auto ref = reference_outputs(g, in);
      PassOptions o = test_pass_options();
      o.channel_block = b;
      EXPECT_TRUE(layout_nchwc(g, o));
      verify_graph(g);
      check_contract(g, b);
      EXPECT_EQ(q->layout, per_axis ? Layout::plain() : Layout::nchwc(b));
      EXPECT_EQ(q->dtype, DType::U8);
      EXPECT_EQ(transforms(g), per_axis ? 3u : 1u);  // per axis: c1 → plain, d → blocked, c2 → plain
      expect_close(ref, reference_outputs(g, in));
      expect_c_matches(g, in, ref, "qdq_b" + std::to_string(b) + (per_axis ? "_axis" : "_tensor"));
    }
}

}  // namespace
}  // namespace onnxc::test
