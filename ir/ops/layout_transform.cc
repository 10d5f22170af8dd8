// ir/ops/layout_transform.cc — onnxc.layout_transform, the compiler's own op that re-lays
// out an activation between plain NCHW and NCHW[b]c (ir/layout.h). The layout pass
// (passes/layout.cc) inserts it where a consumer needs another layout than its producer.
//
// Attributes: `from` and `to`, each a block size (0 = plain NCHW); `from` != `to`. The
// logical shape is unchanged (rank >= 3, dim 1 = channels). Plain → blocked zero-fills the
// padding lanes of the last block; blocked → plain drops them; blocked → blocked (another
// block size) goes through the channel index. eval works on the stored form
// (layout_native), so it is a second, independent implementation of ir/layout.cc's
// repacking for the tests to compare against. The C kernel is
// kernels/layout_transform.cc in the C backend.
#include <algorithm>

#include "ir/ops/layout_transform.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class LayoutTransform : public Op {
 public:
  void parse(AttrReader& a) override {
    from_ = a.i("from", 0);
    to_ = a.i("to", 0);
    for (int64_t b : {from_, to_})
      if (b < 0 || b > 4096 || (b & (b - 1)) != 0) a.node().invalid("block " + std::to_string(b) + " is not 0 or a power of two");
    if (from_ == to_) a.node().invalid("from and to are the same layout");
  }

  static Layout layout_of(int64_t b) { return b == 0 ? Layout::plain() : Layout::nchwc(b); }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    Value* x = n.in(0);
    if (x->shape.size() < 3) n.invalid("input rank " + std::to_string(x->shape.size()) + " < 3");
    if (x->layout != layout_of(from_))
      n.invalid("input is stored as '" + x->layout.str(x->shape.size()) + "', the node converts from '" +
                layout_of(from_).str(x->shape.size()) + "'");
    set_output(n, 0, x->dtype, x->shape);
    n.out(0)->layout = layout_of(to_);
  }

  bool layout_native() const override { return true; }

  // Stored flat index of logical element (n, c, s) in block layout b (0 = plain).
  static int64_t index(int64_t b, int64_t n, int64_t c, int64_t s, int64_t C, int64_t S) {
    if (b == 0) return (n * C + c) * S + s;
    int64_t CB = (C + b - 1) / b;
    return ((n * CB + c / b) * S + s) * b + c % b;
  }

  void eval(const Node& nd, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& s = nd.in(0)->shape;
    int64_t N = s[0], C = s[1], S = 1;
    for (size_t d = 2; d < s.size(); ++d) S *= s[d];
    size_t es = dtype_size(in[0]->dtype);
    std::fill(out[0].bytes.begin(), out[0].bytes.end(), 0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < S; ++p)
          std::copy_n(&in[0]->bytes[static_cast<size_t>(index(from_, n, c, p, C, S)) * es], es,
                      &out[0].bytes[static_cast<size_t>(index(to_, n, c, p, C, S)) * es]);
  }


  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t from() const { return from_; }
  int64_t to() const { return to_; }

 private:
  int64_t from_ = 0, to_ = 0;
};

}  // namespace

LayoutTransformBlocks layout_transform_blocks(const Node& n) {
  const auto& op = op_as<LayoutTransform>(n);
  return {op.from(), op.to()};
}

void register_layout_transform(OpTable& t) {
  t["onnxc.layout_transform"] = [] { return std::unique_ptr<Op>(std::make_unique<LayoutTransform>()); };
}

}  // namespace onnxc
