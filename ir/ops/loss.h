// ir/ops/loss.h — what NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss publish to
// backends (ir/ops/loss.cc).
//
// The scores (input 0) are viewed as [N, C, D], D the product of d1..dk (1 for [N, C]); the
// labels (input 1) as [N, D], position q = n * D + d. Per position, with t = labels[q]:
//   t == ignore_index (when set)  loss 0, weight 0
//   t outside [0, C)              loss NaN, weight NaN (a bad label poisons the result;
//                                 nothing outside the tensors is read)
//   otherwise                     w = weight[t] (1 without the weight input),
//                                 loss = -v * w with v = X[n, t, d] (NLL) or the
//                                 log-softmax over C of X[n, :, d] at t (SCE)
// Reduction none: the losses, shaped as the labels; sum: their sum; mean: their sum divided
// by the sum of the weights (the count of positions not ignored without weights), in double.
// SCE's optional output 1 is the log-softmax of X along C, shaped as X.
#pragma once
#include "ir/op.h"

namespace onnxc {

struct LossGeom {
  enum class Reduction { None, Sum, Mean };
  bool softmax = false;  // SoftmaxCrossEntropyLoss
  Reduction reduction = Reduction::Mean;
  bool has_ignore = false;
  int64_t ignore_index = 0;
  int64_t N = 0, C = 0, D = 1;
  bool has_weight = false;
  bool log_prob = false;  // SCE output 1 present
};
const LossGeom& loss_geom(const Node& n);

}  // namespace onnxc
