// codegen/c/module.h — the C backend's module writer: the generated C module of a graph:
//   NAME.h        C API on instances: NAME_create / NAME_create_from_memory / NAME_create_sharing /
//                 NAME_run / NAME_run_v / NAME_destroy / NAME_status_string / NAME_last_error,
//                 input/output names, dtypes, shapes and sizes as macros, NAME_info
//   NAME.c        the runtime #included (static, private to the model), one static function per
//                 emitted node, then the entry points; only NAME_* symbols are external
//   NAME.weights  every constant the code reads, 64-byte aligned, behind a checksummed header
// plus the public types (onnxc_types.h), the runtime (onnxc_runtime.c/.h), the generic main
// (onnxc_main.c, model-independent: it runs the model NAME.c built with -DONNXC_MAIN_MODEL
// points it to), and a Makefile. With CodegenOptions::profile every call of NAME_run is timed
// into the instance (NAME_profile, NAME_info.ops). Node function bodies come from the backend
// (Backend::emit_node); intermediate tensors live at the arena offsets of the memory plan
// (passes/memory_plan.cc).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/module_writer.h"
#include "ir/cost.h"
#include "ir/graph.h"

namespace onnxc {

// The C backend's own options.
struct COptions {
  // compile-model --omp-region: true (inference) runs NAME_run's node calls in one OpenMP
  // parallel region, the kernels' loops shared among its threads (codegen/c/region.h); false
  // (op) gives every parallel loop nest its own fork/join.
  bool one_region = true;
  // compile-model --task-form: how a fork-join region (Graph::task_regions) runs in the one
  // region: RegionForm::OmpTasks or Groups (ir/graph.h, codegen/c/region.h).
  RegionForm task_form = RegionForm::OmpTasks;
};

// The C backend with options o (codegen/c/backend.cc).
std::unique_ptr<Backend> make_c_backend(const Target& t, const COptions& o);

// Writes the module; `b` emits the node functions (the C backend's write_module calls this).
CodegenResult emit_c_module(const Graph& g, const CodegenOptions& opt, const COptions& copt, const Backend& b);

// Where a C compiler's messages put the first error inside the emitted module `c_path`:
// the node whose function holds that line, as "node 'NAME' (OPS) at FILE:LINE: MESSAGE"
// (OPS as the function's comment gives them, "Conv+Relu"), or "" when no error points into
// a node function of that file. compile-model reports such a file as an internal error.
std::string locate_c_error(const std::string& c_path, const std::string& compiler_output);

}  // namespace onnxc
