// ir/ops/shape.cc — Shape: the input's shape as a 1-D int64 tensor.
//
// Shapes are static in onnxc, so the output is always a compile-time constant: infer()
// sets it directly and a Shape node never reaches a backend. Opset 15's start/end
// attributes select dims [start, end): negative values count from the back, then both
// are clamped to [0, rank] (an empty range gives an empty tensor), as the ONNX spec says.
// Versions: 1, 13, 15 (start/end), 19, 21, 23, 24, 25 (dtypes only); same meaning up to opset 28.
#include <algorithm>

#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class ShapeOp : public Op {
 public:
  void parse(AttrReader& a) override {
    if (a.opset() >= 15) {
      start_ = a.i("start", 0);
      end_ = a.opt_i("end");
    }
  }

  Tensor compute(const Shape& in) const {
    int64_t r = static_cast<int64_t>(in.size());
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
    int64_t b = clamp(start_), e = end_ ? clamp(*end_) : r;
    std::vector<int64_t> dims;
    for (int64_t d = b; d < e; ++d) dims.push_back(in[static_cast<size_t>(d)]);
    return Tensor::from_i64(dims);
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    Tensor t = compute(n.in(0)->shape);
    set_output(n, 0, DType::I64, t.shape);
    n.out(0)->constant = std::make_shared<const Tensor>(std::move(t));
  }

  void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    (void)n;
    out[0] = compute(in[0]->shape);
  }


  FusionKind kind() const override { return FusionKind::Opaque; }

 private:
  int64_t start_ = 0;
  std::optional<int64_t> end_;
};

// Size: the input's element count as an int64 scalar; like Shape, always a compile-time
// constant. Versions: 1, 13, 19, 21, 23, 24, 25 (dtypes only); same meaning up to opset 28.
class SizeOp : public Op {
 public:
  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    set_output(n, 0, DType::I64, {});
    n.out(0)->constant = std::make_shared<const Tensor>(Tensor::from_i64({numel(n.in(0)->shape)}, DType::I64, {}));
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    out[0] = Tensor::from_i64({in[0]->numel()}, DType::I64, {});
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
};

}  // namespace

void register_shape(OpTable& t) {
  t["Shape"] = [] { return std::unique_ptr<Op>(std::make_unique<ShapeOp>()); };
  t["Size"] = [] { return std::unique_ptr<Op>(std::make_unique<SizeOp>()); };
}

}  // namespace onnxc
