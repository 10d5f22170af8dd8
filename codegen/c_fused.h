// codegen/c_fused.h — C for fused groups (passes/fuse.cc): the epilogue loop and the
// single loop of an all-elementwise group.
//
// A group whose anchor has a c_expr (an elementwise/broadcast op) becomes one loop over the
// output computing the anchor and every epilogue step per element in registers. Any other
// anchor (Conv, Gemm, MatMul, pools...) writes its output first; then one loop applies the
// epilogue to it in place. Every internal value of the group is a local of the loop body
// (t0 = the anchor's output, t<k> = step k's), so a step may read any earlier one
// (x * sigmoid(x): t1 = sigmoid(t0); t2 = t0 * t1). Extra inputs are read through their
// broadcast views, so the loop works for plain and NCHWc outputs alike. Known gap: the epilogue of a conv is a second
// sweep over its output instead of running on the accumulators.
#pragma once
#include "codegen/c_emit.h"

namespace onnxc {

// True when n's anchor op can be written as an expression (emit_group_loop does it all).
bool group_is_one_loop(const Node& n);
// Emits the group loop (see above). Call after the anchor's emit() unless group_is_one_loop.
void emit_group_loop(CEmit& e);

}  // namespace onnxc
