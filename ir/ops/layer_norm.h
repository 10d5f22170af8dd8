// ir/ops/layer_norm.h — what LayerNormalization and RMSNormalization publish to backends: X as [rows, cols]
// (cols = prod of the dims from `axis` on), epsilon, and how Scale and B are indexed
// within a row (per column, or one value for all).
#pragma once
#include "ir/op.h"

namespace onnxc {

struct LayerNormGeom {
  int64_t rows = 1, cols = 1;
  double epsilon = 1e-5;
  bool scale_per_col = true, bias_per_col = true;  // else a single element
  bool rms = false;                                 // RMSNormalization: no mean, no B
};
const LayerNormGeom& layer_norm_geom(const Node& n);

}  // namespace onnxc
