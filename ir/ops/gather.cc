// ir/ops/gather.cc — Gather: out[o, j..., i] = data[o, indices[j...], i] along `axis`
// (default 0, may be negative). Any data dtype; indices int32 or int64 of any rank (a
// scalar index drops the axis); negative indices count from the end of the axis.
//
// Constant indices (the common case) are checked at compile time (out of range is an
// invalid model) and baked into the C code: an arithmetic progression (a single index, a
// range, a strided range) becomes a strided copy, anything else a static index table of
// up to kMaxBaked entries; larger constant index tensors go to the weights like runtime
// indices. Runtime indices are read in the C code, negative ones wrapped once, and then
// CLAMPED to [0, dim-1]: an out-of-range runtime index reads the nearest valid slice
// instead of memory outside the tensor (ONNX leaves it undefined; the reference eval does
// the same so --verify agrees). The innermost contiguous block is copied with memcpy.
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

constexpr int64_t kMaxBaked = 4096;

class Gather : public Op {
 public:
  void parse(AttrReader& a) override { axis_attr_ = a.i("axis", 0); }

  // Indices are baked into the code when constant and small (decided in infer).
  bool static_input(size_t i) const override { return i == 1 && baked_; }

  void infer(Node& n) override {
    if (n.inputs.size() != 2) n.invalid("expects 2 inputs (data, indices), got " + std::to_string(n.inputs.size()));
    const Value& x = need_input(n, 0, "data");
    const Value& ix = need_input(n, 1, "indices");
    if (ix.dtype != DType::I64 && ix.dtype != DType::I32)
      n.invalid(fmt::format("indices must be int32 or int64, got {}", dtype_name(ix.dtype)));
    int64_t r = static_cast<int64_t>(x.shape.size());
    if (r == 0) n.invalid("data must have rank >= 1");
    axis_ = move_axis(n, axis_attr_, r, "axis");
    int64_t dim = x.shape[static_cast<size_t>(axis_)];
    int64_t k = numel(ix.shape);
    if (dim == 0 && k > 0) n.invalid(fmt::format("cannot gather {} indices from an axis of size 0", k));
    idx_.clear();
    baked_ = false;
    if (ix.constant) {
      idx_ = ix.constant->to_i64();
      for (int64_t& v : idx_) {
        if (v < -dim || v >= dim) n.invalid(fmt::format("index {} is out of range [{}, {}] (axis {} of {})", v, -dim, dim - 1, axis_, shape_str(x.shape)));
        if (v < 0) v += dim;
      }
      baked_ = k <= kMaxBaked;
    }
    Shape out(x.shape.begin(), x.shape.begin() + axis_);
    out.insert(out.end(), ix.shape.begin(), ix.shape.end());
    out.insert(out.end(), x.shape.begin() + axis_ + 1, x.shape.end());
    set_output(n, 0, x.dtype, out);
  }

  // Shared with the C code: wrap a negative index once, then clamp to [0, dim-1].
  static int64_t fix_index(int64_t v, int64_t dim) {
    if (v < 0) v += dim;
    return v < 0 ? 0 : v >= dim ? dim - 1 : v;
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    const Tensor& ix = *in[1];
    size_t a = static_cast<size_t>(axis_);
    size_t kr = ix.shape.size();
    int64_t dim = x.shape[a];
    const Shape& os = out[0].shape;
    for (int64_t i = 0, total = out[0].numel(); i < total; ++i) {
      Shape o = unravel(i, os);
      // out index = [outer dims (a), index dims (kr), inner dims]; the source has one axis dim.
      Shape jdx(o.begin() + static_cast<std::ptrdiff_t>(a), o.begin() + static_cast<std::ptrdiff_t>(a + kr));
      Shape src(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(a));
      src.push_back(fix_index(ix.get_i64(ravel(jdx, ix.shape)), dim));
      src.insert(src.end(), o.begin() + static_cast<std::ptrdiff_t>(a + kr), o.end());
      copy_elem(out[0], i, x, ravel(src, x.shape));
    }
  }

  void emit(CEmit& e) const override {
    const Shape& xs = e.in_shape(0);
    int64_t outer = 1, inner = 1, dim = xs[static_cast<size_t>(axis_)];
    for (size_t d = 0; d < xs.size(); ++d)
      if (static_cast<int64_t>(d) < axis_) outer *= xs[d];
      else if (static_cast<int64_t>(d) > axis_) inner *= xs[d];
    int64_t k = numel(e.in_shape(1));
    if (outer * k * inner == 0) return;
    DType t = e.out_dtype(0);
    const char* ct = dtype_ctype(t);
    if (baked_) {
      int64_t step = k > 1 ? idx_[1] - idx_[0] : 1;
      bool progression = true;
      for (int64_t j = 1; j < k && progression; ++j) progression = idx_[static_cast<size_t>(j)] - idx_[static_cast<size_t>(j - 1)] == step;
      if (progression) {
        StridedView dv{0, {k * inner, inner, 1}}, sv{idx_[0] * inner, {dim * inner, step * inner, 1}};
        emit_strided_copy(e, e.out(0), dv, e.in(0), sv, {outer, k, inner}, t);
        return;
      }
      bool small = dim <= INT32_MAX;
      e("static const {} idx[{}] = {{", small ? "int32_t" : "int64_t", k);
      for (int64_t j0 = 0; j0 < k; j0 += 16) {
        std::string row;
        for (int64_t j = j0; j < std::min(k, j0 + 16); ++j) row += (j == j0 ? "" : ", ") + std::to_string(idx_[static_cast<size_t>(j)]);
        e("{}{}", row, j0 + 16 < k ? "," : "");
      }
      e("}};");
    }
    bool big = outer * k * inner >= (int64_t{1} << 16);
    std::string dst_row, src_row;  // element offsets of the output row (o, j) and input row (o, q)
    if (outer > 1) {
      if (big) e("ONNXC_PRAGMA(omp parallel for)");
      e("for (int64_t o = 0; o < {}; ++o) {{", outer);
      dst_row = fmt::format("(o * {} + j)", k);
      src_row = fmt::format("(o * {} + q)", dim);
    } else {
      dst_row = "j";
      src_row = "q";
    }
    if (outer == 1 && big) e("ONNXC_PRAGMA(omp parallel for)");
    e("for (int64_t j = 0; j < {}; ++j) {{", k);
    if (baked_) {
      e("const int64_t q = idx[j];");
    } else {
      e("int64_t q = (int64_t){}[j];", e.in(1));
      e("if (q < 0) q += {};", dim);
      e("q = q < 0 ? 0 : q > {0} ? {0} : q; /* out-of-range indices are clamped */", dim - 1);
    }
    if (inner == 1) e("{}[{}] = {}[{}];", e.out(0), dst_row, e.in(0), src_row);
    else e("memcpy({} + {} * {}, {} + {} * {}, {} * sizeof({}));", e.out(0), dst_row, inner, e.in(0), src_row, inner, inner, ct);
    e("}}");
    if (outer > 1) e("}}");
  }

  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  int64_t axis_attr_ = 0, axis_ = 0;
  bool baked_ = false;
  std::vector<int64_t> idx_;  // constant indices, normalised to [0, dim), set by infer
};

}  // namespace

void register_gather(OpTable& t) {
  t["Gather"] = [] { return std::unique_ptr<Op>(std::make_unique<Gather>()); };
}

}  // namespace onnxc
