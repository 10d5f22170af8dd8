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
// Versions: 1, 11 (negative indices), 13 (bfloat16); same meaning up to opset 28.
#include <fmt/format.h>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

constexpr int64_t kMaxBaked = 4096;

class Gather : public Op {
 public:
  void parse(AttrReader& a) override { axis_attr_ = a.i("axis", 0); }

  // Indices are baked into the code when constant and small (decided in infer).
  bool static_input(size_t i) const override { return i == 1 && g_.baked; }

  void infer(Node& n) override {
    if (n.inputs.size() != 2) n.invalid("expects 2 inputs (data, indices), got " + std::to_string(n.inputs.size()));
    const Value& x = need_input(n, 0, "data");
    const Value& ix = need_input(n, 1, "indices");
    if (ix.dtype != DType::I64 && ix.dtype != DType::I32)
      n.invalid(fmt::format("indices must be int32 or int64, got {}", dtype_name(ix.dtype)));
    int64_t r = static_cast<int64_t>(x.shape.size());
    if (r == 0) n.invalid("data must have rank >= 1");
    g_.axis = move_axis(n, axis_attr_, r, "axis");
    int64_t dim = x.shape[static_cast<size_t>(g_.axis)];
    int64_t k = numel(ix.shape);
    if (dim == 0 && k > 0) n.invalid(fmt::format("cannot gather {} indices from an axis of size 0", k));
    g_.idx.clear();
    g_.baked = false;
    if (ix.constant) {
      g_.idx = ix.constant->to_i64();
      for (int64_t& v : g_.idx) {
        if (v < -dim || v >= dim) n.invalid(fmt::format("index {} is out of range [{}, {}] (axis {} of {})", v, -dim, dim - 1, g_.axis, shape_str(x.shape)));
        if (v < 0) v += dim;
      }
      g_.baked = k <= kMaxBaked;
    }
    Shape out(x.shape.begin(), x.shape.begin() + g_.axis);
    out.insert(out.end(), ix.shape.begin(), ix.shape.end());
    out.insert(out.end(), x.shape.begin() + g_.axis + 1, x.shape.end());
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
    size_t a = static_cast<size_t>(g_.axis);
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


  FusionKind kind() const override { return FusionKind::Injective; }
  const GatherGeom& geom() const { return g_; }

 private:
  int64_t axis_attr_ = 0;
  GatherGeom g_;  // set by infer
};

}  // namespace

const GatherGeom& gather_geom(const Node& n) { return op_as<Gather>(n).geom(); }

void register_gather(OpTable& t) {
  t["Gather"] = [] { return std::unique_ptr<Op>(std::make_unique<Gather>()); };
}

}  // namespace onnxc
