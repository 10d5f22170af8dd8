// ir/ops/move_common.h — helpers shared by the data-movement ops (Flatten, Reshape,
// Transpose, Concat, Split, Slice, Squeeze/Unsqueeze, Gather).
//
// These ops never look at element values, so everything here works on bytes and on any
// dtype. The reference side offers index helpers (unravel/ravel) and a byte-wise element
// copy; the backends write their own copy loops.
#pragma once
#include <string>
#include <vector>

#include "ir/op.h"

namespace onnxc {

// ---- what the ops publish to backends (resolved by shape inference) ----

// Transpose: output dim d is input dim perm[d].
const std::vector<int64_t>& transpose_perm(const Node& n);
// Concat: the axis, normalised.
int64_t concat_axis(const Node& n);
// Split: the axis, normalised, and the size of each piece.
struct SplitGeom {
  int64_t axis = 0;
  std::vector<int64_t> sizes;
};
const SplitGeom& split_geom(const Node& n);
// Slice: per input dimension, the first element and the step.
struct SliceGeom {
  std::vector<int64_t> start, step;
};
const SliceGeom& slice_geom(const Node& n);
// Gather: the axis, normalised; constant indices (normalised to [0, dim)) are `baked` into
// the code when there are few enough of them (ir/ops/gather.cc), else read at run time.
struct GatherGeom {
  int64_t axis = 0;
  bool baked = false;
  std::vector<int64_t> idx;
};
const GatherGeom& gather_geom(const Node& n);
// Tile: the repeat count of each input dimension (ir/ops/expand.cc).
const std::vector<int64_t>& tile_repeats(const Node& n);

// ---- compile-time helpers (infer) ----

// Normalises `axis` against `rank` (negative counts from the end); invalid-model error
// naming `what` and the range otherwise.
int64_t move_axis(const Node& n, int64_t axis, int64_t rank, const char* what);
// The values of a static integer input (int32/int64, rank 0 or 1), e.g. Reshape's shape.
std::vector<int64_t> static_ints(const Node& n, size_t i, const char* what);
// Checks that input i is present; its dtype may be anything.
const Value& need_input(const Node& n, size_t i, const char* what);

// ---- reference helpers (eval) ----

// Multi-index of flat element i of shape s (C order) and back.
Shape unravel(int64_t i, const Shape& s);
int64_t ravel(const Shape& idx, const Shape& s);
// dst element di = src element si, byte for byte (dtypes must match).
void copy_elem(Tensor& dst, int64_t di, const Tensor& src, int64_t si);
// dst = src reinterpreted with dst's shape (same dtype and element count).
void copy_all(Tensor& dst, const Tensor& src);

}  // namespace onnxc
