// codegen/c/kernels/kernels.h — the C backend's kernel table: how the C backend runs each
// op type. One file per kernel family (conv_nchw.cc, pool.cc, resize.cc...) defines
// register_<family>(CKernelTable&), which fills the entries of its op types; registry.cc
// calls them all. Adding an op: its ir/ops/ file, then its kernel here and one line in
// registry.cc.
//
// An entry says:
//   emit   the body of the node's C function (codegen/c/emit.h); the node's values carry
//          their stored layouts. Required.
//   nchwc  whether emit() runs the node with its activations in NCHWc with block b (the
//          layout pass asks through Backend::supports). Absent: plain layout only.
//   expr   for index-aligned elementwise ops (is_index_aligned_elementwise, ir/op.h): the
//          float32 C expression of one output element, given C expressions of the inputs'
//          elements (present, non-static inputs; "" for the others; each may be evaluated
//          more than once). Fused loops (codegen/c/fused.cc) use it.
//   stmts  instead of expr, where one expression would repeat its arguments too often
//          (Max, Min of many inputs): statements that declare `float <dst>` and leave the
//          element's value in it.
// Every op with Op::index_aligned() has expr or stmts (tests/codegen/test_kernels.cc
// checks it), so that the fusion pass may take any index-aligned node.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "codegen/c/emit.h"

namespace onnxc {

struct CKernel {
  void (*emit)(CEmit& e) = nullptr;
  bool (*nchwc)(const Node& n, int64_t b) = nullptr;
  std::string (*expr)(const Node& n, const std::vector<std::string>& args) = nullptr;
  std::string (*stmts)(const Node& n, const std::vector<std::string>& args, const std::string& dst) = nullptr;
  // How the kernel wants constant input `input` stored (Backend::weight_layout); nullptr:
  // plain for every input.
  Layout (*weight_layout)(const Node& n, size_t input, const Target& t) = nullptr;
  // Whether emit applies the fused step `step` itself (Backend::takes_epilogue); nullptr: never.
  bool (*takes_epilogue)(const Node& n, const Node& step, const Target& t) = nullptr;
};

using CKernelTable = std::map<std::string, CKernel>;

// The kernel of an op type; nullptr when the C backend has none.
const CKernel* find_c_kernel(const std::string& op_type);

// Nodes that copy their inputs into contiguous runs of the output: Concat (one image: N = 1
// in NCHWc, or nothing but ones before the axis in a plain layout) and the plain-layout
// Reshape, Flatten, Squeeze, Unsqueeze (the data input is the output's bytes): each input's
// byte offset in the output, -1 for an input copied otherwise, -2 for one that is not data
// (Reshape's shape); empty for other nodes. Memory planning stores such inputs there in the first place
// (Backend::stored_in_output), and the kernel skips the copy of an input already at its place.
std::vector<int64_t> inputs_in_output(const Node& n);

void register_elementwise(CKernelTable&);     // unary, binary, variadic, Clip, Cast, CastLike, Identity/Dropout
void register_conv(CKernelTable&);            // Conv (conv.cc picks among conv_*.cc)
void register_conv_transpose(CKernelTable&);  // ConvTranspose
void register_norm(CKernelTable&);            // BatchNormalization, LRN
void register_pool(CKernelTable&);            // MaxPool, AveragePool
void register_global_pool(CKernelTable&);     // GlobalAveragePool, GlobalMaxPool
void register_gemm(CKernelTable&);            // Gemm, MatMul
void register_reduce(CKernelTable&);          // ReduceMean, ReduceSum, ReduceMax
void register_softmax(CKernelTable&);         // Softmax, LogSoftmax
void register_movement(CKernelTable&);        // Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Gather, DepthToSpace, SpaceToDepth
void register_layout_transform(CKernelTable&);  // onnxc.layout_transform
void register_pad(CKernelTable&);             // Pad
void register_resize(CKernelTable&);          // Resize, Upsample
void register_constant(CKernelTable&);        // ConstantOfShape
void register_compare(CKernelTable&);         // comparisons, logic, IsNaN, IsInf, Where
void register_math(CKernelTable&);            // Floor, Ceil, Round, Sign, trigonometric and hyperbolic functions, Mod, BitShift, Bitwise*
void register_reduce_more(CKernelTable&);     // ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare
void register_argmax(CKernelTable&);          // ArgMax, ArgMin, Hardmax
void register_layer_norm(CKernelTable&);      // LayerNormalization, RMSNormalization
void register_attention(CKernelTable&);       // Attention
void register_expand(CKernelTable&);          // Expand, Tile, Range
void register_activation(CKernelTable&);      // Softplus, Softsign, Selu, Celu, Mish, Gelu, ThresholdedRelu, Shrink
void register_gather_scatter(CKernelTable&);  // GatherElements, ScatterElements, Scatter, GatherND, ScatterND
void register_trilu(CKernelTable&);           // Trilu, EyeLike
void register_cumsum(CKernelTable&);          // CumSum
void register_onehot(CKernelTable&);          // OneHot
void register_topk(CKernelTable&);            // TopK
void register_einsum(CKernelTable&);          // Einsum
void register_signal(CKernelTable&);          // DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix
void register_stat_norm(CKernelTable&);       // InstanceNormalization, GroupNormalization, MeanVarianceNormalization, LpNormalization
void register_loss(CKernelTable&);            // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_grid_sample(CKernelTable&);     // GridSample
void register_roi_align(CKernelTable&);       // RoiAlign
void register_max_unpool(CKernelTable&);      // MaxUnpool
void register_det(CKernelTable&);             // Det
void register_quantize(CKernelTable&);        // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
void register_rnn(CKernelTable&);             // RNN, GRU, LSTM, ReverseSequence

}  // namespace onnxc
