// ir/ops/layout_transform.cc — onnxc.layout_transform, the compiler's own op that re-lays
// out an activation between plain NCHW and NCHW[b]c (ir/layout.h). The layout pass
// (passes/layout.cc) inserts it where a consumer needs another layout than its producer.
//
// Attributes: `from` and `to`, each a block size (0 = plain NCHW); `from` != `to`. The
// logical shape is unchanged (rank >= 3, dim 1 = channels). Plain → blocked zero-fills the
// padding lanes of the last block; blocked → plain drops them; blocked → blocked (another
// block size) goes through the channel index. eval works on the stored form
// (layout_native), so it is a second, independent implementation of ir/layout.cc's
// repacking for the tests to compare against. Emitted C: parallel over (n, channel block),
// the inner loop over positions, lanes innermost (contiguous writes for plain → blocked).
#include <algorithm>

#include "codegen/c_emit.h"
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

  void emit(CEmit& e) const override {
    const Shape& s = e.in_shape(0);
    int64_t N = s[0], C = s[1], S = 1;
    for (size_t d = 2; d < s.size(); ++d) S *= s[d];
    const char* ct = e.in_ctype(0);
    if (N * C * S == 0) return;
    if (to_ != 0 && from_ == 0) {  // plain → blocked: per (n, block), lanes innermost
      int64_t b = to_, CB = (C + b - 1) / b;
      e("ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))");
      e("for (int64_t n = 0; n < {}; ++n) {{", N);
      e("for (int64_t cb = 0; cb < {}; ++cb) {{", CB);
      e("{}* restrict yb = {} + (n * {} + cb) * {};", ct, e.out(0), CB, S * b);
      e("const {}* restrict xb = {} + (n * {} + cb * {}) * {};", ct, e.in(0), C, b, S);
      e("const int64_t lanes = {} - cb * {} < {} ? {} - cb * {} : {};", C, b, b, C, b, b);
      e("for (int64_t p = 0; p < {}; ++p) {{", S);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) yb[p * {} + l] = l < lanes ? xb[l * {} + p] : ({})0;", b, b, S, ct);
      e("}}");
      e("}}");
      e("}}");
      return;
    }
    if (to_ == 0) {  // blocked → plain: per (n, channel), positions innermost
      int64_t b = from_, CB = (C + b - 1) / b;
      e("ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))");
      e("for (int64_t n = 0; n < {}; ++n) {{", N);
      e("for (int64_t c = 0; c < {}; ++c) {{", C);
      e("const {}* restrict xb = {} + ((n * {} + c / {}) * {}) * {} + c % {};", ct, e.in(0), CB, b, S, b, b);
      e("{}* restrict yc = {} + (n * {} + c) * {};", ct, e.out(0), C, S);
      e("for (int64_t p = 0; p < {}; ++p) yc[p] = xb[p * {}];", S, b);
      e("}}");
      e("}}");
      return;
    }
    // blocked → blocked with another block size: per output (n, block, position, lane).
    int64_t bi = from_, bo = to_, CBi = (C + bi - 1) / bi, CBo = (C + bo - 1) / bo;
    e("ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))");
    e("for (int64_t n = 0; n < {}; ++n) {{", N);
    e("for (int64_t cb = 0; cb < {}; ++cb) {{", CBo);
    e("for (int64_t p = 0; p < {}; ++p) {{", S);
    e("for (int64_t l = 0; l < {}; ++l) {{", bo);
    e("const int64_t c = cb * {} + l;", bo);
    e("{}[((n * {} + cb) * {} + p) * {} + l] = c < {} ? {}[((n * {} + c / {}) * {} + p) * {} + c % {}] : ({})0;", e.out(0), CBo, S, bo,
      C, e.in(0), CBi, bi, S, bi, bi, ct);
    e("}}");
    e("}}");
    e("}}");
    e("}}");
  }

  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  int64_t from_ = 0, to_ = 0;
};

}  // namespace

void register_layout_transform(OpTable& t) {
  t["onnxc.layout_transform"] = [] { return std::unique_ptr<Op>(std::make_unique<LayoutTransform>()); };
}

}  // namespace onnxc
