// codegen/cuda/kernels/registry.cc — the CUDA kernel table (kernels.h): one line per family.
#include "codegen/cuda/kernels/kernels.h"

namespace onnxc {

const CuKernel* find_cuda_kernel(const std::string& op_type) {
  static const CuKernelTable table = [] {
    CuKernelTable t;
    register_cuda_elementwise(t);
    register_cuda_conv(t);
    register_cuda_gemm(t);
    register_cuda_pool(t);
    register_cuda_movement(t);
    register_cuda_norm(t);
    return t;
  }();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace onnxc
