// codegen/cuda/module.h — the CUDA module writer: NAME.cu (one __global__ kernel per node or
// fused group, the host code that uploads the weights, owns a device arena and runs the
// kernels), NAME.h (the same C API as the C backend's NAME.h, NAME_info included, so the
// generic driver onnxc_main.c runs it), NAME.weights (the C backend's format) and the runtime
// files. See module.cc's opening comment.
#pragma once
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "ir/graph.h"

namespace onnxc {

// One node's kernel: its body, the kernel's description, and its launch configuration.
struct CudaKernelCode {
  std::string body, kernel, grid, block;
};
// The kernel of node n (codegen/cuda/backend.cc); throws Unsupported, naming the node and op,
// for what the CUDA backend does not run.
CudaKernelCode emit_cuda_kernel(const Node& n, const NodeParams& p, const Target& t);
// The op types the CUDA backend has kernels for, sorted (compile-model --device cuda --list-ops).
std::vector<std::string> cuda_supported_ops();
// Why the CUDA backend cannot run n ("" when it can).
std::string cuda_unsupported_reason(const Node& n);

CodegenResult emit_cuda_module(const Graph& g, const CodegenOptions& opt, const Backend& b);

}  // namespace onnxc
