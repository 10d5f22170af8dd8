// driver/split.h — compile-model --split: the model cut in two (passes/partition.h), each
// part compiled as a model of its own.
#pragma once
#include "codegen/backend.h"
#include "driver/options.h"
#include "driver/verify.h"
#include "ir/graph.h"

namespace onnxc::driver {

// --split: constant folding and simplification on the whole graph, the cut (passes/
// partition.h), NAME.split.json, then the head and the tail compiled as models of their own.
// With --device cuda the head is CUDA, and the tail is compiled twice: C for the CPU workers
// (NAME_tail) and CUDA for the GPU (NAME_tail_gpu); without, both parts are C (the CPU-only mode).
// With --dynamic, g is the graph of one batch item and both parts take the run-time batch.
// vd: --verify's data, or null; whole: the graph vd was prepared on (g, or with --dynamic the
// whole batch's), whose outputs the parts' run is checked as.
// backend: the head's (C or CUDA, as --device says).
int compile_split(const Options& o, Graph& g, const Backend& backend, const VerifyData* vd, const Graph* whole = nullptr);

}  // namespace onnxc::driver
