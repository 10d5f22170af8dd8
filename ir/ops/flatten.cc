// ir/ops/flatten.cc — Flatten: reshapes X to 2-D [prod(dims before axis), prod(dims from axis)].
//
// axis defaults to 1 and may be negative (counted from rank); axis == rank is allowed and
// gives [numel, 1], axis 0 gives [1, numel]. Any dtype. The data is unchanged (the C
// kernel is a memcpy; a later aliasing pass may remove it).
// Versions: 1, 9, 11 (negative axis), 13, 21, 23, 24, 25 (dtypes only); same meaning up to opset 28.
#include <fmt/format.h>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Flatten : public Op {
 public:
  void parse(AttrReader& a) override { axis_ = a.i("axis", 1); }

  void infer(Node& n) override {
    if (n.inputs.size() != 1) n.invalid("expects exactly 1 input, got " + std::to_string(n.inputs.size()));
    const Value& x = need_input(n, 0, "input");
    int64_t r = static_cast<int64_t>(x.shape.size());
    int64_t axis = axis_;
    if (axis < -r || axis > r) n.invalid(fmt::format("axis {} is out of range [{}, {}] for rank {}", axis_, -r, r, r));
    if (axis < 0) axis += r;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < r; ++d) (d < axis ? outer : inner) *= x.shape[static_cast<size_t>(d)];
    set_output(n, 0, x.dtype, {outer, inner});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override { copy_all(out[0], *in[0]); }


  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  int64_t axis_ = 1;
};

}  // namespace

void register_flatten(OpTable& t) {
  t["Flatten"] = [] { return std::unique_ptr<Op>(std::make_unique<Flatten>()); };
}

}  // namespace onnxc
