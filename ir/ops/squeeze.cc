// ir/ops/squeeze.cc — Squeeze and Unsqueeze: remove or insert size-1 dimensions. Any dtype.
//
// `axes` is an attribute before opset 13 and a static input 1 from opset 13. Squeeze: axes
// are normalised against the input rank, must be distinct and name size-1 dimensions;
// without axes every size-1 dimension is removed. Unsqueeze: axes are required, normalised
// against the output rank (input rank + number of axes) and distinct, in any order.
// The data is unchanged (the C kernel is a memcpy).
// Versions: 1, 11 (negative axes), 13 (axes input), 21, 23, 24, 25 (dtypes only); same up to 28.
#include <fmt/format.h>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class SqueezeLike : public Op {
 public:
  explicit SqueezeLike(bool unsqueeze) : unsqueeze_(unsqueeze) {}

  void parse(AttrReader& a) override {
    if (a.opset() < 13) axes_attr_ = a.opt_ints("axes");
    else if (a.has("axes")) a.node().invalid("attribute 'axes' became input 1 in opset 13");
  }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    size_t max_in = n.opset < 13 ? 1 : 2;
    if (n.inputs.empty() || n.inputs.size() > max_in)
      n.invalid(fmt::format("expects {} input(s), got {}", max_in == 1 ? "1" : "1 or 2", n.inputs.size()));
    const Value& x = need_input(n, 0, "data");
    std::optional<std::vector<int64_t>> axes = axes_attr_;
    if (n.in(1)) axes = static_ints(n, 1, "axes");
    const Shape& in = x.shape;
    int64_t r = static_cast<int64_t>(in.size());
    Shape out;
    if (unsqueeze_) {
      if (!axes) n.invalid(n.opset < 13 ? "attribute 'axes' is required" : "input 1 (axes) is required");
      int64_t ro = r + static_cast<int64_t>(axes->size());
      std::vector<bool> is_new(static_cast<size_t>(ro), false);
      for (int64_t a : *axes) {
        size_t d = static_cast<size_t>(move_axis(n, a, ro, "axes entry"));
        if (is_new[d]) n.invalid(fmt::format("axes {} repeats axis {}", shape_str(*axes), d));
        is_new[d] = true;
      }
      size_t k = 0;
      for (size_t d = 0; d < is_new.size(); ++d) out.push_back(is_new[d] ? 1 : in[k++]);
    } else {
      std::vector<bool> drop(in.size(), false);
      if (axes) {
        for (int64_t a : *axes) {
          size_t d = static_cast<size_t>(move_axis(n, a, r, "axes entry"));
          if (drop[d]) n.invalid(fmt::format("axes {} repeats axis {}", shape_str(*axes), d));
          if (in[d] != 1) n.invalid(fmt::format("cannot squeeze axis {} of size {} (input shape {})", d, in[d], shape_str(in)));
          drop[d] = true;
        }
      } else {
        for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
      }
      for (size_t d = 0; d < in.size(); ++d)
        if (!drop[d]) out.push_back(in[d]);
    }
    set_output(n, 0, x.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override { copy_all(out[0], *in[0]); }


  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  bool unsqueeze_;
  std::optional<std::vector<int64_t>> axes_attr_;
};

}  // namespace

void register_squeeze(OpTable& t) {
  t["Squeeze"] = [] { return std::unique_ptr<Op>(std::make_unique<SqueezeLike>(false)); };
  t["Unsqueeze"] = [] { return std::unique_ptr<Op>(std::make_unique<SqueezeLike>(true)); };
}

}  // namespace onnxc
