// ir/ops/einsum.h — what Einsum publishes to backends (ir/ops/einsum.cc): the equation
// resolved to labels. Label l has size dims[l]; output label k is out[k]; the other
// labels (summed) are `summed`. For input i, label l advances its element offset by
// in_stride[i][l] (0: the input does not have it or broadcasts it; a label repeated in
// one input, a diagonal, adds the strides of its dims). out_stride[l] likewise for the
// output (C order over `out`).
#pragma once
#include <vector>

#include "ir/op.h"

namespace onnxc {

struct EinsumGeom {
  Shape dims;
  std::vector<size_t> out, summed;
  std::vector<Shape> in_stride;
  Shape out_stride;
  std::string equation;  // as written, for comments and messages
};
const EinsumGeom& einsum_geom(const Node& n);

}  // namespace onnxc
