/* loadgen.c — open-loop Poisson load on the split-model executor (runtime/onnxc_split.h).
 *
 * Requests arrive at exponential gaps of mean 1/rate regardless of completions (open loop), for
 * each rate of a grid: a warm-up, then a fixed measurement window (the statistics are reset in
 * between), then the arrivals stop and the executor drains. Per rate: offered and achieved
 * throughput (completions inside the window / window), latency p50/p99/max of the requests
 * completed after the reset, the batch-size histogram, the share of tails run on the CPU,
 * rejections (full queue) and the device's busy share. A table on stdout, JSON with --json.
 *
 * The model: libHEAD.so and libTAIL.so, two onnxc models (compile-model --split ... --emit so)
 * whose NAME_info symbols are found with dlopen, run on the model device (the head and the
 * tail's device version, --tail-device, default the same library as --tail, on model instances
 * per slot; the CPU tail on one instance per worker). With C models that is the CPU-only mode;
 * with the CUDA ones of --device cuda (libNAME_head.so, --tail-device libNAME_tail_gpu.so) the
 * slots run them on the GPU through their own C API, which copies each part's inputs in and
 * outputs out (the cut makes a round trip through the host). With --device cuda the slots are
 * the CUDA device instead (runtime/onnxc_split_cuda.h): per slot a stream, pinned and device
 * buffers, the head and --tail-device's NAME_cuda_info.run_device on device buffers, so the cut
 * stays on the GPU unless the tail goes to a CPU worker; --cuda-graphs replays the head's
 * launches from CUDA graphs. Or --simulate G,Tg,C[,X]: the simulated device and CPU tail with
 * those costs in milliseconds, each A or A+B (A + B per request of the batch).
 *
 * --check (models only): every completed request's outputs must equal, byte for byte, those of
 * its input run alone (head then tail, one request per call, on instances of their own): a batch
 * gathered, run and scattered by the executor, a --dynamic part's batch in one call included,
 * gives each request its own answer. Mismatches are counted per rate and fail the run.
 *
 * Build: cmake --build build --target loadgen (with the CUDA device when CMake finds the CUDA
 * toolkit: ONNXC_CUDA_HOME, default /usr/local/cuda), or
 *   cc -O2 -Iruntime bench/loadgen.c runtime/onnxc_split.c -lpthread -ldl -lm -o loadgen
 * and for --device cuda add -DONNXC_HAVE_CUDA_DEVICE runtime/onnxc_split_cuda.c
 *   -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcudart.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxc_split.h"
#ifdef ONNXC_HAVE_CUDA_DEVICE
#include "onnxc_split_cuda.h"
#endif

#define MAX_RATES 64

static void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s (--head libHEAD.so --tail libTAIL.so | --simulate G,Tg,C[,X]) [options]\n"
          "  --tail-device libT.so  the tail's version the device slots run (default: --tail), e.g. the\n"
          "                      CUDA tail of compile-model --split --device cuda (libNAME_tail_gpu.so)\n"
          "  --head-weights F, --tail-weights F, --tail-device-weights F\n"
          "                      weights (default: the model's file next to its library)\n"
          "  --device D          cpu | cuda: the device slots run the head and tail's device version as\n"
          "                      model instances (cpu, default; CUDA models then copy through the host),\n"
          "                      or on the CUDA device over NAME_cuda_info (cuda: --head and\n"
          "                      --tail-device from compile-model --split --device cuda; the cut stays on the GPU)\n"
          "  --cuda-graphs       with --device cuda: replay the head's launches from CUDA graphs\n"
          "  --threads N         OpenMP threads per model instance (default 1)\n"
          "  --policy P          gpu-only | cpu-tail | eft (default eft)\n"
          "  --slots N           device slots (default 2)     --workers N   CPU tail workers (default 2)\n"
          "  --max-batch N       (default 8)                  --preferred a,b,...\n"
          "  --delay-us D        max queue delay (default 1000) --queue N    max queue size (default 1024)\n"
          "  --cap-us C          eft latency cap (default none)\n"
          "  --cpu-whole-batches one CPU worker runs a batch's tails (default: the free workers share them)\n"
          "  --rates r1,r2,...   requests/s (default 10,20,50,100)\n"
          "  --warmup S          seconds (default 1)          --window S    seconds (default 5)\n"
          "  --seed N            arrival seed (default 1)     --json FILE\n"
          "  --check             every completed request's outputs must equal its input's run alone (models only)\n",
          argv0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t) {
  double d = t - now_s();
  if (d <= 0) return;
  struct timespec ts;
  ts.tv_sec = (time_t)d;
  ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static int parse_cost(const char* s, onnxc_split_cost* c) {
  char* end;
  double a = strtod(s, &end), b = 0;
  if (end == s) return -1;
  if (*end == '+') {
    const char* p = end + 1;
    b = strtod(p, &end);
    if (end == p) return -1;
  }
  if (*end != '\0' && *end != ',') return -1;
  c->a_us = a * 1000;
  c->per_item_us = b * 1000;
  return 0;
}

static int parse_list(const char* s, double* v, int max) {
  int n = 0;
  while (*s && n < max) {
    char* end;
    v[n++] = strtod(s, &end);
    if (end == s) return -1;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return n;
}

/* ---- the request pool: buffers that live until the callback ---- */

typedef struct req {
  void* in[ONNXC_SPLIT_MAX_TENSORS];
  void* out[ONNXC_SPLIT_MAX_TENSORS];
  int cls; /* requests of one class have the same input (see pool_init) */
  struct pool* pool;
  struct req* next;
} req;

#define INPUT_CLASSES 61

typedef struct pool {
  pthread_mutex_t mu;
  req* free;
  req* all;
  int n;
  /* --check: each class's outputs run alone, and the counts (under mu) */
  const onnxc_split_config* cfg;
  void* ref[INPUT_CLASSES][ONNXC_SPLIT_MAX_TENSORS];
  int checking;
  uint64_t checked, mismatched;
} pool;

static int pool_init(pool* p, int n, const onnxc_split_config* c, unsigned seed) {
  p->all = (req*)calloc((size_t)n, sizeof(req));
  if (!p->all) return -1;
  p->n = n;
  p->free = NULL;
  p->cfg = c;
  pthread_mutex_init(&p->mu, NULL);
  for (int i = 0; i < n; ++i) {
    req* r = &p->all[i];
    r->pool = p;
    r->cls = i % INPUT_CLASSES;
    for (int k = 0; k < c->num_inputs; ++k) {
      unsigned char* b = (unsigned char*)malloc(c->input_bytes[k] + 1);
      if (!b) return -1;
      /* small values: valid-looking input for any dtype (float bytes included); INPUT_CLASSES
       * distinct inputs in all */
      for (size_t j = 0; j < c->input_bytes[k]; ++j) b[j] = (unsigned char)((j * 7 + (unsigned)i + seed) % INPUT_CLASSES);
      r->in[k] = b;
    }
    for (int k = 0; k < c->num_outputs; ++k) {
      r->out[k] = malloc(c->output_bytes[k] + 1);
      if (!r->out[k]) return -1;
    }
    r->next = p->free;
    p->free = r;
  }
  return 0;
}

static void pool_free(pool* p, const onnxc_split_config* c) {
  for (int i = 0; i < p->n; ++i) {
    for (int k = 0; k < c->num_inputs; ++k) free(p->all[i].in[k]);
    for (int k = 0; k < c->num_outputs; ++k) free(p->all[i].out[k]);
  }
  for (int j = 0; j < INPUT_CLASSES; ++j)
    for (int k = 0; k < c->num_outputs; ++k) free(p->ref[j][k]);
  free(p->all);
  pthread_mutex_destroy(&p->mu);
}

static req* pool_get(pool* p) {
  pthread_mutex_lock(&p->mu);
  req* r = p->free;
  if (r) p->free = r->next;
  pthread_mutex_unlock(&p->mu);
  return r;
}

/* --check: each input class run alone through head then tail (one request per call, instances
 * of its own) into p->ref. */
static int pool_references(pool* p, const onnxc_model_info* head, const char* hw, const onnxc_model_info* tail,
                           const char* tw, const onnxc_options* opts) {
  const onnxc_split_config* c = p->cfg;
  void *hi = NULL, *ti = NULL;
  unsigned char* cut[ONNXC_SPLIT_MAX_TENSORS] = {0};
  int rc = head->create(hw, opts, &hi);
  if (rc == ONNXC_OK) rc = tail->create(tw, opts, &ti);
  for (int k = 0; k < c->num_cut && rc == ONNXC_OK; ++k)
    if (!(cut[k] = (unsigned char*)malloc(c->cut_bytes[k] + 1))) rc = ONNXC_ERR_NOMEM;
  for (int j = 0; j < INPUT_CLASSES && j < p->n && rc == ONNXC_OK; ++j) {
    for (int k = 0; k < c->num_outputs && rc == ONNXC_OK; ++k)
      if (!(p->ref[j][k] = malloc(c->output_bytes[k] + 1))) rc = ONNXC_ERR_NOMEM;
    if (rc == ONNXC_OK) rc = head->run_v(hi, (const void* const*)p->all[j].in, c->input_bytes, (void* const*)cut, c->cut_bytes);
    if (rc == ONNXC_OK) rc = tail->run_v(ti, (const void* const*)cut, c->cut_bytes, p->ref[j], c->output_bytes);
  }
  if (rc != ONNXC_OK)
    fprintf(stderr, "loadgen: --check: running a request alone failed: %s %s\n", head->last_error ? head->last_error() : "",
            tail->last_error ? tail->last_error() : "");
  for (int k = 0; k < c->num_cut; ++k) free(cut[k]);
  if (ti) tail->destroy(&ti);
  if (hi) head->destroy(&hi);
  p->checking = rc == ONNXC_OK;
  return rc;
}

static void on_done(void* user, const onnxc_split_result* res) {
  req* r = (req*)user;
  pool* p = r->pool;
  if (p->checking && res && res->status == ONNXC_OK) {
    int same = 1;
    for (int k = 0; k < p->cfg->num_outputs; ++k) {
      same = same && memcmp(r->out[k], p->ref[r->cls][k], p->cfg->output_bytes[k]) == 0;
      memset(r->out[k], 0xA5, p->cfg->output_bytes[k]); /* a request that writes nothing next time is caught */
    }
    pthread_mutex_lock(&p->mu);
    ++p->checked;
    p->mismatched += !same;
    pthread_mutex_unlock(&p->mu);
  }
  pthread_mutex_lock(&p->mu);
  r->next = p->free;
  p->free = r;
  pthread_mutex_unlock(&p->mu);
}

/* ---- models ---- */

/* The symbol NAME<suffix> of libNAME.so, opened in *handle unless already open. RTLD_NODELETE:
 * a model library built with OpenMP brings in libgomp, whose pool threads outlive the last
 * instance; unloading it under them (dlclose of the last library that needed it) is unsafe, and
 * it hides what they hold from the leak checker. */
static const void* load_symbol(const char* lib, void** handle, const char* suffix) {
  if (!*handle) *handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!*handle) {
    fprintf(stderr, "loadgen: dlopen %s: %s\n", lib, dlerror());
    return NULL;
  }
  const char* base = strrchr(lib, '/');
  base = base ? base + 1 : lib;
  char sym[512];
  size_t len = strlen(base);
  if (strncmp(base, "lib", 3) != 0 || len < 7 || strcmp(base + len - 3, ".so") != 0 || len - 6 + 6 >= sizeof sym) {
    fprintf(stderr, "loadgen: %s is not named libNAME.so\n", lib);
    return NULL;
  }
  snprintf(sym, sizeof sym, "%.*s%s", (int)(len - 6), base + 3, suffix);
  const void* p = dlsym(*handle, sym);
  if (!p) fprintf(stderr, "loadgen: %s has no symbol %s%s\n", lib, sym, strcmp(suffix, "_cuda_info") == 0 ? " (not a CUDA model)" : "");
  return p;
}

static const onnxc_model_info* load_model(const char* lib, void** handle) {
  *handle = NULL;
  return (const onnxc_model_info*)load_symbol(lib, handle, "_info");
}

static char* default_weights(const char* lib, const onnxc_model_info* m, const char* given) {
  if (given) return strdup(given);
  if (!m->weights_file || !m->weights_file[0]) return NULL;
  const char* slash = strrchr(lib, '/');
  size_t dir = slash ? (size_t)(slash - lib) + 1 : 0;
  char* p = (char*)malloc(dir + strlen(m->weights_file) + 1);
  if (!p) return NULL;
  memcpy(p, lib, dir);
  strcpy(p + dir, m->weights_file);
  return p;
}

/* ---- one rate ---- */

typedef struct {
  double rate, achieved;
  uint64_t offered, completed_window, client_drops;
  uint64_t checked, mismatched; /* --check */
  onnxc_split_stats st;
} result;

static uint64_t rng_state;
static double uniform01(void) { /* xorshift64*, (0, 1] */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return ((double)((rng_state * 2685821657736338717ull) >> 11) + 1.0) / 9007199254740993.0;
}

static int run_rate(const onnxc_split_config* cfg, pool* p, double rate, double warmup, double window, result* out) {
  onnxc_split* ex = NULL;
  int rc = onnxc_split_create(cfg, &ex);
  if (rc) {
    fprintf(stderr, "loadgen: %s\n", onnxc_split_last_error());
    return rc;
  }
  memset(out, 0, sizeof *out);
  out->rate = rate;
  double t0 = now_s(), t_reset = t0 + warmup, t_end = t_reset + window, t = t0;
  int reset = 0;
  for (;;) {
    t += -log(uniform01()) / rate;
    if (!reset && t >= t_reset) {
      sleep_until(t_reset);
      onnxc_split_stats_reset(ex);
      reset = 1;
    }
    if (t >= t_end) break;
    sleep_until(t);
    req* r = pool_get(p);
    if (reset) ++out->offered;
    if (!r) {
      if (reset) ++out->client_drops;
      continue;
    }
    rc = onnxc_split_submit(ex, (const void* const*)r->in, r->out, on_done, r);
    if (rc != ONNXC_OK) on_done(r, NULL); /* rejected (counted by the executor): back to the pool */
  }
  sleep_until(t_end);
  onnxc_split_stats at_end;
  onnxc_split_stats_get(ex, &at_end);
  out->completed_window = at_end.completed;
  out->achieved = (double)at_end.completed / window;
  onnxc_split_drain(ex);
  onnxc_split_stats_get(ex, &out->st);
  onnxc_split_destroy(&ex);
  return ONNXC_OK;
}

static double mean_batch(const onnxc_split_stats* s) {
  uint64_t n = 0, sum = 0;
  for (int b = 1; b <= ONNXC_SPLIT_MAX_BATCH; ++b) n += s->batch_hist[b], sum += (uint64_t)b * s->batch_hist[b];
  return n ? (double)sum / (double)n : 0;
}

int main(int argc, char** argv) {
  const char *head_lib = NULL, *tail_lib = NULL, *head_w = NULL, *tail_w = NULL, *sim = NULL, *json = NULL;
  const char *dev_tail_lib = NULL, *dev_tail_w = NULL;
  const char* policy = "eft";
  const char* device = "cpu";
  int cuda_graphs = 0, check = 0;
  int threads = 1, slots = 2, workers = 2, max_batch = 8, queue = 1024, whole_batches = 0;
  double delay_us = 1000, cap_us = 0, warmup = 1, window = 5;
  double rates[MAX_RATES] = {10, 20, 50, 100}, pref[ONNXC_SPLIT_MAX_PREFERRED];
  int num_rates = 4, num_pref = 0;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v && ++i)
    if (OPT("--head")) head_lib = v;
    else if (OPT("--tail")) tail_lib = v;
    else if (OPT("--head-weights")) head_w = v;
    else if (OPT("--tail-weights")) tail_w = v;
    else if (OPT("--tail-device")) dev_tail_lib = v;
    else if (OPT("--tail-device-weights")) dev_tail_w = v;
    else if (OPT("--simulate")) sim = v;
    else if (OPT("--device")) device = v;
    else if (strcmp(a, "--cuda-graphs") == 0) cuda_graphs = 1;
    else if (strcmp(a, "--check") == 0) check = 1;
    else if (strcmp(a, "--cpu-whole-batches") == 0) whole_batches = 1;
    else if (OPT("--threads")) threads = atoi(v);
    else if (OPT("--policy")) policy = v;
    else if (OPT("--slots")) slots = atoi(v);
    else if (OPT("--workers")) workers = atoi(v);
    else if (OPT("--max-batch")) max_batch = atoi(v);
    else if (OPT("--queue")) queue = atoi(v);
    else if (OPT("--delay-us")) delay_us = atof(v);
    else if (OPT("--cap-us")) cap_us = atof(v);
    else if (OPT("--warmup")) warmup = atof(v);
    else if (OPT("--window")) window = atof(v);
    else if (OPT("--seed")) seed = strtoull(v, NULL, 10);
    else if (OPT("--json")) json = v;
    else if (OPT("--rates")) {
      num_rates = parse_list(v, rates, MAX_RATES);
      if (num_rates < 1) {
        fprintf(stderr, "loadgen: bad --rates %s\n", v);
        return 2;
      }
    } else if (OPT("--preferred")) {
      num_pref = parse_list(v, pref, ONNXC_SPLIT_MAX_PREFERRED);
      if (num_pref < 0) {
        fprintf(stderr, "loadgen: bad --preferred %s\n", v);
        return 2;
      }
    } else {
      usage(argv[0]);
      return 2;
    }
#undef OPT
  }
  if (!sim == !(head_lib && tail_lib) || window <= 0 || warmup < 0) {
    usage(argv[0]);
    return 2;
  }
  if (check && (sim || dev_tail_lib)) {
    fprintf(stderr, "loadgen: --check runs the requests alone through --head and --tail: not with --simulate or --tail-device\n");
    return 2;
  }
  const int use_cuda = strcmp(device, "cuda") == 0;
  if (!use_cuda && strcmp(device, "cpu") != 0) {
    fprintf(stderr, "loadgen: unknown --device %s (cpu or cuda)\n", device);
    return 2;
  }
  if (use_cuda && (sim || !dev_tail_lib)) {
    fprintf(stderr, "loadgen: --device cuda needs --head and --tail-device (CUDA models: libNAME_head.so, libNAME_tail_gpu.so)\n");
    return 2;
  }
#ifndef ONNXC_HAVE_CUDA_DEVICE
  if (use_cuda) {
    fprintf(stderr, "loadgen: built without the CUDA device (no CUDA toolkit found at build time)\n");
    return 2;
  }
#endif
  for (int i = 0; i < num_rates; ++i)
    if (!(rates[i] > 0)) {
      fprintf(stderr, "loadgen: rates must be positive\n");
      return 2;
    }
  onnxc_split_config cfg;
  memset(&cfg, 0, sizeof cfg);
  if (strcmp(policy, "gpu-only") == 0) cfg.policy = ONNXC_SPLIT_GPU_ONLY;
  else if (strcmp(policy, "cpu-tail") == 0) cfg.policy = ONNXC_SPLIT_CPU_TAIL;
  else if (strcmp(policy, "eft") == 0) cfg.policy = ONNXC_SPLIT_EFT;
  else {
    fprintf(stderr, "loadgen: unknown policy %s\n", policy);
    return 2;
  }
  cfg.max_batch = max_batch;
  cfg.num_preferred = num_pref;
  for (int i = 0; i < num_pref; ++i) cfg.preferred[i] = (int)pref[i];
  cfg.max_queue_delay_us = delay_us;
  cfg.max_queue_size = queue;
  cfg.latency_cap_us = cap_us;
  cfg.cpu_workers = workers;
  cfg.cpu_whole_batches = whole_batches;

  void *hh = NULL, *th = NULL, *dh = NULL;
  const onnxc_model_info *head_m = NULL, *tail_m = NULL;
  char *hw = NULL, *tw = NULL, *dw = NULL;
  onnxc_options opts = {.num_threads = threads};
  int is_sim = sim != NULL, rc;
  if (is_sim) {
    onnxc_split_sim_config sc;
    memset(&sc, 0, sizeof sc);
    const char* p = sim;
    onnxc_split_cost* costs[4] = {&sc.head, &sc.tail, &cfg.cpu_cost, &sc.fetch};
    for (int k = 0; k < 4 && p; ++k) {
      if (parse_cost(p, costs[k])) {
        fprintf(stderr, "loadgen: bad --simulate %s (G,Tg,C[,X] in ms, each A or A+B)\n", sim);
        return 2;
      }
      p = strchr(p, ',');
      if (p) ++p;
      else if (k < 2) {
        fprintf(stderr, "loadgen: --simulate needs G,Tg,C\n");
        return 2;
      }
    }
    sc.num_slots = slots;
    sc.max_batch = max_batch;
    sc.num_inputs = sc.num_cut = sc.num_outputs = 1;
    sc.input_bytes[0] = sc.cut_bytes[0] = sc.output_bytes[0] = 64;
    cfg.num_inputs = cfg.num_cut = cfg.num_outputs = 1;
    cfg.input_bytes[0] = cfg.cut_bytes[0] = cfg.output_bytes[0] = 64;
    cfg.head_cost = sc.head;
    cfg.device_tail_cost = sc.tail;
    cfg.fetch_cost = sc.fetch;
    rc = onnxc_split_sim_device_create(&sc, &cfg.device);
  } else {
    const onnxc_model_info* head = load_model(head_lib, &hh);
    const onnxc_model_info* tail = load_model(tail_lib, &th);
    const onnxc_model_info* dev_tail = dev_tail_lib ? load_model(dev_tail_lib, &dh) : tail;
    if (!head || !tail || !dev_tail) return 1;
    head_m = head;
    tail_m = tail;
    hw = default_weights(head_lib, head, head_w);
    tw = default_weights(tail_lib, tail, tail_w);
    dw = dev_tail_lib ? default_weights(dev_tail_lib, dev_tail, dev_tail_w) : NULL;
    rc = onnxc_split_sizes_from_models(head, tail, &cfg);
    if (rc == ONNXC_OK && dev_tail != tail) {
      onnxc_split_config check = cfg; /* the device's tail must take the same cut and give the same outputs */
      rc = onnxc_split_sizes_from_models(head, dev_tail, &check);
      for (int k = 0; rc == ONNXC_OK && k < cfg.num_outputs; ++k)
        if (check.num_outputs != cfg.num_outputs || check.output_bytes[k] != cfg.output_bytes[k]) {
          fprintf(stderr, "loadgen: --tail-device %s has other outputs than --tail %s\n", dev_tail_lib, tail_lib);
          return 1;
        }
    }
    if (rc == ONNXC_OK && use_cuda) {
#ifdef ONNXC_HAVE_CUDA_DEVICE
      const onnxc_cuda_info* ch = (const onnxc_cuda_info*)load_symbol(head_lib, &hh, "_cuda_info");
      const onnxc_cuda_info* ct = (const onnxc_cuda_info*)load_symbol(dev_tail_lib, &dh, "_cuda_info");
      if (!ch || !ct) return 1;
      rc = onnxc_split_cuda_device_create(ch, hw, ct, dw, slots, max_batch, cuda_graphs ? ONNXC_SPLIT_CUDA_GRAPHS : 0, &cfg.device);
      if (rc != ONNXC_OK) {
        fprintf(stderr, "loadgen: %s\n", onnxc_split_cuda_last_error());
        return 1;
      }
#endif
    } else if (rc == ONNXC_OK) {
      rc = onnxc_split_cpu_device_create(head, hw, dev_tail, dev_tail_lib ? dw : tw, &opts, slots, max_batch, &cfg.device);
    }
    cfg.cpu_tail = tail;
    cfg.cpu_tail_weights = tw;
    cfg.cpu_tail_options = &opts;
  }
  if (rc != ONNXC_OK) {
    fprintf(stderr, "loadgen: %s\n", onnxc_split_last_error());
    return 1;
  }
  pool p;
  int pool_n = queue + (slots + 3 * (workers > 0 ? workers : 1)) * max_batch + 16;
  if (pool_init(&p, pool_n, &cfg, (unsigned)seed)) {
    fprintf(stderr, "loadgen: out of memory for %d request buffers\n", pool_n);
    return 1;
  }
  if (check && pool_references(&p, head_m, hw, tail_m, tw, &opts) != ONNXC_OK) return 1;
  rng_state = seed * 0x9E3779B97F4A7C15ull + 1;

  result res[MAX_RATES];
  printf("# %s%s%s%s%s (%s device%s), policy %s, %d slots, %d CPU workers%s, max batch %d, delay %.0f us, queue %d, warm-up %.1f s, window %.1f s\n",
         is_sim ? "simulated device" : "head ", is_sim ? "" : head_lib, is_sim ? "" : " and tail ",
         is_sim ? "" : (dev_tail_lib ? dev_tail_lib : tail_lib), is_sim ? "" : " on the device slots", is_sim ? "simulated" : device,
         use_cuda && cuda_graphs ? ", CUDA graphs" : "", policy, slots, workers,
         whole_batches ? " (whole batches)" : " (sharing batches)", max_batch, delay_us, queue, warmup, window);
  printf("%9s %9s %9s %9s %9s %9s %7s %7s %8s %8s  %s\n", "rate/s", "offered", "achieved", "p50 ms", "p99 ms", "max ms",
         "batch", "cpu %", "rejected", "dev %", "batches (size:count)");
  int failed = 0, mismatch = 0;
  for (int i = 0; i < num_rates; ++i) {
    if (run_rate(&cfg, &p, rates[i], warmup, window, &res[i]) != ONNXC_OK) {
      failed = 1;
      break;
    }
    const onnxc_split_stats* s = &res[i].st;
    printf("%9.1f %9llu %9.1f %9.2f %9.2f %9.2f %7.2f %7.1f %8llu %8.1f  ", rates[i], (unsigned long long)res[i].offered,
           res[i].achieved, s->latency_p50_us / 1e3, s->latency_p99_us / 1e3, s->latency_max_us / 1e3, mean_batch(s),
           100 * s->cpu_tail_share, (unsigned long long)(s->rejected + res[i].client_drops),
           s->elapsed_us > 0 ? 100 * s->device_busy_us / s->elapsed_us : 0);
    for (int b = 1; b <= ONNXC_SPLIT_MAX_BATCH; ++b)
      if (s->batch_hist[b]) printf("%d:%llu ", b, (unsigned long long)s->batch_hist[b]);
    printf("\n");
    if (check) {
      res[i].checked = p.checked;
      res[i].mismatched = p.mismatched;
      p.checked = p.mismatched = 0;
      printf("%9s check: %llu completed requests' outputs equal to their inputs run alone, %llu differ\n", "",
             (unsigned long long)(res[i].checked - res[i].mismatched), (unsigned long long)res[i].mismatched);
      if (res[i].mismatched) mismatch = 1;
    }
    fflush(stdout);
    if (s->failed) fprintf(stderr, "loadgen: %llu requests failed at rate %.1f\n", (unsigned long long)s->failed, rates[i]);
  }
  if (json && !failed) {
    FILE* f = fopen(json, "w");
    if (!f) {
      fprintf(stderr, "loadgen: cannot write %s\n", json);
      failed = 1;
    } else {
      fprintf(f, "{\"mode\": \"%s\", \"device\": \"%s\", \"cuda_graphs\": %d, \"head\": \"%s\", \"tail\": \"%s\", \"tail_device\": \"%s\", \"policy\": \"%s\", "
                 "\"slots\": %d, \"workers\": %d, \"cpu_whole_batches\": %d, \"max_batch\": %d, "
                 "\"max_queue_delay_us\": %.0f, \"max_queue_size\": %d, \"warmup_s\": %g, \"window_s\": %g, \"rates\": [",
              is_sim ? "simulated" : "models", is_sim ? "simulated" : device, use_cuda && cuda_graphs, is_sim ? "" : head_lib, is_sim ? "" : tail_lib,
              is_sim ? "" : (dev_tail_lib ? dev_tail_lib : tail_lib), policy, slots, workers, whole_batches, max_batch, delay_us, queue, warmup, window);
      for (int i = 0; i < num_rates; ++i) {
        const onnxc_split_stats* s = &res[i].st;
        char checks[96] = "";
        if (check)
          snprintf(checks, sizeof checks, "\"checked\": %llu, \"mismatched\": %llu, ", (unsigned long long)res[i].checked,
                   (unsigned long long)res[i].mismatched);
        fprintf(f, "%s\n  {\"rate\": %g, \"offered\": %llu, \"achieved_per_s\": %.3f, \"completed\": %llu, "
                   "\"failed\": %llu, \"rejected\": %llu, \"client_drops\": %llu, \"latency_ms\": {\"p50\": %.3f, "
                   "\"p99\": %.3f, \"max\": %.3f, \"mean\": %.3f}, \"cpu_tail_share\": %.4f, \"device_busy_share\": %.4f, "
                   "%s\"batch_hist\": {",
                i ? "," : "", rates[i], (unsigned long long)res[i].offered, res[i].achieved,
                (unsigned long long)s->completed, (unsigned long long)s->failed, (unsigned long long)s->rejected,
                (unsigned long long)res[i].client_drops, s->latency_p50_us / 1e3, s->latency_p99_us / 1e3,
                s->latency_max_us / 1e3, s->latency_mean_us / 1e3, s->cpu_tail_share,
                s->elapsed_us > 0 ? s->device_busy_us / s->elapsed_us : 0, checks);
        int first = 1;
        for (int b = 1; b <= ONNXC_SPLIT_MAX_BATCH; ++b)
          if (s->batch_hist[b]) {
            fprintf(f, "%s\"%d\": %llu", first ? "" : ", ", b, (unsigned long long)s->batch_hist[b]);
            first = 0;
          }
        fprintf(f, "}}");
      }
      fprintf(f, "\n]}\n");
      fclose(f);
    }
  }
  pool_free(&p, &cfg);
  if (is_sim)
    onnxc_split_sim_device_destroy(&cfg.device);
#ifdef ONNXC_HAVE_CUDA_DEVICE
  else if (use_cuda)
    onnxc_split_cuda_device_destroy(&cfg.device);
#endif
  else
    onnxc_split_cpu_device_destroy(&cfg.device);
  free(hw);
  free(tw);
  free(dw);
  if (dh) dlclose(dh);
  if (th) dlclose(th);
  if (hh) dlclose(hh);
  if (mismatch) fprintf(stderr, "loadgen: --check: some requests' outputs differ from their inputs run alone\n");
  return failed || mismatch;
}
