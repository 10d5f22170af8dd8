/* onnxc_runtime.h — the plain-C11 runtime that onnxc copies next to every generated model.
 *
 * It provides error codes with a per-thread detail message, aligned allocation, a monotonic
 * clock, the FNV-1a checksum, loading of the binary weights file (".weights", format below),
 * buffer checks for the models' entry points, and reading/writing input and output tensors
 * (".npy" or raw bytes) for the generic driver onnxc_main.c. The public types (status and dtype
 * codes, onnxc_tensor_info, onnxc_options, onnxc_model_info) are in onnxc_types.h.
 *
 * The runtime is private to each translation unit that uses it: a generated NAME.c and
 * onnxc_main.c each `#include "onnxc_runtime.c"`, and every function here is `static` (marked
 * unused, so a unit that needs only some of them builds warning-free). Any number of models thus
 * link into one program, statically or as shared libraries, without clashing or interposing
 * symbols, and each model keeps its own error detail. A unit may define ONNXC_RT_FN before the
 * include to give the functions another linkage (the unit tests make them extern).
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

#include "onnxc_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ONNXC_RT_FN
#if defined(__GNUC__) || defined(__clang__)
#define ONNXC_RT_FN static __attribute__((unused))
#else
#define ONNXC_RT_FN static
#endif
#endif

/* Short fixed description of a status code, e.g. "weights file checksum mismatch". */
ONNXC_RT_FN const char* onnxc_status_string(int code);
/* Detail of the last failure in this thread ("" if none), e.g.
 * "weights file 'x.weights' is 1200 bytes, expected 4160". */
ONNXC_RT_FN const char* onnxc_last_error_detail(void);
/* Lets generated code (and callers) set or clear that detail; printf-style, truncated to 1 KiB. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
ONNXC_RT_FN void onnxc_set_error_detail(const char* fmt, ...);
ONNXC_RT_FN void onnxc_clear_error_detail(void);
/* Sets the detail and returns `code`: `return onnxc_fail(ONNXC_ERR_ARG, "x is NULL");`. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
ONNXC_RT_FN int onnxc_fail(int code, const char* fmt, ...);
/* Puts "prefix: " in front of the current detail (truncated to 1 KiB), e.g. the entry point's name. */
ONNXC_RT_FN void onnxc_prefix_error_detail(const char* prefix);

ONNXC_RT_FN size_t onnxc_dtype_size(int dtype);      /* 0 for unknown */
ONNXC_RT_FN const char* onnxc_dtype_name(int dtype); /* "float32", "int64", "bool", ...; "unknown" otherwise */
/* Writes e.g. "float32[1,3,224,224]" (scalar: "float32[]") into buf, always NUL-terminated when
 * cap > 0 (truncated if needed); returns buf. */
ONNXC_RT_FN char* onnxc_format_type(char* buf, size_t cap, int dtype, int ndim, const int64_t* shape);

/* 64-byte aligned, zero-filled, size rounded up to a multiple of 64; NULL on failure or overflow.
 * bytes == 0 returns a valid 64-byte block. Release with onnxc_aligned_free (NULL is fine). */
ONNXC_RT_FN void* onnxc_aligned_alloc(size_t bytes);
ONNXC_RT_FN void onnxc_aligned_free(void* p);
ONNXC_RT_FN double onnxc_now_seconds(void);                      /* monotonic clock (CLOCK_MONOTONIC) */
ONNXC_RT_FN uint64_t onnxc_checksum(const void* data, size_t n); /* FNV-1a 64-bit */

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
ONNXC_RT_FN int onnxc_weights_load_file(const char* path, uint64_t expected_size, uint64_t expected_checksum,
                                        onnxc_weights* out);
/* blob = whole file image including the header. The payload is used in place when blob + 64 is
 * 64-byte aligned (the blob must then outlive *out), otherwise it is copied. */
ONNXC_RT_FN int onnxc_weights_from_memory(const void* blob, size_t blob_size, uint64_t expected_size,
                                          uint64_t expected_checksum, onnxc_weights* out);
ONNXC_RT_FN void onnxc_weights_free(onnxc_weights* w); /* idempotent; zeroes *w */

/* Checks the n buffers of a model's entry point `fn` against their tensors t[0..n-1]: a NULL
 * buffer is ONNXC_ERR_ARG, and when `bytes` is not NULL a size other than numel * dtype size is
 * ONNXC_ERR_SIZE; the detail names fn, the `kind` ("input"/"output"), the tensor's index, name
 * and type, and for sizes the bytes given and expected. */
ONNXC_RT_FN int onnxc_check_buffers(const char* fn, const char* kind, const onnxc_tensor_info* t, int n,
                                    const void* const* bufs, const size_t* bytes);

/* compile-model --dynamic (a batch given at run time): the batch of entry point `fn`'s n buffers
 * from their sizes. Tensor t[k] holds max_batch items (its first dimension); bytes[k] must be
 * a whole number b of its items, the same b for every tensor, 1 <= b <= max_batch, and the
 * same as *batch unless that is 0 (a tensor whose item is empty must have 0 bytes and says
 * nothing). Sets *batch; ONNXC_ERR_SIZE otherwise, the detail naming fn, the `kind`, the
 * tensor, the bytes given and one item's. */
ONNXC_RT_FN int onnxc_batch_of_sizes(const char* fn, const char* kind, const onnxc_tensor_info* t, int n, const size_t* bytes,
                                     int64_t max_batch, int64_t* batch);
/* The same along dimension `axis` (onnxc_model_info.dynamic_axis, a run-time size other than
 * the batch, the dimensions before it 1): max_count rows there, the details in rows. */
ONNXC_RT_FN int onnxc_count_of_sizes(const char* fn, const char* kind, const onnxc_tensor_info* t, int n, const size_t* bytes, int axis,
                                     int64_t max_count, int64_t* count);

/* info with its first dimension set to `batch` (a --dynamic model's run of batch items): a copy
 * in *out whose shape is `shape` (ONNXC_MAX_NDIM entries). */
ONNXC_RT_FN void onnxc_tensor_info_batch(const onnxc_tensor_info* info, int64_t batch, onnxc_tensor_info* out, int64_t* shape);
/* The same along dimension `axis` (onnxc_model_info.dynamic_axis): `count` entries there. */
ONNXC_RT_FN void onnxc_tensor_info_count(const onnxc_tensor_info* info, int axis, int64_t count, onnxc_tensor_info* out, int64_t* shape);

/* The CPU check. ONNXC_BASELINE marks a function to be compiled for the architecture's
 * baseline (x86-64, armv8-a), whatever the translation unit's flags, and never inlined: the
 * code that checks for an instruction set extension must not use it. onnxc_check_cpu compares
 * what the flags of the translation unit that includes this runtime let the compiler use (its
 * predefined macros: __AVX512F__, __ARM_FEATURE_SVE_BITS...) with this CPU (x86: CPUID, and
 * XGETBV for the operating system's support of the AVX, AVX-512 and AMX registers, plus the
 * AMX permission of arch_prctl; AArch64 Linux: the HWCAPs, and SVE's vector length from
 * prctl). It returns ONNXC_OK, or ONNXC_ERR_TARGET with a detail naming `model`, `built_for`
 * (the compile-model target) and what this CPU lacks:
 *   "mobilenet_v2: built for aarch64-sve:2048 (SVE at 2048 bits); this CPU runs SVE at 512 bits"
 * It calls no function of the translation unit, only libc. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && defined(__x86_64__)
#define ONNXC_BASELINE __attribute__((target("arch=x86-64"), noinline))
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && defined(__aarch64__)
#define ONNXC_BASELINE __attribute__((target("arch=armv8-a"), noinline))
#else
#define ONNXC_BASELINE
#endif
ONNXC_RT_FN ONNXC_BASELINE int onnxc_check_cpu(const char* model, const char* built_for);

/* Tensor files. A path ending in ".npy" is NumPy format v1.0/2.0/3.0 (little-endian, C order);
 * its descr must match info->dtype exactly (ONNXC_ERR_DTYPE otherwise, also for big-endian or
 * unknown descrs), fortran_order True or a malformed/truncated header is ONNXC_ERR_FORMAT, and
 * its shape must have info->numel elements and equal info's shape up to leading/trailing 1s
 * (ONNXC_ERR_SHAPE otherwise); data of the wrong length is ONNXC_ERR_SIZE. Any other path is
 * raw little-endian bytes whose size must equal numel * dtype_size (ONNXC_ERR_SIZE otherwise).
 * dst/src hold info->numel elements. Writing produces .npy v1.0 for ".npy" paths, else raw. */
ONNXC_RT_FN int onnxc_read_tensor_file(const char* path, const onnxc_tensor_info* info, void* dst);
/* The items in the tensor file at path for a tensor like info whose first dimension holds at
 * most max_batch items (a --dynamic model): a .npy file's first dimension, its other dimensions
 * those of info; a raw file's size over the bytes of one item. ONNXC_ERR_SHAPE (or _SIZE, raw)
 * when that is not a whole number from 1 to max_batch, with the same checks of the file as
 * onnxc_read_tensor_file. */
ONNXC_RT_FN int onnxc_tensor_file_batch(const char* path, const onnxc_tensor_info* info, int64_t max_batch, int64_t* batch);
/* The same along dimension `axis` of a tensor whose dimensions before it are 1 (a run-time size
 * other than the batch, onnxc_model_info.dynamic_axis): the rows the file holds there. */
ONNXC_RT_FN int onnxc_tensor_file_count(const char* path, const onnxc_tensor_info* info, int axis, int64_t max_batch, int64_t* batch);
/* Both at once (onnxc_model_info.max_size next to max_batch): the items along the first dimension
 * and the rows along dimension `axis` a .npy file holds, 1 to max_batch and 1 to max_size (a raw
 * file's size gives only their product: refused unless it holds the most of both). */
ONNXC_RT_FN int onnxc_tensor_file_dims(const char* path, const onnxc_tensor_info* info, int64_t max_batch, int axis, int64_t max_size,
                                       int64_t* batch, int64_t* n);
ONNXC_RT_FN int onnxc_write_tensor_file(const char* path, const onnxc_tensor_info* info, const void* src);

#ifdef __cplusplus
}
#endif

#endif /* ONNXC_RUNTIME_H */
