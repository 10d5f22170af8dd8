// codegen/c/fused.h — C for fused groups (passes/fuse.cc): the epilogue loop and the
// single loop of an all-elementwise group.
//
// A group whose anchor is index-aligned elementwise (is_index_aligned_elementwise, ir/op.h)
// becomes one loop over the output computing the anchor and every epilogue step per
// element in registers. Any other anchor (Conv, Gemm, MatMul, pools...) writes its output
// first; then one loop applies the epilogue to it in place. Every internal value of the
// group is a local of the loop body (t0 = the anchor's output, t<k> = step k's), so a step
// may read any earlier one (x * sigmoid(x): t1 = sigmoid(t0); t2 = t0 * t1). Each element
// comes from the op's kernel (CKernel::expr or stmts, codegen/c/kernels/kernels.h). Extra
// inputs are read through their broadcast views, so the loop works for plain and NCHWc
// outputs alike. An anchor's kernel may instead apply the epilogue itself, on each tile of
// its output while the tile is in registers or L1 (the NCHWc conv, codegen/c/kernels/
// conv_nchwc.cc): it builds each element from epilogue_vector() or epilogue_element() and
// sets CEmit::epilogue_done, and the backend then emits no group loop.
#pragma once
#include <string>
#include <vector>

#include "codegen/c/emit.h"

namespace onnxc {

// Emits the group loop (see above). The backend calls it after the anchor's kernel unless
// the kernel set CEmit::epilogue_done; when the anchor is index-aligned elementwise the loop
// does it all.
void emit_group_loop(CEmit& e);

// The statements of the group's epilogue on one element, for anchors that apply it
// themselves: t0 = `src` (the anchor's value of the element), then each step as in the group
// loop, reading extra input k as the C expression extra_elems[k]; the group's value is
// stored to the lvalue `dst`. `src` and the extra expressions must be free of side effects
// (a step may read its argument more than once).
std::string epilogue_element(const CEmit& e, const std::string& src, const std::vector<std::string>& extra_elems,
                             const std::string& dst);

// The same epilogue on V lanes at once, for anchors that apply it to vector-extension
// registers (the NCHWc conv's tiles, before they are stored): v0 = `src` (an onnxc_vfV
// value), extra input k read as extra_vecs[k] (an onnxc_vfV expression, or a float one that
// is broadcast), the result stored to the lvalue `dst`. "" when a step has no vector form
// here: Relu, LeakyRelu, Clip with constant bounds, Add, Sub, Mul and Div on float32 have one,
// each with its scalar form's result on every lane (NaN included); the caller then falls back
// to epilogue_element() lane by lane.
std::string epilogue_vector(const CEmit& e, int64_t V, const std::string& src, const std::vector<std::string>& extra_vecs,
                            const std::string& dst);

// The epilogue's extra inputs, as C element expressions, for an anchor whose output is a
// matrix product's: Y plain, rows every dim of its logical shape but the last, `row` the flat
// row index and `col` the column (C expressions; each extra input read through its broadcast
// view). For epilogue_element.
std::vector<std::string> matrix_epilogue_extras(const CEmit& e, const std::string& row, const std::string& col);

}  // namespace onnxc
