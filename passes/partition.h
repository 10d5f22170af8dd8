// passes/partition.h — splitting a model between a GPU and the CPU (compile-model --split).
//
// The StarONNX idea: cut the graph once, after some node k. The head (nodes up to k) runs on
// the GPU; the tail (the rest) has a GPU and a CPU version, and the runtime places each
// batch's tail where it finishes first (runtime/). With n CPU workers the best throughput is
//   T = min(1 / G, (1 + n·Tg / C) / (G + Tg))
// (G = the head's GPU time, Tg and C = the tail's time on the GPU and on one CPU worker): the
// GPU runs every head and the tails the CPU cannot take. Against the whole model on the GPU,
// 1 / (G + Tg), the gain is min((G + Tg) / G, 1 + n·Tg / C). A tail on the CPU finishes after
// G + X + C (X = copying the cut tensors to the host), which must stay within the latency
// budget.
//
// Where it cuts: positions in the graph's order (after constant folding and simplification,
// before layout and fusion) crossed by at most kMaxCutTensors tensors, all computed by the
// head (a cut crossed by a graph input or by a graph output the head computes is not one).
// --split auto takes the cut with the largest gain within the budget (ties: the smaller
// tensors, then the earlier cut); after=NODE the cut right after that node; gpu-share=F
// the cut whose head takes the share of the model's GPU time nearest to F.
//
// Costs (predictions, for choosing; the runtime measures the real ones):
//   GPU  per node: a launch + max(FLOPs / peak, bytes / bandwidth) (roofline, ir/cost.h);
//        peak and bandwidth from --gpu (h100: 67 TFLOP/s FP32, 3.35 TB/s; h200: 67, 4.8) or
//        --gpu-tflops / --gpu-bandwidth.
//   CPU  per node: one core of the Target (passes/schedule.h core_seconds): a CPU worker runs
//        one tail on one thread.
//   link the cut's bytes at --link-bandwidth (default 25 GB/s, pinned PCIe) + 10 µs.
// Measured times replace them where given (compile-model --cpu-profile / --gpu-profile: the
// per-op profile of the whole model's binary, NAME --profile-out FILE): a measured function's
// time goes to the nodes it computes in proportion to their predicted CPU times.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "ir/graph.h"
#include "passes/schedule.h"

namespace onnxc {

constexpr size_t kMaxCutTensors = 4;

struct SplitCosts {
  std::string gpu = "h100";
  double gpu_flops = 67e12;        // FP32 FLOP/s
  double gpu_bandwidth = 3.35e12;  // bytes/s
  double launch_seconds = 4e-6;    // per kernel
  double link_bandwidth = 25e9;    // host <-> device, bytes/s
  double link_seconds = 10e-6;     // per copy
  int cpu_workers = 1;             // n
  double latency_budget = 10e-3;   // seconds, G + X + C of a CPU tail; 0 = none
  std::vector<MeasuredOp> cpu_measured, gpu_measured;
};


// The GPU presets of --gpu: "h100", "h200". Throws CompileError(Io) for another name.
void set_gpu_preset(SplitCosts& c, const std::string& gpu);

struct SplitCut {
  size_t last = 0;          // position in Graph::nodes of the head's last node
  std::string after;        // its name
  std::vector<const Value*> tensors;  // crossing the cut: the head's outputs, the tail's inputs
  double bytes = 0;         // of those tensors
  double G = 0, Tg = 0, C = 0, X = 0;  // seconds
  double gain = 1;          // predicted throughput / the whole model on the GPU
  double latency = 0;       // G + X + C
  double gpu_share = 1;     // G / (G + Tg)
  bool within_budget = true;
};

struct SplitPlan {
  std::string spec;  // as given: auto, after=NODE, gpu-share=F
  SplitCosts costs;
  double gpu_seconds = 0, cpu_seconds = 0;  // the whole model on the GPU, on one CPU worker
  std::vector<SplitCut> candidates;         // in graph order
  SplitCut chosen;
};

// Plans the split of g (constant-folded and simplified, not yet laid out or fused) by `spec`.
// Throws CompileError naming the model when the spec is malformed, names no node, or the
// graph has no cut (too small, or no position crossed by few enough tensors).
SplitPlan plan_split(const Graph& g, const Target& t, const SplitCosts& costs, const std::string& spec);

// The head (nodes up to cut.last; outputs: the cut's tensors) and the tail (the rest; inputs:
// the cut's tensors, outputs: g's outputs) as graphs of their own, named NAME_head and
// NAME_tail, ready for the rest of the pipeline. Constants are shared with g.
struct SplitGraphs {
  std::unique_ptr<Graph> head, tail;
};
SplitGraphs split_graph(const Graph& g, const SplitCut& cut);

// The text compile-model prints, and the NAME.split.json it writes.
std::string describe_split(const SplitPlan& p);
std::string split_json(const SplitPlan& p, const std::string& name, const std::string& model);

}  // namespace onnxc
