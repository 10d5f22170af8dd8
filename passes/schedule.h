// passes/schedule.h — the macro-task graph of a compiled graph and a static list schedule of
// it onto thread groups (the OSCAR compiler's coarse-grain parallelism: independent tasks side
// by side, loop parallelism inside each task on the threads of its group).
//
// Macro tasks are the nodes left after fusion (a fused group is one task); folded nodes emit
// no code and are not tasks. Edges are data dependences between tasks (a value one task
// writes and another reads, epilogue and extra inputs included).
//
// Costs: a task's time on one thread is max(FLOPs / per-core peak, bytes / per-core
// bandwidth) + a call overhead, from ir/cost.h and the Target (peak = vector floats × 2 for
// FMA × 2 vector pipes × 2.5 GHz, at the 70% the conv kernels reach; 12 GB/s per core; 1 µs
// per call). On k threads a task splits its loops as its kernel does: the iterations of the
// kernel's widest parallel loop nest at the planned threads (MacroTask::items, from
// Backend::parallel_items: the C kernels size their splits for the threads), each thread a
// static share, so the task takes its one-thread time x ceil(items / k) / items, plus a
// fork/join of 2 µs (in the generated code, a barrier of the run's one parallel region:
// compile-model --omp-region, codegen/c/region.h). Without the backend's count: only when its
// work passes Target::parallel, into at most work / Target::parallel_min_work pieces. These
// are predictions for ordering and grouping, not measurements; compile-model --profile-data
// FILE replaces the one-thread times with a profile's.
//
// Schedule (HLFET list scheduling, critical path first): for T threads and each split into G
// groups of T / G threads (G a power of two), tasks in order of their upward rank (their time
// plus the longest path of successors after them) go to the group that can start them first
// (after their predecessors finish); the split with the shortest makespan wins. The critical
// path is the longest chain of task times at one thread. Predicted speed-up = the one-thread
// makespan / the makespan at T.
//
// What the generated code runs (the "schedule" pass, compile-model --parallel): fork-join
// regions. A cut is a place in the task order that at most one task's output crosses (after
// an inception block's Concat, after a residual block's Add). Between two cuts, the tasks
// but the last (the join) split into weakly connected components: independent branches.
// With at least two, the components go to L lists, longest first onto the least loaded list,
// L from 2 to min(threads, components) chosen for the shortest predicted region (fewer lists
// than threads give the long branches larger groups), and the region runs the lists side by
// side. In the run's one parallel region (--omp-region inference) each node of the region is
// an OpenMP task with depend clauses on its inputs, run by the team as they become ready, its
// loops taskloops
// (--task-form omp-tasks, the default: the lists only order the tasks' creation), or with
// --task-form groups each list runs on a group of the threads (group_threads: one each when
// threads <= lists, else one plus a share of the rest in proportion to the list's time), whose
// members split the list's loops and meet at the group's own barrier (codegen/c/region.h).
// With --omp-region op, as `omp parallel sections`, one thread per list (a kernel's own `omp
// parallel for` inside is a nested region of one thread).
//
// A region's predicted time is that of the form it runs in (PassOptions::region_form), + 3 µs
// to start and join it: groups, the longest list on its group; sections, the longest list on
// one thread; OpenMP tasks (omp_tasks_seconds), a simulation of the team: a task becomes ready
// when the tasks it reads from are done; the thread free first takes the ready work of the
// longest remaining path (a task's start: its call + 1 µs to make it; then the chunks of its
// taskloop, min(items, c x threads) of them with c = taskloop_chunks_per_thread(threads), made
// 0.5 µs apart by its thread, whichever threads are free running them); a task ends 2 µs after
// its last chunk. So tasks gain where kernels split into fewer pieces than there are threads
// (or unevenly): other tasks fill the idle threads. On the 2-core machine of
// bench/results/parallel.md the tasks were predicted at 0.99-1.00 of the loop build's time and
// measured at 0.97-1.02; on a 16-core Xeon (bench/results/parallel_16core.md) googlenet's
// regions measured 0.96-0.97 of loop at 8 and 16 threads, predicted 0.92.
// "auto" keeps a region only where its predicted time is at most 95% of its tasks' time one
// after another with loop parallelism; "task" keeps every region; "loop" none. The join and
// the tasks outside regions run in graph order with the loop parallelism of their kernels. Regions are found from the
// order, not the list schedule above, whose groups would need point-to-point synchronisation
// across regions: at 2-16 threads it picks one group (loop parallelism) for googlenet,
// resnet50 and densenet201. Nor is the whole graph one OpenMP task graph (waits from task to
// task across the cuts): omp_tasks_seconds over every task predicts it within 2% of the
// regions on googlenet (1.00-1.08x of loop at 2-16 threads, the regions 1.00-1.09x) and 1-9%
// slower than loop on resnet50 and densenet201, whose chains pay each task's start and end.
// compile-model --dump-ir prints the graph, the critical path, the list
// schedule, the regions and the predicted speed-ups.
#pragma once
#include <string>
#include <vector>

#include "codegen/target.h"
#include "ir/cost.h"
#include "ir/graph.h"

namespace onnxc {

class Backend;

// One measured function: the ONNX nodes it computes and its seconds per run.
struct MeasuredOp {
  std::vector<std::string> nodes;
  double seconds = 0;
};

// Reads a per-op profile (NAME --profile-out FILE: '#' comments, then lines "seconds per run
// TAB ops TAB kernel TAB node, node, ..."). Throws CompileError(Io) naming the file and line.
std::vector<MeasuredOp> read_op_profile(const std::string& path);

struct MacroTask {
  const Node* node = nullptr;
  double flops = 0, bytes = 0;
  double seconds = 0;             // on one thread
  // The iterations of its kernel's widest parallel loop nest at the planned threads
  // (Backend::parallel_items): 1 for a kernel that runs on one thread, 0 when not known.
  int64_t items = 0;
  bool measured = false;          // seconds from a profile, not predicted
  std::vector<int> preds, succs;  // task indices, ascending
};

struct TaskGraph {
  std::vector<MacroTask> tasks;  // in graph order (a topological order)
  std::vector<int> critical_path;  // task indices, first to last
  double critical_seconds = 0;     // its length at one thread
  double total_seconds = 0;        // every task at one thread, one after another
  size_t measured_tasks = 0;       // tasks whose time comes from a profile
};

// Time of work costing c on one thread of `target` (see the file comment): the call overhead
// plus the larger of its FLOPs at the per-core peak and its bytes at the per-core bandwidth.
double core_seconds(const NodeCost& c, const Target& target);
// Time of task t on a group of k threads (see the file comment).
double task_seconds(const MacroTask& t, int k, const Target& target);
// The threads each list of a fork-join region gets at `threads` threads, from the lists'
// times at one thread: one each when threads <= lists; otherwise one plus a share of the
// other threads in proportion to its time (the split onnxc_group_join makes in the
// generated code, codegen/c/region.cc).
std::vector<int> group_threads(const std::vector<double>& list_seconds, int threads);

// With `measured` (compile-model --profile-data: the per-op profile of a one-thread run), a
// task whose ONNX nodes a measured function computes takes that function's time (the sum,
// when its nodes are spread over several) instead of the prediction.
// With `backend`, each task's items come from its kernel at target.threads threads
// (set_parallel_items).
TaskGraph build_task_graph(const Graph& g, const Target& target, const std::vector<MeasuredOp>* measured = nullptr,
                           const Backend* backend = nullptr);
// Sets each task's items to its kernel's split at `threads` threads (Backend::parallel_items; 1
// at one thread).
void set_parallel_items(TaskGraph& tg, const Backend& backend, int threads);

struct TaskSchedule {
  int threads = 1;
  int groups = 1;  // thread groups of threads / groups threads each
  std::vector<int> group;  // per task
  std::vector<double> start, finish;  // per task, seconds
  double makespan = 0;
};

// The best split of `threads` into groups, scheduled.
TaskSchedule schedule_tasks(const TaskGraph& tg, int threads, const Target& target);
// The schedule with exactly `groups` groups (threads % groups == 0).
TaskSchedule schedule_tasks_in_groups(const TaskGraph& tg, int threads, int groups, const Target& target);

// Predicted time of the tasks `ts` (ascending indices into tg; what they read from other tasks
// is ready at 0) run as OpenMP tasks on `threads` threads (see the file comment).
double omp_tasks_seconds(const TaskGraph& tg, const std::vector<size_t>& ts, int threads, const Target& target);
// The chunks per thread of a taskloop in a team of `threads` (the generated code's
// onnxc_taskloop_chunks, codegen/c/region.cc, makes as many): 8 up to 2 threads, 2 up to 4, 1 above.
int taskloop_chunks_per_thread(int threads);

// The fork-join regions for `threads` threads and `mode` (see the
// file comment), as positions in g.nodes, predicted for the form the backend runs them in:
// `form` (PassOptions::region_form); tg must be
// build_task_graph(g, target).
std::vector<Graph::TaskRegion> plan_task_regions(const Graph& g, const TaskGraph& tg, int threads, TaskRegions mode,
                                                 const Target& target, RegionForm form = RegionForm::OmpTasks);

// The text --dump-ir prints: tasks with costs and groups at `threads`, the critical path and
// the predicted speed-ups at 1, 2, 4, 8 and 16 threads (with `backend`, each with the kernels'
// splits at that count).
std::string describe_schedule(const TaskGraph& tg, int threads, const Target& target, const Backend* backend = nullptr);
// The text --dump-ir prints for g.task_regions: each region's lists of tasks and the predicted
// time of the whole graph at `threads` with and without them.
std::string describe_regions(const Graph& g, const TaskGraph& tg, int threads, const Target& target,
                             RegionForm form = RegionForm::OmpTasks);

}  // namespace onnxc
