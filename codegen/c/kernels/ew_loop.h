// codegen/c/kernels/ew_loop.h — the broadcasting loop nest of the elementwise kernels of
// compare.cc, math.cc and activation.cc, with an explicit choice of the `omp simd` hint.
//
// Same loops as emit_broadcast (codegen/c/loops.h): one flat loop when every input has the
// output's element count, otherwise one loop per merged output dimension; the outer loop
// goes parallel when the target says so. The caller says whether the innermost loop gets
// `omp simd`: a body calling a libm function without a vector form (sinf, erff...) must
// not (clang reports "loop not vectorized", an error under -Werror).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "codegen/c/emit.h"

namespace onnxc {

void emit_ew_loop(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                  const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt, bool simd);

// Whether a float32 kernel with output 0 of rank 3..5 may run on NCHWc activations: the
// elementwise kernels index every input through its NCHWc view (CEmit::in_view).
bool ew_nchwc_ok(const Node& n, int64_t b);

}  // namespace onnxc
