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
// outputs alike. Known gap: the epilogue of a conv is a second sweep over its output
// instead of running on the accumulators.
#pragma once
#include "codegen/c/emit.h"

namespace onnxc {

// Emits the group loop (see above). The backend calls it after the anchor's kernel unless
// the anchor is index-aligned elementwise (then the loop does it all).
void emit_group_loop(CEmit& e);

}  // namespace onnxc
