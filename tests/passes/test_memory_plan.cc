// tests/passes/test_memory_plan.cc — memory planning (passes/memory_plan.cc): no two
// tensors that are live at the same time share bytes (checked here with liveness computed
// independently), elementwise nodes reuse a dying input in place, and reuse makes the arena
// smaller than the sum of the tensors.
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
        EXPECT_TRUE(in_place_pair(a, b, live) || in_place_pair(b, a, live))
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

}  // namespace
}  // namespace onnxc::test
