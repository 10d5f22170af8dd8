// passes/pipeline.cc — the pass pipeline, top to bottom. Each entry is a name (for
// --disable-pass and --print-after) and a pass function from its own file. After each pass
// the verifier checks the graph's invariants (when PassOptions::verify_each is set: in
// compile-model's debug builds, with --verify-passes, and in every pass test).
// Before the first pass and after each one, every tensor a node computes must fit under the
// --max-memory cap (Graph::max_memory): a pass or a kernel that works in proportion to a
// tensor's size (a schedule that emits a conv's C to estimate it, a layout that pads it to
// whole channel blocks) never sees one past the cap. A hostile Conv with pads of 2^31 - 1
// otherwise had the schedule pass emit C for a 10^9-row tensor before the memory plan, the
// last pass, would have refused it.
#include "ir/eval.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

struct Entry {
  const char* name;
  bool (*run)(Graph&, const PassOptions&);
};

const std::vector<Entry>& pipeline() {
  static const std::vector<Entry> p = {
      {"integer-ops", integer_ops},  // QLinearConv from DQ → Conv → Q (before folding turns DQ(W) into floats)
      {"fold-constants", fold_constants},
      {"recognize", recognize_ops},  // LayerNormalization, RMSNormalization, Gelu from their chains
      {"simplify", simplify},
      {"layout", layout_nchwc},
      {"pack-weights", pack_weights},
      {"fuse", fuse_ops},
      {"schedule", schedule_regions},  // fork-join regions: which nodes run side by side
      {"memory-plan", plan_memory},  // last: offsets depend on the final node order
  };
  return p;
}

// Every tensor a node computes (constants are charged when they are made) against the cap.
void check_tensor_sizes(const Graph& g) {
  if (!g.max_memory) return;
  for (auto& n : g.nodes)
    for (const Value* v : n->outputs)
      if (v && !v->constant && v->shape_known)
        check_memory_cap(g, v->nbytes(), n->where() + ": " + (v->is_output ? "graph output '" : "intermediate tensor '") +
                                              v->name + "' " + v->type_str());
}

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> r;
    for (auto& e : pipeline()) r.push_back(e.name);
    return r;
  }();
  return names;
}

bool rewrites_ops_only(const std::string& p) {
  return p == "integer-ops" || p == "fold-constants" || p == "recognize" || p == "simplify";
}

std::vector<std::string> run_pipeline(Graph& g, const PassOptions& o) {
  std::vector<std::string> changed;
  check_tensor_sizes(g);
  for (auto& e : pipeline()) {
    if (o.disabled.count(e.name)) continue;
    bool c = e.run(g, o);
    if (c) changed.push_back(e.name);
    check_tensor_sizes(g);
    if (o.verify_each) {
      try {
        verify_graph(g);
      } catch (const InternalError& err) {
        throw InternalError(std::string("after pass ") + e.name + ": " + err.what());
      }
    }
    if (o.after_pass) o.after_pass(e.name, c, g);
  }
  return changed;
}

}  // namespace onnxc
