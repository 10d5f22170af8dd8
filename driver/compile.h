// driver/compile.h — one compile-model run: import the ONNX model, run the pass pipeline
// (passes/pipeline.cc), write the module with the C backend (codegen/c/) or, with --device
// cuda, the CUDA one (codegen/cuda/, plain NCHW), and build it (driver/build.h). --split cuts
// the model first (driver/split.h), --parallel tune compiles it with the fastest way of using
// its threads (driver/tune.h), --verify checks the passes and the generated code together
// against the reference evaluator (driver/verify.h). --dynamic (the batch at run time) compiles
// the model at batch 1, as --parallel batch does, and marks it Graph::dynamic_batch.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "codegen/backend.h"
#include "codegen/target.h"
#include "driver/options.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace onnxc::driver {

// Runs o: its exit code (Exit); a CompileError or InternalError for what the model or the
// compiler got wrong, which the caller reports. Settles o.name (the model file's stem by
// default, as a C identifier).
int compile(Options& o);

// The pass options compile-model's flags give.
PassOptions pass_options(const Options& o, const Backend& backend);

// The backend o asks for (--device), C or CUDA, with its own options from o (--omp-region and
// --task-form; --gpu-libs and --gpu-precision), planning for target t.
std::unique_ptr<Backend> make_backend(const Options& o, const Target& t, Device device);
// Whether b is the CUDA backend (plain NCHW, built with nvcc).
bool is_cuda(const Backend& b);

// Runs the pass pipeline on g, writes the module `name` and builds it (unless --emit c).
// simplified: the whole-graph passes (fold-constants, recognize, simplify) have already run on g
// (batch_item_graph), so they are not run again unless --print-after names them.
int compile_graph(const Options& o, Graph& g, const std::string& name, const Backend& backend, const std::string& makefile = "Makefile",
                  bool simplified = false);

// --input-shape NAME=DIMS: DIMS ("1,3,224,224") as a shape; `spec` is the whole flag, for the message.
Shape parse_dims(const std::string& spec, const std::string& text);
// --max-memory SIZE: bytes, or a number with a K, M, G or T suffix (powers of 1024, an
// optional trailing B or iB: 512M, 8G, 8GiB); 0 = no cap.
uint64_t parse_size(const std::string& text);

}  // namespace onnxc::driver
