/* tests/cuda/emu/cudnn.h — a CPU stand-in for exactly the cuDNN calls onnxc's generated NAME.cu
 * makes with --gpu-libs cudnn (see cuda_runtime.h here for how the .cu is built for the CPU).
 * cudnnConvolutionForward is a naive reference written from cuDNN's definition (NCHW, packed
 * strides, cross-correlation, groups, pads, strides, dilations, y = alpha * conv + beta * y,
 * double accumulators), independent of onnxc's kernels. Descriptors keep their arguments and
 * check them; the algorithm search reports IMPLICIT_GEMM with FMA math and a small workspace
 * (so the workspace path is exercised). Only what the generator uses.
 */
#ifndef ONNXC_CUDNN_EMU_H
#define ONNXC_CUDNN_EMU_H
#include <cstddef>
#include <cstring>
#include <vector>

#include "cuda_runtime.h"

typedef enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_BAD_PARAM = 2000 } cudnnStatus_t;
typedef enum { CUDNN_DATA_FLOAT = 0 } cudnnDataType_t;
typedef enum { CUDNN_TENSOR_NCHW = 0 } cudnnTensorFormat_t;
typedef enum { CUDNN_CONVOLUTION = 0, CUDNN_CROSS_CORRELATION = 1 } cudnnConvolutionMode_t;
typedef enum { CUDNN_DEFAULT_MATH = 0, CUDNN_TENSOR_OP_MATH = 1, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2, CUDNN_FMA_MATH = 3 } cudnnMathType_t;
typedef enum { CUDNN_NON_DETERMINISTIC = 0, CUDNN_DETERMINISTIC = 1 } cudnnDeterminism_t;
typedef enum { CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM = 0 } cudnnConvolutionFwdAlgo_t;

struct cudnnContext { cudaStream_t stream; };
struct cudnnTensorStruct { int nd; int dims[8]; };
struct cudnnFilterStruct { int nd; int dims[8]; };
struct cudnnConvolutionStruct { int ns; int pad[6], stride[6], dil[6]; int groups; cudnnConvolutionMode_t mode; };
typedef cudnnContext* cudnnHandle_t;
typedef cudnnTensorStruct* cudnnTensorDescriptor_t;
typedef cudnnFilterStruct* cudnnFilterDescriptor_t;
typedef cudnnConvolutionStruct* cudnnConvolutionDescriptor_t;
typedef struct {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  cudnnDeterminism_t determinism;
  cudnnMathType_t mathType;
  int reserved[3];
} cudnnConvolutionFwdAlgoPerf_t;

inline const char* cudnnGetErrorString(cudnnStatus_t s) { return s ? "CUDNN_STATUS_BAD_PARAM" : "CUDNN_STATUS_SUCCESS"; }
inline cudnnStatus_t cudnnCreate(cudnnHandle_t* h) { *h = new cudnnContext(); return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroy(cudnnHandle_t h) { delete h; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) { h->stream = s; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) { *d = new cudnnTensorStruct(); return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { delete d; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) { *d = new cudnnFilterStruct(); return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { delete d; return CUDNN_STATUS_SUCCESS; }
inline cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
  *d = new cudnnConvolutionStruct();
  (*d)->groups = 1;
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) { delete d; return CUDNN_STATUS_SUCCESS; }

/* Tensor and filter descriptors take the same checks: NCHW float32, 4-D or 5-D, positive dims. */
template <class D>
inline cudnnStatus_t onnxc_emu_set_dims(D d, cudnnTensorFormat_t f, cudnnDataType_t t, int nd, const int* dims) {
  if (f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT || nd < 4 || nd > 5) return CUDNN_STATUS_BAD_PARAM;
  d->nd = nd;
  for (int k = 0; k < nd; ++k) {
    if (dims[k] <= 0) return CUDNN_STATUS_BAD_PARAM;
    d->dims[k] = dims[k];
  }
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnSetTensorNdDescriptorEx(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f, cudnnDataType_t t, int nd, const int* dims) {
  return onnxc_emu_set_dims(d, f, t, nd, dims);
}
inline cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t, cudnnTensorFormat_t f, int nd, const int* dims) {
  return onnxc_emu_set_dims(d, f, t, nd, dims);
}
inline cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int ns, const int* pad, const int* stride,
                                                     const int* dil, cudnnConvolutionMode_t mode, cudnnDataType_t t) {
  if (ns < 2 || ns > 3 || t != CUDNN_DATA_FLOAT) return CUDNN_STATUS_BAD_PARAM;
  d->ns = ns;
  d->mode = mode;
  for (int k = 0; k < ns; ++k) {
    if (pad[k] < 0 || stride[k] <= 0 || dil[k] <= 0) return CUDNN_STATUS_BAD_PARAM;
    d->pad[k] = pad[k], d->stride[k] = stride[k], d->dil[k] = dil[k];
  }
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int g) {
  if (g <= 0) return CUDNN_STATUS_BAD_PARAM;
  d->groups = g;
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t, cudnnMathType_t) { return CUDNN_STATUS_SUCCESS; }

/* y's dims from x, w and the convolution: N, K, then (in + 2 pad - dil (k - 1) - 1) / stride + 1. */
inline cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t c, const cudnnTensorDescriptor_t x,
                                                           const cudnnFilterDescriptor_t w, int nd, int* out) {
  if (nd != x->nd || nd != w->nd || c->ns != nd - 2 || x->dims[1] != w->dims[1] * c->groups || w->dims[0] % c->groups)
    return CUDNN_STATUS_BAD_PARAM;
  out[0] = x->dims[0];
  out[1] = w->dims[0];
  for (int k = 0; k < c->ns; ++k)
    out[2 + k] = (x->dims[2 + k] + 2 * c->pad[k] - c->dil[k] * (w->dims[2 + k] - 1) - 1) / c->stride[k] + 1;
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnFilterDescriptor_t,
                                                            const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t, int n,
                                                            int* found, cudnnConvolutionFwdAlgoPerf_t* perf) {
  if (n < 1) return CUDNN_STATUS_BAD_PARAM;
  std::memset(perf, 0, sizeof *perf);
  perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  perf[0].status = CUDNN_STATUS_SUCCESS;
  perf[0].mathType = CUDNN_FMA_MATH;
  *found = 1;
  return CUDNN_STATUS_SUCCESS;
}
inline cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnFilterDescriptor_t,
                                                             const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
                                                             cudnnConvolutionFwdAlgo_t, size_t* bytes) {
  *bytes = 256;
  return CUDNN_STATUS_SUCCESS;
}

inline cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t, const void* alpha, const cudnnTensorDescriptor_t xd, const void* xp,
                                             const cudnnFilterDescriptor_t wd, const void* wp, const cudnnConvolutionDescriptor_t c,
                                             cudnnConvolutionFwdAlgo_t, void* ws, size_t ws_bytes, const void* beta,
                                             const cudnnTensorDescriptor_t yd, void* yp) {
  int odims[8];
  if (cudnnGetConvolutionNdForwardOutputDim(c, xd, wd, xd->nd, odims) != CUDNN_STATUS_SUCCESS || yd->nd != xd->nd) return CUDNN_STATUS_BAD_PARAM;
  for (int k = 0; k < yd->nd; ++k)
    if (odims[k] != yd->dims[k]) return CUDNN_STATUS_BAD_PARAM;
  if (ws_bytes < 256 || !ws || c->mode != CUDNN_CROSS_CORRELATION) return CUDNN_STATUS_BAD_PARAM;
  const float* x = (const float*)xp;
  const float* w = (const float*)wp;
  float* y = (float*)yp;
  const float a = *(const float*)alpha, b = *(const float*)beta;
  const int ns = c->ns, N = xd->dims[0], C = xd->dims[1], K = wd->dims[0], CG = wd->dims[1], KG = K / c->groups;
  /* Spatial sizes padded to 3 dims with leading 1s. */
  int in[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, out[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  for (int k = 0; k < ns; ++k) {
    const int d = 3 - ns + k;
    in[d] = xd->dims[2 + k], ks[d] = wd->dims[2 + k], out[d] = yd->dims[2 + k];
    pad[d] = c->pad[k], st[d] = c->stride[k], dl[d] = c->dil[k];
  }
  const long isz = (long)in[0] * in[1] * in[2], ksz = (long)ks[0] * ks[1] * ks[2], osz = (long)out[0] * out[1] * out[2];
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < K; ++m) {
      const int grp = m / KG;
      for (int o0 = 0; o0 < out[0]; ++o0)
        for (int o1 = 0; o1 < out[1]; ++o1)
          for (int o2 = 0; o2 < out[2]; ++o2) {
            double acc = 0;
            for (int ci = 0; ci < CG; ++ci) {
              const float* xc = x + ((long)n * C + (long)grp * CG + ci) * isz;
              const float* wc = w + ((long)m * CG + ci) * ksz;
              for (int k0 = 0; k0 < ks[0]; ++k0)
                for (int k1 = 0; k1 < ks[1]; ++k1)
                  for (int k2 = 0; k2 < ks[2]; ++k2) {
                    const int i0 = o0 * st[0] - pad[0] + k0 * dl[0], i1 = o1 * st[1] - pad[1] + k1 * dl[1], i2 = o2 * st[2] - pad[2] + k2 * dl[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    acc += (double)xc[((long)i0 * in[1] + i1) * in[2] + i2] * wc[((long)k0 * ks[1] + k1) * ks[2] + k2];
                  }
            }
            float* yo = y + ((long)n * K + m) * osz + ((long)o0 * out[1] + o1) * out[2] + o2;
            *yo = (float)(a * acc + (b != 0 ? (double)b * *yo : 0.0));
          }
    }
  return CUDNN_STATUS_SUCCESS;
}
#endif
