// frontend/onnx_import.h — ONNX ModelProto → ir::Graph.
//
// Reads a model file (protobuf, with tensors possibly stored as external data next to
// it), converts initializers and attributes, fixes symbolic input dimensions from
// --input-shape overrides, sorts nodes topologically, creates each node's Op and runs
// shape inference with constant propagation (ir/eval.h). Only the default ONNX domain,
// opsets 7–18, is accepted. Errors are CompileErrors naming the node where there is one.
// Limits: every tensor's size is checked for overflow and against ImportOptions::max_memory
// before anything is allocated; node order comes from an iterative topological sort (no
// recursion, any depth), which also reports cycles.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "ir/graph.h"

namespace onnxc {

struct ImportOptions {
  std::map<std::string, Shape> input_shapes;  // --input-shape NAME=d0,d1,...
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
