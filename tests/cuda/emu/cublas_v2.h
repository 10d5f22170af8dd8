/* tests/cuda/emu/cublas_v2.h — a CPU stand-in for exactly the cuBLAS calls onnxc's generated
 * NAME.cu makes with --gpu-libs cublas (see cuda_runtime.h here). cublasSgemm and
 * cublasSgemmStridedBatched are naive references written from cuBLAS's definition (column-major,
 * C = alpha op(A) op(B) + beta C, op per CUBLAS_OP_N/T, leading dimensions checked; double
 * accumulators), independent of onnxc's kernels and of its row-major reasoning.
 */
#ifndef ONNXC_CUBLAS_EMU_H
#define ONNXC_CUBLAS_EMU_H
#include "cuda_runtime.h"

typedef enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_TF32_TENSOR_OP_MATH = 3 } cublasMath_t;
struct cublasContext { cudaStream_t stream; };
typedef cublasContext* cublasHandle_t;

inline const char* cublasGetStatusName(cublasStatus_t s) { return s ? "CUBLAS_STATUS_INVALID_VALUE" : "CUBLAS_STATUS_SUCCESS"; }
inline const char* cublasGetStatusString(cublasStatus_t s) { return s ? "an invalid value was used as an argument" : "success"; }
inline cublasStatus_t cublasCreate(cublasHandle_t* h) { *h = new cublasContext(); return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasDestroy(cublasHandle_t h) { delete h; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) { h->stream = s; return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; }

/* Batch `count` of column-major products, operand z at A + z * sa, B + z * sb, C + z * sc. */
inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                                const float* alpha, const float* A, int lda, long long sa, const float* B, int ldb,
                                                long long sb, const float* beta, float* C, int ldc, long long sc, int count) {
  if (m < 0 || n < 0 || k < 0 || count < 0 || ldc < m || lda < (ta == CUBLAS_OP_N ? m : k) || ldb < (tb == CUBLAS_OP_N ? k : n) || lda < 1 ||
      ldb < 1 || ldc < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  for (int z = 0; z < count; ++z) {
    const float* a = A + z * sa;
    const float* b = B + z * sb;
    float* c = C + z * sc;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        for (int p = 0; p < k; ++p) {
          const float av = ta == CUBLAS_OP_N ? a[i + (long)p * lda] : a[p + (long)i * lda];
          const float bv = tb == CUBLAS_OP_N ? b[p + (long)j * ldb] : b[j + (long)p * ldb];
          acc += (double)av * bv;
        }
        float* cv = c + i + (long)j * ldc;
        *cv = (float)(*alpha * acc + (*beta != 0 ? (double)*beta * *cv : 0.0));
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* alpha,
                                  const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
#endif
