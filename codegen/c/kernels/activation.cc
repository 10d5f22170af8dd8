// codegen/c/kernels/activation.cc — C for Softplus, Softsign, Selu, Celu, Mish, Gelu and
// ThresholdedRelu (ir/ops/activation.cc says what they mean). One loop nest over the
// output (ew_loop.h), float32 on NCHWc activations too; the float32 element
// (CKernel::expr) serves the fused loops. activation_expr() is the one place each op's C
// expression lives: plain libm calls for now (expf, log1pf, tanhf, erff), so the loops
// get no `omp simd`.
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
  auto softplus = [&](const std::string& v) {
    return fmt::format("(fmax{0}({1}, {2}) + log1p{0}(exp{0}(-fabs{0}({1}))))", f, v, lit(0));
  };
  if (k == "Softplus") return softplus(x);
  if (k == "Softsign") return fmt::format("{0} / ({1} + fabs{2}({0}))", x, lit(1), f);
  if (k == "Selu")
    return fmt::format("{0} > {1} ? {2} * {0} : {2} * ({3} * exp{4}({0}) - {3})", x, lit(0), lit(a.gamma), lit(a.alpha), f);
  if (k == "Celu")
    return fmt::format("fmax{0}({1}, {2}) + fmin{0}({1}, {3} * (exp{0}({2} / {3}) - {4}))", f, lit(0), x, lit(a.alpha), lit(1));
  if (k == "Mish") return fmt::format("{} * tanh{}({})", x, f, softplus(x));
  if (k == "Gelu") {
    if (a.tanh)
      return fmt::format("{1} * {0} * ({2} + tanh{3}({4} * ({0} + {5} * {0} * {0} * {0})))", x, lit(0.5), lit(1), f,
                         lit(0.79788456080286535588), lit(0.044715));
    return fmt::format("{1} * {0} * ({2} + erf{3}({0} * {4}))", x, lit(0.5), lit(1), f, lit(0.70710678118654752440));
  }
  if (k == "ThresholdedRelu") return fmt::format("{0} > {1} ? {0} : {2}", x, lit(a.alpha), lit(0));
  internal_error(__FILE__, __LINE__, "activation_expr", n.where() + ": no C expression for " + k);
}

bool activation_vectorizable(const std::string& k) { return k == "Softsign" || k == "ThresholdedRelu"; }

void emit_activation(CEmit& e) {
  DType t = e.in_dtype(0);
  emit_ew_loop(e, e.out_view(0), {e.in_view(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    return fmt::format("{{ const {} x = {}[{}]; {}[{}] = {}; }}", e.in_ctype(0), e.in(0), idx[0], e.out(0), o,
                       activation_expr(e.node, t, "x"));
  }, activation_vectorizable(e.node.op_type));
}

std::string activation_element(const Node& n, const std::vector<std::string>& a) {
  return activation_expr(n, DType::F32, "(" + a.at(0) + ")");
}

}  // namespace

void register_activation(CKernelTable& t) {
  for (const char* k : {"Softplus", "Softsign", "Selu", "Celu", "Mish", "Gelu", "ThresholdedRelu"})
    t[k] = {emit_activation, ew_nchwc_ok, activation_element, nullptr};
}

}  // namespace onnxc
