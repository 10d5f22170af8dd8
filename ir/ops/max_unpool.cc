// ir/ops/max_unpool.cc — MaxUnpool(X, I[, output_shape]) → Y: the partial inverse of
// MaxPool, writing each value of X at the position its index I (MaxPool's Indices output:
// flat over the whole unpooled tensor) names, zeros elsewhere. max_unpool.h has the index
// convention and how output_shape places the result.
// X [N, C, D1..Dk] (k >= 1) float32 or float64, I int64 of X's shape. Attributes:
// kernel_shape (required), strides (default 1), pads (default 0): the unpooled dims are
// (D - 1) * stride - pad_begin - pad_end + kernel, each at least 1. output_shape (11) must
// be a compile-time constant (it fixes Y's shape) of X's rank, with X's N and C; spatial
// dims smaller than the unpooled ones are refused (ONNX's reference cannot place the result
// then, and ONNX Runtime reads the indices differently). Indices are read at run time:
// an out-of-range one is wrapped once and clamped (max_unpool.h), never written outside Y.
// Versions: 9, 11 (output_shape input), 22 (bfloat16). The C kernel is
// kernels/max_unpool.cc.
#include "ir/ops/max_unpool.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class MaxUnpool : public Op {
 public:
  void parse(AttrReader& a) override {
    kernel_ = a.ints("kernel_shape");
    strides_ = a.ints("strides");
    pads_ = a.ints("pads");
  }

  bool static_input(size_t i) const override { return i == 2; }

  void infer(Node& n) override {
    size_t most = n.opset >= 11 ? 3 : 2;
    if (n.inputs.size() < 2 || n.inputs.size() > most)
      n.invalid(fmt::format("expects 2{} inputs (X, I{}), got {}", most == 3 ? " or 3" : "", most == 3 ? "[, output_shape]" : "",
                            n.inputs.size()));
    const Value& x = need_input(n, 0, "X");
    const Value& ix = need_input(n, 1, "I");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    expect_dtype(n, 1, {DType::I64});
    const Shape& xs = x.shape;
    if (xs.size() < 3) n.invalid(fmt::format("X {} must have rank >= 3 (N, C, D1...)", shape_str(xs)));
    if (ix.shape != xs) n.invalid(fmt::format("I {} must have the shape of X {}", shape_str(ix.shape), shape_str(xs)));
    size_t k = xs.size() - 2;
    if (kernel_.empty()) n.invalid("attribute 'kernel_shape' is required");
    auto ranked = [&](const std::vector<int64_t>& v, size_t want, const char* what) {
      if (v.size() != want) n.invalid(fmt::format("{} has {} values, expected {} for X {}", what, v.size(), want, shape_str(xs)));
    };
    ranked(kernel_, k, "kernel_shape");
    if (!strides_.empty()) ranked(strides_, k, "strides");
    if (!pads_.empty()) ranked(pads_, 2 * k, "pads");
    const int64_t big = int64_t{1} << 31;
    g_.in = xs;
    g_.inferred = {xs[0], xs[1]};
    for (size_t d = 0; d < k; ++d) {
      int64_t kd = kernel_[d], s = strides_.empty() ? 1 : strides_[d];
      int64_t pb = pads_.empty() ? 0 : pads_[d], pe = pads_.empty() ? 0 : pads_[d + k];
      if (kd < 1 || kd > big || s < 1 || s > big || pb < 0 || pb > big || pe < 0 || pe > big)
        n.invalid(fmt::format("kernel_shape [{}], strides [{}], pads [{}]: kernel and strides must be in [1, 2^31], pads in [0, 2^31]",
                              fmt::join(kernel_, ","), fmt::join(strides_, ","), fmt::join(pads_, ",")));
      if (xs[d + 2] > big) n.unsupported(fmt::format("X {}: spatial dims above 2^31 are not supported", shape_str(xs)));
      int64_t o = (xs[d + 2] - 1) * s - pb - pe + kd;
      if (xs[d + 2] > 0 && o < 1)
        n.invalid(fmt::format("unpooled dim {} is {} ((in {} - 1) * stride {} - pads {} - {} + kernel {}); it must be at least 1", d + 2, o,
                              xs[d + 2], s, pb, pe, kd));
      g_.inferred.push_back(std::max<int64_t>(o, 0));
    }
    g_.out = g_.inferred;
    if (n.in(2)) {
      std::vector<int64_t> os = static_ints(n, 2, "output_shape");
      if (os.size() != xs.size())
        n.invalid(fmt::format("output_shape [{}] must have {} values (the rank of X {})", fmt::join(os, ","), xs.size(), shape_str(xs)));
      if (os[0] != xs[0] || os[1] != xs[1])
        n.invalid(fmt::format("output_shape [{}] must keep the N and C of X {}", fmt::join(os, ","), shape_str(xs)));
      for (size_t d = 2; d < os.size(); ++d)
        if (os[d] < g_.inferred[d])
          n.unsupported(fmt::format("output_shape [{}] smaller than the unpooled shape {} (from kernel_shape, strides, pads) is not supported",
                                    fmt::join(os, ","), shape_str(g_.inferred)));
      g_.out = os;
    }
    if (ix.constant) {
      const int64_t total = numel(g_.inferred);
      for (int64_t i = 0, e = ix.constant->numel(); i < e; ++i) {
        int64_t v = ix.constant->get_i64(i);
        if (v < -total || v >= total)
          n.invalid(fmt::format("I[{}] = {} is out of range [{}, {}] (unpooled shape {})", i, v, -total, total - 1, shape_str(g_.inferred)));
      }
    }
    set_output(n, 0, x.dtype, g_.out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    const Tensor& ix = *in[1];
    Tensor& y = out[0];
    std::fill(y.bytes.begin(), y.bytes.end(), uint8_t{0});
    const int64_t total = numel(g_.inferred);
    for (int64_t i = 0, e = x.numel(); i < e; ++i) {
      int64_t k = ix.get_i64(i);
      if (k < 0) k += total;
      k = k < 0 ? 0 : k > total - 1 ? total - 1 : k;
      copy_elem(y, ravel(unravel(k, g_.inferred), g_.out), x, i);
    }
  }

  int64_t min_opset() const override { return 9; }
  const MaxUnpoolGeom& geom() const { return g_; }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
  MaxUnpoolGeom g_;
};

}  // namespace

const MaxUnpoolGeom& max_unpool_geom(const Node& n) { return op_as<MaxUnpool>(n).geom(); }

void register_max_unpool(OpTable& t) {
  t["MaxUnpool"] = [] { return std::unique_ptr<Op>(std::make_unique<MaxUnpool>()); };
}

}  // namespace onnxc
