// passes/pack_weights.cc — constant inputs repacked at compile time into the layout their
// kernel reads fastest (ONNX Runtime's PrePack, TVM's dense_pack alter-layout): for every
// node and every constant input, the backend's answer to weight_layout (codegen/backend.h)
// is the layout the constant is stored in from then on. Today that is the right-hand matrix
// of a register-tiled Gemm/MatMul, stored in panels of nr columns (Layout::panel):
//   Y = MatMul(X, W[768, 3072])   ⇒   Y = MatMul(X, W'[96, 768, 32] KN32n)
// and the filter of a 3×3 conv that runs as Winograd F(2×2, 3×3), taken from the layout
// pass's blocked filter into the Winograd domain (Layout::winograd):
//   Conv(X NCHW16c, W[64, 64, 3, 3] OIHW16i16o)   ⇒   Conv(X, W'[16, 4, 64, 16] WF23OI16o)
// The node keeps its attributes (a transB Gemm reads its [N, K] weights as Layout::PanelT);
// the reference evaluation reads the logical matrix back (ir/eval.cc), so --verify and the
// pass tests compare the packed graph with the original.
// Runs after the layout pass (which repacks conv filters itself) and before fusion: the
// backend is asked about the node itself, not about a fused group. A constant read by
// several nodes is repacked once per layout asked (memoised) and the plain one is dropped
// when nothing reads it any more. Repacked constants count against --max-memory before they
// are made. Running the pass again changes nothing.
#include <map>

#include "codegen/backend.h"
#include "passes/pass.h"

namespace onnxc {

bool pack_weights(Graph& g, const PassOptions& o) {
  if (!o.backend) return false;
  MemoryBudget budget(g);
  std::map<std::pair<Value*, std::string>, Value*> memo;
  bool changed = false;
  for (auto& np : g.nodes) {
    Node& n = *np;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Value* v = n.inputs[i];
      if (!v || !v->constant) continue;
      const Layout l = o.backend->weight_layout(n, i);
      if (l.is_plain() || l == v->layout) continue;
      const std::string tag = l.str(v->shape.size());
      auto key = std::make_pair(v, tag);
      auto it = memo.find(key);
      if (it == memo.end()) {
        const Shape stored = physical_shape(v->shape, l);
        budget.charge(nbytes_of(stored, v->dtype), "repacking constant '" + v->name + "' " + v->type_str() + " as " +
                                                       dtype_name(v->dtype) + shape_str(stored) + " for " + n.where());
        it = memo.emplace(key, add_constant(g, v->name + "_" + tag, to_plain(*v->constant, v->shape, v->layout), l)).first;
      }
      n.inputs[i] = it->second;
      changed = true;
    }
  }
  if (changed) g.drop_unused_values();
  return changed;
}

}  // namespace onnxc
