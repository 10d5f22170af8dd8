// Macro-task graph and list schedule (passes/schedule.h): the task graph's edges and critical
// path on hand-built graphs, independent branches spread over thread groups, a chain of small
// tasks gaining nothing, and on random DAGs that every schedule respects its dependences,
// never overlaps two tasks in one group and is no slower than one thread.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "ir/cost.h"
#include "passes/schedule.h"
#include "pass_test_util.h"

namespace onnxc::test {
namespace {

Target target16() {
  Target t = host_target();
  t.threads = 16;
  t.vector_bits = 512;
  t.fma = true;
  t.parallel_min_work = int64_t{1} << 16;
  return t;
}

Value* relus(GraphBuilder& gb, Value* x, int n) {
  for (int k = 0; k < n; ++k) x = gb.node("Relu", {x});
  return x;
}

// Every task starts after its predecessors finish; tasks of one group never overlap.
void expect_valid(const TaskGraph& tg, const TaskSchedule& s) {
  ASSERT_EQ(s.group.size(), tg.tasks.size());
  for (size_t i = 0; i < tg.tasks.size(); ++i) {
    EXPECT_GE(s.group[i], 0);
    EXPECT_LT(s.group[i], s.groups);
    EXPECT_LE(s.start[i], s.finish[i]);
    EXPECT_LE(s.finish[i], s.makespan + 1e-15);
    for (int p : tg.tasks[i].preds) EXPECT_GE(s.start[i], s.finish[static_cast<size_t>(p)] - 1e-15) << "t" << i << " after t" << p;
    for (size_t j = 0; j < i; ++j)
      if (s.group[i] == s.group[j])
        EXPECT_TRUE(s.finish[i] <= s.start[j] + 1e-15 || s.finish[j] <= s.start[i] + 1e-15) << "t" << i << " and t" << j << " overlap";
  }
}

TEST(Schedule, ChainOfSmallTasksGainsNothing) {
  GraphBuilder gb;
  gb.output(relus(gb, gb.input("x", {1, 8, 4, 4}), 6));
  const Target t = target16();
  TaskGraph tg = build_task_graph(*gb.g, t);
  ASSERT_EQ(tg.tasks.size(), 6u);
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(tg.tasks[i].preds, std::vector<int>{static_cast<int>(i) - 1});
  EXPECT_EQ(tg.critical_path, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_NEAR(tg.critical_seconds, tg.total_seconds, 1e-12);
  const double one = schedule_tasks(tg, 1, t).makespan;
  EXPECT_NEAR(one, tg.total_seconds, 1e-12);
  for (int threads : {2, 4, 16}) {
    TaskSchedule s = schedule_tasks(tg, threads, t);
    expect_valid(tg, s);
    EXPECT_NEAR(s.makespan, one, 1e-12) << threads << " threads";
  }
}

// x → 4 branches of 3 small Relus → Sum: tasks too small to split, so the branches go to
// separate groups and 4 threads run them side by side.
TEST(Schedule, IndependentBranchesRunSideBySide) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 16, 8, 8});
  std::vector<Value*> ends;
  for (int b = 0; b < 4; ++b) ends.push_back(relus(gb, x, 3));
  gb.output(gb.node("Sum", ends));
  const Target t = target16();
  TaskGraph tg = build_task_graph(*gb.g, t);
  ASSERT_EQ(tg.tasks.size(), 13u);
  EXPECT_EQ(tg.tasks[12].preds, (std::vector<int>{2, 5, 8, 11}));
  EXPECT_EQ(tg.critical_path.size(), 4u);  // three Relus and the Sum
  EXPECT_EQ(tg.critical_path.back(), 12);
  const double one = schedule_tasks(tg, 1, t).makespan;
  TaskSchedule s = schedule_tasks(tg, 4, t);
  expect_valid(tg, s);
  EXPECT_EQ(s.groups, 4);
  EXPECT_GT(one / s.makespan, 2.5);
  std::set<int> first_groups;
  for (int i : {0, 3, 6, 9}) first_groups.insert(s.group[static_cast<size_t>(i)]);
  EXPECT_EQ(first_groups.size(), 4u) << "each branch in its own group";
  // Loop parallelism alone (one group of 4) cannot split tasks this small.
  EXPECT_NEAR(schedule_tasks_in_groups(tg, 4, 1, t).makespan, one, 1e-12);
  const std::string text = describe_schedule(tg, 4, t);
  EXPECT_NE(text.find("critical path: 4 tasks"), std::string::npos) << text;
  EXPECT_NE(text.find("schedule at 4 threads: 4 groups of 1"), std::string::npos) << text;
}

// A large conv splits its loops: one group of all the threads beats groups.
TEST(Schedule, LargeTasksUseLoopParallelism) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 64, 56, 56});
  Value* w = gb.random_constant("w", {64, 64, 3, 3});
  Value* y = gb.node("Conv", {x, w}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
  gb.output(gb.node("Relu", {y}));
  const Target t = target16();
  TaskGraph tg = build_task_graph(*gb.g, t);
  ASSERT_EQ(tg.tasks.size(), 2u);
  EXPECT_NEAR(tg.tasks[0].flops, 2.0 * 64 * 64 * 9 * 56 * 56, 1e6);
  TaskSchedule s = schedule_tasks(tg, 8, t);
  expect_valid(tg, s);
  EXPECT_EQ(s.groups, 1);
  EXPECT_GT(schedule_tasks(tg, 1, t).makespan / s.makespan, 6.0);
}

TEST(Schedule, RandomGraphsScheduleValidly) {
  std::mt19937 rng(11);
  const Target t = target16();
  for (int trial = 0; trial < 30; ++trial) {
    GraphBuilder gb;
    std::vector<Value*> vals{gb.input("x", {1, 16, 8, 8})};
    const int n = 5 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) {
      Value* a = vals[rng() % vals.size()];
      Value* b = vals[rng() % vals.size()];
      // Sizes vary: some tasks split their loops, most do not.
      vals.push_back(rng() % 4 ? gb.node("Add", {a, b}) : gb.node("Relu", {a}));
    }
    gb.output(vals.back());
    TaskGraph tg = build_task_graph(*gb.g, t);
    ASSERT_EQ(tg.tasks.size(), static_cast<size_t>(n));
    EXPECT_NEAR(schedule_tasks(tg, 1, t).makespan, tg.total_seconds, 1e-12);
    EXPECT_LE(tg.critical_seconds, tg.total_seconds + 1e-15);
    for (int threads : {2, 3, 4, 8, 16}) {
      TaskSchedule s = schedule_tasks(tg, threads, t);
      SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(threads) + " threads");
      expect_valid(tg, s);
      EXPECT_EQ(threads % s.groups, 0);
      // No schedule beats the longest chain of task times on a group.
      std::vector<double> end(tg.tasks.size(), 0);
      double bound = 0;
      for (size_t i = 0; i < tg.tasks.size(); ++i) {
        for (int p : tg.tasks[i].preds) end[i] = std::max(end[i], end[static_cast<size_t>(p)]);
        end[i] += task_seconds(tg.tasks[i], threads / s.groups, t);
        bound = std::max(bound, end[i]);
      }
      EXPECT_GE(s.makespan, bound - 1e-12);
    }
  }
}

// Tasks are weighed by ir/cost.h: the transformer and normalization ops count their arithmetic.
TEST(Schedule, CostsOfTransformerOps) {
  GraphBuilder gb;
  gb.g->opset = 17;
  Value* a = gb.input("a", {2, 8, 32});
  Value* w = gb.random_constant("w", {32, 16});
  Value* e = gb.node("Einsum", {a, w}, {{"equation", attr_string("bij,jk->bik")}});
  Value* scale = gb.random_constant("s", {16});
  Value* ln = gb.node("LayerNormalization", {e, scale}, {{"axis", attr_int(-1)}});
  Value* k = gb.constant("k", Tensor::from_i64({3}, DType::I64, {1}));
  Value* top = gb.node_n("TopK", {ln, k}, 2)[0];
  gb.output(top);
  EXPECT_DOUBLE_EQ(node_cost(*e->producer).flops, 2.0 * 2 * 8 * 32 * 16);
  EXPECT_DOUBLE_EQ(node_cost(*ln->producer).flops, 8.0 * 2 * 8 * 16);
  EXPECT_DOUBLE_EQ(node_cost(*top->producer).flops, 2.0 * 8 * 16 * 3);
  EXPECT_GT(node_cost(*e->producer).bytes, 4.0 * (2 * 8 * 32 + 32 * 16 + 2 * 8 * 16) - 1);
}

}  // namespace
}  // namespace onnxc::test
