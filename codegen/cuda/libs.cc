// codegen/cuda/libs.cc — compile-model --gpu-libs cudnn,cublas: Conv run by cuDNN, Gemm and
// MatMul by cuBLAS instead of the generated kernels, so that both can be compared on a GPU.
//
// cuDNN: per Conv node, NAME_create makes the tensor, filter and convolution descriptors (the
// node's shapes as constants, groups with cudnnSetConvolutionGroupCount, FMA math: float32,
// no TF32; --gpu-precision tf32: tensor-op math, fp16: tensor-op math allowing conversion to
// half), picks the algorithm with cudnnGetConvolutionForwardAlgorithm_v7 (the fastest that
// reports success with an accepted math type, FMA only for fp32, and whose workspace cuDNN
// sizes, else IMPLICIT_GEMM) and sizes one workspace per instance (the
// largest any node needs; the kernels run one after another on the instance's stream). NAME_run
// calls cudnnConvolutionForward (no bias) into the node's output; a generated elementwise
// kernel then adds the bias and applies the fused group's epilogue in place (cu_epilogue:
// the same code the conv kernel applies at its store). 1-D convolutions run as 2-D ones of
// height 1. Asymmetric pads, other ranks and sizes past int run the generated kernel.
//
// cuBLAS: row-major Y = op(A) op(B) is column-major Y^T = op(B)^T op(A)^T, so cuBLAS is
// called with the operands swapped (B first) and each operand's transposition as stored. Gemm
// scales by alpha in the call (beta = 0); beta * C, broadcast, and the epilogue come from the
// elementwise kernel. MatMul runs cublasSgemmStridedBatched when each operand's batch offset is
// one stride times the flat batch index (or 0: broadcast over all batch dims), else the
// generated kernel. Math mode CUBLAS_DEFAULT_MATH (float32, no TF32); --gpu-precision tf32:
// CUBLAS_TF32_TENSOR_OP_MATH, fp16: CUBLAS_TENSOR_OP_MATH (cuBLAS's Sgemm then computes as
// CUBLAS_COMPUTE_32F_FAST_16F, operands down-converted to half; deprecated but still in CUDA 13).
//
// Every cuDNN and cuBLAS status is checked: a failure is ONNXC_ERR_DEVICE with the call, the
// node and the library's message in NAME_last_error().
#include <fmt/format.h>

#include <climits>

#include "codegen/c/emit.h"
#include "codegen/cuda/module.h"
#include "ir/ops/conv.h"
#include "ir/ops/gemm.h"

namespace onnxc {
namespace {

// A C string literal's text for a comment ("*/" broken up).
std::string comment_text(std::string s) {
  for (size_t p; (p = s.find("*/")) != std::string::npos;) s.replace(p, 2, "* /");
  return s;
}

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

std::string int_list(const std::vector<int64_t>& v) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r;
}

// Why cuDNN does not run Conv node n ("" when it does).
std::string cudnn_refusal(const Node& n) {
  const ConvGeom& g = conv_geom(n);
  if (g.rank() < 1 || g.rank() > 3) return "a " + std::to_string(g.rank()) + "-D convolution";
  if (g.pb != g.pe) return "asymmetric pads";
  for (int64_t v : {g.N, g.C, g.M, g.G, g.N * g.C * g.in_size(), g.N * g.M * g.out_size(), g.M * g.CG * g.k_size()})
    if (!fits_int(v)) return "sizes past int";
  return "";
}

// MatMul: the single stride of an operand's matrices over the flat batch index, or -1 when
// its batch strides are not one (broadcast over some batch dims only).
int64_t flat_batch_stride(const Shape& batch, const Shape& st, int64_t mat) {
  bool all_zero = true;
  for (size_t d = 0; d < batch.size(); ++d)
    if (batch[d] > 1 && st[d] != 0) all_zero = false;
  if (all_zero) return 0;
  int64_t inner = mat;
  for (size_t d = batch.size(); d-- > 0;) {
    if (batch[d] > 1 && st[d] != inner) return -1;
    inner *= batch[d];
  }
  return mat;
}

std::string cublas_refusal(const Node& n) {
  if (n.op_type == "Gemm") {
    const GemmAttrs& a = gemm_attrs(n);
    return fits_int(a.M) && fits_int(a.N) && fits_int(a.K) ? "" : "sizes past int";
  }
  const MatMulGeom& g = matmul_geom(n);
  int64_t batch = 1;
  for (int64_t b : g.batch) batch *= b;
  if (!fits_int(g.M) || !fits_int(g.N) || !fits_int(g.K) || !fits_int(batch)) return "sizes past int";
  if (flat_batch_stride(g.batch, g.a_st, g.M * g.K) < 0 || flat_batch_stride(g.batch, g.b_st, g.K * g.N) < 0)
    return "batch strides that are not one stride per operand (partial broadcast)";
  return "";
}

}  // namespace

CudaLibChoice cuda_lib_choice(const Node& n, const CudaOptions& o) {
  if (n.op_type == "Conv" && o.cudnn) {
    std::string why = cudnn_refusal(n);
    return why.empty() ? CudaLibChoice{"cudnn", ""} : CudaLibChoice{"", "--gpu-libs cudnn does not run " + why};
  }
  if ((n.op_type == "Gemm" || n.op_type == "MatMul") && o.cublas) {
    std::string why = cublas_refusal(n);
    return why.empty() ? CudaLibChoice{"cublas", ""} : CudaLibChoice{"", "--gpu-libs cublas does not run " + why};
  }
  return {};
}

CudaLibCode cuda_lib_code(const Node& n, const std::string& lib, const std::string& N, size_t conv_index,
                          const std::vector<std::string>& in, const std::string& out, const std::string& node) {
  CudaLibCode c;
  if (lib == "cudnn") {
    const ConvGeom& g = conv_geom(n);
    std::vector<int64_t> xs{g.N, g.C}, ws{g.M, g.CG}, ys{g.N, g.M}, pad, stride, dil;
    if (g.rank() == 1) {  // a 2-D convolution of height 1
      xs.push_back(1), ws.push_back(1), ys.push_back(1), pad.push_back(0), stride.push_back(1), dil.push_back(1);
    }
    for (size_t d = 0; d < g.rank(); ++d) {
      xs.push_back(g.in[d]), ws.push_back(g.k[d]), ys.push_back(g.out[d]);
      pad.push_back(g.pb[d]), stride.push_back(g.s[d]), dil.push_back(g.d[d]);
    }
    c.setup = fmt::format(
        "  {{ /* node {15}: x {1}, w {2}, y {3}, {4} group{5} */\n"
        "    static const int x[] = {{{6}}}, w[] = {{{7}}}, y[] = {{{8}}};\n"
        "    static const int pad[] = {{{9}}}, stride[] = {{{10}}}, dilation[] = {{{11}}};\n"
        "    rc = {12}_conv_setup(fn, c->cudnn, &c->conv[{13}], {0}, {14}, x, w, y, pad, stride, dilation, {4}, &workspace);\n"
        "    if (rc) return rc;\n  }}\n",
        node, shape_str(xs), shape_str(ws), shape_str(ys), g.G, g.G == 1 ? "" : "s", int_list(xs), int_list(ws), int_list(ys),
        int_list(pad), int_list(stride), int_list(dil), N, conv_index, xs.size(), comment_text(node));
    const std::string pad_to(N.size() + 41, ' ');
    c.run = fmt::format(
        "  {{\n    const {0}_conv* const d = &ctx->conv[{1}];\n"
        "    {0}_CUDNN_CHECK(cudnnConvolutionForward(ctx->cudnn, &{0}_one, d->x, {2}, d->w, {3}, d->conv, d->algo,\n"
        "{6}ctx->workspace, ctx->workspace_bytes, &{0}_zero, d->y, {4}),\n"
        "{7}fn, \"cudnnConvolutionForward\", {5});\n  }}\n",
        N, conv_index, in.at(0), in.at(1), out, node, pad_to, std::string(N.size() + 17, ' '));
    const int64_t osz = g.out_size();
    if (in.size() > 2 && !in[2].empty()) c.bias = fmt::format("x2[{}]", osz == 1 ? fmt::format("i % {}", g.M) : fmt::format("(i / {}) % {}", osz, g.M));
    c.comment = fmt::format("cuDNN cudnnConvolutionForward (descriptors made by {}_create)", N);
    return c;
  }
  // cuBLAS: column-major Y^T (N x M, ld N) = op(B)^T (N x K) op(A)^T (K x M).
  std::string call, opa = "CUBLAS_OP_N", opb = "CUBLAS_OP_N";
  double alpha = 1;
  int64_t M, Nn, K, lda, ldb;
  if (n.op_type == "Gemm") {
    const GemmAttrs& a = gemm_attrs(n);
    M = a.M, Nn = a.N, K = a.K, alpha = a.alpha;
    if (a.trans_a) opa = "CUBLAS_OP_T";
    if (a.trans_b) opb = "CUBLAS_OP_T";
    lda = a.trans_a ? a.M : a.K;
    ldb = a.trans_b ? a.K : a.N;
    call = fmt::format("cublasSgemm(ctx->cublas, {}, {}, {}, {}, {}, &alpha, {}, {}, {}, {}, &beta, {}, {})", opb, opa, Nn, M, K, in.at(1),
                       ldb, in.at(0), lda, out, Nn);
    if (in.size() > 2 && !in[2].empty() && a.beta != 0) {
      std::string at;
      if (a.c_si) at = fmt::format("(i / {}) * {}", a.N, a.c_si);
      if (a.c_sj) at += (at.empty() ? "" : " + ") + (a.c_sj == 1 ? fmt::format("i % {}", a.N) : fmt::format("(i % {}) * {}", a.N, a.c_sj));
      if (at.empty()) at = "0";
      c.bias = (a.beta == 1 ? "" : c_float(a.beta) + " * ") + fmt::format("x2[{}]", at);
    }
    c.comment = "cuBLAS cublasSgemm (column-major: Y^T = op(B)^T op(A)^T)";
  } else {
    const MatMulGeom& g = matmul_geom(n);
    int64_t batch = 1;
    for (int64_t b : g.batch) batch *= b;
    M = g.M, Nn = g.N, K = g.K, lda = g.K, ldb = g.N;
    if (batch == 1) {
      call = fmt::format("cublasSgemm(ctx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, {}, {}, {}, &alpha, {}, {}, {}, {}, &beta, {}, {})", Nn, M, K,
                         in.at(1), ldb, in.at(0), lda, out, Nn);
      c.comment = "cuBLAS cublasSgemm (column-major: Y^T = B^T A^T)";
    } else {
      const int64_t sa = flat_batch_stride(g.batch, g.a_st, g.M * g.K), sb = flat_batch_stride(g.batch, g.b_st, g.K * g.N);
      call = fmt::format(
          "cublasSgemmStridedBatched(ctx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, {}, {}, {}, &alpha, {}, {}, {}LL, {}, {}, {}LL, &beta,\n"
          "                                      {}, {}, {}LL, {})",
          Nn, M, K, in.at(1), ldb, sb, in.at(0), lda, sa, out, Nn, M * Nn, batch);
      c.comment = fmt::format("cuBLAS cublasSgemmStridedBatched, {} products (column-major: Y^T = B^T A^T)", batch);
    }
  }
  c.run = fmt::format("  {{\n    const float alpha = {}, beta = 0.0f;\n    {}_CUBLAS_CHECK({},\n{}fn, \"{}\", {});\n  }}\n",
                      c_float(alpha), N, call, std::string(N.size() + 18, ' '), call.substr(0, call.find('(')), node);
  return c;
}

std::string cuda_libs_support(const std::string& N, bool cudnn, bool cublas) {
  std::string s =
      "/* --gpu-libs: library calls are checked like the CUDA calls; a failure is ONNXC_ERR_DEVICE naming the call,\n"
      " * the node and the library's message. */\n";
  if (cudnn)
    s += fmt::format(
        "static const float {0}_one = 1.0f, {0}_zero = 0.0f; /* cudnnConvolutionForward's alpha and beta */\n"
        "static int {0}_cudnn_fail(cudnnStatus_t st, const char* fn, const char* what, const char* node) {{\n"
        "  return onnxc_fail(ONNXC_ERR_DEVICE, \"%s: %s%s%s%s failed: %s\", fn, what, node ? \" for node '\" : \"\", node ? node : \"\",\n"
        "                    node ? \"'\" : \"\", cudnnGetErrorString(st));\n}}\n"
        "#define {0}_CUDNN_CHECK(call, fn, what, node)                                \\\n"
        "  do {{                                                                       \\\n"
        "    const cudnnStatus_t st_ = (call);                                        \\\n"
        "    if (st_ != CUDNN_STATUS_SUCCESS) return {0}_cudnn_fail(st_, fn, what, node); \\\n"
        "  }} while (0)\n",
        N);
  if (cublas)
    s += fmt::format(
        "static int {0}_cublas_fail(cublasStatus_t st, const char* fn, const char* what, const char* node) {{\n"
        "  return onnxc_fail(ONNXC_ERR_DEVICE, \"%s: %s%s%s%s failed: %s (%s)\", fn, what, node ? \" for node '\" : \"\", node ? node : \"\",\n"
        "                    node ? \"'\" : \"\", cublasGetStatusName(st), cublasGetStatusString(st));\n}}\n"
        "#define {0}_CUBLAS_CHECK(call, fn, what, node)                                \\\n"
        "  do {{                                                                        \\\n"
        "    const cublasStatus_t st_ = (call);                                        \\\n"
        "    if (st_ != CUBLAS_STATUS_SUCCESS) return {0}_cublas_fail(st_, fn, what, node); \\\n"
        "  }} while (0)\n",
        N);
  return s + "\n";
}

std::string cuda_conv_setup_function(const std::string& N, GpuPrecision precision) {
  // --gpu-precision: cuDNN's math type, and which of the heuristics' results it takes.
  const bool fp32 = precision == GpuPrecision::Fp32;
  const std::string math = fp32 ? "CUDNN_FMA_MATH" : precision == GpuPrecision::Tf32 ? "CUDNN_TENSOR_OP_MATH" : "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
  const std::string what = fp32 ? "FMA math (float32, no TF32)"
                                : precision == GpuPrecision::Tf32 ? "tensor-op math (TF32 operands, --gpu-precision tf32)"
                                                      : "tensor-op math allowing conversion to half (--gpu-precision fp16)";
  const std::string accept = fp32 ? "(perf[k].mathType == CUDNN_FMA_MATH || perf[k].mathType == CUDNN_DEFAULT_MATH)"
                             : precision == GpuPrecision::Tf32 ? "perf[k].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION"
                                                   : "1";
  return fmt::format(
      "/* cuDNN: the descriptors of one Conv node (nd = 4 or 5 dimensions: N, C, spatial...), {3},\n"
      " * the algorithm cuDNN's heuristics rank first among those that work with it, the descriptor set to that result's math\n"
      " * type (else IMPLICIT_GEMM, which needs no workspace); *workspace grows to the bytes that algorithm needs. */\n"
      "static int {0}_conv_setup(const char* fn, cudnnHandle_t h, {0}_conv* d, const char* node, int nd, const int* x, const int* w,\n"
      "{1:{2}}const int* y, const int* pad, const int* stride, const int* dilation, int groups, size_t* workspace) {{\n"
      "  {0}_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d->x), fn, \"cudnnCreateTensorDescriptor\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d->y), fn, \"cudnnCreateTensorDescriptor\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d->w), fn, \"cudnnCreateFilterDescriptor\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d->conv), fn, \"cudnnCreateConvolutionDescriptor\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(d->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, nd, x), fn, \"cudnnSetTensorNdDescriptorEx\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnSetTensorNdDescriptorEx(d->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, nd, y), fn, \"cudnnSetTensorNdDescriptorEx\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnSetFilterNdDescriptor(d->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, nd, w), fn, \"cudnnSetFilterNdDescriptor\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(d->conv, nd - 2, pad, stride, dilation, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),\n"
      "                  fn, \"cudnnSetConvolutionNdDescriptor\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d->conv, groups), fn, \"cudnnSetConvolutionGroupCount\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnSetConvolutionMathType(d->conv, {4}), fn, \"cudnnSetConvolutionMathType\", node);\n"
      "  int out[5] = {{0, 0, 0, 0, 0}};\n"
      "  {0}_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(d->conv, d->x, d->w, nd, out), fn, \"cudnnGetConvolutionNdForwardOutputDim\", node);\n"
      "  for (int k = 0; k < nd; ++k)\n"
      "    if (out[k] != y[k])\n"
      "      return onnxc_fail(ONNXC_ERR_DEVICE, \"%s: cuDNN's output shape for node '%s' differs from the model's in dimension %d (%d, not %d)\",\n"
      "                        fn, node, k, out[k], y[k]);\n"
      "  cudnnConvolutionFwdAlgoPerf_t perf[8];\n"
      "  int found = 0;\n"
      "  {0}_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d->x, d->w, d->conv, d->y, 8, &found, perf), fn,\n"
      "                  \"cudnnGetConvolutionForwardAlgorithm_v7\", node);\n"
      "  d->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;\n"
      "  size_t bytes = 0;\n"
      "  for (int k = 0; k < found; ++k) /* the first result of an accepted math type whose workspace cuDNN can size */\n"
      "    if (perf[k].status == CUDNN_STATUS_SUCCESS && {5} &&\n"
      "        cudnnSetConvolutionMathType(d->conv, perf[k].mathType) == CUDNN_STATUS_SUCCESS &&\n"
      "        cudnnGetConvolutionForwardWorkspaceSize(h, d->x, d->w, d->conv, d->y, perf[k].algo, &bytes) == CUDNN_STATUS_SUCCESS) {{\n"
      "      d->algo = perf[k].algo;\n      break;\n    }}\n"
      "  if (d->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM)\n"
      "    {0}_CUDNN_CHECK(cudnnSetConvolutionMathType(d->conv, {4}), fn, \"cudnnSetConvolutionMathType\", node);\n"
      "  {0}_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, d->x, d->w, d->conv, d->y, d->algo, &bytes), fn,\n"
      "                  \"cudnnGetConvolutionForwardWorkspaceSize\", node);\n"
      "  if (bytes > *workspace) *workspace = bytes;\n"
      "  return ONNXC_OK;\n}}\n\n",
      N, "", N.size() + 23, what, math, accept);
}

const char* cuda_cublas_math(GpuPrecision precision) {
  return precision == GpuPrecision::Fp32 ? "CUBLAS_DEFAULT_MATH" : precision == GpuPrecision::Tf32 ? "CUBLAS_TF32_TENSOR_OP_MATH" : "CUBLAS_TENSOR_OP_MATH";
}

}  // namespace onnxc
