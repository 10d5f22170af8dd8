// ir/ops/variadic.cc — variadic broadcasting ops: Sum, Mean, Max, Min (1..N inputs).
//
// All inputs share one dtype and broadcast multidirectionally (numpy rules) to the output.
// Sum and Mean take float32/float64 (the ONNX type set; integer Sum is rejected as
// unsupported); Mean is the sum (left to right, in the input dtype) divided by the count;
// Max/Min take float32/float64 and every integer dtype. Max/Min propagate NaN like
// numpy's maximum/minimum (the reference of the ONNX tests): a NaN in any input gives NaN.
// Sum adds left to right, in the input dtype.
// Versions: 1, 6, 8, 13 (Max/Min also 12: integer dtypes). Version 1 has consumed_inputs
// (accepted, no effect); before 8 all inputs must have one shape, a case of numpy
// broadcasting. Same meaning at every opset up to 28.
#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class V { Sum, Mean, Max, Min };

class Variadic : public Op {
 public:
  explicit Variadic(V k) : k_(k) {}

  void parse(AttrReader& a) override {
    if (a.opset() < 6) a.ignore("consumed_inputs");
  }

  void infer(Node& n) override {
    if (n.inputs.empty()) n.invalid("expects at least 1 input");
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.in(i)) n.invalid("input " + std::to_string(i) + " is absent; every input of a variadic op is required");
    if (k_ == V::Sum || k_ == V::Mean) expect_dtype(n, 0, {DType::F32, DType::F64});
    else
      expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                          DType::U32, DType::U64});
    DType t = n.in(0)->dtype;
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.in(i)->dtype != t)
        n.invalid("input " + std::to_string(i) + " has dtype " + dtype_name(n.in(i)->dtype) + " but input 0 has " + dtype_name(t));
    set_output(n, 0, t, broadcast_inputs(n));
  }

  template <class T>
  static bool is_nan(T v) {
    if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
    else return false;
  }

  template <class T>
  void eval_t(const std::vector<const Tensor*>& in, Tensor& out) const {
    std::vector<std::vector<int64_t>> idx;
    for (const Tensor* t : in) idx.push_back(broadcast_index(out.shape, t->shape));
    T* y = out.data<T>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) {
      T acc = in[0]->data<T>()[idx[0][static_cast<size_t>(i)]];
      for (size_t k = 1; k < in.size(); ++k) {
        T v = in[k]->data<T>()[idx[k][static_cast<size_t>(i)]];
        if (k_ == V::Sum || k_ == V::Mean) acc = static_cast<T>(acc + v);
        else if (is_nan(v)) acc = v;  // NaN wins
        else if (k_ == V::Max) acc = v > acc ? v : acc;
        else acc = v < acc ? v : acc;
      }
      if (k_ == V::Mean && in.size() > 1) acc = static_cast<T>(acc / static_cast<T>(in.size()));
      y[i] = acc;
    }
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    visit_dtype(out[0].dtype, [&](auto v) { eval_t<decltype(v)>(in, out[0]); });
  }


  FusionKind kind() const override { return FusionKind::Broadcast; }
  bool index_aligned() const override { return true; }

 private:
  V k_;
};

template <V k>
std::unique_ptr<Op> make() { return std::make_unique<Variadic>(k); }

}  // namespace

void register_variadic(OpTable& t) {
  t["Sum"] = make<V::Sum>;
  t["Mean"] = make<V::Mean>;
  t["Max"] = make<V::Max>;
  t["Min"] = make<V::Min>;
}

}  // namespace onnxc
