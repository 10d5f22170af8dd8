// frontend/onnx_import.h — ONNX ModelProto → ir::Graph.
//
// Reads a model file (protobuf, with tensors possibly stored as external data next to
// it), converts initializers and attributes, fixes symbolic input dimensions from
// --input-shape overrides (or at the maxima of --dynamic's run-time sizes), sorts nodes topologically, creates each node's Op and runs
// shape inference with constant propagation (ir/eval.h). Only the default ONNX domain,
// opsets 7–18, is accepted. Errors are CompileErrors naming the node where there is one.
// Limits: every tensor's size is checked for overflow and against ImportOptions::max_memory
// before anything is allocated; node order comes from an iterative topological sort (no
// recursion, any depth), which also reports cycles.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

// compile-model --dynamic: a symbolic dimension kept a run-time size from 1 to max, named by
// its symbol (SYMBOL=MAX) or by the input and axis that have it (INPUT:AXIS=MAX).
struct DynamicDim {
  std::string symbol;  // the model's dim_param; empty for INPUT:AXIS
  std::string input;
  int axis = -1;
  int64_t max = 0;
  std::string spec() const;  // as given: "batch=16", "input:0=16"
};

// Where a DynamicDim was found: graph input `input`'s dimension `axis`, which the imported
// graph has at the maximum.
struct DynamicUse {
  const DynamicDim* dim;
  std::string input;
  int axis;
};

struct ImportOptions {
  std::map<std::string, Shape> input_shapes;  // --input-shape NAME=d0,d1,...
  // --dynamic: each imported at its maximum (Graph inputs' shapes hold the maxima); where they
  // were found is reported in *dynamic_uses when not null. A DynamicDim found nowhere, or on a
  // dimension the model fixes, is an error naming the model's symbolic dimensions.
  std::vector<DynamicDim> dynamic;
  std::vector<DynamicUse>* dynamic_uses = nullptr;
  // --fix-dim: each symbolic dimension named so imported at the size in its `max` (as
  // ONNX Runtime's free-dimension overrides do); the same checks as --dynamic's.
  std::vector<DynamicDim> fixed;
  // --max-memory: becomes Graph::max_memory. The importer charges every initializer and
  // tensor attribute to it before allocating, and checks each graph input and output.
  uint64_t max_memory = kDefaultMaxMemory;
  // Every graph input's first dimension taken as 1, whatever the model (or input_shapes) says:
  // the model at batch 1, for compile-model --parallel batch (passes/batch_items.h).
  bool batch_one = false;
};

std::unique_ptr<Graph> import_onnx_file(const std::string& path, const ImportOptions& opt);
// Same, from bytes in memory; `model_dir` is where external data is looked up ("" = none allowed).
std::unique_ptr<Graph> import_onnx_bytes(const std::string& bytes, const std::string& model_dir,
                                         const std::string& display_name, const ImportOptions& opt);

}  // namespace onnxc
