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
//  2. Concat in place: where the backend copies a Concat input as one contiguous run of the
//     output (Backend::stored_in_output: for C, one image concatenated along channels in
//     whole blocks; also Reshape, Flatten, Squeeze and Unsqueeze in a plain layout, whose
//     input is the output's bytes), the input is stored there from the start and the kernel
//     skips its copy.
//     Decided over the Concats from the last to the first, so that nested Concats land in
//     the outermost one, and a Concat whose inputs already lie in order in another buffer
//     becomes a view of those bytes with no copy at all: DenseNet's Concat of x0..xk in
//     layer k is the front of the block's last Concat of x0..xL. An input qualifies when it
//     is planned, appears once and is not already stored elsewhere (a tensor feeding two
//     Concats goes into the later one). All of them share one buffer, live from the first
//     producer to the last reader; none is written in place by another node.
//     y = Concat(a, b)   ⇒   a at y's offset, b at y's offset + bytes(a)
//  3. Offsets: buffers in decreasing size order, each at the lowest 64-byte aligned offset
//     that overlaps no already placed buffer with an intersecting live interval ("greedy by
//     size"; TFLite's arena planner does the same).
// The result is Value::arena_offset and Graph::arena_bytes (the arena size, also the
// generated header's NAME_ARENA_BYTES); Graph::arena_tensor_bytes is the sum of all planned
// tensors, what an arena without reuse would need.
// Limits: every tensor and the arena must stay under Graph::max_memory (--max-memory), an
// Unsupported error naming the tensor otherwise; sizes and offsets are checked for overflow. Codegen drops `restrict` on parameters
// that share memory; Value::stored_in records the containing value for check_memory_plan and
// --dump-ir. Known gaps: Split, Slice and Transpose still copy.
#include <algorithm>
#include <map>
#include <set>

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
  std::vector<int64_t> at;  // byte offset of each value in the buffer
  int64_t bytes = 0, first = 0, last = 0, offset = -1;
};

struct Place {
  Value* root;     // the value whose buffer holds it
  int64_t offset;  // bytes from the root's start
};

// Step 2 of the file comment: the values stored inside another (Concat and Reshape inputs, and
// Concats and Reshapes that are views), each with its root and offset.
std::map<const Value*, Place> stored_places(const Graph& g, const Backend& be, const std::map<const Value*, int64_t>& def) {
  std::map<const Value*, Place> in;
  std::set<const Value*> roots;
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const Node& n = *g.nodes[k];
    if (n.folded()) continue;
    const std::vector<int64_t> at = be.stored_in_output(n);
    Value* y = n.out(0);
    if (at.size() != n.inputs.size() || !y || !def.count(y)) continue;
    // A view: every data input already in one buffer, in order, each right after the one
    // before (input 0 is data in every such node).
    if (!in.count(y) && !roots.count(y) && at[0] == 0 && n.in(0) && in.count(n.in(0))) {
      const Place first = in.at(n.in(0));
      bool view = true;
      for (size_t i = 0; i < n.inputs.size() && view; ++i) {
        if (at[i] == -2) continue;
        auto it = n.in(i) ? in.find(n.in(i)) : in.end();
        view = it != in.end() && at[i] >= 0 && it->second.root == first.root && it->second.offset == first.offset + at[i];
      }
      if (view && first.offset % static_cast<int64_t>(kAlign) == 0) {
        in[y] = first;
        continue;
      }
    }
    Value* root = y;
    int64_t base = 0;
    if (auto it = in.find(y); it != in.end()) root = it->second.root, base = it->second.offset;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Value* x = n.in(i);
      if (!x || x == y || at[i] < 0 || (base + at[i]) % static_cast<int64_t>(kAlign) != 0 || !def.count(x) || in.count(x) ||
          roots.count(x) || x->nbytes() == 0 || std::count(n.inputs.begin(), n.inputs.end(), x) != 1)
        continue;
      in[x] = {root, base + at[i]};
      roots.insert(root);
    }
  }
  return in;
}

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
  // A value stored inside another may share its bytes (while both live, by design).
  auto root = [](const Value* v) {
    while (v->stored_in) v = v->stored_in;
    return v;
  };
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
      const bool nested = root(a) == root(v) && ((a0 <= v0 && v1 <= a1) || (v0 <= a0 && a1 <= v1));
      if (!handoff && !nested && a0 < v1 && v0 < a1)
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
  const std::map<const Value*, Place> places = stored_places(g, *o.backend, def);
  std::set<const Value*> roots;
  for (auto& [v, p] : places) roots.insert(p.root);
  // Buffers: one per root with the values stored in it (step 2), and the in-place pairs merged.
  std::map<const Value*, size_t> buf_of, root_buf;
  std::vector<Buffer> bufs;
  size_t in_place = 0;
  for (Value* v : planned) {
    v->stored_in = nullptr;
    auto pl = places.find(v);
    if (pl != places.end() || roots.count(v)) {
      const Value* r = pl != places.end() ? pl->second.root : v;
      auto rb = root_buf.find(r);
      if (rb == root_buf.end()) {
        bufs.push_back({{}, {}, static_cast<int64_t>(r->nbytes()), def.at(v), last.at(v), -1});
        rb = root_buf.emplace(r, bufs.size() - 1).first;
      }
      Buffer& b = bufs[rb->second];
      b.values.push_back(v);
      b.at.push_back(pl != places.end() ? pl->second.offset : 0);
      b.first = std::min(b.first, def.at(v));
      b.last = std::max(b.last, last.at(v));
      buf_of[v] = rb->second;
      if (pl != places.end()) v->stored_in = pl->second.root, ++in_place;
      continue;
    }
    const Node& n = *v->producer;
    size_t target = SIZE_MAX;
    for (Value* x : n.all_inputs()) {
      auto it = x ? buf_of.find(x) : buf_of.end();
      // Not over a value stored inside another: the in-place output would start at the buffer's start.
      if (it == buf_of.end() || places.count(x) || last.at(x) != def.at(v) || !o.backend->may_inplace(n, *v, *x)) continue;
      if (bufs[it->second].last != def.at(v)) continue;  // another value of that buffer lives on
      target = it->second;
      break;
    }
    if (target == SIZE_MAX) {
      bufs.push_back({{v}, {0}, static_cast<int64_t>(v->nbytes()), def.at(v), last.at(v), -1});
      buf_of[v] = bufs.size() - 1;
    } else {
      Buffer& b = bufs[target];
      b.values.push_back(v);
      b.at.push_back(0);
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
    for (size_t i = 0; i < b.values.size(); ++i) {
      Value* v = b.values[i];
      v->arena_offset = b.offset + b.at[i];
      total = add_bytes(total, align_up(v->nbytes()), "the intermediate tensors");
    }
  bool changed = g.arena_bytes != static_cast<int64_t>(arena) || in_place > 0;
  g.arena_bytes = static_cast<int64_t>(arena);
  g.arena_tensor_bytes = static_cast<int64_t>(total);
  return changed;
}

}  // namespace onnxc
