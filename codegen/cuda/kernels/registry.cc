// codegen/cuda/kernels/registry.cc — the CUDA kernel table (kernels.h): one line per family.
#include "codegen/cuda/kernels/kernels.h"
#include "codegen/cuda/module.h"

namespace onnxc {

namespace {

const CuKernelTable& table() {
  static const CuKernelTable t = [] {
    CuKernelTable t;
    register_cuda_elementwise(t);
    register_cuda_conv(t);
    register_cuda_gemm(t);
    register_cuda_pool(t);
    register_cuda_movement(t);
    register_cuda_norm(t);
    register_cuda_attention(t);
    return t;
  }();
  return t;
}

}  // namespace

const CuKernel* find_cuda_kernel(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> cuda_supported_ops() {
  std::vector<std::string> r;
  for (auto& [op, k] : table()) r.push_back(op);
  return r;
}

}  // namespace onnxc
