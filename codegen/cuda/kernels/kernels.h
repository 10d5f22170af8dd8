// codegen/cuda/kernels/kernels.h — the CUDA backend's kernel table: how the CUDA backend runs
// each op type, plain NCHW only. One file per kernel family (elementwise.cc, conv.cc, gemm.cc,
// pool.cc, movement.cc, norm.cc) defines register_cuda_<family>(CuKernelTable&); registry.cc
// calls them all.
//
// A kernel writes the body of one `__global__` function through CuEmit (the C backend's line
// writer, codegen/c/emit.h: the same parameter names x<i>, y<j>, e<k> and exact float
// literals) and says how it is launched (grid and block). Shapes are compile-time constants.
// Most kernels run one thread per output element (CuEmit::flat: `i` is the element's index in
// the output, row-major) and mirror the index arithmetic of the C kernels; Gemm/MatMul and Conv (implicit GEMM) run
// 16 x 16 shared-memory tiles. Every anchor of a fused group applies the group's epilogue
// (cu_epilogue) to its element before storing it, so a group is one kernel.
//
// An entry says:
//   emit  the body and launch configuration. Required.
//   ok    further conditions on the node (nullptr: none); the backend's supports() also
//         requires float32 for every non-static input and every output.
//   expr  for index-aligned elementwise ops: the statements computing one float32 element
//         (fused steps and elementwise groups).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "codegen/c/emit.h"
#include "codegen/cuda/precision.h"

namespace onnxc {

class CuEmit : public CEmit {
 public:
  using CEmit::CEmit;
  std::string grid = "1", block = "1";  // launch configuration (C++ expressions of dim3)
  // --gpu-precision (codegen/cuda/precision.h). Read by Conv's implicit GEMM, which runs on
  // tensor cores (nvcuda::wmma) unless fp32.
  GpuPrecision precision = GpuPrecision::Fp32;
  // Set by a kernel whose body reports values past its precision's range through the extra
  // parameter `unsigned int* __restrict__ ovf` (atomicOr(ovf, 1u)); the module passes the
  // instance's word for the node and NAME_run reports it (ONNXC_ERR_RANGE).
  bool range_check = false;
  // One thread per element of a range of `total` (> 0) elements: declares `const int64_t i`,
  // threads past the end return. Blocks of 256 threads.
  void flat(int64_t total);
};

struct CuKernel {
  void (*emit)(CuEmit& e) = nullptr;
  bool (*ok)(const Node& n) = nullptr;
  // Statements declaring `const float <dst>` = the element of n, given expressions of its
  // inputs' elements ("" for absent or static inputs); each may be evaluated more than once.
  std::string (*expr)(const Node& n, const std::vector<std::string>& args, const std::string& dst) = nullptr;
  // Only input 0 is read as data (copies: Reshape, Flatten...); the others are not checked to
  // be float32.
  bool data_input0_only = false;
};
using CuKernelTable = std::map<std::string, CuKernel>;

// The kernel of an op type; nullptr when the CUDA backend has none.
const CuKernel* find_cuda_kernel(const std::string& op_type);

// The coordinate of a row-major index `flat` along a dimension of size `dim` whose stride is
// `stride`: "flat % dim" or "(flat / stride) % dim".
std::string cu_coord(const std::string& flat, int64_t stride, int64_t dim);
// The offset into a row-major tensor of shape `in`, broadcast (numpy rules, right-aligned) to
// `out`, of the element at row-major index `flat` of `out`: "flat" itself when the shapes are
// equal, "0" for one element, otherwise a sum of (flat / stride % dim) * in_stride terms.
std::string cu_bcast_offset(const Shape& in, const Shape& out, const std::string& flat);
// The statements applying node.epilogue to one element of the group's output: t0 = `src`
// (the anchor's value), then each step, reading extra input k at the element of row-major
// output index `flat` (broadcast); the result is stored to the lvalue `dst`. Without an
// epilogue, just `dst = src;`. Throws Unsupported for a step the CUDA backend has no
// element for. Sets CEmit::epilogue_done: the backend refuses a fused group whose kernel
// did not apply its epilogue.
std::string cu_epilogue(CuEmit& e, const std::string& src, const std::string& flat, const std::string& dst);
// Whether every step of n's epilogue has a CUDA element.
bool cu_epilogue_ok(const Node& n);

void register_cuda_elementwise(CuKernelTable&);  // unary, binary, variadic, Clip, Identity, Cast f32
void register_cuda_conv(CuKernelTable&);         // Conv
void register_cuda_gemm(CuKernelTable&);         // Gemm, MatMul
void register_cuda_attention(CuKernelTable&);    // Attention, LayerNormalization, RMSNormalization
void register_cuda_pool(CuKernelTable&);         // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
void register_cuda_movement(CuKernelTable&);     // Flatten, Reshape, Squeeze, Unsqueeze, Concat, Transpose, Pad
void register_cuda_norm(CuKernelTable&);         // BatchNormalization, LRN, Softmax, LogSoftmax

}  // namespace onnxc
