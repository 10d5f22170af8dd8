// ir/ops/math.cc — elementwise math: Floor, Ceil, Round, Sign, Sin, Cos, Tan, Asin, Acos,
// Atan, Sinh, Cosh, Asinh, Acosh, Atanh (unary), Mod, BitShift, BitwiseAnd, BitwiseOr and
// BitwiseXor (binary, broadcasting) and BitwiseNot.
//
// dtypes: float32 and float64; Sign also every integer dtype. Round rounds half to even
// (nearbyint in the default rounding mode); Sign gives -1, 0 or 1 (NaN stays NaN). The
// reference computes in double (float64 inputs) or in float (float32), as the C does.
// Mod (any numeric dtype, both inputs alike): fmod=1 is C's fmod / the truncated remainder
// (sign of the dividend); fmod=0, the default, is the floored remainder (sign of the
// divisor, numpy's mod): on integers at every version, on floats from opset 28 (before it
// floats need fmod=1), where x - floor(x/y)*y is fmod(x, y) plus y when the signs differ, and
// a zero remainder takes y's sign (numpy's npy_divmod; ONNX 28's special cases). An integer
// remainder by 0 gives 0 (ONNX leaves it undefined; C would trap) and x % -1 is 0.
// BitShift (attribute direction "LEFT" or "RIGHT", required; both inputs alike): x << y or
// x >> y in x's width. Opset 11: uint8/16/32/64, a shift by the width or more gives 0 (as
// numpy; C leaves it undefined). Opset 28 adds int8/16/32/64: the right shift is arithmetic,
// bits pushed past the sign bit by a left shift are lost (two's complement wrap), and a
// shift by a negative amount or by the width or more gives -1 for a right shift of a negative
// x and 0 otherwise.
// BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (18; any integer dtype, both inputs alike):
// C's &, |, ^ and ~ in the inputs' width.
// Versions: Floor, Ceil 1, 6, 13; Round 11, 22; Sign 9, 13; Sin, Cos, Tan, Asin, Acos, Atan 7,
// 22; Sinh, Cosh, Asinh, Acosh, Atanh 9, 22; Mod 10, 13, 28; BitShift 11, 28; the Bitwise ops 18. Version 1 of
// Floor/Ceil has consumed_inputs (accepted, no effect); the other later versions only add
// dtypes (bfloat16, float16). Same meaning at every opset up to 28.
// The C expressions are kernels/math.cc in the C backend.
#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class M { Floor, Ceil, Round, Sign, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh };

class MathUnary : public Op {
 public:
  explicit MathUnary(M k) : k_(k) {}

  void parse(AttrReader& a) override {
    if (a.opset() < 6 && (k_ == M::Floor || k_ == M::Ceil)) a.ignore("consumed_inputs");
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    if (k_ == M::Sign)
      expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32,
                          DType::U64});
    else
      expect_dtype(n, 0, {DType::F32, DType::F64});
    set_output(n, 0, n.in(0)->dtype, n.in(0)->shape);
  }

  template <class T>
  T ref(T x) const {
    switch (k_) {
      case M::Floor: return std::floor(x);
      case M::Ceil: return std::ceil(x);
      case M::Round: return std::nearbyint(x);
      case M::Sign: return x > T(0) ? T(1) : x < T(0) ? T(-1) : x;
      case M::Sin: return std::sin(x);
      case M::Cos: return std::cos(x);
      case M::Tan: return std::tan(x);
      case M::Asin: return std::asin(x);
      case M::Acos: return std::acos(x);
      case M::Atan: return std::atan(x);
      case M::Sinh: return std::sinh(x);
      case M::Cosh: return std::cosh(x);
      case M::Asinh: return std::asinh(x);
      case M::Acosh: return std::acosh(x);
      case M::Atanh: return std::atanh(x);
    }
    return x;
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    visit_dtype(in[0]->dtype, [&](auto v) {
      using T = decltype(v);
      const T* x = in[0]->data<T>();
      T* y = out[0].data<T>();
      for (int64_t i = 0, n = in[0]->numel(); i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) y[i] = ref<T>(x[i]);
        else y[i] = static_cast<T>(x[i] > 0 ? 1 : x[i] < 0 ? -1 : 0);  // Sign on integers
      }
    });
  }

  FusionKind kind() const override { return FusionKind::Elementwise; }
  bool index_aligned() const override { return true; }
  int64_t min_opset() const override {
    switch (k_) {
      case M::Floor: case M::Ceil: return 1;
      case M::Round: return 11;
      case M::Sin: case M::Cos: case M::Tan: case M::Asin: case M::Acos: case M::Atan: return 7;
      default: return 9;  // Sign and the hyperbolic functions
    }
  }

 private:
  M k_;
};

class Mod : public Op {
 public:
  void parse(AttrReader& a) override {
    int64_t f = a.i("fmod", 0);
    if (f != 0 && f != 1) a.node().invalid("attribute 'fmod' must be 0 or 1, got " + std::to_string(f));
    fmod_ = f == 1;
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects exactly 2 inputs");
    DType a = n.in(0)->dtype, b = n.in(1)->dtype;
    if (a != b) n.invalid(std::string("input dtypes differ: ") + dtype_name(a) + " and " + dtype_name(b));
    if (a == DType::Bool) n.invalid("bool inputs are not valid for Mod");
    if (dtype_is_float(a) && !fmod_ && n.opset < 28)
      n.invalid("fmod=0 is only valid for integer inputs before opset 28; float inputs need fmod=1");
    floored_float_ = dtype_is_float(a) && !fmod_;
    set_output(n, 0, a, broadcast_inputs(n));
  }

  template <class T>
  T ref(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      T r = std::fmod(x, y);
      if (fmod_) return r;
      if (r != 0) {
        if ((r < 0) != (y < 0)) r += y;
      } else {
        r = std::copysign(T(0), y);
      }
      return r;
    } else {
      if (y == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (y == -1) return 0;
        T r = static_cast<T>(x % y);
        if (!fmod_ && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
        return r;
      } else {
        return static_cast<T>(x % y);
      }
    }
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    auto ia = broadcast_index(out[0].shape, in[0]->shape), ib = broadcast_index(out[0].shape, in[1]->shape);
    visit_dtype(out[0].dtype, [&](auto v) {
      using T = decltype(v);
      const T* a = in[0]->data<T>();
      const T* b = in[1]->data<T>();
      T* y = out[0].data<T>();
      for (size_t i = 0; i < ia.size(); ++i) y[i] = ref<T>(a[ia[i]], b[ib[i]]);
    });
  }

  // The fused loops' element expression is fmodf's; a floored float remainder is a statement
  // (kernels/math.cc), so such a node stays a kernel of its own.
  FusionKind kind() const override { return floored_float_ ? FusionKind::Opaque : FusionKind::Broadcast; }
  bool index_aligned() const override { return true; }
  int64_t min_opset() const override { return 10; }
  bool fmod() const { return fmod_; }

 private:
  bool fmod_ = false;
  bool floored_float_ = false;
};

class BitShift : public Op {
 public:
  void parse(AttrReader& a) override {
    std::string d = a.s("direction", "");
    if (d != "LEFT" && d != "RIGHT") a.node().invalid("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"" + d + "\"");
    left_ = d == "LEFT";
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects exactly 2 inputs");
    if (n.opset >= 28)
      expect_dtype(n, 0, {DType::U8, DType::U16, DType::U32, DType::U64, DType::I8, DType::I16, DType::I32, DType::I64});
    else
      expect_dtype(n, 0, {DType::U8, DType::U16, DType::U32, DType::U64});
    if (n.in(1)->dtype != n.in(0)->dtype)
      n.invalid(std::string("input dtypes differ: ") + dtype_name(n.in(0)->dtype) + " and " + dtype_name(n.in(1)->dtype));
    set_output(n, 0, n.in(0)->dtype, broadcast_inputs(n));
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    auto ia = broadcast_index(out[0].shape, in[0]->shape), ib = broadcast_index(out[0].shape, in[1]->shape);
    visit_dtype(out[0].dtype, [&](auto v) {
      using T = decltype(v);
      const T* a = in[0]->data<T>();
      const T* b = in[1]->data<T>();
      T* y = out[0].data<T>();
      constexpr int64_t bits = sizeof(T) * 8;
      for (size_t i = 0; i < ia.size(); ++i) {
        if constexpr (std::is_signed_v<T>) {
          const int64_t x = a[ia[i]], s = b[ib[i]];
          if (s < 0 || s >= bits) y[i] = static_cast<T>(!left_ && x < 0 ? -1 : 0);
          else y[i] = static_cast<T>(left_ ? static_cast<int64_t>(static_cast<uint64_t>(x) << s) : x >> s);
        } else {
          const uint64_t x = static_cast<uint64_t>(a[ia[i]]), s = static_cast<uint64_t>(b[ib[i]]);
          y[i] = s >= static_cast<uint64_t>(bits) ? T(0) : static_cast<T>(left_ ? x << s : x >> s);
        }
      }
    });
  }

  FusionKind kind() const override { return FusionKind::Broadcast; }
  int64_t min_opset() const override { return 11; }
  bool left() const { return left_; }

 private:
  bool left_ = true;
};

enum class Bit { And, Or, Xor, Not };

class Bitwise : public Op {
 public:
  explicit Bitwise(Bit k) : k_(k) {}

  void infer(Node& n) override {
    const size_t want = k_ == Bit::Not ? 1 : 2;
    if (n.inputs.size() != want) n.invalid(want == 1 ? "expects exactly 1 input" : "expects exactly 2 inputs");
    for (size_t i = 0; i < want; ++i)
      if (!n.in(i)) n.invalid("input " + std::to_string(i) + " is required");
    expect_dtype(n, 0, {DType::U8, DType::U16, DType::U32, DType::U64, DType::I8, DType::I16, DType::I32, DType::I64});
    if (want == 2 && n.in(1)->dtype != n.in(0)->dtype)
      n.invalid(std::string("input dtypes differ: ") + dtype_name(n.in(0)->dtype) + " and " + dtype_name(n.in(1)->dtype));
    set_output(n, 0, n.in(0)->dtype, want == 2 ? broadcast_inputs(n) : n.in(0)->shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const bool unary = k_ == Bit::Not;
    std::vector<int64_t> ia, ib;
    if (!unary) ia = broadcast_index(out[0].shape, in[0]->shape), ib = broadcast_index(out[0].shape, in[1]->shape);
    visit_dtype(out[0].dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const T* a = in[0]->data<T>();
        const T* b = unary ? nullptr : in[1]->data<T>();
        T* y = out[0].data<T>();
        for (int64_t i = 0, total = out[0].numel(); i < total; ++i) {
          if (unary) {
            y[i] = static_cast<T>(~a[i]);
          } else {
            const T x = a[ia[static_cast<size_t>(i)]], z = b[ib[static_cast<size_t>(i)]];
            y[i] = static_cast<T>(k_ == Bit::And ? x & z : k_ == Bit::Or ? x | z : x ^ z);
          }
        }
      }
    });
  }

  FusionKind kind() const override { return k_ == Bit::Not ? FusionKind::Elementwise : FusionKind::Broadcast; }
  int64_t min_opset() const override { return 18; }

 private:
  Bit k_;
};

template <M k>
std::unique_ptr<Op> make() { return std::make_unique<MathUnary>(k); }

}  // namespace

bool mod_fmod(const Node& n) { return op_as<Mod>(n).fmod(); }
bool bitshift_left(const Node& n) { return op_as<BitShift>(n).left(); }

void register_math(OpTable& t) {
  t["Floor"] = make<M::Floor>;
  t["Ceil"] = make<M::Ceil>;
  t["Round"] = make<M::Round>;
  t["Sign"] = make<M::Sign>;
  t["Sin"] = make<M::Sin>;
  t["Cos"] = make<M::Cos>;
  t["Tan"] = make<M::Tan>;
  t["Asin"] = make<M::Asin>;
  t["Acos"] = make<M::Acos>;
  t["Atan"] = make<M::Atan>;
  t["Sinh"] = make<M::Sinh>;
  t["Cosh"] = make<M::Cosh>;
  t["Asinh"] = make<M::Asinh>;
  t["Acosh"] = make<M::Acosh>;
  t["Atanh"] = make<M::Atanh>;
  t["Mod"] = [] { return std::unique_ptr<Op>(std::make_unique<Mod>()); };
  t["BitShift"] = [] { return std::unique_ptr<Op>(std::make_unique<BitShift>()); };
  t["BitwiseAnd"] = [] { return std::unique_ptr<Op>(std::make_unique<Bitwise>(Bit::And)); };
  t["BitwiseOr"] = [] { return std::unique_ptr<Op>(std::make_unique<Bitwise>(Bit::Or)); };
  t["BitwiseXor"] = [] { return std::unique_ptr<Op>(std::make_unique<Bitwise>(Bit::Xor)); };
  t["BitwiseNot"] = [] { return std::unique_ptr<Op>(std::make_unique<Bitwise>(Bit::Not)); };
}

}  // namespace onnxc
