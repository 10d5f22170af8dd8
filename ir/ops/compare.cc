// ir/ops/compare.cc — comparisons and logic with bool outputs, and Where:
//   Equal, Less, Greater, LessOrEqual, GreaterOrEqual  (A, B) → bool, any numeric dtype
//                                                        (Equal also bool), A and B alike
//   And, Or, Xor (bool, bool) → bool;  Not bool → bool
//   IsNaN float → bool;  IsInf float → bool (detect_negative, detect_positive, default 1)
//   Where (cond bool, X, Y) → X's dtype: cond ? X : Y, the three broadcast together
// Binary and ternary ops broadcast multidirectionally (numpy). Comparisons are IEEE (NaN
// compares unequal and unordered), exactly as the C operators; bool is stored as a byte
// holding 0 or 1 (ir/dtype.h).
// Versions: Equal 1, 7, 11, 13, 19 (string inputs, which onnxc does not take); Less, Greater
// 1, 7, 9, 13; LessOrEqual, GreaterOrEqual 12, 16; And, Or, Xor 1, 7; Not 1; IsNaN 9, 13, 20;
// IsInf 10, 20; Where 9, 16. Before opset 7 the binary ones broadcast in the legacy form
// (LegacyBroadcast, ir/ops/elementwise.h); the other versions add dtypes only. Same meaning
// at every opset up to 28.
// Fusion: only Where can produce float32, so only Where is index-aligned with a fused
// element; the others have bool outputs, which fused (float32) loops never carry.
// The C kernels are kernels/compare.cc in the C backend.
#include <algorithm>
#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class C { Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor, Not, IsNaN, IsInf };

bool is_logic(C k) { return k == C::And || k == C::Or || k == C::Xor || k == C::Not; }
bool is_unary(C k) { return k == C::Not || k == C::IsNaN || k == C::IsInf; }

class Compare : public Op {
 public:
  explicit Compare(C k) : k_(k) {}

  void parse(AttrReader& a) override {
    if (a.opset() < 7 && !is_unary(k_)) legacy_ = read_legacy_broadcast(a);
    if (k_ == C::IsInf) {
      neg_ = a.i("detect_negative", 1) != 0;
      pos_ = a.i("detect_positive", 1) != 0;
    }
  }

  void infer(Node& n) override {
    size_t want = is_unary(k_) ? 1 : 2;
    if (n.inputs.size() != want) n.invalid("expects " + std::to_string(want) + " input(s), got " + std::to_string(n.inputs.size()));
    for (size_t i = 0; i < want; ++i)
      if (!n.in(i)) n.invalid("input " + std::to_string(i) + " is required");
    if (is_logic(k_)) {
      for (size_t i = 0; i < want; ++i) expect_dtype(n, i, {DType::Bool});
    } else if (k_ == C::IsNaN || k_ == C::IsInf) {
      expect_dtype(n, 0, {DType::F32, DType::F64});
    } else {
      DType a = n.in(0)->dtype, b = n.in(1)->dtype;
      if (a != b) n.invalid(std::string("input dtypes differ: ") + dtype_name(a) + " and " + dtype_name(b));
      if (a == DType::Bool && k_ != C::Equal) n.invalid("bool inputs are only valid for Equal");
    }
    if (n.opset < 7 && !is_unary(k_)) check_legacy_broadcast(n, legacy_);
    set_output(n, 0, DType::Bool, broadcast_inputs(n));
  }

  template <class T>
  bool apply(T a, T b) const {
    switch (k_) {
      case C::Equal: return a == b;
      case C::Less: return a < b;
      case C::Greater: return a > b;
      case C::LessOrEqual: return a <= b;
      case C::GreaterOrEqual: return a >= b;
      case C::And: return a && b;
      case C::Or: return a || b;
      case C::Xor: return (a != 0) != (b != 0);
      case C::Not: return !a;
      case C::IsNaN:
        if constexpr (std::is_floating_point_v<T>) return std::isnan(a);
        return false;
      case C::IsInf:
        if constexpr (std::is_floating_point_v<T>) return std::isinf(a) && (a > 0 ? pos_ : neg_);
        return false;
    }
    return false;
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    uint8_t* y = out[0].data<uint8_t>();
    visit_dtype(in[0]->dtype, [&](auto v) {
      using T = decltype(v);
      const T* a = in[0]->data<T>();
      auto ia = broadcast_index(out[0].shape, in[0]->shape);
      if (is_unary(k_)) {
        for (size_t i = 0; i < ia.size(); ++i) y[i] = apply<T>(a[ia[i]], T{}) ? 1 : 0;
        return;
      }
      const T* b = in[1]->data<T>();
      auto ib = broadcast_index(out[0].shape, in[1]->shape);
      for (size_t i = 0; i < ia.size(); ++i) y[i] = apply<T>(a[ia[i]], b[ib[i]]) ? 1 : 0;
    });
  }

  FusionKind kind() const override { return is_unary(k_) ? FusionKind::Elementwise : FusionKind::Broadcast; }
  int64_t min_opset() const override {
    switch (k_) {
      case C::LessOrEqual: case C::GreaterOrEqual: return 12;
      case C::IsNaN: return 9;
      case C::IsInf: return 10;
      default: return 1;
    }
  }
  bool detect_negative() const { return neg_; }
  bool detect_positive() const { return pos_; }

 private:
  C k_;
  bool neg_ = true, pos_ = true;
  LegacyBroadcast legacy_;  // opset < 7
};

class Where : public Op {
 public:
  void infer(Node& n) override {
    if (n.inputs.size() != 3 || !n.in(0) || !n.in(1) || !n.in(2)) n.invalid("expects 3 inputs (condition, X, Y)");
    expect_dtype(n, 0, {DType::Bool});
    if (n.in(1)->dtype != n.in(2)->dtype)
      n.invalid(std::string("X and Y dtypes differ: ") + dtype_name(n.in(1)->dtype) + " and " + dtype_name(n.in(2)->dtype));
    set_output(n, 0, n.in(1)->dtype, broadcast_inputs(n));
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    auto ic = broadcast_index(out[0].shape, in[0]->shape), ix = broadcast_index(out[0].shape, in[1]->shape),
         iy = broadcast_index(out[0].shape, in[2]->shape);
    const uint8_t* c = in[0]->data<uint8_t>();
    size_t es = dtype_size(out[0].dtype);
    for (size_t i = 0; i < ic.size(); ++i) {
      const Tensor& src = c[ic[i]] ? *in[1] : *in[2];
      size_t k = static_cast<size_t>(c[ic[i]] ? ix[i] : iy[i]);
      std::copy_n(src.bytes.begin() + static_cast<std::ptrdiff_t>(k * es), es, out[0].bytes.begin() + static_cast<std::ptrdiff_t>(i * es));
    }
  }

  FusionKind kind() const override { return FusionKind::Broadcast; }
  bool index_aligned() const override { return true; }
  int64_t min_opset() const override { return 9; }
};

template <C k>
std::unique_ptr<Op> make() { return std::make_unique<Compare>(k); }

}  // namespace

IsInfAttrs isinf_attrs(const Node& n) {
  const Compare& c = op_as<Compare>(n);
  return {c.detect_negative(), c.detect_positive()};
}

void register_compare(OpTable& t) {
  t["Equal"] = make<C::Equal>;
  t["Less"] = make<C::Less>;
  t["Greater"] = make<C::Greater>;
  t["LessOrEqual"] = make<C::LessOrEqual>;
  t["GreaterOrEqual"] = make<C::GreaterOrEqual>;
  t["And"] = make<C::And>;
  t["Or"] = make<C::Or>;
  t["Xor"] = make<C::Xor>;
  t["Not"] = make<C::Not>;
  t["IsNaN"] = make<C::IsNaN>;
  t["IsInf"] = make<C::IsInf>;
  t["Where"] = [] { return std::unique_ptr<Op>(std::make_unique<Where>()); };
}

}  // namespace onnxc
