// passes/fold_constants.cc — constant folding and cleanup, with the ops' own reference eval.
//
//  1. fold: a node whose inputs are all constants is evaluated (eval_node) and its outputs
//     become constants, unless they exceed kFoldLimit elements (a huge Expand or Tile of a
//     constant stays code) or the constants folded so far would pass the --max-memory cap
//     (Graph::max_memory, counted by a MemoryBudget; the node then stays code as well), or
//     its eval would do more than kMaxFoldWork operations (ir/cost.h: eval_work).
//     Folded nodes are removed; their outputs become initializers.
//       Shape(x) → Gather → Unsqueeze → Concat → Reshape's shape   ⇒   one i64 constant
//  2. identities: Identity(x) and inference-mode Dropout(x) are removed and their users
//     read x directly; a graph output keeps its name (x is renamed) unless x is a graph
//     input or another output, in which case the copy stays.
//       y = Identity(x); z = Relu(y)   ⇒   z = Relu(x)
//  3. deduplicate: constants with equal dtype, shape, layout and bytes become one value.
//  4. dead code: nodes whose outputs nobody reads, then unused values.
#include <algorithm>
#include <map>
#include <set>

#include "ir/cost.h"
#include "ir/eval.h"
#include "ir/op.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

constexpr int64_t kFoldLimit = int64_t{1} << 24;

bool fold(Graph& g) {
  MemoryBudget budget(g);
  std::set<const Node*> done;
  for (auto& np : g.nodes) {
    Node& n = *np;
    if (!n.epilogue.empty()) continue;
    bool all_const = true;
    if (n.folded()) {  // outputs known already (e.g. Shape of a static input)
      done.insert(&n);
      continue;
    }
    std::vector<const Tensor*> in;
    int64_t elems = 0;
    uint64_t bytes = 0;
    for (Value* v : n.inputs) {
      if (v && !v->constant) { all_const = false; break; }
      in.push_back(v ? v->constant.get() : nullptr);
    }
    for (Value* v : n.outputs)
      if (v) {
        elems = std::min(elems + std::min(numel(v->physical_shape()), kFoldLimit + 1), kFoldLimit + 1);  // no overflow
        bytes = add_bytes(bytes, v->nbytes(), n.where() + ": the outputs");
      }
    if (!all_const || elems > kFoldLimit || !budget.fits(bytes) || eval_work(n) > kMaxFoldWork) continue;
    budget.charge(bytes, n.where());
    std::vector<Tensor> out = eval_node(n, in);
    for (size_t j = 0; j < n.outputs.size(); ++j)
      if (Value* v = n.outputs[j]) v->constant = std::make_shared<const Tensor>(std::move(out[j]));
    done.insert(&n);
  }
  erase_nodes(g, done);
  return !done.empty();
}

bool is_identity(const Node& n) {
  if (n.op_type == "Identity") return n.epilogue.empty();
  if (n.op_type != "Dropout" || !n.epilogue.empty()) return false;
  // Dropout is an identity on output 0 (infer rejects random training-mode dropout);
  // its mask output, when used, keeps the node.
  return !n.out(1);
}

// Substitutes every node, extra and epilogue input through `subst` (already resolved to
// its final value). One sweep over the graph, so rewrites that remove many nodes stay linear.
bool substitute_inputs(Graph& g, const std::map<const Value*, Value*>& subst) {
  if (subst.empty()) return false;
  bool changed = false;
  auto swap = [&](std::vector<Value*>& vs) {
    for (Value*& v : vs)
      if (auto it = v ? subst.find(v) : subst.end(); it != subst.end()) v = it->second, changed = true;
  };
  for (auto& n : g.nodes) {
    swap(n->inputs);
    swap(n->extra_inputs);
    for (auto& e : n->epilogue) swap(e->inputs);
  }
  return changed;
}

bool remove_identities(Graph& g) {
  // Identities whose output is not a graph output: their users read the input instead, all
  // in one sweep in topological order (a chain of them resolves to its first input).
  std::map<const Value*, Value*> subst;
  std::set<const Node*> gone;
  for (auto& np : g.nodes) {
    Node* n = np.get();
    Value* x = n->in(0);
    Value* y = n->out(0);
    if (!is_identity(*n) || !x || !y || y->is_output || x->layout != y->layout) continue;
    if (auto it = subst.find(x); it != subst.end()) x = it->second;
    subst[y] = x;
    gone.insert(n);
  }
  substitute_inputs(g, subst);
  erase_nodes(g, gone);
  bool changed = !gone.empty();
  // Identities producing a graph output (few): the output keeps its name when it can.
  for (size_t k = 0; k < g.nodes.size();) {
    Node* n = g.nodes[k].get();
    Value* x = n->in(0);
    Value* y = n->out(0);
    if (!is_identity(*n) || !x || !y || x->layout != y->layout || !can_replace(y, x) ||
        (y->is_output && use_count(g, x) > 1)) {
      ++k;
      continue;
    }
    replace_all_uses(g, y, x);
    erase_node(g, n);
    changed = true;
  }
  return changed;
}

bool dedup_constants(Graph& g) {
  std::map<std::tuple<int, Shape, std::string, std::vector<unsigned char>>, Value*> seen;
  std::map<const Value*, Value*> subst;
  for (auto& vp : g.values) {
    Value* v = vp.get();
    if (!v->constant || v->producer || v->is_output || v->is_input) continue;
    auto key = std::make_tuple(static_cast<int>(v->dtype), v->shape, v->layout.str(v->shape.size()), v->constant->bytes);
    auto [it, fresh] = seen.emplace(std::move(key), v);
    if (!fresh) subst[v] = it->second;
  }
  return substitute_inputs(g, subst);
}

}  // namespace

bool fold_constants(Graph& g, const PassOptions&) {
  bool changed = fold(g);
  changed |= remove_identities(g);
  changed |= dedup_constants(g);
  changed |= remove_dead_nodes(g);
  g.drop_unused_values();
  return changed;
}

}  // namespace onnxc
