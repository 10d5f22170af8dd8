// passes/rewrite.cc — the rewriter API shared by the passes (see pass.h).
#include <algorithm>
#include <map>

#include "ir/op.h"
#include "passes/pass.h"

namespace onnxc {

void replace_all_uses(Graph& g, Value* from, Value* to) {
  auto swap = [&](std::vector<Value*>& vs) {
    for (Value*& v : vs)
      if (v == from) v = to;
  };
  for (auto& n : g.nodes) {
    swap(n->inputs);
    swap(n->extra_inputs);
    for (auto& e : n->epilogue) swap(e->inputs);
  }
  if (from->is_output) {
    ONNXC_ASSERT(can_replace(from, to), "replace_all_uses: graph output '" + from->name + "' cannot become '" + to->name + "'");
    swap(g.outputs);
    from->is_output = false;
    to->is_output = true;
    g.swap_names(from, to);  // the output keeps its ONNX name
  }
}

bool can_replace(const Value* from, const Value* to) {
  return !from->is_output || (!to->is_input && !to->is_output && to->layout.is_plain());
}

size_t use_count(const Graph& g, const Value* v) {
  size_t k = v->is_output ? 1 : 0;
  for (auto& n : g.nodes) {
    k += static_cast<size_t>(std::count(n->inputs.begin(), n->inputs.end(), v));
    k += static_cast<size_t>(std::count(n->extra_inputs.begin(), n->extra_inputs.end(), v));
  }
  return k;
}

void erase_node(Graph& g, Node* n) {
  for (Value* v : n->outputs)
    if (v && v->producer == n) v->producer = nullptr;
  auto it = std::find_if(g.nodes.begin(), g.nodes.end(), [&](auto& p) { return p.get() == n; });
  ONNXC_ASSERT(it != g.nodes.end(), "erase_node: node not in graph");
  g.nodes.erase(it);
}

void erase_nodes(Graph& g, const std::set<const Node*>& nodes) {
  if (nodes.empty()) return;
  for (auto& n : g.nodes)
    if (nodes.count(n.get()))
      for (Value* v : n->outputs)
        if (v && v->producer == n.get()) v->producer = nullptr;
  g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(), [&](auto& p) { return nodes.count(p.get()) != 0; }), g.nodes.end());
}

Node* insert_node(Graph& g, Node* before, const std::string& op_type, const std::string& name,
                  const std::vector<Value*>& inputs, size_t num_outputs, std::map<std::string, Attr> attrs) {
  auto n = std::make_unique<Node>();
  n->name = name;
  n->op_type = op_type;
  n->opset = std::max<int64_t>(g.opset, 13);
  n->attrs = std::move(attrs);
  n->inputs = inputs;
  for (size_t j = 0; j < num_outputs; ++j) {
    Value* v = g.add_value(g.fresh_name(num_outputs == 1 ? name : name + "_" + std::to_string(j)));
    v->producer = n.get();
    n->outputs.push_back(v);
  }
  OpFactory f = find_op(op_type);
  ONNXC_ASSERT(f, "insert_node: unknown op " + op_type);
  n->op = f();
  AttrReader a(*n);
  n->op->parse(a);
  a.done();
  n->op->infer(*n);
  Node* raw = n.get();
  auto it = before ? std::find_if(g.nodes.begin(), g.nodes.end(), [&](auto& p) { return p.get() == before; }) : g.nodes.end();
  ONNXC_ASSERT(!before || it != g.nodes.end(), "insert_node: anchor node not in graph");
  g.nodes.insert(it, std::move(n));
  return raw;
}

Value* add_constant(Graph& g, const std::string& name, const Tensor& t, Layout l) {
  Value* v = g.add_value(g.fresh_name(name));
  v->dtype = t.dtype;
  v->shape = t.shape;
  v->layout = l;
  v->shape_known = true;
  v->constant = std::make_shared<const Tensor>(to_layout(t, l));
  return v;
}

bool remove_dead_nodes(Graph& g) {
  // One backward sweep: in topological order every reader comes after its producer, so a
  // node's liveness is known once the nodes after it are decided (a dead chain goes at once).
  std::set<const Value*> used(g.outputs.begin(), g.outputs.end());
  std::set<const Node*> dead;
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const Node* n = g.nodes[k].get();
    bool live = false;
    for (Value* v : n->outputs) live = live || (v && used.count(v));
    if (!live) {
      dead.insert(n);
      continue;
    }
    for (Value* v : n->all_inputs()) used.insert(v);
  }
  if (dead.empty()) return false;
  erase_nodes(g, dead);
  g.drop_unused_values();
  return true;
}

void topo_sort(Graph& g) {
  // Kahn's algorithm, taking the earliest node (in the current order) among the ready ones.
  std::map<const Value*, size_t> producer;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (Value* v : g.nodes[k]->outputs)
      if (v) producer[v] = k;
  std::vector<size_t> missing(g.nodes.size(), 0);
  std::vector<std::vector<size_t>> users(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (Value* v : g.nodes[k]->all_inputs()) {
      auto it = v ? producer.find(v) : producer.end();
      if (it == producer.end()) continue;
      ++missing[k];
      users[it->second].push_back(k);
    }
  std::set<size_t> ready;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!missing[k]) ready.insert(k);
  std::vector<std::unique_ptr<Node>> sorted;
  while (!ready.empty()) {
    size_t k = *ready.begin();
    ready.erase(ready.begin());
    sorted.push_back(std::move(g.nodes[k]));
    for (size_t u : users[k])
      if (--missing[u] == 0) ready.insert(u);
  }
  ONNXC_ASSERT(sorted.size() == g.nodes.size(), "topo_sort: the graph has a cycle");
  g.nodes = std::move(sorted);
}

Attr attr_int(int64_t v) { Attr a; a.type = Attr::Type::Int; a.i = v; return a; }
Attr attr_ints(std::vector<int64_t> v) { Attr a; a.type = Attr::Type::Ints; a.ints = std::move(v); return a; }
Attr attr_float(double v) { Attr a; a.type = Attr::Type::Float; a.f = v; return a; }
Attr attr_string(std::string v) { Attr a; a.type = Attr::Type::String; a.s = std::move(v); return a; }

}  // namespace onnxc
