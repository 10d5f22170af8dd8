// tests/passes/test_pack_weights.cc — the pack-weights pass (passes/pack_weights.cc) and the
// register-tiled Gemm/MatMul it enables (codegen/c/kernels/gemm.cc, panel form): which
// constants are repacked into which panels, that the reference evaluator gives the same
// outputs before and after (run_pass_checked), and that the generated C of the packed
// products — every tile remainder, transposes, alpha/beta and C broadcasts, fused epilogues,
// several targets' tiles — matches the reference evaluation of the original graph.
#include "tests/codegen/c_run.h"
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

bool pack(Graph& g, const Backend& be = test_backend()) {
  PassOptions o = test_pass_options();
  o.backend = &be;
  return run_pass_checked(g, [&](Graph& gr) { return pack_weights(gr, o); });
}

const Node* only(const Graph& g, const std::string& op) {
  const Node* r = nullptr;
  for (auto& n : g.nodes)
    if (n->op_type == op) r = n.get();
  return r;
}

// Layout::panel against its index math: (k, n) of [K, N] (or (n, k) of [N, K]) at
// [n / nr][k][n % nr], zeros past N, and back.
TEST(PanelLayout, ElementsPaddingAndRoundTrip) {
  for (bool trans : {false, true})
    for (int64_t nr : {8, 32}) {
      const int64_t K = 5, N = 2 * nr + 3;
      GraphBuilder b;
      Tensor m = *b.random_constant("m", trans ? Shape{N, K} : Shape{K, N})->constant;
      const Layout l = Layout::panel(nr, trans);
      Tensor p = to_layout(m, l);
      ASSERT_EQ(p.shape, (Shape{3, K, nr}));
      for (int64_t q = 0; q < 3; ++q)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < nr; ++j) {
            const int64_t n = q * nr + j;
            const double want = n < N ? m.get(trans ? n * K + k : k * N + n) : 0.0;
            ASSERT_EQ(p.get((q * K + k) * nr + j), want) << "trans " << trans << " nr " << nr << " k " << k << " n " << n;
          }
      EXPECT_EQ(to_plain(p, m.shape, l).bytes, m.bytes);
    }
}

TEST(PackWeights, MatMulWeightsGoInPanels) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 37, 50});
  Value* w = b.random_constant("w", {50, 70});
  b.output(b.node("MatMul", {x, w}));
  Graph& g = *b.g;
  EXPECT_TRUE(pack(g));
  const Value* p = only(g, "MatMul")->in(1);
  // The test target has 16-float vectors: panels of 2 vectors, zero-padded past N.
  EXPECT_EQ(p->layout, Layout::panel(32, false));
  EXPECT_EQ(p->layout.str(2), "KN32n");
  EXPECT_EQ(p->physical_shape(), (Shape{3, 50, 32}));
  EXPECT_EQ(p->shape, (Shape{50, 70}));
  EXPECT_FALSE(g.find("w")) << "the plain copy is dropped once nothing reads it";
  EXPECT_FALSE(pack(g)) << "a second run changes nothing";
}

TEST(PackWeights, TransposedGemmWeightsKeepTheirAttributes) {
  GraphBuilder b;
  Value* x = b.input("x", {8, 20});
  Value* w = b.random_constant("w", {40, 20});
  Value* c = b.random_constant("c", {40});
  b.output(b.node("Gemm", {x, w, c}, {{"transB", attr_int(1)}}));
  Graph& g = *b.g;
  EXPECT_TRUE(pack(g));
  const Node* n = only(g, "Gemm");
  EXPECT_EQ(n->in(1)->layout, Layout::panel(32, true));
  EXPECT_EQ(n->in(1)->physical_shape(), (Shape{2, 20, 32}));
  EXPECT_TRUE(n->in(2)->layout.is_plain()) << "C stays plain";
}

TEST(PackWeights, LeavesGemvActivationsAndOtherTypesAlone) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 20});     // 2 rows: the GEMV forms read B as it is
  Value* y = b.input("y", {8, 20});
  Value* z = b.input("z", {20, 16});    // activation x activation
  Value* w = b.random_constant("w", {20, 16});
  b.output(b.node("MatMul", {x, w}));
  b.output(b.node("MatMul", {y, z}));
  Graph& g = *b.g;
  EXPECT_FALSE(pack(g));
  for (auto& n : g.nodes) EXPECT_TRUE(n->in(1)->layout.is_plain()) << n->name;
}

TEST(PackWeights, SharedConstantPackedOnceAndKeptForOtherReaders) {
  GraphBuilder b;
  Value* x = b.input("x", {6, 20});
  Value* w = b.random_constant("w", {20, 16});
  Value* a = b.node("MatMul", {x, w});
  Value* c = b.node("MatMul", {a, b.random_constant("v", {16, 16})});
  Value* d = b.node("MatMul", {x, w});
  b.output(c);
  b.output(d);
  b.output(b.node("Add", {w, w}));  // reads the plain w
  Graph& g = *b.g;
  EXPECT_TRUE(pack(g));
  std::set<const Value*> packed;
  for (auto& n : g.nodes)
    if (n->op_type == "MatMul") packed.insert(n->in(1));
  EXPECT_EQ(packed.size(), 2u) << "w once, v once";
  ASSERT_TRUE(g.find("w"));
  EXPECT_TRUE(g.find("w")->layout.is_plain());
}

TEST(PackWeights, CountsAgainstMaxMemory) {
  GraphBuilder b;
  Value* x = b.input("x", {8, 64});
  b.output(b.node("MatMul", {x, b.random_constant("w", {64, 100})}));
  Graph& g = *b.g;
  g.max_memory = static_cast<uint64_t>(64 * 100 * 4 + 100);  // the original fits, a padded copy does not
  PassOptions o = test_pass_options();
  try {
    pack_weights(g, o);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("repacking constant 'w'"), std::string::npos) << e.what();
  }
}

// The whole pipeline for `target`, then the generated C against the reference evaluation
// of the graph as built.
void expect_c_matches(GraphBuilder& b, const std::string& target, const std::string& tag, bool expect_packed = true) {
  auto in = random_inputs(*b.g, 5);
  auto ref = reference_outputs(*b.g, in);
  std::unique_ptr<Backend> be = make_c_backend(parse_target(target));
  PassOptions o;
  o.backend = be.get();
  o.channel_block = be->target().vector_floats();
  run_pipeline(*b.g, o);
  bool packed = false;
  for (auto& n : b.g->nodes)
    for (Value* v : n->inputs) packed = packed || (v && v->layout.is_panel());
  EXPECT_EQ(packed, expect_packed) << tag;
  std::map<const Value*, Tensor> in2;
  for (Value* v : b.g->inputs)
    for (auto& [old, t] : in)
      if (old->name == v->name) in2[v] = t;
  SCOPED_TRACE(tag + " on " + target);
  CRunOptions co;
  co.backend = be.get();
  co.threads = 2;
  co.cflags = "-O1 -ffp-contract=fast";
  auto got = run_c(*b.g, in2, co);
  if (got.empty()) return;
  expect_close(ref, got, 1e-4);
}

const char* kTargets[] = {"x86-64-avx512", "x86-64-avx2", "x86-64-sse4", "generic-vector:64"};

TEST(PackedGemmC, RowAndColumnRemaindersWithBiasReluEpilogue) {
  for (const char* t : kTargets) {
    GraphBuilder b;
    Value* x = b.input("x", {1, 37, 50});  // 37 rows: full tiles and a remainder; 70 columns: a partial panel
    Value* y = b.node("MatMul", {x, b.random_constant("w", {50, 70})});
    y = b.node("Add", {y, b.random_constant("bias", {70})});
    b.output(b.node("Relu", {y}));
    expect_c_matches(b, t, "MatMul+Add+Relu");
  }
}

// One graph of independent Gemms (one C build per target): every transpose pair, and on
// the first target every form of C.
TEST(PackedGemmC, GemmTransposesAlphaBetaAndCBroadcasts) {
  bool first = true;
  for (const char* t : kTargets) {
    GraphBuilder b;
    int k = 0;
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (const Shape& cs : {Shape{33}, Shape{}, Shape{1}, Shape{13, 1}, Shape{13, 33}}) {
          if (!first && cs != Shape{33}) continue;
          const std::string id = std::to_string(k++);
          Value* x = b.input("x" + id, ta ? Shape{9, 13} : Shape{13, 9});
          Value* w = b.random_constant("w" + id, tb ? Shape{33, 9} : Shape{9, 33});
          std::vector<Value*> ins{x, w};
          if (!cs.empty()) ins.push_back(b.random_constant("c" + id, cs));
          b.output(b.node("Gemm", ins, {{"transA", attr_int(ta)}, {"transB", attr_int(tb)}, {"alpha", attr_float(0.5)},
                                        {"beta", attr_float(-1.5)}}));
        }
    expect_c_matches(b, t, "Gemms");
    first = false;
  }
}

TEST(PackedGemmC, BatchedRowsWithResidualAndBroadcastExtras) {
  for (const char* t : {"x86-64-avx512", "generic-vector:16"}) {
    GraphBuilder b;
    Value* x = b.input("x", {2, 3, 7, 24});
    Value* r = b.input("r", {2, 3, 7, 40});
    Value* s = b.input("s", {2, 1, 7, 1});
    Value* y = b.node("MatMul", {x, b.random_constant("w", {24, 40})});
    y = b.node("Add", {y, r});
    y = b.node("Mul", {y, s});
    b.output(b.node("Sigmoid", {y}));
    expect_c_matches(b, t, "MatMul+Add+Mul+Sigmoid");
  }
}

TEST(PackedGemmC, SingleStepReductionAndFewRows) {
  GraphBuilder b;
  Value* x = b.input("x", {4, 1});  // K = 1, M = 4: the fewest rows that are packed
  b.output(b.node("MatMul", {x, b.random_constant("w", {1, 5})}));
  expect_c_matches(b, "x86-64-avx512", "K 1");
  GraphBuilder b3;
  Value* x3 = b3.input("x", {3, 16});  // 3 rows: the GEMV forms, B not packed
  b3.output(b3.node("MatMul", {x3, b3.random_constant("w", {16, 5})}));
  expect_c_matches(b3, "x86-64-avx512", "M 3", false);
}

// Packed weights with more than one panel: each k step of a tile also asks for the same row
// of the next panel (the last panel for its own row, never past the weights); one panel: no
// hint. The products still match the reference.
TEST(PackedGemmC, NextPanelPrefetchedWithinTheWeights) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 37, 50});
  b.output(b.node("MatMul", {x, b.random_constant("w", {50, 70})}, {}, "three_panels"));  // 70 columns: 3 panels of 32
  b.output(b.node("MatMul", {x, b.random_constant("w1", {50, 20})}, {}, "one_panel"));
  expect_c_matches(b, "x86-64-avx512", "prefetching products");  // runs the pipeline on b
  std::unique_ptr<Backend> be = make_c_backend(parse_target("x86-64-avx512"));
  auto body = [&](size_t k, const std::string& name) {
    const Node* n = b.g->outputs[k]->producer;
    EXPECT_TRUE(n && n->name == name);
    return n ? be->emit_node(*n, NodeParams{{"x0", "x1"}, {"y0"}, {}}).body : std::string();
  };
  const std::string three = body(0, "three_panels"), one = body(1, "one_panel");
  EXPECT_NE(three.find("const int64_t pn = jp + 1 < 3 ? 1600 : 0;"), std::string::npos) << three;  // 50 x 32 floats a panel
  EXPECT_NE(three.find("ONNXC_PREFETCH(bk + pn + 16);"), std::string::npos) << three;
  EXPECT_EQ(one.find("ONNXC_PREFETCH"), std::string::npos) << one;
}

// The dot form (fewer than 4 rows, B stored N x K): rows of B in groups of 4 with a
// remainder group, K past the last whole step of two vectors, alpha, beta and C broadcasts,
// a transposed single-row A, two rows of A, a batched product with B of one column, and a
// K too short for the vector steps, on every target's vector width.
TEST(PackedGemmC, DotFormRowGroupsAndRemainders) {
  for (const char* t : kTargets) {
    GraphBuilder b;
    Value* x = b.input("x", {1, 75});
    b.output(b.node("Gemm", {x, b.random_constant("w", {7, 75}), b.random_constant("c", {7})},
                    {{"transB", attr_int(1)}, {"alpha", attr_float(0.5)}, {"beta", attr_float(-1.5)}}));
    Value* xt = b.input("xt", {300, 1});
    b.output(b.node("Gemm", {xt, b.random_constant("wt", {4, 300}), b.random_constant("ct", {1})},
                    {{"transA", attr_int(1)}, {"transB", attr_int(1)}}));
    Value* x2 = b.input("x2", {2, 130});
    Value* y2 = b.node("Gemm", {x2, b.random_constant("w2", {9, 130}), b.random_constant("c2", {2, 9})}, {{"transB", attr_int(1)}});
    b.output(b.node("Relu", {y2}));
    Value* x3 = b.input("x3", {3, 1, 256});
    b.output(b.node("MatMul", {x3, b.random_constant("w3", {256, 1})}));
    Value* x4 = b.input("x4", {1, 6});
    b.output(b.node("Gemm", {x4, b.random_constant("w4", {5, 6})}, {{"transB", attr_int(1)}}));
    expect_c_matches(b, t, "dot forms", false);
  }
}

// Activation x activation (attention's products): each task packs its panel of B. Batches
// broadcast on either side, a transposed activation B, an epilogue reading the batch, and a
// K too long for a stack panel (the blocked form) in one graph.
TEST(PackedGemmC, ActivationTimesActivation) {
  for (const char* t : {"x86-64-avx512", "x86-64-avx2"}) {
    GraphBuilder b;
    Value* q = b.input("q", {2, 3, 13, 20});
    Value* k = b.input("k", {1, 3, 20, 37});
    Value* s = b.input("s", {2, 3, 1, 37});
    Value* y = b.node("MatMul", {q, k});
    y = b.node("Add", {y, s});
    b.output(b.node("Relu", {y}));
    Value* q2 = b.input("q2", {3, 5, 20});
    Value* k2 = b.input("k2", {20, 9});  // no batch: folded into 15 rows
    b.output(b.node("MatMul", {q2, k2}));
    Value* x = b.input("x", {6, 12});
    Value* w = b.input("w", {11, 12});
    b.output(b.node("Gemm", {x, w, b.random_constant("c", {11})}, {{"transB", attr_int(1)}}));
    Value* a3 = b.input("a3", {5, 600});
    Value* b3 = b.input("b3", {600, 7});  // 600 x 32 floats: more than a stack panel
    b.output(b.node("MatMul", {a3, b3}));
    expect_c_matches(b, t, "activation products", false);
  }
}

}  // namespace
}  // namespace onnxc::test
