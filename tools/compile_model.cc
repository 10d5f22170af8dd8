// tools/compile_model.cc — the compile-model command: its flags and their help, read into
// driver::Options (driver/options.h), then one run of the driver library (driver/compile.h:
// import, passes, code generation, the C compiler or nvcc; --split, --parallel tune and
// --verify in driver/split.h, tune.h and verify.h). Exit codes: driver::Exit.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <new>
#include <string>

#include "codegen/cuda/module.h"
#include "codegen/target.h"
#include "driver/compile.h"
#include "driver/options.h"
#include "ir/op.h"
#include "passes/pass.h"

using namespace onnxc;
using namespace onnxc::driver;

// A flag taking one of a few names (driver/options.h's choices()): --help lists them and the
// default, a name not among them is a usage error, the value is stored as its type.
template <class E>
CLI::Option* add_choice(CLI::App& app, const std::string& flag, E& value, const std::string& help) {
  std::vector<std::string> names;
  for (auto& [n, e] : choices(value)) names.push_back(n);
  return app
      .add_option_function<std::string>(
          flag,
          [&value](const std::string& s) {
            for (auto& [n, e] : choices(value))
              if (n == s) value = e;
          },
          help)
      ->check(CLI::IsMember(names));
}

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "compile-model — compile an ONNX model to C (or CUDA), and build it into an inference executable or library.\n\n"
      "Writes OUTDIR/NAME.c, NAME.h (C API), NAME.weights (binary weights), the onnxc runtime and a Makefile,\n"
      "then (--emit exe, the default) builds OUTDIR/NAME: run `OUTDIR/NAME --help` for its options\n"
      "(--input NAME=FILE.npy, --output NAME=FILE.npy, --bench N, --threads N). --emit so builds OUTDIR/libNAME.so\n"
      "(C API in NAME.h); --emit python also writes OUTDIR/NAME.py (import NAME; NAME.Model().run(x)); --emit ray\n"
      "also writes OUTDIR/NAME_serve.py, a Ray Serve application (serve run --route-prefix /NAME NAME_serve:app).\n"
      "--device cuda writes OUTDIR/NAME.cu instead of NAME.c (plain NCHW float32 kernels, the same C API in NAME.h)\n"
      "and builds it with nvcc for --gpu-arch; --gpu-libs cudnn,cublas runs Conv with cuDNN and Gemm/MatMul with cuBLAS.\n"
      "--split SPEC cuts the model in two, a head for a GPU and a tail for the GPU or CPU workers, compiled as NAME_head\n"
      "and NAME_tail (and NAME_tail_gpu with --device cuda), each with its makefile NAME_PART.mk, a Makefile for all, and\n"
      "writes NAME.split.json (see \"Split models\" below).\n\n"
      "Exit codes: 0 ok, 1 usage/I-O error, 2 invalid model, 3 unsupported by onnxc or over --max-memory, 4 internal error (emitted C that does not compile included),\n"
      "5 C compiler or nvcc failed (or not found), 6 --verify mismatch.",
      "compile-model"};
  app.add_option("model", o.model, "ONNX model file (.onnx)");
  app.add_option("-o,--output-dir", o.outdir, "folder for the generated files (created if missing)");
  app.add_option("--name", o.name, "C name of the model: file and symbol prefix (default: the model file's stem)");
  add_choice(app, "--emit", o.emit,
                 "what to produce: c (sources only), so (shared library), exe (executable), python (shared library and "
                 "NAME.py, a ctypes + numpy wrapper), ray (python's files and NAME_serve.py: a Ray Serve deployment whose "
                 "replicas load the library once each, HTTP POST /NAME with .npy/.npz bodies, requests batched with "
                 "@serve.batch, one call per batch for a --dynamic batch build (per run of requests of one length with a "
                 "run-time token count too; each request at its own length with a token count alone); options in the file's "
                 "build_app)")
      ->default_str(flag_name(o.emit));
  add_choice(app, "--device", o.device,
                 "what the model runs on: cpu (C, the default) or cuda (CUDA C++ for one NVIDIA GPU, plain NCHW float32; "
                 "an op the CUDA backend does not run is exit 3; --emit c, so or exe)")
      ->default_str(flag_name(o.device));
  app.add_option("--gpu-arch", o.gpu_arch, "--device cuda: the GPU architecture nvcc builds for (-arch)")->capture_default_str();
  app.add_option("--gpu-libs", o.gpu_libs,
                 "--device cuda: run Conv with cuDNN and/or Gemm and MatMul with cuBLAS instead of the generated kernels "
                 "(cudnn, cublas or cudnn,cublas; default none), each followed by a generated kernel for its bias and fused "
                 "epilogue; links -lcudnn / -lcublas. For comparing both on a GPU")
      ->type_name("LIBS");
  GpuPrecision precision = GpuPrecision::Fp32;
  CLI::Option* precision_opt = add_choice(app, "--gpu-precision", precision,
                 "--device cuda: the arithmetic of convolutions (generated or cuDNN) and cuBLAS's products: fp32 (float32 "
                 "multiply-adds, the default; outputs within 1e-3 of the CPU's), tf32 (tensor cores, operands rounded to "
                 "TF32's 10-bit mantissa) or fp16 (tensor cores, operands rounded to half precision, whose range ends at 65504: "
                 "a larger weight is refused here, a larger activation makes that run fail with ONNXC_ERR_RANGE naming the "
                 "node; not with --split). Tensors stay float32 and "
                 "sums are float32; tf32 and fp16 trade accuracy (on an H200 the zoo's CNNs differed from float32 references by 3e-4 to 7e-4 of the "
                 "output's magnitude) for speed. "
                 "The generated Gemm/MatMul, pools and elementwise kernels stay float32")
      ->type_name("P");
  app.add_option("--nvcc", o.nvcc, "--device cuda: the nvcc to build with (default: $ONNXC_NVCC, else /usr/local/cuda/bin/nvcc)")
      ->type_name("PATH");
  app.add_option("--cc", o.cc, "C compiler used to build the output (default: the target's, cc)");
  app.add_option("--cflags", o.cflags, "C compiler flags, replacing the target's (host: \"-O3 -march=native -ffp-contract=fast\", plus -mprefer-vector-width=512 on AVX-512; keep -ffp-contract=fast with gcc or the multiply-adds are not fused)");
  app.add_option("--driver-object", o.driver_object,
                 "--emit exe: link the generic command-line driver from FILE (an object file), compiling it there first "
                 "if FILE does not exist; it is the same for every model built with the same C compiler and flags")
      ->type_name("FILE");
  app.add_option("--input-shape", o.input_shapes,
                 "NAME=d0,d1,... fixes the shape of graph input NAME (repeatable); a symbolic dimension needs it, --fix-dim or --dynamic")
      ->allow_extra_args(false);
  app.add_option("--dynamic", o.dynamic,
                 "SYMBOL=MAX keeps the model's symbolic dimension SYMBOL a run-time size from 1 to MAX (e.g. batch=16); "
                 "INPUT:AXIS=MAX names it by an input and axis (input:0=16). The batch, the first dimension of every input: "
                 "its items must run apart (otherwise exit 3, saying why); a run of b items runs the batch-1 model b times: as "
                 "many items side by side as the threads, one thread each, the rest one after another on all the threads. "
                 "NAME_run_batch(ctx, b, ...) takes b, NAME_run_v reads it from the buffers' sizes and NAME_run runs MAX; the "
                 "executable takes it from its input files' first dimension (or its --batch N), the Python wrapper from the "
                 "arrays. With --split both parts take the run-time batch, and the split executor's CPU device runs a batch "
                 "of requests as one call. A transformer's tokens (seq=512): the model is followed through at three sizes and "
                 "built for MAX, a run of n computed in the first n rows (exit 3 naming a node that mixes the tokens "
                 "otherwise); NAME_run_size(ctx, n, ...) takes n, NAME_run_v, the executable and the Python wrapper read it from "
                 "the sizes; every input and output must have the tokens first after 1s; not with --split or --parallel "
                 "batch. Both (--dynamic batch=8 --dynamic seq=512): the batch-1 model followed through at its "
                 "tokens, run per item as above; NAME_run_dims(ctx, b, n, ...) takes both (NAME_run_v cannot tell them apart "
                 "and refuses), the executable reads them from its .npy files, the Python wrapper from the arrays. Not with "
                 "--split, --device cuda, --profile or a --parallel other than auto. Fix the model's other "
                 "symbolic dimensions with --fix-dim (--fix-dim batch=1 --dynamic seq=512)")
      ->allow_extra_args(false)
      ->type_name("SPEC");
  app.add_option("--fix-dim", o.fix_dim,
                 "SYMBOL=N fixes the model's symbolic dimension SYMBOL to N wherever a graph input has it (batch=1; "
                 "INPUT:AXIS=N for an unnamed one), as ONNX Runtime's free-dimension overrides do: every input of a model "
                 "with several (input_ids, attention_mask) at once, the other dimensions kept as the model or --dynamic "
                 "gives them (repeatable)")
      ->allow_extra_args(false)
      ->type_name("SPEC");
  app.add_option("--target", o.target, "the machine to compile for: " + target_names() +
                 ". host is detected with LLVM; the target sets the channel block, the C compiler flags and when loops go parallel. "
                 "A --cc/--cflags that compile for another architecture, or for SVE off or at another length than aarch64-sve:BITS, "
                 "are refused (exit 1). The generated code checks the CPU it runs on: NAME_create (and so the executable, the "
                 "Python wrapper, the split runtime) refuses one that lacks an extension the flags let the compiler use, or runs "
                 "SVE at another length (ONNXC_ERR_TARGET, naming it; onnxc_options.unsafe_skip_cpu_check skips that, unsafely)")
      ->capture_default_str();
  app.add_flag("--dump-ir", o.dump_ir, "print the final IR (after all passes): values with their layouts, fused groups with the ONNX nodes they came from; then the kernel each node gets and, for the kernels that plan (NCHWc convolutions, Gemm/MatMul, Attention), its plan: register tile, reduction blocks, tasks; then the macro-task graph: each task's cost, the critical path, a static schedule onto thread groups at the target's threads and the predicted speed-up at 1-16 threads; then the fork-join regions with their predicted times in the form they run in");
  add_choice(app, "--parallel", o.parallel,
                 "how the generated code uses its threads: loop (each node in turn, its loops split across the threads), "
                 "task (independent branches - inception branches, shortcut convs - side by side in fork-join regions, "
                 "their nodes OpenMP tasks run as their inputs are ready, or each branch on a group of the threads: see "
                 "--task-form; loops split as before elsewhere), batch (a model with a batch of N >= 2 items runs them "
                 "side by side, one thread per item, each with its own arena: the model compiled at batch 1 and run once per "
                 "item; exit 3 naming the node when a node mixes the items, e.g. a Softmax or Concat along the batch axis) or "
                 "auto (batch when the batch has at least --threads items, they can run apart and the batch-1 model reads at "
                 "most 32 MB of weights only once per item; otherwise branches side by side only where the schedule predicts a "
                 "gain of at least 5% in the form they run in, --task-form). --dump-ir shows the regions. tune: build loop, "
                 "task and batch (those that differ), time each on this machine at --threads in alternating rounds "
                 "(--tune-rounds) and compile with the fastest; loop unless another is at least 3% faster (--target host; "
                 "the model is built up to three times, and an executable keeps the winner's binary)")
      ->default_str(flag_name(o.parallel));
  app.add_option("--tune-rounds", o.tune_rounds, "--parallel tune: rounds of timed runs, each build once per round")
      ->check(CLI::Range(1, 100))->capture_default_str();
  add_choice(app, "--omp-region", o.omp_region,
                 "OpenMP parallel regions of the generated C: inference (one region per run: the threads start once, "
                 "the kernels split their loops among them with `omp for` and the serial nodes run on one of them, a "
                 "barrier between nodes) or op (a fork/join per parallel loop nest, for comparison). A node whose "
                 "function the region cannot share (codegen/c/region.h; in NCHW, strided convs) keeps its own "
                 "fork/join between two regions")
      ->default_str(flag_name(o.omp_region));
  CLI::Option* task_form_opt = add_choice(app, "--task-form", o.task_form,
                 "how a fork-join region (--parallel task or auto) runs inside the one region (--omp-region inference): "
                 "omp-tasks (each node an OpenMP task with depend clauses on the tensors it reads, its loops taskloops: "
                 "the OpenMP runtime runs them as they become ready and idle threads take loop chunks) or groups (each "
                 "list of the schedule on a group of the threads, split at compile time in proportion to the lists' "
                 "predicted times; the group's members split its loops and wait only for each other). --omp-region op "
                 "runs a region as `omp parallel sections`")
      ->default_str(flag_name(o.task_form));
  app.add_option("--threads", o.threads,
                 "threads the generated code is planned for: when loops go parallel and how many lists a fork-join region "
                 "gets (default: the target's, host = this machine's cores). The binary's --threads sets how many it runs on")
      ->check(CLI::Range(1, 4096));
  app.add_option("--parallel-min-work", o.parallel_min_work,
                 "the least work, in scalar operations, of a loop nest that goes parallel when --threads is above 1 "
                 "(default: the target's, 65536: below it a fork/join costs more than it saves); 1 makes every nest that "
                 "can go parallel do so, which tests those paths on small models")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  app.add_option("--profile-data", o.profile_data,
                 "measured task times for the schedule (--parallel, --dump-ir): the model compiled with --profile and run on "
                 "one thread as `NAME --threads 1 --profile-out FILE` (with the same flags, so that its functions are the tasks)")
      ->type_name("FILE");
  add_choice(app, "--layout", o.layout, "activation layout: nchwc (blocked channels, the default) or nchw (plain, for ablations)")
      ->default_str(flag_name(o.layout));
  app.add_option("--channel-block", o.channel_block,
                 "NCHWc channel block: a power of two from 4 to 256 (default: the target's vector length in floats, at least 4)")
      ->check([](const std::string& s) {
        try {
          long long v = std::stoll(s);
          if (v >= 4 && v <= 256 && (v & (v - 1)) == 0) return std::string();
        } catch (const std::exception&) {
        }
        return "--channel-block must be a power of two from 4 to 256, got '" + s + "'";
      });
  add_choice(app, "--conv-algorithm", o.conv_algorithm,
                 "3x3 convolutions (stride 1, NCHWc, a block of one vector): auto runs them as Winograd F(2x2,3x3) (2.25x "
                 "fewer multiply-adds; filters transformed at compile time; outputs differ from direct convolution by "
                 "rounding, about 1e-6 relative) where the transformed filter stays in L2 or the batch has at least 40 tiles of 2x2 output pixels to "
                 "amortise it; direct never; winograd wherever it applies")
      ->default_str(flag_name(o.conv_algorithm));
  auto* quantized_opt = add_choice(app, "--quantized", o.quantized,
             "quantized (QDQ) models: float computes each DequantizeLinear -> Conv -> QuantizeLinear as written, a float "
             "convolution of dequantized values rounded back (the NCHWc kernels); integer makes it the QLinearConv it stands "
             "for (a Gemm's with transB = 1, a classifier head, a 1x1 one), a residual Add or a gating Mul between quantize steps one pass over the bytes (after a pointwise conv on "
             "AVX-512 VNNI: in the conv's registers), an activation between quantize "
             "steps (SiLU, Sigmoid, HardSwish...) a 256-entry byte table, and max pools and Concat there run on the "
             "bytes (pass integer-ops): 8-bit "
             "activations, exact int32 accumulation, ONNX Runtime's requantization, so "
             "results equal ONNX Runtime's integer kernels where those are exact. Its convolutions take byte dot products "
             "of channel quads where the target has VNNI (vpdpbusd: --target host on such a CPU, x86-64-avx512vnni, "
             "x86-64-avxvnni; int8 weights with zero zero points, as quantize_static writes them) and multiply 16-bit "
             "pairs elsewhere (AVX2 pmaddwd, plain C); no AMX form yet. On a 2-core Sapphire Rapids (AVX-512 VNNI), one "
             "thread: resnet50 at 2.1-2.4x the float build's speed, googlenet 1.9-2.0x, mobilenet_v2 1.1-1.4x, "
             "efficientnet_b0 1.4x (two noisy runs: bench/results/int8_vnni.md); on a Zen 3 without VNNI 0.72-1.13x (bench/int8.py); float stays the default until integer is faster "
             "on every model and CPU (with --quantize int8: integer)")
      ->default_str(flag_name(o.quantized));
  add_choice(app, "--quantize", o.quantize,
             "quantize a float model here: int8 inserts QuantizeLinear/DequantizeLinear as ONNX Runtime's quantize_static "
             "does (QDQ, MinMax calibration, per-channel symmetric int8 weights, uint8 activations; each Conv's input and "
             "output, through a Relu or Clip that is its one reader), with the ranges the reference evaluator sees on the "
             "--calibration inputs, then compiles the QDQ model (--quantized integer unless given); int8-dynamic rewrites "
             "each MatMul and Gemm of constant 2-D weights as ONNX Runtime's quantize_dynamic does (int8 weights per "
             "tensor, activations quantized at run time by DynamicQuantizeLinear, no calibration; convolutions stay "
             "float): the transformers' projections and feed-forward products, on VNNI byte dot products where the "
             "target has AVX-512 VNNI (BERT-base, DistilBERT, GPT-2 and ViT-B/16 on a 2-core Sapphire Rapids: 2.6-3.6x "
             "their float builds, 0.72-0.92x ONNX Runtime's int8 latency, bench/results/int8_dynamic.md)")
      ->default_str(flag_name(o.quantize));
  app.add_option("--calibration", o.calibration,
                 "--quantize int8: a folder of sample inputs, float32 .npy in C order with the input's shape: one file per "
                 "sample for a model with one input; else one subfolder per sample holding INPUT.npy for every input. A few "
                 "representative samples (each runs through the reference evaluator: seconds per sample on a CNN)")
      ->type_name("DIR");
  std::string pass_list;
  for (auto& p : pass_names()) pass_list += (pass_list.empty() ? "" : ", ") + p;
  app.add_option("--print-after", o.print_after, "print the IR after pass PASS (repeatable; 'all' for every pass, 'import' for the imported graph). Passes: " + pass_list)
      ->allow_extra_args(false);
  app.add_option("--disable-pass", o.disable_pass, "skip pass PASS (repeatable), for ablations and bisecting")->allow_extra_args(false);
  app.add_option("--max-memory", o.max_memory,
                 "cap on memory, in bytes or with a K/M/G/T suffix (512M, 8G), 0 = no cap: the constants the compiler holds "
                 "(initializers, checked before each is read, and folded or repacked tensors), the weights file, the arena of "
                 "intermediate tensors, and each graph input and output. Over it: exit 3, naming the tensor")
      ->capture_default_str();
  app.add_flag("--verify-passes", o.verify_passes, "check the graph's invariants after every pass (always on in debug builds)");
  app.add_flag("--profile", o.profile,
               "time every emitted function at run time: the binary's --profile prints them sorted by time, with their "
               "kernels, shapes, GFLOP/s or GB/s and the share of the machine's measured peak (--device cuda: each node's "
               "GPU time from CUDA events; `NAME --profile-out FILE` then writes what --gpu-profile reads)");
  app.add_flag("--verify", o.verify, "run the reference evaluator and the built binary on one random input and compare");
  app.add_option("--run-with", o.run_with,
                 "--verify: run the built binary through this command, e.g. an emulator for a cross-compiled one: "
                 "--cc aarch64-linux-gnu-gcc --target aarch64-sve:2048 --cflags \"-O2 -march=armv8.2-a+sve -msve-vector-bits=2048 "
                 "-ffp-contract=fast -static\" --run-with \"qemu-aarch64 -cpu max,sve-max-vq=16,sve-default-vector-length=256\" "
                 "(qemu-user runs SVE at 512 bits unless sve-default-vector-length, in bytes, says otherwise)");
  app.add_option("--verify-tol", o.verify_tol, "--verify tolerance: max abs error <= TOL * max(1, max |reference|)")->capture_default_str();
  app.add_option("--split", o.split,
                 "split the model between a GPU and the CPU: compile a head (NAME_head) and a tail (NAME_tail) as models of "
                 "their own, the head's outputs being the tail's inputs, and write NAME.split.json with the cut and its "
                 "predicted costs. SPEC: auto (the cut with the best predicted throughput, for --cpu-workers CPU workers "
                 "taking tails off the GPU, within --latency-budget), after=NODE (the head ends with node NODE, as named "
                 "by --print-after simplify), or gpu-share=F (the head keeps share F of the GPU time, 0 < F < 1)")
      ->type_name("SPEC")->group("Split models");
  app.add_option("--gpu", o.gpu, "--split: the GPU the head is planned for: h100 or h200 (FP32 peak and memory bandwidth)")
      ->check(CLI::IsMember({"h100", "h200"}))->capture_default_str()->group("Split models");
  app.add_option("--gpu-tflops", o.gpu_tflops, "--split: the GPU's FP32 peak in TFLOP/s, replacing --gpu's")
      ->check(CLI::PositiveNumber)->group("Split models");
  app.add_option("--gpu-bandwidth", o.gpu_bandwidth, "--split: the GPU's memory bandwidth in GB/s, replacing --gpu's")
      ->check(CLI::PositiveNumber)->group("Split models");
  app.add_option("--link-bandwidth", o.link_bandwidth, "--split: host-device copy bandwidth in GB/s")
      ->check(CLI::PositiveNumber)->capture_default_str()->group("Split models");
  app.add_option("--cpu-workers", o.cpu_workers, "--split: CPU workers running tails, one thread each (default: --threads, or the target's)")
      ->check(CLI::Range(1, 4096))->group("Split models");
  app.add_option("--cpu-profile", o.cpu_profile,
                 "--split: measured CPU times replacing the predicted ones: the whole model compiled with --profile and run "
                 "on one thread as `NAME --threads 1 --profile-out FILE`")
      ->type_name("FILE")->group("Split models");
  app.add_option("--gpu-profile", o.gpu_profile,
                 "--split: measured GPU times replacing the roofline's, in the same format (seconds per run TAB ops TAB "
                 "kernel TAB ONNX node names, comma-separated): the whole model compiled with --device cuda --profile and "
                 "run on the GPU as `NAME --profile-out FILE`")
      ->type_name("FILE")->group("Split models");
  app.add_option("--latency-budget", o.latency_budget_ms,
                 "--split auto: the longest a request whose tail runs on the CPU may take, head + copy + tail, in ms (0 = none)")
      ->check(CLI::NonNegativeNumber)->capture_default_str()->group("Split models");
  app.add_flag("--list-ops", o.list_ops, "print the supported ONNX op types and exit (with --device cuda: those the CUDA backend runs)");
  app.add_flag("-q,--quiet", o.quiet, "print only errors");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kUsage;
  }
  if (precision_opt->count() > 0) o.gpu_precision = precision;
  o.quantized_given = quantized_opt->count() > 0;
  if (o.list_ops) {
    for (auto& op : o.device == Device::Cuda ? cuda_supported_ops() : supported_ops()) fmt::print("{}\n", op);
    return kOk;
  }
  if (o.model.empty() || o.outdir.empty()) {
    fmt::print(stderr, "compile-model: error: {} required\n{}", o.model.empty() ? "a model file is" : "-o OUTDIR is", app.help());
    return kUsage;
  }
  if (const std::string why = check_options(o, task_form_opt->count() > 0); !why.empty()) {
    fmt::print(stderr, "compile-model: error: {}\n", why);
    return kUsage;
  }
  try {
    return compile(o);
  } catch (const CompileError& e) {
    fmt::print(stderr, "{}: {}\n", o.model, e.what());
    switch (e.kind()) {
      case CompileError::Kind::Io: return kUsage;
      case CompileError::Kind::Invalid: return kInvalid;
      case CompileError::Kind::Unsupported: return kUnsupported;
    }
  } catch (const InternalError& e) {
    fmt::print(stderr, "{}: internal compiler error: {}\n", o.model, e.what());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "{}: out of memory\n", o.model);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: internal compiler error: {}\n", o.model, e.what());
  }
  return kInternal;
}
