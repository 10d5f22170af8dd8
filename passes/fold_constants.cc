// passes/fold_constants.cc — constant folding and cleanup, with the ops' own reference eval.
//
//  1. fold: a node whose inputs are all constants is evaluated (eval_node) and its outputs
//     become constants, unless they exceed kFoldLimit elements (a huge Expand or Tile of a
//     constant stays code). Folded nodes are removed; their outputs become initializers.
//       Shape(x) → Gather → Unsqueeze → Concat → Reshape's shape   ⇒   one i64 constant
//  2. identities: Identity(x) and inference-mode Dropout(x) are removed and their users
//     read x directly; a graph output keeps its name (x is renamed) unless x is a graph
//     input or another output, in which case the copy stays.
//       y = Identity(x); z = Relu(y)   ⇒   z = Relu(x)
//  3. deduplicate: constants with equal dtype, shape, layout and bytes become one value.
//  4. dead code: nodes whose outputs nobody reads, then unused values.
#include <map>

#include "ir/eval.h"
#include "ir/op.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

constexpr int64_t kFoldLimit = int64_t{1} << 24;

bool fold(Graph& g) {
  bool changed = false;
  std::vector<Node*> done;
  for (auto& np : g.nodes) {
    Node& n = *np;
    if (!n.epilogue.empty()) continue;
    bool all_const = true;
    if (n.folded()) {  // outputs known already (e.g. Shape of a static input)
      done.push_back(&n);
      continue;
    }
    std::vector<const Tensor*> in;
    int64_t elems = 0;
    for (Value* v : n.inputs) {
      if (v && !v->constant) { all_const = false; break; }
      in.push_back(v ? v->constant.get() : nullptr);
    }
    for (Value* v : n.outputs)
      if (v) elems += numel(v->physical_shape());
    if (!all_const || elems > kFoldLimit) continue;
    std::vector<Tensor> out = eval_node(n, in);
    for (size_t j = 0; j < n.outputs.size(); ++j)
      if (Value* v = n.outputs[j]) v->constant = std::make_shared<const Tensor>(std::move(out[j]));
    done.push_back(&n);
  }
  for (Node* n : done) {
    erase_node(g, n);
    changed = true;
  }
  return changed;
}

bool is_identity(const Node& n) {
  if (n.op_type == "Identity") return n.epilogue.empty();
  if (n.op_type != "Dropout" || !n.epilogue.empty()) return false;
  // Dropout is an identity on output 0 (infer rejects random training-mode dropout);
  // its mask output, when used, keeps the node.
  return !n.out(1);
}

bool remove_identities(Graph& g) {
  bool changed = false;
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
  bool changed = false;
  for (auto& vp : g.values) {
    Value* v = vp.get();
    if (!v->constant || v->producer || v->is_output || v->is_input) continue;
    auto key = std::make_tuple(static_cast<int>(v->dtype), v->shape, v->layout.str(v->shape.size()), v->constant->bytes);
    auto [it, fresh] = seen.emplace(std::move(key), v);
    if (fresh || use_count(g, v) == 0) continue;
    replace_all_uses(g, v, it->second);
    changed = true;
  }
  return changed;
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
