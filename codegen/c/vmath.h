// codegen/c/vmath.h — the inline math of the generated C: exp, log, tanh, erf and the logistic
// sigmoid as branch-free `static inline` C functions (onnxc_expf, onnxc_logf, onnxc_tanhf,
// onnxc_erff, onnxc_sigmoidf) that gcc and clang vectorize inside `omp simd` loops, where a
// call to libm's expf stays a scalar call per element.
//
// A kernel uses a helper by calling it by name in the C it emits (element expressions of
// fused loops included); the module writer (codegen/c/module.cc) passes the text of all node
// functions to vmath_definitions(), which returns the definitions of the helpers named there
// and of the helpers those call, in a fixed order, for the module's prelude. Modules that
// call none get none. The definitions need <math.h> (NAN, INFINITY), <stdint.h> and nothing
// else; they are C11 and free of -Wall -Wextra warnings.
//
// Each helper's comment (codegen/c/vmath.cc) states its method and its measured error over
// all 2^32 float inputs against double-precision libm (tests/codegen/test_vmath.cc checks
// the bounds; tools/vmath_fit.py derives the polynomial coefficients).
#pragma once
#include <string>
#include <vector>

namespace onnxc {

// The C definitions of the helpers whose names occur as whole identifiers in `code`, and of
// the helpers they call, in emission order; "" when `code` names none.
std::string vmath_definitions(const std::string& code);

// Every helper's name, in emission order (the bit-cast helpers first).
std::vector<std::string> vmath_helper_names();

}  // namespace onnxc
