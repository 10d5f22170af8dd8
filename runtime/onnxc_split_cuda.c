/* onnxc_split_cuda.c — the CUDA device of the split-model executor (see onnxc_split_cuda.h).
 * C11 against the CUDA runtime API (no kernels: any C compiler with -I.../cuda/include, linked
 * with -lcudart); also valid C++, so the tests build it against the CPU stand-in of the CUDA
 * runtime (tests/cuda/emu/cuda_runtime.h). */
#include "onnxc_split_cuda.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define SC_TLS thread_local
#else
#define SC_TLS _Thread_local
#endif

#define SC_ALIGN 256 /* each tensor of a request starts at a multiple (cudaMalloc's alignment) */

typedef struct {
  cudaStream_t stream;
  cudaEvent_t ev0, ev1;
  void *head_ctx, *tail_ctx;
  unsigned char *h_in, *h_cut, *h_out; /* pinned, max_batch requests each */
  unsigned char *d_in, *d_cut, *d_out; /* device, the same layout */
  cudaGraphExec_t graph[ONNXC_SPLIT_MAX_BATCH + 1]; /* the head's b runs, when captured */
} sc_slot;

typedef struct {
  const onnxc_cuda_info *head, *tail;
  int num_slots, max_batch, flags;
  int ni, nc, no;
  size_t in_bytes[ONNXC_SPLIT_MAX_TENSORS], cut_bytes[ONNXC_SPLIT_MAX_TENSORS], out_bytes[ONNXC_SPLIT_MAX_TENSORS];
  size_t in_off[ONNXC_SPLIT_MAX_TENSORS], cut_off[ONNXC_SPLIT_MAX_TENSORS], out_off[ONNXC_SPLIT_MAX_TENSORS];
  size_t in_stride, cut_stride, out_stride; /* bytes per request */
  sc_slot slots[ONNXC_SPLIT_MAX_SLOTS];
} sc_device;

static SC_TLS char sc_detail[1024];

static const char* sc_get_detail(void* ctx) {
  (void)ctx;
  return sc_detail;
}

const char* onnxc_split_cuda_last_error(void) { return sc_detail; }

static int sc_fail(int code, const char* msg) {
  snprintf(sc_detail, sizeof sc_detail, "CUDA device: %s", msg);
  return code;
}

static int sc_cuda_fail(cudaError_t err, const char* what) {
  snprintf(sc_detail, sizeof sc_detail, "CUDA device: %s failed: %s (%s)", what, cudaGetErrorName(err), cudaGetErrorString(err));
  return err == cudaErrorMemoryAllocation ? ONNXC_ERR_NOMEM : ONNXC_ERR_DEVICE;
}

static int sc_model_fail(int rc, const onnxc_model_info* m, const char* what) {
  snprintf(sc_detail, sizeof sc_detail, "CUDA device: %s (%s): %s", what, m->model_name, m->last_error ? m->last_error() : "");
  return rc;
}

#define SC_CHECK(call, what)                                \
  do {                                                      \
    const cudaError_t err_ = (call);                        \
    if (err_ != cudaSuccess) return sc_cuda_fail(err_, what); \
  } while (0)

static size_t sc_dtype_bytes(int dtype) {
  switch (dtype) {
    case ONNXC_F64: case ONNXC_I64: case ONNXC_U64: return 8;
    case ONNXC_F32: case ONNXC_I32: case ONNXC_U32: return 4;
    case ONNXC_F16: case ONNXC_I16: case ONNXC_U16: return 2;
    default: return 1;
  }
}

static size_t sc_layout(const onnxc_tensor_info* t, int n, size_t* bytes, size_t* off) {
  size_t at = 0;
  for (int k = 0; k < n; ++k) {
    bytes[k] = t[k].numel * sc_dtype_bytes(t[k].dtype);
    off[k] = at;
    at += (bytes[k] + SC_ALIGN - 1) / SC_ALIGN * SC_ALIGN;
  }
  return at;
}

static int sc_check(const sc_device* d, int slot, int batch) {
  if (slot < 0 || slot >= d->num_slots || batch < 1 || batch > d->max_batch) {
    snprintf(sc_detail, sizeof sc_detail, "CUDA device: slot %d or batch %d out of range (%d slots, max batch %d)", slot, batch,
             d->num_slots, d->max_batch);
    return ONNXC_ERR_ARG;
  }
  return ONNXC_OK;
}

/* The head's b runs on the slot's stream: input tensors at d_in, cut tensors at d_cut. */
static int sc_head_runs(const sc_device* d, const sc_slot* s, int b) {
  for (int r = 0; r < b; ++r) {
    const void* din[ONNXC_SPLIT_MAX_TENSORS];
    void* dout[ONNXC_SPLIT_MAX_TENSORS];
    for (int k = 0; k < d->ni; ++k) din[k] = s->d_in + (size_t)r * d->in_stride + d->in_off[k];
    for (int k = 0; k < d->nc; ++k) dout[k] = s->d_cut + (size_t)r * d->cut_stride + d->cut_off[k];
    const int rc = d->head->run_device(s->head_ctx, (void*)s->stream, din, dout);
    if (rc) return sc_model_fail(rc, d->head->model, "enqueueing the head");
  }
  return ONNXC_OK;
}

/* Captures the head's b runs into s->graph[b]. */
static int sc_capture(const sc_device* d, sc_slot* s, int b) {
  cudaGraph_t g = NULL;
  SC_CHECK(cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal), "beginning the capture of the head's launches");
  const int rc = sc_head_runs(d, s, b);
  const cudaError_t err = cudaStreamEndCapture(s->stream, &g);
  if (rc || err != cudaSuccess) {
    if (g) cudaGraphDestroy(g);
    return rc ? rc : sc_cuda_fail(err, "capturing the head's launches in a CUDA graph");
  }
  const cudaError_t ierr = cudaGraphInstantiate(&s->graph[b], g, 0);
  cudaGraphDestroy(g);
  if (ierr != cudaSuccess) {
    s->graph[b] = NULL;
    return sc_cuda_fail(ierr, "instantiating the head's CUDA graph");
  }
  return ONNXC_OK;
}

/* Waits for the slot's stream and reads the time between its two events. */
static int sc_finish(sc_slot* s, double* exec_us, const char* what) {
  SC_CHECK(cudaEventRecord(s->ev1, s->stream), "recording the end event");
  SC_CHECK(cudaStreamSynchronize(s->stream), what);
  float ms = 0;
  SC_CHECK(cudaEventElapsedTime(&ms, s->ev0, s->ev1), "reading the events' time");
  if (exec_us) *exec_us = (double)ms * 1000.0;
  return ONNXC_OK;
}

static int sc_head_work(sc_device* d, sc_slot* s, int b, double* exec_us) {
  SC_CHECK(cudaEventRecord(s->ev0, s->stream), "recording the start event");
  if (d->in_stride)
    SC_CHECK(cudaMemcpyAsync(s->d_in, s->h_in, (size_t)b * d->in_stride, cudaMemcpyHostToDevice, s->stream),
             "copying the batch's inputs to the device");
  if (d->flags & ONNXC_SPLIT_CUDA_GRAPHS) {
    if (!s->graph[b]) {
      const int rc = sc_capture(d, s, b);
      if (rc) return rc;
    }
    SC_CHECK(cudaGraphLaunch(s->graph[b], s->stream), "launching the head's CUDA graph");
  } else {
    const int rc = sc_head_runs(d, s, b);
    if (rc) return rc;
  }
  return sc_finish(s, exec_us, "running the head");
}

static int sc_run_head(void* ctx, int slot, int batch, const void* const* const* inputs, double* exec_us) {
  sc_device* d = (sc_device*)ctx;
  int rc = sc_check(d, slot, batch);
  if (rc) return rc;
  sc_slot* s = &d->slots[slot];
  for (int r = 0; r < batch; ++r)
    for (int k = 0; k < d->ni; ++k) memcpy(s->h_in + (size_t)r * d->in_stride + d->in_off[k], inputs[r][k], d->in_bytes[k]);
  rc = sc_head_work(d, s, batch, exec_us);
  if (rc) (void)cudaStreamSynchronize(s->stream); /* nothing of this batch left in flight */
  return rc;
}

static int sc_tail_work(sc_device* d, sc_slot* s, int b, double* exec_us) {
  SC_CHECK(cudaEventRecord(s->ev0, s->stream), "recording the start event");
  for (int r = 0; r < b; ++r) {
    const void* din[ONNXC_SPLIT_MAX_TENSORS];
    void* dout[ONNXC_SPLIT_MAX_TENSORS];
    for (int k = 0; k < d->nc; ++k) din[k] = s->d_cut + (size_t)r * d->cut_stride + d->cut_off[k];
    for (int k = 0; k < d->no; ++k) dout[k] = s->d_out + (size_t)r * d->out_stride + d->out_off[k];
    const int rc = d->tail->run_device(s->tail_ctx, (void*)s->stream, din, dout);
    if (rc) return sc_model_fail(rc, d->tail->model, "enqueueing the tail");
  }
  if (d->out_stride)
    SC_CHECK(cudaMemcpyAsync(s->h_out, s->d_out, (size_t)b * d->out_stride, cudaMemcpyDeviceToHost, s->stream),
             "copying the batch's outputs from the device");
  return sc_finish(s, exec_us, "running the tail");
}

static int sc_run_tail(void* ctx, int slot, int batch, void* const* const* outputs, double* exec_us) {
  sc_device* d = (sc_device*)ctx;
  int rc = sc_check(d, slot, batch);
  if (rc) return rc;
  sc_slot* s = &d->slots[slot];
  rc = sc_tail_work(d, s, batch, exec_us);
  if (rc) {
    (void)cudaStreamSynchronize(s->stream);
    return rc;
  }
  for (int r = 0; r < batch; ++r)
    for (int k = 0; k < d->no; ++k) memcpy(outputs[r][k], s->h_out + (size_t)r * d->out_stride + d->out_off[k], d->out_bytes[k]);
  return ONNXC_OK;
}

static int sc_fetch_work(sc_device* d, sc_slot* s, int b, double* exec_us) {
  SC_CHECK(cudaEventRecord(s->ev0, s->stream), "recording the start event");
  if (d->cut_stride)
    SC_CHECK(cudaMemcpyAsync(s->h_cut, s->d_cut, (size_t)b * d->cut_stride, cudaMemcpyDeviceToHost, s->stream),
             "copying the cut from the device");
  return sc_finish(s, exec_us, "copying the cut from the device");
}

static int sc_fetch_cut(void* ctx, int slot, int batch, void* const* const* cut, double* exec_us) {
  sc_device* d = (sc_device*)ctx;
  int rc = sc_check(d, slot, batch);
  if (rc) return rc;
  sc_slot* s = &d->slots[slot];
  rc = sc_fetch_work(d, s, batch, exec_us);
  if (rc) {
    (void)cudaStreamSynchronize(s->stream);
    return rc;
  }
  for (int r = 0; r < batch; ++r)
    for (int k = 0; k < d->nc; ++k) memcpy(cut[r][k], s->h_cut + (size_t)r * d->cut_stride + d->cut_off[k], d->cut_bytes[k]);
  return ONNXC_OK;
}

/* Frees what a slot holds (NULL members skipped); the first failure's status. */
static int sc_slot_free(const sc_device* d, sc_slot* s) {
  cudaError_t err = cudaSuccess, e;
#define SC_KEEP(call) ((e = (call)) != cudaSuccess && err == cudaSuccess ? (void)(err = e) : (void)0)
  if (s->stream) SC_KEEP(cudaStreamSynchronize(s->stream));
  for (int b = 0; b <= ONNXC_SPLIT_MAX_BATCH; ++b)
    if (s->graph[b]) SC_KEEP(cudaGraphExecDestroy(s->graph[b])), s->graph[b] = NULL;
  int rc = ONNXC_OK;
  if (s->head_ctx) {
    const int r = d->head->model->destroy(&s->head_ctx);
    if (r && !rc) rc = sc_model_fail(r, d->head->model, "destroying the head's instance");
  }
  if (s->tail_ctx) {
    const int r = d->tail->model->destroy(&s->tail_ctx);
    if (r && !rc) rc = sc_model_fail(r, d->tail->model, "destroying the tail's instance");
  }
  if (s->h_in) SC_KEEP(cudaFreeHost(s->h_in));
  if (s->h_cut) SC_KEEP(cudaFreeHost(s->h_cut));
  if (s->h_out) SC_KEEP(cudaFreeHost(s->h_out));
  if (s->d_in) SC_KEEP(cudaFree(s->d_in));
  if (s->d_cut) SC_KEEP(cudaFree(s->d_cut));
  if (s->d_out) SC_KEEP(cudaFree(s->d_out));
  if (s->ev0) SC_KEEP(cudaEventDestroy(s->ev0));
  if (s->ev1) SC_KEEP(cudaEventDestroy(s->ev1));
  if (s->stream) SC_KEEP(cudaStreamDestroy(s->stream));
#undef SC_KEEP
  memset(s, 0, sizeof *s);
  if (!rc && err != cudaSuccess) rc = sc_cuda_fail(err, "freeing a slot");
  return rc;
}

static int sc_slot_init(const sc_device* d, sc_slot* s, const char* head_weights, const char* tail_weights) {
  SC_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "creating a stream");
  SC_CHECK(cudaEventCreate(&s->ev0), "creating an event");
  SC_CHECK(cudaEventCreate(&s->ev1), "creating an event");
  int rc = d->head->model->create(head_weights ? head_weights : d->head->model->weights_file, NULL, &s->head_ctx);
  if (rc) return sc_model_fail(rc, d->head->model, "creating the head's instance");
  rc = d->tail->model->create(tail_weights ? tail_weights : d->tail->model->weights_file, NULL, &s->tail_ctx);
  if (rc) return sc_model_fail(rc, d->tail->model, "creating the tail's instance");
  const size_t n = (size_t)d->max_batch;
  if (d->in_stride) {
    SC_CHECK(cudaHostAlloc((void**)&s->h_in, n * d->in_stride, cudaHostAllocDefault), "allocating pinned input buffers");
    SC_CHECK(cudaMalloc((void**)&s->d_in, n * d->in_stride), "allocating device input buffers");
  }
  if (d->cut_stride) {
    SC_CHECK(cudaHostAlloc((void**)&s->h_cut, n * d->cut_stride, cudaHostAllocDefault), "allocating pinned cut buffers");
    SC_CHECK(cudaMalloc((void**)&s->d_cut, n * d->cut_stride), "allocating device cut buffers");
  }
  if (d->out_stride) {
    SC_CHECK(cudaHostAlloc((void**)&s->h_out, n * d->out_stride, cudaHostAllocDefault), "allocating pinned output buffers");
    SC_CHECK(cudaMalloc((void**)&s->d_out, n * d->out_stride), "allocating device output buffers");
  }
  return ONNXC_OK;
}

int onnxc_split_cuda_device_create(const onnxc_cuda_info* head, const char* head_weights, const onnxc_cuda_info* tail,
                                   const char* tail_weights, int num_slots, int max_batch, int flags,
                                   onnxc_split_device* device) {
  sc_detail[0] = '\0';
  if (!device) return sc_fail(ONNXC_ERR_ARG, "device is NULL");
  memset(device, 0, sizeof *device);
  if (!head || !tail || !head->model || !tail->model || !head->run_device || !tail->run_device)
    return sc_fail(ONNXC_ERR_ARG, "head and tail must be CUDA models' NAME_cuda_info");
  if (num_slots < 1 || num_slots > ONNXC_SPLIT_MAX_SLOTS || max_batch < 1 || max_batch > ONNXC_SPLIT_MAX_BATCH) {
    snprintf(sc_detail, sizeof sc_detail, "CUDA device: %d slots and max batch %d; use 1..%d slots and max batch 1..%d", num_slots,
             max_batch, ONNXC_SPLIT_MAX_SLOTS, ONNXC_SPLIT_MAX_BATCH);
    return ONNXC_ERR_ARG;
  }
  if (flags & ~ONNXC_SPLIT_CUDA_GRAPHS) return sc_fail(ONNXC_ERR_ARG, "unknown flags");
  const onnxc_model_info *h = head->model, *t = tail->model;
  if (h->num_inputs > ONNXC_SPLIT_MAX_TENSORS || h->num_outputs > ONNXC_SPLIT_MAX_TENSORS || t->num_outputs > ONNXC_SPLIT_MAX_TENSORS)
    return sc_fail(ONNXC_ERR_ARG, "a part has more than ONNXC_SPLIT_MAX_TENSORS inputs or outputs");
  if (h->num_outputs != t->num_inputs) {
    snprintf(sc_detail, sizeof sc_detail, "CUDA device: the head (%s) has %d outputs, the tail (%s) %d inputs", h->model_name,
             h->num_outputs, t->model_name, t->num_inputs);
    return ONNXC_ERR_ARG;
  }
  for (int k = 0; k < h->num_outputs; ++k)
    if (h->outputs[k].dtype != t->inputs[k].dtype || h->outputs[k].numel != t->inputs[k].numel) {
      snprintf(sc_detail, sizeof sc_detail, "CUDA device: the head's output %d ('%s') is not the tail's input %d ('%s')", k,
               h->outputs[k].name, k, t->inputs[k].name);
      return ONNXC_ERR_SHAPE;
    }
  sc_device* d = (sc_device*)calloc(1, sizeof(sc_device));
  if (!d) return sc_fail(ONNXC_ERR_NOMEM, "out of memory");
  d->head = head;
  d->tail = tail;
  d->num_slots = num_slots;
  d->max_batch = max_batch;
  d->flags = flags;
  d->ni = h->num_inputs;
  d->nc = h->num_outputs;
  d->no = t->num_outputs;
  d->in_stride = sc_layout(h->inputs, d->ni, d->in_bytes, d->in_off);
  d->cut_stride = sc_layout(h->outputs, d->nc, d->cut_bytes, d->cut_off);
  d->out_stride = sc_layout(t->outputs, d->no, d->out_bytes, d->out_off);
  for (int i = 0; i < num_slots; ++i) {
    const int rc = sc_slot_init(d, &d->slots[i], head_weights, tail_weights);
    if (rc) {
      char keep[sizeof sc_detail];
      memcpy(keep, sc_detail, sizeof keep);
      for (int j = 0; j <= i; ++j) (void)sc_slot_free(d, &d->slots[j]);
      memcpy(sc_detail, keep, sizeof keep);
      free(d);
      return rc;
    }
  }
  device->ctx = d;
  device->num_slots = num_slots;
  device->run_head = sc_run_head;
  device->run_tail = sc_run_tail;
  device->fetch_cut = sc_fetch_cut;
  device->detail = sc_get_detail;
  return ONNXC_OK;
}

int onnxc_split_cuda_device_destroy(onnxc_split_device* device) {
  if (!device || !device->ctx) return sc_fail(ONNXC_ERR_ARG, "destroy: no device (NULL, or already destroyed)");
  sc_device* d = (sc_device*)device->ctx;
  int rc = ONNXC_OK;
  for (int i = 0; i < d->num_slots; ++i) {
    const int r = sc_slot_free(d, &d->slots[i]);
    if (r && !rc) rc = r;
  }
  free(d);
  device->ctx = NULL;
  return rc;
}
