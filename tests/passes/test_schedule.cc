// Macro-task graph and list schedule (passes/schedule.h): the task graph's edges and critical
// path on hand-built graphs, independent branches spread over thread groups, a chain of small
// tasks gaining nothing, and on random DAGs that every schedule respects its dependences,
// never overlaps two tasks in one group and is no slower than one thread. Fork-join regions
// (plan_task_regions, the schedule pass): independent branches become lists, chains and
// loop-friendly graphs get none in "auto", no list reads another's results, the memory plan
// keeps a region's tensors apart (check_memory_plan, which also catches a corrupted plan), the
// lists' thread groups follow their times, OpenMP tasks fill the threads that loops too short
// for them leave idle (and the prediction stays within its bounds on random DAGs), the C
// kernels say how their loops split, and an inception-like graph with regions runs in C
// with the reference's outputs at 2 and 5 threads, as OpenMP tasks and on thread groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "codegen/backend.h"
#include "ir/cost.h"
#include "passes/schedule.h"
#include "pass_test_util.h"
#include "tests/codegen/c_run.h"

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

// --profile-data: a task whose ONNX nodes a measured function computes takes its time; the
// critical path follows the measured times.
TEST(Schedule, MeasuredTimesReplaceThePredictions) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 16, 8, 8});
  Value* a = gb.node("Relu", {x}, {}, "a");
  Value* b = gb.node("Relu", {x}, {}, "b");
  gb.output(gb.node("Add", {a, b}, {}, "sum"));
  const Target t = target16();
  const TaskGraph predicted = build_task_graph(*gb.g, t);
  EXPECT_EQ(predicted.measured_tasks, 0u);
  std::vector<MeasuredOp> measured = {{{"b"}, 0.5}, {{"sum", "elsewhere"}, 0.25}};
  const TaskGraph tg = build_task_graph(*gb.g, t, &measured);
  ASSERT_EQ(tg.tasks.size(), 3u);
  EXPECT_EQ(tg.measured_tasks, 2u);
  EXPECT_DOUBLE_EQ(tg.tasks[0].seconds, predicted.tasks[0].seconds);
  EXPECT_FALSE(tg.tasks[0].measured);
  EXPECT_DOUBLE_EQ(tg.tasks[1].seconds, 0.5);
  EXPECT_TRUE(tg.tasks[1].measured);
  EXPECT_DOUBLE_EQ(tg.tasks[2].seconds, 0.25);
  EXPECT_EQ(tg.critical_path, (std::vector<int>{1, 2}));
  EXPECT_NEAR(tg.critical_seconds, 0.75, 1e-12);
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
  // 3x3 taps, pads 1: 166 of the 168 (row, tap) pairs per dimension read inside the input.
  EXPECT_NEAR(tg.tasks[0].flops, 2.0 * 64 * 64 * 166 * 166, 1e6);
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

// Taps on a conv's padding are not counted: a dilation past the input (DeepLab's ASPP) leaves
// only the centre tap.
TEST(Schedule, ConvCostCountsTapsInsideTheInput) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 8, 14, 14});
  Value* w = gb.random_constant("w", {4, 8, 3, 3});
  Value* y = gb.node("Conv", {x, w}, {{"kernel_shape", attr_ints({3, 3})}, {"dilations", attr_ints({24, 24})}, {"pads", attr_ints({24, 24, 24, 24})}});
  Value* w2 = gb.random_constant("w2", {4, 8, 3, 3});
  Value* z = gb.node("Conv", {x, w2}, {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}});
  gb.output(y);
  gb.output(z);
  EXPECT_DOUBLE_EQ(node_cost(*y->producer).flops, 2.0 * 4 * 8 * 14 * 14);
  EXPECT_DOUBLE_EQ(node_cost(*z->producer).flops, 2.0 * 4 * 8 * 6 * 6 * 9);  // no padding: every tap
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
  // Attention: both products and the softmax, per score (2 batches x 3 heads x 5 x 7 scores,
  // head sizes 4 and 6).
  GraphBuilder ga;
  ga.g->opset = 23;
  Value* q = ga.input("q", {2, 3, 5, 4});
  Value* kk = ga.input("k", {2, 3, 7, 4});
  Value* v = ga.input("v", {2, 3, 7, 6});
  Value* att = ga.node("Attention", {q, kk, v});
  ga.output(att);
  EXPECT_DOUBLE_EQ(node_cost(*att->producer).flops, 2.0 * 3 * 5 * 7 * (2.0 * (4 + 6) + 4));
}

// ---- Fork-join regions ----

// Every region: lists partition the emitted nodes first..last, each ascending, and no node of
// one list reads a value written by another list of the region.
void expect_valid_regions(const Graph& g) {
  size_t prev_last = 0;
  for (size_t r = 0; r < g.task_regions.size(); ++r) {
    const auto& reg = g.task_regions[r];
    SCOPED_TRACE("region " + std::to_string(r));
    if (r) EXPECT_GT(reg.first, prev_last);
    prev_last = reg.last;
    EXPECT_GE(reg.groups.size(), 2u);
    std::map<const Node*, size_t> list_of;
    std::set<size_t> seen;
    for (size_t l = 0; l < reg.groups.size(); ++l) {
      EXPECT_FALSE(reg.groups[l].empty());
      EXPECT_TRUE(std::is_sorted(reg.groups[l].begin(), reg.groups[l].end()));
      for (size_t p : reg.groups[l]) {
        EXPECT_TRUE(seen.insert(p).second) << "node " << p << " in two lists";
        list_of[g.nodes[p].get()] = l;
      }
    }
    for (size_t p = reg.first; p <= reg.last; ++p)
      if (!g.nodes[p]->folded()) EXPECT_TRUE(seen.count(p)) << "emitted node " << p << " is in no list";
    for (auto& [n, l] : list_of)
      for (Value* v : n->all_inputs())
        if (v && v->producer && list_of.count(v->producer))
          EXPECT_EQ(list_of.at(v->producer), l) << n->name << " reads " << v->name << " from another list";
  }
}

// n Relus and Adds on one input, each reading mostly recent values (chains with occasional
// forks and joins), the last one the output.
std::unique_ptr<Graph> chains_with_forks(std::mt19937& r, int n) {
  GraphBuilder gb;
  std::vector<Value*> vals{gb.input("x", {1, 16, 8, 8})};
  for (int k = 0; k < n; ++k) {
    Value* a = vals[vals.size() - 1 - r() % std::min<size_t>(vals.size(), 4)];
    Value* b = vals[r() % vals.size()];
    vals.push_back(r() % 3 ? gb.node("Relu", {a}) : gb.node("Add", {a, b}));
  }
  gb.output(vals.back());
  return std::move(gb.g);
}

// x → `branches` branches of `len` Relus → Sum.
std::unique_ptr<Graph> branchy(int branches, int len, Shape shape) {
  GraphBuilder gb;
  Value* x = gb.input("x", shape);
  std::vector<Value*> ends;
  for (int b = 0; b < branches; ++b) ends.push_back(relus(gb, x, len));
  gb.output(gb.node("Sum", ends));
  return std::move(gb.g);
}

TEST(Regions, IndependentBranchesBecomeLists) {
  auto g = branchy(4, 3, {1, 16, 8, 8});
  const Target t = target16();
  const TaskGraph tg = build_task_graph(*g, t);
  auto regions = plan_task_regions(*g, tg, 2, TaskRegions::Every, t);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].first, 0u);
  EXPECT_EQ(regions[0].last, 11u);  // the Sum (node 12) joins after the region
  ASSERT_EQ(regions[0].groups.size(), 2u);
  EXPECT_EQ(regions[0].groups[0].size(), 6u);  // two whole branches per list
  EXPECT_EQ(regions[0].groups[1].size(), 6u);
  // Four threads: a list per branch; these tasks are too small to split, so "auto" keeps it.
  regions = plan_task_regions(*g, tg, 4, TaskRegions::Auto, t);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].groups.size(), 4u);
  EXPECT_LT(regions[0].task_seconds, regions[0].loop_seconds);
  g->task_regions = regions;
  expect_valid_regions(*g);
  EXPECT_TRUE(plan_task_regions(*g, tg, 4, TaskRegions::None, t).empty());
  EXPECT_TRUE(plan_task_regions(*g, tg, 1, TaskRegions::Every, t).empty());
}

TEST(Regions, ChainsAndLoopFriendlyBranchesGetNone) {
  GraphBuilder gb;
  gb.output(relus(gb, gb.input("x", {1, 8, 4, 4}), 6));
  const Target t = target16();
  EXPECT_TRUE(plan_task_regions(*gb.g, build_task_graph(*gb.g, t), 16, TaskRegions::Every, t).empty());
  // Three large convs on two threads: side by side, one list gets two of them; their loops
  // split well, so "auto" runs them in turn.
  GraphBuilder gc;
  Value* x = gc.input("x", {1, 64, 56, 56});
  std::vector<Value*> ys;
  for (int b = 0; b < 3; ++b) {
    Value* w = gc.random_constant("w" + std::to_string(b), {64, 64, 3, 3});
    ys.push_back(gc.node("Conv", {x, w}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}}));
  }
  gc.output(gc.node("Sum", ys));
  const TaskGraph tg = build_task_graph(*gc.g, t);
  EXPECT_TRUE(plan_task_regions(*gc.g, tg, 2, TaskRegions::Auto, t).empty());
  EXPECT_EQ(plan_task_regions(*gc.g, tg, 2, TaskRegions::Every, t).size(), 1u);
}

// Thread groups: with more threads than lists, each list gets one thread plus a share of the
// rest in proportion to its time, and a heavy branch beside light ones gets fewer, larger
// groups than one list per branch would give it.
TEST(Regions, ThreadGroupsFollowTheListsTimes) {
  EXPECT_EQ(group_threads({3e-3, 1e-3, 1e-3}, 2), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(group_threads({3e-3, 1e-3, 1e-3}, 3), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(group_threads({3e-3, 1e-3, 1e-3}, 8), (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(group_threads({1e-3, 1e-3}, 7), (std::vector<int>{3, 4}));
  EXPECT_EQ(group_threads({0, 0}, 4), (std::vector<int>{2, 2}));
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 64, 28, 28});
  Value* w = gb.random_constant("w", {64, 64, 3, 3});
  std::vector<Value*> ys{gb.node("Conv", {x, w}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}})};
  for (int b = 0; b < 3; ++b) ys.push_back(relus(gb, x, 2));
  gb.output(gb.node("Sum", ys));
  const Target t = target16();
  const TaskGraph tg = build_task_graph(*gb.g, t);
  const auto regions = plan_task_regions(*gb.g, tg, 8, TaskRegions::Every, t, RegionForm::Groups);
  ASSERT_EQ(regions.size(), 1u);
  const auto& r = regions[0];
  ASSERT_EQ(r.list_seconds.size(), r.groups.size());
  EXPECT_LT(r.groups.size(), 4u);  // the relus share lists, leaving threads to the conv
  const std::vector<int> sizes = group_threads(r.list_seconds, 8);
  EXPECT_EQ(sizes[0], *std::max_element(sizes.begin(), sizes.end()));  // the conv's list, the longest
  EXPECT_GT(sizes[0], 8 / static_cast<int>(r.groups.size()));
  int sum = 0;
  for (int k : sizes) sum += k;
  EXPECT_EQ(sum, 8);
}

// OpenMP tasks (omp_tasks_seconds): two kernels whose loops split into 4 pieces leave half of 8
// threads idle one after another; as tasks side by side they fill them, and "auto" keeps the
// region. At 2 threads, where each splits over both threads, tasks gain nothing and "auto"
// keeps none.
TEST(Regions, OpenMPTasksFillIdleThreads) {
  auto g = branchy(2, 1, {1, 16, 8, 8});  // two Relus, then Sum
  const Target t = target16();
  TaskGraph tg = build_task_graph(*g, t);
  ASSERT_EQ(tg.tasks.size(), 3u);
  for (size_t i : {0u, 1u}) {
    tg.tasks[i].seconds = 1e-3;
    tg.tasks[i].items = 4;
  }
  // One after another at 8 threads: each on 4 of them (1 µs call, 2 µs fork/join).
  EXPECT_NEAR(task_seconds(tg.tasks[0], 8, t), 1e-6 + (1e-3 - 1e-6) / 4 + 2e-6, 1e-12);
  EXPECT_NEAR(task_seconds(tg.tasks[0], 3, t), 1e-6 + (1e-3 - 1e-6) / 2 + 2e-6, 1e-12);  // 2 of the 4 pieces on one thread
  const double loop = task_seconds(tg.tasks[0], 8, t) + task_seconds(tg.tasks[1], 8, t);
  const double side = omp_tasks_seconds(tg, {0, 1}, 8, t);
  EXPECT_GE(side, (1e-3 - 1e-6) / 4);
  EXPECT_LT(side, 0.55 * loop);
  auto regions = plan_task_regions(*g, tg, 8, TaskRegions::Auto, t, RegionForm::OmpTasks);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_LT(regions[0].task_seconds, 0.6 * regions[0].loop_seconds);
  // Sections: one thread per list, each task's loops on that one thread: slower than the loops.
  regions = plan_task_regions(*g, tg, 8, TaskRegions::Every, t, RegionForm::Sections);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_GT(regions[0].task_seconds, 1e-3);
  EXPECT_TRUE(plan_task_regions(*g, tg, 8, TaskRegions::Auto, t, RegionForm::Sections).empty());
  // Two threads, 64 pieces each.
  for (size_t i : {0u, 1u}) tg.tasks[i].items = 64;
  EXPECT_TRUE(plan_task_regions(*g, tg, 2, TaskRegions::Auto, t, RegionForm::OmpTasks).empty());
  regions = plan_task_regions(*g, tg, 2, TaskRegions::Every, t, RegionForm::OmpTasks);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_NEAR(regions[0].task_seconds / regions[0].loop_seconds, 1.0, 0.02);
}

// On random DAGs, the tasks' predicted time at T threads is at least the work spread over all
// threads and the longest chain with each task on all the threads its loops can use, and at
// most every task on one thread; on one thread it is each task's time plus making the task.
TEST(Regions, OpenMPTasksPredictionsStayInBounds) {
  std::mt19937 rng(11);
  const Target t = target16();
  for (int trial = 0; trial < 30; ++trial) {
    const auto g = chains_with_forks(rng, 3 + static_cast<int>(rng() % 25));
    TaskGraph tg = build_task_graph(*g, t);
    std::vector<size_t> all;
    double one = 0;
    for (size_t i = 0; i < tg.tasks.size(); ++i) {
      tg.tasks[i].seconds = 1e-6 + 1e-6 * static_cast<double>(rng() % 500);
      tg.tasks[i].items = 1 + static_cast<int64_t>(rng() % 40);
      all.push_back(i);
      one += tg.tasks[i].seconds;
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_NEAR(omp_tasks_seconds(tg, all, 1, t), one + 1e-6 * static_cast<double>(all.size()), 1e-12);
    for (int threads : {2, 3, 8, 16}) {
      double work = 0, chain = 0;
      std::vector<double> finish(tg.tasks.size(), 0);
      for (size_t i = 0; i < tg.tasks.size(); ++i) {
        const double body = tg.tasks[i].seconds - 1e-6;
        work += body;
        double start = 0;
        for (int p : tg.tasks[i].preds) start = std::max(start, finish[static_cast<size_t>(p)]);
        finish[i] = start + body / static_cast<double>(std::min<int64_t>(tg.tasks[i].items, threads));
        chain = std::max(chain, finish[i]);
      }
      const double side = omp_tasks_seconds(tg, all, threads, t);
      EXPECT_GE(side, std::max(work / threads, chain) - 1e-12) << threads << " threads";
      EXPECT_LE(side, one + 10e-6 * static_cast<double>(all.size())) << threads << " threads";
    }
  }
}

// The C backend's split of a kernel: a large conv's loops into at least as many pieces as
// threads, an elementwise op on 64 floats into none (below Target::parallel_min_work), and
// nothing at one thread.
TEST(Regions, KernelsSayHowTheirLoopsSplit) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 64, 56, 56});
  Value* w = gb.random_constant("w", {64, 64, 3, 3});
  Value* y = gb.node("Conv", {x, w}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
  gb.output(y);
  gb.output(gb.node("Relu", {gb.input("s", {1, 64})}));
  TaskGraph tg = build_task_graph(*gb.g, target16());
  ASSERT_EQ(tg.tasks.size(), 2u);
  EXPECT_EQ(tg.tasks[0].items, 0);  // without the backend: not known
  const Backend& backend = *test_pass_options().backend;
  set_parallel_items(tg, backend, 4);
  EXPECT_GE(tg.tasks[0].items, 4);
  EXPECT_EQ(tg.tasks[1].items, 1);
  set_parallel_items(tg, backend, 1);
  EXPECT_EQ(tg.tasks[0].items, 1);
  EXPECT_EQ(tg.tasks[1].items, 1);
}

PassOptions region_options(TaskRegions mode, int threads) {
  PassOptions o = test_pass_options();
  o.parallel = mode;
  o.threads = threads;
  return o;
}

TEST(Regions, MemoryPlanKeepsRegionTensorsApart) {
  auto g = branchy(4, 3, {1, 16, 8, 8});
  ASSERT_TRUE(schedule_regions(*g, region_options(TaskRegions::Every, 4)));
  ASSERT_EQ(g->task_regions.size(), 1u);
  plan_memory(*g, test_pass_options());
  EXPECT_EQ(check_memory_plan(*g), "");
  // Without regions the Relu chains reuse each other's bytes; with them, the 12 tensors of
  // the region are all distinct.
  std::set<int64_t> offsets;
  for (size_t p = 0; p < 12; ++p) offsets.insert(g->nodes[p]->outputs[0]->arena_offset);
  EXPECT_EQ(offsets.size(), 12u);
  // The checker is not vacuous: two tensors of the region moved onto the same bytes.
  g->nodes[2]->outputs[0]->arena_offset = g->nodes[5]->outputs[0]->arena_offset;
  EXPECT_NE(check_memory_plan(*g).find("share arena bytes"), std::string::npos);
  // The same graph planned without regions reuses memory and still checks out.
  auto h = branchy(4, 3, {1, 16, 8, 8});
  ASSERT_FALSE(schedule_regions(*h, region_options(TaskRegions::None, 4)));
  plan_memory(*h, test_pass_options());
  EXPECT_EQ(check_memory_plan(*h), "");
  EXPECT_LT(h->arena_bytes, g->arena_bytes);
}

TEST(Regions, RandomGraphsKeepDependencesAndMemoryApart) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    for (int threads : {1, 2, 3, 4, 8, 16}) {
      std::mt19937 r2(static_cast<unsigned>(trial));
      const int n = 5 + static_cast<int>(r2() % 40);
      const auto g = chains_with_forks(r2, n);
      SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(threads) + " threads");
      schedule_regions(*g, region_options(rng() % 2 ? TaskRegions::Every : TaskRegions::Auto, threads));
      if (threads == 1) EXPECT_TRUE(g->task_regions.empty());
      expect_valid_regions(*g);
      plan_memory(*g, test_pass_options());
      EXPECT_EQ(check_memory_plan(*g), "");
    }
  }
}

// An inception-like block (1x1, 1x1→3x3, 1x1→5x5, pool→1x1, Concat) through the whole
// pipeline with --parallel task at 2 threads, built and run in both task forms: the
// reference's outputs.
TEST(Regions, InceptionBlockRunsInC) {
  GraphBuilder gb;
  Value* x = gb.input("x", {1, 32, 12, 12});
  auto conv = [&](Value* in, int64_t cin, int64_t cout, int64_t k, const std::string& name) {
    Value* w = gb.random_constant(name + "_w", {cout, cin, k, k}, -0.2f, 0.2f);
    Value* bias = gb.random_constant(name + "_b", {cout});
    const int64_t p = k / 2;
    return gb.node("Relu", {gb.node("Conv", {in, w, bias}, {{"kernel_shape", attr_ints({k, k})}, {"pads", attr_ints({p, p, p, p})}})});
  };
  Value* b1 = conv(x, 32, 16, 1, "b1");
  Value* b2 = conv(conv(x, 32, 24, 1, "b2a"), 24, 32, 3, "b2b");
  Value* b3 = conv(conv(x, 32, 8, 1, "b3a"), 8, 16, 5, "b3b");
  Value* pool = gb.node("MaxPool", {x}, {{"kernel_shape", attr_ints({3, 3})}, {"pads", attr_ints({1, 1, 1, 1})}});
  Value* b4 = conv(pool, 32, 16, 1, "b4");
  gb.output(gb.node("Concat", {b1, b2, b3, b4}, {{"axis", attr_int(1)}}));
  const auto in = random_inputs(*gb.g);
  const auto ref = reference_outputs(*gb.g, in);
  PassOptions o = region_options(TaskRegions::Every, 2);
  run_pipeline(*gb.g, o);
  ASSERT_EQ(gb.g->task_regions.size(), 1u);
  expect_valid_regions(*gb.g);
  EXPECT_EQ(check_memory_plan(*gb.g), "");
  for (RegionForm form : {RegionForm::OmpTasks, RegionForm::Groups}) {
    SCOPED_TRACE(form == RegionForm::OmpTasks ? "omp-tasks" : "groups");
    CRunOptions co;
    co.task_form = form;
    co.threads = 2;
    expect_close(run_c(*gb.g, in, co), ref, 1e-4);
    // More threads than lists: tasks' loops shared by idle threads, or each list on a group
    // of threads that split its loops.
    co.threads = 5;
    expect_close(run_c(*gb.g, in, co), ref, 1e-4);
  }
}

}  // namespace
}  // namespace onnxc::test
