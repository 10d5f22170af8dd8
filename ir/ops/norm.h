// ir/ops/norm.h — what BatchNormalization and LRN publish to backends: their parsed
// attributes and the sizes shape inference resolved (ir/ops/batchnorm.cc, ir/ops/lrn.cc).
#pragma once
#include "ir/op.h"

namespace onnxc {

// BatchNormalization (inference): Y = (X - mean) / sqrt(var + eps) * scale + B. X is
// [N, C, D1..Dk]; S = D1 * .. * Dk. spatial: the parameters are [C] (else X.shape[1:]).
struct BatchNormAttrs {
  double eps = 1e-5;
  int64_t spatial = 1;
  int64_t C = 0, S = 1;
};
const BatchNormAttrs& batchnorm_attrs(const Node& n);

// LRN across channels; X is [N, C, D1..Dk], S = D1 * .. * Dk. The window of channel c is
// [c - before(), c + after()] clipped to [0, C).
struct LrnAttrs {
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
  int64_t size = 0, C = 0, S = 1;
  int64_t before() const { return (size - 1) / 2; }    // floor((size-1)/2)
  int64_t after() const { return (size - 1) - before(); }  // ceil((size-1)/2)
};
const LrnAttrs& lrn_attrs(const Node& n);

}  // namespace onnxc
