// tests/passes/test_memory_plan.cc — memory planning (passes/memory_plan.cc): no two
// tensors that are live at the same time share bytes (checked here with liveness computed
// independently), elementwise nodes reuse a dying input in place, reuse makes the arena
// smaller than the sum of the tensors, and Concat inputs are stored at their place in the
// Concat's output (offsets recomputed here from the shapes).
#include "tests/passes/pass_test_util.h"

namespace onnxc::test {
namespace {

struct Interval {
  size_t def, last;
};

// Liveness by a direct scan: defined at the producer's position, live until the last reader.
std::map<const Value*, Interval> liveness(const Graph& g) {
  std::map<const Value*, Interval> r;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    for (Value* v : g.nodes[k]->outputs)
      if (v && !v->is_output && !v->constant) r[v] = {k, k};
    for (Value* v : g.nodes[k]->all_inputs())
      if (v && r.count(v)) r[v].last = k;
  }
  return r;
}

// An in-place pair: y's producer reads x at its last use and both have the same bytes.
bool in_place_pair(const Value* x, const Value* y, const std::map<const Value*, Interval>& live) {
  const Node* p = y->producer;
  auto ins = p->all_inputs();
  return std::find(ins.begin(), ins.end(), x) != ins.end() && live.at(x).last == live.at(y).def && x->nbytes() == y->nbytes();
}

// Stored inside another value (Value::stored_in): b's bytes lie within a's, and both belong to
// the same containing value.
bool nested(const Value* a, const Value* b) {
  auto root = [](const Value* v) {
    while (v->stored_in) v = v->stored_in;
    return v;
  };
  const int64_t a0 = a->arena_offset, a1 = a0 + static_cast<int64_t>(a->nbytes());
  const int64_t b0 = b->arena_offset, b1 = b0 + static_cast<int64_t>(b->nbytes());
  return root(a) == root(b) && ((a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1));
}

void check_plan(const Graph& g) {
  ASSERT_GE(g.arena_bytes, 0);
  auto live = liveness(g);
  for (auto& [v, iv] : live) {
    ASSERT_GE(v->arena_offset, 0) << v->name;
    EXPECT_EQ(v->arena_offset % 64, 0) << v->name;
    EXPECT_LE(v->arena_offset + static_cast<int64_t>(v->nbytes()), g.arena_bytes) << v->name;
  }
  for (auto& [a, ia] : live)
    for (auto& [b, ib] : live) {
      if (a >= b) continue;
      bool overlap_time = ia.def <= ib.last && ib.def <= ia.last;
      bool overlap_mem = a->arena_offset < b->arena_offset + static_cast<int64_t>(b->nbytes()) &&
                         b->arena_offset < a->arena_offset + static_cast<int64_t>(a->nbytes());
      if (overlap_time && overlap_mem)
        EXPECT_TRUE(in_place_pair(a, b, live) || in_place_pair(b, a, live) || nested(a, b))
            << a->name << " and " << b->name << " are live together and share memory";
    }
}

bool plan(Graph& g) { return plan_memory(g, test_pass_options()); }

TEST(MemoryPlan, ElementwiseChainRunsInPlace) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 8, 16, 16});
  Value* a = b.node("Relu", {x});
  Value* s = b.node("Sigmoid", {a});
  Value* t = b.node("Tanh", {s});
  b.output(b.node("Exp", {t}));
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  // x is a graph input (not in the arena); a, s and t share one buffer.
  EXPECT_EQ(a->arena_offset, s->arena_offset);
  EXPECT_EQ(s->arena_offset, t->arena_offset);
  EXPECT_EQ(g.arena_bytes, static_cast<int64_t>(a->nbytes()));
  EXPECT_EQ(g.arena_tensor_bytes, 3 * static_cast<int64_t>(a->nbytes()));
}

TEST(MemoryPlan, LiveValueIsNotOverwritten) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* a = b.node("Relu", {x});
  Value* s = b.node("Sigmoid", {a});  // a is still needed by the Add
  Value* c = b.node("Add", {a, s});
  b.output(b.node("Neg", {c}));
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  EXPECT_NE(a->arena_offset, s->arena_offset);
  EXPECT_TRUE(c->arena_offset == a->arena_offset || c->arena_offset == s->arena_offset);
}

TEST(MemoryPlan, BroadcastInputIsNotReusedInPlace) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* y = b.input("y", {1, 4, 1, 1});
  Value* big = b.node("Relu", {x});
  Value* small = b.node("Relu", {y});
  Value* p = b.node("Mul", {big, small});
  b.output(b.node("Neg", {p}));
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  EXPECT_EQ(p->arena_offset, big->arena_offset);  // same shape: in place
  EXPECT_NE(p->arena_offset, small->arena_offset);
}

TEST(MemoryPlan, ReusesDeadBuffersAcrossABranchyGraph) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 3, 16, 16});
  Value* cur = x;
  for (int k = 0; k < 4; ++k) {
    Value* w = b.random_constant("w" + std::to_string(k), {8 + 4 * k, k == 0 ? 3 : 4 + 4 * k, 3, 3});
    Value* c = b.node("Conv", {cur, w}, {{"pads", attr_ints({1, 1, 1, 1})}});
    Value* r = b.node("Relu", {c});
    Value* m = b.node("MaxPool", {r}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
    cur = b.node("Add", {r, m});
  }
  b.output(b.node("GlobalAveragePool", {cur}));
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  EXPECT_LT(g.arena_bytes, g.arena_tensor_bytes / 2);
}

TEST(MemoryPlan, GraphOutputsAndConstantsAreNotPlanned) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3});
  Value* c = b.random_constant("c", {2, 3});
  Value* a = b.node("Add", {x, c});
  b.output(a);
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  EXPECT_EQ(a->arena_offset, -1);
  EXPECT_EQ(c->arena_offset, -1);
  EXPECT_EQ(g.arena_bytes, 0);
}

Attr axis1() { return attr_int(1); }

TEST(MemoryPlan, ConcatInputsAreStoredAtTheirPlace) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 4, 8, 8});
  Value* p = b.node("Relu", {x});
  Value* q = b.node("Sigmoid", {x});
  Value* r = b.node("MaxPool", {x}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
  Value* y = b.node("Concat", {p, q, r}, {{"axis", axis1()}});
  Value* t = b.node("Tanh", {y});
  b.output(b.node("Exp", {t}));
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  const int64_t part = 4 * 8 * 8 * 4;  // bytes of one input
  EXPECT_EQ(p->arena_offset, y->arena_offset);
  EXPECT_EQ(q->arena_offset, y->arena_offset + part);
  EXPECT_EQ(r->arena_offset, y->arena_offset + 2 * part);
  EXPECT_EQ(p->stored_in, y);
  EXPECT_EQ(r->stored_in, y);
  EXPECT_EQ(y->stored_in, nullptr);
  EXPECT_EQ(t->arena_offset, y->arena_offset);  // in place over the dying Concat
  EXPECT_EQ(g.arena_bytes, static_cast<int64_t>(y->nbytes()));
}

// DenseNet: layer k concatenates x0..xk, the front of the last Concat of x0..xL.
TEST(MemoryPlan, PrefixConcatsAreViewsOfTheLastOne) {
  GraphBuilder b;
  Value* in = b.input("x", {1, 4, 6, 6});
  Value* x0 = b.node("Relu", {in});
  Value* x1 = b.node("Sigmoid", {x0});
  Value* c1 = b.node("Concat", {x0, x1}, {{"axis", axis1()}});
  Value* w = b.random_constant("w", {4, 8, 1, 1});
  Value* x2 = b.node("Conv", {c1, w});
  Value* c2 = b.node("Concat", {x0, x1, x2}, {{"axis", axis1()}});
  b.output(b.node("Exp", {b.node("Tanh", {c2})}));
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  const int64_t part = 4 * 6 * 6 * 4;
  EXPECT_EQ(x0->arena_offset, c2->arena_offset);
  EXPECT_EQ(x1->arena_offset, c2->arena_offset + part);
  EXPECT_EQ(x2->arena_offset, c2->arena_offset + 2 * part);
  EXPECT_EQ(c1->arena_offset, c2->arena_offset);  // c1 = x0, x1 = the front of c2: no copy
  EXPECT_EQ(c1->stored_in, c2);
  EXPECT_EQ(g.arena_bytes, static_cast<int64_t>(c2->nbytes()));
}

TEST(MemoryPlan, ConcatInputsThatCannotBeStoredInPlaceAreCopied) {
  GraphBuilder b;
  Value* x = b.input("x", {1, 2, 4, 4});
  Value* a = b.node("Relu", {x});
  Value* c1 = b.node("Concat", {a, x, a}, {{"axis", axis1()}});  // a twice, x a graph input
  Value* d = b.node("Sigmoid", {x});
  Value* c2 = b.node("Concat", {d, a}, {{"axis", axis1()}});     // a feeds two Concats
  b.output(b.node("Concat", {c1, c2}, {{"axis", axis1()}}));     // a graph output: the caller's buffer
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  const int64_t part = 2 * 4 * 4 * 4;
  // The last Concat is the caller's output: nothing goes into it. c2 takes d and a, which c1
  // (earlier) then copies; c1's other inputs are a graph input and a again.
  EXPECT_EQ(c1->stored_in, nullptr);
  EXPECT_EQ(c2->stored_in, nullptr);
  EXPECT_EQ(d->stored_in, c2);
  EXPECT_EQ(a->stored_in, c2);
  EXPECT_EQ(a->arena_offset, c2->arena_offset + part);
}

TEST(MemoryPlan, ReshapeInputIsStoredAsItsOutput) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 6, 4});
  Value* a = b.node("Relu", {x});
  Value* shape = b.constant("shape", Tensor::from_i64({4, 12}));
  Value* r = b.node("Reshape", {a, shape});
  Value* f = b.node("Flatten", {r}, {{"axis", attr_int(0)}});
  Value* s = b.node("Sigmoid", {f});
  b.output(b.node("Add", {s, b.node("Flatten", {a}, {{"axis", attr_int(0)}})}));  // a read again later
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  // a feeds a Reshape and a Flatten: it is stored as the later one's output, and the Reshape
  // copies it into r, which is stored as f (Flatten of r: no copy); s, written over f in
  // place, never overwrites the bytes a still needs.
  EXPECT_NE(a->stored_in, nullptr);
  EXPECT_EQ(r->stored_in, f);  // r = the bytes of f
  EXPECT_EQ(r->arena_offset, f->arena_offset);
  EXPECT_NE(s->arena_offset, a->arena_offset);
}

TEST(MemoryPlan, ConcatOfABatchCopies) {
  GraphBuilder b;
  Value* x = b.input("x", {2, 3, 4, 4});  // two images: each input is two runs of the output
  Value* a = b.node("Relu", {x});
  Value* s = b.node("Sigmoid", {x});
  Value* y = b.node("Concat", {a, s}, {{"axis", axis1()}});
  b.output(b.node("Exp", {b.node("Tanh", {y})}));
  Graph& g = *b.g;
  run_pass_checked(g, plan);
  check_plan(g);
  EXPECT_EQ(a->stored_in, nullptr);
  EXPECT_EQ(s->stored_in, nullptr);
}

}  // namespace
}  // namespace onnxc::test
