// ir/cost.h — what a node costs, whatever runs it: floating-point operations (a multiply-add
// counts 2) and the bytes of its inputs and outputs in their stored layouts (what it must move
// at least). compile-model --profile reports GFLOP/s and GB/s from these; the macro-task
// schedule (passes/schedule.h) weighs tasks with them.
//
// Counting: Conv 2·N·M·C/group per (output position, kernel tap) pair that reads inside the
// input — taps on padding multiply zeros and are not counted — (+ a bias add per output),
// ConvTranspose 2·N·M·inputs·C/group·kernel,
// Gemm/MatMul 2·M·N·K per batch, pools one operation per window tap, global pools and
// reductions one per input element, Softmax 4 per element, Attention 2·(D + Dv) + 4 per
// score (both products and the softmax; every score, masked or not), BatchNormalization 2, LRN
// size + 2, LayerNormalization 8 per input element, Instance/Group/MeanVariance
// normalization 7, LpNormalization 3, Hardmax and CumSum 1, Einsum 2 per point of its
// index space, TopK len·k per row (the kernel's selection), Resize 2 per tap of each output
// (nearest: none), the integer products (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv) as MatMul and Conv plus 3 per output to requantize (QLinear), QuantizeLinear
// 3 per element (divide, round, add), DequantizeLinear 2, DynamicQuantizeLinear 5 (min, max and
// the quantization), elementwise ops one per output element (and per input beyond the
// second), data movement none. A fused group adds one per output element for each step. These are
// the arithmetic an op implies, not what a kernel executes (padding lanes, recomputation).
#pragma once
#include "ir/graph.h"

namespace onnxc {

struct NodeCost {
  double flops = 0;
  double bytes = 0;
};

NodeCost node_cost(const Node& n);

// The work of running n's reference eval (compile-time folding): the operations above,
// except that a convolution's reference loops visit every kernel tap of every output,
// padding included, plus one per input and output element. Constant folding skips a node
// above kMaxFoldWork (it stays code), so that a model cannot make the compiler compute for
// long: a 2-node model folding Conv(W, W) with pads of 1000 took 35 s in the sanitized build.
double eval_work(const Node& n);
constexpr double kMaxFoldWork = double(int64_t{1} << 27);

}  // namespace onnxc
