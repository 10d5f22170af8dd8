// ir/ops/cast.cc — Cast: elementwise conversion to the dtype of attribute `to`.
//
// Between every dtype of ir/dtype.h, bool included. Conventions (shared with Tensor::set
// and ir/ops/elementwise.h's convert_value, which the C backend's c_convert mirrors, so
// folding, --verify and the C agree):
//   float → integer  truncates toward zero and SATURATES: NaN → 0, values at or beyond the
//                    target's range → its lowest/max (ONNX leaves this undefined; plain C
//                    conversion would be undefined behaviour)
//   integer → integer wraps modulo 2^N (two's complement), as numpy
//   anything → bool  is x != 0 (NaN → true); bool → anything is 0 or 1
//   float64 → float32 rounds to nearest (overflow → ±inf)
//   → float16        rounds to nearest even (overflow → ±inf), through float32 for float64
//                    and integers; float16 → anything converts its exact float32 value
// float16 values only appear at a model's edges and as the output of a Cast to float16,
// which the importer widens back to float32 for the nodes that read it (ir/dtype.h).
// Targets string, bfloat16, complex and the float8, float6, float4, 4- and 2-bit integer types
// are unsupported (exit 3), naming the type; so are such inputs (the
// importer rejects them).
// Versions: 1 (`to` is a type name string, "FLOAT", "INT64"...), 6 (`to` is the TensorProto
// code), 9, 13 (more types), 19 (attribute `saturate`, which only affects casts to float8
// types, which onnxc does not take: accepted as 0 or 1, no effect), 21, 23 (4-bit types),
// 24 (float8e8m0 and attribute `round_mode`, which only affects casts to it: accepted as
// "up", "down" or "nearest", no effect), 25 (2-bit types), 28 (6-bit float types).
// The meaning for onnxc's dtypes is the same at every opset up to 28.
//
// CastLike (15; 19 saturate; 21, 23, 25 more types; 24 round_mode, as Cast's): the same conversion to the dtype of input
// 1 (target_type), whose values are not read; input 1 may be a runtime input. Not
// index-aligned (input 1's shape is unrelated to the output's), so it is not fused.
#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Cast : public Op {
 public:
  explicit Cast(bool like = false) : like_(like) {}

  void parse(AttrReader& a) override {
    const Node& n = a.node();
    if (like_) {
      if (a.opset() >= 19) check_saturate(n, a.i("saturate", 1));
      if (a.opset() >= 24) check_round_mode(n, a.s("round_mode", "up"));
      return;
    }
    std::optional<int64_t> to;
    if (a.opset() < 6) {
      std::string name = a.s("to", "");
      if (name.empty()) n.invalid("attribute 'to' (a type name before opset 6) is required");
      static const std::pair<const char*, int64_t> names[] = {
          {"FLOAT", 1}, {"UINT8", 2}, {"INT8", 3}, {"UINT16", 4}, {"INT16", 5}, {"INT32", 6}, {"INT64", 7}, {"STRING", 8},
          {"BOOL", 9}, {"FLOAT16", 10}, {"DOUBLE", 11}, {"UINT32", 12}, {"UINT64", 13}, {"COMPLEX64", 14}, {"COMPLEX128", 15}};
      for (auto& [k, v] : names)
        if (name == k) to = v;
      if (!to) n.invalid("attribute 'to' = '" + name + "' is not a tensor element type name");
    } else {
      to = a.opt_i("to");
    }
    if (!to) n.invalid("attribute 'to' is required");
    if (a.opset() >= 19) check_saturate(n, a.i("saturate", 1));
    if (a.opset() >= 24) check_round_mode(n, a.s("round_mode", "up"));
    switch (*to) {
      case 8: n.unsupported("cast to string is not supported");
      case 14: case 15: n.unsupported("cast to complex is not supported");
      case 16: n.unsupported("cast to bfloat16 is not supported");
      default:
        // float8 (19), int4/uint4 (21), float4 (23), float8e8m0 (24), int2/uint2 (25), float6 (28)
        if (*to >= 17 && *to <= 28) n.unsupported(std::string("cast to ") + onnx_type_name(*to) + " is not supported");
        break;
    }
    if (*to != 10 && (*to < 0 || *to > 1000 || !dtype_supported(static_cast<int>(*to))))
      n.invalid("attribute 'to' = " + std::to_string(*to) + " is not a tensor element type");
    to_ = static_cast<DType>(*to);
  }

  static void check_saturate(const Node& n, int64_t sat) {
    if (sat != 0 && sat != 1) n.invalid("attribute 'saturate' must be 0 or 1, got " + std::to_string(sat));
  }
  static void check_round_mode(const Node& n, const std::string& m) {
    if (m != "up" && m != "down" && m != "nearest") n.invalid("attribute 'round_mode' must be \"up\", \"down\" or \"nearest\", got \"" + m + "\"");
  }

  void infer(Node& n) override {
    if (like_) {
      if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects 2 inputs (input, target_type)");
      to_ = n.in(1)->dtype;
    } else if (n.inputs.size() != 1 || !n.in(0)) {
      n.invalid("expects exactly 1 input");
    }
    set_output(n, 0, to_, n.in(0)->shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    if (in[0]->dtype == DType::F16 || to_ == DType::F16) {  // through the float value (Tensor::get/set)
      for (int64_t i = 0, n = out[0].numel(); i < n; ++i) out[0].set(i, in[0]->get(i));
      return;
    }
    bool to_bool = to_ == DType::Bool;
    visit_dtype(in[0]->dtype, [&](auto s) {
      using S = decltype(s);
      visit_dtype(to_, [&](auto d) {
        using D = decltype(d);
        const S* x = in[0]->data<S>();
        D* y = out[0].data<D>();
        for (int64_t i = 0, n = out[0].numel(); i < n; ++i) y[i] = convert_value<D>(x[i], to_bool);
      });
    });
  }


  FusionKind kind() const override { return like_ ? FusionKind::Injective : FusionKind::Elementwise; }
  bool index_aligned() const override { return !like_; }
  int64_t min_opset() const override { return like_ ? 15 : 1; }

 private:
  bool like_;
  DType to_ = DType::F32;
};

}  // namespace

void register_cast(OpTable& t) {
  t["Cast"] = [] { return std::unique_ptr<Op>(std::make_unique<Cast>()); };
  t["CastLike"] = [] { return std::unique_ptr<Op>(std::make_unique<Cast>(true)); };
}

}  // namespace onnxc
