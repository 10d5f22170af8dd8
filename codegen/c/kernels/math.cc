// codegen/c/kernels/math.cc — C for Floor, Ceil, Round, Sign, the trigonometric and
// hyperbolic functions, Mod, BitShift and the Bitwise ops (ir/ops/math.cc says what they mean). One broadcasting
// loop nest over the output (ew_loop.h), float32 on NCHWc activations too; the float32
// element (CKernel::expr) serves the fused loops. math_expr() is the one place each op's
// C expression lives: plain libm calls for now (sinf, atanhf...), which get no `omp simd`.
#include "codegen/c/kernels/ew_loop.h"
#include "codegen/c/kernels/kernels.h"
#include "ir/ops/elementwise.h"

namespace onnxc {
namespace {

// libm functions with a vector form (no `omp simd` trouble); the others are scalar calls.
bool math_vectorizable(const std::string& k) { return k == "Floor" || k == "Ceil" || k == "Round" || k == "Sign"; }

// The C expression of a unary math op over `x` in dtype t.
std::string math_expr(const Node& n, DType t, const std::string& x) {
  const std::string& k = n.op_type;
  std::string f = t == DType::F32 ? "f" : "";
  if (k == "Sign") {
    // unsigned: no `< 0` (gcc's -Wtype-limits on uint32/uint64 under -Wextra)
    if (dtype_is_int(t) && !dtype_is_signed_int(t)) return fmt::format("({0})({1} > 0)", dtype_ctype(t), x);
    if (!dtype_is_float(t)) return fmt::format("({0})(({1} > 0) - ({1} < 0))", dtype_ctype(t), x);
    std::string one = c_literal(t, 1), zero = c_literal(t, 0);
    return fmt::format("({0} > {1} ? {2} : {0} < {1} ? -{2} : {0})", x, zero, one);
  }
  static const std::pair<const char*, const char*> fns[] = {
      {"Floor", "floor"}, {"Ceil", "ceil"}, {"Round", "nearbyint"}, {"Sin", "sin"},     {"Cos", "cos"},
      {"Tan", "tan"},     {"Asin", "asin"}, {"Acos", "acos"},       {"Atan", "atan"},   {"Sinh", "sinh"},
      {"Cosh", "cosh"},   {"Asinh", "asinh"}, {"Acosh", "acosh"},   {"Atanh", "atanh"}};
  for (auto& [op, fn] : fns)
    if (k == op) return fmt::format("{}{}({})", fn, f, x);
  internal_error(__FILE__, __LINE__, "math_expr", n.where() + ": no C expression for " + k);
}

void emit_math(CEmit& e) {
  DType t = e.in_dtype(0);
  emit_ew_loop(e, e.out_view(0), {e.in_view(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    return fmt::format("{{ const {} x = {}[{}]; {}[{}] = {}; }}", e.in_ctype(0), e.in(0), idx[0], e.out(0), o, math_expr(e.node, t, "x"));
  }, math_vectorizable(e.node.op_type));
}

std::string math_element(const Node& n, const std::vector<std::string>& a) { return math_expr(n, DType::F32, "(" + a.at(0) + ")"); }

// Mod of elements a, b in dtype t (see ir/ops/math.cc: fmod, floored remainder, x % 0 = 0).
std::string mod_stmt(const Node& n, DType t, const std::string& a, const std::string& b, const std::string& y) {
  if (dtype_is_float(t)) {
    const char* f = t == DType::F32 ? "f" : "";
    if (mod_fmod(n)) return fmt::format("{} = fmod{}({}, {});", y, f, a, b);
    // floored (opset 28): the truncated remainder moved to the divisor's sign; zero takes its sign
    return fmt::format("{{ const {0} x = {1}, d = {2}; {0} r = fmod{3}(x, d); if (r != 0) {{ if ((r < 0) != (d < 0)) r += d; }} "
                       "else r = copysign{3}(0, d); {4} = r; }}", dtype_ctype(t), a, b, f, y);
  }
  const char* ct = dtype_ctype(t);
  bool is_signed = dtype_is_signed_int(t);
  if (!is_signed) return fmt::format("{{ const {0} x = {1}, d = {2}; {3} = d == 0 ? 0 : ({0})(x % d); }}", ct, a, b, y);
  std::string floored = mod_fmod(n) ? "" : " if (r != 0 && ((r < 0) != (d < 0))) r = (" + std::string(ct) + ")(r + d);";
  return fmt::format("{{ const {0} x = {1}, d = {2}; {0} r = d == 0 || d == -1 ? 0 : ({0})(x % d);{3} {4} = r; }}", ct, a, b, floored, y);
}

void emit_mod(CEmit& e) {
  DType t = e.out_dtype(0);
  emit_ew_loop(e, e.out_view(0), {e.in_view(0), e.in_view(1)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    return mod_stmt(e.node, t, fmt::format("{}[{}]", e.in(0), idx[0]), fmt::format("{}[{}]", e.in(1), idx[1]),
                    fmt::format("{}[{}]", e.out(0), o));
  }, false);
}

void emit_bitshift(CEmit& e) {
  DType t = e.out_dtype(0);
  const char* ct = dtype_ctype(t);
  int64_t bits = static_cast<int64_t>(dtype_size(t)) * 8;
  const bool left = bitshift_left(e.node), is_signed = dtype_is_signed_int(t);
  emit_ew_loop(e, e.out_view(0), {e.in_view(0), e.in_view(1)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    std::string x = fmt::format("{}[{}]", e.in(0), idx[0]), s = fmt::format("{}[{}]", e.in(1), idx[1]), y = fmt::format("{}[{}]", e.out(0), o);
    if (!is_signed)
      return fmt::format("{{ const uint64_t x = {}, s = {}; {} = s >= {} ? 0 : ({})(x {} s); }}", x, s, y, bits, ct, left ? "<<" : ">>");
    // signed (opset 28, ir/ops/math.cc): arithmetic right shift; the left shift wraps in the width
    if (left)
      return fmt::format("{{ const int64_t x = {}, s = {}; {} = s < 0 || s >= {} ? 0 : ({})((uint64_t)x << s); }}", x, s, y, bits, ct);
    return fmt::format("{{ const int64_t x = {}, s = {}; {} = ({})(s < 0 || s >= {} ? (x < 0 ? -1 : 0) : x >> s); }}", x, s, y, ct, bits);
  }, true);
}

void emit_bitwise(CEmit& e) {
  const std::string& k = e.node.op_type;
  const char* ct = dtype_ctype(e.out_dtype(0));
  if (k == "BitwiseNot") {
    emit_ew_loop(e, e.out_view(0), {e.in_view(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
      return fmt::format("{}[{}] = ({})~{}[{}];", e.out(0), o, ct, e.in(0), idx[0]);
    }, true);
    return;
  }
  const char* op = k == "BitwiseAnd" ? "&" : k == "BitwiseOr" ? "|" : "^";
  emit_ew_loop(e, e.out_view(0), {e.in_view(0), e.in_view(1)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    return fmt::format("{}[{}] = ({})({}[{}] {} {}[{}]);", e.out(0), o, ct, e.in(0), idx[0], op, e.in(1), idx[1]);
  }, true);
}

std::string mod_element(const Node&, const std::vector<std::string>& a) { return fmt::format("fmodf({}, {})", a.at(0), a.at(1)); }

}  // namespace

void register_math(CKernelTable& t) {
  for (const char* k : {"Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                        "Acosh", "Atanh"})
    t[k] = {emit_math, ew_nchwc_ok, math_element, nullptr};
  t["Mod"] = {emit_mod, ew_nchwc_ok, mod_element, nullptr};
  t["BitShift"] = {emit_bitshift, nullptr, nullptr, nullptr};
  for (const char* k : {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot"}) t[k] = {emit_bitwise, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
