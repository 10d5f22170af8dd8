// codegen/formulas.cc — the elementwise formulas of every backend (see formulas.h).
#include "codegen/formulas.h"

#include <fmt/format.h>

#include "codegen/c/emit.h"
#include "ir/ops/elementwise.h"

namespace onnxc {

std::string clamp01(const std::string& v) {
  std::string p = "(" + v + ")";
  return fmt::format("({0} < 1.0f ? ({0} > 0.0f ? {0} : 0.0f) : 1.0f)", p);
}

const std::vector<const char*>& unary_formula_ops() {
  static const std::vector<const char*> ops = {"Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu",
                                               "Erf",  "Exp",       "Log",     "Sqrt",        "Neg",       "Abs",  "Reciprocal"};
  return ops;
}

std::string unary_formula(const Node& n, MathDialect d) {
  const std::string& k = n.op_type;
  const UnaryAttrs& u = unary_attrs(n);
  const std::string a = c_float(u.alpha), b = c_float(u.beta);
  // fn(x) as the dialect spells it.
  auto call = [&](const char* fn, const std::string& x) {
    if (d == MathDialect::C) return fmt::format("onnxc_{}f({})", fn, x);
    if (std::string(fn) == "sigmoid") return fmt::format("1.0f / (1.0f + expf(-{}))", x);
    return fmt::format("{}f({})", fn, x);
  };
  if (k == "Relu") return "x > 0.0f ? x : 0.0f";
  if (k == "LeakyRelu") return "x >= 0.0f ? x : " + a + " * x";
  if (k == "Sigmoid") return call("sigmoid", "x");
  if (k == "HardSigmoid") return clamp01(a + " * x + " + b);
  if (k == "HardSwish") return "x * " + clamp01("x * (1.0f / 6.0f) + 0.5f");
  if (k == "Tanh") return call("tanh", "x");
  if (k == "Elu") return "x > 0.0f ? x : " + a + " * (" + call("exp", "x") + " - 1.0f)";
  if (k == "Erf") return call("erf", "x");
  if (k == "Exp") return call("exp", "x");
  if (k == "Log") return call("log", "x");
  if (k == "Sqrt") return "sqrtf(x)";
  if (k == "Neg") return "-x";
  if (k == "Abs") return "fabsf(x)";
  if (k == "Reciprocal") return "1.0f / x";
  internal_error(__FILE__, __LINE__, "unary_formula", n.where() + ": no elementwise formula for unary op " + k);
}

const char* binary_operator(const std::string& op_type) {
  return op_type == "Add" ? "+" : op_type == "Sub" ? "-" : op_type == "Mul" ? "*" : "/";
}

std::string binary_formula(const std::string& op_type, const std::string& a, const std::string& b) {
  if (op_type == "Pow") return fmt::format("powf({}, {})", a, b);
  const std::string x = "(" + a + ")", y = "(" + b + ")";
  if (op_type == "PRelu") return fmt::format("{0} < 0.0f ? {0} * {1} : {0}", x, y);
  return fmt::format("{} {} {}", x, binary_operator(op_type), y);
}

std::string sum_formula(const Node& n, const std::vector<std::string>& a) {
  std::string s;
  for (auto& x : a) s += (s.empty() ? "(" : " + (") + x + ")";
  if (n.op_type == "Mean" && a.size() > 1) s = fmt::format("(({}) / {})", s, c_float(static_cast<double>(a.size())));
  return s;
}

std::string max_min_statements(const Node& n, const std::vector<std::string>& a, const std::string& dst) {
  const char* cmp = n.op_type == "Max" ? ">" : "<";
  std::string s = fmt::format("float {} = {};", dst, a.at(0));
  for (size_t k = 1; k < a.size(); ++k) s += fmt::format(" {0} = ({1}) {2} {0} || ({1}) != ({1}) ? ({1}) : {0};", dst, a[k], cmp);
  return s;
}

std::string clip_formula(const std::string& x, const std::string& lo, const std::string& hi) {
  std::string r = "(" + x + ")";
  if (!lo.empty()) r = fmt::format("({0} < {1} ? {1} : {0})", r, lo);
  if (!hi.empty()) r = fmt::format("({0} > {1} ? {1} : {0})", r, hi);
  return r;
}

}  // namespace onnxc
