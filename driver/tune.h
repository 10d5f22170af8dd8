// driver/tune.h — compile-model --parallel tune: the model built with each way of using
// its threads, timed here, and compiled with the fastest.
#pragma once
#include "codegen/target.h"
#include "driver/options.h"

namespace onnxc::driver {

// --parallel tune: build the model with --parallel loop, task and batch (where the model has
// fork-join regions, or a batch whose items can run apart), time each build on this machine at
// the target's threads (--tune-rounds rounds that alternate the builds, each a --bench of about
// half a second), and compile the model with the fastest. A build's time against loop's is the
// median over the rounds of its median over loop's in the same round: on a shared machine the
// load drifts from round to round (googlenet's loop build took 10.9 to 19.3 ms in five rounds of
// bench/results/parallel.md), and the builds of one round see about the same load.
// The cost model behind auto is a prediction: on one 16-core host it put googlenet's regions at
// 0.99 of loop's time at 2 threads where they took 0.83. Loop wins unless another build is at
// least kTuneMargin faster, so noise does not trade the plain build for a slower one. The
// candidates are built in OUTDIR/.tune, removed at the end. The final build emits the model
// again (what --emit asks, --verify included); an executable then takes the winner's binary,
// built from the same C, instead of running the C compiler again.
constexpr double kTuneMargin = 0.03;

// target: compile()'s (driver/compile.h), with o.name settled.
int compile_tuned(Options& o, const Target& target);

}  // namespace onnxc::driver
