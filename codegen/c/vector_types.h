// codegen/c/vector_types.h — GCC/Clang vector-extension types for the register-tiled
// kernels of the generated C (codegen/c/kernels/conv_nchwc.cc).
//
// gcc keeps a kernel's accumulators in registers when they are vector-extension locals, not
// when they are `float acc[..]` arrays under `omp simd` (../shared/design.md). A kernel names
// the types below in the C it emits; the module writer (codegen/c/module.cc)
// passes the text of all node functions to vector_type_definitions(), which returns the
// definitions of the widths named there for the module's prelude. Per width N (floats, a
// power of two):
//   onnxc_vfN          N floats, naturally aligned: accumulators and other locals
//   onnxc_vfNu         the same at any float-aligned address, aliasing float: loads and
//                      stores `*(const onnxc_vfNu*)p` (what <immintrin.h> calls __m512_u)
//   onnxc_viN          N ints: what comparing two onnxc_vfN gives (a lane of all ones where
//                      true), for selects `(vf)((c & (vi)a) | (~c & (vi)b))`
// A multiply-add is written as plain vector arithmetic, `a += x * w` (x a float or a vector: a
// scalar operand is broadcast), no intrinsics. Whether it becomes one fused instruction is
// the C compiler's choice: clang contracts within an expression by default, gcc in ISO C
// mode (-std=c11) does not, so the targets' flags (codegen/target.cc) carry
// -ffp-contract=fast; without it the results are the same up to rounding, only slower.
// Vector-typed values never cross a function boundary (no -Wpsabi notes when the C is
// built without the matching -march).
#pragma once
#include <cstdint>
#include <string>

namespace onnxc {

// "onnxc_vf<N>": the type name the kernels write for N-float vectors.
std::string vector_type(int64_t n);
// "onnxc_vi<N>": N 32-bit ints, the type of a comparison of two onnxc_vf<N> (lanes of all
// ones or zeros), for selects by bitwise and/or; defined with onnxc_vf<N>.
std::string vector_int_type(int64_t n);
// The definitions of the widths whose onnxc_vfN names occur in `code`; "" when none does.
std::string vector_type_definitions(const std::string& code);
// <immintrin.h> behind `#if defined(__AVX2__)` (or AVX-VNNI, AVX-512) when `code` calls an x86
// intrinsic (_mm256_..., _mm512_...:
// the integer products of codegen/c/kernels/quantize.cc, which keep a plain-C #else); "" when
// it does not.
std::string intrinsic_includes(const std::string& code);

}  // namespace onnxc
