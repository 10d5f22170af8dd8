// ir/ops/softmax.h — what Softmax and LogSoftmax publish to backends: the normalisation as an
// [outer, L, inner] problem (normalise along L; inner = 1 for the opset < 13 form).
#pragma once
#include "ir/op.h"

namespace onnxc {

struct SoftmaxGeom {
  int64_t outer = 1, L = 1, inner = 1;
};
const SoftmaxGeom& softmax_geom(const Node& n);

}  // namespace onnxc
