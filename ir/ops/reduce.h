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

}  // namespace onnxc
