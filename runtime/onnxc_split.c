/* onnxc_split.c — the split-model executor (see onnxc_split.h for the design): a bounded request
 * queue batched by the device's slot threads, placement of each batch's tail on the device or
 * the CPU workers, the CPU and simulated devices.
 *
 * Threads: one per device slot (forms a batch, runs the head, places the tail, runs it on the
 * device or fetches the cut and hands the batch to the CPU queue) and one per CPU worker. One
 * mutex guards the queues, the estimates and the statistics; callbacks and device/model calls
 * run without it.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "onnxc_split.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- errors and time ---- */

static _Thread_local char g_split_err[512];

static int split_fail(int code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_split_err, sizeof g_split_err, fmt, ap);
  va_end(ap);
  return code;
}

const char* onnxc_split_last_error(void) { return g_split_err; }

const char* onnxc_split_status_string(int code) {
  switch (code) {
    case ONNXC_OK: return "ok";
    case ONNXC_ERR_IO: return "I/O error";
    case ONNXC_ERR_FORMAT: return "bad format";
    case ONNXC_ERR_VERSION: return "unsupported version";
    case ONNXC_ERR_SIZE: return "size mismatch";
    case ONNXC_ERR_CHECKSUM: return "checksum mismatch";
    case ONNXC_ERR_NOMEM: return "out of memory";
    case ONNXC_ERR_ARG: return "invalid argument";
    case ONNXC_ERR_STATE: return "invalid state";
    case ONNXC_ERR_DTYPE: return "dtype mismatch";
    case ONNXC_ERR_SHAPE: return "shape mismatch";
    case ONNXC_SPLIT_ERR_FULL: return "queue full";
    default: return "unknown status";
  }
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void sleep_us(double us) {
  if (us <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)(us / 1e6);
  ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
  if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static void abs_time(double at_us_monotonic, struct timespec* ts) {
  /* pthread_cond_timedwait on a CLOCK_MONOTONIC condition variable */
  if (at_us_monotonic < 0) at_us_monotonic = 0;
  ts->tv_sec = (time_t)(at_us_monotonic / 1e6);
  ts->tv_nsec = (long)((at_us_monotonic - (double)ts->tv_sec * 1e6) * 1e3);
  if (ts->tv_nsec >= 1000000000L) ts->tv_nsec = 999999999L;
  if (ts->tv_nsec < 0) ts->tv_nsec = 0;
}

static int init_cond(pthread_cond_t* c) {
  pthread_condattr_t a;
  if (pthread_condattr_init(&a)) return -1;
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  int rc = pthread_cond_init(c, &a);
  pthread_condattr_destroy(&a);
  return rc;
}

static double cost_of(onnxc_split_cost c, int b) { return c.a_us + c.per_item_us * (double)b; }

static size_t dtype_bytes(int dtype) {
  switch (dtype) {
    case ONNXC_U8: case ONNXC_I8: case ONNXC_BOOL: return 1;
    case ONNXC_U16: case ONNXC_I16: case ONNXC_F16: return 2;
    case ONNXC_F32: case ONNXC_I32: case ONNXC_U32: return 4;
    case ONNXC_I64: case ONNXC_F64: case ONNXC_U64: return 8;
    default: return 0;
  }
}

/* One request's elements and bytes of tensor t of model m: the shapes of a --dynamic model
 * (max_batch > 1) hold its most items, a request is one of them. */
static size_t item_numel(const onnxc_model_info* m, const onnxc_tensor_info* t) {
  return m->max_batch > 1 ? t->numel / (size_t)m->max_batch : t->numel;
}

static size_t item_bytes(const onnxc_model_info* m, const onnxc_tensor_info* t) {
  return item_numel(m, t) * dtype_bytes(t->dtype);
}

/* The dimension of model m's run-time size other than the batch (compile-model --dynamic
 * seq=MAX, alone or next to a batch), 0 when it has none. */
static int size_axis(const onnxc_model_info* m) { return m->dynamic_axis > 0 ? m->dynamic_axis : m->max_size > 0 ? m->size_axis : 0; }

/* Requests per call of model m when a batch may hold up to max_batch of them: a --dynamic
 * model runs as many as it takes at once, any other one request at a time. */
static int per_call(const onnxc_model_info* m, int max_batch) {
  return m->max_batch > 1 ? (int)(m->max_batch < max_batch ? m->max_batch : max_batch) : 1;
}

/* Staging bytes for run_requests: per_call items of every tensor, tensor after tensor. */
static size_t stage_bytes(int items, int num, const size_t* bytes) {
  size_t total = 0;
  for (int k = 0; k < num; ++k) total += bytes[k] * (size_t)items;
  return total;
}

/* Runs model m's instance on n requests: request r reads in[r][k] (ib[k] bytes) and writes
 * out[r][k] (ob[k] bytes). With calls of `items` > 1 requests (a --dynamic model), each call's
 * inputs are gathered into in_stage and its outputs scattered from out_stage (stage_bytes of
 * `items` each); otherwise one call per request, in place. Stops at the first failure. */
static int run_requests(const onnxc_model_info* m, void* inst, int items, int n, const void* const* const* in,
                        const size_t* ib, void* const* const* out, const size_t* ob, unsigned char* in_stage,
                        unsigned char* out_stage) {
  for (int r0 = 0; r0 < n; r0 += items) {
    const int cnt = n - r0 < items ? n - r0 : items;
    int rc;
    if (cnt == 1) {
      rc = m->run_v(inst, in[r0], ib, out[r0], ob);
      if (rc != ONNXC_OK) return rc;
      continue;
    }
    const void* bi[ONNXC_SPLIT_MAX_TENSORS];
    void* bo[ONNXC_SPLIT_MAX_TENSORS];
    size_t bib[ONNXC_SPLIT_MAX_TENSORS], bob[ONNXC_SPLIT_MAX_TENSORS];
    unsigned char* p = in_stage;
    for (int k = 0; k < m->num_inputs; ++k) {
      bi[k] = p;
      bib[k] = ib[k] * (size_t)cnt;
      if (ib[k])
        for (int j = 0; j < cnt; ++j) memcpy(p + ib[k] * (size_t)j, in[r0 + j][k], ib[k]);
      p += ib[k] * (size_t)items;
    }
    p = out_stage;
    for (int k = 0; k < m->num_outputs; ++k) {
      bo[k] = p;
      bob[k] = ob[k] * (size_t)cnt;
      p += ob[k] * (size_t)items;
    }
    rc = m->run_v(inst, bi, bib, bo, bob);
    if (rc != ONNXC_OK) return rc;
    for (int k = 0; k < m->num_outputs; ++k)
      if (ob[k])
        for (int j = 0; j < cnt; ++j) memcpy(out[r0 + j][k], (unsigned char*)bo[k] + ob[k] * (size_t)j, ob[k]);
  }
  return ONNXC_OK;
}

/* ---- the simulated transforms ---- */

static void sim_head_one(int num_inputs, const size_t* in_bytes, const void* const* in, int num_cut,
                         const size_t* cut_bytes, void* const* cut) {
  for (int k = 0; k < num_cut; ++k) {
    unsigned char* o = (unsigned char*)cut[k];
    int ki = num_inputs ? k % num_inputs : 0;
    size_t n = num_inputs ? in_bytes[ki] : 0;
    const unsigned char* s = num_inputs ? (const unsigned char*)in[ki] : NULL;
    for (size_t j = 0; j < cut_bytes[k]; ++j) o[j] = (unsigned char)((n ? s[j % n] : 0) + 1);
  }
}

static void sim_tail_one(int num_cut, const size_t* cut_bytes, const void* const* cut, int num_outputs,
                         const size_t* out_bytes, void* const* out) {
  for (int k = 0; k < num_outputs; ++k) {
    unsigned char* o = (unsigned char*)out[k];
    int kc = num_cut ? k % num_cut : 0;
    size_t n = num_cut ? cut_bytes[kc] : 0;
    const unsigned char* s = num_cut ? (const unsigned char*)cut[kc] : NULL;
    for (size_t j = 0; j < out_bytes[k]; ++j) o[j] = (unsigned char)((n ? s[j % n] : 0) ^ 0x5A);
  }
}

void onnxc_split_sim_reference(const onnxc_split_config* c, const void* const* inputs, void* const* outputs) {
  size_t total = 0;
  for (int k = 0; k < c->num_cut; ++k) total += c->cut_bytes[k];
  unsigned char* mem = (unsigned char*)malloc(total ? total : 1);
  void* cut[ONNXC_SPLIT_MAX_TENSORS];
  if (!mem) return;
  size_t off = 0;
  for (int k = 0; k < c->num_cut; ++k) {
    cut[k] = mem + off;
    off += c->cut_bytes[k];
  }
  sim_head_one(c->num_inputs, c->input_bytes, inputs, c->num_cut, c->cut_bytes, cut);
  sim_tail_one(c->num_cut, c->cut_bytes, (const void* const*)cut, c->num_outputs, c->output_bytes, outputs);
  free(mem);
}

/* ---- the executor ---- */

enum { EST_HEAD, EST_TAIL_DEV, EST_FETCH, EST_TAIL_CPU, EST_PARTS };

typedef struct split_req {
  const void* inputs[ONNXC_SPLIT_MAX_TENSORS];
  void* outputs[ONNXC_SPLIT_MAX_TENSORS];
  onnxc_split_callback cb;
  void* user;
  double t_submit;
  struct split_req* next;
} split_req;

typedef struct split_batch {
  int n;
  int next; /* CPU stage: the first request no worker has taken yet */
  int done; /* requests completed; the batch is recycled when all n are */
  split_req* r[ONNXC_SPLIT_MAX_BATCH];
  unsigned char* cut_mem; /* max_batch * the cut's bytes per request */
  void* cut[ONNXC_SPLIT_MAX_BATCH][ONNXC_SPLIT_MAX_TENSORS];
  struct split_batch* link;
} split_batch;

typedef struct {
  struct onnxc_split* ex;
  int index;
} split_thread_arg;

struct onnxc_split {
  onnxc_split_config cfg;
  size_t cut_total;
  pthread_mutex_t mu;
  pthread_cond_t q_cv, cpu_cv, cpu_space_cv, drain_cv;
  split_req *q_head, *q_tail, *free_reqs;
  int q_count;
  split_batch *cpu_head, *cpu_tail, *free_batches;
  int cpu_count, cpu_cap;
  int stopping, cpu_stop;
  uint64_t outstanding;
  int n_slot_threads, n_worker_threads;
  pthread_t slot_threads[ONNXC_SPLIT_MAX_SLOTS];
  pthread_t worker_threads[ONNXC_SPLIT_MAX_WORKERS];
  split_thread_arg slot_args[ONNXC_SPLIT_MAX_SLOTS], worker_args[ONNXC_SPLIT_MAX_WORKERS];
  void* worker_inst[ONNXC_SPLIT_MAX_WORKERS];
  /* Whole batches on a --dynamic CPU tail: requests per call, and each worker's staging. */
  int worker_items;
  unsigned char *worker_in[ONNXC_SPLIT_MAX_WORKERS], *worker_out[ONNXC_SPLIT_MAX_WORKERS];
  double worker_free_at[ONNXC_SPLIT_MAX_WORKERS]; /* predicted end of the running tails, 0 idle */
  double dev_pending_us; /* estimated device work committed and not finished */
  double est[EST_PARTS][ONNXC_SPLIT_MAX_BATCH + 1];
  unsigned est_n[EST_PARTS][ONNXC_SPLIT_MAX_BATCH + 1];
  /* statistics */
  onnxc_split_stats st;
  uint64_t cpu_tail_reqs;
  double* lat;
  size_t lat_n, lat_cap;
  double t_reset;
};

/* Estimated microseconds of part for a batch of b (mutex held). */
static double est_get(const onnxc_split* ex, int part, int b) {
  if (ex->est_n[part][b]) return ex->est[part][b];
  for (int d = 1; d <= ONNXC_SPLIT_MAX_BATCH; ++d) {
    if (b - d >= 1 && ex->est_n[part][b - d]) return ex->est[part][b - d] * b / (b - d);
    if (b + d <= ex->cfg.max_batch && ex->est_n[part][b + d]) return ex->est[part][b + d] * b / (b + d);
  }
  return 0;
}

static void est_add(onnxc_split* ex, int part, int b, double us) {
  unsigned n = ++ex->est_n[part][b];
  double alpha = 1.0 / n;
  if (alpha < 0.2) alpha = 0.2;
  ex->est[part][b] = n == 1 ? us : ex->est[part][b] + alpha * (us - ex->est[part][b]);
}

static void record_latency(onnxc_split* ex, double us) {
  if (ex->lat_n == ex->lat_cap) {
    size_t cap = ex->lat_cap ? ex->lat_cap * 2 : 4096;
    double* p = (double*)realloc(ex->lat, cap * sizeof *p);
    if (!p) return; /* the percentiles then miss this sample; the counts stay exact */
    ex->lat = p;
    ex->lat_cap = cap;
  }
  ex->lat[ex->lat_n++] = us;
}

/* Calls the n requests' callbacks (mutex not held), then counts them and recycles them and the
 * batch (b may be NULL). */
static void complete(onnxc_split* ex, split_req** r, int n, split_batch* b, int status, const char* detail,
                     int on_cpu) {
  double t = now_us();
  double lat[ONNXC_SPLIT_MAX_BATCH];
  onnxc_split_result res;
  res.status = status;
  res.detail = detail ? detail : "";
  res.batch = b ? b->n : 0;
  res.tail_on_cpu = on_cpu;
  for (int i = 0; i < n; ++i) {
    lat[i] = t - r[i]->t_submit;
    res.latency_us = lat[i];
    if (r[i]->cb) r[i]->cb(r[i]->user, &res);
  }
  pthread_mutex_lock(&ex->mu);
  for (int i = 0; i < n; ++i) {
    if (status == ONNXC_OK) {
      ++ex->st.completed;
      if (on_cpu) ++ex->cpu_tail_reqs;
      record_latency(ex, lat[i]);
    } else {
      ++ex->st.failed;
    }
    r[i]->next = ex->free_reqs;
    ex->free_reqs = r[i];
  }
  if (b && (b->done += n) >= b->n) {
    b->link = ex->free_batches;
    ex->free_batches = b;
  }
  ex->outstanding -= (uint64_t)n;
  if (ex->outstanding == 0) pthread_cond_broadcast(&ex->drain_cv);
  pthread_mutex_unlock(&ex->mu);
}

static split_batch* batch_get(onnxc_split* ex) {
  split_batch* b = ex->free_batches;
  if (b) {
    ex->free_batches = b->link;
    b->next = b->done = 0;
    return b;
  }
  b = (split_batch*)calloc(1, sizeof *b);
  if (!b) return NULL;
  int mb = ex->cfg.max_batch;
  b->cut_mem = (unsigned char*)malloc(ex->cut_total * (size_t)mb + 1);
  if (!b->cut_mem) {
    free(b);
    return NULL;
  }
  for (int r = 0; r < mb; ++r) {
    size_t off = ex->cut_total * (size_t)r;
    for (int k = 0; k < ex->cfg.num_cut; ++k) {
      b->cut[r][k] = b->cut_mem + off;
      off += ex->cfg.cut_bytes[k];
    }
  }
  return b;
}

/* How many queued requests a free slot takes now, or 0 to wait until *wake (mutex held). */
static int batch_size_now(const onnxc_split* ex, double t, double* wake) {
  const onnxc_split_config* c = &ex->cfg;
  int n = ex->q_count;
  if (n == 0) return 0;
  if (n >= c->max_batch) return c->max_batch;
  int best = 0;
  for (int i = 0; i < c->num_preferred; ++i)
    if (c->preferred[i] <= n && c->preferred[i] > best) best = c->preferred[i];
  if (best) return best;
  double due = ex->q_head->t_submit + c->max_queue_delay_us;
  if (t >= due || ex->stopping) return n;
  *wake = due;
  return 0;
}

/* Gives `units` pieces of work of `each` microseconds, one after the other, to the earliest
 * free of the n workers free_at[] (none starting before not_before); returns when the last ends. */
static double assign(double* free_at, int n, int units, double each, double not_before) {
  double last = not_before;
  for (int u = 0; u < units; ++u) {
    int e = 0;
    for (int w = 1; w < n; ++w)
      if (free_at[w] < free_at[e]) e = w;
    free_at[e] = (free_at[e] > not_before ? free_at[e] : not_before) + each;
    if (free_at[e] > last) last = free_at[e];
  }
  return last;
}

/* Where the tail of b goes: 1 = CPU (mutex held). */
static int place_on_cpu(onnxc_split* ex, const split_batch* b, double t) {
  const onnxc_split_config* c = &ex->cfg;
  if (c->policy == ONNXC_SPLIT_GPU_ONLY || c->cpu_workers == 0) return 0;
  if (c->policy == ONNXC_SPLIT_CPU_TAIL) return 1;
  int n = b->n;
  double t_dev = t + ex->dev_pending_us + est_get(ex, EST_TAIL_DEV, n);
  /* A tail on the device also delays the heads of the requests already queued (the device's
   * backlog), a tail on a CPU worker does not: count their head time against the device. */
  for (int q = ex->q_count; q > 0; q -= c->max_batch) t_dev += est_get(ex, EST_HEAD, q < c->max_batch ? q : c->max_batch);
  /* The CPU stage: the queued batches' requests not yet taken, then b's, each (whole batches:
   * each batch) on the earliest free worker. */
  double free_at[ONNXC_SPLIT_MAX_WORKERS];
  for (int w = 0; w < c->cpu_workers; ++w) free_at[w] = ex->worker_free_at[w] > t ? ex->worker_free_at[w] : t;
  const double one = est_get(ex, EST_TAIL_CPU, 1);
  for (const split_batch* q = ex->cpu_head; q; q = q->link) {
    const int left = q->n - q->next;
    if (c->cpu_whole_batches)
      assign(free_at, c->cpu_workers, 1, est_get(ex, EST_TAIL_CPU, left), t);
    else
      assign(free_at, c->cpu_workers, left, one, t);
  }
  const double fetched = t + est_get(ex, EST_FETCH, n);
  const double t_cpu = c->cpu_whole_batches ? assign(free_at, c->cpu_workers, 1, est_get(ex, EST_TAIL_CPU, n), fetched)
                                            : assign(free_at, c->cpu_workers, n, one, fetched);
  if (c->latency_cap_us > 0 && t_cpu - b->r[0]->t_submit <= c->latency_cap_us) return 1;
  return t_cpu < t_dev;
}

static void* slot_main(void* arg) {
  onnxc_split* ex = ((split_thread_arg*)arg)->ex;
  int slot = ((split_thread_arg*)arg)->index;
  const onnxc_split_device* dev = &ex->cfg.device;
  char detail[512];
  pthread_mutex_lock(&ex->mu);
  for (;;) {
    int take = 0;
    for (;;) {
      double wake = 0;
      take = batch_size_now(ex, now_us(), &wake);
      if (take) break;
      if (ex->q_count == 0) {
        if (ex->stopping) break;
        pthread_cond_wait(&ex->q_cv, &ex->mu);
      } else {
        struct timespec ts;
        abs_time(wake, &ts);
        pthread_cond_timedwait(&ex->q_cv, &ex->mu, &ts);
      }
    }
    if (!take) break;
    split_batch* b = batch_get(ex);
    split_req* taken[ONNXC_SPLIT_MAX_BATCH];
    for (int i = 0; i < take; ++i) {
      taken[i] = ex->q_head;
      ex->q_head = ex->q_head->next;
    }
    if (!ex->q_head) ex->q_tail = NULL;
    ex->q_count -= take;
    if (ex->q_count) pthread_cond_signal(&ex->q_cv); /* the rest for another idle slot */
    if (!b) {
      pthread_mutex_unlock(&ex->mu);
      complete(ex, taken, take, NULL, ONNXC_ERR_NOMEM, "split executor: out of memory for a batch", 0);
      pthread_mutex_lock(&ex->mu);
      continue;
    }
    b->n = take;
    memcpy(b->r, taken, sizeof(split_req*) * (size_t)take);
    ++ex->st.batches;
    ++ex->st.batch_hist[take];
    double g_est = est_get(ex, EST_HEAD, take);
    ex->dev_pending_us += g_est;
    pthread_mutex_unlock(&ex->mu);

    const void* const* ins[ONNXC_SPLIT_MAX_BATCH];
    void* const* outs[ONNXC_SPLIT_MAX_BATCH];
    void* const* cuts[ONNXC_SPLIT_MAX_BATCH];
    for (int i = 0; i < take; ++i) {
      ins[i] = b->r[i]->inputs;
      outs[i] = b->r[i]->outputs;
      cuts[i] = b->cut[i];
    }
    double exec = -1, t0 = now_us();
    int rc = dev->run_head(dev->ctx, slot, take, ins, &exec);
    double t1 = now_us();
    if (exec < 0) exec = t1 - t0;
    if (rc != ONNXC_OK)
      snprintf(detail, sizeof detail, "split executor: run_head: %s", dev->detail ? dev->detail(dev->ctx) : "");
    pthread_mutex_lock(&ex->mu);
    ex->dev_pending_us -= g_est;
    if (ex->dev_pending_us < 0) ex->dev_pending_us = 0;
    ex->st.device_busy_us += exec;
    if (rc != ONNXC_OK) {
      pthread_mutex_unlock(&ex->mu);
      complete(ex, b->r, take, b, rc, detail, 0);
      pthread_mutex_lock(&ex->mu);
      continue;
    }
    est_add(ex, EST_HEAD, take, exec);
    if (!place_on_cpu(ex, b, t1)) {
      double tg_est = est_get(ex, EST_TAIL_DEV, take);
      ex->dev_pending_us += tg_est;
      pthread_mutex_unlock(&ex->mu);
      exec = -1;
      t0 = now_us();
      rc = dev->run_tail(dev->ctx, slot, take, outs, &exec);
      t1 = now_us();
      if (exec < 0) exec = t1 - t0;
      if (rc != ONNXC_OK)
        snprintf(detail, sizeof detail, "split executor: run_tail: %s", dev->detail ? dev->detail(dev->ctx) : "");
      pthread_mutex_lock(&ex->mu);
      ex->dev_pending_us -= tg_est;
      if (ex->dev_pending_us < 0) ex->dev_pending_us = 0;
      ex->st.device_busy_us += exec;
      if (rc == ONNXC_OK) est_add(ex, EST_TAIL_DEV, take, exec);
      pthread_mutex_unlock(&ex->mu);
      complete(ex, b->r, take, b, rc, rc == ONNXC_OK ? "" : detail, 0);
      pthread_mutex_lock(&ex->mu);
      continue;
    }
    ++ex->st.batches_cpu_tail;
    pthread_mutex_unlock(&ex->mu);
    exec = -1;
    t0 = now_us();
    rc = dev->fetch_cut(dev->ctx, slot, take, cuts, &exec);
    t1 = now_us();
    if (exec < 0) exec = t1 - t0;
    if (rc != ONNXC_OK) {
      snprintf(detail, sizeof detail, "split executor: fetch_cut: %s", dev->detail ? dev->detail(dev->ctx) : "");
      complete(ex, b->r, take, b, rc, detail, 1);
      pthread_mutex_lock(&ex->mu);
      continue;
    }
    pthread_mutex_lock(&ex->mu);
    est_add(ex, EST_FETCH, take, exec);
    while (ex->cpu_count >= ex->cpu_cap) pthread_cond_wait(&ex->cpu_space_cv, &ex->mu);
    b->link = NULL;
    if (ex->cpu_tail)
      ex->cpu_tail->link = b;
    else
      ex->cpu_head = b;
    ex->cpu_tail = b;
    ++ex->cpu_count;
    pthread_cond_signal(&ex->cpu_cv);
  }
  pthread_mutex_unlock(&ex->mu);
  return NULL;
}

static void* worker_main(void* arg) {
  onnxc_split* ex = ((split_thread_arg*)arg)->ex;
  int w = ((split_thread_arg*)arg)->index;
  const onnxc_split_config* c = &ex->cfg;
  char detail[512];
  pthread_mutex_lock(&ex->mu);
  for (;;) {
    while (ex->cpu_count == 0 && !ex->cpu_stop) pthread_cond_wait(&ex->cpu_cv, &ex->mu);
    if (ex->cpu_count == 0) break;
    /* The head batch's next request (whole batches: all its requests); the batch leaves the
     * queue when its last request is taken, and another worker is woken for the rest. */
    split_batch* b = ex->cpu_head;
    const int i0 = b->next, cnt = c->cpu_whole_batches ? b->n - i0 : 1;
    b->next += cnt;
    if (b->next == b->n) {
      ex->cpu_head = b->link;
      if (!ex->cpu_head) ex->cpu_tail = NULL;
      --ex->cpu_count;
      pthread_cond_signal(&ex->cpu_space_cv);
    }
    if (ex->cpu_count) pthread_cond_signal(&ex->cpu_cv);
    double t0 = now_us();
    ex->worker_free_at[w] = t0 + est_get(ex, EST_TAIL_CPU, cnt);
    pthread_mutex_unlock(&ex->mu);
    int rc = ONNXC_OK;
    if (c->cpu_tail) {
      const void* const* ins[ONNXC_SPLIT_MAX_BATCH];
      void* const* outs[ONNXC_SPLIT_MAX_BATCH];
      for (int i = 0; i < cnt; ++i) {
        ins[i] = (const void* const*)b->cut[i0 + i];
        outs[i] = b->r[i0 + i]->outputs;
      }
      rc = run_requests(c->cpu_tail, ex->worker_inst[w], ex->worker_items, cnt, ins, c->cut_bytes, outs, c->output_bytes,
                        ex->worker_in[w], ex->worker_out[w]);
      if (rc != ONNXC_OK)
        snprintf(detail, sizeof detail, "split executor: CPU tail %s: %s", c->cpu_tail->model_name,
                 c->cpu_tail->last_error ? c->cpu_tail->last_error() : "");
    } else {
      sleep_us(cost_of(c->cpu_cost, cnt));
      for (int i = i0; i < i0 + cnt; ++i)
        sim_tail_one(c->num_cut, c->cut_bytes, (const void* const*)b->cut[i], c->num_outputs, c->output_bytes,
                     b->r[i]->outputs);
    }
    double t1 = now_us();
    pthread_mutex_lock(&ex->mu);
    ex->worker_free_at[w] = 0;
    if (rc == ONNXC_OK) est_add(ex, EST_TAIL_CPU, cnt, t1 - t0);
    pthread_mutex_unlock(&ex->mu);
    complete(ex, b->r + i0, cnt, b, rc, rc == ONNXC_OK ? "" : detail, 1);
    pthread_mutex_lock(&ex->mu);
  }
  pthread_mutex_unlock(&ex->mu);
  return NULL;
}

int onnxc_split_sizes_from_models(const onnxc_model_info* head, const onnxc_model_info* tail,
                                  onnxc_split_config* c) {
  if (!head || !tail || !c) return split_fail(ONNXC_ERR_ARG, "onnxc_split_sizes_from_models: NULL argument");
  if (head->num_inputs > ONNXC_SPLIT_MAX_TENSORS || head->num_outputs > ONNXC_SPLIT_MAX_TENSORS ||
      tail->num_outputs > ONNXC_SPLIT_MAX_TENSORS)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_sizes_from_models: more than %d tensors in a part",
                      ONNXC_SPLIT_MAX_TENSORS);
  /* A run-time size other than the batch (--dynamic seq=MAX: dynamic_axis > 0, or max_size > 0
   * next to a batch) is not a count of requests; the executor's batches are along the first
   * dimension. */
  if (size_axis(head) > 0 || size_axis(tail) > 0)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_sizes_from_models: %s takes a run-time size along dimension %d, not a batch of "
                      "requests; the split executor runs parts built for one shape or with --dynamic batch=N",
                      size_axis(head) > 0 ? head->model_name : tail->model_name,
                      size_axis(head) > 0 ? size_axis(head) : size_axis(tail));
  if (head->num_outputs != tail->num_inputs)
    return split_fail(ONNXC_ERR_SHAPE, "onnxc_split_sizes_from_models: head %s has %d outputs, tail %s %d inputs",
                      head->model_name, head->num_outputs, tail->model_name, tail->num_inputs);
  for (int k = 0; k < head->num_outputs; ++k) {
    const onnxc_tensor_info *o = &head->outputs[k], *i = &tail->inputs[k];
    if (o->dtype != i->dtype)
      return split_fail(ONNXC_ERR_DTYPE, "onnxc_split_sizes_from_models: cut tensor %d: head output dtype %d, tail input dtype %d",
                        k, o->dtype, i->dtype);
    if (item_numel(head, o) != item_numel(tail, i))
      return split_fail(ONNXC_ERR_SHAPE,
                        "onnxc_split_sizes_from_models: cut tensor %d: head output has %zu elements per request, tail input %zu",
                        k, item_numel(head, o), item_numel(tail, i));
  }
  c->num_inputs = head->num_inputs;
  c->num_cut = head->num_outputs;
  c->num_outputs = tail->num_outputs;
  for (int k = 0; k < head->num_inputs; ++k) c->input_bytes[k] = item_bytes(head, &head->inputs[k]);
  for (int k = 0; k < head->num_outputs; ++k) c->cut_bytes[k] = item_bytes(head, &head->outputs[k]);
  for (int k = 0; k < tail->num_outputs; ++k) c->output_bytes[k] = item_bytes(tail, &tail->outputs[k]);
  return ONNXC_OK;
}

static void stop_threads(onnxc_split* ex) {
  for (int i = 0; i < ex->n_slot_threads; ++i) pthread_join(ex->slot_threads[i], NULL);
  ex->n_slot_threads = 0;
  pthread_mutex_lock(&ex->mu);
  ex->cpu_stop = 1;
  pthread_cond_broadcast(&ex->cpu_cv);
  pthread_mutex_unlock(&ex->mu);
  for (int i = 0; i < ex->n_worker_threads; ++i) pthread_join(ex->worker_threads[i], NULL);
  ex->n_worker_threads = 0;
}

static void free_executor(onnxc_split* ex) {
  for (int w = 0; w < ONNXC_SPLIT_MAX_WORKERS; ++w) {
    if (ex->worker_inst[w]) ex->cfg.cpu_tail->destroy(&ex->worker_inst[w]);
    free(ex->worker_in[w]);
    free(ex->worker_out[w]);
  }
  while (ex->free_reqs) {
    split_req* r = ex->free_reqs;
    ex->free_reqs = r->next;
    free(r);
  }
  while (ex->free_batches) {
    split_batch* b = ex->free_batches;
    ex->free_batches = b->link;
    free(b->cut_mem);
    free(b);
  }
  free(ex->lat);
  pthread_cond_destroy(&ex->q_cv);
  pthread_cond_destroy(&ex->cpu_cv);
  pthread_cond_destroy(&ex->cpu_space_cv);
  pthread_cond_destroy(&ex->drain_cv);
  pthread_mutex_destroy(&ex->mu);
  free(ex);
}

static void seed(onnxc_split* ex, int part, onnxc_split_cost cost) {
  if (cost.a_us == 0 && cost.per_item_us == 0) return;
  for (int b = 1; b <= ex->cfg.max_batch; ++b) {
    ex->est[part][b] = cost_of(cost, b);
    ex->est_n[part][b] = 1;
  }
}

int onnxc_split_create(const onnxc_split_config* config, onnxc_split** out) {
  if (!config || !out) return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: NULL argument");
  *out = NULL;
  onnxc_split_config c = *config;
  const onnxc_split_device* d = &c.device;
  if (!d->run_head || !d->run_tail || !d->fetch_cut)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: the device lacks run_head, run_tail or fetch_cut");
  if (d->num_slots < 1 || d->num_slots > ONNXC_SPLIT_MAX_SLOTS)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: device slots %d not in 1..%d", d->num_slots, ONNXC_SPLIT_MAX_SLOTS);
  if (c.num_inputs < 0 || c.num_inputs > ONNXC_SPLIT_MAX_TENSORS || c.num_cut < 0 || c.num_cut > ONNXC_SPLIT_MAX_TENSORS ||
      c.num_outputs < 0 || c.num_outputs > ONNXC_SPLIT_MAX_TENSORS)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: tensor counts must be in 0..%d", ONNXC_SPLIT_MAX_TENSORS);
  if (c.max_batch == 0) c.max_batch = 1;
  if (c.max_batch < 1 || c.max_batch > ONNXC_SPLIT_MAX_BATCH)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: max_batch %d not in 1..%d", c.max_batch, ONNXC_SPLIT_MAX_BATCH);
  if (c.num_preferred < 0 || c.num_preferred > ONNXC_SPLIT_MAX_PREFERRED)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: num_preferred %d not in 0..%d", c.num_preferred,
                      ONNXC_SPLIT_MAX_PREFERRED);
  for (int i = 0; i < c.num_preferred; ++i)
    if (c.preferred[i] < 1 || c.preferred[i] > c.max_batch)
      return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: preferred batch size %d not in 1..max_batch (%d)",
                        c.preferred[i], c.max_batch);
  if (c.max_queue_delay_us < 0) return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: negative max_queue_delay_us");
  if (c.max_queue_size == 0) c.max_queue_size = 1024;
  if (c.max_queue_size < 0) return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: negative max_queue_size");
  if (c.policy != ONNXC_SPLIT_GPU_ONLY && c.policy != ONNXC_SPLIT_CPU_TAIL && c.policy != ONNXC_SPLIT_EFT)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: unknown policy %d", (int)c.policy);
  if (c.cpu_workers < 0 || c.cpu_workers > ONNXC_SPLIT_MAX_WORKERS)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: cpu_workers %d not in 0..%d", c.cpu_workers,
                      ONNXC_SPLIT_MAX_WORKERS);
  if (c.cpu_workers == 0 && c.policy != ONNXC_SPLIT_GPU_ONLY)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: policies cpu-tail and eft need cpu_workers >= 1");
  if (c.cpu_tail) {
    if (size_axis(c.cpu_tail) > 0)
      return split_fail(ONNXC_ERR_ARG, "onnxc_split_create: CPU tail %s takes a run-time size along dimension %d, not a batch of "
                        "requests", c.cpu_tail->model_name, size_axis(c.cpu_tail));
    if (c.cpu_tail->num_inputs != c.num_cut || c.cpu_tail->num_outputs != c.num_outputs)
      return split_fail(ONNXC_ERR_SHAPE, "onnxc_split_create: CPU tail %s has %d inputs and %d outputs, the config %d and %d",
                        c.cpu_tail->model_name, c.cpu_tail->num_inputs, c.cpu_tail->num_outputs, c.num_cut, c.num_outputs);
    for (int k = 0; k < c.num_cut; ++k)
      if (item_bytes(c.cpu_tail, &c.cpu_tail->inputs[k]) != c.cut_bytes[k])
        return split_fail(ONNXC_ERR_SIZE, "onnxc_split_create: CPU tail input %d is not %zu bytes", k, c.cut_bytes[k]);
    for (int k = 0; k < c.num_outputs; ++k)
      if (item_bytes(c.cpu_tail, &c.cpu_tail->outputs[k]) != c.output_bytes[k])
        return split_fail(ONNXC_ERR_SIZE, "onnxc_split_create: CPU tail output %d is not %zu bytes", k, c.output_bytes[k]);
  }

  onnxc_split* ex = (onnxc_split*)calloc(1, sizeof *ex);
  if (!ex) return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_create: out of memory");
  ex->cfg = c;
  for (int k = 0; k < c.num_cut; ++k) ex->cut_total += c.cut_bytes[k];
  ex->cpu_cap = 2 * (c.cpu_workers > 0 ? c.cpu_workers : 1);
  if (pthread_mutex_init(&ex->mu, NULL) || init_cond(&ex->q_cv) || init_cond(&ex->cpu_cv) ||
      init_cond(&ex->cpu_space_cv) || init_cond(&ex->drain_cv)) {
    free(ex);
    return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_create: cannot create the synchronisation objects");
  }
  seed(ex, EST_HEAD, c.head_cost);
  seed(ex, EST_TAIL_DEV, c.device_tail_cost);
  seed(ex, EST_FETCH, c.fetch_cost);
  seed(ex, EST_TAIL_CPU, c.cpu_cost);
  ex->t_reset = now_us();
  int rc = ONNXC_OK;
  ex->worker_items = 1;
  if (c.cpu_tail) {
    /* Whole batches on a --dynamic tail run as one call each (up to its max_batch requests). */
    if (c.cpu_whole_batches) ex->worker_items = per_call(c.cpu_tail, c.max_batch);
    for (int w = 0; w < c.cpu_workers && rc == ONNXC_OK; ++w) {
      rc = c.cpu_tail->create(c.cpu_tail_weights, c.cpu_tail_options, &ex->worker_inst[w]);
      if (rc != ONNXC_OK) {
        split_fail(rc, "onnxc_split_create: CPU tail %s instance %d: %s", c.cpu_tail->model_name, w,
                   c.cpu_tail->last_error ? c.cpu_tail->last_error() : "");
      } else if (ex->worker_items > 1) {
        ex->worker_in[w] = (unsigned char*)malloc(stage_bytes(ex->worker_items, c.num_cut, c.cut_bytes) + 1);
        ex->worker_out[w] = (unsigned char*)malloc(stage_bytes(ex->worker_items, c.num_outputs, c.output_bytes) + 1);
        if (!ex->worker_in[w] || !ex->worker_out[w])
          rc = split_fail(ONNXC_ERR_NOMEM, "onnxc_split_create: out of memory for CPU worker %d's batches", w);
      }
    }
  }
  for (int w = 0; w < c.cpu_workers && rc == ONNXC_OK; ++w) {
    ex->worker_args[w].ex = ex;
    ex->worker_args[w].index = w;
    if (pthread_create(&ex->worker_threads[w], NULL, worker_main, &ex->worker_args[w]))
      rc = split_fail(ONNXC_ERR_NOMEM, "onnxc_split_create: cannot start CPU worker %d", w);
    else
      ++ex->n_worker_threads;
  }
  for (int s = 0; s < d->num_slots && rc == ONNXC_OK; ++s) {
    ex->slot_args[s].ex = ex;
    ex->slot_args[s].index = s;
    if (pthread_create(&ex->slot_threads[s], NULL, slot_main, &ex->slot_args[s]))
      rc = split_fail(ONNXC_ERR_NOMEM, "onnxc_split_create: cannot start slot thread %d", s);
    else
      ++ex->n_slot_threads;
  }
  if (rc != ONNXC_OK) {
    pthread_mutex_lock(&ex->mu);
    ex->stopping = 1;
    pthread_cond_broadcast(&ex->q_cv);
    pthread_mutex_unlock(&ex->mu);
    stop_threads(ex);
    free_executor(ex);
    return rc;
  }
  *out = ex;
  return ONNXC_OK;
}

int onnxc_split_submit(onnxc_split* ex, const void* const* inputs, void* const* outputs, onnxc_split_callback cb,
                       void* user) {
  if (!ex) return split_fail(ONNXC_ERR_ARG, "onnxc_split_submit: NULL executor");
  const onnxc_split_config* c = &ex->cfg;
  if ((c->num_inputs && !inputs) || (c->num_outputs && !outputs))
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_submit: NULL inputs or outputs");
  for (int k = 0; k < c->num_inputs; ++k)
    if (!inputs[k] && c->input_bytes[k]) return split_fail(ONNXC_ERR_ARG, "onnxc_split_submit: input %d is NULL", k);
  for (int k = 0; k < c->num_outputs; ++k)
    if (!outputs[k] && c->output_bytes[k]) return split_fail(ONNXC_ERR_ARG, "onnxc_split_submit: output %d is NULL", k);
  double t = now_us();
  pthread_mutex_lock(&ex->mu);
  if (ex->stopping) {
    pthread_mutex_unlock(&ex->mu);
    return split_fail(ONNXC_ERR_STATE, "onnxc_split_submit: the executor is being destroyed");
  }
  if (ex->q_count >= c->max_queue_size) {
    ++ex->st.rejected;
    pthread_mutex_unlock(&ex->mu);
    return split_fail(ONNXC_SPLIT_ERR_FULL, "onnxc_split_submit: the queue is full (%d requests)", c->max_queue_size);
  }
  split_req* r = ex->free_reqs;
  if (r) {
    ex->free_reqs = r->next;
  } else {
    r = (split_req*)malloc(sizeof *r);
    if (!r) {
      pthread_mutex_unlock(&ex->mu);
      return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_submit: out of memory");
    }
  }
  for (int k = 0; k < c->num_inputs; ++k) r->inputs[k] = inputs[k];
  for (int k = 0; k < c->num_outputs; ++k) r->outputs[k] = outputs[k];
  r->cb = cb;
  r->user = user;
  r->t_submit = t;
  r->next = NULL;
  if (ex->q_tail)
    ex->q_tail->next = r;
  else
    ex->q_head = r;
  ex->q_tail = r;
  ++ex->q_count;
  ++ex->outstanding;
  ++ex->st.submitted;
  pthread_cond_signal(&ex->q_cv);
  pthread_mutex_unlock(&ex->mu);
  return ONNXC_OK;
}

int onnxc_split_drain(onnxc_split* ex) {
  if (!ex) return split_fail(ONNXC_ERR_ARG, "onnxc_split_drain: NULL executor");
  pthread_mutex_lock(&ex->mu);
  while (ex->outstanding) pthread_cond_wait(&ex->drain_cv, &ex->mu);
  pthread_mutex_unlock(&ex->mu);
  return ONNXC_OK;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int onnxc_split_stats_get(onnxc_split* ex, onnxc_split_stats* s) {
  if (!ex || !s) return split_fail(ONNXC_ERR_ARG, "onnxc_split_stats_get: NULL argument");
  pthread_mutex_lock(&ex->mu);
  *s = ex->st;
  size_t n = ex->lat_n;
  double* sorted = n ? (double*)malloc(n * sizeof *sorted) : NULL;
  if (sorted) memcpy(sorted, ex->lat, n * sizeof *sorted);
  uint64_t cpu = ex->cpu_tail_reqs;
  s->elapsed_us = now_us() - ex->t_reset;
  pthread_mutex_unlock(&ex->mu);
  s->cpu_tail_share = s->completed ? (double)cpu / (double)s->completed : 0;
  s->latency_p50_us = s->latency_p99_us = s->latency_max_us = s->latency_mean_us = 0;
  if (n && !sorted) return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_stats_get: out of memory for the percentiles");
  if (n) {
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += sorted[i];
    size_t i50 = (size_t)((double)n * 0.50 + 0.999999), i99 = (size_t)((double)n * 0.99 + 0.999999);
    s->latency_p50_us = sorted[(i50 ? i50 : 1) - 1];
    s->latency_p99_us = sorted[(i99 ? i99 : 1) - 1];
    s->latency_max_us = sorted[n - 1];
    s->latency_mean_us = sum / (double)n;
  }
  free(sorted);
  return ONNXC_OK;
}

int onnxc_split_stats_reset(onnxc_split* ex) {
  if (!ex) return split_fail(ONNXC_ERR_ARG, "onnxc_split_stats_reset: NULL executor");
  pthread_mutex_lock(&ex->mu);
  memset(&ex->st, 0, sizeof ex->st);
  ex->cpu_tail_reqs = 0;
  ex->lat_n = 0;
  ex->t_reset = now_us();
  pthread_mutex_unlock(&ex->mu);
  return ONNXC_OK;
}

int onnxc_split_destroy(onnxc_split** pex) {
  if (!pex) return split_fail(ONNXC_ERR_ARG, "onnxc_split_destroy: NULL argument");
  onnxc_split* ex = *pex;
  if (!ex) return ONNXC_OK;
  pthread_mutex_lock(&ex->mu);
  ex->stopping = 1;
  split_req* q = ex->q_head;
  ex->q_head = ex->q_tail = NULL;
  ex->q_count = 0;
  pthread_cond_broadcast(&ex->q_cv);
  pthread_mutex_unlock(&ex->mu);
  while (q) {
    split_req* batch[ONNXC_SPLIT_MAX_BATCH];
    int n = 0;
    while (q && n < ONNXC_SPLIT_MAX_BATCH) {
      batch[n++] = q;
      q = q->next;
    }
    complete(ex, batch, n, NULL, ONNXC_ERR_STATE, "split executor: destroyed before the request ran", 0);
  }
  stop_threads(ex);
  free_executor(ex);
  *pex = NULL;
  return ONNXC_OK;
}

/* ---- the CPU device ---- */

static _Thread_local char g_dev_err[512];

typedef struct {
  const onnxc_model_info *head, *tail;
  int slots, max_batch;
  int head_items, tail_items; /* requests per call: a --dynamic part's batch, else 1 */
  void* hinst[ONNXC_SPLIT_MAX_SLOTS];
  void* tinst[ONNXC_SPLIT_MAX_SLOTS];
  unsigned char* cut_mem[ONNXC_SPLIT_MAX_SLOTS];
  unsigned char* in_stage[ONNXC_SPLIT_MAX_SLOTS];  /* a --dynamic head's gathered inputs */
  unsigned char* cut_stage[ONNXC_SPLIT_MAX_SLOTS]; /* the cut of a --dynamic part's call */
  unsigned char* out_stage[ONNXC_SPLIT_MAX_SLOTS]; /* a --dynamic tail's outputs */
  size_t in_bytes[ONNXC_SPLIT_MAX_TENSORS], cut_bytes[ONNXC_SPLIT_MAX_TENSORS], out_bytes[ONNXC_SPLIT_MAX_TENSORS];
  size_t cut_total;
} cpu_dev;

static void cpu_dev_cut(const cpu_dev* d, int slot, int r, void** cut) {
  unsigned char* p = d->cut_mem[slot] + d->cut_total * (size_t)r;
  for (int k = 0; k < d->head->num_outputs; ++k) {
    cut[k] = p;
    p += d->cut_bytes[k];
  }
}

static int cpu_dev_check(const cpu_dev* d, int slot, int batch) {
  if (slot < 0 || slot >= d->slots || batch < 0 || batch > d->max_batch) {
    snprintf(g_dev_err, sizeof g_dev_err, "CPU device: slot %d or batch %d out of range", slot, batch);
    return ONNXC_ERR_ARG;
  }
  return ONNXC_OK;
}

/* The head on a batch: one call per request, or per head_items requests for a --dynamic head. */
static int cpu_dev_head(void* ctx, int slot, int batch, const void* const* const* inputs, double* exec_us) {
  cpu_dev* d = (cpu_dev*)ctx;
  (void)exec_us; /* the wall time: the slots share no engine */
  int rc = cpu_dev_check(d, slot, batch);
  if (rc != ONNXC_OK) return rc;
  void* cut[ONNXC_SPLIT_MAX_BATCH][ONNXC_SPLIT_MAX_TENSORS];
  void* const* cuts[ONNXC_SPLIT_MAX_BATCH];
  for (int r = 0; r < batch; ++r) {
    cpu_dev_cut(d, slot, r, cut[r]);
    cuts[r] = cut[r];
  }
  rc = run_requests(d->head, d->hinst[slot], d->head_items, batch, inputs, d->in_bytes, cuts, d->cut_bytes,
                    d->in_stage[slot], d->cut_stage[slot]);
  if (rc != ONNXC_OK)
    snprintf(g_dev_err, sizeof g_dev_err, "head %s: %s", d->head->model_name, d->head->last_error ? d->head->last_error() : "");
  return rc;
}

static int cpu_dev_tail(void* ctx, int slot, int batch, void* const* const* outputs, double* exec_us) {
  cpu_dev* d = (cpu_dev*)ctx;
  (void)exec_us;
  int rc = cpu_dev_check(d, slot, batch);
  if (rc != ONNXC_OK) return rc;
  void* cut[ONNXC_SPLIT_MAX_BATCH][ONNXC_SPLIT_MAX_TENSORS];
  const void* const* cuts[ONNXC_SPLIT_MAX_BATCH];
  for (int r = 0; r < batch; ++r) {
    cpu_dev_cut(d, slot, r, cut[r]);
    cuts[r] = (const void* const*)cut[r];
  }
  rc = run_requests(d->tail, d->tinst[slot], d->tail_items, batch, cuts, d->cut_bytes, outputs, d->out_bytes,
                    d->cut_stage[slot], d->out_stage[slot]);
  if (rc != ONNXC_OK)
    snprintf(g_dev_err, sizeof g_dev_err, "tail %s: %s", d->tail->model_name, d->tail->last_error ? d->tail->last_error() : "");
  return rc;
}

static int cpu_dev_fetch(void* ctx, int slot, int batch, void* const* const* cut_host, double* exec_us) {
  cpu_dev* d = (cpu_dev*)ctx;
  (void)exec_us;
  int rc = cpu_dev_check(d, slot, batch);
  if (rc != ONNXC_OK) return rc;
  for (int r = 0; r < batch; ++r) {
    void* cut[ONNXC_SPLIT_MAX_TENSORS];
    cpu_dev_cut(d, slot, r, cut);
    for (int k = 0; k < d->head->num_outputs; ++k) memcpy(cut_host[r][k], cut[k], d->cut_bytes[k]);
  }
  return ONNXC_OK;
}

static const char* dev_detail(void* ctx) {
  (void)ctx;
  return g_dev_err;
}

static void cpu_dev_free(cpu_dev* d) {
  for (int s = 0; s < ONNXC_SPLIT_MAX_SLOTS; ++s) {
    if (d->hinst[s]) d->head->destroy(&d->hinst[s]);
    if (d->tinst[s]) d->tail->destroy(&d->tinst[s]);
    free(d->cut_mem[s]);
    free(d->in_stage[s]);
    free(d->cut_stage[s]);
    free(d->out_stage[s]);
  }
  free(d);
}

int onnxc_split_cpu_device_create(const onnxc_model_info* head, const char* head_weights, const onnxc_model_info* tail,
                                  const char* tail_weights, const onnxc_options* options, int num_slots, int max_batch,
                                  onnxc_split_device* device) {
  if (!head || !tail || !device) return split_fail(ONNXC_ERR_ARG, "onnxc_split_cpu_device_create: NULL argument");
  if (num_slots < 1 || num_slots > ONNXC_SPLIT_MAX_SLOTS || max_batch < 1 || max_batch > ONNXC_SPLIT_MAX_BATCH)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_cpu_device_create: slots %d or max_batch %d out of range", num_slots,
                      max_batch);
  onnxc_split_config sizes;
  memset(&sizes, 0, sizeof sizes);
  int rc = onnxc_split_sizes_from_models(head, tail, &sizes);
  if (rc != ONNXC_OK) return rc;
  cpu_dev* d = (cpu_dev*)calloc(1, sizeof *d);
  if (!d) return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_cpu_device_create: out of memory");
  d->head = head;
  d->tail = tail;
  d->slots = num_slots;
  d->max_batch = max_batch;
  memcpy(d->in_bytes, sizes.input_bytes, sizeof d->in_bytes);
  memcpy(d->cut_bytes, sizes.cut_bytes, sizeof d->cut_bytes);
  memcpy(d->out_bytes, sizes.output_bytes, sizeof d->out_bytes);
  d->head_items = per_call(head, max_batch);
  d->tail_items = per_call(tail, max_batch);
  const int cut_items = d->head_items > d->tail_items ? d->head_items : d->tail_items;
  for (int k = 0; k < sizes.num_cut; ++k) d->cut_total += sizes.cut_bytes[k];
  for (int s = 0; s < num_slots; ++s) {
    d->cut_mem[s] = (unsigned char*)malloc(d->cut_total * (size_t)max_batch + 1);
    if (d->head_items > 1) d->in_stage[s] = (unsigned char*)malloc(stage_bytes(d->head_items, sizes.num_inputs, d->in_bytes) + 1);
    if (cut_items > 1) d->cut_stage[s] = (unsigned char*)malloc(stage_bytes(cut_items, sizes.num_cut, d->cut_bytes) + 1);
    if (d->tail_items > 1) d->out_stage[s] = (unsigned char*)malloc(stage_bytes(d->tail_items, sizes.num_outputs, d->out_bytes) + 1);
    if (!d->cut_mem[s] || (d->head_items > 1 && !d->in_stage[s]) || (cut_items > 1 && !d->cut_stage[s]) ||
        (d->tail_items > 1 && !d->out_stage[s])) {
      cpu_dev_free(d);
      return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_cpu_device_create: out of memory");
    }
    rc = head->create(head_weights, options, &d->hinst[s]);
    if (rc != ONNXC_OK) {
      split_fail(rc, "onnxc_split_cpu_device_create: head %s: %s", head->model_name, head->last_error ? head->last_error() : "");
      cpu_dev_free(d);
      return rc;
    }
    rc = tail->create(tail_weights, options, &d->tinst[s]);
    if (rc != ONNXC_OK) {
      split_fail(rc, "onnxc_split_cpu_device_create: tail %s: %s", tail->model_name, tail->last_error ? tail->last_error() : "");
      cpu_dev_free(d);
      return rc;
    }
  }
  memset(device, 0, sizeof *device);
  device->ctx = d;
  device->num_slots = num_slots;
  device->run_head = cpu_dev_head;
  device->run_tail = cpu_dev_tail;
  device->fetch_cut = cpu_dev_fetch;
  device->detail = dev_detail;
  return ONNXC_OK;
}

int onnxc_split_cpu_device_destroy(onnxc_split_device* device) {
  if (!device) return split_fail(ONNXC_ERR_ARG, "onnxc_split_cpu_device_destroy: NULL argument");
  if (device->ctx) cpu_dev_free((cpu_dev*)device->ctx);
  memset(device, 0, sizeof *device);
  return ONNXC_OK;
}

/* ---- the simulated device ---- */

typedef struct {
  onnxc_split_sim_config c;
  pthread_mutex_t engine; /* the one execution engine */
  unsigned char* cut_mem[ONNXC_SPLIT_MAX_SLOTS];
  size_t cut_total;
} sim_dev;

static void sim_cut(const sim_dev* d, int slot, int r, void** cut) {
  unsigned char* p = d->cut_mem[slot] + d->cut_total * (size_t)r;
  for (int k = 0; k < d->c.num_cut; ++k) {
    cut[k] = p;
    p += d->c.cut_bytes[k];
  }
}

static int sim_check(const sim_dev* d, int slot, int batch) {
  if (slot < 0 || slot >= d->c.num_slots || batch < 0 || batch > d->c.max_batch) {
    snprintf(g_dev_err, sizeof g_dev_err, "simulated device: slot %d or batch %d out of range", slot, batch);
    return ONNXC_ERR_ARG;
  }
  return ONNXC_OK;
}

static int sim_head(void* ctx, int slot, int batch, const void* const* const* inputs, double* exec_us) {
  sim_dev* d = (sim_dev*)ctx;
  int rc = sim_check(d, slot, batch);
  if (rc) return rc;
  pthread_mutex_lock(&d->engine);
  double t0 = now_us();
  for (int r = 0; r < batch; ++r) {
    void* cut[ONNXC_SPLIT_MAX_TENSORS];
    sim_cut(d, slot, r, cut);
    sim_head_one(d->c.num_inputs, d->c.input_bytes, inputs[r], d->c.num_cut, d->c.cut_bytes, cut);
  }
  sleep_us(cost_of(d->c.head, batch) - (now_us() - t0));
  *exec_us = now_us() - t0;
  pthread_mutex_unlock(&d->engine);
  return ONNXC_OK;
}

static int sim_tail(void* ctx, int slot, int batch, void* const* const* outputs, double* exec_us) {
  sim_dev* d = (sim_dev*)ctx;
  int rc = sim_check(d, slot, batch);
  if (rc) return rc;
  pthread_mutex_lock(&d->engine);
  double t0 = now_us();
  for (int r = 0; r < batch; ++r) {
    void* cut[ONNXC_SPLIT_MAX_TENSORS];
    sim_cut(d, slot, r, cut);
    sim_tail_one(d->c.num_cut, d->c.cut_bytes, (const void* const*)cut, d->c.num_outputs, d->c.output_bytes, outputs[r]);
  }
  sleep_us(cost_of(d->c.tail, batch) - (now_us() - t0));
  *exec_us = now_us() - t0;
  pthread_mutex_unlock(&d->engine);
  return ONNXC_OK;
}

static int sim_fetch(void* ctx, int slot, int batch, void* const* const* cut_host, double* exec_us) {
  sim_dev* d = (sim_dev*)ctx;
  int rc = sim_check(d, slot, batch);
  if (rc) return rc;
  double t0 = now_us();
  for (int r = 0; r < batch; ++r) {
    void* cut[ONNXC_SPLIT_MAX_TENSORS];
    sim_cut(d, slot, r, cut);
    for (int k = 0; k < d->c.num_cut; ++k) memcpy(cut_host[r][k], cut[k], d->c.cut_bytes[k]);
  }
  sleep_us(cost_of(d->c.fetch, batch) - (now_us() - t0));
  *exec_us = now_us() - t0;
  return ONNXC_OK;
}

int onnxc_split_sim_device_create(const onnxc_split_sim_config* c, onnxc_split_device* device) {
  if (!c || !device) return split_fail(ONNXC_ERR_ARG, "onnxc_split_sim_device_create: NULL argument");
  if (c->num_slots < 1 || c->num_slots > ONNXC_SPLIT_MAX_SLOTS || c->max_batch < 1 || c->max_batch > ONNXC_SPLIT_MAX_BATCH)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_sim_device_create: slots %d or max_batch %d out of range", c->num_slots,
                      c->max_batch);
  if (c->num_inputs < 0 || c->num_inputs > ONNXC_SPLIT_MAX_TENSORS || c->num_cut < 0 || c->num_cut > ONNXC_SPLIT_MAX_TENSORS ||
      c->num_outputs < 0 || c->num_outputs > ONNXC_SPLIT_MAX_TENSORS)
    return split_fail(ONNXC_ERR_ARG, "onnxc_split_sim_device_create: tensor counts must be in 0..%d", ONNXC_SPLIT_MAX_TENSORS);
  sim_dev* d = (sim_dev*)calloc(1, sizeof *d);
  if (!d) return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_sim_device_create: out of memory");
  d->c = *c;
  for (int k = 0; k < c->num_cut; ++k) d->cut_total += c->cut_bytes[k];
  if (pthread_mutex_init(&d->engine, NULL)) {
    free(d);
    return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_sim_device_create: cannot create the engine lock");
  }
  for (int s = 0; s < c->num_slots; ++s) {
    d->cut_mem[s] = (unsigned char*)malloc(d->cut_total * (size_t)c->max_batch + 1);
    if (!d->cut_mem[s]) {
      for (int i = 0; i < s; ++i) free(d->cut_mem[i]);
      pthread_mutex_destroy(&d->engine);
      free(d);
      return split_fail(ONNXC_ERR_NOMEM, "onnxc_split_sim_device_create: out of memory");
    }
  }
  memset(device, 0, sizeof *device);
  device->ctx = d;
  device->num_slots = c->num_slots;
  device->run_head = sim_head;
  device->run_tail = sim_tail;
  device->fetch_cut = sim_fetch;
  device->detail = dev_detail;
  return ONNXC_OK;
}

int onnxc_split_sim_device_destroy(onnxc_split_device* device) {
  if (!device) return split_fail(ONNXC_ERR_ARG, "onnxc_split_sim_device_destroy: NULL argument");
  sim_dev* d = (sim_dev*)device->ctx;
  if (d) {
    for (int s = 0; s < d->c.num_slots; ++s) free(d->cut_mem[s]);
    pthread_mutex_destroy(&d->engine);
    free(d);
  }
  memset(device, 0, sizeof *device);
  return ONNXC_OK;
}
