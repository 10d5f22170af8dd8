// codegen/c/kernels/constant.cc — ConstantOfShape in C (when its output is not folded into
// the weights): a fill loop. Constant and Shape are always folded and have no kernel.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/elementwise.h"

namespace onnxc {
namespace {

void emit_constant_of_shape(CEmit& e) {
  int64_t n = numel(e.out_shape(0));
  if (n == 0) return;
  const std::string fill = fmt::format("{}[i] = {};", e.out(0), c_elem_literal(constant_of_shape_value(e.node), 0));
  if (e.parallel(static_cast<double>(n))) {
    e.open_nest({.loops = {{"i", n}}, .simd = true}, fill);
  } else {
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) {}", n, fill);
  }
}

}  // namespace

void register_constant(CKernelTable& t) { t["ConstantOfShape"] = {emit_constant_of_shape, nullptr, nullptr, nullptr}; }

}  // namespace onnxc
