// passes/fuse.cc — operator fusion: elementwise tails join the node that produces their input.
//
// TVM-style, by Op::kind(). Anchors: OutElementwiseFusable ops (Conv, ConvTranspose, Gemm,
// MatMul, pools, global pools) and index-aligned elementwise nodes (is_index_aligned_elementwise,
// ir/op.h: their group becomes one loop, codegen/c/fused.cc). Steps: index-aligned
// elementwise nodes whose output has the anchor output's shape, dtype and layout; their other
// inputs become the group's extra inputs and must be readable in that layout (NCHWc: an
// nchwc_broadcast_view exists; plain: numpy broadcasting that does not grow the output).
// Injective, Reduction and Opaque ops are never fused here. The representation is in
// ir/graph.h: the anchor stays in Graph::nodes, the steps move into Node::epilogue.
//
// Before → after (values in [] become internal to the group, | separates extra inputs):
//   a = Conv(x, w, b); r = Relu(a)                  →  r = Conv+Relu(x, w, b)           [a]
//   a = Conv(x, w, b); s = Add(a, skip); r = Relu(s) →  r = Conv+Add+Relu(x, w, b | skip) [a, s]
//   a = Conv(x, w, b); s = Sigmoid(a); y = Mul(a, s) →  y = Conv+Sigmoid+Mul(x, w, b)   [a, s]
//   t = Add(x, y); u = Mul(t, c); v = Sigmoid(u)     →  v = Add+Mul+Sigmoid(x, y | c)   [t, u]
//
// Algorithm: nodes are visited in topological order, Conv-like anchors in a first sweep
// and elementwise anchors in a second (an Add both a conv and a Relu could take goes to the
// conv); each one that can anchor grows a group. A growth step takes the running value r (the group's current output, not a graph
// output) and tries to close over its uses: start from r's users, add the users of every
// value of the candidate set that escapes it (has a use outside the set, is a graph output
// or is unused) other than the output of the set's last node, until exactly that one value
// escapes (the new running value). Every node taken must be a valid step, else the attempt
// fails and the group stops growing. A plain chain closes at once (r has one user); the
// x * sigmoid(x) pattern (Sigmoid and Mul both read r, the Sigmoid's output only the Mul)
// closes with both; HardSwish written as x * Clip(x + 3, 0, 6) / 6 closes the same way.
// So every use of an internal value is inside its group and the only escaping value is
// produced by the group's last node, which keeps the contracted graph acyclic; the group
// reads its extra inputs where the anchor stood, so topo_sort() moves it after their
// producers (residual Add: Add(conv_out, skip) where skip comes from a later node).
// A node absorbed into one group is never an anchor or a step elsewhere: a value read by
// two groups (x in x * SE(x)) stays between them.
//
// A group holds at most kMaxSteps steps; a longer chain continues as the next group.
// Known gaps: no injective/reduction fusion (Reshape, Transpose, Concat, Softmax stay
// separate); steps must keep the anchor's shape, so a broadcast that grows the output
// (the SE block's Mul) starts its own one-loop group instead of joining its producer;
// float32 only, but for two integer groups: a QLinearConv and the onnxc.qdq_add (qdq_mul) that
// reads its bytes, a residual add between quantize steps, where the backend's kernel applies
// the add in registers (Backend::takes_epilogue; grow_integer); and a MatMulInteger with the
// Cast to float32 that reads its sums and the float steps after it (the rescaling Mul, the
// bias, GELU, a residual add: grow_to_float), where the backend's kernel applies them to its
// tiles; a conv's epilogue is otherwise a second sweep over its output (codegen/c/fused.h).
#include <algorithm>
#include <map>
#include <set>

#include "codegen/backend.h"
#include "ir/eval.h"
#include "ir/op.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

constexpr size_t kMaxClosure = 16;  // nodes one growth step may take at once
// Steps one group may hold: a longer chain continues in a new group. It keeps each emitted
// function (and its parameter list of extra inputs) a reasonable size for the C compiler.
constexpr size_t kMaxSteps = 64;

bool can_anchor(const Node& n) {
  if (n.folded() || !n.out(0) || n.out(0)->dtype != DType::F32) return false;
  for (size_t j = 1; j < n.outputs.size(); ++j)
    if (n.outputs[j]) return false;  // MaxPool's indices: the group has one output
  return n.op->kind() == FusionKind::OutElementwiseFusable || is_index_aligned_elementwise(n);
}

// Whether a loop over `out` (in its layout) can read outer value v element by element.
bool readable(const Value* v, const Value* out) {
  if (out->layout.is_nchwc()) {
    Shape view;
    return nchwc_broadcast_view(v->shape, v->layout, out->shape, out->layout.block, &view);
  }
  if (!out->layout.is_plain() || !v->layout.is_plain() || v->shape.size() > out->shape.size()) return false;
  size_t off = out->shape.size() - v->shape.size();
  for (size_t i = 0; i < v->shape.size(); ++i)
    if (v->shape[i] != 1 && v->shape[i] != out->shape[off + i]) return false;
  return true;
}

struct Fuser {
  Graph& g;
  std::map<const Value*, std::vector<Node*>> users;  // of the graph before fusion
  std::map<const Node*, size_t> pos;                 // index in Graph::nodes (topological)
  std::set<const Node*> absorbed;

  explicit Fuser(Graph& gr) : g(gr) {
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      Node* n = g.nodes[k].get();
      pos[n] = k;
      for (Value* v : n->all_inputs()) {
        if (!v) continue;
        auto& u = users[v];
        if (u.empty() || u.back() != n) u.push_back(n);  // a node's reads are consecutive
      }
    }
  }

  bool step_ok(const Node& u, const Value* run) const {
    if (absorbed.count(&u) || !is_index_aligned_elementwise(u)) return false;
    const Value* o = u.out(0);
    return o->shape == run->shape && o->layout == run->layout;
  }

  bool escapes(const Value* v, const std::set<const Node*>& set) const {
    auto it = users.find(v);
    if (v->is_output || it == users.end() || it->second.empty()) return true;
    for (const Node* u : it->second)
      if (!set.count(u)) return true;
    return false;
  }

  // One growth step from running value `run` of a group whose values so far are `internal`:
  // the nodes to add, in topological order, or empty when the group cannot grow.
  std::vector<Node*> close_over(const Value* run, const std::set<const Value*>& internal) const {
    if (run->is_output) return {};
    std::set<const Node*> set;
    std::vector<Node*> order;
    std::vector<const Value*> frontier = {run};
    for (;;) {
      size_t before = order.size();
      for (const Value* v : frontier) {
        auto it = users.find(v);
        if (it == users.end()) continue;
        for (Node* u : it->second) {
          if (set.count(u)) continue;
          if (!step_ok(*u, run)) return {};
          set.insert(u);
          order.push_back(u);
        }
      }
      if (order.size() == before || order.size() > kMaxClosure) return {};  // stuck (an unused value) or too big
      std::sort(order.begin(), order.end(), [&](const Node* a, const Node* b) { return pos.at(a) < pos.at(b); });
      frontier.clear();
      for (size_t k = 0; k + 1 < order.size(); ++k)
        if (escapes(order[k]->out(0), set)) frontier.push_back(order[k]->out(0));
      if (frontier.empty()) break;
    }
    // Every other input must be a value of the group, a static constant or readable.
    // (`internal` is not copied: a long chain would make that quadratic.)
    std::set<const Value*> step_outs;
    for (const Node* u : order) step_outs.insert(u->out(0));
    for (const Node* u : order)
      for (size_t i = 0; i < u->inputs.size(); ++i) {
        const Value* v = u->inputs[i];
        if (!v || v == run || internal.count(v) || step_outs.count(v) || (v->constant && u->op->static_input(i))) continue;
        if (!readable(v, run)) return {};
      }
    return order;
  }

  // Grows a group from anchor a; returns whether it absorbed anything.
  bool grow(Node* a) {
    std::set<const Value*> internal;
    if (a->anchor_out) {  // already a group (the pass ran before): keep growing it
      internal.insert(a->anchor_out);
      for (size_t s = 0; s + 1 < a->epilogue.size(); ++s) internal.insert(a->epilogue[s]->out(0));
    }
    Value* run = a->out(0);
    std::vector<Node*> steps;
    for (size_t have = a->epilogue.size();;) {
      std::vector<Node*> add = close_over(run, internal);
      if (add.empty() || have + steps.size() + add.size() > kMaxSteps) break;
      internal.insert(run);
      for (size_t s = 0; s + 1 < add.size(); ++s) internal.insert(add[s]->out(0));
      run = add.back()->out(0);
      for (Node* u : add) absorbed.insert(u);
      steps.insert(steps.end(), add.begin(), add.end());
    }
    if (steps.empty()) return false;
    if (!a->anchor_out) a->anchor_out = a->out(0);
    std::set<const Value*> extras(a->extra_inputs.begin(), a->extra_inputs.end());
    for (Node* u : steps) {
      for (size_t i = 0; i < u->inputs.size(); ++i) {
        Value* v = u->inputs[i];
        if (!v || internal.count(v) || (v->constant && u->op->static_input(i))) continue;
        if (extras.insert(v).second) a->extra_inputs.push_back(v);
      }
      a->epilogue.push_back(std::move(g.nodes[pos.at(u)]));  // the slot stays empty until the end
    }
    a->outputs[0] = run;
    run->producer = a;
    return true;
  }

  // An integer anchor (a QLinearConv with byte output) takes the onnxc.qdq_add or qdq_mul that
  // is its output's one reader, where the backend applies it in the kernel's registers
  // (Backend::takes_epilogue): the other operand, of the same shape, dtype and layout, is the
  // group's one extra input; the scales and zero points stay constants of the step.
  bool grow_integer(Node* a, const Backend& b) {
    if (a->anchor_out || a->op_type != "QLinearConv") return false;
    Value* r = a->out(0);
    auto it = users.find(r);
    if (!r || r->is_output || it == users.end() || it->second.size() != 1) return false;
    Node* u = it->second[0];
    if (absorbed.count(u) || (u->op_type != "onnxc.qdq_add" && u->op_type != "onnxc.qdq_mul") || u->inputs.size() != 8) return false;
    const bool r_first = u->in(0) == r;
    Value* other = u->inputs[r_first ? 3 : 0];
    if (!other || other == r || (!r_first && u->in(3) != r)) return false;
    const Value* y = u->out(0);
    for (const Value* v : {static_cast<const Value*>(other), y})
      if (v->shape != r->shape || v->dtype != r->dtype || v->layout != r->layout) return false;
    for (size_t i : {1, 2, 4, 5, 6, 7})
      if (!u->in(i)->constant) return false;
    if (!b.takes_epilogue(*a, *u)) return false;
    a->anchor_out = r;
    a->extra_inputs = {other};
    absorbed.insert(u);
    a->epilogue.push_back(std::move(g.nodes[pos.at(u)]));
    a->outputs[0] = u->out(0);
    a->outputs[0]->producer = a;
    return true;
  }

  // A MatMulInteger whose int32 product is read only by a Cast to float32 (quantize_dynamic's
  // MatMulInteger -> Cast -> Mul(scale) -> Add(bias) ...) takes the Cast as its first step
  // where the backend's kernel converts its sums itself (Backend::takes_epilogue), then grows
  // over the float steps after it as any float anchor does: the group's output is the last
  // float step's, and the int32 product is never stored.
  bool grow_to_float(Node* a, const Backend& b) {
    if (a->op_type != "MatMulInteger" || a->anchor_out) return false;
    Value* r = a->out(0);
    auto it = users.find(r);
    if (!r || r->is_output || it == users.end() || it->second.size() != 1) return false;
    Node* u = it->second[0];
    if (absorbed.count(u) || u->op_type != "Cast" || u->folded() || u->outputs.size() != 1 || !u->out(0)) return false;
    const Value* y = u->out(0);
    if (y->dtype != DType::F32 || y->shape != r->shape || y->layout != r->layout) return false;
    if (!b.takes_epilogue(*a, *u)) return false;
    a->anchor_out = r;
    absorbed.insert(u);
    a->epilogue.push_back(std::move(g.nodes[pos.at(u)]));
    a->outputs[0] = u->out(0);
    a->outputs[0]->producer = a;
    grow(a);
    return true;
  }
};

}  // namespace

bool fuse_ops(Graph& g, const PassOptions& o) {
  Fuser f(g);
  bool changed = false;
  if (o.backend)
    for (size_t k = 0; k < g.nodes.size(); ++k)
      if (Node* a = g.nodes[k].get(); a && !f.absorbed.count(a))
        changed = (f.grow_integer(a, *o.backend) || f.grow_to_float(a, *o.backend)) || changed;
  // Conv-like anchors first: an elementwise node both could take (Add(relu(a), conv(b)))
  // is cheaper as a conv epilogue, on the output the conv just wrote.
  for (bool out_fusable : {true, false})
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      Node* a = g.nodes[k].get();
      if (!a || f.absorbed.count(a) || !can_anchor(*a)) continue;
      if ((a->op->kind() == FusionKind::OutElementwiseFusable) != out_fusable) continue;
      changed = f.grow(a) || changed;
    }
  if (!changed) return false;
  g.nodes.erase(std::remove(g.nodes.begin(), g.nodes.end(), nullptr), g.nodes.end());
  topo_sort(g);
  return true;
}

}  // namespace onnxc
