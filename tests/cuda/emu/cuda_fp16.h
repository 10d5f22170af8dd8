/* tests/cuda/emu/cuda_fp16.h — a CPU stand-in for CUDA's half-precision type as the generated
 * NAME.cu uses it (--gpu-precision fp16: __half shared-memory tiles, __float2half, read back by
 * tests/cuda/emu/mma.h): the compiler's IEEE binary16 (_Float16), so conversions round to
 * nearest even, with half's subnormals, overflow to infinity and NaN, as the GPU's cvt.rn.f16.f32. */
#ifndef ONNXC_CUDA_EMU_FP16_H
#define ONNXC_CUDA_EMU_FP16_H
typedef _Float16 __half;
inline __half __float2half(float v) { return static_cast<__half>(v); }
inline float __half2float(__half v) { return static_cast<float>(v); }
#endif
