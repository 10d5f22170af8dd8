// ir/ops/activation.cc — elementwise activations: Softplus, Softsign, Selu, Celu, Mish,
// Gelu, ThresholdedRelu, Shrink, Swish, and the gated SwiGLU. float32 and float64.
//   Softplus  log(1 + e^x)            Softsign  x / (1 + |x|)
//   Selu      x > 0 ? gamma x : gamma (alpha e^x - alpha)   (alpha 1.6732632, gamma 1.0507010)
//   Celu      max(0, x) + min(0, alpha (e^(x/alpha) - 1))   (alpha 1)
//   Mish      x tanh(softplus(x))
//   Gelu      approximate "none": x/2 (1 + erf(x/√2)); "tanh": x/2 (1 + tanh(√(2/π) (x + 0.044715 x³)))
//   ThresholdedRelu  x > alpha ? x : 0  (alpha 1)
//   Swish     x sigmoid(alpha x) = x / (1 + e^(-alpha x))   (alpha 1)
//   SwiGLU    (A, B) → Swish_alpha(A) * B, A and B of one shape (no broadcasting)   (alpha 1)
//   Shrink    x < -lambd ? x + bias : x > lambd ? x - bias : 0   (lambd 0.5, bias 0; as
//             alpha, gamma); ONNX also allows integer inputs, which onnxc refuses (exit 3)
// Softplus is computed as max(x, 0) + log1p(e^-|x|), which equals log(1 + e^x) without
// overflowing for large x. The reference works in double.
// Versions: Softplus, Softsign 1, 22; Selu 1 (consumed_inputs, accepted and ignored), 6, 22;
// Celu 12, 28 (float64, float16); Mish 18, 22; Gelu 20; Shrink 9; Swish 24; SwiGLU 28; ThresholdedRelu 10, 22 (an experimental op before 10,
// which onnxc does not take). Version 22 only adds bfloat16. Same meaning up to opset 28.
// The C expressions are kernels/activation.cc in the C backend.
#include <fmt/format.h>

#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class A { Softplus, Softsign, Selu, Celu, Mish, Gelu, ThresholdedRelu, Shrink, Swish };

class Activation : public Op {
 public:
  explicit Activation(A k) : k_(k) {}

  void parse(AttrReader& a) override {
    switch (k_) {
      case A::Selu:
        if (a.opset() < 6) a.ignore("consumed_inputs");
        a_.alpha = a.f("alpha", 1.67326319217681884765625);
        a_.gamma = a.f("gamma", 1.05070102214813232421875);
        break;
      case A::Celu:
        a_.alpha = a.f("alpha", 1.0);
        if (a_.alpha == 0) a.node().invalid("attribute 'alpha' must not be 0");
        break;
      case A::ThresholdedRelu: a_.alpha = a.f("alpha", 1.0); break;
      case A::Swish: a_.alpha = a.f("alpha", 1.0); break;
      case A::Shrink:
        a_.alpha = a.f("lambd", 0.5);
        a_.gamma = a.f("bias", 0.0);
        break;
      case A::Gelu: {
        std::string m = a.s("approximate", "none");
        if (m != "none" && m != "tanh") a.node().invalid("attribute 'approximate' = '" + m + "' is not one of none, tanh");
        a_.tanh = m == "tanh";
        break;
      }
      default: break;
    }
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    if (k_ == A::Shrink && dtype_is_int(n.in(0)->dtype))
      n.unsupported(fmt::format("Shrink on {} is not supported (float32, float64 only)", dtype_name(n.in(0)->dtype)));
    expect_dtype(n, 0, {DType::F32, DType::F64});
    set_output(n, 0, n.in(0)->dtype, n.in(0)->shape);
  }

  double ref(double x) const {
    auto softplus = [](double v) { return std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))); };
    switch (k_) {
      case A::Softplus: return softplus(x);
      case A::Softsign: return x / (1 + std::fabs(x));
      case A::Selu: return x > 0 ? a_.gamma * x : a_.gamma * (a_.alpha * std::exp(x) - a_.alpha);
      case A::Celu: return std::max(0.0, x) + std::min(0.0, a_.alpha * (std::exp(x / a_.alpha) - 1));
      case A::Mish: return x * std::tanh(softplus(x));
      case A::Gelu:
        if (a_.tanh) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
      case A::ThresholdedRelu: return x > a_.alpha ? x : 0;
      case A::Shrink: return x < -a_.alpha ? x + a_.gamma : x > a_.alpha ? x - a_.gamma : 0;
      case A::Swish: return x / (1 + std::exp(-a_.alpha * x));
    }
    return x;
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    for (int64_t i = 0, n = in[0]->numel(); i < n; ++i) out[0].set(i, ref(in[0]->get(i)));
  }

  FusionKind kind() const override { return FusionKind::Elementwise; }
  bool index_aligned() const override { return true; }
  int64_t min_opset() const override {
    switch (k_) {
      case A::Celu: return 12;
      case A::Mish: return 18;
      case A::Gelu: return 20;
      case A::ThresholdedRelu: return 10;
      case A::Shrink: return 9;
      case A::Swish: return 24;
      default: return 1;
    }
  }
  const ActivationAttrs& attrs() const { return a_; }

 private:
  A k_;
  ActivationAttrs a_;
};

class SwiGlu : public Op {
 public:
  void parse(AttrReader& a) override { a_.alpha = a.f("alpha", 1.0); }

  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects 2 inputs (A, B)");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    const Value &a = *n.in(0), &b = *n.in(1);
    if (b.dtype != a.dtype) n.invalid(fmt::format("A is {}, B is {}", dtype_name(a.dtype), dtype_name(b.dtype)));
    if (b.shape != a.shape) n.invalid(fmt::format("A {} and B {} differ in shape (SwiGLU does not broadcast)", shape_str(a.shape), shape_str(b.shape)));
    set_output(n, 0, a.dtype, a.shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    for (int64_t i = 0, n = in[0]->numel(); i < n; ++i) {
      const double a = in[0]->get(i);
      out[0].set(i, a / (1 + std::exp(-a_.alpha * a)) * in[1]->get(i));
    }
  }

  FusionKind kind() const override { return FusionKind::Broadcast; }
  bool index_aligned() const override { return true; }
  int64_t min_opset() const override { return 28; }
  const ActivationAttrs& attrs() const { return a_; }

 private:
  ActivationAttrs a_;
};

template <A k>
std::unique_ptr<Op> make() { return std::make_unique<Activation>(k); }

}  // namespace

const ActivationAttrs& activation_attrs(const Node& n) {
  return n.op_type == "SwiGLU" ? op_as<SwiGlu>(n).attrs() : op_as<Activation>(n).attrs();
}

void register_activation(OpTable& t) {
  t["Softplus"] = make<A::Softplus>;
  t["Softsign"] = make<A::Softsign>;
  t["Selu"] = make<A::Selu>;
  t["Celu"] = make<A::Celu>;
  t["Mish"] = make<A::Mish>;
  t["Gelu"] = make<A::Gelu>;
  t["Swish"] = make<A::Swish>;
  t["SwiGLU"] = [] { return std::unique_ptr<Op>(std::make_unique<SwiGlu>()); };
  t["ThresholdedRelu"] = make<A::ThresholdedRelu>;
  t["Shrink"] = make<A::Shrink>;
}

}  // namespace onnxc
