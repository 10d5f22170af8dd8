// ir/ops/move_common.h — helpers shared by the data-movement ops (Flatten, Reshape,
// Transpose, Concat, Split, Slice, Squeeze/Unsqueeze, Gather).
//
// These ops never look at element values, so everything here works on bytes and on any
// dtype. The reference side offers index helpers (unravel/ravel) and a byte-wise element
// copy; the C side offers a whole-tensor memcpy and a strided copy between two strided
// views of the same logical shape, which merges dimensions, turns contiguous innermost
// runs into memcpy and otherwise writes a plain loop nest with int64_t counters.
#pragma once
#include <string>
#include <vector>

#include "codegen/c_emit.h"
#include "ir/op.h"

namespace onnxc {

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

// ---- C emission helpers (emit) ----

// A strided view of a buffer: element (i_0, ..., i_{r-1}) of the logical shape lives at
// element offset `offset + sum_d i_d * stride[d]` (strides in elements, may be negative).
struct StridedView {
  int64_t offset = 0;
  Shape stride;
};

// Writes `memcpy(dst, src, numel * sizeof(T))` for a whole tensor (nothing when empty).
void emit_copy_all(CEmit& e, const std::string& dst, const std::string& src, int64_t numel, DType t);
// Copies every element of the logical shape `dims` from view `sv` of `src` to view `dv`
// of `dst`. Size-1 dimensions are dropped, adjacent dimensions that are contiguous in both
// views are merged, a contiguous innermost dimension becomes one memcpy per run; the
// outermost loop is OpenMP-parallel when the copy is large.
void emit_strided_copy(CEmit& e, const std::string& dst, const StridedView& dv, const std::string& src,
                       const StridedView& sv, const Shape& dims, DType t);

}  // namespace onnxc
