/* split_cuda_check.c — the split-model executor on the CUDA device (runtime/onnxc_split_cuda.h)
 * with a real model cut by compile-model --split auto --device cuda: HEAD (CUDA), TAIL_GPU (CUDA)
 * and TAIL (C) are the three parts' C names, given with -D. Built against the CUDA runtime (a GPU
 * run) or, as C++, against the CPU stand-in tests/cuda/emu/cuda_runtime.h (tests/cuda/run_split_cuda.sh).
 *
 * Checks: run_device's argument checks; then for each of gpu-only (without and with CUDA graphs),
 * cpu-tail and eft (graphs): 2 slots, max batch 4, 2 CPU workers, N requests of the same input
 * submitted at once; every callback OK, every output within 1e-3 of the reference's max
 * magnitude of REF (PyTorch's output), gpu-only with no CPU tail and cpu-tail with only CPU
 * tails, batches of more than one request formed, the device's measured time positive.
 * Usage: split_cuda_check INPUT.f32 REF.f32 (raw float32; run in the folder of the weights files)
 * Exit 0 when all pass, 1 otherwise. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxc_split.h"
#include "onnxc_split_cuda.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)

#ifdef __cplusplus
extern "C" {
#endif
extern const onnxc_cuda_info CAT(HEAD, _cuda_info);
extern const onnxc_cuda_info CAT(TAIL_GPU, _cuda_info);
extern const onnxc_model_info CAT(TAIL, _info);
#ifdef __cplusplus
}
#endif

#define N_REQ 10

static void* read_file(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* p = malloc(len > 0 ? (size_t)len : 1);
  if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *n = (size_t)len;
  return p;
}

typedef struct {
  pthread_mutex_t mu;
  int done, ok, bad;
  char first_error[512];
} tally;

static void on_done(void* user, const onnxc_split_result* r) {
  tally* t = (tally*)user;
  pthread_mutex_lock(&t->mu);
  ++t->done;
  if (r->status == ONNXC_OK) ++t->ok;
  else {
    if (!t->bad) snprintf(t->first_error, sizeof t->first_error, "%s", r->detail);
    ++t->bad;
  }
  pthread_mutex_unlock(&t->mu);
}

static int run_policy(onnxc_split_policy policy, int flags, const char* what, const float* input, const float* ref, size_t ref_n) {
  const onnxc_cuda_info* head = &CAT(HEAD, _cuda_info);
  const onnxc_cuda_info* tail_gpu = &CAT(TAIL_GPU, _cuda_info);
  onnxc_split_config cfg;
  memset(&cfg, 0, sizeof cfg);
  int rc = onnxc_split_sizes_from_models(head->model, &CAT(TAIL, _info), &cfg);
  if (rc) {
    fprintf(stderr, "%s: sizes: %s\n", what, onnxc_split_last_error());
    return 1;
  }
  rc = onnxc_split_cuda_device_create(head, NULL, tail_gpu, NULL, 2, 4, flags, &cfg.device);
  if (rc) {
    fprintf(stderr, "%s: onnxc_split_cuda_device_create: %s\n", what, onnxc_split_cuda_last_error());
    return 1;
  }
  cfg.max_batch = 4;
  cfg.max_queue_delay_us = 20000; /* long enough that the requests submitted at once batch */
  cfg.policy = policy;
  cfg.cpu_workers = 2;
  cfg.cpu_tail = &CAT(TAIL, _info);
  cfg.cpu_tail_weights = CAT(TAIL, _info).weights_file;
  onnxc_split* ex = NULL;
  if (onnxc_split_create(&cfg, &ex)) {
    fprintf(stderr, "%s: executor: %s\n", what, onnxc_split_last_error());
    onnxc_split_cuda_device_destroy(&cfg.device);
    return 1;
  }
  static float* outs[N_REQ];
  tally t;
  memset(&t, 0, sizeof t);
  pthread_mutex_init(&t.mu, NULL);
  int fails = 0;
  for (int i = 0; i < N_REQ; ++i) {
    outs[i] = (float*)malloc(cfg.output_bytes[0]);
    memset(outs[i], 0xff, cfg.output_bytes[0]); /* NaN: a request never written shows */
    const void* in[1] = {input};
    void* out[1] = {outs[i]};
    if (onnxc_split_submit(ex, in, out, on_done, &t)) {
      fprintf(stderr, "%s: submit: %s\n", what, onnxc_split_last_error());
      ++fails;
    }
  }
  onnxc_split_drain(ex);
  onnxc_split_stats st;
  onnxc_split_stats_get(ex, &st);
  onnxc_split_destroy(&ex);
  if (onnxc_split_cuda_device_destroy(&cfg.device)) {
    fprintf(stderr, "%s: device destroy failed\n", what);
    ++fails;
  }
  if (t.done != N_REQ || t.ok != N_REQ) {
    fprintf(stderr, "%s: %d of %d requests completed, %d failed: %s\n", what, t.ok, N_REQ, t.bad, t.first_error);
    ++fails;
  }
  double ref_max = 0, err_max = 0;
  for (size_t j = 0; j < ref_n; ++j) ref_max = fmax(ref_max, fabs(ref[j]));
  for (int i = 0; i < N_REQ; ++i) {
    for (size_t j = 0; j < ref_n; ++j) {
      const double e = fabs((double)outs[i][j] - ref[j]);
      err_max = e > err_max || e != e ? (e != e ? INFINITY : e) : err_max;
    }
    free(outs[i]);
  }
  int big = 0;
  for (int b = 2; b <= ONNXC_SPLIT_MAX_BATCH; ++b) big += (int)st.batch_hist[b];
  printf("%-22s %d requests in %llu batches (%d of more than one), CPU tails %.0f%%, device busy %.1f ms, max abs error %.3g "
         "(max |ref| %.3g)\n",
         what, t.ok, (unsigned long long)st.batches, big, 100 * st.cpu_tail_share, st.device_busy_us / 1e3, err_max, ref_max);
  if (!(err_max <= 1e-3 * ref_max)) {
    fprintf(stderr, "%s: outputs differ from the reference\n", what);
    ++fails;
  }
  if ((policy == ONNXC_SPLIT_GPU_ONLY && st.cpu_tail_share != 0) || (policy == ONNXC_SPLIT_CPU_TAIL && st.cpu_tail_share != 1)) {
    fprintf(stderr, "%s: the tails ran in the wrong place\n", what);
    ++fails;
  }
  if (!big || !(st.device_busy_us > 0)) {
    fprintf(stderr, "%s: no batch of more than one request, or no device time measured\n", what);
    ++fails;
  }
  pthread_mutex_destroy(&t.mu);
  return fails;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s INPUT.f32 REF.f32\n", argv[0]);
    return 2;
  }
  const onnxc_cuda_info* head = &CAT(HEAD, _cuda_info);
  size_t in_n = 0, ref_n = 0;
  float* input = (float*)read_file(argv[1], &in_n);
  float* ref = (float*)read_file(argv[2], &ref_n);
  const onnxc_model_info* tail = &CAT(TAIL, _info);
  if (!input || !ref || head->model->num_inputs != 1 || tail->num_outputs != 1 || in_n != head->model->inputs[0].numel * 4 ||
      ref_n != tail->outputs[0].numel * 4) {
    fprintf(stderr, "split_cuda_check: cannot read %s and %s, or they are not the model's one input and one output\n", argv[1], argv[2]);
    return 1;
  }
  int fails = 0;
  /* run_device's checks: no instance, no buffers. */
  void* ctx = NULL;
  if (head->run_device(NULL, NULL, NULL, NULL) != ONNXC_ERR_ARG) {
    fprintf(stderr, "%s_run_device accepted a NULL instance\n", STR(HEAD));
    ++fails;
  }
  if (head->model->create(head->model->weights_file, NULL, &ctx) == ONNXC_OK) {
    if (head->run_device(ctx, NULL, NULL, NULL) != ONNXC_ERR_ARG) {
      fprintf(stderr, "%s_run_device accepted NULL buffers\n", STR(HEAD));
      ++fails;
    }
    head->model->destroy(&ctx);
  } else {
    fprintf(stderr, "%s_create: %s\n", STR(HEAD), head->model->last_error());
    return 1;
  }
  /* A head and tail that do not fit together are refused. */
  onnxc_split_device bad;
  if (onnxc_split_cuda_device_create(head, NULL, head, NULL, 1, 1, 0, &bad) == ONNXC_OK) {
    fprintf(stderr, "the CUDA device accepted the head as its own tail\n");
    onnxc_split_cuda_device_destroy(&bad);
    ++fails;
  }
  fails += run_policy(ONNXC_SPLIT_GPU_ONLY, 0, "gpu-only", input, ref, ref_n / 4);
  fails += run_policy(ONNXC_SPLIT_GPU_ONLY, ONNXC_SPLIT_CUDA_GRAPHS, "gpu-only, CUDA graphs", input, ref, ref_n / 4);
  fails += run_policy(ONNXC_SPLIT_CPU_TAIL, ONNXC_SPLIT_CUDA_GRAPHS, "cpu-tail, CUDA graphs", input, ref, ref_n / 4);
  fails += run_policy(ONNXC_SPLIT_EFT, ONNXC_SPLIT_CUDA_GRAPHS, "eft, CUDA graphs", input, ref, ref_n / 4);
  free(input);
  free(ref);
  printf("split_cuda_check: %s\n", fails ? "FAIL" : "PASS");
  return fails ? 1 : 0;
}
