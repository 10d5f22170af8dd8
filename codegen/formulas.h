// codegen/formulas.h — the float32 formulas of the elementwise ops, one table for every
// backend: the C kernels and the fused loops (codegen/c/kernels/elementwise.cc, CKernel::expr)
// and the CUDA kernels and epilogues (codegen/cuda/kernels/elementwise.cc). A formula is a C
// expression (CUDA C++ reads the same) over the identifier `x` (unary ops) or over operand
// expressions; the math functions it calls are spelled as the dialect has them (MathDialect).
// Clamps and Max/Min are compare-selects with ONNX's NaN behaviour (as ir/ops/ evaluates them),
// never fmaxf/fminf, which drop NaNs and are libm calls.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

// How a dialect spells the float32 math functions: exp, log, tanh, erf and the sigmoid.
enum class MathDialect {
  C,     // the inline helpers of codegen/c/vmath.h (onnxc_expf, onnxc_sigmoidf...): no libm, they vectorize
  Cuda,  // CUDA's float functions (expf, tanhf...), the sigmoid written as 1 / (1 + exp(-x))
};

// min(max(v, 0), 1) as compare-selects; NaN gives 1, as the reference's
// std::max(0, std::min(1, v)).
std::string clamp01(const std::string& v);

// The float32 formula of unary op n over `x`: Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish,
// Tanh, Elu, Erf, Exp, Log, Sqrt, Neg, Abs, Reciprocal (unary_formula_ops). An internal error
// for another op.
std::string unary_formula(const Node& n, MathDialect d);
const std::vector<const char*>& unary_formula_ops();

// The C operator of Add, Sub, Mul and Div ("+", "-", "*", "/").
const char* binary_operator(const std::string& op_type);

// a OP b of a binary op (Add, Sub, Mul, Div, PRelu; each operand parenthesised), or powf(a, b).
std::string binary_formula(const std::string& op_type, const std::string& a, const std::string& b);

// Sum (or Mean) of the operands, each parenthesised.
std::string sum_formula(const Node& n, const std::vector<std::string>& a);

// Max or Min of the operands into `dst`, NaN-propagating: `float dst = a0; dst = ...;`.
std::string max_min_statements(const Node& n, const std::vector<std::string>& a, const std::string& dst);

// Clip of x between the bound expressions lo and hi ("" where absent).
std::string clip_formula(const std::string& x, const std::string& lo, const std::string& hi);

}  // namespace onnxc
