/* tests/cuda/emu/mma.h — a CPU stand-in for the part of CUDA's warp matrix functions
 * (nvcuda::wmma) that the generated NAME.cu uses with --gpu-precision tf32 or fp16 (the
 * tensor-core implicit-GEMM convolution; see cuda_runtime.h here for how the .cu is built for
 * the CPU).
 *
 * On a GPU a fragment is spread over the 32 lanes of a warp and the *_sync functions are
 * collective. Here the threads of a block run as fibers that switch only at __syncthreads, so
 * each emulated thread holds the whole 16 x 16 fragment and does the whole warp's work itself:
 * the lanes of a warp compute the same fragments and store the same values (the generated code
 * touches fragments only through these functions). mma_sync multiplies the operands as stored
 * (the kernel has already rounded them to TF32 or half precision) and accumulates in float32,
 * one fmaf per product in k order; the tensor cores' order of additions differs, so results
 * agree with a GPU's to float32 rounding, not bit for bit. __float_to_tf32 rounds to nearest
 * (ties away from zero, as cvt.rna.tf32.f32) to 10 mantissa bits; infinities and NaN pass. */
#ifndef ONNXC_CUDA_EMU_MMA_H
#define ONNXC_CUDA_EMU_MMA_H
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda_fp16.h"

namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}  // namespace precision
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K>
struct fragment_shape {
  static constexpr int rows = M, cols = N;
};
template <int M, int N, int K>
struct fragment_shape<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct fragment_shape<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static constexpr int rows = fragment_shape<Use, M, N, K>::rows, cols = fragment_shape<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  float x[rows * cols];
};

inline float __float_to_tf32(float v) {
  if (!std::isfinite(v)) return v;
  uint32_t b;
  std::memcpy(&b, &v, 4);
  b = (b + 0x1000u) & 0xffffe000u; /* add half of the 13 dropped bits' unit: ties away from zero */
  std::memcpy(&v, &b, 4);
  return v;
}

inline float onnxc_emu_wmma_value(float v) { return v; }
inline float onnxc_emu_wmma_value(__half v) { return __half2float(v); }

template <class Use, int M, int N, int K, class T, class Layout, class S>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const S* p, unsigned ldm) {
  using F = fragment<Use, M, N, K, T, Layout>;
  const bool col = std::is_same<Layout, col_major>::value;
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c) f.x[r * F::cols + c] = onnxc_emu_wmma_value(col ? p[c * ldm + r] : p[r * ldm + c]);
}

template <int M, int N, int K, class T>
void fill_fragment(fragment<accumulator, M, N, K, T>& f, float v) {
  for (float& e : f.x) e = v;
}

template <int M, int N, int K, class T, class TA, class LA, class LB>
void mma_sync(fragment<accumulator, M, N, K, T>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
              const fragment<matrix_b, M, N, K, TA, LB>& b, const fragment<accumulator, M, N, K, T>& c) {
  float out[M * N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = c.x[i * N + j];
      for (int k = 0; k < K; ++k) s = std::fmaf(a.x[i * K + k], b.x[k * N + j], s);
      out[i * N + j] = s;
    }
  std::memcpy(d.x, out, sizeof out);
}

template <int M, int N, int K, class T>
void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm, layout_t layout) {
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) (layout == mem_row_major ? p[r * ldm + c] : p[c * ldm + r]) = f.x[r * N + c];
}
}  // namespace wmma
}  // namespace nvcuda
#endif
