// ir/ops/binary.cc — broadcasting binary ops: Add, Sub, Mul, Div, Pow, PRelu.
//
// Add/Sub/Mul/Div take any numeric dtype (both inputs the same). Integer arithmetic is
// defined for every input, in C and in the reference alike: Add/Sub/Mul wrap modulo 2^N
// (computed in unsigned arithmetic, so no signed-overflow UB), Div truncates toward zero,
// INT_MIN / -1 wraps to INT_MIN and x / 0 gives 0 (ONNX leaves it undefined; C would trap).
// Pow: base float32/float64/int32/int64, exponent any numeric dtype; the result has the
// base's dtype. float32 base: powf(x, (float)y), or pow in double for a float64 exponent;
// float64 base: pow in double; integer base with integer exponent: exact repeated squaring
// wrapping modulo 2^64 then to the base type (negative exponents give 1/x^n truncated: 0
// unless x is ±1); integer base with float exponent: pow in double, converted with Cast's
// saturating rule. PRelu (float32) broadcasts its slope unidirectionally to X.
// Versions: Add, Sub, Mul, Div 1, 6, 7, 13, 14; Pow 1, 7, 12, 13, 15; PRelu 1, 6, 7, 9, 16.
// Before opset 7 broadcasting is the legacy form (LegacyBroadcast, ir/ops/elementwise.h);
// version 1 of Add/Sub/Mul/Div/PRelu also has consumed_inputs (accepted, no effect). Later
// versions add dtypes only (Pow-12: integer exponents; 13-16: bfloat16; 14: 8/16-bit
// integers). Same meaning at every opset up to 28.
#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class B { Add, Sub, Mul, Div, Pow, PRelu };

// Exact integer power with wrap-around, shared by the reference (the C mirrors it).
int64_t int_pow(int64_t x, int64_t e) {
  if (e < 0) return x == 1 ? 1 : x == -1 ? (e % 2 ? -1 : 1) : 0;
  uint64_t p = static_cast<uint64_t>(x), r = 1;
  for (; e > 0; e >>= 1) {
    if (e & 1) r *= p;
    p *= p;
  }
  return static_cast<int64_t>(r);
}

class Binary : public Op {
 public:
  explicit Binary(B k) : k_(k) {}

  void parse(AttrReader& a) override {
    if (a.opset() < 6 && k_ != B::Pow) a.ignore("consumed_inputs");
    if (a.opset() < 7 && k_ != B::PRelu) legacy_ = read_legacy_broadcast(a);
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects exactly 2 inputs");
    if (n.opset < 7 && k_ != B::PRelu) check_legacy_broadcast(n, legacy_);
    DType a = n.in(0)->dtype, b = n.in(1)->dtype;
    if (k_ == B::Pow) {
      expect_dtype(n, 0, {DType::F32, DType::F64, DType::I32, DType::I64});
      expect_dtype(n, 1, {DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                          DType::U32, DType::U64});
    } else if (k_ == B::PRelu) {
      expect_float(n, 0);
      expect_float(n, 1);
    } else {
      if (a != b) n.invalid(std::string("input dtypes differ: ") + dtype_name(a) + " and " + dtype_name(b));
      if (a == DType::Bool) n.unsupported("bool inputs are not supported");
    }
    Shape out = broadcast_inputs(n);
    if (k_ == B::PRelu && out != n.in(0)->shape)
      n.invalid("slope " + shape_str(n.in(1)->shape) + " does not broadcast to X " + shape_str(n.in(0)->shape));
    set_output(n, 0, a, out);
  }

  // Add/Sub/Mul/Div on an integer type T (see the file comment).
  template <class T>
  T int_arith(T x, T y) const {
    using U = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;
    U ux = static_cast<U>(x), uy = static_cast<U>(y);
    switch (k_) {
      case B::Add: return static_cast<T>(ux + uy);
      case B::Sub: return static_cast<T>(ux - uy);
      case B::Mul: return static_cast<T>(ux * uy);
      default: break;
    }
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (y == -1) return static_cast<T>(U{0} - ux);
    return static_cast<T>(x / y);
  }

  template <class T>
  void eval_same(const std::vector<const Tensor*>& in, Tensor& out) const {
    auto ia = broadcast_index(out.shape, in[0]->shape), ib = broadcast_index(out.shape, in[1]->shape);
    const T* a = in[0]->data<T>();
    const T* b = in[1]->data<T>();
    T* y = out.data<T>();
    for (size_t i = 0; i < ia.size(); ++i) {
      T x = a[ia[i]], v = b[ib[i]];
      if constexpr (std::is_integral_v<T>) {
        y[i] = int_arith(x, v);
      } else {
        switch (k_) {
          case B::Add: y[i] = x + v; break;
          case B::Sub: y[i] = x - v; break;
          case B::Mul: y[i] = x * v; break;
          case B::Div: y[i] = x / v; break;
          case B::PRelu: y[i] = x < 0 ? x * v : x; break;
          case B::Pow: break;
        }
      }
    }
  }

  template <class T, class E>
  static T pow_value(T x, E e) {
    if constexpr (std::is_same_v<T, float>) {
      if constexpr (std::is_same_v<E, double>) return static_cast<float>(std::pow(static_cast<double>(x), e));
      else return std::pow(x, static_cast<float>(e));
    } else if constexpr (std::is_same_v<T, double>) {
      return std::pow(x, static_cast<double>(e));
    } else if constexpr (std::is_integral_v<E>) {
      return static_cast<T>(int_pow(static_cast<int64_t>(x), static_cast<int64_t>(e)));
    } else {
      return convert_value<T>(std::pow(static_cast<double>(x), static_cast<double>(e)), false);
    }
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    if (k_ != B::Pow) {
      visit_dtype(out[0].dtype, [&](auto v) { eval_same<decltype(v)>(in, out[0]); });
      return;
    }
    auto ia = broadcast_index(out[0].shape, in[0]->shape), ib = broadcast_index(out[0].shape, in[1]->shape);
    visit_dtype(in[0]->dtype, [&](auto tv) {
      using T = decltype(tv);
      visit_dtype(in[1]->dtype, [&](auto ev) {
        using E = decltype(ev);
        const T* a = in[0]->data<T>();
        const E* b = in[1]->data<E>();
        T* y = out[0].data<T>();
        for (size_t i = 0; i < ia.size(); ++i) y[i] = pow_value<T, E>(a[ia[i]], b[ib[i]]);
      });
    });
  }



  FusionKind kind() const override { return FusionKind::Broadcast; }
  bool index_aligned() const override { return true; }

 private:
  B k_;
  LegacyBroadcast legacy_;  // opset < 7
};

template <B k>
std::unique_ptr<Op> make() { return std::make_unique<Binary>(k); }

}  // namespace

void register_binary(OpTable& t) {
  t["Add"] = make<B::Add>;
  t["Sub"] = make<B::Sub>;
  t["Mul"] = make<B::Mul>;
  t["Div"] = make<B::Div>;
  t["Pow"] = make<B::Pow>;
  t["PRelu"] = make<B::PRelu>;
}

}  // namespace onnxc
