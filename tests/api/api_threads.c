/* api_threads.c — THREADS threads, each with its own instance of mobilenet_v2, RUNS inferences
 * each, all at once. Every output must equal bit for bit the output of one instance running
 * alone in the main thread, and that output must match PyTorch's reference (max abs error <=
 * 1e-3 of the reference's largest magnitude). Two modes, both run:
 *   own      every thread creates its instance from the weights file;
 *   sharing  every thread creates its instance with mobilenet_v2_create_sharing from the main
 *            thread's instance, all at the same time; the main thread destroys its instance
 *            while the others run, so the shared weights must live until the last is destroyed.
 * Half of the instances use onnxc_options.num_threads = 1, the others OpenMP's default.
 * tests/api/run_api_tests.py builds it with OpenMP, with ThreadSanitizer (without OpenMP:
 * libgomp is not TSan-instrumented, and what is tested is instances across threads) and with
 * ASan+UBSan.
 *
 * Usage: api_threads DIR THREADS RUNS — DIR holds mobilenet_v2/ (the generated model) and
 * mobilenet_v2.input.npy, mobilenet_v2.ref.npy. Prints how long each mode took.
 */
#include "onnxc_runtime.c" /* .npy reading and the clock, private to this file */

#include <math.h>
#include <pthread.h>

#include "api_check.h"
#include "mobilenet_v2.h"

#define MAX_THREADS 64

typedef struct {
  int id, runs, sharing;
  mobilenet_v2_ctx* base; /* sharing: the instance to share the weights of */
  const float* input;
  const float* expected;
  pthread_barrier_t* created; /* every instance made (sharing: before the base is destroyed) */
  int errors, mismatches;
  char error[1100];
} job;

static const char* g_weights;

static void* worker(void* arg) {
  job* j = (job*)arg;
  mobilenet_v2_ctx* ctx = NULL;
  onnxc_options options = {.num_threads = j->id % 2}; /* 1 or 0 (OpenMP's default) */
  int rc = j->sharing ? mobilenet_v2_create_sharing(j->base, &options, &ctx) : mobilenet_v2_create(g_weights, &options, &ctx);
  if (rc) {
    j->errors++;
    snprintf(j->error, sizeof j->error, "create: %s", mobilenet_v2_last_error());
  }
  pthread_barrier_wait(j->created);
  if (!ctx) return NULL;
  float* out = malloc(sizeof(float) * mobilenet_v2_OUTPUT0_SIZE);
  for (int r = 0; r < j->runs && out; ++r) {
    memset(out, 0, sizeof(float) * mobilenet_v2_OUTPUT0_SIZE);
    rc = mobilenet_v2_run(ctx, j->input, out);
    if (rc) {
      j->errors++;
      snprintf(j->error, sizeof j->error, "run %d: %s", r, mobilenet_v2_last_error());
    } else if (memcmp(out, j->expected, sizeof(float) * mobilenet_v2_OUTPUT0_SIZE) != 0) {
      j->mismatches++;
    }
  }
  free(out);
  mobilenet_v2_destroy(&ctx);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4 || atoi(argv[2]) < 1 || atoi(argv[2]) > MAX_THREADS || atoi(argv[3]) < 1) {
    fprintf(stderr, "usage: %s DIR THREADS(1..%d) RUNS\n", argv[0], MAX_THREADS);
    return 2;
  }
  const char* dir = argv[1];
  int threads = atoi(argv[2]), runs = atoi(argv[3]);
  static char weights[4096], path[4096];
  snprintf(weights, sizeof weights, "%s/mobilenet_v2/mobilenet_v2.weights", dir);
  g_weights = weights;

  const onnxc_tensor_info* in_info = &mobilenet_v2_info.inputs[0];
  const onnxc_tensor_info ref_info = mobilenet_v2_info.outputs[0];
  float* input = onnxc_aligned_alloc(sizeof(float) * in_info->numel);
  float* ref = onnxc_aligned_alloc(sizeof(float) * ref_info.numel);
  float* single = onnxc_aligned_alloc(sizeof(float) * ref_info.numel);
  snprintf(path, sizeof path, "%s/mobilenet_v2.input.npy", dir);
  int rc = onnxc_read_tensor_file(path, in_info, input);
  snprintf(path, sizeof path, "%s/mobilenet_v2.ref.npy", dir);
  if (!rc) rc = onnxc_read_tensor_file(path, &ref_info, ref);
  if (rc) {
    fprintf(stderr, "test setup: %s\n", onnxc_last_error_detail());
    return 2;
  }

  /* one instance alone: the output every threaded run must reproduce, checked against PyTorch */
  mobilenet_v2_ctx* base = NULL;
  CHECK_RC(mobilenet_v2, mobilenet_v2_create(weights, NULL, &base), ONNXC_OK, "");
  if (!base) return finish("api_threads");
  double t0 = onnxc_now_seconds();
  CHECK_RC(mobilenet_v2, mobilenet_v2_run(base, input, single), ONNXC_OK, "");
  double single_s = onnxc_now_seconds() - t0;
  double max_err = 0, max_ref = 0;
  for (size_t i = 0; i < ref_info.numel; ++i) {
    max_err = fmax(max_err, fabs((double)single[i] - ref[i]));
    max_ref = fmax(max_ref, fabs((double)ref[i]));
  }
  printf("single instance: %.1f ms; max abs error vs PyTorch %.3g (max |ref| %.3g)\n", 1e3 * single_s, max_err, max_ref);
  EXPECT_TRUE(max_err <= 1e-3 * fmax(1.0, max_ref));

  for (int sharing = 0; sharing <= 1; ++sharing) {
    if (sharing && !base) CHECK_RC(mobilenet_v2, mobilenet_v2_create(weights, NULL, &base), ONNXC_OK, "");
    job jobs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    pthread_barrier_t created;
    pthread_barrier_init(&created, NULL, (unsigned)threads + 1);
    t0 = onnxc_now_seconds();
    for (int k = 0; k < threads; ++k) {
      jobs[k] = (job){.id = k, .runs = runs, .sharing = sharing, .base = base, .input = input, .expected = single, .created = &created};
      if (pthread_create(&tids[k], NULL, worker, &jobs[k]) != 0) {
        fprintf(stderr, "test setup: pthread_create failed\n");
        return 2;
      }
    }
    pthread_barrier_wait(&created);
    if (sharing) CHECK_RC(mobilenet_v2, mobilenet_v2_destroy(&base), ONNXC_OK, ""); /* while they run */
    int errors = 0, mismatches = 0;
    for (int k = 0; k < threads; ++k) {
      pthread_join(tids[k], NULL);
      errors += jobs[k].errors;
      mismatches += jobs[k].mismatches;
      if (jobs[k].errors) printf("     thread %d: %s\n", k, jobs[k].error);
    }
    double s = onnxc_now_seconds() - t0;
    pthread_barrier_destroy(&created);
    printf("%s: %d threads x %d runs in %.2f s (%.1f inferences/s)\n", sharing ? "sharing" : "own", threads, runs, s,
           threads * runs / s);
    EXPECT_TRUE(errors == 0);
    EXPECT_TRUE(mismatches == 0);
    if (mismatches) printf("     %d of %d outputs differ from the single instance's\n", mismatches, threads * runs);
  }
  if (base) mobilenet_v2_destroy(&base);
  onnxc_aligned_free(input);
  onnxc_aligned_free(ref);
  onnxc_aligned_free(single);
  return finish("api_threads");
}
