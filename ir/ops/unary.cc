// ir/ops/unary.cc — elementwise unary ops: Relu, LeakyRelu, Sigmoid, HardSigmoid,
// HardSwish, Tanh, Elu, Erf, Exp, Log, Sqrt, Neg, Abs, Reciprocal.
//
// One table row per op: its attributes (alpha/beta with ONNX defaults), the C expression
// over `x` (float32, with alpha/beta substituted as exact literals), and the reference in
// double. float32 only, except Relu/Neg/Abs which also take float64 and signed integers;
// on integers Neg/Abs wrap (-INT_MIN = INT_MIN, computed in unsigned arithmetic, no UB) and
// the reference works in the integer type itself.
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
    switch (k_) {
      case U::LeakyRelu: alpha_ = a.f("alpha", 0.01); break;
      case U::HardSigmoid: alpha_ = a.f("alpha", 0.2); beta_ = a.f("beta", 0.5); break;
      case U::Elu: alpha_ = a.f("alpha", 1.0); break;
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
      case U::LeakyRelu: return x >= 0 ? x : alpha_ * x;
      case U::Sigmoid: return 1 / (1 + std::exp(-x));
      case U::HardSigmoid: return std::max(0.0, std::min(1.0, alpha_ * x + beta_));
      case U::HardSwish: return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
      case U::Tanh: return std::tanh(x);
      case U::Elu: return x > 0 ? x : alpha_ * (std::exp(x) - 1);
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

  std::string expr(DType t) const {
    std::string a = c_float(alpha_), b = c_float(beta_);
    if (t != DType::F32) {  // generic ops on float64 / integers
      std::string zero = c_literal(t, 0);
      if (k_ == U::Relu) return "x > " + zero + " ? x : " + zero;
      std::string neg = "-x";
      if (dtype_is_int(t)) neg = fmt::format("({})(0u - ({})x)", dtype_ctype(t), dtype_size(t) <= 4 ? "uint32_t" : "uint64_t");
      if (k_ == U::Neg) return neg;
      return "x < " + zero + " ? " + neg + " : x";
    }
    switch (k_) {
      case U::Relu: return "x > 0.0f ? x : 0.0f";
      case U::LeakyRelu: return "x >= 0.0f ? x : " + a + " * x";
      case U::Sigmoid: return "1.0f / (1.0f + expf(-x))";
      case U::HardSigmoid: return "fmaxf(0.0f, fminf(1.0f, " + a + " * x + " + b + "))";
      case U::HardSwish: return "x * fmaxf(0.0f, fminf(1.0f, x * (1.0f / 6.0f) + 0.5f))";
      case U::Tanh: return "tanhf(x)";
      case U::Elu: return "x > 0.0f ? x : " + a + " * (expf(x) - 1.0f)";
      case U::Erf: return "erff(x)";
      case U::Exp: return "expf(x)";
      case U::Log: return "logf(x)";
      case U::Sqrt: return "sqrtf(x)";
      case U::Neg: return "-x";
      case U::Abs: return "fabsf(x)";
      case U::Reciprocal: return "1.0f / x";
    }
    return "x";
  }

  void emit(CEmit& e) const override {
    std::string ex = expr(e.in_dtype(0));
    const char* ct = e.in_ctype(0);
    emit_broadcast(e, e.out_view(0), {e.in_view(0)}, [&](const std::vector<std::string>& idx, const std::string& o) {
      return fmt::format("const {} x = {}[{}]; {}[{}] = {};", ct, e.in(0), idx[0], e.out(0), o, ex);
    });
  }

  FusionKind kind() const override { return FusionKind::Elementwise; }
  bool supports_nchwc(const Node& n, int64_t) const override { return elementwise_nchwc_ok(n); }
  std::string c_expr(const Node& n, const std::vector<std::string>& args) const override {
    if (n.out(0)->dtype != DType::F32) return {};
    return subst_x(expr(DType::F32), args.at(0));
  }
  // Elu and HardSigmoid lost consumed_inputs at opset 6 and have not changed since.
  int64_t min_opset() const override { return k_ == U::Elu || k_ == U::HardSigmoid ? 6 : 7; }

 private:
  U k_;
  double alpha_ = 0, beta_ = 0;
};

template <U k>
std::unique_ptr<Op> make() { return std::make_unique<Unary>(k); }

}  // namespace

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
