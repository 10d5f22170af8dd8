// ir/ops/reduce.h — what the Reduce ops publish to backends: which input dims are reduced.
#pragma once
#include <vector>

#include "ir/op.h"

namespace onnxc {

struct ReduceGeom {
  bool noop = false;          // no axes with noop_with_empty_axes: an identity
  std::vector<bool> reduced;  // per input dim
};
const ReduceGeom& reduce_geom(const Node& n);

// ArgMax / ArgMin (ir/ops/argmax.cc): the input as [outer, len, inner] around the axis.
struct ArgGeom {
  bool max = true, last = false;  // ArgMax; select_last_index
  int64_t outer = 1, len = 1, inner = 1;
};
const ArgGeom& arg_geom(const Node& n);
// Hardmax (ir/ops/argmax.cc): the same view; `max` set, `last` unset.
const ArgGeom& hardmax_geom(const Node& n);

}  // namespace onnxc
