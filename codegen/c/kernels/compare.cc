// codegen/c/kernels/compare.cc — C for the comparisons and logic ops (bool outputs: a byte
// 0 or 1), IsNaN, IsInf and Where; what they mean is ir/ops/compare.cc. One broadcasting
// loop nest over the output (ew_loop.h), plain layout; any dtype the op takes. Where's
// float32 element (CKernel::expr) serves the fused loops.
#include "codegen/c/kernels/ew_loop.h"
#include "codegen/c/kernels/kernels.h"
#include "ir/ops/elementwise.h"

namespace onnxc {
namespace {

// The C expression of one output element (0 or 1) from input elements a and b.
std::string compare_expr(const Node& n, const std::string& a, const std::string& b) {
  const std::string& k = n.op_type;
  if (k == "Equal") return fmt::format("{} == {}", a, b);
  if (k == "Less") return fmt::format("{} < {}", a, b);
  if (k == "Greater") return fmt::format("{} > {}", a, b);
  if (k == "LessOrEqual") return fmt::format("{} <= {}", a, b);
  if (k == "GreaterOrEqual") return fmt::format("{} >= {}", a, b);
  if (k == "And") return fmt::format("{} & {}", a, b);  // bools are 0 or 1
  if (k == "Or") return fmt::format("{} | {}", a, b);
  if (k == "Xor") return fmt::format("{} ^ {}", a, b);
  if (k == "Not") return fmt::format("{} ^ 1", a);
  if (k == "IsNaN") return fmt::format("{0} != {0}", a);
  if (k == "IsInf") {
    IsInfAttrs f = isinf_attrs(n);
    std::string inf = n.in(0)->dtype == DType::F32 ? "INFINITY" : "(double)INFINITY";
    if (f.negative && f.positive) return fmt::format("{0} == {1} || {0} == -{1}", a, inf);
    if (f.positive) return fmt::format("{} == {}", a, inf);
    if (f.negative) return fmt::format("{} == -{}", a, inf);
    return "0";
  }
  internal_error(__FILE__, __LINE__, "compare_expr", n.where() + ": no C expression for " + k);
}

void emit_compare(CEmit& e) {
  bool unary = e.node.inputs.size() == 1;
  std::vector<Shape> ins = {e.in_shape(0)};
  if (!unary) ins.push_back(e.in_shape(1));
  emit_ew_loop(e, e.out_shape(0), ins, [&](const std::vector<std::string>& idx, const std::string& o) {
    std::string a = fmt::format("{}[{}]", e.in(0), idx[0]), b = unary ? "" : fmt::format("{}[{}]", e.in(1), idx[1]);
    std::string x = compare_expr(e.node, a, b);
    if (x == "0") return fmt::format("{}[{}] = 0;", e.out(0), o);
    return fmt::format("{}[{}] = (uint8_t)({});", e.out(0), o, x);
  }, true);
}

void emit_where(CEmit& e) {
  emit_ew_loop(e, e.out_view(0), {e.in_view(0), e.in_view(1), e.in_view(2)},
               [&](const std::vector<std::string>& idx, const std::string& o) {
                 return fmt::format("{}[{}] = {}[{}] ? {}[{}] : {}[{}];", e.out(0), o, e.in(0), idx[0], e.in(1), idx[1], e.in(2), idx[2]);
               },
               true);
}

std::string where_element(const Node&, const std::vector<std::string>& a) {
  return fmt::format("({}) ? ({}) : ({})", a.at(0), a.at(1), a.at(2));
}

}  // namespace

void register_compare(CKernelTable& t) {
  for (const char* k : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not", "IsNaN", "IsInf"})
    t[k] = {emit_compare, nullptr, nullptr, nullptr};
  t["Where"] = {emit_where, nullptr, where_element, nullptr};
}

}  // namespace onnxc
