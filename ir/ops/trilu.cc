// ir/ops/trilu.cc — Trilu: the upper (attribute upper, default 1) or lower triangle of each
// matrix in the last two dims of X (rank >= 2), the rest set to 0. Input 1 `k` (optional,
// a one-element int64 tensor, default 0) shifts the diagonal: upper keeps j - i >= k,
// lower keeps j - i <= k. k must be a constant (it is read at compile time). Any dtype.
// Versions: 14 only; same meaning up to opset 28. The C kernel is kernels/trilu.cc.
//
// EyeLike(input): a 2-D tensor of input's shape (its values are not read), 1 on the
// diagonal shifted by attribute k (default 0: where j - i == k), 0 elsewhere; attribute
// dtype (default: the input's). Versions: 9 only; same meaning up to opset 28.
#include <fmt/format.h>

#include <cstring>

#include "ir/ops/index_ops.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Trilu : public Op {
 public:
  void parse(AttrReader& a) override {
    int64_t u = a.i("upper", 1);
    if (u != 0 && u != 1) a.node().invalid(fmt::format("attribute 'upper' must be 0 or 1, got {}", u));
    g_.upper = u == 1;
  }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    if (n.inputs.empty() || n.inputs.size() > 2) n.invalid("expects inputs input and optional k");
    const Value& x = need_input(n, 0, "input");
    if (x.shape.size() < 2) n.invalid(fmt::format("input {} must have rank >= 2", shape_str(x.shape)));
    g_.k = 0;
    if (n.in(1)) {
      std::vector<int64_t> k = static_ints(n, 1, "k");
      if (k.size() != 1) n.invalid(fmt::format("k must have exactly one element, got {}", k.size()));
      g_.k = k[0];
    }
    g_.rows = x.shape[x.shape.size() - 2];
    g_.cols = x.shape.back();
    g_.batch = 1;
    for (size_t d = 0; d + 2 < x.shape.size(); ++d) g_.batch *= x.shape[d];
    set_output(n, 0, x.dtype, x.shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    copy_all(out[0], *in[0]);
    size_t es = dtype_size(out[0].dtype);
    for (int64_t b = 0; b < g_.batch; ++b)
      for (int64_t i = 0; i < g_.rows; ++i)
        for (int64_t j = 0; j < g_.cols; ++j) {
          bool keep = g_.upper ? j - i >= g_.k : j - i <= g_.k;
          if (!keep) std::memset(out[0].bytes.data() + static_cast<size_t>((b * g_.rows + i) * g_.cols + j) * es, 0, es);
        }
  }

  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t min_opset() const override { return 14; }
  const TriluGeom& geom() const { return g_; }

 private:
  TriluGeom g_;
};

class EyeLike : public Op {
 public:
  void parse(AttrReader& a) override {
    g_.k = a.i("k", 0);
    if (std::optional<int64_t> t = a.opt_i("dtype")) {
      if (*t < 0 || *t > 1000 || !dtype_supported(static_cast<int>(*t)))
        a.node().unsupported(fmt::format("dtype {} is not a tensor element type onnxc takes", *t));
      dtype_ = static_cast<DType>(*t);
    }
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1) n.invalid("expects exactly 1 input");
    const Value& x = need_input(n, 0, "input");
    if (x.shape.size() != 2) n.invalid(fmt::format("input {} must be 2-D", shape_str(x.shape)));
    g_.rows = x.shape[0];
    g_.cols = x.shape[1];
    set_output(n, 0, dtype_ == DType::Undefined ? x.dtype : dtype_, x.shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>&, std::vector<Tensor>& out) const override {
    for (int64_t i = 0; i < g_.rows; ++i)
      for (int64_t j = 0; j < g_.cols; ++j) out[0].set(i * g_.cols + j, j - i == g_.k ? 1 : 0);
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 9; }
  const TriluGeom& geom() const { return g_; }

 private:
  DType dtype_ = DType::Undefined;
  TriluGeom g_;
};

}  // namespace

const TriluGeom& trilu_geom(const Node& n) { return op_as<Trilu>(n).geom(); }
const TriluGeom& eyelike_geom(const Node& n) { return op_as<EyeLike>(n).geom(); }

void register_trilu(OpTable& t) {
  t["Trilu"] = [] { return std::unique_ptr<Op>(std::make_unique<Trilu>()); };
  t["EyeLike"] = [] { return std::unique_ptr<Op>(std::make_unique<EyeLike>()); };
}

}  // namespace onnxc
