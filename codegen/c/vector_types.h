// codegen/c/vector_types.h — GCC/Clang vector-extension types for the register-tiled
// kernels of the generated C (codegen/c/kernels/conv_nchwc.cc).
//
// gcc keeps a kernel's accumulators in registers when they are vector-extension locals, not
// when they are `float acc[..]` arrays under `omp simd` (../shared/design.md). A kernel names
// the types and macros below in the C it emits; the module writer (codegen/c/module.cc)
// passes the text of all node functions to vector_type_definitions(), which returns the
// definitions of the widths named there for the module's prelude. Per width N (floats, a
// power of two):
//   onnxc_vfN          N floats, naturally aligned: accumulators and other locals
//   onnxc_vfNu         the same at any float-aligned address, aliasing float: loads and
//                      stores `*(const onnxc_vfNu*)p` (what <immintrin.h> calls __m512_u)
//   ONNXC_VFMAN(a, b, c)   a * b + c on vectors
//   ONNXC_VFMASN(s, b, c)  s * b + c with s a float (broadcast)
// The multiply-adds are fused where the target has FMA: gcc does not contract a * b + c in
// ISO C mode, so they go through the intrinsics of x86 (FMA: N = 4, 8; AVX-512F: N = 16)
// and NEON (N = 4); other widths and machines get the plain expression (clang contracts it,
// gcc leaves a multiply and an add). Vector-typed values never cross a function boundary
// (no -Wpsabi notes when the C is built without the matching -march).
#pragma once
#include <cstdint>
#include <string>

namespace onnxc {

// "onnxc_vf<N>": the type name the kernels write for N-float vectors.
std::string vector_type(int64_t n);
// The definitions of the widths whose onnxc_vfN names occur in `code`; "" when none does.
std::string vector_type_definitions(const std::string& code);

}  // namespace onnxc
