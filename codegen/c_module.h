// codegen/c_module.h — writes the generated C module for a graph:
//   NAME.h        C API on instances: NAME_create / NAME_create_from_memory / NAME_create_sharing /
//                 NAME_run / NAME_run_v / NAME_destroy / NAME_status_string / NAME_last_error,
//                 input/output names, dtypes, shapes and sizes as macros, NAME_info
//   NAME.c        the runtime #included (static, private to the model), one static function per
//                 emitted node, then the entry points; only NAME_* symbols are external
//   NAME.weights  every constant the code reads, 64-byte aligned, behind a checksummed header
// plus the public types (onnxc_types.h), the runtime (onnxc_runtime.c/.h), the generic main
// (onnxc_main.c, model-independent: it runs the model NAME.c built with -DONNXC_MAIN_MODEL
// points it to), and a Makefile.
// The plain NCHW emitter gives every intermediate tensor its own arena slot (no reuse yet).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

struct CodegenOptions {
  std::string name;    // C identifier used as prefix and file stem
  std::string outdir;
  std::string source;  // model path, for comments
};

struct CodegenResult {
  std::vector<std::string> files;  // written, relative to outdir
  uint64_t weights_bytes = 0;
  uint64_t arena_bytes = 0;
  size_t functions = 0;
};

CodegenResult emit_c_module(const Graph& g, const CodegenOptions& opt);

// Runtime sources embedded in the compiler at build time (codegen/runtime_sources.cc).
extern const char* const kRuntimeTypes;
extern const char* const kRuntimeHeader;
extern const char* const kRuntimeSource;
extern const char* const kRuntimeMain;

// Sanitises any string into a C identifier fragment: [A-Za-z0-9_], not starting with a digit.
std::string c_identifier(const std::string& s);

}  // namespace onnxc
