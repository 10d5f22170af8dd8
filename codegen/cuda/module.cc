// codegen/cuda/module.cc — the CUDA module writer (see module.h).
//
// NAME.cu is C++ for nvcc. Kernels: every node with an output not known at compile time gets
// `static __global__ void nK_<name>(inputs..., outputs..., extras...)`, the body from the CUDA
// kernels (codegen/cuda/kernels/), a comment naming the ONNX nodes; nodes whose kernels would
// be identical share the first one's (as the C module does). Buffers are device pointers:
// constants in the device copy of the weights (uploaded once by NAME_create: the weights file
// is read and checked by the C runtime's loader, copied with cudaMemcpy and freed on the
// host), intermediate tensors in the instance's device arena at the memory plan's offsets
// (passes/memory_plan.cc; the CUDA backend allows no in-place reuse), graph inputs and
// outputs in the instance's device I/O block. NAME_run copies the inputs in, launches the
// kernels in graph order on the instance's own stream, copies the outputs back and waits.
// NAME_run_device (and NAME_cuda_info, onnxc_types.h) only enqueues the kernels on a given
// stream, reading and writing the caller's device buffers (NAME_enqueue, which NAME_run also
// uses on its I/O block): the split runtime's CUDA device keeps the cut on the GPU with it.
// Every CUDA call is checked: a failure returns ONNXC_ERR_NOMEM (device allocation) or
// ONNXC_ERR_DEVICE (any other CUDA error: no device, a failed launch...) with the call and
// CUDA's message in NAME_last_error(); nothing exits. With --gpu-precision fp16 the tensor-core
// kernels set a per-node word when an input is past half's range, and NAME_run reports it
// (ONNXC_ERR_RANGE, naming the node). The runtime (onnxc_runtime.c, C11) is
// #included as in the C module; it compiles as C++ once _Thread_local is spelled
// thread_local. Instances use the calling thread's current CUDA device.
#include "codegen/cuda/module.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "codegen/module_writer.h"
#include "ir/cost.h"
#include "ir/op.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

constexpr uint64_t kAlign = 256;  // device buffers: cudaMalloc's alignment

struct CudaModule : ModuleBuffers {
  // Weights at 64 bytes (the file's alignment; cudaMalloc's block is 256-byte aligned), the
  // arena's tensors at 256.
  CudaModule(const Graph& graph, const CodegenOptions& o, const CudaOptions& co, const Backend& b)
      : ModuleBuffers(graph, 64, kAlign), opt(o), copt(co), backend(b) {}
  const CodegenOptions& opt;
  const CudaOptions& copt;
  const Backend& backend;
  std::map<const Value*, uint64_t> iooff;  // device input/output block offsets
  std::vector<const Value*> io;            // in offset order
  // --gpu-libs: the libraries the launches call, and cuDNN's per-node setup (NAME_create).
  bool uses_cudnn = false, uses_cublas = false;
  size_t convs = 0;
  std::string conv_setup;
  uint64_t iobytes = 0;
  // --profile: one row per emitted node, in launch order (onnxc_op_info), written by node_launch.
  std::vector<ProfileRow> op_rows;
  // Nodes whose kernel reports inputs past its precision's range (CudaKernelCode::range_check):
  // index in `emitted`, and the message NAME_run gives (node, ops).
  std::vector<std::pair<size_t, std::string>> range_nodes;

  void plan() {
    // Refuse what the CUDA backend cannot run before writing anything.
    for (const Node* n : emitted) {
      bool empty = true;
      for (const Value* v : n->outputs)
        if (v && numel(v->shape) != 0) empty = false;
      if (empty) continue;
      if (std::string why = cuda_unsupported_reason(*n); !why.empty()) n->unsupported(why);
    }
    place([&](const Value* v) {
      iooff[v] = iobytes;
      io.push_back(v);
      iobytes = place_after(iobytes, v->nbytes(), kAlign, "the device input/output block");
    });
  }

  // Kernels in order of first use; identical ones shared (their comments list every node).
  FunctionTable kernels;

  // The kernel of node k and the host code launching it.
  std::string node_launch(size_t k, const Node& n) {
    NodeSignature sg = node_signature(n, [](const Value*) { return std::string(" __restrict__"); });
    const std::vector<std::string>&ins = sg.ins, &outs = sg.outs, &extras = sg.extras;
    std::vector<std::string>&params = sg.params, &args = sg.args;
    const std::string &ops = sg.ops, &from = sg.from, &sig_comment = sg.reads, &outs_comment = sg.writes;
    bool empty = true;
    for (const Value* v : n.outputs)
      if (v && numel(v->shape) != 0) empty = false;
    op_rows.push_back({from, ops, "nothing (empty outputs)", outs_comment, node_cost(n)});  // its kernel, below
    if (empty) return fmt::format("  /* {}: {}: every output is empty, nothing to compute */\n", comment_safe(from), ops);
    const std::string what = c_string("launching the kernel of node '" + n.name + "' (" + ops + ")");
    const CudaLibChoice lib = cuda_lib_choice(n, copt);
    if (!lib.lib.empty()) {
      // A library call into the output, then (for a bias or a fused epilogue) an elementwise kernel over it.
      std::vector<std::string> dev_in(n.inputs.size());
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (!ins[i].empty()) dev_in[i] = name.at(n.inputs[i]);
      (lib.lib == "cudnn" ? uses_cudnn : uses_cublas) = true;
      const CudaLibCode lc = cuda_lib_code(n, lib.lib, opt.name, convs, dev_in, name.at(n.outputs[0]), c_string(n.name));
      if (lib.lib == "cudnn") conv_setup += lc.setup, ++convs;
      std::string host = fmt::format("  /* {}: {}({}) -> {}; {} */\n{}", comment_safe(from), ops, comment_safe(sig_comment),
                                     comment_safe(outs_comment), lc.comment, lc.run);
      op_rows.back().kernel = lib.lib == "cudnn" ? "cuDNN" : "cuBLAS";
      if (lc.bias.empty() && n.epilogue.empty()) return host;
      std::vector<std::string> kins(n.inputs.size()), kparams, kargs;
      if (!lc.bias.empty()) {
        kins[2] = "x2";
        kparams.push_back("const float* __restrict__ x2");
        kargs.push_back(name.at(n.inputs[2]));
      }
      kparams.push_back("float* __restrict__ y0");
      kargs.push_back(name.at(n.outputs[0]));
      for (size_t j = 0; j < n.extra_inputs.size(); ++j) {
        kparams.push_back(fmt::format("const float* __restrict__ {}", extras[j]));
        kargs.push_back(name.at(n.extra_inputs[j]));
      }
      const CudaKernelCode code = emit_cuda_lib_epilogue(n, {kins, {"y0"}, extras}, backend.target(), lc.bias);
      op_rows.back().kernel += " + " + code.kernel;
      const std::string comment = fmt::format("/* {}: {} after {}; {}, grid {}, block {} */\n", comment_safe(from), ops,
                                              lib.lib == "cudnn" ? "cuDNN" : "cuBLAS", code.kernel, code.grid, code.block);
      return host + add_kernel(k, n, code, kparams, kargs, comment, c_string("launching the epilogue kernel of node '" + n.name + "' (" + ops + ")"));
    }
    CudaKernelCode code = emit_cuda_kernel(n, {ins, outs, extras}, backend.target(), copt.precision);
    if (!lib.why_not.empty()) code.kernel += " (" + lib.why_not + ")";
    op_rows.back().kernel = code.kernel;
    if (code.range_check) {  // the instance's word for this node
      params.push_back("unsigned int* __restrict__ ovf");
      args.push_back(fmt::format("ctx->ovf + {}", k));
      range_nodes.emplace_back(k, fmt::format("node '{}' ({})", n.name, ops));
    }
    const std::string comment = fmt::format("/* {}: {}({}) -> {}; {}, grid {}, block {} */\n", comment_safe(from), ops,
                                            comment_safe(sig_comment), comment_safe(outs_comment), code.kernel, code.grid, code.block);
    return add_kernel(k, n, code, params, args, comment, what);
  }

  // Adds kernel `code` of node k (or shares an identical one) and returns the host code launching it.
  std::string add_kernel(size_t k, const Node& n, const CudaKernelCode& code, const std::vector<std::string>& params,
                         const std::vector<std::string>& args, const std::string& comment, const std::string& what) {
    const std::string rest = fmt::format("({}) {{\n{}}}\n\n", fmt::join(params, ", "), code.body);
    const std::string key = code.grid + "|" + code.block + "|" + rest;
    const std::string fn = kernels.add(key, rest, comment, [&] { return unique("n" + std::to_string(k) + "_" + c_identifier(n.name)); });
    return fmt::format("  {}<<<{}, {}, 0, stream>>>({});\n  {}_CHECK(cudaGetLastError(), fn, {});\n", fn, code.grid, code.block,
                       fmt::join(args, ", "), opt.name, what);
  }

  std::string kernels_text() const { return kernels.text("static __global__ void ", "kernel", "shapes and parameters"); }

  std::string run_params() const { return onnxc::run_params(opt.name, g); }

  std::string header(uint64_t checksum) const {
    const std::string N = opt.name;
    const std::string about = fmt::format(
        " * The same API as a model compiled to C: {0}_create() loads {0}.weights, checks it and uploads it to\n"
        " * the GPU ({0}_create_from_memory() takes the file's image) into a new instance with its own device\n"
        " * arena of intermediate tensors ({0}_ARENA_BYTES), device input/output buffers and CUDA stream, on the\n"
        " * calling thread's current CUDA device. {0}_create_sharing() makes another instance that shares an\n"
        " * existing one's device weights (reference-counted). {0}_run() takes typed host pointers, {0}_run_v()\n"
        " * arrays of host buffers with their sizes in bytes (checked); a run copies the inputs to the device,\n"
        " * runs the kernels, copies the outputs back and returns when they are there. {0}_destroy() frees an\n"
        " * instance and sets the handle to NULL.\n"
        " * Threads: different instances run concurrently from different threads (each on its own stream); one\n"
        " * instance runs one inference at a time (a second run while one is in progress returns\n"
        " * ONNXC_ERR_STATE). onnxc_options.num_threads has no effect.\n"
        " * Errors: every function returns ONNXC_OK (0) or an onnxc_status code (onnxc_types.h): the C model's\n"
        " * codes, plus ONNXC_ERR_NOMEM when device memory runs out and ONNXC_ERR_DEVICE for any other CUDA\n"
        " * error (no CUDA device, a failed kernel launch...). {0}_last_error() names the failed call and\n"
        " * CUDA's message. Nothing prints, aborts or exits.\n{3}"
        " * Build: nvcc -arch=ARCH -O3 -Xcompiler -fPIC -shared -o lib{0}.so {0}.cu{1}, or the makefile (ARCH=sm_90).\n{2}",
        N, link_flags(),
        uses_cudnn || uses_cublas ? fmt::format(" * Compiled with --gpu-libs ({}{}{}; see {}.cu): link with{}.\n", uses_cudnn ? "Conv on cuDNN" : "",
                                                uses_cudnn && uses_cublas ? ", " : "", uses_cublas ? "Gemm and MatMul on cuBLAS" : "", N,
                                                link_flags())
                                  : std::string(),
        range_nodes.empty()
            ? std::string()
            : fmt::format(" * Compiled with --gpu-precision fp16: {0}_run returns ONNXC_ERR_RANGE, naming the node, when an input of\n"
                          " * a tensor-core convolution is past half precision's range (65504), and that run's outputs are not valid;\n"
                          " * {0}_run_device does not check.\n",
                          N));
    std::string s = header_comment(N, opt.source, " for CUDA", about);
    s += header_open(N) + io_macros(N, g, wbytes, checksum);
    s += fmt::format("#define {}_ARENA_BYTES {}ULL /* intermediate tensors in device memory, per instance */\n", N, abytes);
    s += fmt::format("#define {}_IO_BYTES {}ULL /* device copies of the inputs and outputs, per instance */\n\n", N, iobytes);
    ApiComments c;
    c.ctx = "/* An instance of the model: its device arena and I/O buffers, its stream, a reference to the device weights. */\n";
    c.create = fmt::format("/* New instance with the weights of a {}.weights file; options may be NULL. On failure *ctx is NULL. */\n", N);
    c.create_from_memory = "/* The same from the image of a weights file (copied to the device; the image may be freed after). */\n";
    c.create_sharing = "/* New instance sharing other's device weights, with its own arena, buffers and stream. */\n";
    c.run = fmt::format("/* One inference: in{{k}}/out{{k}} (host memory) hold {0}_INPUT{{k}}_SIZE/{0}_OUTPUT{{k}}_SIZE elements. */\n", N);
    c.run_v = "/* The same with buffers in arrays; input_bytes[k]/output_bytes[k] must be each tensor's size in bytes. */\n";
    c.after_run_v = fmt::format(
        "/* Enqueues one inference on stream (a cudaStream_t; NULL for the instance's own) reading d_inputs[k] and\n"
        " * writing d_outputs[k], device buffers of {0}_INPUT{{k}}_SIZE/{0}_OUTPUT{{k}}_SIZE elements, and returns: no host\n"
        " * copy, no synchronisation (wait on the stream, or an event recorded on it, before reading the outputs).\n"
        " * The instance's arena holds the intermediate tensors: its runs must not overlap (enqueue them on one\n"
        " * stream, or order the streams). The launches may be captured in a CUDA graph (stream capture). */\n"
        "int {0}_run_device({0}_ctx* ctx, void* stream, const void* const* d_inputs, void* const* d_outputs);\n",
        N);
    c.destroy = "/* Frees *ctx (and the device weights when no other instance shares them) and sets *ctx to NULL. */\n";
    c.after_info = fmt::format("/* {0}_info and {0}_run_device, for generic drivers that keep the tensors on the GPU (onnxc_split_cuda.h). */\n"
                               "extern const onnxc_cuda_info {0}_cuda_info;\n\n",
                               N);
    s += api_declarations(N, g, c);
    if (opt.profile)
      s += fmt::format("/* Built with compile-model --profile: every {0}_run times each of the model's {1} nodes on the GPU\n"
                       " * (CUDA events around its launches; {0}_run_device does not time). {0}_profile copies each one's\n"
                       " * seconds, summed over the instance's runs so far, into seconds[0..{0}_PROFILE_OPS-1]; {0}_info.ops\n"
                       " * describes them (nodes, kernel, cost). */\n"
                       "#define {0}_PROFILE_OPS {1}\n"
                       "int {0}_profile(const {0}_ctx* ctx, double* seconds);\n\n",
                       N, emitted.size());
    return s + header_close();
  }

  // --gpu-libs: a comment for the file's opening, the per-instance types, members and functions.
  std::string link_flags() const { return std::string(uses_cudnn ? " -lcudnn" : "") + (uses_cublas ? " -lcublas" : ""); }
  std::string libs_comment() const {
    if (!uses_cudnn && !uses_cublas) return "";
    std::string libs = uses_cudnn && uses_cublas ? "cuDNN (Conv) and cuBLAS (Gemm, MatMul)" : uses_cudnn ? "cuDNN (Conv)" : "cuBLAS (Gemm, MatMul)";
    std::string l = std::string(uses_cudnn ? " -lcudnn" : "") + (uses_cublas ? " -lcublas" : "");
    return fmt::format("\n * --gpu-libs: {} run those nodes (their launches say so), each followed by a\n"
                       " * generated kernel for its bias and fused epilogue; link with{}.",
                       libs, l);
  }
  // Whether a kernel runs on tensor cores (--gpu-precision tf32 or fp16: Conv's wmma implicit GEMM).
  bool uses_wmma() const {
    for (const FunctionTable::Function& k : kernels.functions())
      if (k.rest.find("wmma::") != std::string::npos) return true;
    return false;
  }
  std::string precision_comment() const {
    if (copt.precision == GpuPrecision::Fp32) return "";
    return fmt::format("\n * --gpu-precision {}: convolutions{} multiply operands rounded to {} on tensor cores,\n"
                       " * accumulating in float32; every tensor stays float32.",
                       precision_name(copt.precision), uses_cublas ? " and cuBLAS's products" : "",
                       copt.precision == GpuPrecision::Tf32 ? "TF32" : "half precision");
  }
  std::string lib_types() const {
    if (!uses_cudnn) return "";
    return fmt::format("/* cuDNN: the descriptors of one Conv node and the algorithm chosen for it ({0}_conv_setup). */\n"
                       "typedef struct {{\n  cudnnTensorDescriptor_t x, y;\n  cudnnFilterDescriptor_t w;\n"
                       "  cudnnConvolutionDescriptor_t conv;\n  cudnnConvolutionFwdAlgo_t algo;\n}} {0}_conv;\n\n",
                       opt.name);
  }
  // --gpu-precision fp16: the per-node words of the kernels that report inputs past half's range.
  std::string range_members() const {
    if (range_nodes.empty()) return "";
    return fmt::format("  /* --gpu-precision fp16: per node, set on the device when an input of its tensor-core kernel is past\n"
                       "   * half precision's range (65504); {0}_run reads them back after each run (ONNXC_ERR_RANGE) */\n"
                       "  unsigned int* ovf;\n  unsigned int ovf_host[{1}];\n",
                       opt.name, emitted.size());
  }
  std::string lib_members() const {
    std::string s;
    if (uses_cudnn)
      s += fmt::format("  cudnnHandle_t cudnn;      /* --gpu-libs cudnn, on the stream */\n"
                       "  {}_conv conv[{}];          /* the Conv nodes cuDNN runs, in graph order */\n"
                       "  void* workspace;          /* device, workspace_bytes: cuDNN's, for every Conv node */\n"
                       "  size_t workspace_bytes;\n",
                       opt.name, convs);
    if (uses_cublas) s += "  cublasHandle_t cublas;    /* --gpu-libs cublas, on the stream */\n";
    return s;
  }
  std::string lib_functions() const {
    if (!uses_cudnn && !uses_cublas) return "";
    const std::string N = opt.name;
    std::string s = uses_cudnn ? cuda_conv_setup_function(N, copt.precision) : "";
    s += fmt::format("/* --gpu-libs: the instance's library handles on its stream{}. */\n"
                     "static int {}_libs_create(const char* fn, {}_ctx* c) {{\n",
                     uses_cudnn ? fmt::format(", the cuDNN descriptors of its {} Conv node{} and their workspace", convs, convs == 1 ? "" : "s") : "",
                     N, N);
    if (uses_cudnn)
      s += fmt::format("  int rc = ONNXC_OK;\n  size_t workspace = 0;\n"
                       "  {0}_CUDNN_CHECK(cudnnCreate(&c->cudnn), fn, \"cudnnCreate\", NULL);\n"
                       "  {0}_CUDNN_CHECK(cudnnSetStream(c->cudnn, c->stream), fn, \"cudnnSetStream\", NULL);\n{1}"
                       "  if (workspace > 0) {0}_CHECK(cudaMalloc(&c->workspace, workspace), fn, \"allocating the cuDNN workspace\");\n"
                       "  c->workspace_bytes = workspace;\n",
                       N, conv_setup);
    if (uses_cublas)
      s += fmt::format("  {0}_CUBLAS_CHECK(cublasCreate(&c->cublas), fn, \"cublasCreate\", NULL);\n"
                       "  {0}_CUBLAS_CHECK(cublasSetStream(c->cublas, c->stream), fn, \"cublasSetStream\", NULL);\n"
                       "  {0}_CUBLAS_CHECK(cublasSetMathMode(c->cublas, {1}), fn, \"cublasSetMathMode\", NULL); /* {2} */\n",
                       N, cuda_cublas_math(copt.precision),
                       copt.precision == GpuPrecision::Fp32 ? "float32, no TF32" : fmt::format("--gpu-precision {}", precision_name(copt.precision)));
    s += "  return ONNXC_OK;\n}\n\n";
    s += fmt::format("/* Frees what {0}_libs_create made (as far as it got: the instance starts zeroed); returns the first failed\n"
                     " * call, NULL if none. */\nstatic const char* {0}_libs_destroy({0}_ctx* c) {{\n  const char* failed = NULL;\n",
                     N);
    auto destroy = [&](const std::string& ptr, const std::string& call, const std::string& ok, const std::string& what, const std::string& ind) {
      s += fmt::format("{0}if ({1} && {2}({1}) != {3} && !failed) failed = \"{4}\";\n", ind, ptr, call, ok, what);
    };
    if (uses_cudnn) {
      s += fmt::format("  for (int k = 0; k < {}; ++k) {{\n", convs);
      destroy("c->conv[k].x", "cudnnDestroyTensorDescriptor", "CUDNN_STATUS_SUCCESS", "cudnnDestroyTensorDescriptor", "    ");
      destroy("c->conv[k].y", "cudnnDestroyTensorDescriptor", "CUDNN_STATUS_SUCCESS", "cudnnDestroyTensorDescriptor", "    ");
      destroy("c->conv[k].w", "cudnnDestroyFilterDescriptor", "CUDNN_STATUS_SUCCESS", "cudnnDestroyFilterDescriptor", "    ");
      destroy("c->conv[k].conv", "cudnnDestroyConvolutionDescriptor", "CUDNN_STATUS_SUCCESS", "cudnnDestroyConvolutionDescriptor", "    ");
      s += "  }\n";
      destroy("c->cudnn", "cudnnDestroy", "CUDNN_STATUS_SUCCESS", "cudnnDestroy", "  ");
      destroy("c->workspace", "cudaFree", "cudaSuccess", "cudaFree of the cuDNN workspace", "  ");
    }
    if (uses_cublas) destroy("c->cublas", "cublasDestroy", "CUBLAS_STATUS_SUCCESS", "cublasDestroy", "  ");
    return s + "  return failed;\n}\n\n";
  }

  // The launches of every node in order (node_launch); with --profile an event before each node's
  // launches and one after the last: NAME_launch (NAME_run) adds the times between them to the
  // instance's totals after its synchronisation.
  std::string launches_text() {
    const std::string N = opt.name;
    std::string launches;
    auto event = [&](size_t k) {
      return fmt::format("  if (ctx->prof_on) {}_CHECK(cudaEventRecord(ctx->prof_ev[{}], stream), fn, \"recording a profile event\");\n", N, k);
    };
    for (size_t k = 0; k < emitted.size(); ++k) {
      if (opt.profile) launches += event(k);
      launches += node_launch(k, *emitted[k]);
    }
    if (opt.profile) launches += event(emitted.size());
    return launches;
  }

  // The file's opening: what it is, the runtime, includes, the CUDA error check, the libraries'
  // support and the kernels.
  std::string source_prelude() {
    const std::string N = opt.name;
    std::string s;
    s = fmt::format(
        "/* {0}.cu — generated by onnxc from {1}. Do not edit.\n"
        " * CUDA C++ for nvcc: one __global__ kernel per node or fused group (the ONNX nodes it came from, its\n"
        " * launch configuration and kernel in its comment), shapes as constants, float32 activations in plain\n"
        " * NCHW, weights in {0}.weights, uploaded to the device once by {0}_create. {0}_run copies the inputs to\n"
        " * the device, launches the kernels in graph order on the instance's stream and copies the outputs\n"
        " * back. Every CUDA call is checked and reported through the status codes (see {0}.h). The C runtime\n"
        " * is included first and is private to this file.{2} */\n"
        "#if defined(__cplusplus) && !defined(_Thread_local)\n"
        "#define _Thread_local thread_local /* the runtime is C11; this file is C++ */\n#endif\n"
        "#include \"onnxc_runtime.c\" /* first: it sets _POSIX_C_SOURCE; all its functions are static */\n"
        "#include \"{0}.h\"\n\n"
        "#include <cuda_runtime.h>\n{3}#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n#include <atomic>\n#include <new>\n\n"
        "/* A failed CUDA call in entry point fn: ONNXC_ERR_NOMEM when device memory ran out, else ONNXC_ERR_DEVICE. */\n"
        "static int {0}_cuda_fail(cudaError_t err, const char* fn, const char* what) {{\n"
        "  return onnxc_fail(err == cudaErrorMemoryAllocation ? ONNXC_ERR_NOMEM : ONNXC_ERR_DEVICE, \"%s: %s failed: %s (%s)\", fn, what,\n"
        "                    cudaGetErrorName(err), cudaGetErrorString(err));\n}}\n"
        "#define {0}_CHECK(call, fn, what)                                     \\\n"
        "  do {{                                                                \\\n"
        "    const cudaError_t err_ = (call);                                  \\\n"
        "    if (err_ != cudaSuccess) return {0}_cuda_fail(err_, fn, what);   \\\n"
        "  }} while (0)\n\n",
        N, comment_safe(opt.source), libs_comment() + precision_comment(),
        std::string(uses_cudnn ? "#include <cudnn.h>\n" : "") + (uses_cublas ? "#include <cublas_v2.h>\n" : "") +
            (uses_wmma() ? "#include <cuda_fp16.h>\n#include <mma.h>\n" : ""));
    if (uses_wmma()) s += "using namespace nvcuda; /* wmma:: */\n\n";
    if (uses_cudnn || uses_cublas) s += cuda_libs_support(N, uses_cudnn, uses_cublas);
    s += kernels_text();
    return s;
  }

  // The instance and weights types and the functions that make and free instances.
  std::string instance_functions() {
    const std::string N = opt.name;
    std::string s;
    s += fmt::format(
        "/* The device weights, shared by the instances made from one another ({0}_create_sharing), freed with the last. */\n"
        "struct {0}_shared {{\n  std::atomic<size_t> refs;\n  unsigned char* weights; /* device, {0}_WEIGHTS_BYTES */\n}};\n\n"
        "{1}"
        "struct {0}_ctx {{\n  {0}_shared* shared;\n  unsigned char* arena; /* device, {0}_ARENA_BYTES */\n"
        "  unsigned char* io;    /* device, {0}_IO_BYTES: the inputs and outputs */\n  cudaStream_t stream;\n"
        "  std::atomic<int> busy; /* 1 while a run is in progress */\n{2}{4}{7}}};\n\n"
        "{9}"
        "static void {0}_release({0}_shared* shared) {{\n"
        "  if (shared->refs.fetch_sub(1) == 1) {{\n    cudaFree(shared->weights);\n    delete shared;\n  }}\n}}\n\n"
        "static int {0}_check_create(const char* fn, const onnxc_options* options, {0}_ctx** ctx) {{\n"
        "  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"%s: ctx is NULL (pass the address of a {0}_ctx* to receive the instance)\", fn);\n"
        "  *ctx = NULL;\n"
        "  if (options && options->num_threads < 0)\n"
        "    return onnxc_fail(ONNXC_ERR_ARG, \"%s: options->num_threads is %d; use 0 or a thread count\", fn, options->num_threads);\n"
        "  return ONNXC_OK;\n}}\n\n"
        "/* Copies checked host weights to a new device block. */\n"
        "static int {0}_upload(const char* fn, const onnxc_weights* w, {0}_shared** out) {{\n"
        "  *out = NULL;\n"
        "  {0}_shared* s = new (std::nothrow) {0}_shared();\n"
        "  if (!s) return onnxc_fail(ONNXC_ERR_NOMEM, \"%s: out of memory\", fn);\n"
        "  s->refs = 1;\n  s->weights = NULL;\n"
        "  if ({0}_WEIGHTS_BYTES > 0) {{\n"
        "    cudaError_t err = cudaMalloc((void**)&s->weights, {0}_WEIGHTS_BYTES);\n"
        "    if (err == cudaSuccess) err = cudaMemcpy(s->weights, w->data, {0}_WEIGHTS_BYTES, cudaMemcpyHostToDevice);\n"
        "    /* From pageable memory cudaMemcpy may return before the copy has landed, and the instances' streams\n"
        "     * do not wait for the default stream: a run that only copies a constant output read zeros. */\n"
        "    if (err == cudaSuccess) err = cudaDeviceSynchronize();\n"
        "    if (err != cudaSuccess) {{\n      cudaFree(s->weights);\n      delete s;\n"
        "      return {0}_cuda_fail(err, fn, \"uploading the weights to the device\");\n    }}\n  }}\n"
        "  *out = s;\n  return ONNXC_OK;\n}}\n\n"
        "{3}"
        "/* A new instance on `shared`, whose reference it takes over (released on failure). */\n"
        "static int {0}_new_instance(const char* fn, {0}_shared* shared, {0}_ctx** ctx) {{\n"
        "  {0}_ctx* c = new (std::nothrow) {0}_ctx();\n"
        "  if (!c) {{\n    {0}_release(shared);\n    return onnxc_fail(ONNXC_ERR_NOMEM, \"%s: out of memory\", fn);\n  }}\n"
        "  c->shared = shared;\n  c->arena = NULL;\n  c->io = NULL;\n  c->stream = NULL;\n  c->busy = 0;\n"
        "  cudaError_t err = cudaSuccess;\n  const char* what = \"\";\n"
        "  if ({0}_ARENA_BYTES > 0) err = cudaMalloc((void**)&c->arena, {0}_ARENA_BYTES), what = \"allocating the device arena\";\n"
        "  if (err == cudaSuccess && {0}_IO_BYTES > 0) err = cudaMalloc((void**)&c->io, {0}_IO_BYTES), what = \"allocating the device input/output buffers\";\n"
        "  if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), what = \"creating the stream\";\n"
        "  if (err != cudaSuccess) {{\n"
        "    cudaFree(c->arena);\n    cudaFree(c->io);\n    {0}_release(shared);\n    delete c;\n"
        "    return {0}_cuda_fail(err, fn, what);\n  }}\n"
        "{5}{6}{8}"
        "  *ctx = c;\n  return ONNXC_OK;\n}}\n\n",
        N, lib_types(), lib_members(), lib_functions(),
        opt.profile ? fmt::format("  /* --profile: events around each node's launches, seconds per node summed over the runs of\n"
                                  "   * {0}_run (prof_on while one is enqueued; {0}_run_device does not time) */\n"
                                  "  cudaEvent_t prof_ev[{0}_PROFILE_OPS + 1];\n  double prof[{0}_PROFILE_OPS];\n  int prof_on;\n",
                                  N)
                    : std::string(),
        uses_cudnn || uses_cublas
            ? fmt::format("  const int rc = {0}_libs_create(fn, c);\n"
                          "  if (rc) {{\n    (void){0}_libs_destroy(c);\n    cudaStreamDestroy(c->stream);\n    cudaFree(c->arena);\n"
                          "    cudaFree(c->io);\n    {0}_release(shared);\n    delete c;\n    return rc;\n  }}\n",
                          N)
            : std::string(),
        opt.profile ? fmt::format("  for (int k = 0; k <= {0}_PROFILE_OPS && err == cudaSuccess; ++k) err = cudaEventCreate(&c->prof_ev[k]);\n"
                                  "  if (err != cudaSuccess) {{\n    {0}_ctx* failed = c;\n    (void){0}_destroy(&failed);\n"
                                  "    return {0}_cuda_fail(err, fn, \"creating the profile events\");\n  }}\n",
                                  N)
                    : std::string(),
        range_members(),
        range_nodes.empty()
            ? std::string()
            : fmt::format("  err = cudaMalloc((void**)&c->ovf, sizeof c->ovf_host);\n"
                          "  if (err == cudaSuccess) err = cudaMemset(c->ovf, 0, sizeof c->ovf_host);\n"
                          "  if (err != cudaSuccess) {{\n    {0}_ctx* failed = c;\n    (void){0}_destroy(&failed);\n"
                          "    return {0}_cuda_fail(err, fn, \"allocating the fp16 range words\");\n  }}\n",
                          N),
        status_functions(N));
    s += create_functions(N, "", "&w", [&](const std::string& fn, const std::string& load) {
      return fmt::format(
          "  onnxc_weights w;\n  rc = {2};\n"
          "  if (rc) {{\n    onnxc_prefix_error_detail(\"{1}\");\n    return rc;\n  }}\n"
          "  {0}_shared* shared = NULL;\n  rc = {0}_upload(\"{1}\", &w, &shared);\n  onnxc_weights_free(&w);\n  if (rc) return rc;\n"
          "  return {0}_new_instance(\"{1}\", shared, ctx);\n",
          N, fn, load);
    });
    s += create_sharing_function(N, "", "other->shared->refs.fetch_add(1)", "");
    s += destroy_opening(N) + fmt::format(
        "{1}{3}"
        "  const cudaError_t e1 = cudaStreamDestroy(c->stream);\n  const cudaError_t e2 = cudaFree(c->arena);\n"
        "  const cudaError_t e3 = cudaFree(c->io);\n  {0}_release(c->shared);\n  delete c;\n"
        "  const cudaError_t err = e1 != cudaSuccess ? e1 : e2 != cudaSuccess ? e2 : e3;\n{2}"
        "  return err == cudaSuccess ? ONNXC_OK : {0}_cuda_fail(err, \"{0}_destroy\", \"freeing the instance\");\n}}\n\n",
        N, uses_cudnn || uses_cublas ? fmt::format("  const char* const lib_failed = {}_libs_destroy(c);\n", N) : "",
        uses_cudnn || uses_cublas
            ? fmt::format("  if (lib_failed) return onnxc_fail(ONNXC_ERR_DEVICE, \"{}_destroy: %s failed (freeing the instance)\", lib_failed);\n", N)
            : "",
        (opt.profile ? fmt::format("  for (int k = 0; k <= {}_PROFILE_OPS; ++k)\n    if (c->prof_ev[k]) (void)cudaEventDestroy(c->prof_ev[k]);\n", N)
                     : std::string()) +
            (range_nodes.empty() ? "" : "  (void)cudaFree(c->ovf);\n"));
    return s;
  }

  // Whether graph output k is the first slot of the value a kernel writes (the others copy it).
  bool primary(size_t k) const {
    const auto it = out_index.find(g.outputs[k]);
    return it != out_index.end() && it->second == k;
  }

  // NAME_enqueue: the launches on device buffers.
  std::string enqueue_function(const std::string& launches) {
    const std::string N = opt.name;
    std::string s;
    s += fmt::format("/* Enqueues one inference on stream: the inputs read from din[k], the outputs written to dout[k] (device\n"
                     " * pointers). An output no kernel writes (a graph input or a constant given as output, an output repeated)\n"
                     " * is copied device to device into dout[k] unless dout[k] is NULL. No host copy, no synchronisation. */\n"
                     "static int {0}_enqueue({0}_ctx* ctx, cudaStream_t stream, const void* const* din, void* const* dout, const char* fn) {{\n"
                     "  (void)ctx;\n  (void)din;\n  (void)dout;\n",
                     N);
    // --gpu-libs: the handles work on the stream of this inference (the instance's, or the caller's
    // for NAME_run_device).
    if (uses_cudnn)
      s += fmt::format("  {0}_CUDNN_CHECK(cudnnSetStream(ctx->cudnn, stream), fn, \"cudnnSetStream\", NULL);\n", N);
    if (uses_cublas)
      s += fmt::format("  {0}_CUBLAS_CHECK(cublasSetStream(ctx->cublas, stream), fn, \"cublasSetStream\", NULL);\n", N);
    if (!weights.empty()) s += "  const unsigned char* const weights = ctx->shared->weights;\n";
    if (!arena.empty()) s += "  unsigned char* const arena = ctx->arena;\n";
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Value* v = g.inputs[k];
      s += fmt::format("  {0}* const {1} = ({0}*)din[{2}]; /* {3} {4} */\n", dtype_ctype(v->dtype), name.at(v), k, comment_safe(v->name),
                       v->type_str());
    }
    for (size_t k = 0; k < g.outputs.size(); ++k)
      if (primary(k)) {
        const Value* v = g.outputs[k];
        s += fmt::format("  {0}* const {1} = ({0}*)dout[{2}]; /* {3} {4} */\n", dtype_ctype(v->dtype), name.at(v), k, comment_safe(v->name),
                         v->type_str());
      }
    s += weight_and_arena_pointers();
    for (const auto* list : {&io, &weights, &arena})  // a buffer no kernel reads or writes
      for (const Value* v : *list)
        if (launches.find(name.at(v) + ",") == std::string::npos && launches.find(name.at(v) + ")") == std::string::npos)
          s += fmt::format("  (void){};\n", name.at(v));
    s += launches;
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const Value* v = g.outputs[k];
      if (primary(k) || v->nbytes() == 0) continue;
      s += fmt::format("  if (dout[{1}]) {0}_CHECK(cudaMemcpyAsync(dout[{1}], {2}, {3}, cudaMemcpyDeviceToDevice, stream), fn, {4});\n", N, k,
                       name.at(v), v->nbytes(), c_string("copying output '" + v->name + "' on the device"));
    }
    s += "  return ONNXC_OK;\n}\n\n";
    return s;
  }

  // NAME_launch, the host path: inputs in, NAME_enqueue on the instance's I/O block, outputs back.
  std::string launch_function() {
    const std::string N = opt.name;
    std::string s;
    s += fmt::format("/* One inference on the instance's stream and I/O block (the checks are done by the caller). */\n"
                     "static int {0}_launch({1}) {{\n  const char* const fn = \"{0}_run\";\n  cudaStream_t const stream = ctx->stream;\n",
                     N, run_params());
    if (!io.empty()) s += "  unsigned char* const io = ctx->io;\n";
    if (std::any_of(g.outputs.begin(), g.outputs.end(), [](const Value* v) { return v->constant && v->nbytes() > 0; }))
      s += "  const unsigned char* const weights = ctx->shared->weights;\n";
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Value* v = g.inputs[k];
      if (v->nbytes() == 0) {
        s += fmt::format("  (void)in{}; /* empty */\n", k);
        continue;
      }
      s += fmt::format("  {}_CHECK(cudaMemcpyAsync(io + {}, in{}, {}, cudaMemcpyHostToDevice, stream), fn, {});\n", N, iooff.at(v), k,
                       v->nbytes(), c_string("copying input '" + v->name + "' to the device"));
    }
    std::vector<std::string> din, dout;
    for (const Value* v : g.inputs) din.push_back(fmt::format("io + {}", iooff.at(v)));
    for (size_t k = 0; k < g.outputs.size(); ++k) dout.push_back(primary(k) ? fmt::format("io + {}", iooff.at(g.outputs[k])) : "NULL");
    s += din.empty() ? "  const void* const* const din = NULL;\n" : fmt::format("  const void* const din[] = {{{}}};\n", fmt::join(din, ", "));
    s += dout.empty() ? "  void* const* const dout = NULL;\n" : fmt::format("  void* const dout[] = {{{}}};\n", fmt::join(dout, ", "));
    if (!range_nodes.empty())  // this run's words only (NAME_run_device leaves its own set)
      s += fmt::format("  {}_CHECK(cudaMemsetAsync(ctx->ovf, 0, sizeof ctx->ovf_host, stream), fn, \"clearing the fp16 range words\");\n", N);
    if (opt.profile) s += "  ctx->prof_on = 1;\n";
    s += fmt::format("  const int rc = {}_enqueue(ctx, stream, din, dout, fn);\n", N);
    if (opt.profile) s += "  ctx->prof_on = 0;\n";
    s += "  if (rc) return rc;\n";
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const Value* v = g.outputs[k];
      if (v->nbytes() == 0) {
        s += fmt::format("  (void)out{}; /* empty */\n", k);
        continue;
      }
      const std::string src = v->constant ? fmt::format("weights + {}", woff.at(v)) : fmt::format("io + {}", iooff.at(v));
      s += fmt::format("  {}_CHECK(cudaMemcpyAsync(out{}, {}, {}, cudaMemcpyDeviceToHost, stream), fn, {});\n", N, k, src, v->nbytes(),
                       c_string("copying output '" + v->name + "' from the device"));
    }
    if (!range_nodes.empty())
      s += fmt::format("  {}_CHECK(cudaMemcpyAsync(ctx->ovf_host, ctx->ovf, sizeof ctx->ovf_host, cudaMemcpyDeviceToHost, stream), fn,\n"
                       "            \"reading the fp16 range words\");\n", N);
    s += fmt::format("  {}_CHECK(cudaStreamSynchronize(stream), fn, \"running the model's kernels\");\n", N);
    if (!range_nodes.empty()) {
      s += "  /* --gpu-precision fp16: an input past half precision's range makes this run's outputs invalid. */\n";
      for (const auto& [k, what] : range_nodes)
        s += fmt::format("  if (ctx->ovf_host[{1}])\n"
                         "    return onnxc_fail(ONNXC_ERR_RANGE, \"%s: %s: an input is past half precision's range (65504) under \"\n"
                         "                      \"--gpu-precision fp16; this run's outputs are not valid (compile with --gpu-precision tf32 or fp32)\",\n"
                         "                      fn, {2});\n",
                         N, k, c_string(what));
    }
    if (opt.profile)
      s += fmt::format("  for (int k = 0; k < {0}_PROFILE_OPS; ++k) {{ /* --profile: each node's time, from the events around it */\n"
                       "    float ms = 0;\n"
                       "    {0}_CHECK(cudaEventElapsedTime(&ms, ctx->prof_ev[k], ctx->prof_ev[k + 1]), fn, \"reading a profile event\");\n"
                       "    ctx->prof[k] += 1e-3 * ms;\n  }}\n",
                       N);
    s += "  return ONNXC_OK;\n}\n\n";
    return s;
  }

  // NAME_run: the buffers' checks, then NAME_launch.
  std::string run_function() {
    const std::string N = opt.name;
    std::string s;
    auto list = [](const char* var, size_t n) {
      std::vector<std::string> r;
      for (size_t k = 0; k < n; ++k) r.push_back(fmt::format("{}{}", var, k));
      return r;
    };
    s += fmt::format("int {0}_run({1}) {{\n"
                     "  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_run: ctx is NULL (never created, or destroyed)\");\n"
                     "  int rc = ONNXC_OK;\n",
                     N, run_params());
    if (!g.inputs.empty())
      s += fmt::format("  const void* const ins[] = {{{1}}};\n  rc = onnxc_check_buffers(\"{0}_run\", \"input\", {0}_inputs, {2}, ins, NULL);\n", N,
                       fmt::join(list("in", g.inputs.size()), ", "), g.inputs.size());
    if (!g.outputs.empty())
      s += fmt::format("  const void* const outs[] = {{{1}}};\n  if (!rc) rc = onnxc_check_buffers(\"{0}_run\", \"output\", {0}_outputs, {2}, outs, NULL);\n",
                       N, fmt::join(list("out", g.outputs.size()), ", "), g.outputs.size());
    std::vector<std::string> call{"ctx"};
    for (auto& a : list("in", g.inputs.size())) call.push_back(a);
    for (auto& a : list("out", g.outputs.size())) call.push_back(a);
    s += fmt::format("  if (rc) return rc;\n"
                     "  if (ctx->busy.exchange(1))\n"
                     "    return onnxc_fail(ONNXC_ERR_STATE, \"{0}_run: the instance is already running (one run at a time per instance: \"\n"
                     "                      \"give each thread its own, {0}_create_sharing shares the weights)\");\n"
                     "  rc = {0}_launch({1});\n"
                     "  if (rc) (void)cudaStreamSynchronize(ctx->stream); /* nothing of this run is left in flight */\n"
                     "  ctx->busy = 0;\n  return rc;\n}}\n\n",
                     N, fmt::join(call, ", "));
    return s;
  }

  // NAME_run_device: one inference on device buffers, enqueued on the caller's stream.
  std::string run_device_function() {
    const std::string N = opt.name;
    std::string s;
    auto null_checks = [&](const char* arr, const char* kind, size_t n) -> std::string {
      if (n == 0) return "";
      return fmt::format("  for (int k = 0; k < {2}; ++k)\n"
                         "    if (!{1}[k] && {0}_{3}s[k].numel > 0)\n"
                         "      return onnxc_fail(ONNXC_ERR_ARG, \"{0}_run_device: {1}[%d] ('%s') is NULL\", k, {0}_{3}s[k].name);\n",
                         N, arr, n, kind);
    };
    s += fmt::format(
        "int {0}_run_device({0}_ctx* ctx, void* stream, const void* const* d_inputs, void* const* d_outputs) {{\n"
        "  if (!ctx) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_run_device: ctx is NULL (never created, or destroyed)\");\n"
        "  if (({1} > 0 && !d_inputs) || ({2} > 0 && !d_outputs))\n"
        "    return onnxc_fail(ONNXC_ERR_ARG, \"{0}_run_device: d_inputs or d_outputs is NULL (the model has {1} input(s) and {2} output(s))\");\n"
        "{3}{4}"
        "  if (ctx->busy.exchange(1))\n"
        "    return onnxc_fail(ONNXC_ERR_STATE, \"{0}_run_device: the instance is already running (one run at a time per instance)\");\n"
        "  const int rc = {0}_enqueue(ctx, stream ? (cudaStream_t)stream : ctx->stream, d_inputs, d_outputs, \"{0}_run_device\");\n"
        "  ctx->busy = 0;\n  return rc;\n}}\n\n",
        N, g.inputs.size(), g.outputs.size(), null_checks("d_inputs", "input", g.inputs.size()),
        null_checks("d_outputs", "output", g.outputs.size()));
    return s;
  }

  std::string source() {
    const std::string N = opt.name;
    const std::string launches = launches_text();  // first: the launches decide the kernels and libraries the prelude writes
    std::string s = source_prelude();
    // Tensor tables (the entry points' checks and NAME_info).
    s += tensor_tables(N, g);
    s += instance_functions();
    // The launches on device buffers (NAME_enqueue), then the host path (NAME_launch): inputs in,
    // NAME_enqueue on the instance's I/O block, outputs back.
    s += enqueue_function(launches);
    s += launch_function();
    s += run_function();
    s += run_v_function(N, g);
    s += run_device_function();
    if (opt.profile) s += profile_ops_table(N, "The nodes the profile times, in launch order", op_rows);
    ModuleInfo info;
    info.openmp = "  0, /* no OpenMP */\n";
    info.device = "\"cuda\"";
    info.target = "\"--device cuda\" /* target: the host code is built without CPU-specific flags */";
    info.profile = opt.profile;
    info.cplusplus = true;
    info.extra = fmt::format(
        "static int {0}_info_run_device(void* ctx, void* stream, const void* const* d_inputs, void* const* d_outputs) {{\n"
        "  return {0}_run_device(({0}_ctx*)ctx, stream, d_inputs, d_outputs);\n}}\n\n"
        "const onnxc_cuda_info {0}_cuda_info = {{&{0}_info, {0}_info_run_device}};\n\n",
        N);
    s += model_info(N, g, info);
    return s;
  }
};

}  // namespace

CodegenResult emit_cuda_module(const Graph& g, const CodegenOptions& opt, const CudaOptions& copt, const Backend& b) {
  CudaModule m(g, opt, copt, b);
  ModuleFiles f = module_files(m, "cu");
  f.distinct_functions = m.kernels.functions().size();
  const std::string& N = opt.name;
  f.makefile.comment = [&](const std::string& make) {
    return fmt::format(
        "# Builds the model compiled by onnxc for CUDA: `{1}` (executable {0}), `{1} lib{0}.so` (shared library).\n"
        "# {0}.cu includes the runtime (onnxc_runtime.c), private to it. The driver onnxc_main.c does not depend on\n"
        "# the model: onnxc_main.o links with any model built with -DONNXC_MAIN_MODEL.\n",
        N, make);
  };
  const std::string libs = m.link_flags().empty() ? "" : " $(LIBS)";
  f.makefile.variables = "NVCC ?= nvcc\nCC ?= cc\nARCH ?= sm_90\nNVCCFLAGS ?= -O3\n";
  if (!libs.empty()) f.makefile.after_runtime = "# --gpu-libs: the libraries the model calls\nLIBS =" + m.link_flags() + "\n";
  f.makefile.executable = fmt::format("$(NVCC) -arch=$(ARCH) $(NVCCFLAGS) -DONNXC_MAIN_MODEL -o $@ {}.cu onnxc_main.o{}", N, libs);
  f.makefile.driver = "$(CC) -std=c11 -O2 -c -o $@ onnxc_main.c";
  f.makefile.library = fmt::format("$(NVCC) -arch=$(ARCH) $(NVCCFLAGS) -Xcompiler -fPIC -shared -o $@ {}.cu{}", N, libs);
  CodegenResult r = write_module(opt, m, f);
  if (m.uses_cudnn) r.libraries.push_back("cudnn");
  if (m.uses_cublas) r.libraries.push_back("cublas");
  return r;
}

}  // namespace onnxc
