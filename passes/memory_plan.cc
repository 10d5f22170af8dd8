// passes/memory_plan.cc — memory planning: where every intermediate tensor lives in the
// arena of the generated code.
//
// Tensors planned: outputs of emitted (not folded) nodes that are not graph outputs (those
// are the caller's buffers). Each has a live interval [producer's position, last reader's
// position] in Graph::nodes order, which is the order codegen calls the nodes in; a node in
// a fork-join region (Graph::task_regions, the schedule pass) counts as the whole region,
// whose lists run at the same time, so tensors of one region never share bytes.
//  1. In place: a node may write its output over an input that dies at that node when the
//     backend allows it (Backend::may_inplace: for C, index-aligned elementwise nodes and
//     one-loop fused groups reading that input at the output's own index). The two then form
//     one buffer whose interval is the union.   y = Relu(x), x used only here   ⇒   y at x's offset
//  2. Offsets: buffers in decreasing size order, each at the lowest 64-byte aligned offset
//     that overlaps no already placed buffer with an intersecting live interval ("greedy by
//     size"; TFLite's arena planner does the same).
// The result is Value::arena_offset and Graph::arena_bytes (the arena size, also the
// generated header's NAME_ARENA_BYTES); Graph::arena_tensor_bytes is the sum of all planned
// tensors, what an arena without reuse would need.
// Limits: every tensor and the arena must stay under Graph::max_memory (--max-memory), an
// Unsupported error naming the tensor otherwise; sizes and offsets are checked for overflow. Codegen drops `restrict` on parameters
// that share memory. Known gap: Reshape/Flatten/Squeeze still copy (they could alias).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "codegen/backend.h"
#include "ir/op.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

constexpr uint64_t kAlign = 64;
uint64_t align_up(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }  // x < 2^63: no overflow

struct Buffer {
  std::vector<Value*> values;
  int64_t bytes = 0, first = 0, last = 0, offset = -1;
};

// Live ranges in positions of Graph::nodes: node k alone, or the whole fork-join region it is in.
std::vector<std::pair<int64_t, int64_t>> node_spans(const Graph& g) {
  std::vector<std::pair<int64_t, int64_t>> span(g.nodes.size());
  for (size_t k = 0; k < span.size(); ++k) span[k] = {static_cast<int64_t>(k), static_cast<int64_t>(k)};
  for (const auto& r : g.task_regions)
    for (size_t k = r.first; k <= r.last && k < span.size(); ++k) span[k] = {static_cast<int64_t>(r.first), static_cast<int64_t>(r.last)};
  return span;
}

// The planned tensors with their live ranges: from the producer's span to the last reader's.
void live_ranges(const Graph& g, std::map<const Value*, int64_t>& def, std::map<const Value*, int64_t>& last,
                 std::vector<Value*>& planned) {
  const auto span = node_spans(g);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = *g.nodes[k];
    if (n.folded()) continue;
    for (Value* v : n.all_inputs())
      if (v) last[v] = std::max(last[v], span[k].second);
    for (Value* v : n.outputs) {
      if (!v || v->is_output || v->constant) continue;
      def[v] = span[k].first;
      last[v] = span[k].second;
      planned.push_back(v);
    }
  }
}

}  // namespace

std::string check_memory_plan(const Graph& g) {
  std::map<const Value*, int64_t> def, last;
  std::vector<Value*> planned;
  live_ranges(g, def, last, planned);
  std::vector<bool> in_region(g.nodes.size(), false);
  for (const auto& r : g.task_regions)
    for (size_t k = r.first; k <= r.last && k < in_region.size(); ++k) in_region[k] = true;
  std::stable_sort(planned.begin(), planned.end(), [&](const Value* a, const Value* b) { return def.at(a) < def.at(b); });
  std::vector<const Value*> active;
  for (const Value* v : planned) {
    if (v->arena_offset < 0) return "'" + v->name + "' has no arena offset";
    const int64_t f = def.at(v);
    std::vector<const Value*> still;
    for (const Value* a : active) {
      if (last.at(a) < f) continue;
      still.push_back(a);
      // Both live at f. Allowed only for an in-place pair: a's last reader is v's producer,
      // outside any region.
      const bool handoff = last.at(a) == f && def.at(a) < f && !in_region[static_cast<size_t>(f)];
      const int64_t a0 = a->arena_offset, a1 = a0 + static_cast<int64_t>(a->nbytes());
      const int64_t v0 = v->arena_offset, v1 = v0 + static_cast<int64_t>(v->nbytes());
      if (!handoff && a0 < v1 && v0 < a1)
        return fmt::format("'{}' (nodes {}..{}, bytes {}..{}) and '{}' (nodes {}..{}, bytes {}..{}) share arena bytes while both live",
                           a->name, def.at(a), last.at(a), a0, a1, v->name, f, last.at(v), v0, v1);
    }
    still.push_back(v);
    active = std::move(still);
  }
  return "";
}

bool plan_memory(Graph& g, const PassOptions& o) {
  ONNXC_ASSERT(o.backend, "memory-plan needs PassOptions::backend");
  std::map<const Value*, int64_t> def, last;
  std::vector<Value*> planned;
  live_ranges(g, def, last, planned);
  // Buffers, merging in-place pairs.
  std::map<const Value*, size_t> buf_of;
  std::vector<Buffer> bufs;
  size_t in_place = 0;
  for (Value* v : planned) {
    const Node& n = *v->producer;
    size_t target = SIZE_MAX;
    for (Value* x : n.all_inputs()) {
      auto it = x ? buf_of.find(x) : buf_of.end();
      if (it == buf_of.end() || last.at(x) != def.at(v) || !o.backend->may_inplace(n, *v, *x)) continue;
      if (bufs[it->second].last != def.at(v)) continue;  // another value of that buffer lives on
      target = it->second;
      break;
    }
    if (target == SIZE_MAX) {
      bufs.push_back({{v}, static_cast<int64_t>(v->nbytes()), def.at(v), last.at(v), -1});
      buf_of[v] = bufs.size() - 1;
    } else {
      Buffer& b = bufs[target];
      b.values.push_back(v);
      b.last = std::max(b.last, last.at(v));
      buf_of[v] = target;
      ++in_place;
    }
  }
  // Greedy by size. Placed buffers are indexed by the start of their interval: the ones a
  // buffer can overlap in time start within max_len before it, so a chain of 100,000 nodes
  // looks at a few neighbours per buffer, not at every buffer placed.
  // Sizes and offsets stay below 2^63 (add_bytes) and under the --max-memory cap.
  std::vector<size_t> order(bufs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bufs[a].bytes > bufs[b].bytes; });
  std::multimap<int64_t, size_t> placed;  // interval start → buffer
  int64_t max_len = 0;
  uint64_t arena = 0, total = 0;
  for (size_t i : order) {
    Buffer& b = bufs[i];
    const Value* v0 = b.values.front();
    check_memory_cap(g, static_cast<uint64_t>(b.bytes), "intermediate tensor '" + v0->name + "' " + v0->type_str());
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of live-overlapping buffers
    for (auto it = placed.lower_bound(b.first - max_len); it != placed.end() && it->first <= b.last; ++it) {
      const Buffer& o = bufs[it->second];
      if (o.first <= b.last && b.first <= o.last) busy.emplace_back(o.offset, o.offset + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t off = 0;
    for (auto& [st, e] : busy) {
      if (off + static_cast<uint64_t>(b.bytes) <= st) break;
      off = std::max(off, align_up(e));
    }
    const std::string what = "the arena (intermediate tensors, memory plan)";
    const uint64_t stop = add_bytes(off, static_cast<uint64_t>(b.bytes), what);
    const uint64_t end = align_up(add_bytes(stop, kAlign, what) - kAlign);  // align_up cannot wrap
    check_memory_cap(g, end, "the arena of intermediate tensors (memory plan) with '" + v0->name + "' " + v0->type_str() + " placed");
    b.offset = static_cast<int64_t>(off);
    arena = std::max(arena, end);
    placed.emplace(b.first, i);
    max_len = std::max(max_len, b.last - b.first);
  }
  for (Buffer& b : bufs)
    for (Value* v : b.values) {
      v->arena_offset = b.offset;
      total = add_bytes(total, align_up(v->nbytes()), "the intermediate tensors");
    }
  bool changed = g.arena_bytes != static_cast<int64_t>(arena) || in_place > 0;
  g.arena_bytes = static_cast<int64_t>(arena);
  g.arena_tensor_bytes = static_cast<int64_t>(total);
  return changed;
}

}  // namespace onnxc
