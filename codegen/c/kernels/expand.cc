// codegen/c/kernels/expand.cc — C for Expand, Tile and Range (ir/ops/expand.cc), any dtype,
// plain layout. Expand and Tile are one strided copy each (emit_strided_copy, loops.h):
// Expand reads the input with stride 0 on broadcast dims; Tile views the output as
// [repeats_0, dim_0, repeats_1, dim_1, ...], reading the input with stride 0 on the repeat
// dims. Range (only reached when its output is too large to fold) fills start + i * delta.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/elementwise.h"
#include "ir/ops/move_common.h"

namespace onnxc {
namespace {

void emit_expand(CEmit& e) {
  const Shape& out = e.out_shape(0);
  StridedView dv{0, strides_of(out)}, sv{0, broadcast_strides(out, e.in_shape(0))};
  emit_strided_copy(e, e.out(0), dv, e.in(0), sv, out, e.out_dtype(0));
}

void emit_tile(CEmit& e) {
  const Shape& xs = e.in_shape(0);
  const std::vector<int64_t>& rep = tile_repeats(e.node);
  Shape ost = strides_of(e.out_shape(0)), ist = strides_of(xs), dims;
  StridedView dv, sv;
  for (size_t d = 0; d < xs.size(); ++d) {
    dims.push_back(rep[d]);
    dv.stride.push_back(ost[d] * xs[d]);
    sv.stride.push_back(0);
    dims.push_back(xs[d]);
    dv.stride.push_back(ost[d]);
    sv.stride.push_back(ist[d]);
  }
  emit_strided_copy(e, e.out(0), dv, e.in(0), sv, dims, e.out_dtype(0));
}

void emit_range(CEmit& e) {
  DType t = e.out_dtype(0);
  const Tensor& s = *e.node.in(0)->constant;
  const Tensor& d = *e.node.in(2)->constant;
  int64_t n = numel(e.out_shape(0));
  simd(e, n);
  if (dtype_is_float(t))
    e("for (int64_t i = 0; i < {}; ++i) {}[i] = {} + ({})i * {};", n, e.out(0), c_elem_literal(s, 0), e.out_ctype(0), c_elem_literal(d, 0));
  else  // in uint64_t: every element fits the dtype, the intermediate products wrap harmlessly
    e("for (int64_t i = 0; i < {}; ++i) {}[i] = ({})((uint64_t){} + (uint64_t)i * (uint64_t){});", n, e.out(0), e.out_ctype(0),
      c_elem_literal(s, 0), c_elem_literal(d, 0));
}

}  // namespace

void register_expand(CKernelTable& t) {
  t["Expand"] = {emit_expand, nullptr, nullptr, nullptr};
  t["Tile"] = {emit_tile, nullptr, nullptr, nullptr};
  t["Range"] = {emit_range, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
