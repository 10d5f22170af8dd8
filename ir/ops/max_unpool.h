// ir/ops/max_unpool.h — what MaxUnpool publishes to backends (ir/ops/max_unpool.cc).
//
// Y starts as zeros; every element i of X is written at flat index I[i] of a tensor of
// shape `inferred` ([N, C, (in - 1) * stride - pad_begin - pad_end + kernel ...]), whose
// elements sit at the same multi-index of Y (shape `out`: `inferred`, or output_shape,
// which is at least as large in every dim). So with output_shape, Y is the unpooled tensor
// padded with zeros at the end of each spatial dim (as ONNX's reference and node tests do).
// Index convention (as ScatterElements): a negative index is wrapped once (+ numel of
// `inferred`), then CLAMPED to [0, numel - 1]; constant indices out of range are an invalid
// model at compile time. Elements are written in order: the last of equal indices wins.
#pragma once
#include "ir/op.h"

namespace onnxc {

struct MaxUnpoolGeom {
  Shape in, inferred, out;
};
const MaxUnpoolGeom& max_unpool_geom(const Node& n);

}  // namespace onnxc
