// codegen/cuda/module.h — the CUDA module writer: NAME.cu (one __global__ kernel per node or
// fused group, the host code that uploads the weights, owns a device arena and runs the
// kernels), NAME.h (the same C API as the C backend's NAME.h, NAME_info included, so the
// generic driver onnxc_main.c runs it), NAME.weights (the C backend's format) and the runtime
// files. See module.cc's opening comment.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/cuda/precision.h"
#include "ir/graph.h"

namespace onnxc {

// The CUDA backend's own options.
struct CudaOptions {
  // compile-model --gpu-libs: run Conv with cuDNN, Gemm/MatMul with cuBLAS (libs.cc) instead of
  // the generated kernels.
  bool cudnn = false, cublas = false;
  // compile-model --gpu-precision (codegen/cuda/precision.h).
  GpuPrecision precision = GpuPrecision::Fp32;
};

// The CUDA backend with options o (codegen/cuda/backend.cc).
std::unique_ptr<Backend> make_cuda_backend(const Target& t, const CudaOptions& o);

// One node's kernel: its body, the kernel's description, and its launch configuration.
struct CudaKernelCode {
  std::string body, kernel, grid, block;
  // The body sets *ovf (an extra `unsigned int* ovf` parameter: the instance's word for this
  // node) when an input is past the precision's range (--gpu-precision fp16's tensor cores).
  bool range_check = false;
};
// The kernel of node n (codegen/cuda/backend.cc) at --gpu-precision `precision`; throws
// Unsupported, naming the node and op, for what the CUDA backend does not run.
CudaKernelCode emit_cuda_kernel(const Node& n, const NodeParams& p, const Target& t,
                                GpuPrecision precision = GpuPrecision::Fp32);
// The op types the CUDA backend has kernels for, sorted (compile-model --device cuda --list-ops).
std::vector<std::string> cuda_supported_ops();
// Why the CUDA backend cannot run n ("" when it can).
std::string cuda_unsupported_reason(const Node& n);

// --gpu-libs (libs.cc): which library runs node n, "cudnn" (Conv), "cublas" (Gemm, MatMul) or
// "" (the generated kernel; why_not says why when a requested library does not take it).
struct CudaLibChoice {
  std::string lib, why_not;
};
CudaLibChoice cuda_lib_choice(const Node& n, const CudaOptions& o);
// The host code of a node run by a library: `setup` (cuDNN: NAME_create's statements making
// descriptor set ctx->conv[conv_index]), `run` (the call in NAME_run, on device pointers `in`
// and `out`; `node` is the node's name as a C string), and `bias`: the expression of the value
// the elementwise kernel following the call adds to element i of y0 (reading input 2 as x2),
// "" for none.
struct CudaLibCode {
  std::string setup, run, bias, comment;
};
CudaLibCode cuda_lib_code(const Node& n, const std::string& lib, const std::string& N, size_t conv_index,
                          const std::vector<std::string>& in, const std::string& out, const std::string& node);
// The module's error helpers for the libraries used, and cuDNN's per-node setup function.
std::string cuda_libs_support(const std::string& N, bool cudnn, bool cublas);
std::string cuda_conv_setup_function(const std::string& N, GpuPrecision precision);
// cuBLAS's math mode for --gpu-precision `precision`.
const char* cuda_cublas_math(GpuPrecision precision);
// The kernel applying a library-run node's bias (`bias`, see CudaLibCode) and fused epilogue
// in place over its output y0, one thread per element.
CudaKernelCode emit_cuda_lib_epilogue(const Node& n, const NodeParams& p, const Target& t, const std::string& bias);

CodegenResult emit_cuda_module(const Graph& g, const CodegenOptions& opt, const CudaOptions& copt, const Backend& b);

}  // namespace onnxc
