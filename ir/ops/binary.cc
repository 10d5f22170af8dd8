// ir/ops/binary.cc — broadcasting binary ops: Add, Sub, Mul, Div, Pow, PRelu.
//
// Add/Sub/Mul/Div take any numeric dtype (both inputs the same); integer results wrap and
// integer division truncates, as in C. Pow takes a float32 base with a float32 or integer
// exponent. PRelu's slope broadcasts unidirectionally to X. The reference computes in
// double (int64 for integer Add/Sub/Mul/Div).
#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class B { Add, Sub, Mul, Div, Pow, PRelu };

class Binary : public Op {
 public:
  explicit Binary(B k) : k_(k) {}

  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects exactly 2 inputs");
    DType a = n.in(0)->dtype, b = n.in(1)->dtype;
    if (k_ == B::Pow) {
      expect_float(n, 0);
      expect_dtype(n, 1, {DType::F32, DType::I32, DType::I64});
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

  void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& os = out[0].shape;
    auto ia = broadcast_index(os, in[0]->shape), ib = broadcast_index(os, in[1]->shape);
    bool integer = dtype_is_int(n.out(0)->dtype);
    for (size_t i = 0; i < ia.size(); ++i) {
      int64_t o = static_cast<int64_t>(i);
      if (integer && k_ != B::Pow) {
        int64_t x = in[0]->get_i64(ia[i]), y = in[1]->get_i64(ib[i]);
        if (k_ == B::Div && y == 0) n.invalid("integer division by zero");
        uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
        int64_t r = k_ == B::Add ? static_cast<int64_t>(ux + uy) : k_ == B::Sub ? static_cast<int64_t>(ux - uy)
                  : k_ == B::Mul ? static_cast<int64_t>(ux * uy) : (y == -1 ? static_cast<int64_t>(0 - ux) : x / y);
        out[0].set_i64(o, r);
        continue;
      }
      double x = in[0]->get(ia[i]), y = in[1]->get(ib[i]);
      double r = 0;
      switch (k_) {
        case B::Add: r = x + y; break;
        case B::Sub: r = x - y; break;
        case B::Mul: r = x * y; break;
        case B::Div: r = x / y; break;
        case B::Pow: r = std::pow(static_cast<float>(x), static_cast<float>(y)); break;
        case B::PRelu: r = x < 0 ? x * y : x; break;
      }
      out[0].set(o, r);
    }
  }

  void emit(CEmit& e) const override {
    const char* op = k_ == B::Add ? "+" : k_ == B::Sub ? "-" : k_ == B::Mul ? "*" : "/";
    std::string cast = std::string("(") + e.out_ctype(0) + ")";
    emit_broadcast(e, e.out_shape(0), {e.in_shape(0), e.in_shape(1)}, [&](const std::vector<std::string>& idx, const std::string& o) {
      std::string a = e.in(0) + "[" + idx[0] + "]", b = e.in(1) + "[" + idx[1] + "]";
      if (k_ == B::Pow) return fmt::format("{}[{}] = powf({}, (float){});", e.out(0), o, a, b);
      if (k_ == B::PRelu) return fmt::format("{{ const float x = {}; {}[{}] = x < 0.0f ? x * {} : x; }}", a, e.out(0), o, b);
      return fmt::format("{}[{}] = {}({} {} {});", e.out(0), o, cast, a, op, b);
    });
  }

  FusionKind kind() const override { return FusionKind::Broadcast; }

 private:
  B k_;
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
