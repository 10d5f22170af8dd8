// ir/ops/identity.cc — Identity, Dropout in inference mode (also an identity), and BitCast.
//
// Both copy input 0 to output 0, for any dtype. Dropout:
//   opset < 12  ratio is an attribute (default 0.5, must lie in [0, 1]);
//   opset 12+   inputs ratio (1) and training_mode (2), both optional; attribute seed.
// training_mode must be absent or a constant false: training-mode dropout is random and
// unsupported, except with a constant ratio of 0, where it is the identity too. In
// inference the ratio has no effect, so inputs 1 and 2 are never passed to the generated
// code (static_input), constant or not; training_mode must be constant, the ratio only matters
// when training_mode is true. The optional mask output (opset 10+: bool; before: the
// input's dtype) is all true / all ones. Identity of optional/sequence values is rejected
// by the importer (graph inputs that are not tensors).
// Versions: Identity 1, 13, 14, 16, 19, 21, 23, 24, 25 (dtypes and optional/sequence values only);
// Dropout 1 (consumed_inputs, accepted and ignored), 6, 7 (is_test removed), 10 (bool mask),
// 12 (ratio and training_mode inputs), 13, 22 (bfloat16). Same meaning up to opset 28.
//
// BitCast (26): the input's bytes (little endian, as onnxc stores every tensor) read as the
// dtype of attribute `to`, which must have the input's width; same shape. float16 is refused
// (exit 3) either way: onnxc computes float16 values as float32 (ir/dtype.h), so their bits are
// not float16's; a float32 input cast to a 2-byte type is such a value. So is a cast to bool
// from anything but bool (onnxc's bools hold 0 or 1, other bytes would be no bool).
#include <fmt/format.h>

#include <cstring>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Identity : public Op {
 public:
  explicit Identity(bool dropout) : dropout_(dropout) {}

  void parse(AttrReader& a) override {
    if (!dropout_) return;
    if (a.opset() < 12) {
      double r = a.f("ratio", 0.5);
      if (!(r >= 0 && r <= 1)) a.node().invalid("attribute 'ratio' = " + std::to_string(r) + " is outside [0, 1]");
    } else {
      a.ignore("seed");
    }
    if (a.opset() < 7) a.ignore("is_test");
    if (a.opset() < 6) a.ignore("consumed_inputs");
  }

  void infer(Node& n) override {
    if (!n.in(0)) n.invalid("input 0 is required");
    size_t max_in = dropout_ && n.opset >= 12 ? 3 : 1, max_out = dropout_ ? 2 : 1;
    if (n.inputs.size() > max_in) n.invalid("has " + std::to_string(n.inputs.size()) + " inputs; at most " + std::to_string(max_in));
    if (n.outputs.size() > max_out) n.invalid("has " + std::to_string(n.outputs.size()) + " outputs; at most " + std::to_string(max_out));
    if (dropout_ && n.in(2)) {
      expect_dtype(n, 2, {DType::Bool});
      const Tensor& tm = static_tensor(n, 2, "training_mode");
      if (tm.numel() != 1) n.invalid("training_mode must be a scalar, got shape " + shape_str(tm.shape));
      if (tm.get(0) != 0) {
        double ratio = 0.5;
        if (n.in(1)) {
          if (!n.in(1)->constant || n.in(1)->constant->numel() != 1)
            n.unsupported("training_mode is true and the ratio is not a constant scalar: training-mode dropout is random");
          ratio = n.in(1)->constant->get(0);
        }
        if (ratio != 0)
          n.unsupported("training_mode is true with ratio " + std::to_string(ratio) + ": training-mode dropout is random");
      }
    }
    if (dropout_ && n.in(1) && !dtype_is_float(n.in(1)->dtype))
      n.invalid(std::string("ratio has dtype ") + dtype_name(n.in(1)->dtype) + ", expected a float type");
    set_output(n, 0, n.in(0)->dtype, n.in(0)->shape);
    if (dropout_) set_output(n, 1, n.opset >= 10 ? DType::Bool : n.in(0)->dtype, n.in(0)->shape);
  }

  bool static_input(size_t i) const override { return dropout_ && (i == 1 || i == 2); }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    out[0].bytes = in[0]->bytes;
    if (out.size() > 1 && !out[1].bytes.empty() && out[1].numel() > 0)
      for (int64_t i = 0, n = out[1].numel(); i < n; ++i) out[1].set(i, 1);
  }


  FusionKind kind() const override { return FusionKind::Elementwise; }
  bool index_aligned() const override { return true; }

 private:
  bool dropout_;
};

class BitCast : public Op {
 public:
  void parse(AttrReader& a) override {
    std::optional<int64_t> to = a.opt_i("to");
    if (!to) a.node().invalid("attribute 'to' is required");
    to_code_ = *to;
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    const DType from = n.in(0)->dtype;
    const int64_t c = to_code_;
    if (c == 10) n.unsupported("BitCast to float16 is not supported (onnxc computes float16 values as float32)");
    if (c == 8 || c <= 0 || c > 28) n.invalid(fmt::format("attribute 'to' = {} is not a numeric tensor element type", c));
    if (!dtype_supported(static_cast<int>(c)))
      n.unsupported(fmt::format("BitCast to {} is not supported", onnx_type_name(c)));
    const DType to = static_cast<DType>(c);
    if (dtype_size(to) != dtype_size(from)) {
      if (from == DType::F32 && dtype_size(to) == 2)
        n.unsupported(fmt::format("BitCast of f32 to {}: a float16 input (computed as float32 by onnxc) cannot be bit-cast", dtype_name(to)));
      n.invalid(fmt::format("input {} and 'to' {} differ in width ({} and {} bytes)", dtype_name(from), dtype_name(to), dtype_size(from),
                            dtype_size(to)));
    }
    if (to == DType::Bool && from != DType::Bool)
      n.unsupported(fmt::format("BitCast of {} to bool is not supported (a byte other than 0 or 1 is no bool in onnxc)", dtype_name(from)));
    set_output(n, 0, to, n.in(0)->shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override { out[0].bytes = in[0]->bytes; }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 26; }

 private:
  int64_t to_code_ = 0;
};

}  // namespace

void register_identity(OpTable& t) {
  t["Identity"] = [] { return std::unique_ptr<Op>(std::make_unique<Identity>(false)); };
  t["Dropout"] = [] { return std::unique_ptr<Op>(std::make_unique<Identity>(true)); };
  t["BitCast"] = [] { return std::unique_ptr<Op>(std::make_unique<BitCast>()); };
}

}  // namespace onnxc
