/* onnxc_runtime.c — implementation of the plain-C11 runtime declared in onnxc_runtime.h.
 *
 * Not compiled on its own: a generated NAME.c and onnxc_main.c `#include` it as their first line
 * (it sets _POSIX_C_SOURCE before any system header), which makes its functions private to that
 * translation unit (see onnxc_runtime.h). The include guard lets several models' sources share
 * one copy in a single translation unit.
 *
 * Conventions: every fallible entry point validates its arguments, returns an onnxc_status and
 * records a one-line explanation with fail() (a thread-local buffer); nothing prints or
 * exits. All file parsing is bounded by the real file/blob size: lengths read from a file are
 * never trusted before they are checked against what is actually there. Header integers are
 * decoded byte by byte (little-endian), so the parsers themselves are endian-neutral and free of
 * unaligned accesses; bulk tensor/weights data is copied as-is (assumed little-endian host).
 *
 * Known gaps: the .npy reader accepts only the three keys NumPy writes (descr, fortran_order,
 * shape) and plain 'xx' / "xx" strings without escapes; files must be regular files; the FNV-1a
 * checksum runs at roughly 1 byte/cycle, which is visible (~0.1 s) on 100 MB weights files.
 */
#ifndef ONNXC_RUNTIME_C
#define ONNXC_RUNTIME_C

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime, posix_memalign, fileno, fstat */
#endif

#include "onnxc_runtime.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

/* ---------------------------------------------------------------- status and error detail */

#ifdef __STDC_NO_THREADS__
#define ONNXC_TLS
#else
#define ONNXC_TLS _Thread_local
#endif

static ONNXC_TLS char g_detail[1024];

const char* onnxc_status_string(int code) {
  switch (code) {
    case ONNXC_OK: return "ok";
    case ONNXC_ERR_IO: return "I/O error";
    case ONNXC_ERR_FORMAT: return "bad file format";
    case ONNXC_ERR_VERSION: return "unsupported file version";
    case ONNXC_ERR_SIZE: return "size mismatch";
    case ONNXC_ERR_CHECKSUM: return "weights file checksum mismatch";
    case ONNXC_ERR_NOMEM: return "out of memory";
    case ONNXC_ERR_ARG: return "invalid argument";
    case ONNXC_ERR_STATE: return "invalid state (instance already running?)";
    case ONNXC_ERR_DTYPE: return "data type mismatch";
    case ONNXC_ERR_SHAPE: return "shape mismatch";
    case ONNXC_ERR_DEVICE: return "GPU error";
    case ONNXC_ERR_RANGE: return "value out of the compiled precision's range";
    case ONNXC_ERR_TARGET: return "CPU not supported by this build";
    default: return "unknown error";
  }
}

const char* onnxc_last_error_detail(void) { return g_detail; }

/* ---------------------------------------------------------------- the CPU check */

/* Appends ", name" (or "name" first) to list[0..cap): baseline code, libc only. */
ONNXC_RT_FN ONNXC_BASELINE void onnxc_cpu_lacks(char* list, size_t cap, const char* name) {
  size_t n = strlen(list);
  if (n + 2 < cap) snprintf(list + n, cap - n, "%s%s", n ? ", " : "", name);
}

int onnxc_check_cpu(const char* model, const char* built_for) {
#ifdef __CUDACC__ /* a --device cuda model's host code: built without CPU-specific flags */
  (void)model;
  (void)built_for;
  return ONNXC_OK;
#else
  char lacks[512] = "";
  int sve_bits = 0, cpu_sve_bits = 0; /* a fixed-length SVE build and this CPU's length, in bits */
  (void)sve_bits;
  (void)cpu_sve_bits;
#define ONNXC_NEED(have, name) \
  do {                         \
    if (!(have)) onnxc_cpu_lacks(lacks, sizeof lacks, name); \
  } while (0)
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  unsigned a = 0, b = 0, c = 0, d = 0, c1 = 0, b7 = 0, c7 = 0, d7 = 0, a71 = 0, ce1 = 0;
  unsigned long long xcr0 = 0;
  const unsigned top = (unsigned)__get_cpuid_max(0, NULL);
  if (top >= 1 && __get_cpuid(1, &a, &b, &c, &d)) c1 = c;
  if (top >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    b7 = b, c7 = c, d7 = d;
    if (a >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      a71 = a;
    }
  }
  if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000001u && __get_cpuid(0x80000001u, &a, &b, &c, &d)) ce1 = c;
  if (c1 & (1u << 27)) { /* OSXSAVE: the registers the operating system saves (XCR0) */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (unsigned long long)hi << 32 | lo;
  }
  const int os_avx = (xcr0 & 0x6u) == 0x6u, os_avx512 = os_avx && (xcr0 & 0xe0u) == 0xe0u;
  const int os_amx = (xcr0 & 0x60000u) == 0x60000u;
  (void)b7, (void)c7, (void)d7, (void)a71, (void)ce1, (void)os_avx512, (void)os_amx;
#ifdef __SSE3__
  ONNXC_NEED(c1 & (1u << 0), "SSE3");
#endif
#ifdef __SSSE3__
  ONNXC_NEED(c1 & (1u << 9), "SSSE3");
#endif
#ifdef __SSE4_1__
  ONNXC_NEED(c1 & (1u << 19), "SSE4.1");
#endif
#ifdef __SSE4_2__
  ONNXC_NEED(c1 & (1u << 20), "SSE4.2");
#endif
#ifdef __POPCNT__
  ONNXC_NEED(c1 & (1u << 23), "POPCNT");
#endif
#ifdef __AVX__
  ONNXC_NEED((c1 & (1u << 28)) && os_avx, "AVX");
#endif
#ifdef __F16C__
  ONNXC_NEED(c1 & (1u << 29), "F16C");
#endif
#ifdef __FMA__
  ONNXC_NEED((c1 & (1u << 12)) && os_avx, "FMA");
#endif
#ifdef __AVX2__
  ONNXC_NEED((b7 & (1u << 5)) && os_avx, "AVX2");
#endif
#ifdef __BMI__
  ONNXC_NEED(b7 & (1u << 3), "BMI1");
#endif
#ifdef __BMI2__
  ONNXC_NEED(b7 & (1u << 8), "BMI2");
#endif
#ifdef __LZCNT__
  ONNXC_NEED(ce1 & (1u << 5), "LZCNT");
#endif
#ifdef __AVX512F__
  ONNXC_NEED((b7 & (1u << 16)) && os_avx512, "AVX-512F");
#endif
#ifdef __AVX512DQ__
  ONNXC_NEED((b7 & (1u << 17)) && os_avx512, "AVX-512DQ");
#endif
#ifdef __AVX512IFMA__
  ONNXC_NEED((b7 & (1u << 21)) && os_avx512, "AVX-512IFMA");
#endif
#ifdef __AVX512ER__
  ONNXC_NEED((b7 & (1u << 27)) && os_avx512, "AVX-512ER");
#endif
#ifdef __AVX512CD__
  ONNXC_NEED((b7 & (1u << 28)) && os_avx512, "AVX-512CD");
#endif
#ifdef __AVX512BW__
  ONNXC_NEED((b7 & (1u << 30)) && os_avx512, "AVX-512BW");
#endif
#ifdef __AVX512VL__
  ONNXC_NEED((b7 & (1u << 31)) && os_avx512, "AVX-512VL");
#endif
#ifdef __AVX512VBMI__
  ONNXC_NEED((c7 & (1u << 1)) && os_avx512, "AVX-512VBMI");
#endif
#ifdef __AVX512VBMI2__
  ONNXC_NEED((c7 & (1u << 6)) && os_avx512, "AVX-512VBMI2");
#endif
#ifdef __GFNI__
  ONNXC_NEED(c7 & (1u << 8), "GFNI");
#endif
#ifdef __VAES__
  ONNXC_NEED(c7 & (1u << 9), "VAES");
#endif
#ifdef __VPCLMULQDQ__
  ONNXC_NEED(c7 & (1u << 10), "VPCLMULQDQ");
#endif
#ifdef __AVX512VNNI__
  ONNXC_NEED((c7 & (1u << 11)) && os_avx512, "AVX-512VNNI");
#endif
#ifdef __AVX512BITALG__
  ONNXC_NEED((c7 & (1u << 12)) && os_avx512, "AVX-512BITALG");
#endif
#ifdef __AVX512VPOPCNTDQ__
  ONNXC_NEED((c7 & (1u << 14)) && os_avx512, "AVX-512VPOPCNTDQ");
#endif
#ifdef __AVX512FP16__
  ONNXC_NEED((d7 & (1u << 23)) && os_avx512, "AVX-512FP16");
#endif
#ifdef __AVXVNNI__
  ONNXC_NEED((a71 & (1u << 4)) && os_avx, "AVX-VNNI");
#endif
#ifdef __AVX512BF16__
  ONNXC_NEED((a71 & (1u << 5)) && os_avx512, "AVX-512BF16");
#endif
#ifdef __AMX_TILE__
  ONNXC_NEED((d7 & (1u << 24)) && os_amx, "AMX-TILE");
#endif
#ifdef __AMX_INT8__
  ONNXC_NEED((d7 & (1u << 25)) && os_amx, "AMX-INT8");
#endif
#ifdef __AMX_BF16__
  ONNXC_NEED((d7 & (1u << 22)) && os_amx, "AMX-BF16");
#endif
#if defined(__AMX_TILE__) && defined(__linux__)
  if (!lacks[0]) { /* Linux lends the AMX tile registers to a process that asks for them */
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(158L /* arch_prctl */), "D"(0x1023L /* ARCH_REQ_XCOMP_PERM */),
                     "S"(18L /* XFEATURE_XTILEDATA */) : "rcx", "r11", "memory");
    ONNXC_NEED(r == 0, "the operating system's permission to use AMX (arch_prctl)");
  }
#endif
#elif defined(__aarch64__) && defined(__linux__)
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  (void)hw2;
#ifdef __ARM_FEATURE_SVE
  ONNXC_NEED(hw & (1ul << 22), "SVE");
#if defined(__ARM_FEATURE_SVE_BITS) && __ARM_FEATURE_SVE_BITS > 0
  sve_bits = __ARM_FEATURE_SVE_BITS;
  if (hw & (1ul << 22)) {
    const int vl = prctl(51 /* PR_SVE_GET_VL */, 0, 0, 0, 0);
    if (vl >= 0) cpu_sve_bits = (vl & 0xffff) * 8;
  }
#endif
#endif
#ifdef __ARM_FEATURE_SVE2
  ONNXC_NEED(hw2 & (1ul << 1), "SVE2");
#endif
#ifdef __ARM_FEATURE_DOTPROD
  ONNXC_NEED(hw & (1ul << 20), "the dot product instructions (asimddp)");
#endif
#ifdef __ARM_FEATURE_FP16_VECTOR_ARITHMETIC
  ONNXC_NEED(hw & (1ul << 10), "half-precision arithmetic (asimdhp)");
#endif
#ifdef __ARM_FEATURE_MATMUL_INT8
  ONNXC_NEED(hw2 & (1ul << 13), "I8MM");
#endif
#ifdef __ARM_FEATURE_BF16_VECTOR_ARITHMETIC
  ONNXC_NEED(hw2 & (1ul << 14), "BF16");
#endif
#endif
#undef ONNXC_NEED
  if (lacks[0]) {
    snprintf(g_detail, sizeof g_detail, "%s: built for %s; this CPU lacks %s (build it for this CPU: compile-model on it with --target host)",
             model, built_for, lacks);
    return ONNXC_ERR_TARGET;
  }
  if (sve_bits && cpu_sve_bits != sve_bits) {
    snprintf(g_detail, sizeof g_detail,
             "%s: built for %s (SVE at %d bits); this CPU runs SVE at %d bits (build it with --target aarch64-sve:%d)", model,
             built_for, sve_bits, cpu_sve_bits, cpu_sve_bits);
    return ONNXC_ERR_TARGET;
  }
  return ONNXC_OK;
#endif
}

void onnxc_clear_error_detail(void) { g_detail[0] = '\0'; }

void onnxc_set_error_detail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_detail, sizeof g_detail, fmt, ap);
  va_end(ap);
}

int onnxc_fail(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_detail, sizeof g_detail, fmt, ap);
  va_end(ap);
  return code;
}

void onnxc_prefix_error_detail(const char* prefix) {
  size_t cap = sizeof g_detail, p = prefix ? strlen(prefix) : 0, d = strlen(g_detail);
  if (p > cap - 3) p = cap - 3;
  if (d > cap - 3 - p) d = cap - 3 - p;
  memmove(g_detail + p + 2, g_detail, d);
  memcpy(g_detail + p, ": ", 2);
  if (p) memcpy(g_detail, prefix, p);
  g_detail[p + 2 + d] = '\0';
}

/* The short name the failures below use: `return fail(ONNXC_ERR_X, "...", ...)`. */
#define fail onnxc_fail

/* ---------------------------------------------------------------- dtypes */

typedef struct {
  int code;
  size_t size;
  const char* name;
  const char* npy; /* NumPy descr without the byte-order character */
} dtype_row;

static const dtype_row k_dtypes[] = {
    {ONNXC_F32, 4, "float32", "f4"}, {ONNXC_U8, 1, "uint8", "u1"},    {ONNXC_I8, 1, "int8", "i1"},
    {ONNXC_U16, 2, "uint16", "u2"},  {ONNXC_I16, 2, "int16", "i2"},   {ONNXC_I32, 4, "int32", "i4"},
    {ONNXC_I64, 8, "int64", "i8"},   {ONNXC_BOOL, 1, "bool", "b1"},   {ONNXC_F64, 8, "float64", "f8"},
    {ONNXC_U32, 4, "uint32", "u4"},  {ONNXC_U64, 8, "uint64", "u8"},   {ONNXC_F16, 2, "float16", "f2"},
};
#define NUM_DTYPES (sizeof k_dtypes / sizeof k_dtypes[0])

static const dtype_row* dtype_find(int code) {
  for (size_t i = 0; i < NUM_DTYPES; ++i)
    if (k_dtypes[i].code == code) return &k_dtypes[i];
  return NULL;
}

size_t onnxc_dtype_size(int dtype) {
  const dtype_row* r = dtype_find(dtype);
  return r ? r->size : 0;
}

const char* onnxc_dtype_name(int dtype) {
  const dtype_row* r = dtype_find(dtype);
  return r ? r->name : "unknown";
}

char* onnxc_format_type(char* buf, size_t cap, int dtype, int ndim, const int64_t* shape) {
  if (!buf || cap == 0) return buf;
  size_t len = 0;
  int n = snprintf(buf, cap, "%s[", onnxc_dtype_name(dtype));
  if (n > 0) len = (size_t)n;
  for (int i = 0; i < ndim && shape && len < cap; ++i) {
    n = snprintf(buf + len, cap - len, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (n > 0) len += (size_t)n;
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

/* ---------------------------------------------------------------- memory, time, checksum */

void* onnxc_aligned_alloc(size_t bytes) {
  if (bytes > SIZE_MAX - 63) return NULL;
  size_t n = bytes == 0 ? 64 : (bytes + 63) & ~(size_t)63;
  void* p = NULL;
  if (posix_memalign(&p, 64, n) != 0) return NULL;
  memset(p, 0, n);
  return p;
}

void onnxc_aligned_free(void* p) { free(p); }

double onnxc_now_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t onnxc_checksum(const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint32_t rd_u32(const unsigned char* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd_u64(const unsigned char* p) { return rd_u32(p) | (uint64_t)rd_u32(p + 4) << 32; }

/* ---------------------------------------------------------------- files */

/* Opens a regular file for reading and reports its size. */
static int open_read(const char* path, const char* what, FILE** out, uint64_t* size) {
  *out = NULL;
  if (!path) return fail(ONNXC_ERR_ARG, "%s path is NULL", what);
  FILE* f = fopen(path, "rb");
  if (!f) return fail(ONNXC_ERR_IO, "cannot open %s '%s': %s", what, path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
    fclose(f);
    return fail(ONNXC_ERR_IO, "%s '%s' is not a regular file", what, path);
  }
  *out = f;
  *size = (uint64_t)st.st_size;
  return ONNXC_OK;
}

static int read_exact(FILE* f, void* dst, size_t n, const char* what, const char* path) {
  if (n > 0 && fread(dst, 1, n, f) != n)
    return fail(ONNXC_ERR_IO, "cannot read %zu bytes from %s '%s'", n, what, path);
  return ONNXC_OK;
}

/* ---------------------------------------------------------------- weights */

/* Checks a 64-byte header against the whole image size and the model's expectations. */
static int check_weights_header(const unsigned char* h, uint64_t total, uint64_t expected_size,
                                uint64_t expected_checksum, const char* what) {
  uint32_t version = rd_u32(h + 8), header_size = rd_u32(h + 12);
  uint64_t payload = rd_u64(h + 16), checksum = rd_u64(h + 24);
  if (memcmp(h, "ONNXCWTS", 8) != 0) return fail(ONNXC_ERR_FORMAT, "%s: bad magic (not an onnxc weights file)", what);
  if (version != ONNXC_WEIGHTS_VERSION)
    return fail(ONNXC_ERR_VERSION, "%s has format version %u, this runtime reads version %d", what,
                (unsigned)version, ONNXC_WEIGHTS_VERSION);
  if (header_size != ONNXC_WEIGHTS_HEADER_SIZE)
    return fail(ONNXC_ERR_FORMAT, "%s: header size %u, expected %d", what, (unsigned)header_size,
                ONNXC_WEIGHTS_HEADER_SIZE);
  if (payload != expected_size)
    return fail(ONNXC_ERR_SIZE, "%s holds %llu bytes of weights, the model expects %llu (weights of another model?)", what,
                (unsigned long long)payload, (unsigned long long)expected_size);
  if (payload > UINT64_MAX - 64 || total != 64 + payload)
    return fail(ONNXC_ERR_SIZE, "%s is %llu bytes, expected %llu", what, (unsigned long long)total,
                (unsigned long long)(64 + expected_size));
  if (checksum != expected_checksum)
    return fail(ONNXC_ERR_CHECKSUM, "%s has checksum 0x%016llx, the model expects 0x%016llx (weights of another build?)",
                what, (unsigned long long)checksum, (unsigned long long)expected_checksum);
  if ((uint64_t)(size_t)payload != payload)
    return fail(ONNXC_ERR_NOMEM, "%s: payload of %llu bytes does not fit in memory", what, (unsigned long long)payload);
  return ONNXC_OK;
}

static int check_payload(const unsigned char* data, uint64_t size, uint64_t expected, const char* what) {
  uint64_t got = onnxc_checksum(data, (size_t)size);
  if (got != expected)
    return fail(ONNXC_ERR_CHECKSUM, "%s payload checksum is 0x%016llx, header says 0x%016llx (file corrupted)",
                what, (unsigned long long)got, (unsigned long long)expected);
  return ONNXC_OK;
}

int onnxc_weights_load_file(const char* path, uint64_t expected_size, uint64_t expected_checksum,
                            onnxc_weights* out) {
  if (!out) return fail(ONNXC_ERR_ARG, "onnxc_weights_load_file: out is NULL");
  memset(out, 0, sizeof *out);
  FILE* f = NULL;
  uint64_t total = 0;
  int rc = open_read(path, "weights file", &f, &total);
  if (rc) return rc;
  char what[512];
  snprintf(what, sizeof what, "weights file '%s'", path);
  unsigned char h[64];
  if (total < 64) {
    fclose(f);
    return fail(ONNXC_ERR_FORMAT, "%s is %llu bytes, shorter than its 64-byte header", what, (unsigned long long)total);
  }
  rc = read_exact(f, h, 64, "weights file", path);
  if (!rc) rc = check_weights_header(h, total, expected_size, expected_checksum, what);
  unsigned char* data = NULL;
  if (!rc) {
    data = (unsigned char*)onnxc_aligned_alloc((size_t)expected_size);
    if (!data) rc = fail(ONNXC_ERR_NOMEM, "cannot allocate %llu bytes for %s", (unsigned long long)expected_size, what);
  }
  if (!rc) rc = read_exact(f, data, (size_t)expected_size, "weights file", path);
  if (!rc) rc = check_payload(data, expected_size, rd_u64(h + 24), what);
  fclose(f);
  if (rc) {
    onnxc_aligned_free(data);
    return rc;
  }
  out->data = data;
  out->size = expected_size;
  out->owned = data;
  return ONNXC_OK;
}

int onnxc_weights_from_memory(const void* blob, size_t blob_size, uint64_t expected_size,
                              uint64_t expected_checksum, onnxc_weights* out) {
  if (!out) return fail(ONNXC_ERR_ARG, "onnxc_weights_from_memory: out is NULL");
  memset(out, 0, sizeof *out);
  if (!blob && blob_size) return fail(ONNXC_ERR_ARG, "weights blob is NULL");
  const char* what = "weights blob";
  if (blob_size < 64)
    return fail(ONNXC_ERR_FORMAT, "%s is %zu bytes, shorter than its 64-byte header", what, blob_size);
  const unsigned char* h = (const unsigned char*)blob;
  int rc = check_weights_header(h, blob_size, expected_size, expected_checksum, what);
  if (!rc) rc = check_payload(h + 64, expected_size, rd_u64(h + 24), what);
  if (rc) return rc;
  const unsigned char* payload = h + 64;
  if (((uintptr_t)payload & 63u) == 0) {
    out->data = payload;
  } else {
    unsigned char* copy = (unsigned char*)onnxc_aligned_alloc((size_t)expected_size);
    if (!copy) return fail(ONNXC_ERR_NOMEM, "cannot allocate %llu bytes for %s", (unsigned long long)expected_size, what);
    if (expected_size) memcpy(copy, payload, (size_t)expected_size);
    out->data = copy;
    out->owned = copy;
  }
  out->size = expected_size;
  return ONNXC_OK;
}

void onnxc_weights_free(onnxc_weights* w) {
  if (!w) return;
  onnxc_aligned_free(w->owned);
  memset(w, 0, sizeof *w);
}

/* ---------------------------------------------------------------- entry point arguments */

/* t's type, "float32[1,3,224,224]", in buf. */
static const char* type_of(char* buf, size_t cap, const onnxc_tensor_info* t) {
  return onnxc_format_type(buf, cap, t->dtype, t->ndim, t->shape);
}

int onnxc_check_buffers(const char* fn, const char* kind, const onnxc_tensor_info* t, int n,
                        const void* const* bufs, const size_t* bytes) {
  char type[512]; /* the tensor's type, written for a failure only: this runs on every inference */
  for (int k = 0; k < n; ++k) {
    if (!bufs[k])
      return fail(ONNXC_ERR_ARG, "%s: %s %d '%s' (%s): the buffer is NULL", fn, kind, k, t[k].name, type_of(type, sizeof type, &t[k]));
    size_t want = t[k].numel * onnxc_dtype_size(t[k].dtype);
    if (bytes && bytes[k] != want)
      return fail(ONNXC_ERR_SIZE, "%s: %s %d '%s' (%s): %zu bytes given, %zu expected", fn, kind, k, t[k].name,
                  type_of(type, sizeof type, &t[k]), bytes[k], want);
  }
  return ONNXC_OK;
}

int onnxc_batch_of_sizes(const char* fn, const char* kind, const onnxc_tensor_info* t, int n, const size_t* bytes,
                         int64_t max_batch, int64_t* batch) {
  return onnxc_count_of_sizes(fn, kind, t, n, bytes, 0, max_batch, batch);
}

int onnxc_count_of_sizes(const char* fn, const char* kind, const onnxc_tensor_info* t, int n, const size_t* bytes, int axis,
                         int64_t max_count, int64_t* count) {
  char type[512]; /* as in onnxc_check_buffers: for a failure only */
  char along[48] = ""; /* the batch's items, or rows along another dimension */
  if (axis > 0) snprintf(along, sizeof along, " along dimension %d", axis);
  const char* unit = axis > 0 ? "rows" : "items";
  const char* whole = axis > 0 ? "the run has" : "the batch is";
  for (int k = 0; k < n; ++k) {
    const size_t item = max_count > 0 ? t[k].numel / (size_t)max_count * onnxc_dtype_size(t[k].dtype) : 0;
    if (item == 0) {
      if (bytes[k] != 0)
        return fail(ONNXC_ERR_SIZE, "%s: %s %d '%s' (%s) is empty: %zu bytes given, 0 expected", fn, kind, k, t[k].name,
                    type_of(type, sizeof type, &t[k]), bytes[k]);
      continue;
    }
    const size_t b = bytes[k] / item;
    if (bytes[k] % item != 0 || b < 1 || b > (size_t)max_count)
      return fail(ONNXC_ERR_SIZE, "%s: %s %d '%s' (%s): %zu bytes given, expected 1 to %lld %s of %zu bytes%s", fn, kind, k, t[k].name,
                  type_of(type, sizeof type, &t[k]), bytes[k], (long long)max_count, unit, item, along);
    if (*count != 0 && (int64_t)b != *count)
      return fail(ONNXC_ERR_SIZE, "%s: %s %d '%s' (%s): %zu bytes given, %zu %s of %zu bytes, but %s %lld %s", fn, kind, k, t[k].name,
                  type_of(type, sizeof type, &t[k]), bytes[k], b, unit, item, whole, (long long)*count, unit);
    *count = (int64_t)b;
  }
  if (*count == 0 && n > 0) *count = max_count;  /* every item empty: any count is none */
  return ONNXC_OK;
}

void onnxc_tensor_info_batch(const onnxc_tensor_info* info, int64_t batch, onnxc_tensor_info* out, int64_t* shape) {
  onnxc_tensor_info_count(info, 0, batch, out, shape);
}

void onnxc_tensor_info_count(const onnxc_tensor_info* info, int axis, int64_t count, onnxc_tensor_info* out, int64_t* shape) {
  *out = *info;
  for (int d = 0; d < info->ndim && d < ONNXC_MAX_NDIM; ++d) shape[d] = info->shape[d];
  if (axis >= 0 && info->ndim > axis && info->shape[axis] > 0) {
    out->numel = info->numel / (size_t)info->shape[axis] * (size_t)count;
    shape[axis] = count;
  }
  out->shape = shape;
}

/* ---------------------------------------------------------------- .npy header parsing */

typedef struct {
  const char* s;
  size_t n, i;
} cursor;

static void skip_ws(cursor* c) {
  while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r')) c->i++;
}

static int eat(cursor* c, char ch) {
  skip_ws(c);
  if (c->i < c->n && c->s[c->i] == ch) {
    c->i++;
    return 1;
  }
  return 0;
}

static int eat_word(cursor* c, const char* w) {
  skip_ws(c);
  size_t len = strlen(w);
  if (c->n - c->i >= len && memcmp(c->s + c->i, w, len) == 0) {
    c->i += len;
    return 1;
  }
  return 0;
}

static int parse_str(cursor* c, char* out, size_t cap) {
  skip_ws(c);
  if (c->i >= c->n || (c->s[c->i] != '\'' && c->s[c->i] != '"')) return 0;
  char q = c->s[c->i++];
  size_t start = c->i;
  while (c->i < c->n && c->s[c->i] != q) c->i++;
  if (c->i >= c->n || c->i - start >= cap) return 0;
  memcpy(out, c->s + start, c->i - start);
  out[c->i - start] = '\0';
  c->i++;
  return 1;
}

static int parse_dim(cursor* c, int64_t* v) {
  skip_ws(c);
  size_t start = c->i;
  int64_t x = 0;
  while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
    int d = c->s[c->i++] - '0';
    if (x > (INT64_MAX - d) / 10) return 0;
    x = x * 10 + d;
  }
  if (c->i == start) return 0;
  if (c->i < c->n && c->s[c->i] == 'L') c->i++; /* Python 2 long literal in old files */
  *v = x;
  return 1;
}

/* Parses "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }". Returns 1 on success. */
static int parse_npy_dict(cursor* c, char* descr, size_t descr_cap, int* fortran, int64_t* shape, int* ndim) {
  int seen_descr = 0, seen_fortran = 0, seen_shape = 0;
  if (!eat(c, '{')) return 0;
  while (!eat(c, '}')) {
    char key[32];
    if (!parse_str(c, key, sizeof key) || !eat(c, ':')) return 0;
    if (strcmp(key, "descr") == 0 && !seen_descr) {
      if (!parse_str(c, descr, descr_cap)) return 0;
      seen_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
      if (eat_word(c, "True")) *fortran = 1;
      else if (eat_word(c, "False")) *fortran = 0;
      else return 0;
      seen_fortran = 1;
    } else if (strcmp(key, "shape") == 0 && !seen_shape) {
      if (!eat(c, '(')) return 0;
      *ndim = 0;
      while (!eat(c, ')')) {
        if (*ndim >= ONNXC_MAX_NDIM || !parse_dim(c, &shape[*ndim])) return 0;
        (*ndim)++;
        if (!eat(c, ',')) {
          if (!eat(c, ')')) return 0;
          break;
        }
      }
      seen_shape = 1;
    } else {
      return 0; /* unknown or repeated key */
    }
    if (!eat(c, ',')) {
      if (!eat(c, '}')) return 0;
      break;
    }
  }
  skip_ws(c);
  return seen_descr && seen_fortran && seen_shape && c->i == c->n;
}

/* Compares two shapes ignoring leading and trailing 1s. */
static int same_shape_mod_ones(const int64_t* a, int na, const int64_t* b, int nb) {
  int a0 = 0, b0 = 0;
  while (a0 < na && a[a0] == 1) a0++;
  while (na > a0 && a[na - 1] == 1) na--;
  while (b0 < nb && b[b0] == 1) b0++;
  while (nb > b0 && b[nb - 1] == 1) nb--;
  if (na - a0 != nb - b0) return 0;
  for (int i = 0; i < na - a0; ++i)
    if (a[a0 + i] != b[b0 + i]) return 0;
  return 1;
}

static int ends_with_npy(const char* path) {
  size_t n = strlen(path);
  if (n < 4) return 0;
  const char* e = path + n - 4;
  return e[0] == '.' && (e[1] == 'n' || e[1] == 'N') && (e[2] == 'p' || e[2] == 'P') && (e[3] == 'y' || e[3] == 'Y');
}

/* Validates info and returns its byte size in *bytes. */
static int check_info(const onnxc_tensor_info* info, const void* buf, size_t* bytes) {
  if (!info) return fail(ONNXC_ERR_ARG, "tensor info is NULL");
  size_t es = onnxc_dtype_size(info->dtype);
  if (es == 0) return fail(ONNXC_ERR_DTYPE, "tensor '%s' has unsupported dtype %d", info->name ? info->name : "?", info->dtype);
  if (info->ndim < 0 || info->ndim > ONNXC_MAX_NDIM || (info->ndim > 0 && !info->shape))
    return fail(ONNXC_ERR_ARG, "tensor '%s' has invalid rank %d", info->name ? info->name : "?", info->ndim);
  if (info->numel > SIZE_MAX / es) return fail(ONNXC_ERR_SIZE, "tensor '%s' is too large", info->name ? info->name : "?");
  *bytes = info->numel * es;
  if (!buf && *bytes) return fail(ONNXC_ERR_ARG, "tensor '%s' buffer is NULL", info->name ? info->name : "?");
  return ONNXC_OK;
}

/* Reads a .npy file's prefix and header (f at its start, fsize bytes): its descr, shape and
 * fortran_order, leaving f at the data, *data_bytes of them. */
static int npy_header(FILE* f, uint64_t fsize, const char* path, char* descr, size_t descr_cap, int64_t* shape, int* ndim,
                      uint64_t* data_bytes) {
  unsigned char pre[12];
  if (fsize < 10) return fail(ONNXC_ERR_FORMAT, "file '%s' is %llu bytes, too short for a .npy file", path, (unsigned long long)fsize);
  int rc = read_exact(f, pre, 10, "tensor file", path);
  if (rc) return rc;
  if (memcmp(pre, "\x93NUMPY", 6) != 0) return fail(ONNXC_ERR_FORMAT, "file '%s' is not a .npy file (bad magic)", path);
  unsigned major = pre[6];
  if (major < 1 || major > 3)
    return fail(ONNXC_ERR_VERSION, "file '%s' is .npy format version %u.%u, supported are 1.0, 2.0 and 3.0", path, major, pre[7]);
  uint64_t prefix = major == 1 ? 10 : 12, hlen;
  if (major == 1) {
    hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
  } else {
    if (fsize < 12) return fail(ONNXC_ERR_FORMAT, "file '%s': truncated .npy header", path);
    rc = read_exact(f, pre + 10, 2, "tensor file", path);
    if (rc) return rc;
    hlen = rd_u32(pre + 8);
  }
  if (hlen > fsize - prefix)
    return fail(ONNXC_ERR_FORMAT, "file '%s': .npy header claims %llu bytes but the file has only %llu after the prefix",
                path, (unsigned long long)hlen, (unsigned long long)(fsize - prefix));
  if (hlen > (1u << 20)) return fail(ONNXC_ERR_FORMAT, "file '%s': .npy header of %llu bytes is implausibly long", path, (unsigned long long)hlen);
  char* h = (char*)malloc((size_t)hlen + 1);
  if (!h) return fail(ONNXC_ERR_NOMEM, "cannot allocate .npy header");
  rc = read_exact(f, h, (size_t)hlen, "tensor file", path);
  int fortran = 0;
  if (!rc) {
    cursor c = {h, (size_t)hlen, 0};
    if (!parse_npy_dict(&c, descr, descr_cap, &fortran, shape, ndim))
      rc = fail(ONNXC_ERR_FORMAT, "file '%s': malformed .npy header near byte %zu", path, (size_t)prefix + c.i);
  }
  free(h);
  if (rc) return rc;
  if (fortran) return fail(ONNXC_ERR_FORMAT, "file '%s' is in Fortran order; save it in C order", path);
  *data_bytes = fsize - prefix - hlen;
  return ONNXC_OK;
}

/* A .npy descr against info's dtype: ONNXC_OK with the file's dtype row in *row. */
static int npy_dtype(const char* path, const char* descr, const onnxc_tensor_info* info, const dtype_row** row) {
  /* dtype: byte-order character then kind+size; 1-byte types take any byte-order character */
  const dtype_row* want = dtype_find(info->dtype);
  const dtype_row* got = NULL;
  char bo = descr[0];
  if ((bo == '<' || bo == '|' || bo == '>' || bo == '=') && strlen(descr) == 3) {
    for (size_t i = 0; i < NUM_DTYPES; ++i)
      if (strcmp(descr + 1, k_dtypes[i].npy) == 0) got = &k_dtypes[i];
    if (got && got->size > 1 && bo != '<' && bo != '=')
      return fail(ONNXC_ERR_DTYPE, "file '%s' has %s data '%s'; only little-endian is supported", path,
                  bo == '>' ? "big-endian" : "unordered", descr);
  }
  if (!got) return fail(ONNXC_ERR_DTYPE, "file '%s' has unsupported .npy dtype '%s', expected %s", path, descr, want->name);
  if (got != want) return fail(ONNXC_ERR_DTYPE, "file '%s' holds %s data, expected %s", path, got->name, want->name);
  *row = got;
  return ONNXC_OK;
}

static int read_npy(FILE* f, uint64_t fsize, const char* path, const onnxc_tensor_info* info, void* dst, size_t bytes) {
  char descr[16] = "";
  int ndim = 0;
  int64_t shape[ONNXC_MAX_NDIM];
  uint64_t have = 0;
  int rc = npy_header(f, fsize, path, descr, sizeof descr, shape, &ndim, &have);
  if (rc) return rc;
  const dtype_row* got = NULL;
  rc = npy_dtype(path, descr, info, &got);
  if (rc) return rc;

  char fs[600], es[600];
  onnxc_format_type(fs, sizeof fs, got->code, ndim, shape);
  onnxc_format_type(es, sizeof es, info->dtype, info->ndim, info->shape);
  uint64_t count = 1;
  for (int i = 0; i < ndim; ++i) count = (shape[i] != 0 && count > UINT64_MAX / (uint64_t)shape[i]) ? UINT64_MAX : count * (uint64_t)shape[i];
  if (count != (uint64_t)info->numel)
    return fail(ONNXC_ERR_SHAPE, "file '%s' holds %s (%llu elements), expected %s (%zu elements)", path, fs,
                (unsigned long long)count, es, info->numel);
  if (!same_shape_mod_ones(shape, ndim, info->shape, info->ndim))
    return fail(ONNXC_ERR_SHAPE, "file '%s' holds %s, expected %s", path, fs, es);

  if (have != bytes)
    return fail(ONNXC_ERR_SIZE, "file '%s' has %llu bytes of data after its .npy header, expected %zu for %s", path,
                (unsigned long long)have, bytes, es);
  return read_exact(f, dst, bytes, "tensor file", path);
}

int onnxc_read_tensor_file(const char* path, const onnxc_tensor_info* info, void* dst) {
  size_t bytes = 0;
  int rc = check_info(info, dst, &bytes);
  if (rc) return rc;
  FILE* f = NULL;
  uint64_t fsize = 0;
  rc = open_read(path, "tensor file", &f, &fsize);
  if (rc) return rc;
  if (ends_with_npy(path)) {
    rc = read_npy(f, fsize, path, info, dst, bytes);
  } else if (fsize != bytes) {
    char es[600];
    rc = fail(ONNXC_ERR_SIZE, "raw file '%s' is %llu bytes, expected %zu for %s", path, (unsigned long long)fsize,
              bytes, onnxc_format_type(es, sizeof es, info->dtype, info->ndim, info->shape));
  } else {
    rc = read_exact(f, dst, bytes, "tensor file", path);
  }
  fclose(f);
  return rc;
}

int onnxc_tensor_file_batch(const char* path, const onnxc_tensor_info* info, int64_t max_batch, int64_t* batch) {
  return onnxc_tensor_file_count(path, info, 0, max_batch, batch);
}

/* The run-time sizes a tensor file holds: counts[i] entries, 1 to maxes[i], along dimension
 * axes[i] (ascending; the first 0 when the batch is one of them), the tensor's other dimensions
 * as info's (which holds the maxima), those before the last axis 1 unless listed. A raw file's
 * size gives one count only, or the maxima of several when it holds them all. */
static int tensor_file_counts(const char* path, const onnxc_tensor_info* info, int naxes, const int* axes, const int64_t* maxes,
                              int64_t* counts) {
  size_t bytes = 0;
  int rc = check_info(info, info, &bytes); /* no buffer here: info stands in for it */
  if (rc) return rc;
  const int last = axes[naxes - 1];
  size_t item = bytes;  /* bytes of one entry of the last axis */
  for (int i = 0; i < naxes; ++i) {
    if (axes[i] < 0 || info->ndim <= axes[i] || maxes[i] < 1 || info->shape[axes[i]] != maxes[i] || (i && axes[i] <= axes[i - 1]))
      return fail(ONNXC_ERR_ARG, "tensor '%s' does not hold %lld items along dimension %d", info->name ? info->name : "?",
                  (long long)maxes[i], axes[i]);
    item /= (size_t)maxes[i];
  }
  for (int d = 0, i = 0; d < last; ++d) {
    if (i < naxes && axes[i] == d) {
      ++i;
      continue;
    }
    if (info->shape[d] != 1) return fail(ONNXC_ERR_ARG, "tensor '%s' has dimensions other than 1 before dimension %d", info->name, last);
  }
  char es[600];  /* one entry's type: "float32[3,224,224]" */
  onnxc_format_type(es, sizeof es, info->dtype, info->ndim - 1 - last, info->shape + 1 + last);
  FILE* f = NULL;
  uint64_t fsize = 0;
  rc = open_read(path, "tensor file", &f, &fsize);
  if (rc) return rc;
  if (ends_with_npy(path)) {
    char descr[16] = "", fs[600];
    int ndim = 0;
    int64_t shape[ONNXC_MAX_NDIM];
    uint64_t have = 0;
    const dtype_row* got = NULL;
    rc = npy_header(f, fsize, path, descr, sizeof descr, shape, &ndim, &have);
    if (!rc) rc = npy_dtype(path, descr, info, &got);
    if (!rc) {
      onnxc_format_type(fs, sizeof fs, got->code, ndim, shape);
      int same = ndim == info->ndim;
      for (int d = 0, i = 0; same && d < ndim; ++d) {
        if (i < naxes && axes[i] == d) {
          same = shape[d] >= 1 && shape[d] <= maxes[i];
          ++i;
        } else {
          same = shape[d] == info->shape[d];
        }
      }
      if (same) {
        for (int i = 0; i < naxes; ++i) counts[i] = shape[axes[i]];
      } else if (naxes == 2) {
        rc = fail(ONNXC_ERR_SHAPE, "file '%s' holds %s, expected 1 to %lld items (its first dimension, the batch) of 1 to %lld rows "
                                   "along dimension %d of %s", path, fs, (long long)maxes[0], (long long)maxes[1], axes[1], es);
      } else {
        rc = last == 0 ? fail(ONNXC_ERR_SHAPE, "file '%s' holds %s, expected 1 to %lld items of %s (its first dimension is the batch)", path,
                              fs, (long long)maxes[0], es)
                       : fail(ONNXC_ERR_SHAPE, "file '%s' holds %s, expected 1 to %lld rows of %s along dimension %d", path, fs,
                              (long long)maxes[0], es, last);
      }
    }
  } else if (naxes > 1) {
    /* b * n entries of `item` bytes: only the most of both is a size no other pair gives. */
    if (fsize == (uint64_t)bytes) {
      for (int i = 0; i < naxes; ++i) counts[i] = maxes[i];
    } else {
      rc = fail(ONNXC_ERR_ARG, "raw file '%s' is %llu bytes: its size gives the batch times the rows along dimension %d, not each "
                "(a raw file holds the most of both, %zu bytes): give a .npy file", path, (unsigned long long)fsize, last, bytes);
    }
  } else if (item == 0 || fsize % item != 0 || fsize / item < 1 || fsize / item > (uint64_t)maxes[0]) {
    rc = fail(ONNXC_ERR_SIZE, "raw file '%s' is %llu bytes, expected 1 to %lld items of %zu bytes for %s", path, (unsigned long long)fsize,
              (long long)maxes[0], item, es);
  } else {
    counts[0] = (int64_t)(fsize / item);
  }
  fclose(f);
  return rc;
}

int onnxc_tensor_file_count(const char* path, const onnxc_tensor_info* info, int axis, int64_t max_batch, int64_t* batch) {
  return tensor_file_counts(path, info, 1, &axis, &max_batch, batch);
}

int onnxc_tensor_file_dims(const char* path, const onnxc_tensor_info* info, int64_t max_batch, int axis, int64_t max_size, int64_t* batch,
                           int64_t* n) {
  const int axes[2] = {0, axis};
  const int64_t maxes[2] = {max_batch, max_size};
  int64_t counts[2] = {0, 0};
  int rc = tensor_file_counts(path, info, 2, axes, maxes, counts);
  if (!rc) *batch = counts[0], *n = counts[1];
  return rc;
}

int onnxc_write_tensor_file(const char* path, const onnxc_tensor_info* info, const void* src) {
  size_t bytes = 0;
  int rc = check_info(info, src, &bytes);
  if (rc) return rc;
  if (!path) return fail(ONNXC_ERR_ARG, "tensor file path is NULL");
  char hdr[1024];
  size_t hlen = 0;
  if (ends_with_npy(path)) {
    const dtype_row* d = dtype_find(info->dtype);
    int n = snprintf(hdr + 10, sizeof hdr - 10, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     d->size == 1 ? '|' : '<', d->npy);
    size_t len = 10 + (size_t)n;
    for (int i = 0; i < info->ndim; ++i) {
      n = snprintf(hdr + len, sizeof hdr - len, "%lld,%s", (long long)info->shape[i], info->ndim == 1 ? "" : " ");
      len += (size_t)n;
    }
    if (info->ndim > 1) len -= 2; /* drop the last ", " */
    len += (size_t)snprintf(hdr + len, sizeof hdr - len, "), }");
    while ((len + 1) % 64 != 0) hdr[len++] = ' ';
    hdr[len++] = '\n';
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (char)((len - 10) & 0xff);
    hdr[9] = (char)((len - 10) >> 8);
    hlen = len;
  }
  FILE* f = fopen(path, "wb");
  if (!f) return fail(ONNXC_ERR_IO, "cannot create tensor file '%s': %s", path, strerror(errno));
  int ok = fwrite(hdr, 1, hlen, f) == hlen && (bytes == 0 || fwrite(src, 1, bytes, f) == bytes);
  if (fclose(f) != 0) ok = 0;
  if (!ok) return fail(ONNXC_ERR_IO, "cannot write tensor file '%s': %s", path, strerror(errno));
  return ONNXC_OK;
}

#undef fail

#endif /* ONNXC_RUNTIME_C */
