// ir/ops/reshape.cc — Reshape: same data, new shape (opset 5+ form: the shape is input 1).
//
// The shape input must be a compile-time constant (it usually is, after the folding of
// Shape → Gather → Unsqueeze → Concat subgraphs). Entries: -1 (at most one) takes the
// remaining size; 0 copies the input dimension at the same index, unless allowzero=1
// (opset 14), where 0 is a literal zero (and then -1 may not appear with a 0). Any dtype.
// The data is unchanged (the C kernel is a memcpy).
// Versions: 1 (the shape is attribute `shape`; consumed_inputs accepted, no effect), 5 (input
// 1), 13, 14 (allowzero), 19, 21, 23, 24, 25 (dtypes only); same meaning up to opset 28.
#include <fmt/format.h>

#include <limits>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Reshape : public Op {
 public:
  void parse(AttrReader& a) override {
    if (a.opset() < 5) {
      a.ignore("consumed_inputs");
      shape_attr_ = a.opt_ints("shape");
      if (!shape_attr_) a.node().invalid("attribute 'shape' is required before opset 5");
    } else {
      allowzero_ = a.i("allowzero", 0);
    }
  }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    size_t want = shape_attr_ ? 1 : 2;
    if (n.inputs.size() != want)
      n.invalid(fmt::format("expects {} input{}, got {}", want, want == 1 ? " (data; the shape is an attribute before opset 5)" : "s (data, shape)",
                            n.inputs.size()));
    if (allowzero_ != 0 && allowzero_ != 1) n.invalid(fmt::format("allowzero must be 0 or 1, got {}", allowzero_));
    const Value& x = need_input(n, 0, "data");
    std::vector<int64_t> req;
    if (shape_attr_) {
      req = *shape_attr_;
    } else {
      need_input(n, 1, "shape");
      req = static_ints(n, 1, "shape");
    }
    const Shape& in = x.shape;
    Shape out(req.size());
    int64_t minus_one = -1, known = 1;
    bool has_zero = false;
    for (size_t d = 0; d < req.size(); ++d) {
      int64_t v = req[d];
      if (v == -1) {
        if (minus_one >= 0) n.invalid("shape " + shape_str(req) + " has more than one -1");
        minus_one = static_cast<int64_t>(d);
        continue;
      }
      if (v < -1) n.invalid(fmt::format("shape {} has invalid entry {}", shape_str(req), v));
      if (v == 0 && !allowzero_) {
        if (d >= in.size())
          n.invalid(fmt::format("shape {} has 0 at index {}, beyond the input rank {}", shape_str(req), d, in.size()));
        v = in[d];
      }
      if (v == 0) has_zero = true;
      out[d] = v;
      if (v != 0 && known > std::numeric_limits<int64_t>::max() / v)
        n.invalid("shape " + shape_str(req) + " has too many elements");
      known *= v;
    }
    int64_t total = numel(in);
    if (minus_one >= 0) {
      if (allowzero_ && has_zero) n.invalid("shape " + shape_str(req) + " has both 0 and -1 with allowzero=1");
      if (known == 0 || total % known != 0)
        n.invalid(fmt::format("cannot reshape {} ({} elements) to {}", shape_str(in), total, shape_str(req)));
      out[static_cast<size_t>(minus_one)] = total / known;
    } else if (known != total) {
      n.invalid(fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", shape_str(in), total, shape_str(out), known));
    }
    set_output(n, 0, x.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override { copy_all(out[0], *in[0]); }


  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  int64_t allowzero_ = 0;
  std::optional<std::vector<int64_t>> shape_attr_;  // opset < 5
};

}  // namespace

void register_reshape(OpTable& t) {
  t["Reshape"] = [] { return std::unique_ptr<Op>(std::make_unique<Reshape>()); };
}

}  // namespace onnxc
