// passes/schedule.cc — macro-task graph, critical path and list schedule (see schedule.h).
#include "passes/schedule.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <queue>
#include <set>

#include <fmt/format.h>

#include "codegen/backend.h"
#include "ir/cost.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

constexpr double kClockHz = 2.5e9;
constexpr double kKernelEfficiency = 0.7;
constexpr double kBytesPerSecond = 12e9;  // per core
constexpr double kCallSeconds = 1e-6;
constexpr double kForkJoinSeconds = 2e-6;
constexpr double kCrossGroupSeconds = 0.5e-6;  // a point-to-point wait on another group
constexpr double kRegionSeconds = 3e-6;  // starting and joining the team of a fork-join region
constexpr double kTaskSeconds = 1e-6;    // making an OpenMP task with depend clauses and starting it
// Making one chunk of a taskloop (one after another, by the task's thread), through the task queue
// the team shares: fitted on a 16-core Xeon, where googlenet's regions at 8 and 16 threads took
// 0.45-0.5 us longer per chunk made.
constexpr double kChunkSeconds = 0.5e-6;

// "auto" keeps a region predicted to take at most this share of the tasks' time one after
// another: a prediction within a few percent of loop parallelism is no reason to change it.
constexpr double kAutoGain = 0.95;

double core_peak(const Target& t) {
  return static_cast<double>(std::max(1, t.vector_floats())) * (t.fma ? 2.0 : 1.0) * 2.0 * kClockHz * kKernelEfficiency;
}

// Scalar operations the kernel's loops do, as Target::parallel weighs them.
double work_of(const MacroTask& t) { return std::max(t.flops, t.bytes / 4); }

std::string ms(double s) { return fmt::format("{:.3f} ms", s * 1e3); }

// Pieces a task's loops split into on k threads without the backend's count (MacroTask::items
// 0): only when its work passes Target::parallel, at most work / Target::parallel_min_work.
int estimated_pieces(const MacroTask& t, int k, const Target& target) {
  const double work = work_of(t);
  if (k < 2 || !target.parallel(work)) return 1;
  return static_cast<int>(std::min<double>(k, std::max(1.0, work / static_cast<double>(target.parallel_min_work))));
}

std::string task_label(const TaskGraph& tg, int i) {
  const Node* n = tg.tasks[static_cast<size_t>(i)].node;
  std::string kind = n->op_type;
  for (const auto& e : n->epilogue) kind += "+" + e->op_type;
  return fmt::format("t{} {} ({})", i, n->name, kind);
}

}  // namespace

double core_seconds(const NodeCost& c, const Target& target) {
  return kCallSeconds + std::max(c.flops / core_peak(target), c.bytes / kBytesPerSecond);
}

std::vector<int> group_threads(const std::vector<double>& list_seconds, int threads) {
  const size_t lists = list_seconds.size();
  std::vector<int> sizes(lists, 1);
  if (lists == 0 || static_cast<size_t>(threads) <= lists) return sizes;
  // As onnxc_group_join (codegen/c/region.cc) computes it, on the times in whole nanoseconds.
  std::vector<int64_t> cost(lists);
  int64_t total = 0;
  for (size_t l = 0; l < lists; ++l) total += cost[l] = std::max<int64_t>(1, std::llround(list_seconds[l] * 1e9));
  const int64_t extra = threads - static_cast<int64_t>(lists);
  int64_t before = 0;
  for (size_t l = 0; l < lists; ++l) {
    sizes[l] = static_cast<int>(1 + extra * (before + cost[l]) / total - extra * before / total);
    before += cost[l];
  }
  return sizes;
}

double task_seconds(const MacroTask& t, int k, const Target& target) {
  if (t.items > 0) {  // the kernel's own split: a static share of its iterations, the busiest thread's
    if (k <= 1 || t.items == 1) return t.seconds;
    const int64_t most = (t.items + k - 1) / k;
    return kCallSeconds + (t.seconds - kCallSeconds) * static_cast<double>(most) / static_cast<double>(t.items) + kForkJoinSeconds;
  }
  const int pieces = estimated_pieces(t, k, target);
  const double body = t.seconds - kCallSeconds;
  return kCallSeconds + body / pieces + (pieces > 1 ? kForkJoinSeconds : 0.0);
}

int taskloop_chunks_per_thread(int threads) { return threads <= 2 ? 8 : threads <= 4 ? 2 : 1; }

double omp_tasks_seconds(const TaskGraph& tg, const std::vector<size_t>& ts, int threads, const Target& target) {
  const int T = std::max(1, threads);
  const size_t m = ts.size();
  std::map<size_t, size_t> local;  // task index -> position in ts
  for (size_t k = 0; k < m; ++k) local[ts[k]] = k;
  std::vector<int64_t> items(m), chunks(m), left(m, 0);
  std::vector<double> body(m), rank(m, 0), ready_at(m, 0), last(m, 0), loop_start(m, 0);
  std::vector<size_t> waiting(m, 0);
  for (size_t k = 0; k < m; ++k) {
    const MacroTask& t = tg.tasks[ts[k]];
    body[k] = std::max(0.0, t.seconds - kCallSeconds);
    items[k] = T < 2 ? 1 : t.items > 0 ? t.items : estimated_pieces(t, T, target);
    chunks[k] = items[k] > 1 ? std::min<int64_t>(items[k], int64_t{taskloop_chunks_per_thread(T)} * T) : 1;
    for (int p : t.preds) waiting[k] += local.count(static_cast<size_t>(p));
  }
  for (size_t k = m; k-- > 0;) {  // priority: the longest path of one-thread times from the task on
    double after = 0;
    for (int q : tg.tasks[ts[k]].succs)
      if (auto it = local.find(static_cast<size_t>(q)); it != local.end()) after = std::max(after, rank[it->second]);
    rank[k] = tg.tasks[ts[k]].seconds + after;
  }
  // Work that can start: a task's start (its call, made by one thread), or the next chunks of its
  // taskloop once the start has run.
  struct Work {
    double avail;
    size_t k;
    bool chunk;
  };
  std::vector<Work> pool;
  for (size_t k = 0; k < m; ++k)
    if (!waiting[k]) pool.push_back({0, k, false});
  std::vector<double> free_at(static_cast<size_t>(T), 0);
  double end = 0;
  auto complete = [&](size_t k, double when) {
    end = std::max(end, when);
    for (int q : tg.tasks[ts[k]].succs)
      if (auto it = local.find(static_cast<size_t>(q)); it != local.end()) {
        const size_t j = it->second;
        ready_at[j] = std::max(ready_at[j], when);
        if (--waiting[j] == 0) pool.push_back({ready_at[j], j, false});
      }
  };
  while (!pool.empty()) {
    // The thread free first takes the highest-ranked work available then, else the work
    // available first.
    const size_t th = static_cast<size_t>(std::min_element(free_at.begin(), free_at.end()) - free_at.begin());
    const double now = free_at[th];
    size_t best = 0;
    for (size_t w = 1; w < pool.size(); ++w) {
      const Work &a = pool[w], &b = pool[best];
      const bool a_now = a.avail <= now, b_now = b.avail <= now;
      if (a_now != b_now ? a_now : a_now ? (rank[a.k] != rank[b.k] ? rank[a.k] > rank[b.k] : a.k < b.k) : a.avail < b.avail) best = w;
    }
    const Work w = pool[best];
    const double start = std::max(now, w.avail);
    double finish = start;
    const size_t k = w.k;
    if (!w.chunk) {
      finish += kCallSeconds + kTaskSeconds + (chunks[k] == 1 ? body[k] : 0.0);
      pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(best));
      if (chunks[k] == 1) complete(k, finish);
      else {
        left[k] = chunks[k];
        loop_start[k] = finish;
        pool.push_back({finish + kChunkSeconds, k, true});
      }
    } else {  // chunk c of the taskloop: iterations items*c/chunks .. items*(c+1)/chunks, made at c+1 chunk times
      const int64_t c = chunks[k] - left[k];
      const int64_t its = items[k] * (c + 1) / chunks[k] - items[k] * c / chunks[k];
      finish += body[k] * static_cast<double>(its) / static_cast<double>(items[k]);
      last[k] = std::max(last[k], finish);
      if (--left[k] == 0) {
        pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(best));
        complete(k, last[k] + kForkJoinSeconds);
      } else {
        pool[best].avail = loop_start[k] + static_cast<double>(c + 2) * kChunkSeconds;
      }
    }
    free_at[th] = finish;
  }
  return end;
}

std::vector<MeasuredOp> read_op_profile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw CompileError(CompileError::Kind::Io, "cannot read the profile '" + path + "'");
  std::vector<MeasuredOp> ops;
  std::string line;
  for (size_t no = 1; std::getline(f, line); ++no) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    for (size_t a = 0;;) {
      size_t b = line.find('\t', a);
      fields.push_back(line.substr(a, b == std::string::npos ? std::string::npos : b - a));
      if (b == std::string::npos) break;
      a = b + 1;
    }
    MeasuredOp op;
    size_t used = 0;
    try {
      op.seconds = std::stod(fields[0], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (fields.size() != 4 || used == 0 || used != fields[0].size() || !(op.seconds >= 0) || !std::isfinite(op.seconds))
      throw CompileError(CompileError::Kind::Io, fmt::format("profile '{}' line {}: expected 'seconds TAB ops TAB kernel TAB nodes' "
                                                             "(as NAME --profile-out writes), got '{}'", path, no, line.substr(0, 200)));
    for (size_t a = 0;;) {
      size_t b = fields[3].find(", ", a);
      op.nodes.push_back(fields[3].substr(a, b == std::string::npos ? std::string::npos : b - a));
      if (b == std::string::npos) break;
      a = b + 2;
    }
    ops.push_back(std::move(op));
  }
  if (ops.empty()) throw CompileError(CompileError::Kind::Io, "the profile '" + path + "' has no lines (NAME --profile-out FILE writes one)");
  return ops;
}

TaskGraph build_task_graph(const Graph& g, const Target& target, const std::vector<MeasuredOp>* measured, const Backend* backend) {
  TaskGraph tg;
  std::map<const Value*, int> writer;
  std::map<std::string, std::vector<size_t>> op_of;  // ONNX node name -> measured functions
  if (measured)
    for (size_t k = 0; k < measured->size(); ++k)
      for (const std::string& name : (*measured)[k].nodes) op_of[name].push_back(k);
  for (const auto& np : g.nodes) {
    const Node& n = *np;
    if (n.folded()) continue;
    const int id = static_cast<int>(tg.tasks.size());
    MacroTask t;
    t.node = &n;
    const NodeCost c = node_cost(n);
    t.flops = c.flops;
    t.bytes = c.bytes;
    t.seconds = core_seconds(c, target);
    if (measured) {
      std::set<size_t> ops;
      auto match = [&](const Node& x) {
        for (const std::string& name : x.origin.empty() ? std::vector<std::string>{x.name} : x.origin)
          if (auto it = op_of.find(name); it != op_of.end()) ops.insert(it->second.begin(), it->second.end());
      };
      match(n);
      for (const auto& e : n.epilogue) match(*e);
      if (!ops.empty()) {
        t.seconds = 0;
        for (size_t k : ops) t.seconds += (*measured)[k].seconds;
        t.measured = true;
        ++tg.measured_tasks;
      }
    }
    std::set<int> preds;
    auto read = [&](const Value* v) {
      if (!v) return;
      if (auto it = writer.find(v); it != writer.end()) preds.insert(it->second);
    };
    for (Value* v : n.all_inputs()) read(v);
    for (const auto& e : n.epilogue)
      for (Value* v : e->inputs) read(v);
    t.preds.assign(preds.begin(), preds.end());
    for (int p : t.preds) tg.tasks[static_cast<size_t>(p)].succs.push_back(id);
    for (Value* v : n.outputs)
      if (v) writer[v] = id;
    tg.total_seconds += t.seconds;
    tg.tasks.push_back(std::move(t));
  }
  if (backend) set_parallel_items(tg, *backend, target.threads);
  // Longest path at one thread: forward over the topological order.
  const size_t n = tg.tasks.size();
  std::vector<double> finish(n, 0);
  std::vector<int> via(n, -1);
  int last = -1;
  for (size_t i = 0; i < n; ++i) {
    double start = 0;
    for (int p : tg.tasks[i].preds)
      if (finish[static_cast<size_t>(p)] > start) {
        start = finish[static_cast<size_t>(p)];
        via[i] = p;
      }
    finish[i] = start + tg.tasks[i].seconds;
    if (last < 0 || finish[i] > finish[static_cast<size_t>(last)]) last = static_cast<int>(i);
  }
  for (int i = last; i >= 0; i = via[static_cast<size_t>(i)]) tg.critical_path.push_back(i);
  std::reverse(tg.critical_path.begin(), tg.critical_path.end());
  tg.critical_seconds = last < 0 ? 0 : finish[static_cast<size_t>(last)];
  return tg;
}

void set_parallel_items(TaskGraph& tg, const Backend& backend, int threads) {
  for (MacroTask& t : tg.tasks) t.items = threads > 1 ? backend.parallel_items(*t.node, threads) : 1;
}

TaskSchedule schedule_tasks_in_groups(const TaskGraph& tg, int threads, int groups, const Target& target) {
  TaskSchedule s;
  s.threads = std::max(1, threads);
  s.groups = std::max(1, std::min(groups, s.threads));
  const int k = s.threads / s.groups;
  const size_t n = tg.tasks.size();
  std::vector<double> time(n), rank(n, 0);
  for (size_t i = 0; i < n; ++i) time[i] = task_seconds(tg.tasks[i], k, target);
  for (size_t i = n; i-- > 0;) {
    double after = 0;
    for (int q : tg.tasks[i].succs) after = std::max(after, rank[static_cast<size_t>(q)]);
    rank[i] = time[i] + after;
  }
  s.group.assign(n, 0);
  s.start.assign(n, 0);
  s.finish.assign(n, 0);
  std::vector<size_t> waiting(n);
  auto later = [&](int a, int b) {  // priority: higher rank first, then graph order
    const size_t ua = static_cast<size_t>(a), ub = static_cast<size_t>(b);
    return rank[ua] != rank[ub] ? rank[ua] < rank[ub] : a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (size_t i = 0; i < n; ++i) {
    waiting[i] = tg.tasks[i].preds.size();
    if (waiting[i] == 0) ready.push(static_cast<int>(i));
  }
  std::vector<double> free_at(static_cast<size_t>(s.groups), 0);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    const size_t ui = static_cast<size_t>(i);
    int best = 0;
    double best_start = 0;
    for (int gi = 0; gi < s.groups; ++gi) {
      double st = free_at[static_cast<size_t>(gi)];
      for (int p : tg.tasks[ui].preds) {
        const size_t up = static_cast<size_t>(p);
        st = std::max(st, s.finish[up] + (s.group[up] != gi ? kCrossGroupSeconds : 0.0));
      }
      if (gi == 0 || st < best_start) {
        best = gi;
        best_start = st;
      }
    }
    s.group[ui] = best;
    s.start[ui] = best_start;
    s.finish[ui] = best_start + time[ui];
    free_at[static_cast<size_t>(best)] = s.finish[ui];
    s.makespan = std::max(s.makespan, s.finish[ui]);
    for (int q : tg.tasks[ui].succs)
      if (--waiting[static_cast<size_t>(q)] == 0) ready.push(q);
  }
  return s;
}

TaskSchedule schedule_tasks(const TaskGraph& tg, int threads, const Target& target) {
  threads = std::max(1, threads);
  TaskSchedule best = schedule_tasks_in_groups(tg, threads, 1, target);
  for (int groups = 2; groups <= threads; groups *= 2) {
    if (threads % groups) continue;
    TaskSchedule s = schedule_tasks_in_groups(tg, threads, groups, target);
    if (s.makespan < best.makespan * (1 - 1e-9)) best = std::move(s);
  }
  return best;
}

std::vector<Graph::TaskRegion> plan_task_regions(const Graph& g, const TaskGraph& tg, int threads, TaskRegions mode,
                                                 const Target& target, RegionForm form) {
  std::vector<Graph::TaskRegion> out;
  const size_t n = tg.tasks.size();
  if (mode == TaskRegions::None || threads < 2 || n < 3) return out;
  std::map<const Node*, size_t> pos;
  for (size_t k = 0; k < g.nodes.size(); ++k) pos[g.nodes[k].get()] = k;
  // open(p): tasks before p with a successor at or after p; a cut where it is at most one
  // (everything after it depends on what came before through one task's outputs).
  std::vector<int> diff(n + 2, 0);
  for (size_t j = 0; j < n; ++j) {
    int last = -1;
    for (int q : tg.tasks[j].succs) last = std::max(last, q);
    if (last > static_cast<int>(j)) {
      ++diff[j + 1];
      --diff[static_cast<size_t>(last) + 1];
    }
  }
  // The graph inputs count as one more task, before the first: tasks that read them
  // directly do not depend on the tasks before them.
  int input_last = -1;
  for (size_t j = 0; j < n; ++j)
    for (const Value* v : tg.tasks[j].node->all_inputs())
      if (v && v->is_input) input_last = static_cast<int>(j);
  if (input_last > 0) {
    ++diff[1];
    --diff[static_cast<size_t>(input_last) + 1];
  }
  std::vector<size_t> cuts;
  int open = 0;
  for (size_t p = 0; p <= n; ++p) {
    open += diff[p];
    if (open <= 1) cuts.push_back(p);
  }
  Target tt = target;
  tt.threads = threads;
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    const size_t a = cuts[c], b = cuts[c + 1] - 1;  // tasks a..b-1 side by side, b the join
    if (b < a + 2) continue;
    // Weakly connected components of tasks a..b-1 (union-find over their edges).
    std::vector<size_t> root(b - a);
    for (size_t i = 0; i < root.size(); ++i) root[i] = i;
    auto find = [&](size_t i) {
      while (root[i] != i) i = root[i] = root[root[i]];
      return i;
    };
    for (size_t i = a; i < b; ++i)
      for (int p : tg.tasks[i].preds)
        if (static_cast<size_t>(p) >= a) root[find(static_cast<size_t>(p) - a)] = find(i - a);
    std::map<size_t, std::vector<size_t>> comps;  // root → tasks, ascending
    for (size_t i = a; i < b; ++i) comps[find(i - a)].push_back(i);
    if (comps.size() < 2) continue;
    // Longest component first onto the least loaded list.
    std::vector<std::pair<double, const std::vector<size_t>*>> by_time;
    double loop = 0;
    for (auto& [r, ts] : comps) {
      double one = 0;
      for (size_t t : ts) {
        one += task_seconds(tg.tasks[t], 1, tt);
        loop += task_seconds(tg.tasks[t], threads, tt);
      }
      by_time.emplace_back(one, &ts);
    }
    std::stable_sort(by_time.begin(), by_time.end(), [](auto& x, auto& y) { return x.first > y.first; });
    // For each number of lists from 2 to min(threads, components): the components longest first
    // onto the least loaded list, each list on its group of the threads (group_threads: the
    // split the generated code makes); the count whose longest list is predicted shortest wins
    // (fewer lists than threads leave more threads to the groups of the long branches).
    std::vector<double> load;
    std::vector<std::vector<size_t>> list_tasks;  // task indices of each list
    double side = 0;
    for (size_t lists = 2; lists <= std::min(static_cast<size_t>(threads), comps.size()); ++lists) {
      std::vector<double> ld(lists, 0);
      std::vector<std::vector<size_t>> lt(lists);
      for (auto& [one, ts] : by_time) {
        const size_t l = static_cast<size_t>(std::min_element(ld.begin(), ld.end()) - ld.begin());
        ld[l] += one;
        lt[l].insert(lt[l].end(), ts->begin(), ts->end());
      }
      // Sections: one thread per list; otherwise the groups' split (with OpenMP tasks the
      // lists only order the making of the tasks).
      const std::vector<int> sizes = form == RegionForm::Sections ? std::vector<int>(lists, 1) : group_threads(ld, threads);
      double longest = 0;
      for (size_t l = 0; l < lists; ++l) {
        double tl = 0;
        for (size_t t : lt[l]) tl += task_seconds(tg.tasks[t], sizes[l], tt);
        longest = std::max(longest, tl);
      }
      if (list_tasks.empty() || longest + kRegionSeconds < side) {
        side = longest + kRegionSeconds;
        load = std::move(ld);
        list_tasks = std::move(lt);
      }
    }
    if (form == RegionForm::OmpTasks) {
      std::vector<size_t> all;
      for (size_t t = a; t < b; ++t) all.push_back(t);
      side = omp_tasks_seconds(tg, all, threads, tt) + kRegionSeconds;
    }
    if (mode == TaskRegions::Auto && side >= kAutoGain * loop) continue;
    Graph::TaskRegion r;
    r.first = pos.at(tg.tasks[a].node);
    r.last = pos.at(tg.tasks[b - 1].node);
    for (const auto& ts : list_tasks) {
      std::vector<size_t> m;
      for (size_t t : ts) m.push_back(pos.at(tg.tasks[t].node));
      std::sort(m.begin(), m.end());
      r.groups.push_back(std::move(m));
    }
    r.list_seconds = load;
    r.threads = threads;
    r.loop_seconds = loop;
    r.task_seconds = side;
    out.push_back(std::move(r));
  }
  return out;
}

bool schedule_regions(Graph& g, const PassOptions& o) {
  ONNXC_ASSERT(o.backend, "schedule needs PassOptions::backend");
  Target t = o.backend->target();
  const int threads = o.threads > 0 ? o.threads : t.threads;
  t.threads = threads;
  std::vector<Graph::TaskRegion> regions;  // none without threads to share (the kernels' splits are not needed then)
  if (o.parallel != TaskRegions::None && threads > 1)
    regions = plan_task_regions(g, build_task_graph(g, t, o.measured, o.backend), threads, o.parallel, t, o.region_form);
  const bool changed = !regions.empty() || !g.task_regions.empty();
  g.task_regions = std::move(regions);
  return changed;
}

std::string describe_schedule(const TaskGraph& tg, int threads, const Target& target, const Backend* backend) {
  std::string out = fmt::format(
      "macro tasks: {} (fused groups and plain nodes; folded constants are not tasks), {} at one thread "
      "({}predicted: {:.0f} GFLOP/s and {:.0f} GB/s per core)\n",
      tg.tasks.size(), ms(tg.total_seconds),
      tg.measured_tasks ? fmt::format("measured for {} tasks by --profile-data, else ", tg.measured_tasks) : std::string(),
      core_peak(target) / 1e9, kBytesPerSecond / 1e9);
  out += fmt::format("critical path: {} tasks, {} at one thread:", tg.critical_path.size(), ms(tg.critical_seconds));
  for (size_t k = 0; k < tg.critical_path.size(); ++k) out += (k ? " -> t" : " t") + std::to_string(tg.critical_path[k]);
  out += "\npredicted speed-up of the list schedule (the generated code runs the fork-join regions below):";
  const double one = schedule_tasks(tg, 1, target).makespan;
  for (int t : {1, 2, 4, 8, 16}) {
    TaskGraph at = tg;  // the kernels' splits at t threads
    if (backend && t != threads) set_parallel_items(at, *backend, t);
    const TaskSchedule s = schedule_tasks(at, t, target);
    out += fmt::format(" {} thr {:.2f} ({} group{} of {})", t, s.makespan > 0 ? one / s.makespan : 1.0, s.groups,
                       s.groups == 1 ? "" : "s", t / s.groups);
    out += t == 16 ? "\n" : ",";
  }
  const TaskSchedule s = schedule_tasks(tg, threads, target);
  out += fmt::format("schedule at {} thread{}: {} group{} of {}, makespan {}\n", s.threads, s.threads == 1 ? "" : "s", s.groups,
                     s.groups == 1 ? "" : "s", s.threads / s.groups, ms(s.makespan));
  std::set<int> critical(tg.critical_path.begin(), tg.critical_path.end());
  for (size_t i = 0; i < tg.tasks.size(); ++i) {
    const MacroTask& t = tg.tasks[i];
    std::string preds;
    for (int p : t.preds) preds += (preds.empty() ? "t" : ",t") + std::to_string(p);
    const std::string pieces = t.items == 1 ? ", one thread" : t.items > 1 ? fmt::format(", {} pieces", t.items) : "";
    out += fmt::format("  {}{}: {:.3g} GFLOP, {:.3g} MB, {} at one thread{}; group {}, {} .. {}; after {}\n",
                       critical.count(static_cast<int>(i)) ? "* " : "", task_label(tg, static_cast<int>(i)), t.flops / 1e9,
                       t.bytes / 1e6, ms(t.seconds), pieces, s.group[i], ms(s.start[i]), ms(s.finish[i]), preds.empty() ? "-" : preds);
  }
  return out;
}

std::string describe_regions(const Graph& g, const TaskGraph& tg, int threads, const Target& target, RegionForm form) {
  Target tt = target;
  tt.threads = threads;
  std::map<const Node*, size_t> task_of;
  for (size_t i = 0; i < tg.tasks.size(); ++i) task_of[tg.tasks[i].node] = i;
  double loop = 0;
  for (const MacroTask& t : tg.tasks) loop += task_seconds(t, threads, tt);
  double with = loop;
  for (const auto& r : g.task_regions) with += r.task_seconds - r.loop_seconds;
  const char* how = form == RegionForm::OmpTasks ? "OpenMP tasks" : form == RegionForm::Groups ? "thread groups" : "omp parallel sections";
  std::string out = fmt::format("fork-join regions at {} thread{}: {}; predicted {} with them, {} one task after another ({:.2f}x), run as {}\n",
                                threads, threads == 1 ? "" : "s", g.task_regions.size(), ms(with), ms(loop), with > 0 ? loop / with : 1.0, how);
  for (size_t k = 0; k < g.task_regions.size(); ++k) {
    const auto& r = g.task_regions[k];
    out += fmt::format("  region {}: {} lists side by side, {} (one after another {})\n", k, r.groups.size(), ms(r.task_seconds),
                       ms(r.loop_seconds));
    const std::vector<int> sizes = form == RegionForm::Groups ? group_threads(r.list_seconds, r.threads) : std::vector<int>(r.groups.size(), 1);
    for (size_t l = 0; l < r.groups.size(); ++l) {
      std::string ts;
      for (size_t p : r.groups[l]) {
        auto it = task_of.find(g.nodes[p].get());
        ts += (ts.empty() ? "" : " ") + (it == task_of.end() ? g.nodes[p]->name : fmt::format("t{}", it->second));
      }
      const std::string on = form == RegionForm::OmpTasks ? "" : fmt::format("{} thread{}, ", sizes[l], sizes[l] == 1 ? "" : "s");
      out += fmt::format("    list {} ({}{} at one thread): {}\n", l, on, ms(r.list_seconds[l]), ts);
    }
  }
  return out;
}

}  // namespace onnxc
