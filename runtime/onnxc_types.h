/* onnxc_types.h — the public types every onnxc-generated model shares: status codes, dtype codes,
 * tensor descriptions, instance options, and the model description (onnxc_model_info) through
 * which the generic driver onnxc_main.c runs any model.
 *
 * Types and constants only, no objects, and no functions but the two static inline float16
 * conversions (which define no symbol): the headers of any number of generated models include it
 * in one program without clashes. The functions behind these types are each
 * model's own (NAME_create, NAME_run, ..., NAME_status_string, NAME_last_error; see NAME.h).
 */
#ifndef ONNXC_TYPES_H
#define ONNXC_TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  ONNXC_OK = 0,
  ONNXC_ERR_IO = 1,
  ONNXC_ERR_FORMAT = 2,
  ONNXC_ERR_VERSION = 3,
  ONNXC_ERR_SIZE = 4,
  ONNXC_ERR_CHECKSUM = 5,
  ONNXC_ERR_NOMEM = 6,
  ONNXC_ERR_ARG = 7,
  ONNXC_ERR_STATE = 8,
  ONNXC_ERR_DTYPE = 9,
  ONNXC_ERR_SHAPE = 10,
  ONNXC_ERR_DEVICE = 11, /* a CUDA call failed (models compiled with --device cuda): no device, a failed launch... */
  ONNXC_ERR_RANGE = 12,  /* a value past the range the model was compiled for (--gpu-precision fp16: an input of a
                            tensor-core convolution beyond +-65504); the outputs of that run are not valid */
  ONNXC_ERR_TARGET = 13  /* this CPU lacks what the model's code was compiled to use (an instruction set extension,
                            SVE's vector length): NAME_create refuses before any of it runs */
} onnxc_status;

/* dtype codes are ONNX TensorProto.DataType codes */
enum {
  ONNXC_F32 = 1, ONNXC_U8 = 2, ONNXC_I8 = 3, ONNXC_U16 = 4, ONNXC_I16 = 5, ONNXC_I32 = 6,
  ONNXC_I64 = 7, ONNXC_BOOL = 9, ONNXC_F16 = 10, ONNXC_F64 = 11, ONNXC_U32 = 12, ONNXC_U64 = 13
};

/* float16 tensors (ONNXC_F16) are IEEE binary16 values held as their uint16_t bits. A model
 * computes in float32 and converts at its float16 inputs and outputs with these:
 * onnxc_f16_to_f32 is exact; onnxc_f32_to_f16 rounds to nearest even, overflow to +-inf,
 * NaN to a quiet NaN. */
static inline float onnxc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
  if (e == 0x1f) {
    bits = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
  } else if (e != 0) {
    bits = sign | ((e + 112u) << 23) | (m << 13);
  } else if (m == 0) {
    bits = sign;
  } else { /* subnormal: m * 2^-24 */
    uint32_t k = 0;
    while (!(m & 0x400u)) {
      m <<= 1;
      ++k;
    }
    bits = sign | ((113u - k) << 23) | ((m & 0x3ffu) << 13);
  }
  union { uint32_t u; float f; } v = {bits};
  return v.f;
}

static inline uint16_t onnxc_f32_to_f16(float f) {
  union { float f; uint32_t u; } v = {f};
  uint32_t sign = (v.u >> 16) & 0x8000u, ax = v.u & 0x7fffffffu, r, rem;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) {
    uint32_t shift, half;
    if (ax < 0x33000000u) return (uint16_t)sign;
    shift = 126u - (ax >> 23);
    half = 1u << (shift - 1);
    r = ((ax & 0x7fffffu) | 0x800000u) >> shift;
    rem = ((ax & 0x7fffffu) | 0x800000u) & ((1u << shift) - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (uint16_t)(sign | r);
  }
  r = ax - 0x38000000u;
  rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (uint16_t)(sign | r);
}
#define ONNXC_MAX_NDIM 32 /* the most dimensions a tensor file may have */

/* One graph input or output: its buffer holds numel elements of dtype (bool: one byte each). */
typedef struct {
  const char* name;
  int dtype;
  int ndim;
  const int64_t* shape;
  size_t numel;
} onnxc_tensor_info;

/* Options of one model instance. A NULL options pointer means every field 0 (the defaults). */
typedef struct {
  /* OpenMP threads for this instance's runs; 0 = OpenMP's default (OMP_NUM_THREADS, or one per
   * core). Set for the duration of each run and restored after, so the calling thread's own
   * setting is untouched. No effect when the model was built without OpenMP. */
  int num_threads;
  /* UNSAFE. Nonzero skips the CPU check of NAME_create, which refuses (ONNXC_ERR_TARGET) a CPU
   * that lacks an instruction set extension the model's code was compiled to use, or runs SVE
   * at another vector length than a fixed-length SVE build: such a CPU then dies of an illegal
   * instruction or, SVE at another length, computes wrong results without a word. For a check
   * that is known to be wrong on some machine; leave it 0. */
  int unsafe_skip_cpu_check;
} onnxc_options;

/* One function of a model built with compile-model --profile (NAME_info.ops): what it computes
 * and what that costs per run, for the per-op profile (NAME --profile). */
typedef struct {
  const char* nodes;  /* the ONNX nodes it computes, "conv1, relu1" */
  const char* ops;    /* their op types, "Conv+Relu" */
  const char* kernel; /* the kernel the compiler chose, "Conv NCHW16c nchwc regular" */
  const char* output; /* its output as stored, "/conv1/Conv_output_0 f32[1,4,112,112,16] NCHW16c" */
  double flops;       /* floating-point operations per run (a multiply-add counts 2) */
  double bytes;       /* bytes of its inputs and outputs */
} onnxc_op_info;

/* Model description, emitted by the compiler for every model (NAME_info), consumed by
 * onnxc_main.c. The functions are the model's own entry points with the instance type erased:
 * create/create_from_memory store a new instance in *ctx (NULL on failure), run_v and destroy
 * take it; failures set the model's last_error(). Buffers are numel * dtype size bytes. */
typedef struct {
  const char* model_name;   /* C name, e.g. "resnet50" */
  const char* weights_file; /* default weights file name, e.g. "resnet50.weights"; NULL/"" if none */
  int num_inputs;
  const onnxc_tensor_info* inputs;
  int num_outputs;
  const onnxc_tensor_info* outputs;
  int openmp; /* 1 when the model was built with OpenMP (onnxc_options.num_threads takes effect) */
  int (*create)(const char* weights_path, const onnxc_options* options, void** ctx);
  int (*create_from_memory)(const void* blob, size_t size, const onnxc_options* options, void** ctx);
  int (*run_v)(void* ctx, const void* const* inputs, const size_t* input_bytes, void* const* outputs,
               const size_t* output_bytes);
  int (*destroy)(void** ctx);
  const char* (*status_string)(int code);
  const char* (*last_error)(void);
  /* compile-model --profile only (else 0 and NULL): the functions a run calls, and their seconds
   * summed over the instance's runs so far. */
  int num_ops;
  const onnxc_op_info* ops;
  int (*profile)(const void* ctx, double* seconds);
  /* Where the model runs: NULL for C (the CPU), "cuda" for --device cuda (its --profile times
   * are GPU times, measured with CUDA events). */
  const char* device;
  /* The compile-model target the model was built for, "x86-64-avx512" or "host (x86-64
   * znver4)": the CPU check's message names it. */
  const char* target;
  /* compile-model --dynamic: the most items a run takes (the first dimension of every input and
   * output, at its most in the shapes above; or dimension dynamic_axis); run_v takes 1 to this
   * many, as the buffers' sizes say. 0 for a build of one batch. */
  int64_t max_batch;
  /* The dimension of every input and output that max_batch counts: 0 for the batch; for a
   * run-time size other than the batch (compile-model --dynamic seq=MAX on a transformer's
   * tokens) the dimension that holds it, the ones before it being 1. */
  int dynamic_axis;
  /* Two run-time sizes (compile-model --dynamic batch=B --dynamic seq=S): max_batch counts the
   * batch (dynamic_axis 0) and max_size the rows of each item along dimension size_axis (the
   * dimensions between are 1); a run of b items of n rows takes tensors of b * n rows, item
   * after item. run_v then refuses (the sizes give only b * n): run_dims takes b and n and checks
   * each buffer's size against them. 0, 0 and NULL otherwise. */
  int64_t max_size;
  int size_axis;
  int (*run_dims)(void* ctx, int64_t batch, int64_t n, const void* const* inputs, const size_t* input_bytes, void* const* outputs,
                  const size_t* output_bytes);
} onnxc_model_info;

/* Models compiled with --device cuda also export `const onnxc_cuda_info NAME_cuda_info`, the
 * stream-level entry point for drivers that keep the tensors on the GPU (the split runtime,
 * onnxc_split_cuda.h); C models do not have it. run_device is NAME_run_device: it enqueues one
 * inference of instance ctx (made by model->create) on stream (a cudaStream_t, NULL for the
 * instance's own) reading d_inputs[k] and writing d_outputs[k] (device buffers, numel * dtype
 * size bytes), with no host copy and no synchronisation; the instance's runs must not overlap. */
typedef struct {
  const onnxc_model_info* model; /* &NAME_info */
  int (*run_device)(void* ctx, void* stream, const void* const* d_inputs, void* const* d_outputs);
} onnxc_cuda_info;

#endif /* ONNXC_TYPES_H */
