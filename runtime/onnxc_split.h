/* onnxc_split.h — the split-model executor: a model cut into a head (run on an accelerator) and a
 * tail (run on the accelerator or on CPU workers, chosen per batch), each part an ordinary onnxc
 * model (NAME_info). The head's outputs, the "cut" tensors, are exactly the tail's inputs.
 *
 * Design
 *   Requests (one set of head-input buffers and tail-output buffers each, owned by the caller)
 *   enter a bounded queue. Each of the device's in-flight slots has a thread that forms a batch
 *   the way Triton's dynamic batcher does (max_batch; the largest preferred size the queue can
 *   fill; else waits until the oldest request has waited max_queue_delay_us) and runs the head
 *   on the device. With the cut on the device, the slot thread places the tail:
 *     gpu-only  the tail runs on the device, in the same slot;
 *     cpu-tail  the cut is fetched to host buffers owned by the executor and the batch goes to
 *               the CPU stage, a pool of workers each with its own instance of the tail, which
 *               share its requests (cpu_whole_batches: one worker takes it all);
 *     eft       earliest finish time: the device would finish the tail after the work already
 *               committed to it, the heads of the requests queued (which a device tail delays,
 *               a CPU tail does not) and Tg(b); the CPU after the fetch X(b) and the last of its
 *               requests, each given C(1) on the earliest free worker after the CPU batches
 *               already queued (whole batches: C(b) on one worker). The earlier wins.
 *               With latency_cap_us > 0 the tail also goes to the CPU whenever the estimated
 *               latency of the batch's oldest request stays within the cap, even if the device
 *               would finish sooner: that frees the device for more heads (throughput) while
 *               the cap bounds the latency.
 *   The times are per (part, place, batch size) running averages of measured run times, seeded
 *   with the configured costs; a size never measured nor seeded scales the nearest known one.
 *   Every request's callback is called exactly once, from an executor thread: with ONNXC_OK
 *   and its outputs written, or with the failure's status; destroy fails the requests still
 *   queued and completes the ones already running. A full queue rejects the submit with
 *   ONNXC_SPLIT_ERR_FULL (nothing is dropped silently).
 *
 *   The device is abstract (function pointers, onnxc_split_device), so the executor itself
 *   needs no accelerator API. Two devices come with it: the CPU device runs the head and the
 *   tail's device version with model instances (one pair per slot), which runs the whole
 *   pipeline without an accelerator (with CUDA models, each part copies through the host);
 *   the simulated device sleeps configured costs on one execution engine (the slots' work is
 *   serialised like a single GPU's) and transforms bytes deterministically, for tests and load
 *   studies. The CPU stage runs the tail model, or a simulated cost with the same byte
 *   transform. The GPU device is in onnxc_split_cuda.h (separate, as it links the CUDA
 *   runtime): streams, pinned buffers and events per slot, the cut kept on the GPU. On a GPU
 *   machine: compile-model model.onnx -o out --name m --split auto --device cuda --emit so, then
 *   bench/loadgen --device cuda --head out/libm_head.so --tail out/libm_tail.so --tail-device
 *   out/libm_tail_gpu.so --policy gpu-only|cpu-tail|eft (bench/README.md).
 *
 * Errors: every fallible function returns an onnxc_status (or ONNXC_SPLIT_ERR_FULL); the detail
 * of the calling thread's last failure reads from onnxc_split_last_error(). Nothing prints or
 * exits. Plain C11 + pthreads.
 */
#ifndef ONNXC_SPLIT_H
#define ONNXC_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "onnxc_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by onnxc_split_submit when the queue holds max_queue_size requests: the request was
 * not taken (no callback); counted in onnxc_split_stats.rejected. Outside onnxc_status's range. */
#define ONNXC_SPLIT_ERR_FULL 32

#define ONNXC_SPLIT_MAX_TENSORS 16 /* the most inputs, cut tensors or outputs per part */
#define ONNXC_SPLIT_MAX_BATCH 64
#define ONNXC_SPLIT_MAX_SLOTS 8
#define ONNXC_SPLIT_MAX_WORKERS 64
#define ONNXC_SPLIT_MAX_PREFERRED 8

/* The abstract device. A slot is one batch in flight (its own buffers and stream on a GPU); the
 * executor calls a slot's functions from one thread, in the order run_head, then either run_tail
 * or fetch_cut, each returning when its work is done. Each returns an onnxc_status; detail,
 * when non-NULL, gives its message (called on the same thread right after the failure).
 * inputs[r][k] is request r's head input k, cut[r][k] the host buffer for its cut tensor k,
 * outputs[r][k] its tail output k. *exec_us (preset to -1) may receive the microseconds the
 * work itself took, without the wait for the engine behind other slots (a GPU's event timing):
 * the executor's estimates and device busy time use it, else the call's wall time. */
typedef struct {
  void* ctx;
  int num_slots; /* 1..ONNXC_SPLIT_MAX_SLOTS */
  int (*run_head)(void* ctx, int slot, int batch, const void* const* const* inputs, double* exec_us);
  int (*run_tail)(void* ctx, int slot, int batch, void* const* const* outputs, double* exec_us);
  int (*fetch_cut)(void* ctx, int slot, int batch, void* const* const* cut, double* exec_us);
  const char* (*detail)(void* ctx);
} onnxc_split_device;

/* A cost a + b * per_item microseconds for a batch of b requests. */
typedef struct {
  double a_us, per_item_us;
} onnxc_split_cost;

typedef enum { ONNXC_SPLIT_GPU_ONLY = 0, ONNXC_SPLIT_CPU_TAIL = 1, ONNXC_SPLIT_EFT = 2 } onnxc_split_policy;

typedef struct {
  onnxc_split_device device;
  /* Per-request tensor sizes in bytes (numel * dtype size); onnxc_split_sizes_from_models
   * fills them from the two models. */
  int num_inputs, num_cut, num_outputs;
  size_t input_bytes[ONNXC_SPLIT_MAX_TENSORS], cut_bytes[ONNXC_SPLIT_MAX_TENSORS],
      output_bytes[ONNXC_SPLIT_MAX_TENSORS];
  /* Dynamic batching. max_batch 0 means 1; max_queue_size 0 means 1024. */
  int max_batch;
  int num_preferred;
  int preferred[ONNXC_SPLIT_MAX_PREFERRED];
  double max_queue_delay_us;
  int max_queue_size;
  /* Placement. */
  onnxc_split_policy policy;
  double latency_cap_us; /* eft only; 0 = none */
  /* CPU stage: cpu_workers workers (0 allowed only with gpu-only), each with an instance of
   * cpu_tail (created from cpu_tail_weights, or NULL for the model's default weights file, with
   * cpu_tail_options), or, when cpu_tail is NULL, the simulated tail: sleeps cpu_cost and writes
   * the simulated device's tail transform. */
  int cpu_workers;
  /* 0 (default): the requests of a batch placed on the CPU are handed to the workers one at a
   * time, so as many workers as are free share the batch and its last tail ends after about one
   * request's C(1) rather than C(b) (a CPU tail runs its requests one by one anyway); the
   * simulated tail then sleeps C(1) per request. 1: one worker runs the whole batch, C(b), as
   * one call when cpu_tail was built with --dynamic (see onnxc_split_cpu_device_create). */
  int cpu_whole_batches;
  const onnxc_model_info* cpu_tail;
  const char* cpu_tail_weights;
  const onnxc_options* cpu_tail_options;
  /* Seeds of the run-time estimates (all 0 = unknown until measured): head G(b) and tail Tg(b)
   * on the device, cut fetch X(b), tail C(b) on a CPU worker. */
  onnxc_split_cost head_cost, device_tail_cost, fetch_cost, cpu_cost;
} onnxc_split_config;

/* What a request's callback receives. */
typedef struct {
  int status;           /* ONNXC_OK, or why the request failed */
  const char* detail;   /* "" on success; valid during the callback only */
  double latency_us;    /* from submit to completion */
  int batch;            /* the size of the batch it ran in (0 if it never ran) */
  int tail_on_cpu;      /* 1 if its tail ran on a CPU worker */
} onnxc_split_result;

typedef void (*onnxc_split_callback)(void* user, const onnxc_split_result* result);

typedef struct {
  uint64_t submitted; /* accepted by submit */
  uint64_t rejected;  /* refused by submit with ONNXC_SPLIT_ERR_FULL */
  uint64_t completed; /* callback with ONNXC_OK */
  uint64_t failed;    /* callback with an error (destroy's cancellations included) */
  uint64_t batches, batches_cpu_tail;
  uint64_t batch_hist[ONNXC_SPLIT_MAX_BATCH + 1]; /* batch_hist[b]: batches of b requests */
  double cpu_tail_share;  /* completed requests whose tail ran on the CPU / completed */
  double latency_p50_us, latency_p99_us, latency_max_us, latency_mean_us; /* completed ones */
  double device_busy_us;  /* summed execution times of run_head and run_tail (the CPU device's
                           * slots run in parallel: the sum may exceed the elapsed time) */
  double elapsed_us;      /* since create or the last onnxc_split_stats_reset */
} onnxc_split_stats;

typedef struct onnxc_split onnxc_split;

/* The calling thread's last failure detail ("" if none). */
const char* onnxc_split_last_error(void);
const char* onnxc_split_status_string(int code);

/* Fills the config's sizes from head's inputs and tail's outputs, checking that head's outputs
 * are tail's inputs (same count, dtypes and sizes). The sizes are one request's: a model built
 * with --dynamic describes its most items (max_batch), a request is one of them. */
int onnxc_split_sizes_from_models(const onnxc_model_info* head, const onnxc_model_info* tail,
                                  onnxc_split_config* config);

int onnxc_split_create(const onnxc_split_config* config, onnxc_split** ex);
/* inputs[k]: the request's head input k; outputs[k]: its tail output k. Both stay the caller's
 * and must live until the callback. ONNXC_SPLIT_ERR_FULL when the queue is full, ONNXC_ERR_STATE
 * once destroy has begun. */
int onnxc_split_submit(onnxc_split* ex, const void* const* inputs, void* const* outputs,
                       onnxc_split_callback callback, void* user);
/* Waits until every request submitted so far has had its callback. */
int onnxc_split_drain(onnxc_split* ex);
int onnxc_split_stats_get(onnxc_split* ex, onnxc_split_stats* stats);
int onnxc_split_stats_reset(onnxc_split* ex);
/* Fails the queued requests (ONNXC_ERR_STATE), completes the running ones, joins the threads,
 * frees; *ex becomes NULL. The device is the caller's and outlives the executor. */
int onnxc_split_destroy(onnxc_split** ex);

/* CPU device: num_slots instances of head and tail (weights paths may be NULL for the models'
 * default files). A part built with --dynamic (its info's max_batch > 1) runs a batch as one call
 * (calls of at most its max_batch requests, the requests' tensors gathered and scattered), its
 * items side by side on the instance's threads; a part of one batch runs the requests one by
 * one. max_batch as the executor's. */
int onnxc_split_cpu_device_create(const onnxc_model_info* head, const char* head_weights,
                                  const onnxc_model_info* tail, const char* tail_weights,
                                  const onnxc_options* options, int num_slots, int max_batch,
                                  onnxc_split_device* device);
int onnxc_split_cpu_device_destroy(onnxc_split_device* device);

/* Simulated device: run_head sleeps head(b) and writes cut byte j of tensor k as
 * (input byte (j mod size of input k mod num_inputs) + 1); run_tail sleeps tail(b) and writes
 * output byte j of tensor k as (cut byte (j mod size) of tensor k mod num_cut) ^ 0x5A; both hold
 * the one execution engine. fetch_cut sleeps fetch(b) (copies overlap the engine) and copies. */
typedef struct {
  int num_slots, max_batch;
  int num_inputs, num_cut, num_outputs;
  size_t input_bytes[ONNXC_SPLIT_MAX_TENSORS], cut_bytes[ONNXC_SPLIT_MAX_TENSORS],
      output_bytes[ONNXC_SPLIT_MAX_TENSORS];
  onnxc_split_cost head, tail, fetch;
} onnxc_split_sim_config;

int onnxc_split_sim_device_create(const onnxc_split_sim_config* config, onnxc_split_device* device);
int onnxc_split_sim_device_destroy(onnxc_split_device* device);
/* The simulated pipeline's output for one request (what the simulated device and CPU tail
 * write), for checks. */
void onnxc_split_sim_reference(const onnxc_split_config* config, const void* const* inputs,
                               void* const* outputs);

#ifdef __cplusplus
}
#endif

#endif /* ONNXC_SPLIT_H */
