// ir/ops/stat_norm.h — what the normalisations by statistics over a set of axes publish to
// backends (ir/ops/stat_norm.cc): InstanceNormalization, GroupNormalization,
// MeanVarianceNormalization, LpNormalization.
//
// X (same elements, C order) is viewed with shape `dims`; the statistics of each position
// of the kept dims are taken over the `reduced` dims:
//   MeanVar  y = (x - mean) / sqrt(var + eps) * scale[c] + bias[c]   (Instance, Group)
//   MVN      y = (x - mean) / (sqrt(var) + eps)                       (eps = 1e-9 as float)
//   L1, L2   y = x / sum|x|,  y = x / sqrt(sum x²); 0 where the norm is 0 (LpNormalization)
// with var = mean((x - mean)²), all in double. c, the index of scale and bias, is the flat
// index over the view dims [scale_lo, scale_hi) (an empty range: no scale and bias).
#pragma once
#include <vector>

#include "ir/op.h"

namespace onnxc {

struct StatNormGeom {
  enum class Kind { MeanVar, MVN, L1, L2 };
  Kind kind = Kind::MeanVar;
  Shape dims;
  std::vector<bool> reduced;
  size_t scale_lo = 0, scale_hi = 0;
  double eps = 1e-5;
};
const StatNormGeom& stat_norm_geom(const Node& n);

}  // namespace onnxc
