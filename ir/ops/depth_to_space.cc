// ir/ops/depth_to_space.cc — DepthToSpace and SpaceToDepth on a 4-D [N, C, H, W] tensor
// with attribute blocksize (required, >= 1); pure permutations of the elements, any dtype.
//   DepthToSpace  [N, C, H, W] → [N, C/bs², H*bs, W*bs]; mode DCR (default): the channel
//                 is (b1*bs + b2)*C' + c; mode CRD (opset 11): c*bs² + b1*bs + b2, where
//                 output (n, c, h*bs + b1, w*bs + b2) reads that channel at (h, w).
//   SpaceToDepth  [N, C, H, W] → [N, C*bs², H/bs, W/bs]; mode DCR (default): output channel
//                 (b1*bs + b2)*C + c; mode CRD (opset 28): c*bs² + b1*bs + b2; that channel
//                 at (h, w) reads (n, c, h*bs + b1, w*bs + b2). Each mode inverts its namesake.
// Both publish the output as a 6-D view with the source strides (SpaceDepthGeom).
// Versions: DepthToSpace 1, 11 (mode), 13, 28 (no change of meaning); SpaceToDepth 1, 13
// (bfloat16), 28 (mode). Same meaning up to opset 28. The C kernel is in kernels/movement.cc
// (a strided copy).
#include <fmt/format.h>

#include "ir/ops/index_ops.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class SpaceDepth : public Op {
 public:
  explicit SpaceDepth(bool to_space) : to_space_(to_space) {}

  void parse(AttrReader& a) override {
    std::optional<int64_t> bs = a.opt_i("blocksize");
    if (!bs) a.node().invalid("attribute 'blocksize' is required");
    if (*bs < 1 || *bs > (int64_t{1} << 20)) a.node().invalid(fmt::format("blocksize {} must be at least 1", *bs));
    bs_ = *bs;
    if (a.opset() >= (to_space_ ? 11 : 28)) {
      std::string m = a.s("mode", "DCR");
      if (m != "DCR" && m != "CRD") a.node().invalid(fmt::format("mode '{}' is not DCR or CRD", m));
      crd_ = m == "CRD";
    }
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1) n.invalid("expects exactly 1 input");
    const Value& x = need_input(n, 0, "input");
    if (x.shape.size() != 4) n.invalid(fmt::format("input {} must be 4-D [N, C, H, W]", shape_str(x.shape)));
    int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], b = bs_;
    // Dims are bounded so that the output dims cannot overflow; for a non-empty X the
    // strides below are products of X's dims (at most numel(X)).
    for (int64_t d : {N, C, H, W})
      if (d > (int64_t{1} << 40) / b) n.unsupported(fmt::format("input {} with blocksize {} is too large", shape_str(x.shape), b));
    Shape out;
    if (to_space_) {
      if (C % (b * b) != 0) n.invalid(fmt::format("channels {} of input {} are not a multiple of blocksize² = {}", C, shape_str(x.shape), b * b));
      int64_t c = C / (b * b);
      out = {N, c, H * b, W * b};
      // output view (n, c', h, b1, w, b2)
      Shape cs = crd_ ? Shape{b * b * H * W, b * H * W, H * W} : Shape{H * W, b * c * H * W, c * H * W};  // c', b1, b2
      g_.dims = {N, c, H, b, W, b};
      g_.src_stride = {C * H * W, cs[0], W, cs[1], 1, cs[2]};
    } else {
      if (H % b != 0 || W % b != 0) n.invalid(fmt::format("height and width of input {} are not multiples of blocksize {}", shape_str(x.shape), b));
      out = {N, C * b * b, H / b, W / b};
      if (crd_) {  // output view (n, c, b1, b2, h', w')
        g_.dims = {N, C, b, b, H / b, W / b};
        g_.src_stride = {C * H * W, H * W, W, 1, b * W, b};
      } else {  // output view (n, b1, b2, c, h', w')
        g_.dims = {N, b, b, C, H / b, W / b};
        g_.src_stride = {C * H * W, W, 1, H * W, b * W, b};
      }
    }
    if (numel(x.shape) == 0) g_.dims = {0}, g_.src_stride = {0};
    set_output(n, 0, x.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    for (int64_t i = 0, total = out[0].numel(); i < total; ++i) {
      Shape p = unravel(i, g_.dims);
      int64_t s = 0;
      for (size_t d = 0; d < p.size(); ++d) s += p[d] * g_.src_stride[d];
      copy_elem(out[0], i, *in[0], s);
    }
  }

  FusionKind kind() const override { return FusionKind::Injective; }
  const SpaceDepthGeom& geom() const { return g_; }

 private:
  bool to_space_;
  bool crd_ = false;
  int64_t bs_ = 1;
  SpaceDepthGeom g_;
};

}  // namespace

const SpaceDepthGeom& space_depth_geom(const Node& n) { return op_as<SpaceDepth>(n).geom(); }

void register_depth_to_space(OpTable& t) {
  t["DepthToSpace"] = [] { return std::unique_ptr<Op>(std::make_unique<SpaceDepth>(true)); };
  t["SpaceToDepth"] = [] { return std::unique_ptr<Op>(std::make_unique<SpaceDepth>(false)); };
}

}  // namespace onnxc
