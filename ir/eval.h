// ir/eval.h — running ops: shape inference over the graph, constant propagation, and the
// whole-graph reference interpreter (used by --verify and by pass tests).
#pragma once
#include <functional>
#include <map>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

// Creates each node's Op from the registry and parses its attributes.
// Unknown op types are CompileError(Unsupported) naming the node.
void prepare_ops(Graph& g);

// Infers dtypes and shapes in topological order. A node whose inputs are all constants is
// evaluated at compile time (this resolves shape subgraphs such as
// Shape → Gather → Unsqueeze → Concat → Reshape) unless its output exceeds fold_limit elements,
// the constants would pass Graph::max_memory (MemoryBudget) or its eval would do more than
// kMaxFoldWork operations (ir/cost.h).
void infer_shapes(Graph& g, int64_t fold_limit = int64_t{1} << 24);

// Evaluates one node with its reference implementation; outputs are allocated here.
std::vector<Tensor> eval_node(const Node& n, const std::vector<const Tensor*>& in);

// Evaluates the whole graph on the given runtime inputs; returns every graph output by value.
// `seen`, when given, is called with each graph input and each node output as it is computed
// (compile-model --quantize's calibration reads their ranges).
std::map<const Value*, Tensor> run_reference(const Graph& g, const std::map<const Value*, Tensor>& inputs,
                                             const std::function<void(const Value*, const Tensor&)>& seen = {});

// Structural checks: topological order, each used value defined once, shapes known, fused
// groups well formed (internal values read only inside their group, see ir/graph.h).
// A failure is an internal error (a pass or the importer broke the graph).
void verify_graph(const Graph& g);

// Readable text dump of the graph (compile-model --dump-ir).
std::string dump_ir(const Graph& g);

}  // namespace onnxc
