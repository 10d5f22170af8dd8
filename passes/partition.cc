// passes/partition.cc — the split of a model between a GPU and the CPU: costs, candidate
// cuts, the choice, and the head and tail as graphs of their own (see partition.h).
#include "passes/partition.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "ir/cost.h"
#include "ir/op.h"
#include "passes/schedule.h"

namespace onnxc {
namespace {

[[noreturn]] void fail(const Graph& g, CompileError::Kind k, const std::string& msg) {
  (void)g;
  throw CompileError(k, "--split: " + msg);
}

std::string ms(double s) { return fmt::format("{:.3f} ms", s * 1e3); }

std::string json_str(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      r += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      continue;
    }
    r += c;
  }
  return r + "\"";
}

}  // namespace

void set_gpu_preset(SplitCosts& c, const std::string& gpu) {
  if (gpu == "h100") {
    c.gpu_flops = 67e12;
    c.gpu_bandwidth = 3.35e12;
  } else if (gpu == "h200") {
    c.gpu_flops = 67e12;
    c.gpu_bandwidth = 4.8e12;
  } else {
    throw CompileError(CompileError::Kind::Io, "--gpu '" + gpu + "' is not one of h100, h200 (or give --gpu-tflops and --gpu-bandwidth)");
  }
  c.gpu = gpu;
}

SplitPlan plan_split(const Graph& g, const Target& t, const SplitCosts& costs, const std::string& spec) {
  SplitPlan p;
  p.spec = spec;
  p.costs = costs;
  const size_t n = g.nodes.size();
  // Per-node times on both devices: predicted, then measured where given.
  std::vector<double> gpu(n, 0), cpu(n, 0);
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < n; ++i) {
    const Node& nd = *g.nodes[i];
    if (nd.folded()) continue;
    pos[nd.name] = i;
    const NodeCost c = node_cost(nd);
    gpu[i] = costs.launch_seconds + std::max(c.flops / costs.gpu_flops, c.bytes / costs.gpu_bandwidth);
    cpu[i] = core_seconds(c, t);
  }
  const std::vector<double> predicted_cpu = cpu;
  auto measured = [&](const std::vector<MeasuredOp>& ops, std::vector<double>& time) {
    for (const MeasuredOp& op : ops) {
      std::vector<size_t> at;
      double w = 0;
      for (const std::string& name : op.nodes)
        if (auto it = pos.find(name); it != pos.end()) {
          at.push_back(it->second);
          w += predicted_cpu[it->second];
        }
      for (size_t i : at) time[i] = w > 0 ? op.seconds * predicted_cpu[i] / w : op.seconds / static_cast<double>(at.size());
    }
  };
  measured(costs.cpu_measured, cpu);
  measured(costs.gpu_measured, gpu);
  for (size_t i = 0; i < n; ++i) {
    p.gpu_seconds += gpu[i];
    p.cpu_seconds += cpu[i];
  }
  // Live ranges in positions: a value computed at d (graph inputs: -1) and last read at u
  // (graph outputs: n) crosses every cut after position k with d <= k < u.
  std::map<const Value*, long> def, last_use;
  for (const Value* v : g.inputs) def[v] = -1;
  for (size_t i = 0; i < n; ++i) {
    for (const Value* v : g.nodes[i]->all_inputs())
      if (v && !v->constant) last_use[v] = static_cast<long>(i);
    for (const Value* v : g.nodes[i]->outputs)
      if (v && !v->constant) def[v] = static_cast<long>(i);
  }
  for (const Value* v : g.outputs)
    if (!v->constant) last_use[v] = static_cast<long>(n);
  std::vector<std::vector<const Value*>> born(n + 1), dies(n + 1);
  for (auto& [v, d] : def) {
    auto u = last_use.find(v);
    if (u == last_use.end() || u->second <= d) continue;
    born[static_cast<size_t>(d + 1)].push_back(v);
    dies[static_cast<size_t>(u->second)].push_back(v);
  }
  std::set<const Value*> live(born[0].begin(), born[0].end());
  double head_gpu = 0, head_cpu = 0;
  bool head_has_code = false;
  for (size_t k = 0; k + 1 < n; ++k) {
    for (const Value* v : dies[k]) live.erase(v);
    for (const Value* v : born[k + 1]) live.insert(v);
    head_gpu += gpu[k];
    head_cpu += cpu[k];
    head_has_code = head_has_code || !g.nodes[k]->folded();
    if (g.nodes[k]->folded() || !head_has_code || live.empty() || live.size() > kMaxCutTensors) continue;
    bool ok = head_gpu < p.gpu_seconds;  // the tail has code
    for (const Value* v : live) ok = ok && !v->is_input && !v->is_output;
    if (!ok) continue;
    SplitCut c;
    c.last = k;
    c.after = g.nodes[k]->name;
    c.tensors.assign(live.begin(), live.end());
    std::sort(c.tensors.begin(), c.tensors.end(), [&](const Value* a, const Value* b) { return def[a] < def[b] || (def[a] == def[b] && a->name < b->name); });
    for (const Value* v : c.tensors) c.bytes += static_cast<double>(v->nbytes());
    c.G = head_gpu;
    c.Tg = p.gpu_seconds - head_gpu;
    c.C = p.cpu_seconds - head_cpu;
    c.X = costs.link_seconds * static_cast<double>(c.tensors.size()) + c.bytes / costs.link_bandwidth;
    c.latency = c.G + c.X + c.C;
    c.gpu_share = c.G / p.gpu_seconds;
    c.gain = std::min(p.gpu_seconds / c.G, 1.0 + costs.cpu_workers * c.Tg / c.C);
    c.within_budget = costs.latency_budget <= 0 || c.latency <= costs.latency_budget;
    p.candidates.push_back(std::move(c));
  }
  const std::string where;
  if (p.candidates.empty())
    fail(g, CompileError::Kind::Unsupported,
         fmt::format("no place to cut the graph{}: every position is crossed by a graph input, a graph output or more than {} tensors", where,
                     kMaxCutTensors));
  if (spec == "auto") {
    const SplitCut* best = nullptr;
    for (const SplitCut& c : p.candidates) {
      if (!c.within_budget) continue;
      if (!best || c.gain > best->gain * (1 + 1e-9) || (c.gain >= best->gain * (1 - 1e-9) && c.bytes < best->bytes)) best = &c;
    }
    if (!best)
      fail(g, CompileError::Kind::Unsupported,
           fmt::format("no cut{} keeps a tail on the CPU within the latency budget of {} (the shortest takes {}); raise --latency-budget",
                       where, ms(costs.latency_budget),
                       ms(std::min_element(p.candidates.begin(), p.candidates.end(), [](auto& a, auto& b) { return a.latency < b.latency; })->latency)));
    p.chosen = *best;
  } else if (spec.rfind("after=", 0) == 0) {
    const std::string node = spec.substr(6);
    size_t pos = n;
    for (size_t i = 0; i < n; ++i)
      if (g.nodes[i]->name == node) pos = i;
    if (pos == n) fail(g, CompileError::Kind::Io, fmt::format("after={}: the graph{} has no node '{}' (compile-model --print-after simplify lists them)", node, where, node));
    auto it = std::find_if(p.candidates.begin(), p.candidates.end(), [&](const SplitCut& c) { return c.last == pos; });
    if (it == p.candidates.end())
      fail(g, CompileError::Kind::Unsupported,
           fmt::format("after={}: {} cannot end the head: the position after it is crossed by a graph input, a graph output, more than {} "
                       "tensors, or nothing (it is the last node, or computes only constants)",
                       node, g.nodes[pos]->where(), kMaxCutTensors));
    p.chosen = *it;
  } else if (spec.rfind("gpu-share=", 0) == 0) {
    double f = -1;
    try {
      size_t used = 0;
      f = std::stod(spec.substr(10), &used);
      if (used != spec.size() - 10) f = -1;
    } catch (const std::exception&) {
    }
    if (!(f > 0 && f < 1)) fail(g, CompileError::Kind::Io, "'" + spec + "': F must be a number between 0 and 1 (the head's share of the GPU time)");
    p.chosen = *std::min_element(p.candidates.begin(), p.candidates.end(),
                                 [&](const SplitCut& a, const SplitCut& b) { return std::fabs(a.gpu_share - f) < std::fabs(b.gpu_share - f); });
  } else {
    fail(g, CompileError::Kind::Io, "'" + spec + "' is not auto, after=NODE or gpu-share=F");
  }
  return p;
}

SplitGraphs split_graph(const Graph& g, const SplitCut& cut) {
  auto part = [&](size_t first, size_t last, const std::vector<const Value*>& ins, const std::vector<const Value*>& outs,
                  const std::string& suffix) {
    auto p = std::make_unique<Graph>();
    p->model_path = g.model_path;
    p->name = g.name + suffix;
    p->opset = g.opset;
    p->max_memory = g.max_memory;
    std::map<const Value*, Value*> map;
    auto get = [&](const Value* v) -> Value* {
      if (!v) return nullptr;
      if (auto it = map.find(v); it != map.end()) return it->second;
      Value* c = p->add_value(v->name);
      c->dtype = v->dtype;
      c->shape = v->shape;
      c->shape_known = v->shape_known;
      c->constant = v->constant;
      c->layout = Layout::plain();
      map[v] = c;
      return c;
    };
    for (const Value* v : ins) {
      Value* c = get(v);
      c->is_input = true;
      c->constant = nullptr;
      p->inputs.push_back(c);
    }
    for (size_t i = first; i <= last; ++i) {
      const Node& n = *g.nodes[i];
      ONNXC_ASSERT(n.epilogue.empty(), "split_graph: fused node " + n.name);
      auto c = std::make_unique<Node>();
      c->name = n.name;
      c->op_type = n.op_type;
      c->opset = n.opset;
      c->attrs = n.attrs;
      c->origin = n.origin;
      for (const Value* v : n.inputs) {
        ONNXC_ASSERT(!v || v->constant || map.count(v), "split_graph: " + n.where() + " reads '" + (v ? v->name : "") + "' from the other part");
        c->inputs.push_back(get(v));
      }
      for (const Value* v : n.outputs) {
        Value* o = get(v);
        if (o) o->producer = c.get();
        c->outputs.push_back(o);
      }
      OpFactory f = find_op(n.op_type);
      ONNXC_ASSERT(f, "split_graph: unknown op " + n.op_type);
      c->op = f();
      AttrReader a(*c);
      c->op->parse(a);
      a.done();
      c->op->infer(*c);
      p->nodes.push_back(std::move(c));
    }
    for (const Value* v : outs) {
      ONNXC_ASSERT(map.count(v), "split_graph: output '" + v->name + "' is not computed by the part");
      Value* c = map.at(v);
      c->is_output = true;
      p->outputs.push_back(c);
    }
    p->drop_unused_values();
    return p;
  };
  SplitGraphs s;
  std::vector<const Value*> g_in(g.inputs.begin(), g.inputs.end()), g_out(g.outputs.begin(), g.outputs.end());
  s.head = part(0, cut.last, g_in, cut.tensors, "_head");
  s.tail = part(cut.last + 1, g.nodes.size() - 1, cut.tensors, g_out, "_tail");
  return s;
}

std::string describe_split(const SplitPlan& p) {
  const SplitCut& c = p.chosen;
  std::string tensors;
  for (const Value* v : c.tensors) tensors += (tensors.empty() ? "" : ", ") + fmt::format("'{}' {}", v->name, v->type_str());
  std::string s = fmt::format("split ({}): cut after node {} '{}', crossed by {} ({:.1f} KB)\n", p.spec, c.last + 1, c.after, tensors, c.bytes / 1e3);
  s += fmt::format("split: G {} (head on the GPU), Tg {} / C {} (tail on the GPU / one CPU worker), X {} (cut to the host); "
                   "whole model: {} on the GPU, {} on one CPU worker\n",
                   ms(c.G), ms(c.Tg), ms(c.C), ms(c.X), ms(p.gpu_seconds), ms(p.cpu_seconds));
  s += fmt::format("split: with {} CPU worker{}: throughput x{:.3f} of the GPU alone, CPU-tail latency G+X+C {} (budget {}); "
                   "the head has {:.1f}% of the GPU time; {} candidate cuts; GPU {} ({:.1f} TFLOP/s, {:.0f} GB/s), link {:.0f} GB/s; "
                   "times {}\n",
                   p.costs.cpu_workers, p.costs.cpu_workers == 1 ? "" : "s", c.gain, ms(c.latency),
                   p.costs.latency_budget > 0 ? ms(p.costs.latency_budget) : "none", 100 * c.gpu_share, p.candidates.size(), p.costs.gpu,
                   p.costs.gpu_flops / 1e12, p.costs.gpu_bandwidth / 1e9, p.costs.link_bandwidth / 1e9,
                   p.costs.cpu_measured.empty() && p.costs.gpu_measured.empty()
                       ? std::string("predicted")
                       : fmt::format("measured for {} CPU and {} GPU functions, predicted elsewhere", p.costs.cpu_measured.size(),
                                     p.costs.gpu_measured.size()));
  return s;
}

std::string split_json(const SplitPlan& p, const std::string& name, const std::string& model) {
  auto cut_json = [](const SplitCut& c, const std::string& indent) {
    std::string t;
    for (const Value* v : c.tensors) {
      std::string shape;
      for (int64_t d : v->shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      t += fmt::format("{}{{\"name\": {}, \"dtype\": {}, \"shape\": [{}], \"bytes\": {}}}", t.empty() ? "" : ", ", json_str(v->name),
                       json_str(dtype_name(v->dtype)), shape, v->nbytes());
    }
    return fmt::format("{{\"after\": {}, \"position\": {}, \"tensors\": [{}],\n{} \"cut_bytes\": {}, \"G_ms\": {:.6f}, \"Tg_ms\": {:.6f}, "
                       "\"C_ms\": {:.6f}, \"X_ms\": {:.6f}, \"gain\": {:.6f}, \"latency_ms\": {:.6f}, \"gpu_share\": {:.6f}, "
                       "\"within_budget\": {}}}",
                       json_str(c.after), c.last + 1, t, indent, static_cast<uint64_t>(c.bytes), c.G * 1e3, c.Tg * 1e3, c.C * 1e3, c.X * 1e3,
                       c.gain, c.latency * 1e3, c.gpu_share, c.within_budget ? "true" : "false");
  };
  std::string s = "{\n";
  s += fmt::format("  \"model\": {},\n  \"name\": {},\n  \"spec\": {},\n", json_str(model), json_str(name), json_str(p.spec));
  s += fmt::format("  \"head\": {},\n  \"tail\": {},\n", json_str(name + "_head"), json_str(name + "_tail"));
  s += fmt::format("  \"costs\": {{\"gpu\": {}, \"gpu_tflops\": {:.3f}, \"gpu_bandwidth_gbs\": {:.1f}, \"launch_us\": {:.2f}, "
                   "\"link_bandwidth_gbs\": {:.1f}, \"link_us\": {:.2f}, \"cpu_workers\": {}, \"latency_budget_ms\": {:.3f}, "
                   "\"cpu_measured_ops\": {}, \"gpu_measured_ops\": {}}},\n",
                   json_str(p.costs.gpu), p.costs.gpu_flops / 1e12, p.costs.gpu_bandwidth / 1e9, p.costs.launch_seconds * 1e6,
                   p.costs.link_bandwidth / 1e9, p.costs.link_seconds * 1e6, p.costs.cpu_workers, p.costs.latency_budget * 1e3,
                   p.costs.cpu_measured.size(), p.costs.gpu_measured.size());
  s += fmt::format("  \"gpu_ms\": {:.6f},\n  \"cpu_ms\": {:.6f},\n", p.gpu_seconds * 1e3, p.cpu_seconds * 1e3);
  s += "  \"cut\": " + cut_json(p.chosen, "  ") + ",\n  \"candidates\": [\n";
  for (size_t i = 0; i < p.candidates.size(); ++i)
    s += "    " + cut_json(p.candidates[i], "    ") + (i + 1 < p.candidates.size() ? ",\n" : "\n");
  s += "  ]\n}\n";
  return s;
}

}  // namespace onnxc
