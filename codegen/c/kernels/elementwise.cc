// codegen/c/kernels/elementwise.cc — C for the elementwise ops: unary (Relu, Sigmoid...),
// binary (Add, Sub, Mul, Div, Pow, PRelu), variadic (Sum, Mean, Max, Min), Clip, Cast, CastLike and
// Identity/Dropout.
//
// Each op has a standalone kernel (one broadcasting loop nest over the output, any dtype the
// op takes, codegen/c/loops.h's emit_broadcast) and, for the fused loops, its float32
// element: an expression (CKernel::expr), or statements for Max/Min whose NaN-propagating
// comparisons would repeat the running value in a single expression. float32 elementwise
// ops with a rank 3..5 output also run on NCHWc activations (the layout pass gives every
// input a layout the output's view can read, see CEmit::in_view); Pow stays plain.
// Integer semantics (wrap-around, division by zero, saturating casts) follow the ops' files
// under ir/ops/, which the C mirrors exactly. The float32 formulas are every backend's
// (codegen/formulas.h, in the C dialect): Sigmoid, Tanh, Erf, Exp, Log and Elu call the
// inline helpers of codegen/c/vmath.h and the clamps are compare-selects, so their loops
// vectorize; Pow and Sqrt still call libm.
#include <cctype>

#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "codegen/formulas.h"
#include "ir/op.h"
#include "ir/ops/elementwise.h"

namespace onnxc {
namespace {

bool elementwise_nchwc_ok(const Node& n, int64_t) {
  const Value* o = n.out(0);
  return o && o->dtype == DType::F32 && o->shape.size() >= 3 && o->shape.size() <= 5 && n.outputs.size() == 1;
}

// Substitutes the C expression `arg` for the whole-word identifier `x` in `expr`.
std::string subst_x(const std::string& expr, const std::string& arg) {
  std::string r;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] == 'x' && (i == 0 || !word(expr[i - 1])) && (i + 1 == expr.size() || !word(expr[i + 1]))) r += "(" + arg + ")";
    else r += expr[i];
  }
  return r;
}

// ---- unary ----

// The C expression of a unary op over `x`, in dtype t (float32; Relu, Neg, Abs also float64
// and signed integers).
std::string unary_expr(const Node& n, DType t) {
  const std::string& k = n.op_type;
  if (t != DType::F32) {  // generic ops on float64 / integers
    std::string zero = c_literal(t, 0);
    if (k == "Relu") return "x > " + zero + " ? x : " + zero;
    std::string neg = "-x";
    if (dtype_is_int(t)) neg = fmt::format("({})(0u - ({})x)", dtype_ctype(t), dtype_size(t) <= 4 ? "uint32_t" : "uint64_t");
    if (k == "Neg") return neg;
    return "x < " + zero + " ? " + neg + " : x";
  }
  return unary_formula(n, MathDialect::C);  // codegen/formulas.h
}

void emit_unary(CEmit& e) {
  std::string ex = unary_expr(e.node, e.in_dtype(0));
  const char* ct = e.in_ctype(0);
  emit_broadcast(e, e.out_view(0), {e.in_view(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    return fmt::format("const {} x = {}[{}]; {}[{}] = {};", ct, e.in(0), idx[0], e.out(0), o, ex);
  });
}

std::string unary_element(const Node& n, const std::vector<std::string>& args) {
  return subst_x(unary_expr(n, DType::F32), args.at(0));
}

// ---- binary ----

std::string pow_stmt(CEmit& e, const std::string& a, const std::string& b, const std::string& y) {
  DType t = e.in_dtype(0), et = e.in_dtype(1);
  if (t == DType::F32)
    return et == DType::F64 ? fmt::format("{} = (float)pow((double){}, {});", y, a, b) : fmt::format("{} = powf({}, (float){});", y, a, b);
  if (t == DType::F64) return fmt::format("{} = pow({}, (double){});", y, a, b);
  if (dtype_is_float(et))
    return fmt::format("{{ const double p = pow((double){}, (double){}); {} = {}; }}", a, b, y, c_convert(DType::F64, t, "p"));
  // Integer power by squaring in uint64 (wraps), as int_pow() in ir/ops/binary.cc.
  return fmt::format(
      "{{ const int64_t x = (int64_t){0}, n = (int64_t){1}; uint64_t p = (uint64_t)x, r = 1; "
      "for (int64_t k = n; k > 0; k >>= 1) {{ if (k & 1) r *= p; p *= p; }} "
      "if (n < 0) r = x == 1 ? 1u : x == -1 ? (n % 2 ? (uint64_t)-1 : 1u) : 0u; {2} = ({3})r; }}",
      a, b, y, e.out_ctype(0));
}

void emit_binary(CEmit& e) {
  const std::string& k = e.node.op_type;
  const char* op = binary_operator(k);  // codegen/formulas.h
  DType t = e.out_dtype(0);
  const char* ct = e.out_ctype(0);
  const char* ut = dtype_size(t) <= 4 ? "uint32_t" : "uint64_t";
  emit_broadcast(e, e.out_view(0), {e.in_view(0), e.in_view(1)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    std::string a = e.in(0) + "[" + idx[0] + "]", b = e.in(1) + "[" + idx[1] + "]", y = e.out(0) + "[" + o + "]";
    if (k == "Pow") return pow_stmt(e, a, b, y);
    if (k == "PRelu") return fmt::format("{{ const float x = {}; {} = x < 0.0f ? x * {} : x; }}", a, y, b);
    if (dtype_is_float(t)) return fmt::format("{} = {} {} {};", y, a, op, b);
    if (k != "Div") return fmt::format("{} = ({})(({}){} {} ({}){});", y, ct, ut, a, op, ut, b);
    // Integer division: x / 0 → 0, INT_MIN / -1 wraps (see ir/ops/binary.cc).
    if (!dtype_is_signed_int(t))  // unsigned
      return fmt::format("{{ const {0} x = {1}, d = {2}; {3} = d == 0 ? 0 : ({0})(x / d); }}", ct, a, b, y);
    return fmt::format("{{ const {0} x = {1}, d = {2}; {3} = d == 0 ? 0 : d == -1 ? ({0})(0u - ({4})x) : ({0})(x / d); }}", ct, a, b, y,
                       ut);
  });
}

bool binary_nchwc(const Node& n, int64_t b) {
  return n.op_type != "Pow" && elementwise_nchwc_ok(n, b) && n.in(0)->dtype == DType::F32 && n.in(1)->dtype == DType::F32;
}

std::string binary_element(const Node& n, const std::vector<std::string>& a) { return binary_formula(n.op_type, a.at(0), a.at(1)); }

// ---- variadic ----

void emit_variadic(CEmit& e) {
  const std::string& kind = e.node.op_type;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < e.node.inputs.size(); ++i) shapes.push_back(e.in_view(i));
  const char* ct = e.out_ctype(0);
  bool fl = dtype_is_float(e.out_dtype(0));
  const char* cmp = kind == "Max" ? ">" : "<";
  emit_broadcast(e, e.out_view(0), shapes, [&](const std::vector<std::string>& idx, const std::string& o) {
    auto x = [&](size_t k) { return e.in(k) + "[" + idx[k] + "]"; };
    if (shapes.size() == 1) return fmt::format("{}[{}] = {};", e.out(0), o, x(0));
    if (kind == "Sum" || kind == "Mean") {
      std::string s = x(0);
      for (size_t k = 1; k < shapes.size(); ++k) s += " + " + x(k);
      if (kind == "Mean") s = fmt::format("({}) / {}", s, c_literal(e.out_dtype(0), static_cast<double>(shapes.size())));
      return fmt::format("{}[{}] = {};", e.out(0), o, s);
    }
    // { T m = x0[..]; T v = x1[..]; m = v > m || v != v ? v : m; ... y0[o] = m; }
    std::string s = fmt::format("{{ {} m = {};", ct, x(0));
    for (size_t k = 1; k < shapes.size(); ++k) {
      s += fmt::format(" const {} v{} = {};", ct, k, x(k));
      if (fl) s += fmt::format(" m = v{0} {1} m || v{0} != v{0} ? v{0} : m;", k, cmp);
      else s += fmt::format(" m = v{0} {1} m ? v{0} : m;", k, cmp);
    }
    return s + fmt::format(" {}[{}] = m; }}", e.out(0), o);
  });
}

std::string sum_element(const Node& n, const std::vector<std::string>& a) { return sum_formula(n, a); }

// Max/Min of float32 elements, NaN-propagating as emit_variadic: a running value in `dst`.
std::string max_min_element(const Node& n, const std::vector<std::string>& a, const std::string& dst) {
  return max_min_statements(n, a, dst);
}

// ---- Clip ----

// Bound expressions of Clip: index 1 (lo) and 2 (hi); "" where absent. Constant bounds are
// literals; a runtime bound is `runtime(i)`.
void clip_bounds(const Node& n, DType t, std::string bound[3], const std::function<std::string(size_t)>& runtime) {
  if (n.opset < 11) {
    bound[1] = c_literal(t, clip_attrs(n).lo);
    bound[2] = c_literal(t, clip_attrs(n).hi);
    return;
  }
  for (size_t i = 1; i < 3; ++i) {
    const Value* v = n.in(i);
    if (!v) continue;
    bound[i] = v->constant ? c_elem_literal(*v->constant, 0) : runtime(i);
  }
}

void emit_clip(CEmit& e) {
  DType t = e.out_dtype(0);
  const char* ct = e.out_ctype(0);
  // Bound expressions: a literal, a local read from the runtime scalar, or none.
  std::string bound[3];
  clip_bounds(e.node, t, bound, [&](size_t i) {
    std::string local = i == 1 ? "lo" : "hi";
    e.local("const {} {} = {}[0];", ct, local, e.in(i));
    return local;
  });
  emit_broadcast(e, e.out_view(0), {e.in_view(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    std::string s = fmt::format("{{ {} v = {}[{}];", ct, e.in(0), idx[0]);
    if (!bound[1].empty()) s += fmt::format(" v = v < {0} ? {0} : v;", bound[1]);
    if (!bound[2].empty()) s += fmt::format(" v = v > {0} ? {0} : v;", bound[2]);
    return s + fmt::format(" {}[{}] = v; }}", e.out(0), o);
  });
}

// Comparisons, not fmaxf/fminf (which differ on NaN), as emit_clip.
std::string clip_element(const Node& n, const std::vector<std::string>& a) {
  std::string bound[3];
  clip_bounds(n, DType::F32, bound, [&](size_t i) { return "(" + a.at(i) + ")"; });
  return clip_formula(a.at(0), bound[1], bound[2]);
}

// ---- Cast, Identity/Dropout ----

void emit_cast(CEmit& e) {
  DType from = e.in_dtype(0);
  std::string conv = c_convert(from, e.out_dtype(0), "x");
  emit_broadcast(e, e.out_shape(0), {e.in_shape(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
    if (conv == "x") return fmt::format("{}[{}] = {}[{}];", e.out(0), o, e.in(0), idx[0]);
    return fmt::format("{{ const {} x = {}[{}]; {}[{}] = {}; }}", e.in_ctype(0), e.in(0), idx[0], e.out(0), o, conv);
  });
}

void emit_identity(CEmit& e) {
  int64_t n = numel(e.out_shape(0));
  if (n > 0) e("memcpy({}, {}, {});", e.out(0), e.in(0), n * static_cast<int64_t>(dtype_size(e.out_dtype(0))));
  if (e.node.op_type == "Dropout" && e.node.out(1) && n > 0) {
    if (e.out_dtype(1) == DType::Bool || dtype_size(e.out_dtype(1)) == 1) {
      e("memset({}, 1, {});", e.out(1), n);
    } else {
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t i = 0; i < {}; ++i) {}[i] = {};", n, e.out(1), c_literal(e.out_dtype(1), 1));
    }
  }
}

// float32 → float32 casts and identities: the element itself.
std::string copy_element(const Node&, const std::vector<std::string>& a) { return "(" + a.at(0) + ")"; }

}  // namespace

void register_elementwise(CKernelTable& t) {
  for (const char* k : unary_formula_ops()) t[k] = {emit_unary, elementwise_nchwc_ok, unary_element, nullptr};
  for (const char* k : {"Add", "Sub", "Mul", "Div", "Pow", "PRelu"}) t[k] = {emit_binary, binary_nchwc, binary_element, nullptr};
  t["Sum"] = {emit_variadic, elementwise_nchwc_ok, sum_element, nullptr};
  t["Mean"] = {emit_variadic, elementwise_nchwc_ok, sum_element, nullptr};
  t["Max"] = {emit_variadic, elementwise_nchwc_ok, nullptr, max_min_element};
  t["Min"] = {emit_variadic, elementwise_nchwc_ok, nullptr, max_min_element};
  t["Clip"] = {emit_clip, elementwise_nchwc_ok, clip_element, nullptr};
  t["Cast"] = {emit_cast, nullptr, copy_element, nullptr};
  t["CastLike"] = {emit_cast, nullptr, nullptr, nullptr};
  t["Identity"] = {emit_identity, nullptr, copy_element, nullptr};
  t["Dropout"] = {emit_identity, nullptr, copy_element, nullptr};
  t["BitCast"] = {emit_identity, nullptr, nullptr, nullptr};  // the same bytes, another dtype
}

}  // namespace onnxc
