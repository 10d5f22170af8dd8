// ir/ops/transpose.cc — Transpose: output dim d is input dim perm[d]; perm defaults to the
// reversed dimensions. Any dtype.
//
// Versions: 1, 13, 21, 23, 24, 25 (dtypes only); same meaning at every opset up to 28.
#include <fmt/format.h>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Transpose : public Op {
 public:
  void parse(AttrReader& a) override { perm_attr_ = a.opt_ints("perm"); }

  void infer(Node& n) override {
    if (n.inputs.size() != 1) n.invalid("expects exactly 1 input, got " + std::to_string(n.inputs.size()));
    const Value& x = need_input(n, 0, "data");
    size_t r = x.shape.size();
    perm_.clear();
    if (perm_attr_) {
      perm_ = *perm_attr_;
      if (perm_.size() != r) n.invalid(fmt::format("perm {} has {} entries, the input has rank {}", shape_str(perm_), perm_.size(), r));
      std::vector<bool> seen(r, false);
      for (int64_t p : perm_) {
        if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)])
          n.invalid(fmt::format("perm {} is not a permutation of 0..{}", shape_str(perm_), static_cast<int64_t>(r) - 1));
        seen[static_cast<size_t>(p)] = true;
      }
    } else {
      for (size_t d = r; d-- > 0;) perm_.push_back(static_cast<int64_t>(d));
    }
    Shape out(r);
    for (size_t d = 0; d < r; ++d) out[d] = x.shape[static_cast<size_t>(perm_[d])];
    set_output(n, 0, x.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& is = in[0]->shape;
    const Shape& os = out[0].shape;
    Shape src(is.size());
    for (int64_t i = 0, total = out[0].numel(); i < total; ++i) {
      Shape o = unravel(i, os);
      for (size_t d = 0; d < os.size(); ++d) src[static_cast<size_t>(perm_[d])] = o[d];
      copy_elem(out[0], i, *in[0], ravel(src, is));
    }
  }


  FusionKind kind() const override { return FusionKind::Injective; }
  const std::vector<int64_t>& perm() const { return perm_; }

 private:
  std::optional<std::vector<int64_t>> perm_attr_;
  std::vector<int64_t> perm_;  // normalised, set by infer
};

}  // namespace

const std::vector<int64_t>& transpose_perm(const Node& n) { return op_as<Transpose>(n).perm(); }

void register_transpose(OpTable& t) {
  t["Transpose"] = [] { return std::unique_ptr<Op>(std::make_unique<Transpose>()); };
}

}  // namespace onnxc
