// codegen/c/kernels/activation.cc — C for Softplus, Softsign, Selu, Celu, Mish, Gelu,
// ThresholdedRelu, Shrink, Swish and SwiGLU (ir/ops/activation.cc says what they mean). One loop nest over the
// output (ew_loop.h), float32 on NCHWc activations too; the float32 element
// (CKernel::expr) serves the fused loops. activation_expr() is the one place each op's C
// expression lives: float32 calls the inline helpers of codegen/c/vmath.h (exp, tanh, erf)
// and vectorizes, except where libm's log1pf remains (Softplus, Mish).
#include "codegen/c/kernels/ew_loop.h"
#include "codegen/c/kernels/kernels.h"
#include "ir/ops/elementwise.h"

namespace onnxc {
namespace {

// The C expression of the activation over `x` (an identifier or parenthesised expression,
// evaluated several times) in dtype t.
std::string activation_expr(const Node& n, DType t, const std::string& x) {
  const std::string& k = n.op_type;
  const ActivationAttrs& a = activation_attrs(n);
  bool f32 = t == DType::F32;
  std::string f = f32 ? "f" : "";
  auto lit = [&](double v) { return c_literal(t, v); };
  // float32 calls the inline helpers of codegen/c/vmath.h (no libm in the hot loop); float64
  // calls libm. Max and min are compare-selects.
  auto call = [&](const char* fn, const std::string& v) {
    return f32 && std::string(fn) != "log1p" ? fmt::format("onnxc_{}f({})", fn, v) : fmt::format("{}{}({})", fn, f, v);
  };
  auto max0 = [&](const std::string& v) { return fmt::format("({0} > {1} ? {0} : {1})", v, lit(0)); };
  auto softplus = [&](const std::string& v) {
    return fmt::format("({} + {})", max0(v), call("log1p", call("exp", fmt::format("-fabs{}({})", f, v))));
  };
  if (k == "Softplus") return softplus(x);
  if (k == "Softsign") return fmt::format("{0} / ({1} + fabs{2}({0}))", x, lit(1), f);
  if (k == "Selu")
    return fmt::format("{0} > {1} ? {2} * {0} : {2} * ({3} * {4} - {3})", x, lit(0), lit(a.gamma), lit(a.alpha), call("exp", x));
  if (k == "Celu") {
    std::string neg = fmt::format("{} * ({} - {})", lit(a.alpha), call("exp", fmt::format("{} / {}", x, lit(a.alpha))), lit(1));
    return fmt::format("{0} + ({1} < {2} ? {1} : {2})", max0(x), lit(0), neg);
  }
  if (k == "Mish") return fmt::format("{} * {}", x, call("tanh", softplus(x)));
  if (k == "Gelu") {
    if (a.tanh)
      return fmt::format("{} * {} * ({} + {})", lit(0.5), x, lit(1),
                         call("tanh", fmt::format("{0} * ({2} + {1} * {2} * {2} * {2})", lit(0.79788456080286535588), lit(0.044715), x)));
    return fmt::format("{} * {} * ({} + {})", lit(0.5), x, lit(1), call("erf", fmt::format("{} * {}", x, lit(0.70710678118654752440))));
  }
  if (k == "Swish") {
    std::string ax = fmt::format("{} * {}", lit(a.alpha), x);
    if (f32) return fmt::format("{} * onnxc_sigmoidf({})", x, ax);
    return fmt::format("{} / ({} + exp(-({})))", x, lit(1), ax);
  }
  if (k == "ThresholdedRelu") return fmt::format("{0} > {1} ? {0} : {2}", x, lit(a.alpha), lit(0));
  if (k == "Shrink")
    return fmt::format("({0} < {1} ? {0} + {2} : {0} > {3} ? {0} - {2} : {4})", x, lit(-a.alpha), lit(a.gamma), lit(a.alpha), lit(0));
  internal_error(__FILE__, __LINE__, "activation_expr", n.where() + ": no C expression for " + k);
}

// Loops calling libm (float64, or log1pf) do not vectorize; the inline helpers do.
bool activation_vectorizable(const std::string& k, DType t) {
  return k == "Softsign" || k == "ThresholdedRelu" || k == "Shrink" || (t == DType::F32 && k != "Softplus" && k != "Mish");
}

void emit_activation(CEmit& e) {
  DType t = e.in_dtype(0);
  emit_ew_loop(e, e.out_view(0), {e.in_view(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    return fmt::format("{{ const {} x = {}[{}]; {}[{}] = {}; }}", e.in_ctype(0), e.in(0), idx[0], e.out(0), o,
                       activation_expr(e.node, t, "x"));
  }, activation_vectorizable(e.node.op_type, t));
}

std::string activation_element(const Node& n, const std::vector<std::string>& a) {
  return activation_expr(n, DType::F32, "(" + a.at(0) + ")");
}

// SwiGLU(A, B) = Swish_alpha(A) * B: Swish's expression over A (activation_expr reads alpha).
std::string swiglu_expr(const Node& n, DType t, const std::string& a, const std::string& b) {
  const ActivationAttrs& at = activation_attrs(n);
  const std::string ax = fmt::format("{} * {}", c_literal(t, at.alpha), a);
  const std::string swish = t == DType::F32 ? fmt::format("{} * onnxc_sigmoidf({})", a, ax)
                                            : fmt::format("{} / ({} + exp(-({})))", a, c_literal(t, 1), ax);
  return fmt::format("{} * {}", swish, b);
}

void emit_swiglu(CEmit& e) {
  DType t = e.in_dtype(0);
  emit_ew_loop(e, e.out_view(0), {e.in_view(0), e.in_view(1)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    return fmt::format("{{ const {0} a = {1}[{2}], b = {3}[{4}]; {5}[{6}] = {7}; }}", e.in_ctype(0), e.in(0), idx[0], e.in(1), idx[1],
                       e.out(0), o, swiglu_expr(e.node, t, "a", "b"));
  }, t == DType::F32);
}

std::string swiglu_element(const Node& n, const std::vector<std::string>& a) {
  return swiglu_expr(n, DType::F32, "(" + a.at(0) + ")", "(" + a.at(1) + ")");
}

}  // namespace

void register_activation(CKernelTable& t) {
  for (const char* k : {"Softplus", "Softsign", "Selu", "Celu", "Mish", "Gelu", "ThresholdedRelu", "Shrink", "Swish"})
    t[k] = {emit_activation, ew_nchwc_ok, activation_element, nullptr};
  t["SwiGLU"] = {emit_swiglu, ew_nchwc_ok, swiglu_element, nullptr};
}

}  // namespace onnxc
