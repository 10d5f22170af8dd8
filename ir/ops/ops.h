// ir/ops/ops.h — registration of the op files. Each file under ir/ops/ defines one
// register_<file>(OpTable&) that adds its op type(s); registry.cc calls them all.
// Adding an op: write ir/ops/<op>.cc, add one line here and one in registry.cc.
#pragma once
#include <map>
#include <string>

#include "ir/op.h"

namespace onnxc {

using OpTable = std::map<std::string, OpFactory>;

void register_unary(OpTable&);        // Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Elu, Erf, Exp, Log, Sqrt, Neg, Abs, Reciprocal
void register_binary(OpTable&);       // Add, Sub, Mul, Div, Pow, PRelu
void register_variadic(OpTable&);     // Sum, Mean, Max, Min
void register_clip(OpTable&);         // Clip
void register_conv(OpTable&);         // Conv
void register_conv_transpose(OpTable&);  // ConvTranspose
void register_batchnorm(OpTable&);    // BatchNormalization
void register_lrn(OpTable&);          // LRN
void register_pool(OpTable&);         // MaxPool, AveragePool
void register_global_pool(OpTable&);  // GlobalAveragePool, GlobalMaxPool
void register_gemm(OpTable&);         // Gemm
void register_matmul(OpTable&);       // MatMul
void register_reduce(OpTable&);       // ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare
void register_softmax(OpTable&);      // Softmax, LogSoftmax
void register_flatten(OpTable&);      // Flatten
void register_reshape(OpTable&);      // Reshape
void register_layout_transform(OpTable&);  // onnxc.layout_transform (internal, inserted by passes/layout.cc)
void register_transpose(OpTable&);    // Transpose
void register_concat(OpTable&);       // Concat
void register_split(OpTable&);        // Split
void register_slice(OpTable&);        // Slice
void register_squeeze(OpTable&);      // Squeeze, Unsqueeze
void register_gather(OpTable&);       // Gather
void register_shape(OpTable&);        // Shape, Size
void register_cast(OpTable&);         // Cast, CastLike
void register_pad(OpTable&);          // Pad
void register_resize(OpTable&);       // Resize, Upsample
void register_identity(OpTable&);     // Identity, Dropout, BitCast
void register_constant(OpTable&);     // Constant, ConstantOfShape
void register_compare(OpTable&);      // Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor, Not, IsNaN, IsInf, Where
void register_math(OpTable&);         // Floor, Ceil, Round, Sign, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Mod, BitShift, Bitwise*
void register_argmax(OpTable&);       // ArgMax, ArgMin, Hardmax
void register_layer_norm(OpTable&);   // LayerNormalization, RMSNormalization
void register_attention(OpTable&);    // Attention
void register_expand(OpTable&);       // Expand, Tile, Range
void register_activation(OpTable&);   // Softplus, Softsign, Selu, Celu, Mish, Gelu, ThresholdedRelu, Shrink, Swish
void register_gather_scatter(OpTable&);  // GatherElements, ScatterElements, Scatter, GatherND, ScatterND
void register_trilu(OpTable&);        // Trilu, EyeLike
void register_cumsum(OpTable&);       // CumSum, CumProd
void register_onehot(OpTable&);       // OneHot
void register_depth_to_space(OpTable&);  // DepthToSpace, SpaceToDepth
void register_topk(OpTable&);         // TopK
void register_einsum(OpTable&);       // Einsum
void register_signal(OpTable&);       // DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix
void register_stat_norm(OpTable&);    // InstanceNormalization, GroupNormalization, MeanVarianceNormalization, LpNormalization
void register_loss(OpTable&);         // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_grid_sample(OpTable&);  // GridSample
void register_roi_align(OpTable&);    // RoiAlign
void register_max_unpool(OpTable&);   // MaxUnpool
void register_det(OpTable&);          // Det
void register_quantize(OpTable&);     // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
void register_rnn(OpTable&);          // RNN, GRU, LSTM, ReverseSequence

}  // namespace onnxc
