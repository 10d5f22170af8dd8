// codegen/cuda/precision.h — compile-model --gpu-precision: the arithmetic of the CUDA
// backend's convolutions (the generated implicit GEMM, cuDNN) and of cuBLAS's products.
// Tensors stay float32 and sums float32 whichever it is.
#pragma once

namespace onnxc {

enum class GpuPrecision {
  Fp32,  // float32 multiply-adds (the default)
  Tf32,  // tensor cores, operands rounded to TF32's 10-bit mantissa
  Fp16,  // tensor cores, operands rounded to half precision (whose range ends at 65504)
};

// Its name on the command line and in the generated code's comments: "fp32", "tf32", "fp16".
inline const char* precision_name(GpuPrecision p) {
  return p == GpuPrecision::Fp32 ? "fp32" : p == GpuPrecision::Tf32 ? "tf32" : "fp16";
}

}  // namespace onnxc
