// ir/ops/index_ops.h — what Trilu, EyeLike, CumSum, OneHot, DepthToSpace/SpaceToDepth and TopK
// publish to backends (ir/ops/trilu.cc, cumsum.cc, onehot.cc, depth_to_space.cc, topk.cc):
// the sizes and parsed attributes shape inference resolved.
#pragma once
#include "ir/op.h"

namespace onnxc {

// Trilu: X as [batch, rows, cols]; row i keeps columns j with j - i >= k (upper) or
// j - i <= k (lower), the others are 0.
struct TriluGeom {
  int64_t batch = 1, rows = 1, cols = 1, k = 0;
  bool upper = true;
};
const TriluGeom& trilu_geom(const Node& n);
// EyeLike (ir/ops/trilu.cc): rows × cols, 1 where j - i == k, else 0 (batch 1, `upper` unused).
const TriluGeom& eyelike_geom(const Node& n);

// CumSum: X as [outer, len, inner] around the axis.
struct CumSumGeom {
  int64_t outer = 1, len = 1, inner = 1;
  bool exclusive = false, reverse = false;
  bool prod = false;  // CumProd
};
const CumSumGeom& cumsum_geom(const Node& n);

// OneHot: the output as [outer, depth, inner]; indices as [outer, inner].
struct OneHotGeom {
  int64_t outer = 1, depth = 1, inner = 1;
};
const OneHotGeom& onehot_geom(const Node& n);

// DepthToSpace / SpaceToDepth: a pure permutation. The output, viewed with shape `dims`
// (6-D, C order), reads the input at element offset sum_d i_d * src_stride[d].
struct SpaceDepthGeom {
  Shape dims, src_stride;
};
const SpaceDepthGeom& space_depth_geom(const Node& n);

// TopK: X as [outer, len, inner] around the axis; the k best (largest or smallest) along
// it, best first, ties by the lower index.
struct TopKGeom {
  int64_t outer = 1, len = 1, inner = 1, k = 0;
  bool largest = true;
};
const TopKGeom& topk_geom(const Node& n);

}  // namespace onnxc
