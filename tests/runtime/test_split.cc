// test_split.cc — unit tests for the split-model executor (runtime/onnxc_split.c), built as its
// own library (split_lib in tests/runtime/CMakeLists.txt).
//
// Most tests run the simulated device, whose costs are milliseconds so that the scheduling
// decisions do not depend on a quiet machine: they check counts, placements and orderings, and
// times only with wide margins. The simulated pipeline transforms each request's bytes
// (onnxc_split_sim_reference), so every output shows whose input it came from. The last tests
// run the CPU device with two small fake models (head: x + 1, tail: 2x).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "onnxc_split.h"

namespace {

constexpr size_t kIn = 8, kCut = 12, kOut = 8;

struct Req {
  unsigned char in[kIn];
  unsigned char out[kOut];
  std::atomic<int> calls{0};
  int status = -1;
  int batch = 0;
  int on_cpu = -1;
  double latency_us = 0;
  std::string detail;
};

void OnDone(void* user, const onnxc_split_result* r) {
  Req* q = static_cast<Req*>(user);
  q->status = r->status;
  q->batch = r->batch;
  q->on_cpu = r->tail_on_cpu;
  q->latency_us = r->latency_us;
  q->detail = r->detail;
  q->calls.fetch_add(1);
}

double Ms(double ms) { return ms * 1000.0; }

// Costs in milliseconds: a + per_item * batch.
struct Costs {
  double g_a = 4, g_b = 2;      // head on the device
  double tg_a = 3, tg_b = 2;    // tail on the device
  double x_a = 0.5, x_b = 0;    // cut fetch
  double c_a = 8, c_b = 4;      // tail on a CPU worker
};

struct Sim {
  onnxc_split_device dev{};
  onnxc_split_config cfg{};
  onnxc_split* ex = nullptr;

  Sim(const Costs& k, onnxc_split_policy policy, int slots, int workers, int max_batch, double delay_ms = 0,
      int queue = 0, double cap_ms = 0) {
    onnxc_split_sim_config sc{};
    sc.num_slots = slots;
    sc.max_batch = max_batch;
    sc.num_inputs = 1;
    sc.num_cut = 2;
    sc.num_outputs = 1;
    sc.input_bytes[0] = kIn;
    sc.cut_bytes[0] = kCut;
    sc.cut_bytes[1] = 4;
    sc.output_bytes[0] = kOut;
    sc.head = {Ms(k.g_a), Ms(k.g_b)};
    sc.tail = {Ms(k.tg_a), Ms(k.tg_b)};
    sc.fetch = {Ms(k.x_a), Ms(k.x_b)};
    EXPECT_EQ(onnxc_split_sim_device_create(&sc, &dev), ONNXC_OK) << onnxc_split_last_error();
    cfg.device = dev;
    cfg.num_inputs = 1;
    cfg.num_cut = 2;
    cfg.num_outputs = 1;
    cfg.input_bytes[0] = kIn;
    cfg.cut_bytes[0] = kCut;
    cfg.cut_bytes[1] = 4;
    cfg.output_bytes[0] = kOut;
    cfg.max_batch = max_batch;
    cfg.max_queue_delay_us = Ms(delay_ms);
    cfg.max_queue_size = queue;
    cfg.policy = policy;
    cfg.latency_cap_us = Ms(cap_ms);
    cfg.cpu_workers = workers;
    cfg.head_cost = sc.head;
    cfg.device_tail_cost = sc.tail;
    cfg.fetch_cost = sc.fetch;
    cfg.cpu_cost = {Ms(k.c_a), Ms(k.c_b)};
  }
  int Start() {
    int rc = onnxc_split_create(&cfg, &ex);
    EXPECT_EQ(rc, ONNXC_OK) << onnxc_split_last_error();
    return rc;
  }
  ~Sim() {
    if (ex) onnxc_split_destroy(&ex);
    onnxc_split_sim_device_destroy(&dev);
  }
  int Submit(Req& r) {
    const void* in[1] = {r.in};
    void* out[1] = {r.out};
    return onnxc_split_submit(ex, in, out, OnDone, &r);
  }
  onnxc_split_stats Stats() {
    onnxc_split_stats s;
    EXPECT_EQ(onnxc_split_stats_get(ex, &s), ONNXC_OK) << onnxc_split_last_error();
    return s;
  }
};

void Fill(Req& r, uint32_t id) {
  for (size_t j = 0; j < kIn; ++j) r.in[j] = static_cast<unsigned char>((id >> (8 * (j % 4))) + (j / 4) * 7);
  std::memset(r.out, 0, kOut);
}

void ExpectRouted(const onnxc_split_config& cfg, const Req& r, uint32_t id) {
  unsigned char want[kOut];
  const void* in[1] = {r.in};
  void* out[1] = {want};
  onnxc_split_sim_reference(&cfg, in, out);
  EXPECT_EQ(std::memcmp(want, r.out, kOut), 0) << "request " << id << " got another request's output";
}

// Submits n requests one after the other, each after the previous one completed, with a gap.
void Sequential(Sim& s, std::vector<std::unique_ptr<Req>>& reqs, int n, double gap_ms) {
  for (int i = 0; i < n; ++i) {
    reqs.push_back(std::make_unique<Req>());
    Fill(*reqs.back(), static_cast<uint32_t>(i));
    ASSERT_EQ(s.Submit(*reqs.back()), ONNXC_OK) << onnxc_split_last_error();
    ASSERT_EQ(onnxc_split_drain(s.ex), ONNXC_OK);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int>(Ms(gap_ms))));
  }
}

void Burst(Sim& s, std::vector<std::unique_ptr<Req>>& reqs, int n) {
  for (int i = 0; i < n; ++i) {
    reqs.push_back(std::make_unique<Req>());
    Fill(*reqs.back(), static_cast<uint32_t>(i));
  }
  for (int i = 0; i < n; ++i) ASSERT_EQ(s.Submit(*reqs[i]), ONNXC_OK) << i << ": " << onnxc_split_last_error();
  ASSERT_EQ(onnxc_split_drain(s.ex), ONNXC_OK);
}

TEST(Split, EftKeepsTailsOnDeviceAtLowLoad) {
  Sim s(Costs{}, ONNXC_SPLIT_EFT, 2, 2, 4);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  Sequential(s, reqs, 12, 2);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i]->calls.load(), 1);
    EXPECT_EQ(reqs[i]->status, ONNXC_OK) << reqs[i]->detail;
    EXPECT_EQ(reqs[i]->on_cpu, 0) << i;
    ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i));
  }
  onnxc_split_stats st = s.Stats();
  EXPECT_EQ(st.completed, 12u);
  EXPECT_EQ(st.cpu_tail_share, 0.0);
  EXPECT_EQ(st.batch_hist[1], 12u);
  EXPECT_GT(st.device_busy_us, 12 * Ms(4 + 2 + 3 + 2) * 0.9);
}

TEST(Split, EftOffloadsTailsAsLoadRises) {
  Sim s(Costs{}, ONNXC_SPLIT_EFT, 3, 2, 4);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  Burst(s, reqs, 80);
  int cpu = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i]->calls.load(), 1);
    EXPECT_EQ(reqs[i]->status, ONNXC_OK);
    cpu += reqs[i]->on_cpu == 1;
    ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i));
  }
  onnxc_split_stats st = s.Stats();
  EXPECT_EQ(st.completed, 80u);
  EXPECT_GT(cpu, 0) << "no tail went to the CPU under a burst";
  EXPECT_LT(cpu, 80) << "every tail went to the CPU";
  EXPECT_GT(st.cpu_tail_share, 0.0);
  EXPECT_EQ(st.cpu_tail_share, cpu / 80.0);
  EXPECT_GT(st.batches_cpu_tail, 0u);
}

TEST(Split, EftDrainsABacklogFasterThanGpuOnly) {
  // 80 requests at once: gpu-only runs 20 batches of G(4) + Tg(4) = 23 ms on the one engine
  // (about 460 ms); eft moves tails to the two CPU workers while heads wait, and must finish
  // clearly sooner. With two slots only the queued heads (the backlog a device tail would
  // delay) make the CPU the earlier finish: C(4) + X = 24.5 ms vs Tg(4) + one head = 23 ms.
  double took[2];
  int i = 0;
  for (onnxc_split_policy p : {ONNXC_SPLIT_GPU_ONLY, ONNXC_SPLIT_EFT}) {
    Sim s(Costs{}, p, 2, 2, 4);
    ASSERT_EQ(s.Start(), ONNXC_OK);
    std::vector<std::unique_ptr<Req>> reqs;
    auto t0 = std::chrono::steady_clock::now();
    Burst(s, reqs, 80);
    took[i++] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (size_t j = 0; j < reqs.size(); ++j) ExpectRouted(s.cfg, *reqs[j], static_cast<uint32_t>(j));
  }
  EXPECT_GT(took[0], 400.0);
  EXPECT_LT(took[1], 0.85 * took[0]) << "gpu-only " << took[0] << " ms, eft " << took[1] << " ms";
}

TEST(Split, LatencyCapOffloadsWithinTheCapAtLowLoad) {
  // G + X + C at batch 1 = 6 + 0.5 + 12 = 18.5 ms: within a 150 ms cap, so the tails go to the
  // CPU (freeing the device) and every latency stays under the cap.
  Sim s(Costs{}, ONNXC_SPLIT_EFT, 2, 2, 4, 0, 0, 150);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  Sequential(s, reqs, 10, 2);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i]->status, ONNXC_OK);
    EXPECT_EQ(reqs[i]->on_cpu, 1) << i;
    EXPECT_LE(reqs[i]->latency_us, Ms(150)) << i;
    EXPECT_GE(reqs[i]->latency_us, Ms(18)) << i;
    ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i));
  }
  onnxc_split_stats st = s.Stats();
  EXPECT_EQ(st.cpu_tail_share, 1.0);
  EXPECT_LE(st.latency_max_us, Ms(150));
}

TEST(Split, LatencyCapBelowTheCpuPathKeepsTailsOnDevice) {
  Sim s(Costs{}, ONNXC_SPLIT_EFT, 2, 2, 4, 0, 0, 12);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  Sequential(s, reqs, 8, 2);
  for (auto& r : reqs) EXPECT_EQ(r->on_cpu, 0);
}

TEST(Split, BurstLosesNothingAndRoutesEveryOutput) {
  Costs k;
  k.g_a = 1, k.g_b = 0.2, k.tg_a = 1, k.tg_b = 0.2, k.c_a = 2, k.c_b = 0.5, k.x_a = 0.2;
  Sim s(k, ONNXC_SPLIT_EFT, 3, 2, 8, 1, 1000);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  const int n = 400;
  for (int i = 0; i < n; ++i) {
    reqs.push_back(std::make_unique<Req>());
    Fill(*reqs.back(), static_cast<uint32_t>(i * 2654435761u));
  }
  // Two submitting threads, interleaved.
  std::thread t([&] {
    for (int i = 1; i < n; i += 2) ASSERT_EQ(s.Submit(*reqs[i]), ONNXC_OK);
  });
  for (int i = 0; i < n; i += 2) ASSERT_EQ(s.Submit(*reqs[i]), ONNXC_OK);
  t.join();
  ASSERT_EQ(onnxc_split_drain(s.ex), ONNXC_OK);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(reqs[i]->calls.load(), 1) << i;
    EXPECT_EQ(reqs[i]->status, ONNXC_OK) << i;
    EXPECT_GE(reqs[i]->batch, 1);
    EXPECT_LE(reqs[i]->batch, 8);
    ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i));
  }
  onnxc_split_stats st = s.Stats();
  EXPECT_EQ(st.submitted, static_cast<uint64_t>(n));
  EXPECT_EQ(st.completed, static_cast<uint64_t>(n));
  EXPECT_EQ(st.failed, 0u);
  EXPECT_EQ(st.rejected, 0u);
  uint64_t sum = 0, batches = 0;
  for (int b = 1; b <= ONNXC_SPLIT_MAX_BATCH; ++b) sum += b * st.batch_hist[b], batches += st.batch_hist[b];
  EXPECT_EQ(sum, static_cast<uint64_t>(n));
  EXPECT_EQ(batches, st.batches);
  EXPECT_GT(st.batch_hist[8], 0u) << "a burst should fill batches";
  EXPECT_LE(st.latency_p50_us, st.latency_p99_us);
  EXPECT_LE(st.latency_p99_us, st.latency_max_us);
}

TEST(Split, FullQueueRejectsWithStatusAndCounts) {
  Costs k;
  k.g_a = 40, k.g_b = 0;
  Sim s(k, ONNXC_SPLIT_GPU_ONLY, 1, 0, 1, 0, 4);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  int rejected = 0;
  for (int i = 0; i < 20; ++i) {
    reqs.push_back(std::make_unique<Req>());
    Fill(*reqs.back(), static_cast<uint32_t>(i));
    int rc = s.Submit(*reqs.back());
    if (rc == ONNXC_SPLIT_ERR_FULL) {
      ++rejected;
      EXPECT_NE(std::string(onnxc_split_last_error()).find("queue is full"), std::string::npos);
    } else {
      EXPECT_EQ(rc, ONNXC_OK);
    }
  }
  ASSERT_EQ(onnxc_split_drain(s.ex), ONNXC_OK);
  // At most 4 queued plus 1 running while 20 arrive within one 40 ms head.
  EXPECT_GE(rejected, 10);
  onnxc_split_stats st = s.Stats();
  EXPECT_EQ(st.rejected, static_cast<uint64_t>(rejected));
  EXPECT_EQ(st.completed + st.rejected, 20u);
  for (int i = 0; i < 20; ++i) EXPECT_LE(reqs[i]->calls.load(), 1);
  int called = 0;
  for (auto& r : reqs) called += r->calls.load();
  EXPECT_EQ(called, 20 - rejected) << "a rejected request must not get a callback";
}

TEST(Split, DestroyWithRequestsInFlightCallsEveryCallbackOnce) {
  Costs k;
  k.g_a = 5, k.g_b = 1, k.tg_a = 5, k.c_a = 10;
  Sim s(k, ONNXC_SPLIT_EFT, 2, 2, 2, 0, 1000);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  for (int i = 0; i < 60; ++i) {
    reqs.push_back(std::make_unique<Req>());
    Fill(*reqs.back(), static_cast<uint32_t>(i));
    ASSERT_EQ(s.Submit(*reqs.back()), ONNXC_OK);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(onnxc_split_destroy(&s.ex), ONNXC_OK);
  EXPECT_EQ(s.ex, nullptr);
  int ok = 0, cancelled = 0;
  for (int i = 0; i < 60; ++i) {
    EXPECT_EQ(reqs[i]->calls.load(), 1) << i;
    if (reqs[i]->status == ONNXC_OK) {
      ++ok;
      ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i));
    } else {
      EXPECT_EQ(reqs[i]->status, ONNXC_ERR_STATE);
      EXPECT_NE(reqs[i]->detail.find("destroyed"), std::string::npos);
      ++cancelled;
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(cancelled, 0);
}

TEST(Split, PoliciesPlaceAsNamed) {
  for (onnxc_split_policy p : {ONNXC_SPLIT_GPU_ONLY, ONNXC_SPLIT_CPU_TAIL}) {
    Costs k;
    k.g_a = 1, k.g_b = 0.5, k.tg_a = 1, k.c_a = 2, k.x_a = 0.2;
    Sim s(k, p, 2, 2, 4);
    ASSERT_EQ(s.Start(), ONNXC_OK);
    std::vector<std::unique_ptr<Req>> reqs;
    Burst(s, reqs, 40);
    Sequential(s, reqs, 5, 1);
    int want = p == ONNXC_SPLIT_CPU_TAIL;
    for (size_t i = 0; i < reqs.size(); ++i) {
      EXPECT_EQ(reqs[i]->calls.load(), 1);
      EXPECT_EQ(reqs[i]->on_cpu, want) << "policy " << p << " request " << i;
      ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i < 40 ? i : i - 40));
    }
    onnxc_split_stats st = s.Stats();
    EXPECT_EQ(st.cpu_tail_share, static_cast<double>(want));
  }
}

TEST(Split, CpuWorkersShareABatchUnlessWholeBatches) {
  // cpu-tail, one batch of 4 (a 100 ms queue delay gathers the burst; G(4) = 4 ms, X = 0.5 ms)
  // and C = 10 ms per request, 4 workers. Shared, each worker runs one request: every request
  // ends about G + X + C = 14.5 ms after submit. Whole batches: one worker runs all four, the
  // last ends after G + X + 4 C = 44.5 ms; with 2 workers of 4 the shared batch ends after 2 C.
  Costs k;
  k.g_a = 4, k.g_b = 0, k.tg_a = 1, k.tg_b = 0, k.c_a = 0, k.c_b = 10, k.x_a = 0.5;
  for (int whole : {0, 1}) {
    for (int workers : {4, 2}) {
      SCOPED_TRACE(std::string(whole ? "whole batches" : "shared batches") + ", " + std::to_string(workers) + " workers");
      Sim s(k, ONNXC_SPLIT_CPU_TAIL, 1, workers, 4, 100);
      s.cfg.cpu_whole_batches = whole;
      ASSERT_EQ(s.Start(), ONNXC_OK);
      std::vector<std::unique_ptr<Req>> reqs;
      Burst(s, reqs, 4);
      double max_ms = 0;
      for (size_t i = 0; i < reqs.size(); ++i) {
        EXPECT_EQ(reqs[i]->calls.load(), 1);
        EXPECT_EQ(reqs[i]->status, ONNXC_OK) << reqs[i]->detail;
        EXPECT_EQ(reqs[i]->batch, 4);
        EXPECT_EQ(reqs[i]->on_cpu, 1);
        ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i));
        max_ms = std::max(max_ms, reqs[i]->latency_us / 1e3);
      }
      // The burst fills the batch (max_batch 4) at once, so no queue delay: shared batches on 4
      // workers must end well before whole batches can (14.5 ms * 1.3 + 15 < 44.5 ms * 0.95).
      const double ends = 4.5 + 10 * (whole ? 4 : 4 / workers);
      EXPECT_GE(max_ms, ends * 0.95);
      EXPECT_LT(max_ms, ends * 1.3 + 15) << "the last tail ended " << max_ms << " ms after submit";
      onnxc_split_stats st = s.Stats();
      EXPECT_EQ(st.completed, 4u);
      EXPECT_EQ(st.batches_cpu_tail, 1u);
      EXPECT_EQ(st.cpu_tail_share, 1.0);
    }
  }
}

TEST(Split, DynamicBatchingFillsUpToMaxBatch) {
  // One slot busy with a long head while 13 requests queue: the next batches are full.
  Costs k;
  k.g_a = 30, k.g_b = 0, k.tg_a = 1, k.tg_b = 0;
  Sim s(k, ONNXC_SPLIT_GPU_ONLY, 1, 0, 4, 0, 100);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  Burst(s, reqs, 13);
  onnxc_split_stats st = s.Stats();
  EXPECT_GE(st.batch_hist[4], 2u);
  for (int b = 5; b <= ONNXC_SPLIT_MAX_BATCH; ++b) EXPECT_EQ(st.batch_hist[b], 0u);
  for (size_t i = 0; i < reqs.size(); ++i) ExpectRouted(s.cfg, *reqs[i], static_cast<uint32_t>(i));
}

TEST(Split, DynamicBatchingWaitsAtMostTheQueueDelay) {
  Costs k;
  k.g_a = 1, k.g_b = 0, k.tg_a = 1, k.tg_b = 0;
  Sim s(k, ONNXC_SPLIT_GPU_ONLY, 1, 0, 8, 40, 100);
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  Sequential(s, reqs, 3, 0);
  for (auto& r : reqs) {
    EXPECT_EQ(r->batch, 1);
    EXPECT_GE(r->latency_us, Ms(40) * 0.95) << "a lone request runs only after the queue delay";
    EXPECT_LE(r->latency_us, Ms(40 + 2 + 200)) << "and not much later";
  }
  // Requests arriving together within the delay share a batch.
  std::vector<std::unique_ptr<Req>> more;
  Burst(s, more, 5);
  for (auto& r : more) EXPECT_EQ(r->batch, 5);
}

TEST(Split, PreferredBatchSizeRunsWithoutWaiting) {
  Costs k;
  k.g_a = 1, k.g_b = 0, k.tg_a = 1, k.tg_b = 0;
  Sim s(k, ONNXC_SPLIT_GPU_ONLY, 1, 0, 8, 400, 100);
  s.cfg.num_preferred = 1;
  s.cfg.preferred[0] = 2;
  ASSERT_EQ(s.Start(), ONNXC_OK);
  std::vector<std::unique_ptr<Req>> reqs;
  Burst(s, reqs, 2);
  for (auto& r : reqs) {
    EXPECT_EQ(r->batch, 2);
    EXPECT_LT(r->latency_us, Ms(300)) << "a preferred size must not wait for the 400 ms delay";
  }
}

TEST(Split, BadConfigsFailWithDetail) {
  Sim s(Costs{}, ONNXC_SPLIT_CPU_TAIL, 1, 0, 4);
  onnxc_split* ex = nullptr;
  EXPECT_EQ(onnxc_split_create(&s.cfg, &ex), ONNXC_ERR_ARG);
  EXPECT_NE(std::string(onnxc_split_last_error()).find("cpu_workers"), std::string::npos);
  EXPECT_EQ(ex, nullptr);
  s.cfg.cpu_workers = 1;
  s.cfg.max_batch = ONNXC_SPLIT_MAX_BATCH + 1;
  EXPECT_EQ(onnxc_split_create(&s.cfg, &ex), ONNXC_ERR_ARG);
  EXPECT_NE(std::string(onnxc_split_last_error()).find("max_batch"), std::string::npos);
  s.cfg.max_batch = 4;
  s.cfg.num_preferred = 1;
  s.cfg.preferred[0] = 5;
  EXPECT_EQ(onnxc_split_create(&s.cfg, &ex), ONNXC_ERR_ARG);
  EXPECT_EQ(onnxc_split_submit(nullptr, nullptr, nullptr, nullptr, nullptr), ONNXC_ERR_ARG);
  EXPECT_STREQ(onnxc_split_status_string(ONNXC_SPLIT_ERR_FULL), "queue full");
}

// ---- CPU device with fake models: head y = x + 1 (f32[4] -> f32[4]), tail z = 2y. ----

const int64_t kShape4[1] = {4};
const onnxc_tensor_info kT4[1] = {{"t", ONNXC_F32, 1, kShape4, 4}};
const onnxc_tensor_info kT3[1] = {{"t", ONNXC_F32, 1, kShape4, 3}};
std::atomic<int> g_live_instances{0};

int FakeCreate(const char*, const onnxc_options*, void** ctx) {
  *ctx = new int(0);
  g_live_instances.fetch_add(1);
  return ONNXC_OK;
}
int FakeDestroy(void** ctx) {
  delete static_cast<int*>(*ctx);
  *ctx = nullptr;
  g_live_instances.fetch_sub(1);
  return ONNXC_OK;
}
const char* FakeError() { return "x is negative"; }
int HeadRun(void* ctx, const void* const* in, const size_t* ib, void* const* out, const size_t* ob) {
  if (ib[0] != 16 || ob[0] != 16) return ONNXC_ERR_SIZE;
  ++*static_cast<int*>(ctx);
  const float* x = static_cast<const float*>(in[0]);
  float* y = static_cast<float*>(out[0]);
  if (x[0] < 0) return ONNXC_ERR_ARG;
  for (int i = 0; i < 4; ++i) y[i] = x[i] + 1;
  return ONNXC_OK;
}
int TailRun(void* ctx, const void* const* in, const size_t* ib, void* const* out, const size_t* ob) {
  if (ib[0] != 16 || ob[0] != 16) return ONNXC_ERR_SIZE;
  ++*static_cast<int*>(ctx);
  const float* y = static_cast<const float*>(in[0]);
  float* z = static_cast<float*>(out[0]);
  for (int i = 0; i < 4; ++i) z[i] = 2 * y[i];
  return ONNXC_OK;
}

onnxc_model_info FakeInfo(const char* name, decltype(&HeadRun) run, const onnxc_tensor_info* out = kT4) {
  onnxc_model_info m{};
  m.model_name = name;
  m.num_inputs = 1;
  m.inputs = kT4;
  m.num_outputs = 1;
  m.outputs = out;
  m.create = FakeCreate;
  m.run_v = run;
  m.destroy = FakeDestroy;
  m.last_error = FakeError;
  return m;
}

struct FReq {
  float x[4];
  float z[4];
  std::atomic<int> calls{0};
  int status = -1, on_cpu = -1;
  std::string detail;
};

void OnFDone(void* user, const onnxc_split_result* r) {
  FReq* q = static_cast<FReq*>(user);
  q->status = r->status;
  q->on_cpu = r->tail_on_cpu;
  q->detail = r->detail;
  q->calls.fetch_add(1);
}

// ---- The same parts built as if with --dynamic: f32[4,4] holds up to 4 requests' rows, and a
// call takes 1 to 4 of them (the buffers' sizes say how many). Each part counts its calls. ----

const int64_t kShape44[2] = {4, 4};
const onnxc_tensor_info kT44[1] = {{"t", ONNXC_F32, 2, kShape44, 16}};

struct CallCount {
  std::atomic<int> calls{0}, items{0}, most{0};
  void reset() {
    calls = 0;
    items = 0;
    most = 0;
  }
  void add(int b) {
    calls.fetch_add(1);
    items.fetch_add(b);
    int m = most.load();
    while (b > m && !most.compare_exchange_weak(m, b)) {
    }
  }
};
CallCount g_dyn_head, g_dyn_tail;

int DynHeadRun(void* ctx, const void* const* in, const size_t* ib, void* const* out, const size_t* ob) {
  if (ib[0] % 16 || ib[0] < 16 || ib[0] > 64 || ob[0] != ib[0]) return ONNXC_ERR_SIZE;
  const int b = static_cast<int>(ib[0] / 16);
  ++*static_cast<int*>(ctx);
  g_dyn_head.add(b);
  const float* x = static_cast<const float*>(in[0]);
  float* y = static_cast<float*>(out[0]);
  for (int r = 0; r < b; ++r)
    if (x[4 * r] < 0) return ONNXC_ERR_ARG;
  for (int i = 0; i < 4 * b; ++i) y[i] = x[i] + 1;
  return ONNXC_OK;
}
int DynTailRun(void* ctx, const void* const* in, const size_t* ib, void* const* out, const size_t* ob) {
  if (ib[0] % 16 || ib[0] < 16 || ib[0] > 64 || ob[0] != ib[0]) return ONNXC_ERR_SIZE;
  const int b = static_cast<int>(ib[0] / 16);
  ++*static_cast<int*>(ctx);
  g_dyn_tail.add(b);
  const float* y = static_cast<const float*>(in[0]);
  float* z = static_cast<float*>(out[0]);
  for (int i = 0; i < 4 * b; ++i) z[i] = 2 * y[i];
  return ONNXC_OK;
}

onnxc_model_info DynInfo(const char* name, decltype(&HeadRun) run) {
  onnxc_model_info m = FakeInfo(name, run, kT44);
  m.inputs = kT44;
  m.max_batch = 4;
  return m;
}

void RunCpuDevice(onnxc_split_policy policy, int expect_cpu, onnxc_model_info head = FakeInfo("fake_head", HeadRun),
                  onnxc_model_info tail = FakeInfo("fake_tail", TailRun), int whole_batches = 0) {
  onnxc_split_config cfg{};
  ASSERT_EQ(onnxc_split_sizes_from_models(&head, &tail, &cfg), ONNXC_OK) << onnxc_split_last_error();
  ASSERT_EQ(onnxc_split_cpu_device_create(&head, nullptr, &tail, nullptr, nullptr, 2, 4, &cfg.device), ONNXC_OK)
      << onnxc_split_last_error();
  cfg.max_batch = 4;
  cfg.max_queue_delay_us = 200;
  cfg.policy = policy;
  cfg.cpu_workers = 2;
  cfg.cpu_tail = &tail;
  cfg.cpu_whole_batches = whole_batches;
  onnxc_split* ex = nullptr;
  ASSERT_EQ(onnxc_split_create(&cfg, &ex), ONNXC_OK) << onnxc_split_last_error();
  EXPECT_EQ(g_live_instances.load(), 2 * 2 + 2);
  std::vector<std::unique_ptr<FReq>> reqs;
  for (int i = 0; i < 200; ++i) {
    reqs.push_back(std::make_unique<FReq>());
    for (int j = 0; j < 4; ++j) reqs.back()->x[j] = (i == 77 && j == 0) ? -1.0f : static_cast<float>(i * 10 + j);
    const void* in[1] = {reqs.back()->x};
    void* out[1] = {reqs.back()->z};
    ASSERT_EQ(onnxc_split_submit(ex, in, out, OnFDone, reqs.back().get()), ONNXC_OK);
  }
  ASSERT_EQ(onnxc_split_drain(ex), ONNXC_OK);
  onnxc_split_stats st;
  ASSERT_EQ(onnxc_split_stats_get(ex, &st), ONNXC_OK);
  ASSERT_EQ(onnxc_split_destroy(&ex), ONNXC_OK);
  ASSERT_EQ(onnxc_split_cpu_device_destroy(&cfg.device), ONNXC_OK);
  EXPECT_EQ(g_live_instances.load(), 0);
  int failed = 0;
  for (int i = 0; i < 200; ++i) {
    FReq& r = *reqs[i];
    EXPECT_EQ(r.calls.load(), 1);
    if (i == 77 || r.status != ONNXC_OK) {
      // Request 77's head fails, and with it the batch it ran in.
      EXPECT_EQ(r.status, ONNXC_ERR_ARG) << i;
      EXPECT_NE(r.detail.find("x is negative"), std::string::npos) << r.detail;
      ++failed;
      continue;
    }
    if (expect_cpu >= 0) {
      EXPECT_EQ(r.on_cpu, expect_cpu);
    }
    for (int j = 0; j < 4; ++j) EXPECT_EQ(r.z[j], 2.0f * (static_cast<float>(i * 10 + j) + 1.0f)) << i;
  }
  EXPECT_GE(failed, 1);
  EXPECT_LE(failed, 4);
  EXPECT_EQ(st.failed, static_cast<uint64_t>(failed));
  EXPECT_EQ(st.completed, static_cast<uint64_t>(200 - failed));
}

TEST(SplitCpuDevice, GpuOnlyRunsTheWholeModelOnTheDevice) { RunCpuDevice(ONNXC_SPLIT_GPU_ONLY, 0); }
TEST(SplitCpuDevice, CpuTailRunsTailsOnWorkers) { RunCpuDevice(ONNXC_SPLIT_CPU_TAIL, 1); }
TEST(SplitCpuDevice, EftRunsEitherWay) { RunCpuDevice(ONNXC_SPLIT_EFT, -1); }

// A --dynamic head and tail run each batch as calls of up to 4 requests, every request's rows
// gathered and scattered back to its own buffers; a request whose head fails fails its call's
// requests only.
TEST(SplitCpuDevice, DynamicPartsRunABatchAsOneCall) {
  g_dyn_head.reset();
  g_dyn_tail.reset();
  RunCpuDevice(ONNXC_SPLIT_GPU_ONLY, 0, DynInfo("dyn_head", DynHeadRun), DynInfo("dyn_tail", DynTailRun));
  EXPECT_EQ(g_dyn_head.items.load(), 200);
  EXPECT_GE(g_dyn_tail.items.load(), 196);
  EXPECT_LT(g_dyn_head.calls.load(), 200);  // some batch ran as one call of several requests
  EXPECT_GT(g_dyn_head.most.load(), 1);
  EXPECT_LE(g_dyn_head.most.load(), 4);
  EXPECT_GT(g_dyn_tail.most.load(), 1);
}

// A --dynamic head feeds a tail of one request (and the CPU workers' copies of it): the sizes are
// per request, so the two kinds of build mix.
TEST(SplitCpuDevice, DynamicHeadWithAOneRequestTail) {
  g_dyn_head.reset();
  RunCpuDevice(ONNXC_SPLIT_EFT, -1, DynInfo("dyn_head", DynHeadRun));
  EXPECT_EQ(g_dyn_head.items.load(), 200);
  EXPECT_GT(g_dyn_head.most.load(), 1);
}

// Whole batches on the CPU workers: a --dynamic CPU tail takes each batch in one call.
TEST(SplitCpuDevice, WholeBatchesOnADynamicCpuTailAreOneCall) {
  g_dyn_tail.reset();
  RunCpuDevice(ONNXC_SPLIT_CPU_TAIL, 1, DynInfo("dyn_head", DynHeadRun), DynInfo("dyn_tail", DynTailRun), 1);
  EXPECT_GE(g_dyn_tail.items.load(), 196);
  EXPECT_LT(g_dyn_tail.calls.load(), g_dyn_tail.items.load());
  EXPECT_GT(g_dyn_tail.most.load(), 1);
}

TEST(SplitCpuDevice, MismatchedCutIsRejected) {
  onnxc_model_info head = FakeInfo("fake_head", HeadRun, kT3), tail = FakeInfo("fake_tail", TailRun);
  onnxc_split_config cfg{};
  EXPECT_EQ(onnxc_split_sizes_from_models(&head, &tail, &cfg), ONNXC_ERR_SHAPE);
  EXPECT_NE(std::string(onnxc_split_last_error()).find("cut tensor 0"), std::string::npos);
  onnxc_split_device dev{};
  EXPECT_EQ(onnxc_split_cpu_device_create(&head, nullptr, &tail, nullptr, nullptr, 2, 4, &dev), ONNXC_ERR_SHAPE);
  EXPECT_EQ(g_live_instances.load(), 0);
}

// A part built with a run-time size other than the batch (--dynamic seq=MAX, alone or next to a
// batch) is refused: its max_batch counts tokens, or its requests have a length too.
TEST(SplitCpuDevice, APartWithARunTimeTokenCountIsRejected) {
  for (bool with_batch : {false, true}) {
    onnxc_model_info head = DynInfo("seq_head", DynHeadRun), tail = DynInfo("dyn_tail", DynTailRun);
    if (with_batch) head.max_size = 16, head.size_axis = 1;
    else head.dynamic_axis = 1;
    onnxc_split_config cfg{};
    EXPECT_EQ(onnxc_split_sizes_from_models(&head, &tail, &cfg), ONNXC_ERR_ARG) << with_batch;
    EXPECT_NE(std::string(onnxc_split_last_error()).find("seq_head takes a run-time size along dimension 1"), std::string::npos)
        << onnxc_split_last_error();
    onnxc_split_device dev{};
    EXPECT_EQ(onnxc_split_cpu_device_create(&head, nullptr, &tail, nullptr, nullptr, 2, 4, &dev), ONNXC_ERR_ARG) << with_batch;
    EXPECT_EQ(g_live_instances.load(), 0);
  }
}

}  // namespace
