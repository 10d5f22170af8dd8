// ir/ops/clip.cc — Clip: y = min(max(x, lo), hi), elementwise.
//
// Bounds: opset < 11 reads the float attributes min/max (ONNX defaults ∓3.402823e+38, i.e.
// ∓FLT_MAX); opset 11+ reads the optional inputs 1 (min) and 2 (max), scalars (a
// one-element tensor is accepted too) of x's dtype; an absent bound does not clip (±inf,
// or the integer type's limits). A bound that is a compile-time constant is static
// (static_input() reports it after infer: a backend bakes it in); a runtime bound is an
// input of the generated code. float32/float64 and
// every integer dtype. The order max-then-min gives hi everywhere when lo > hi (as ONNX
// and numpy); NaN in x stays NaN.
// Versions: 1, 6, 11, 12, 13 (as above); unchanged up to opset 28.
#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Clip : public Op {
 public:
  void parse(AttrReader& a) override {
    if (a.opset() < 11) {
      a_.lo = a.f("min", -3.402823e+38);
      a_.hi = a.f("max", 3.402823e+38);
    }
    if (a.opset() < 6) a.ignore("consumed_inputs");
  }

  void infer(Node& n) override {
    if (!n.in(0)) n.invalid("input 0 (input) is required");
    size_t max_inputs = n.opset < 11 ? 1 : 3;
    if (n.inputs.size() > max_inputs)
      n.invalid("has " + std::to_string(n.inputs.size()) + " inputs; at most " + std::to_string(max_inputs) + " at opset " +
                std::to_string(n.opset));
    expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                        DType::U32, DType::U64});
    DType t = n.in(0)->dtype;
    for (size_t i = 1; i < 3; ++i) {
      static_[i] = false;
      Value* v = n.in(i);
      if (!v) continue;
      if (v->dtype != t)
        n.invalid(std::string(i == 1 ? "min" : "max") + " has dtype " + dtype_name(v->dtype) + " but input has " + dtype_name(t));
      if (numel(v->shape) != 1)
        n.invalid(std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " + shape_str(v->shape));
      static_[i] = v->constant != nullptr;
    }
    if (n.opset < 11 && t != DType::F32 && t != DType::F64)
      n.invalid(std::string("input dtype ") + dtype_name(t) + " needs opset 12 or later");
    set_output(n, 0, t, n.in(0)->shape);
  }

  bool static_input(size_t i) const override { return i < 3 && static_[i]; }

  template <class T>
  void eval_t(const Node& n, const std::vector<const Tensor*>& in, Tensor& out) const {
    bool has_lo = true, has_hi = true;
    T lo{}, hi{};
    if (n.opset < 11) {  // attribute form, float dtypes only
      lo = static_cast<T>(a_.lo);
      hi = static_cast<T>(a_.hi);
    } else {
      has_lo = in.size() > 1 && in[1];
      has_hi = in.size() > 2 && in[2];
      if (has_lo) lo = in[1]->data<T>()[0];
      if (has_hi) hi = in[2]->data<T>()[0];
    }
    const T* x = in[0]->data<T>();
    T* y = out.data<T>();
    for (int64_t i = 0, count = out.numel(); i < count; ++i) {
      T v = x[i];
      if (has_lo && v < lo) v = lo;
      if (has_hi && v > hi) v = hi;
      y[i] = v;
    }
  }

  void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    visit_dtype(out[0].dtype, [&](auto v) { eval_t<decltype(v)>(n, in, out[0]); });
  }


  FusionKind kind() const override { return FusionKind::Elementwise; }
  bool index_aligned() const override { return true; }
  const ClipAttrs& attrs() const { return a_; }

 private:
  ClipAttrs a_;
  bool static_[3] = {false, false, false};
};

}  // namespace

const ClipAttrs& clip_attrs(const Node& n) { return op_as<Clip>(n).attrs(); }

void register_clip(OpTable& t) {
  t["Clip"] = [] { return std::unique_ptr<Op>(std::make_unique<Clip>()); };
}

}  // namespace onnxc
