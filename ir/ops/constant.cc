// ir/ops/constant.cc — Constant and ConstantOfShape.
//
// Constant: exactly one of the attributes value (a tensor), value_float / value_floats
// (float32 scalar / 1-D) or value_int / value_ints (int64 scalar / 1-D; these four are
// opset 12+). infer() sets the output's compile-time value directly, so a Constant never
// reaches a backend. value_string(s) and sparse_value are unsupported (as are float16 or
// string tensors, which the importer rejects).
// ConstantOfShape (opset 9+): input 0 is the output shape, a static 1-D integer tensor with
// non-negative entries (empty → a scalar); attribute value is a one-element tensor giving
// the dtype and the fill value (default float32 0). It is folded like any op with constant
// inputs; only outputs above the folding limit are emitted, as a fill loop.
// Versions: Constant 1, 9, 11 (sparse_value), 12 (value_* attributes), 13, 19, 21, 23,
// 24, 25 (dtypes only); ConstantOfShape 9, 20, 21, 23, 24, 25 (dtypes only). Same meaning up to opset 28.
#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Constant : public Op {
 public:
  void parse(AttrReader& a) override {
    const Node& n = a.node();
    int64_t opset = a.opset();
    for (const char* s : {"value_string", "value_strings"})
      if (opset >= 12 && a.has(s)) n.unsupported(std::string("attribute '") + s + "': string constants are not supported");
    if (opset >= 11 && a.has("sparse_value")) n.unsupported("attribute 'sparse_value': sparse constants are not supported");
    for (const char* s : {"value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings"})
      if (opset < 12 && a.has(s)) n.invalid(std::string("attribute '") + s + "' needs opset 12 or later");
    std::vector<std::string> given;
    if (auto t = a.tensor("value")) value_ = t, given.push_back("value");
    if (opset >= 12) {
      if (auto f = a.opt_f("value_float")) {
        value_ = std::make_shared<Tensor>(Tensor::from_f32({static_cast<float>(*f)}, {}));
        given.push_back("value_float");
      }
      if (a.has("value_floats")) {
        std::vector<double> fs = a.floats("value_floats");
        std::vector<float> v(fs.begin(), fs.end());
        value_ = std::make_shared<Tensor>(Tensor::from_f32(v, {static_cast<int64_t>(v.size())}));
        given.push_back("value_floats");
      }
      if (auto i = a.opt_i("value_int")) {
        value_ = std::make_shared<Tensor>(Tensor::from_i64({*i}, DType::I64, {}));
        given.push_back("value_int");
      }
      if (a.has("value_ints")) {
        value_ = std::make_shared<Tensor>(Tensor::from_i64(a.ints("value_ints")));
        given.push_back("value_ints");
      }
    }
    if (given.size() != 1) {
      std::string names;
      for (auto& g : given) names += (names.empty() ? "" : ", ") + g;
      n.invalid("needs exactly one value attribute, got " + (given.empty() ? std::string("none") : names));
    }
  }

  void infer(Node& n) override {
    if (!n.inputs.empty()) n.invalid("takes no inputs, got " + std::to_string(n.inputs.size()));
    if (n.outputs.size() != 1 || !n.out(0)) n.invalid("expects exactly 1 output");
    set_output(n, 0, value_->dtype, value_->shape);
    n.out(0)->constant = value_;
  }

  void eval(const Node&, const std::vector<const Tensor*>&, std::vector<Tensor>& out) const override { out[0] = *value_; }


  FusionKind kind() const override { return FusionKind::Opaque; }

 private:
  std::shared_ptr<const Tensor> value_;
};

class ConstantOfShape : public Op {
 public:
  void parse(AttrReader& a) override {
    value_ = a.tensor("value");
    if (!value_) value_ = std::make_shared<Tensor>(DType::F32, Shape{1});
    if (value_->numel() != 1)
      a.node().invalid("attribute 'value' must hold exactly one element, got shape " + shape_str(value_->shape));
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input (the shape)");
    expect_dtype(n, 0, {DType::I64, DType::I32});
    const Tensor& st = static_tensor(n, 0, "shape");
    if (st.shape.size() != 1) n.invalid("the shape input must be 1-D, got shape " + shape_str(st.shape));
    Shape s = st.to_i64();
    for (int64_t d : s)
      if (d < 0) n.invalid("the shape input " + shape_str(s) + " has a negative entry");
    set_output(n, 0, value_->dtype, s);
  }

  bool static_input(size_t i) const override { return i == 0; }

  void eval(const Node&, const std::vector<const Tensor*>&, std::vector<Tensor>& out) const override {
    size_t es = dtype_size(out[0].dtype);
    for (size_t off = 0; off < out[0].bytes.size(); off += es)
      std::copy(value_->bytes.begin(), value_->bytes.end(), out[0].bytes.begin() + static_cast<std::ptrdiff_t>(off));
  }


  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t min_opset() const override { return 9; }
  const Tensor& value() const { return *value_; }

 private:
  std::shared_ptr<const Tensor> value_;
};

}  // namespace

const Tensor& constant_of_shape_value(const Node& n) { return op_as<ConstantOfShape>(n).value(); }

void register_constant(OpTable& t) {
  t["Constant"] = [] { return std::unique_ptr<Op>(std::make_unique<Constant>()); };
  t["ConstantOfShape"] = [] { return std::unique_ptr<Op>(std::make_unique<ConstantOfShape>()); };
}

}  // namespace onnxc
