// ir/ops/concat.cc — Concat: joins N inputs along `axis` (required; negative counts from
// the rank). Any dtype; all inputs share dtype, rank and every dimension except `axis`.
//
// The C code copies each input as [outer, axis_k * inner] rows into its slot of the output
// rows: one memcpy per row (one memcpy in all for axis 0). Empty inputs emit nothing.
// NCHWc (axis 1, every input but the last a whole number of channel blocks): the same
// copies over whole blocks, one run per input and image (emit_nchwc).
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Concat : public Op {
 public:
  void parse(AttrReader& a) override {
    auto axis = a.opt_i("axis");
    if (!axis) a.node().invalid("attribute 'axis' is required");
    axis_attr_ = *axis;
  }

  void infer(Node& n) override {
    if (n.inputs.empty()) n.invalid("expects at least 1 input");
    const Value& x0 = need_input(n, 0, "inputs");
    int64_t r = static_cast<int64_t>(x0.shape.size());
    if (r == 0) n.invalid("cannot concatenate scalars (rank 0)");
    axis_ = move_axis(n, axis_attr_, r, "axis");
    Shape out = x0.shape;
    out[static_cast<size_t>(axis_)] = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& x = need_input(n, k, "inputs");
      if (x.dtype != x0.dtype)
        n.invalid(fmt::format("input {} has dtype {}, input 0 has {}", k, dtype_name(x.dtype), dtype_name(x0.dtype)));
      bool ok = x.shape.size() == x0.shape.size();
      for (size_t d = 0; ok && d < x.shape.size(); ++d) ok = static_cast<int64_t>(d) == axis_ || x.shape[d] == x0.shape[d];
      if (!ok)
        n.invalid(fmt::format("input {} has shape {}, which does not match input 0 {} outside axis {}", k, shape_str(x.shape),
                              shape_str(x0.shape), axis_));
      out[static_cast<size_t>(axis_)] += x.shape[static_cast<size_t>(axis_)];
    }
    set_output(n, 0, x0.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& os = out[0].shape;
    int64_t off = 0;
    for (const Tensor* x : in) {
      for (int64_t i = 0, total = x->numel(); i < total; ++i) {
        Shape idx = unravel(i, x->shape);
        idx[static_cast<size_t>(axis_)] += off;
        copy_elem(out[0], ravel(idx, os), *x, i);
      }
      off += x->shape[static_cast<size_t>(axis_)];
    }
  }

  // NCHWc: channel concatenation where every input but the last fills whole blocks, so each
  // input is a run of whole blocks of the output (the last one's padding lanes become the
  // output's).
  bool supports_nchwc(const Node& n, int64_t b) const override {
    if (axis_ != 1 || b < 1 || n.out(0)->shape.size() < 3) return false;
    for (size_t k = 0; k + 1 < n.inputs.size(); ++k)
      if (n.in(k)->shape[1] % b != 0) return false;
    return true;
  }

  // Per image, input k's ceil(C_k/b) blocks × positions × b lanes are one contiguous run.
  void emit_nchwc(CEmit& e) const {
    const Shape& os = e.out_shape(0);
    const int64_t b = e.out_layout(0).block;
    int64_t inner = 1;
    for (size_t d = 2; d < os.size(); ++d) inner *= os[d];
    const int64_t row = ceil_div_pos(os[1], b) * inner * b;  // one image of the output
    int64_t off = 0;
    for (size_t k = 0; k < e.node.inputs.size(); ++k) {
      ONNXC_ASSERT(e.in_layout(k) == Layout::nchwc(b) && (k + 1 == e.node.inputs.size() || e.in_shape(k)[1] % b == 0),
                   "NCHWc concat input " + e.node.in(k)->type_str());
      int64_t len = ceil_div_pos(e.in_shape(k)[1], b) * inner * b;
      StridedView dv{off, {row, 1}}, sv{0, {len, 1}};
      emit_strided_copy(e, e.out(0), dv, e.in(k), sv, {os[0], len}, e.out_dtype(0));
      off += len;
    }
  }

  void emit(CEmit& e) const override {
    if (e.out_layout(0).is_nchwc()) return emit_nchwc(e);
    const Shape& os = e.out_shape(0);
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < os.size(); ++d)
      if (static_cast<int64_t>(d) < axis_) outer *= os[d];
      else if (static_cast<int64_t>(d) > axis_) inner *= os[d];
    int64_t row = os[static_cast<size_t>(axis_)] * inner, off = 0;
    for (size_t k = 0; k < e.node.inputs.size(); ++k) {
      int64_t len = e.in_shape(k)[static_cast<size_t>(axis_)] * inner;
      StridedView dv{off, {row, 1}}, sv{0, {len, 1}};
      emit_strided_copy(e, e.out(0), dv, e.in(k), sv, {outer, len}, e.out_dtype(0));
      off += len;
    }
  }

  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  int64_t axis_attr_ = 0, axis_ = 0;
};

}  // namespace

void register_concat(OpTable& t) {
  t["Concat"] = [] { return std::unique_ptr<Op>(std::make_unique<Concat>()); };
}

}  // namespace onnxc
