// codegen/backend.h — what a code-generation backend answers and does. The passes ask it
// questions (which layouts a node can run in, which outputs may overwrite an input) and the
// driver has it write the module. Backends: codegen/c/ (C11 + OpenMP, the default), and
// codegen/cuda/ (CUDA for NVIDIA GPUs: plain NCHW float32, compile-model --device cuda).
//
// A backend owns its Target (codegen/target.h) and hands it to every kernel. How a backend
// runs an op lives with the backend, one kernel family per file (codegen/c/kernels/); what
// the op means lives in ir/ops/ and is shared by all backends.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "ir/graph.h"

namespace onnxc {

struct CodegenOptions {
  std::string name;    // C identifier used as prefix and file stem
  std::string outdir;
  std::string source;  // model path, for comments
  bool profile = false;  // time every emitted function (compile-model --profile)
  // The module's makefile; compile-model --split gives each part its own (NAME_head.mk...) and
  // writes a Makefile that builds them all.
  std::string makefile = "Makefile";
  // What only one backend reads is that backend's own: COptions (codegen/c/module.h),
  // CudaOptions (codegen/cuda/module.h), given when it is made.
};

struct CodegenResult {
  std::vector<std::string> files;  // written, relative to outdir
  uint64_t weights_bytes = 0;
  uint64_t arena_bytes = 0;
  size_t functions = 0;           // one per emitted node
  size_t distinct_functions = 0;  // after nodes with identical functions share one
  std::vector<std::string> libraries;  // libraries the module links ("cudnn", "cublas": -l<name>)
};

// The parameter names of the function computing one node: per input, output and extra
// input of a fused group (Node::extra_inputs), "" where absent or static.
struct NodeParams {
  std::vector<std::string> inputs, outputs, extras;
};

// The code of one node: its function body, and which kernel the backend chose for it
// ("Conv plane", "MaxPool nchwc"), for comments and the per-op profile.
struct EmittedNode {
  std::string body;
  std::string kernel;
};

class Backend {
 public:
  explicit Backend(Target t) : target_(std::move(t)) {}
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  const Target& target() const { return target_; }

  // Whether the backend can run node n with its activations stored in layout l: plain, or
  // NCHWc(b) for the outputs and the activation inputs the op blocks (the layout pass asks).
  virtual bool supports(const Node& n, const Layout& l) const = 0;
  // Whether the backend has a kernel for op_type at all (the recognize pass puts an op back
  // in place of its primitives only where the backend runs it).
  virtual bool has_kernel(const std::string& op_type) const = 0;
  // Whether n may write its output `out` over the buffer of its input `in` (ONNX Runtime's
  // MayInplace): the kernel reads each element of `in` only where it writes that element of
  // `out`. Memory planning asks, and adds its own condition (`in` dies at n).
  virtual bool may_inplace(const Node& n, const Value& out, const Value& in) const = 0;
  // For a node that only copies each of its inputs into one contiguous run of its output
  // (Concat of one image along channels; Reshape and the like), the byte offset of each
  // input's run, -1 for an input copied otherwise, -2 for an input that is not data (Reshape's
  // shape); empty for other nodes and backends that copy every input.
  // Memory planning may then store an input there from the start, and the copy goes.
  virtual std::vector<int64_t> stored_in_output(const Node&) const { return {}; }
  // How n's kernel wants its constant input `input` stored: a packed layout the pack-weights
  // pass repacks the constant into at compile time (Layout::panel for the right-hand matrix
  // of a register-tiled Gemm/MatMul, Layout::winograd for a Winograd conv's filter), or plain
  // for "as it is". Asked before fusion, of the node itself.
  virtual Layout weight_layout(const Node& n, size_t input) const = 0;
  // Whether n's kernel applies `step` to its output while it is in registers, for anchors the
  // fusion pass groups only then (an integer conv and the residual onnxc.qdq_add after it:
  // as a loop after the kernel it would only move the add's pass, slower than its own kernel).
  // Asked after pack-weights, of the node before fusion.
  virtual bool takes_epilogue(const Node& /*n*/, const Node& /*step*/) const { return false; }
  // The function that computes n (a plain node or a fused group).
  virtual EmittedNode emit_node(const Node& n, const NodeParams& p) const = 0;
  // How many pieces n's work splits into at `threads` threads: the iterations of its kernel's
  // widest parallel loop nest (the schedule's cost model, passes/schedule.h); 1 for a kernel
  // that runs on one thread, 0 where the backend cannot say.
  virtual int64_t parallel_items(const Node&, int /*threads*/) const { return 0; }
  // The kernel the backend runs n with and, where the kernel has one, its plan (tiles, blocks,
  // tasks), in one line: compile-model --dump-ir prints it per node. "" where it cannot say.
  virtual std::string describe_node(const Node&) const { return ""; }
  // Writes the module of the whole graph into o.outdir.
  virtual CodegenResult write_module(const Graph& g, const CodegenOptions& o) const = 0;

 private:
  Target target_;
};

// The C backend (codegen/c/backend.cc), with its default options (COptions in
// codegen/c/module.h gives others).
std::unique_ptr<Backend> make_c_backend(const Target& t);
// The CUDA backend (codegen/cuda/backend.cc), with its default options (CudaOptions in
// codegen/cuda/module.h gives others).
std::unique_ptr<Backend> make_cuda_backend(const Target& t);

}  // namespace onnxc
