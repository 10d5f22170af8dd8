/* onnxc_runtime.h — the plain-C11 runtime that onnxc copies next to every generated model.
 *
 * It provides error codes with a per-thread detail message, aligned allocation, a monotonic
 * clock, the FNV-1a checksum, loading of the binary weights file (".weights", format below),
 * reading/writing input and output tensors (".npy" or raw bytes), and the model description
 * struct (onnxc_model_info) through which the generic onnxc_main.c drives any generated model.
 *
 * Conventions: every fallible function returns an onnxc_status (0 = ONNXC_OK) and, on failure,
 * leaves a human-readable explanation in onnxc_last_error_detail(); nothing here calls exit(),
 * prints, or aborts. Dtype codes are ONNX TensorProto.DataType codes. Output structs are zeroed
 * on failure, so the matching free function is always safe to call.
 *
 * Known gaps: tensor data and weights are assumed to be little-endian in memory (true on x86-64
 * and AArch64 Linux); float16/bfloat16/string/complex dtypes are not supported; tensor and weights
 * files must be regular files (no pipes); files are read with stdio, sizes beyond `long` (2 GiB on
 * ILP32 hosts) are not supported there.
 */
#ifndef ONNXC_RUNTIME_H
#define ONNXC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/* Short fixed description of a status code, e.g. "weights file checksum mismatch". */
const char* onnxc_status_string(int code);
/* Detail of the last failure in this thread ("" if none), e.g.
 * "weights file 'x.weights' is 1200 bytes, expected 4160". */
const char* onnxc_last_error_detail(void);
/* Lets generated code (and callers) set or clear that detail; printf-style, truncated to 1 KiB. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
void onnxc_set_error_detail(const char* fmt, ...);
void onnxc_clear_error_detail(void);

/* dtype codes are ONNX TensorProto.DataType codes */
enum {
  ONNXC_F32 = 1, ONNXC_U8 = 2, ONNXC_I8 = 3, ONNXC_U16 = 4, ONNXC_I16 = 5, ONNXC_I32 = 6,
  ONNXC_I64 = 7, ONNXC_BOOL = 9, ONNXC_F64 = 11, ONNXC_U32 = 12, ONNXC_U64 = 13
};
size_t onnxc_dtype_size(int dtype);      /* 0 for unknown */
const char* onnxc_dtype_name(int dtype); /* "float32", "int64", "bool", ...; "unknown" otherwise */
/* Writes e.g. "float32[1,3,224,224]" (scalar: "float32[]") into buf, always NUL-terminated when
 * cap > 0 (truncated if needed); returns buf. */
char* onnxc_format_type(char* buf, size_t cap, int dtype, int ndim, const int64_t* shape);
#define ONNXC_MAX_NDIM 32 /* the most dimensions a tensor file may have */

/* 64-byte aligned, zero-filled, size rounded up to a multiple of 64; NULL on failure or overflow.
 * bytes == 0 returns a valid 64-byte block. Release with onnxc_aligned_free (NULL is fine). */
void* onnxc_aligned_alloc(size_t bytes);
void onnxc_aligned_free(void* p);
double onnxc_now_seconds(void);                      /* monotonic clock (CLOCK_MONOTONIC) */
uint64_t onnxc_checksum(const void* data, size_t n); /* FNV-1a 64-bit */

/* Weights file format (little-endian), written by the compiler:
 *   offset 0: magic "ONNXCWTS" (8 bytes); 8: u32 version (=1); 12: u32 header_size (=64);
 *   16: u64 payload_size; 24: u64 checksum (onnxc_checksum of payload); 32..63: zero (reserved).
 *   The payload starts at offset 64; tensors inside it are 64-byte aligned relative to its start.
 * Validation order: file open (IO); size < 64 or bad magic (FORMAT); version (VERSION);
 * header_size != 64 (FORMAT); header payload_size != expected_size or file size != 64 +
 * payload_size (SIZE); header checksum != expected_checksum, or checksum of the payload !=
 * header checksum (CHECKSUM). */
#define ONNXC_WEIGHTS_VERSION 1
#define ONNXC_WEIGHTS_HEADER_SIZE 64
typedef struct {
  const unsigned char* data; /* payload, 64-byte aligned */
  uint64_t size;             /* payload bytes */
  void* owned;               /* block to release (NULL when data points into a caller's blob) */
} onnxc_weights;
int onnxc_weights_load_file(const char* path, uint64_t expected_size, uint64_t expected_checksum,
                            onnxc_weights* out);
/* blob = whole file image including the header. The payload is used in place when blob + 64 is
 * 64-byte aligned (the blob must then outlive *out), otherwise it is copied. */
int onnxc_weights_from_memory(const void* blob, size_t blob_size, uint64_t expected_size,
                              uint64_t expected_checksum, onnxc_weights* out);
void onnxc_weights_free(onnxc_weights* w); /* idempotent; zeroes *w */

/* Model description, emitted by the compiler for every model, consumed by onnxc_main.c.
 * Contract for generated code: init/init_from_memory clean up after themselves on failure;
 * free_model is idempotent and safe after a failed or missing init; run_v returns ONNXC_ERR_STATE
 * when called before a successful init. Input/output buffers are numel * dtype_size bytes. */
typedef struct {
  const char* name;
  int dtype;
  int ndim;
  const int64_t* shape;
  size_t numel;
} onnxc_tensor_info;
typedef struct {
  const char* model_name;   /* C name, e.g. "resnet50" */
  const char* weights_file; /* default weights file name, e.g. "resnet50.weights"; NULL/"" if none */
  int num_inputs;
  const onnxc_tensor_info* inputs;
  int num_outputs;
  const onnxc_tensor_info* outputs;
  int (*init)(const char* weights_path);
  int (*init_from_memory)(const void* blob, size_t size);
  int (*run_v)(const void* const* inputs, void* const* outputs);
  void (*free_model)(void);
} onnxc_model_info;

/* Tensor files. A path ending in ".npy" is NumPy format v1.0/2.0/3.0 (little-endian, C order);
 * its descr must match info->dtype exactly (ONNXC_ERR_DTYPE otherwise, also for big-endian or
 * unknown descrs), fortran_order True or a malformed/truncated header is ONNXC_ERR_FORMAT, and
 * its shape must have info->numel elements and equal info's shape up to leading/trailing 1s
 * (ONNXC_ERR_SHAPE otherwise); data of the wrong length is ONNXC_ERR_SIZE. Any other path is
 * raw little-endian bytes whose size must equal numel * dtype_size (ONNXC_ERR_SIZE otherwise).
 * dst/src hold info->numel elements. Writing produces .npy v1.0 for ".npy" paths, else raw. */
int onnxc_read_tensor_file(const char* path, const onnxc_tensor_info* info, void* dst);
int onnxc_write_tensor_file(const char* path, const onnxc_tensor_info* info, const void* src);

#ifdef __cplusplus
}
#endif

#endif /* ONNXC_RUNTIME_H */
