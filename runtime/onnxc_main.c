/* onnxc_main.c — generic command-line driver for any onnxc-generated model.
 *
 * It talks to the model only through the onnxc_model_info that `onnxc_main_model` points to
 * (names, dtypes, shapes, create/run_v/destroy/last_error). A generated NAME.c defines that
 * pointer when built with -DONNXC_MAIN_MODEL, so this file does not depend on the model and can
 * be compiled once and linked with any number of models:
 *   cc -std=c11 -O2 -c onnxc_main.c -o onnxc_main.o
 *   cc -std=c11 -O3 -fopenmp -DONNXC_MAIN_MODEL resnet50.c onnxc_main.o -lm -o resnet50
 * (or in one step: cc ... -DONNXC_MAIN_MODEL resnet50.c onnxc_main.c -lm -o resnet50). It needs no
 * OpenMP itself: --threads becomes the instance's onnxc_options.num_threads.
 * Usage: NAME [--weights FILE] [--input NAME=FILE]... [--output NAME=FILE]... [--bench N]
 *             [--threads N] [--seed S] [--batch N] [--profile] [--profile-out FILE] [--quiet]
 *             [--unsafe-skip-cpu-check] [--help]
 *
 * Conventions: options also accept the --opt=VALUE form; inputs not given are filled
 * deterministically (xorshift64*, floats uniform in [-1,1), integer/bool inputs zero); the first
 * run produces the reported/written outputs and doubles as the warm-up for --bench. Errors go to
 * stderr as "NAME: error: ..."; exit status 2 for usage errors, 1 for runtime failures, and every
 * allocation is released on every path. Before anything else, main checks that this CPU has
 * what the flags of the build let the compiler use (onnxc_check_cpu: exit 1 with the message
 * otherwise; --unsafe-skip-cpu-check skips it and the model's own check, at the user's risk).
 * Tensor files are read and written by this file's own private copy of the runtime; the
 * model's failures are described by its last_error().
 * A model compiled with --dynamic (max_batch > 0) runs the batch its input files hold (their
 * first dimension, the same for all), else --batch N's, else its most; the outputs have that
 * many items. With a run-time size other than the batch (dynamic_axis > 0: a transformer's
 * tokens) the same along that dimension; with both (max_size > 0) the .npy files' first
 * dimension and dimension size_axis, the model run through run_dims.
 * --profile (models built with compile-model --profile): after the timed runs, a table of the
 * model's functions sorted by time, with GFLOP/s or GB/s from the compiler's counts and the
 * share of this machine's peak, measured here by two probes: one core's FMA throughput (12
 * independent vector multiply-add chains) times the threads, and one thread's copy bandwidth.
 * --profile-out FILE also writes the functions' times as tab-separated lines, "seconds per run,
 * op types, kernel, ONNX node names (comma-separated)", after '#' comment lines: the measured
 * costs compile-model --cpu-profile reads. A model built with --device cuda --profile times its nodes on
 * the GPU (CUDA events): the table has no CPU peak, and the file is what compile-model --gpu-profile reads.
 *
 * Known gaps: the default weights path uses /proc/self/exe (Linux), falling back to argv[0]'s
 * directory (no PATH search); tensor files must fit in memory next to the model.
 */
#include "onnxc_runtime.c" /* first: it sets _POSIX_C_SOURCE (also for readlink) */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Defined by the model's C when built with -DONNXC_MAIN_MODEL. */
extern const onnxc_model_info* const onnxc_main_model;
#define MODEL (*onnxc_main_model)

#define DEFAULT_SEED 42u

static const char* g_prog = "onnxc-model";

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static void error_msg(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: error: ", g_prog);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Prints "NAME: error: what: <status string>[: <detail>]" and returns 1. The detail is the
 * model's (model_error) or this file's runtime's (tensor files). */
static int report_error(const char* what, int rc, int model_error) {
  const char* d = model_error ? MODEL.last_error() : onnxc_last_error_detail();
  fprintf(stderr, "%s: error: %s: %s%s%s\n", g_prog, what, onnxc_status_string(rc), d[0] ? ": " : "", d);
  return 1;
}

static void print_tensor_list(FILE* out, const onnxc_tensor_info* t, int n) {
  char type[512];
  for (int i = 0; i < n; ++i)
    fprintf(out, "  %-20s %s\n", t[i].name, onnxc_format_type(type, sizeof type, t[i].dtype, t[i].ndim, t[i].shape));
}

static void usage(FILE* out) {
  const char* wf = MODEL.weights_file && MODEL.weights_file[0] ? MODEL.weights_file : "(none)";
  fprintf(out,
          "usage: %s [--weights FILE] [--input NAME=FILE]... [--output NAME=FILE]... [--bench N]\n"
          "       %*s [--threads N] [--seed S] [--profile] [--profile-out FILE] [--quiet] [--help]\n"
          "Runs the onnxc-compiled model '%s'.\n"
          "  --weights FILE      weights file (default: %s next to this executable)\n"
          "  --input NAME=FILE   read input NAME from FILE (.npy, or raw little-endian bytes);\n"
          "                      a single-input model also takes --input FILE. Inputs not given\n"
          "                      get pseudo-random data (floats in [-1,1), integers and bools 0)\n"
          "  --output NAME=FILE  write output NAME to FILE (.npy if FILE ends in .npy, else raw)\n"
          "  --bench N           after the first run, time N more runs; print median/min latency\n"
          "  --threads N         number of OpenMP threads\n"
          "  --seed S            seed for the random inputs (default %u)\n"
          "  --batch N           a model compiled with --dynamic: run N items (default: as many as\n"
          "                      the input files hold, else the most the model takes)\n"
          "  --profile           time each of the model's functions over the --bench runs (default 10)\n"
          "                      and print them sorted by time (needs compile-model --profile)\n"
          "  --profile-out FILE  --profile, and write the times to FILE (tab-separated: seconds\n"
          "                      per run, ops, kernel, nodes), for compile-model --cpu-profile\n"
          "  --quiet             do not print the input/output summary\n"
          "  --unsafe-skip-cpu-check  run even where the CPU check fails: this CPU lacks an\n"
          "                      instruction set extension the build uses (an illegal instruction\n"
          "                      follows), or runs SVE at another vector length (wrong results)\n"
          "  --help              show this text\n",
          g_prog, (int)strlen(g_prog), "", MODEL.model_name, wf, DEFAULT_SEED);
  fprintf(out, "inputs:\n");
  print_tensor_list(out, MODEL.inputs, MODEL.num_inputs);
  fprintf(out, "outputs:\n");
  print_tensor_list(out, MODEL.outputs, MODEL.num_outputs);
  if (MODEL.max_batch > 0 && MODEL.max_size > 0)
    fprintf(out, "run-time sizes: the first dimension of every input and output is 1 to %lld items, and dimension %d\n"
                 "1 to %lld rows, given at run time (compile-model --dynamic): the .npy input files' (else --batch N\n"
                 "and the most rows)\n",
            (long long)MODEL.max_batch, MODEL.size_axis, (long long)MODEL.max_size);
  else if (MODEL.max_batch > 0 && MODEL.dynamic_axis > 0)
    fprintf(out, "run-time size: dimension %d of every input and output is 1 to %lld rows, given at run time\n"
                 "(compile-model --dynamic): the input files' dimension %d, else --batch N\n",
            MODEL.dynamic_axis, (long long)MODEL.max_batch, MODEL.dynamic_axis);
  else if (MODEL.max_batch > 0)
    fprintf(out, "batch: the first dimension of every input and output is 1 to %lld items, given at run time\n"
                 "(compile-model --dynamic): the input files' first dimension, else --batch N\n",
            (long long)MODEL.max_batch);
}

static void list_names(const char* kind, const onnxc_tensor_info* t, int n) {
  fprintf(stderr, "%s: valid %s names:", g_prog, kind);
  for (int i = 0; i < n; ++i) fprintf(stderr, " '%s'", t[i].name);
  fprintf(stderr, "%s\n", n ? "" : " (none)");
}

/* Matches argv[*i] against option `name`: returns 0 if it is another option; otherwise 1 and sets
 * *val to the value ("--name VALUE" or "--name=VALUE"), or to NULL when the value is missing. */
static int take_option(int argc, char** argv, int* i, const char* name, const char** val) {
  size_t n = strlen(name);
  const char* a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
  } else if (a[n] == '\0') {
    *val = *i + 1 < argc ? argv[++*i] : NULL;
  } else {
    return 0;
  }
  return 1;
}

static int parse_u64(const char* s, uint64_t* v) {
  if (!s || !*s || *s == '-' || *s == '+') return 0;
  char* end = NULL;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 0);
  if (errno || *end) return 0;
  *v = x;
  return 1;
}

/* Resolves "NAME=FILE" (or just "FILE" for a single tensor) to a tensor index; -1 if unknown.
 * The longest matching name wins, so names containing '=' work. */
static int resolve_spec(const onnxc_tensor_info* t, int n, const char* spec, const char** file) {
  int best = -1;
  size_t best_len = 0;
  for (int k = 0; k < n; ++k) {
    size_t len = strlen(t[k].name);
    if (strncmp(spec, t[k].name, len) == 0 && spec[len] == '=' && (best < 0 || len > best_len)) {
      best = k;
      best_len = len;
    }
  }
  if (best >= 0) {
    *file = spec + best_len + 1;
  } else if (n == 1 && !strchr(spec, '=')) {
    best = 0;
    *file = spec;
  }
  return best;
}

/* Handles one --input/--output spec; returns 0 or 2 (usage error, already reported). */
static int assign_spec(const char* kind, const onnxc_tensor_info* t, int n, const char* spec, const char** files) {
  const char* file = NULL;
  int k = resolve_spec(t, n, spec, &file);
  if (k < 0) {
    const char* eq = strchr(spec, '=');
    if (eq)
      error_msg("unknown %s name '%.*s'", kind, (int)(eq - spec), spec);
    else
      error_msg("the model has %d %ss, so --%s needs NAME=FILE, got '%s'", n, kind, kind, spec);
    list_names(kind, t, n);
    return 2;
  }
  if (!*file) {
    error_msg("--%s %s: empty file name", kind, spec);
    return 2;
  }
  if (files[k]) {
    error_msg("%s '%s' given twice ('%s' and '%s')", kind, t[k].name, files[k], file);
    return 2;
  }
  files[k] = file;
  return 0;
}

/* "<dir of this executable>/<file>"; malloc'ed, NULL on allocation failure. */
static char* default_weights_path(const char* argv0, const char* file) {
  char exe[4096];
  const char* base = argv0 ? argv0 : "";
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0 && (size_t)n < sizeof exe - 1) {
    exe[n] = '\0';
    base = exe;
  }
  const char* slash = strrchr(base, '/');
  size_t dir_len = slash ? (size_t)(slash - base) + 1 : 0, file_len = strlen(file);
  char* path = (char*)malloc(dir_len + file_len + 1);
  if (!path) return NULL;
  memcpy(path, base, dir_len);
  memcpy(path + dir_len, file, file_len + 1);
  return path;
}

/* ---------------------------------------------------------------- inputs and outputs */

static uint64_t xorshift64star(uint64_t* s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static void fill_random(void* buf, const onnxc_tensor_info* t, uint64_t* state) {
  if (t->dtype == ONNXC_F32) {
    float* p = (float*)buf;
    for (size_t i = 0; i < t->numel; ++i) p[i] = (float)((double)(xorshift64star(state) >> 40) * 0x1p-23 - 1.0);
  } else if (t->dtype == ONNXC_F64) {
    double* p = (double*)buf;
    for (size_t i = 0; i < t->numel; ++i) p[i] = (double)(xorshift64star(state) >> 11) * 0x1p-52 - 1.0;
  } else if (t->dtype == ONNXC_F16) {
    uint16_t* p = (uint16_t*)buf;
    for (size_t i = 0; i < t->numel; ++i) p[i] = onnxc_f32_to_f16((float)((double)(xorshift64star(state) >> 40) * 0x1p-23 - 1.0));
  } /* integer and bool inputs stay zero (buffers are zero-filled) */
}

static double elem(const void* p, int dtype, size_t i) {
  switch (dtype) {
    case ONNXC_F32: return ((const float*)p)[i];
    case ONNXC_F64: return ((const double*)p)[i];
    case ONNXC_U8: case ONNXC_BOOL: return ((const uint8_t*)p)[i];
    case ONNXC_I8: return ((const int8_t*)p)[i];
    case ONNXC_U16: return ((const uint16_t*)p)[i];
    case ONNXC_I16: return ((const int16_t*)p)[i];
    case ONNXC_I32: return ((const int32_t*)p)[i];
    case ONNXC_U32: return ((const uint32_t*)p)[i];
    case ONNXC_I64: return (double)((const int64_t*)p)[i];
    case ONNXC_U64: return (double)((const uint64_t*)p)[i];
    case ONNXC_F16: return onnxc_f16_to_f32(((const uint16_t*)p)[i]);
    default: return 0.0;
  }
}

static void print_elem(const void* p, int dtype, size_t i) {
  if (dtype == ONNXC_I64) printf(" %lld", (long long)((const int64_t*)p)[i]);
  else if (dtype == ONNXC_U64) printf(" %llu", (unsigned long long)((const uint64_t*)p)[i]);
  else if (dtype == ONNXC_F32 || dtype == ONNXC_F64 || dtype == ONNXC_F16) printf(" %.6g", elem(p, dtype, i));
  else printf(" %.0f", elem(p, dtype, i));
}

static void summarize(const onnxc_tensor_info* t, const void* p) {
  char type[512];
  printf("output '%s' %s:", t->name, onnxc_format_type(type, sizeof type, t->dtype, t->ndim, t->shape));
  if (t->numel == 0) {
    printf(" (empty)\n");
    return;
  }
  double mn = INFINITY, mx = -INFINITY, sum = 0.0;
  size_t nans = 0;
  for (size_t i = 0; i < t->numel; ++i) {
    double v = elem(p, t->dtype, i);
    if (isnan(v)) {
      nans++;
      continue;
    }
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    sum += v;
  }
  printf(" min %.6g max %.6g mean %.6g", mn, mx, nans == t->numel ? NAN : sum / (double)(t->numel - nans));
  if (nans) printf(" (%zu NaN)", nans);
  printf("\n  first:");
  for (size_t i = 0; i < t->numel && i < 8; ++i) print_elem(p, t->dtype, i);
  printf("%s\n", t->numel > 8 ? " ..." : "");

  int non1 = 0;
  for (int d = 0; d < t->ndim; ++d) non1 += t->shape[d] != 1;
  if (non1 != 1 || t->numel < 2) return;
  size_t idx[5];
  double val[5];
  int k = 0, want = t->numel < 5 ? (int)t->numel : 5;
  for (size_t i = 0; i < t->numel; ++i) {
    double v = elem(p, t->dtype, i);
    if (isnan(v) || (k == want && !(v > val[k - 1]))) continue;
    int j = k < want ? k++ : k - 1; /* insertion sort into the top-k list */
    while (j > 0 && v > val[j - 1]) {
      val[j] = val[j - 1];
      idx[j] = idx[j - 1];
      --j;
    }
    val[j] = v;
    idx[j] = i;
  }
  printf("  top-%d:", k);
  for (int j = 0; j < k; ++j) printf(" %zu (%.6g)", idx[j], val[j]);
  printf("\n");
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int digits(double ms) { return ms >= 0.1 ? 3 : ms >= 0.01 ? 4 : ms >= 0.001 ? 5 : 6; }

/* ---- --profile ---- */

#if defined(__GNUC__) || defined(__clang__)
#define ONNXC_HAVE_PROBE 1
/* The chains are vectors of the target's width: 12 of 64 bytes on AVX2 are 24 of its 16
 * registers and spill (the probe then measured 7.5 GFLOP/s per core on a Zen 3 whose FMAs do 99). */
#if defined(__AVX512F__)
#define ONNXC_PROBE_BYTES 64
#elif defined(__AVX__)
#define ONNXC_PROBE_BYTES 32
#else
#define ONNXC_PROBE_BYTES 16
#endif
typedef float probe_vec __attribute__((vector_size(ONNXC_PROBE_BYTES)));
/* One core's FP32 multiply-add throughput in GFLOP/s: 12 independent chains, enough to hide
 * the latency of two FMA units. a * m + c is contracted into FMAs where the target has them. */
#if defined(__clang__)
static double fma_probe(long iters) {
#pragma clang fp contract(fast)
#else
__attribute__((optimize("fp-contract=fast"))) static double fma_probe(long iters) {
#endif
  /* distinct starting values: identical chains would be computed once */
  const probe_vec z = {0};
  probe_vec a0 = z + 0.1f, a1 = z + 0.2f, a2 = z + 0.3f, a3 = z + 0.4f, a4 = z + 0.5f, a5 = z + 0.6f, a6 = z + 0.7f, a7 = z + 0.8f,
            a8 = z + 0.9f, a9 = z + 1.0f, a10 = z + 1.1f, a11 = z + 1.2f;
  const probe_vec m = z + 0.999999f, c = z + 1e-6f;
  double t0 = onnxc_now_seconds();
  for (long i = 0; i < iters; ++i) {
    a0 = a0 * m + c; a1 = a1 * m + c; a2 = a2 * m + c; a3 = a3 * m + c; a4 = a4 * m + c; a5 = a5 * m + c;
    a6 = a6 * m + c; a7 = a7 * m + c; a8 = a8 * m + c; a9 = a9 * m + c; a10 = a10 * m + c; a11 = a11 * m + c;
  }
  double t = onnxc_now_seconds() - t0;
  probe_vec sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  volatile float sink = sum[0];
  (void)sink;
  return t > 0 ? 12.0 * (ONNXC_PROBE_BYTES / 4) * 2 * (double)iters / t * 1e-9 : 0;
}
#endif

/* One thread's copy bandwidth in GB/s (bytes read plus written), over 64 MiB buffers. */
static double copy_probe(void) {
  const size_t n = (size_t)64 << 20;
  unsigned char* a = (unsigned char*)onnxc_aligned_alloc(n);
  unsigned char* b = (unsigned char*)onnxc_aligned_alloc(n);
  double best = 0;
  if (a && b) {
    memset(a, 1, n);
    memset(b, 2, n);
    for (int r = 0; r < 5; ++r) {
      double t0 = onnxc_now_seconds();
      memcpy(r % 2 ? a : b, r % 2 ? b : a, n);
      double t = onnxc_now_seconds() - t0;
      if (t > 0 && 2.0 * (double)n / t * 1e-9 > best) best = 2.0 * (double)n / t * 1e-9;
    }
  }
  onnxc_aligned_free(a);
  onnxc_aligned_free(b);
  return best;
}

typedef struct {
  int index;
  double seconds; /* per run */
} op_time;

static int cmp_op_time(const void* a, const void* b) {
  double x = ((const op_time*)a)->seconds, y = ((const op_time*)b)->seconds;
  return x < y ? 1 : x > y ? -1 : ((const op_time*)a)->index - ((const op_time*)b)->index;
}

/* The table of --profile: each function's time per run (after - before, over `runs`), sorted. */
static int print_profile(const onnxc_model_info* m, const double* before, const double* after, uint64_t runs, uint64_t threads,
                         double latency_ms) {
  op_time* t = (op_time*)malloc((size_t)m->num_ops * sizeof *t);
  if (!t) {
    error_msg("out of memory");
    return 1;
  }
  double total = 0;
  for (int k = 0; k < m->num_ops; ++k) {
    t[k].index = k;
    t[k].seconds = (after[k] - before[k]) / (double)runs;
    total += t[k].seconds;
  }
  qsort(t, (size_t)m->num_ops, sizeof *t, cmp_op_time);
  const int gpu = m->device && strcmp(m->device, "cuda") == 0;
  long nthreads = threads ? (long)threads : sysconf(_SC_NPROCESSORS_ONLN);
  if (nthreads < 1) nthreads = 1;
  double core = 0, peak = 0, bw = 0;
  if (gpu) { /* GPU times (CUDA events around each node's launches): no CPU peak to compare with */
    printf("profile: %llu runs on the GPU; %d nodes, %.3f ms per run in them (latency median %.3f ms, copies included)\n",
           (unsigned long long)runs, m->num_ops, 1e3 * total, latency_ms);
  } else {
#ifdef ONNXC_HAVE_PROBE
    long iters = 1 << 16;
    for (double dt = 0; dt < 0.05 && iters < (1L << 40); iters *= 4) {
      double t0 = onnxc_now_seconds();
      core = fma_probe(iters);
      dt = onnxc_now_seconds() - t0;
    }
#endif
    peak = core * (double)nthreads, bw = copy_probe();
    printf("profile: %llu runs, %ld thread%s; %d functions, %.3f ms per run in them (latency median %.3f ms)\n",
           (unsigned long long)runs, nthreads, nthreads == 1 ? "" : "s", m->num_ops, 1e3 * total, latency_ms);
    if (peak > 0) printf("peak: %.1f GFLOP/s (FMA probe: %.1f per core x %ld)", peak, core, nthreads);
    else printf("peak: unknown (no FMA probe in this build)");
    printf(", copy %.1f GB/s (one thread)\n", bw);
  }
  printf("%9s %6s %9s %6s %8s  %s\n", "ms", "%", "GFLOP/s", "%peak", "GB/s", "kernel | ops | nodes -> output");
  for (int i = 0; i < m->num_ops; ++i) {
    const onnxc_op_info* o = &m->ops[t[i].index];
    double s = t[i].seconds;
    double gf = s > 0 ? o->flops / s * 1e-9 : 0, gb = s > 0 ? o->bytes / s * 1e-9 : 0;
    char share[16] = "";
    if (o->flops > 0 && peak > 0) snprintf(share, sizeof share, "%.1f", 100.0 * gf / peak);
    printf("%9.4f %6.2f %9.2f %6s %8.2f  %s | %s | %s -> %s\n", 1e3 * s, total > 0 ? 100.0 * s / total : 0, gf, share, gb, o->kernel,
           o->ops, o->nodes, o->output);
  }
  free(t);
  return 0;
}

/* Writes `s` with tabs and line breaks as spaces (the fields of --profile-out are tab-separated). */
static void put_field(FILE* f, const char* s) {
  for (; s && *s; ++s) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* --profile-out: one line per function, in the model's order. */
static int write_profile(const char* path, const onnxc_model_info* m, const double* before, const double* after, uint64_t runs,
                         uint64_t threads) {
  FILE* f = fopen(path, "w");
  if (!f) {
    error_msg("--profile-out: cannot write '%s': %s", path, strerror(errno));
    return 1;
  }
  long nthreads = threads ? (long)threads : sysconf(_SC_NPROCESSORS_ONLN);
  if (m->device && strcmp(m->device, "cuda") == 0)
    fprintf(f, "# onnxc per-op profile of model %s: %llu runs on the GPU (CUDA events)\n", m->model_name, (unsigned long long)runs);
  else
    fprintf(f, "# onnxc per-op profile of model %s: %llu runs, %ld thread%s\n", m->model_name, (unsigned long long)runs, nthreads,
            nthreads == 1 ? "" : "s");
  fprintf(f, "# seconds per run\tops\tkernel\tnodes\n");
  for (int k = 0; k < m->num_ops; ++k) {
    fprintf(f, "%.9g\t", (after[k] - before[k]) / (double)runs);
    put_field(f, m->ops[k].ops);
    fputc('\t', f);
    put_field(f, m->ops[k].kernel);
    fputc('\t', f);
    put_field(f, m->ops[k].nodes);
    fputc('\n', f);
  }
  if (fclose(f) != 0) {
    error_msg("--profile-out: cannot write '%s'", path);
    return 1;
  }
  return 0;
}

/* One run; a model with two run-time sizes (run_dims) runs batch items of n rows. */
static int run_model(void* ctx, int64_t batch, int64_t n, void** in, const size_t* in_bytes, void** out, const size_t* out_bytes) {
  int rc = MODEL.run_dims ? MODEL.run_dims(ctx, batch, n, (const void* const*)in, in_bytes, (void* const*)out, out_bytes)
                          : MODEL.run_v(ctx, (const void* const*)in, in_bytes, (void* const*)out, out_bytes);
  return rc ? report_error("inference failed", rc, 1) : 0;
}

/* "3 items", "17 rows along dimension 1" or "3 items of 17 rows along dimension 1": a run's
 * sizes (b along the first run-time size, r along the second where the model has two). */
static const char* sizes_text(const onnxc_model_info* m, int64_t b, int64_t r, char* buf, size_t size) {
  if (m->max_size > 0)
    snprintf(buf, size, "%lld items of %lld rows along dimension %d", (long long)b, (long long)r, m->size_axis);
  else if (m->dynamic_axis > 0)
    snprintf(buf, size, "%lld rows along dimension %d", (long long)b, m->dynamic_axis);
  else
    snprintf(buf, size, "%lld items", (long long)b);
  return buf;
}

/* A model compiled with --dynamic: the batch of this run in *batch (with two run-time sizes,
 * the rows along the second in *n), from the input files (the same for all), else --batch
 * (batch_opt, 0 if not given), else the model's most. 0 or an exit status, having said why. */
static int choose_batch(const onnxc_model_info* m, const char** in_files, uint64_t batch_opt, int quiet, int64_t* batch, int64_t* n) {
  const int two = m->max_size > 0;
  int64_t fb = 0, fn = 0;
  const char* first = NULL;
  char got[96], want[96];
  for (int k = 0; k < m->num_inputs; ++k) {
    if (!in_files[k]) continue;
    int64_t b = 0, r = 0;
    onnxc_clear_error_detail();
    int rc = two ? onnxc_tensor_file_dims(in_files[k], &m->inputs[k], m->max_batch, m->size_axis, m->max_size, &b, &r)
                 : onnxc_tensor_file_count(in_files[k], &m->inputs[k], m->dynamic_axis, m->max_batch, &b);
    if (rc) {
      char what[300];
      snprintf(what, sizeof what, "cannot read input '%s'", m->inputs[k].name);
      return report_error(what, rc, 0);
    }
    if (first && (b != fb || r != fn)) {
      error_msg("input '%s' holds %s but input '%s' %s: a run's inputs have %s", m->inputs[k].name, sizes_text(m, b, r, got, sizeof got),
                first, sizes_text(m, fb, fn, want, sizeof want),
                two ? "one batch and one run-time size" : m->dynamic_axis > 0 ? "one run-time size" : "one batch");
      return 1;
    }
    fb = b, fn = r, first = m->inputs[k].name;
  }
  if (first && batch_opt && (int64_t)batch_opt != fb) {
    error_msg("--batch %llu, but input '%s' holds %s", (unsigned long long)batch_opt, first, sizes_text(m, fb, fn, got, sizeof got));
    return 2;
  }
  *batch = first ? fb : batch_opt ? (int64_t)batch_opt : m->max_batch;
  *n = first ? fn : m->max_size;
  const char* from = first ? "as the input files hold" : batch_opt ? (two ? "--batch, the most rows" : "--batch") : "the most";
  if (quiet) return 0;
  if (two)
    printf("run-time sizes: %lld of 1 to %lld items of %lld of 1 to %lld rows along dimension %d (%s)\n", (long long)*batch,
           (long long)m->max_batch, (long long)*n, (long long)m->max_size, m->size_axis, from);
  else if (m->dynamic_axis == 0)
    printf("batch: %lld of 1 to %lld items (%s)\n", (long long)*batch, (long long)m->max_batch, from);
  else
    printf("run-time size: %lld of 1 to %lld rows along dimension %d (%s)\n", (long long)*batch, (long long)m->max_batch,
           m->dynamic_axis, from);
  return 0;
}

/* ---------------------------------------------------------------- main */

/* What main runs once the CPU check has passed (or was skipped: skip_cpu_check). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int run_main(int argc, char** argv, int skip_cpu_check) {
  const onnxc_model_info* m = &MODEL;
  if (argc > 0 && argv[0] && argv[0][0]) {
    const char* s = strrchr(argv[0], '/');
    g_prog = s ? s + 1 : argv[0];
  } else if (m->model_name) {
    g_prog = m->model_name;
  }

  int status = 0, quiet = 0, rc = 0, profile = 0;
  double *prof_before = NULL, *prof_after = NULL;
  void* ctx = NULL;
  uint64_t bench = 0, threads = 0, seed = DEFAULT_SEED, rng = 0, batch_opt = 0;
  int64_t batch = 0, rows = 0; /* a --dynamic model's run-time sizes (rows: the second, when it has two) */
  const char* weights = NULL;
  const char* profile_out = NULL;
  char* weights_alloc = NULL;
  double* times = NULL;
  size_t nin = m->num_inputs > 0 ? (size_t)m->num_inputs : 0, nout = m->num_outputs > 0 ? (size_t)m->num_outputs : 0;
  const char** in_files = (const char**)calloc(nin + 1, sizeof *in_files);
  const char** out_files = (const char**)calloc(nout + 1, sizeof *out_files);
  void** in_bufs = (void**)calloc(nin + 1, sizeof *in_bufs);
  void** out_bufs = (void**)calloc(nout + 1, sizeof *out_bufs);
  size_t* in_bytes = (size_t*)calloc(nin + 1, sizeof *in_bytes);
  size_t* out_bytes = (size_t*)calloc(nout + 1, sizeof *out_bytes);
  /* The tensors of this run: the model's, or at the run's batch (--dynamic) */
  onnxc_tensor_info* run_info = (onnxc_tensor_info*)calloc(nin + nout + 1, sizeof *run_info);
  int64_t* run_shapes = (int64_t*)calloc((nin + nout + 1) * ONNXC_MAX_NDIM, sizeof *run_shapes);
  if (!in_files || !out_files || !in_bufs || !out_bufs || !in_bytes || !out_bytes || !run_info || !run_shapes) {
    error_msg("out of memory");
    status = 1;
    goto done;
  }

  for (int i = 1; i < argc && !status; ++i) {
    const char* a = argv[i];
    const char* v = NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      goto done;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      quiet = 1;
      continue;
    } else if (strcmp(a, "--profile") == 0) {
      profile = 1;
      continue;
    } else if (strcmp(a, "--unsafe-skip-cpu-check") == 0) {
      continue; /* main saw it */
    }
    int known = take_option(argc, argv, &i, "--weights", &v) || take_option(argc, argv, &i, "--input", &v) ||
                take_option(argc, argv, &i, "--output", &v) || take_option(argc, argv, &i, "--bench", &v) ||
                take_option(argc, argv, &i, "--threads", &v) || take_option(argc, argv, &i, "--seed", &v) ||
                take_option(argc, argv, &i, "--profile-out", &v) || take_option(argc, argv, &i, "--batch", &v);
    if (!known) {
      error_msg(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
      status = 2;
    } else if (!v) {
      error_msg("option '%s' needs a value", a);
      status = 2;
    } else if (strncmp(a, "--weights", 9) == 0) {
      weights = v;
    } else if (strncmp(a, "--profile-out", 13) == 0) {
      profile_out = v;
      profile = 1;
    } else if (strncmp(a, "--input", 7) == 0) {
      status = assign_spec("input", m->inputs, (int)nin, v, in_files);
    } else if (strncmp(a, "--output", 8) == 0) {
      status = assign_spec("output", m->outputs, (int)nout, v, out_files);
    } else if (strncmp(a, "--bench", 7) == 0) {
      if (!parse_u64(v, &bench) || bench < 1 || bench > 100000000) {
        error_msg("--bench needs a run count >= 1, got '%s'", v);
        status = 2;
      }
    } else if (strncmp(a, "--threads", 9) == 0) {
      if (!parse_u64(v, &threads) || threads < 1 || threads > 65536) {
        error_msg("--threads needs a thread count >= 1, got '%s'", v);
        status = 2;
      }
    } else if (strncmp(a, "--batch", 7) == 0) {
      if (m->max_batch <= 0) {
        error_msg("--batch is for a model compiled with --dynamic; this one runs the batch of its shapes");
        status = 2;
      } else if (!parse_u64(v, &batch_opt) || batch_opt < 1 || batch_opt > (uint64_t)m->max_batch) {
        error_msg("--batch needs 1 to %lld items, got '%s'", (long long)m->max_batch, v);
        status = 2;
      }
    } else if (!parse_u64(v, &seed)) {
      error_msg("--seed needs an unsigned integer, got '%s'", v);
      status = 2;
    }
  }
  if (status) {
    fprintf(stderr, "try '%s --help'\n", g_prog);
    goto done;
  }

  if (threads && !m->openmp) fprintf(stderr, "%s: warning: --threads ignored (built without OpenMP)\n", g_prog);
  if (profile) {
    if (!m->profile || m->num_ops < 1) {
      error_msg("--profile: this binary was built without per-op timers; rebuild it with compile-model --profile");
      status = 2;
      goto done;
    }
    if (!bench) bench = 10;
    prof_before = (double*)calloc((size_t)m->num_ops, sizeof *prof_before);
    prof_after = (double*)calloc((size_t)m->num_ops, sizeof *prof_after);
    if (!prof_before || !prof_after) {
      error_msg("out of memory");
      status = 1;
      goto done;
    }
  }
  if (!weights && m->weights_file && m->weights_file[0]) {
    weights = weights_alloc = default_weights_path(argc > 0 ? argv[0] : NULL, m->weights_file);
    if (!weights) {
      error_msg("out of memory");
      status = 1;
      goto done;
    }
  }

  for (size_t k = 0; k < nin + nout; ++k) run_info[k] = k < nin ? m->inputs[k] : m->outputs[k - nin];
  if (m->max_batch > 0 && (status = choose_batch(m, in_files, batch_opt, quiet, &batch, &rows)) != 0) goto done;
  for (size_t k = 0; k < nin + nout && batch > 0; ++k) {
    onnxc_tensor_info_count(k < nin ? &m->inputs[k] : &m->outputs[k - nin], m->dynamic_axis, batch, &run_info[k],
                            run_shapes + k * ONNXC_MAX_NDIM);
    if (m->max_size > 0) {
      const onnxc_tensor_info items = run_info[k];
      int64_t item_shape[ONNXC_MAX_NDIM];
      memcpy(item_shape, items.shape, sizeof(int64_t) * (size_t)(items.ndim < ONNXC_MAX_NDIM ? items.ndim : ONNXC_MAX_NDIM));
      const onnxc_tensor_info copy = {items.name, items.dtype, items.ndim, item_shape, items.numel};
      onnxc_tensor_info_count(&copy, m->size_axis, rows, &run_info[k], run_shapes + k * ONNXC_MAX_NDIM);
    }
  }

  /* inputs: read or fill; outputs: allocate */
  rng = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull; /* xorshift state must not be 0 */
  if (!rng) rng = 1;
  for (size_t k = 0; k < nin + nout && !status; ++k) {
    int is_in = k < nin;
    const onnxc_tensor_info* t = &run_info[k];
    size_t es = onnxc_dtype_size(t->dtype);
    void* buf = es && t->numel <= SIZE_MAX / es ? onnxc_aligned_alloc(t->numel * es) : NULL;
    if (!buf) {
      error_msg("cannot allocate %s '%s' (%s, %zu elements)", is_in ? "input" : "output", t->name,
                onnxc_dtype_name(t->dtype), t->numel);
      status = 1;
      break;
    }
    if (!is_in) {
      out_bufs[k - nin] = buf;
      out_bytes[k - nin] = t->numel * es;
      continue;
    }
    in_bufs[k] = buf;
    in_bytes[k] = t->numel * es;
    char type[512];
    onnxc_format_type(type, sizeof type, t->dtype, t->ndim, t->shape);
    if (in_files[k]) {
      onnxc_clear_error_detail();
      rc = onnxc_read_tensor_file(in_files[k], t, buf);
      if (rc) {
        char what[300];
        snprintf(what, sizeof what, "cannot read input '%s'", t->name);
        status = report_error(what, rc, 0);
      } else if (!quiet) {
        printf("input '%s' %s: from %s\n", t->name, type, in_files[k]);
      }
    } else {
      fill_random(buf, t, &rng);
      if (!quiet)
        printf("input '%s' %s: %s\n", t->name, type,
               t->dtype == ONNXC_F32 || t->dtype == ONNXC_F64 || t->dtype == ONNXC_F16 ? "random in [-1,1)" : "zeros");
    }
  }
  if (status) goto done;

  onnxc_options options = {0};
  options.num_threads = (int)threads;
  options.unsafe_skip_cpu_check = skip_cpu_check;
  rc = m->create(weights, &options, &ctx);
  if (rc) {
    char what[600];
    snprintf(what, sizeof what, "cannot initialize model '%s' with weights '%s'", m->model_name,
             weights ? weights : "(none)");
    status = report_error(what, rc, 1);
    goto done;
  }
  if ((status = run_model(ctx, batch, rows, in_bufs, in_bytes, out_bufs, out_bytes)) != 0) goto done;

  for (size_t k = 0; k < nout && !status; ++k) {
    if (!quiet) summarize(&run_info[nin + k], out_bufs[k]);
    if (out_files[k]) {
      onnxc_clear_error_detail();
      rc = onnxc_write_tensor_file(out_files[k], &run_info[nin + k], out_bufs[k]);
      if (rc) {
        char what[300];
        snprintf(what, sizeof what, "cannot write output '%s'", m->outputs[k].name);
        status = report_error(what, rc, 0);
      }
    }
  }
  fflush(stdout);

  if (!status && bench) {
    times = (double*)malloc((size_t)bench * sizeof *times);
    if (!times) {
      error_msg("out of memory");
      status = 1;
      goto done;
    }
    if (profile && (rc = m->profile(ctx, prof_before)) != 0) status = report_error("--profile", rc, 1);
    for (uint64_t r = 0; r < bench && !status; ++r) {
      double t0 = onnxc_now_seconds();
      status = run_model(ctx, batch, rows, in_bufs, in_bytes, out_bufs, out_bytes);
      times[r] = onnxc_now_seconds() - t0;
    }
    if (!status) {
      qsort(times, (size_t)bench, sizeof *times, cmp_double);
      double median = bench % 2 ? times[bench / 2] : 0.5 * (times[bench / 2 - 1] + times[bench / 2]);
      /* %.3f for ordinary models, more decimals for sub-0.1 ms toy models */
      printf("latency: median %.*f ms, min %.*f ms over %llu runs\n", digits(1e3 * median), 1e3 * median,
             digits(1e3 * times[0]), 1e3 * times[0], (unsigned long long)bench);
      if (profile && (rc = m->profile(ctx, prof_after)) != 0) status = report_error("--profile", rc, 1);
      if (profile && !status) status = print_profile(m, prof_before, prof_after, bench, threads, 1e3 * median);
      if (profile_out && !status) status = write_profile(profile_out, m, prof_before, prof_after, bench, threads);
    }
  }

done:
  if (ctx) m->destroy(&ctx);
  for (size_t k = 0; in_bufs && k < nin; ++k) onnxc_aligned_free(in_bufs[k]);
  for (size_t k = 0; out_bufs && k < nout; ++k) onnxc_aligned_free(out_bufs[k]);
  free(in_bufs);
  free(out_bufs);
  free(in_bytes);
  free(out_bytes);
  free(run_info);
  free(run_shapes);
  free(in_files);
  free(out_files);
  free(weights_alloc);
  free(times);
  free(prof_before);
  free(prof_after);
  return status;
}

/* This file is built with the model's flags too, so its own code may use what the model's
 * does: main checks this CPU (onnxc_check_cpu, for this translation unit's flags) in baseline
 * code before anything else runs, and the model's create checks again for the model's flags. */
ONNXC_BASELINE int main(int argc, char** argv) {
  int skip = 0;
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--unsafe-skip-cpu-check") == 0) skip = 1;
  if (!skip && onnxc_check_cpu(MODEL.model_name, MODEL.target ? MODEL.target : "(unknown target)") != ONNXC_OK) {
    /* libc only until the check passes: g_detail holds the message */
    fprintf(stderr, "%s: error: CPU not supported by this build: %s\n", MODEL.model_name, g_detail);
    return 1;
  }
  return run_main(argc, argv, skip);
}
