// ir/ops/gather_scatter.h — what the index-driven data ops publish to backends
// (ir/ops/gather_scatter.cc): GatherElements, ScatterElements (and the old Scatter),
// GatherND, ScatterND.
//
// Index convention shared by the reference and the C backend: a negative index is wrapped
// once (+dim), then CLAMPED to [0, dim-1]. Constant indices out of range are an invalid
// model at compile time; runtime ones read/write the nearest valid element instead of
// memory outside the tensor (ONNX leaves them undefined), as Gather does.
#pragma once
#include "ir/op.h"

namespace onnxc {

// ScatterElements/ScatterND `reduction` (none: 11; add, mul: 16; max, min: 18). How an
// update u combines with the element e it lands on: none e = u; add e + u; mul e * u;
// max/min by compare-select. Integers wrap modulo 2^N; bool add/max is OR, mul/min AND.
enum class ScatterReduction { None, Add, Mul, Max, Min };

// GatherElements / ScatterElements / Scatter: data `data`, indices (and updates) `idx` of
// the same rank; `axis` normalised.
struct ElementsGeom {
  int64_t axis = 0;
  Shape data, idx;
  ScatterReduction red = ScatterReduction::None;
};
const ElementsGeom& elements_geom(const Node& n);

// GatherND / ScatterND: data viewed as [batch, dims[0..m), slice]; indices as
// [batch, tuples, m]; the output (GatherND) or updates (ScatterND) as
// [batch, tuples, slice]. `dims` are the indexed dims, `strides` their element strides in
// data, `batch_stride` = the elements of data per batch (batch_dims, GatherND only).
struct NDGeom {
  int64_t batch = 1, tuples = 1, m = 0, slice = 1, batch_stride = 0;
  Shape dims, strides;
  ScatterReduction red = ScatterReduction::None;
};
const NDGeom& nd_geom(const Node& n);

}  // namespace onnxc
