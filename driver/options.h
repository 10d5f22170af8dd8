// driver/options.h — what one compile-model run is asked to do (its flags, parsed) and its
// exit codes. tools/compile_model.cc fills Options from the command line; driver/compile.h
// runs it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cuda/precision.h"
#include "codegen/target.h"
#include "frontend/onnx_import.h"
#include "passes/schedule.h"

namespace onnxc::driver {

// compile-model's exit codes: 0 success; 1 usage or I/O error; 2 invalid model; 3 valid ONNX
// that onnxc does not support (for --device cuda: an op the CUDA backend does not run), or over
// a limit (--max-memory); 4 internal compiler error (emitted C or CUDA that does not compile
// with the target's compiler and flags included: for C the node is named); 5 the C compiler or
// nvcc failed (not found, or the user's --cc/--cflags); 6 --verify found outputs outside
// tolerance.
enum Exit { kOk = 0, kUsage = 1, kInvalid = 2, kUnsupported = 3, kInternal = 4, kCcFailed = 5, kVerifyFailed = 6 };

// The flags that choose among a few values, as types. Each has its names on the command line
// (choices(), in the order --help lists them) and flag_name() for messages.
enum class Emit { C, So, Exe, Python, Ray };            // --emit
enum class Device { Cpu, Cuda };                        // --device
enum class Parallel { Auto, Loop, Task, Batch, Tune };  // --parallel
enum class OmpRegion { Inference, Op };                 // --omp-region
enum class ActivationLayout { Nchwc, Nchw };            // --layout
enum class Quantized { Float, Integer };                // --quantized
enum class Quantize { None, Int8, Int8Dynamic };        // --quantize
// --task-form: RegionForm::OmpTasks or Groups (ir/graph.h); --gpu-precision: GpuPrecision
// (codegen/cuda/precision.h); --conv-algorithm: ConvAlgorithm (codegen/target.h).

template <class E>
using Choices = std::vector<std::pair<std::string, E>>;
const Choices<Emit>& choices(Emit);
const Choices<Device>& choices(Device);
const Choices<Parallel>& choices(Parallel);
const Choices<OmpRegion>& choices(OmpRegion);
const Choices<ActivationLayout>& choices(ActivationLayout);
const Choices<Quantized>& choices(Quantized);
const Choices<Quantize>& choices(Quantize);
const Choices<RegionForm>& choices(RegionForm);
const Choices<GpuPrecision>& choices(GpuPrecision);
const Choices<ConvAlgorithm>& choices(ConvAlgorithm);

// The command line's name of v.
template <class E>
std::string flag_name(E v) {
  for (auto& [n, e] : choices(v))
    if (e == v) return n;
  return "?";
}

// What compile_graph built: --parallel tune tells a task build with no fork-join region (the
// loop build's C) from one with regions.
struct Built {
  size_t regions = 0;
};

struct Options {
  std::string model, outdir, name, cc, cflags, target = "host";
  Emit emit = Emit::Exe;
  std::string driver_object;  // --driver-object FILE: a prebuilt onnxc_main.o, built on first use
  std::vector<std::string> input_shapes, print_after, disable_pass;
  std::vector<std::string> dynamic;  // --dynamic SYMBOL=MAX or INPUT:AXIS=MAX (repeatable)
  std::vector<DynamicDim> dynamic_dims;  // --dynamic as read by check_options
  std::vector<std::string> fix_dim;  // --fix-dim SYMBOL=N or INPUT:AXIS=N (repeatable)
  std::vector<DynamicDim> fixed_dims;  // --fix-dim as read by check_options (max holds N)
  ActivationLayout layout = ActivationLayout::Nchwc;
  Parallel parallel = Parallel::Auto;
  int tune_rounds = 5;             // --tune-rounds N: --parallel tune's alternating rounds of timed runs
  OmpRegion omp_region = OmpRegion::Inference;
  RegionForm task_form = RegionForm::OmpTasks;  // --task-form omp-tasks|groups
  int threads = 0;  // --threads N: threads the code is planned for, 0 = the target's
  int64_t parallel_min_work = 0;  // --parallel-min-work N: 0 = the target's
  int64_t channel_block = 0;  // 0 = from the target
  ConvAlgorithm conv_algorithm = ConvAlgorithm::Auto;
  Quantized quantized = Quantized::Float;  // integer: the integer-ops pass runs
  bool quantized_given = false;            // --quantized on the command line (else int8 implies integer)
  Quantize quantize = Quantize::None;      // --quantize int8, int8-dynamic: passes/quantize_int8.h after import
  std::string calibration;                 // --calibration DIR (driver/calibration.h)
  std::string max_memory = "8G";  // --max-memory SIZE (kDefaultMaxMemory)
  bool dump_ir = false, verify = false, list_ops = false, quiet = false, verify_passes = false, profile = false;
  double verify_tol = 1e-3;
  std::string run_with;  // --run-with CMD: --verify runs the binary as `CMD BINARY ...` (an emulator)
  // --split SPEC (passes/partition.h): compile a head and a tail, NAME_head and NAME_tail.
  std::string split, gpu = "h100", cpu_profile, gpu_profile;
  std::string profile_data;  // --profile-data FILE: measured task times for the schedule
  std::vector<MeasuredOp> measured;
  double gpu_tflops = 0, gpu_bandwidth = 0, link_bandwidth = 25, latency_budget_ms = 10;
  int cpu_workers = 0;
  Device device = Device::Cpu;
  std::string gpu_arch = "sm_90", nvcc;  // --gpu-arch, --nvcc PATH
  std::string gpu_libs;  // --gpu-libs cudnn,cublas (either or both)
  bool cudnn = false, cublas = false;
  std::optional<GpuPrecision> gpu_precision;  // --gpu-precision (not given: fp32)
  struct Built* built = nullptr;  // where compile_graph reports what it built (--parallel tune)
  // --parallel tune's final build: the folder of the winning candidate (--parallel as here). An
  // executable whose NAME.c and NAME.h are the same as the candidate's takes its binary.
  std::string reuse_dir;
};

// How a fork-join region runs inside the one region: --omp-region op's sections, else --task-form.
RegionForm region_form(const Options& o);

// --dynamic SPEC read into *d: SYMBOL=MAX (a symbolic dimension by its name) or INPUT:AXIS=MAX
// (INPUT's dimension AXIS; INPUT may contain ':', AXIS is what follows the last one). The
// message, or "" when it reads. With fixed, --fix-dim's SYMBOL=N (N from 1) into d->max.
constexpr int64_t kDynamicMax = int64_t{1} << 20;
std::string parse_dynamic(const std::string& spec, DynamicDim* d, bool fixed = false);

// The combinations of flags compile-model refuses (exit 1), --gpu-libs read into o.cudnn
// and o.cublas, --dynamic into o.dynamic_dims and --fix-dim into o.fixed_dims: the message, or
// "" when the flags fit.
// task_form_given: --task-form was on the command line (not its default).
std::string check_options(Options& o, bool task_form_given);

}  // namespace onnxc::driver
