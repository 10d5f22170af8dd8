// ir/ops/unary.cc — elementwise unary ops: Relu, LeakyRelu, Sigmoid, HardSigmoid,
// HardSwish, Tanh, Elu, Erf, Exp, Log, Sqrt, Neg, Abs, Reciprocal.
//
// Per op: its attributes (alpha/beta with ONNX defaults, published as UnaryAttrs) and the
// reference in double; the C expressions are in kernels/elementwise.cc in the C backend.
// float32 only, except Relu/Neg/Abs which also take float64 and signed integers;
// on integers Neg/Abs wrap (-INT_MIN = INT_MIN, computed in unsigned arithmetic, no UB) and
// the reference works in the integer type itself.
// Versions: Relu 1, 6, 13, 14; LeakyRelu 1, 6, 16; Sigmoid, Tanh, Exp, Log, Sqrt, Neg, Abs,
// Reciprocal 1, 6, 13; HardSigmoid, Elu 1, 6, 22; HardSwish 14, 22; Erf 9, 13. Version 1
// has the attribute consumed_inputs, a memory hint without effect (accepted and ignored);
// every later version only adds dtypes (integers: Relu-14, Neg/Abs-6; otherwise float16 and
// bfloat16, which onnxc does not take). Same meaning at every opset up to 28.
#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class U { Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Elu, Erf, Exp, Log, Sqrt, Neg, Abs, Reciprocal };

class Unary : public Op {
 public:
  explicit Unary(U k) : k_(k) {}

  void parse(AttrReader& a) override {
    if (a.opset() < 6) a.ignore("consumed_inputs");
    switch (k_) {
      case U::LeakyRelu: a_.alpha = a.f("alpha", 0.01); break;
      case U::HardSigmoid: a_.alpha = a.f("alpha", 0.2); a_.beta = a.f("beta", 0.5); break;
      case U::Elu: a_.alpha = a.f("alpha", 1.0); break;
      default: break;
    }
  }

  bool generic() const { return k_ == U::Relu || k_ == U::Neg || k_ == U::Abs; }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    if (generic()) expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64});
    else expect_float(n, 0);
    set_output(n, 0, n.in(0)->dtype, n.in(0)->shape);
  }

  double ref(double x) const {
    switch (k_) {
      case U::Relu: return x > 0 ? x : 0;
      case U::LeakyRelu: return x >= 0 ? x : a_.alpha * x;
      case U::Sigmoid: return 1 / (1 + std::exp(-x));
      case U::HardSigmoid: return std::max(0.0, std::min(1.0, a_.alpha * x + a_.beta));
      case U::HardSwish: return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
      case U::Tanh: return std::tanh(x);
      case U::Elu: return x > 0 ? x : a_.alpha * (std::exp(x) - 1);
      case U::Erf: return std::erf(x);
      case U::Exp: return std::exp(x);
      case U::Log: return std::log(x);
      case U::Sqrt: return std::sqrt(x);
      case U::Neg: return -x;
      case U::Abs: return std::fabs(x);
      case U::Reciprocal: return 1 / x;
    }
    return 0;
  }

  template <class T>
  void eval_int(const Tensor& in, Tensor& out) const {
    using W = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0, n = in.numel(); i < n; ++i) {
      T neg = static_cast<T>(W{0} - static_cast<W>(x[i]));
      y[i] = k_ == U::Relu ? (x[i] > 0 ? x[i] : T{0}) : k_ == U::Neg || x[i] < 0 ? neg : x[i];
    }
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    if (dtype_is_int(in[0]->dtype)) {
      visit_dtype(in[0]->dtype, [&](auto v) {
        if constexpr (std::is_integral_v<decltype(v)>) eval_int<decltype(v)>(*in[0], out[0]);
      });
      return;
    }
    for (int64_t i = 0, n = in[0]->numel(); i < n; ++i) out[0].set(i, ref(in[0]->get(i)));
  }



  FusionKind kind() const override { return FusionKind::Elementwise; }
  bool index_aligned() const override { return true; }
  const UnaryAttrs& attrs() const { return a_; }
  int64_t min_opset() const override { return k_ == U::HardSwish ? 14 : k_ == U::Erf ? 9 : 1; }

 private:
  U k_;
  UnaryAttrs a_;
};

template <U k>
std::unique_ptr<Op> make() { return std::make_unique<Unary>(k); }

}  // namespace

const UnaryAttrs& unary_attrs(const Node& n) { return op_as<Unary>(n).attrs(); }

void register_unary(OpTable& t) {
  t["Relu"] = make<U::Relu>;
  t["LeakyRelu"] = make<U::LeakyRelu>;
  t["Sigmoid"] = make<U::Sigmoid>;
  t["HardSigmoid"] = make<U::HardSigmoid>;
  t["HardSwish"] = make<U::HardSwish>;
  t["Tanh"] = make<U::Tanh>;
  t["Elu"] = make<U::Elu>;
  t["Erf"] = make<U::Erf>;
  t["Exp"] = make<U::Exp>;
  t["Log"] = make<U::Log>;
  t["Sqrt"] = make<U::Sqrt>;
  t["Neg"] = make<U::Neg>;
  t["Abs"] = make<U::Abs>;
  t["Reciprocal"] = make<U::Reciprocal>;
}

}  // namespace onnxc
