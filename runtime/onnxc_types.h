/* onnxc_types.h — the public types every onnxc-generated model shares: status codes, dtype codes,
 * tensor descriptions, instance options, and the model description (onnxc_model_info) through
 * which the generic driver onnxc_main.c runs any model.
 *
 * Types and constants only, no functions and no objects: the headers of any number of generated
 * models include it in one program without clashes. The functions behind these types are each
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
  ONNXC_ERR_SHAPE = 10
} onnxc_status;

/* dtype codes are ONNX TensorProto.DataType codes */
enum {
  ONNXC_F32 = 1, ONNXC_U8 = 2, ONNXC_I8 = 3, ONNXC_U16 = 4, ONNXC_I16 = 5, ONNXC_I32 = 6,
  ONNXC_I64 = 7, ONNXC_BOOL = 9, ONNXC_F64 = 11, ONNXC_U32 = 12, ONNXC_U64 = 13
};
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
} onnxc_model_info;

#endif /* ONNXC_TYPES_H */
