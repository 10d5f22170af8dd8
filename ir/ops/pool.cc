// ir/ops/pool.cc — MaxPool and AveragePool over N x C x D1 x ... x Dr (r >= 1; 1-D, 2-D
// and 3-D are the usual cases, any r works).
//
// Attributes: kernel_shape (required), strides, pads [b1..br, e1..er], dilations,
// auto_pad (NOTSET / SAME_UPPER / SAME_LOWER / VALID: auto_pad overrides pads), ceil_mode
// (explicit pads only; a last window must start inside the input or its left padding, as in
// ONNX Runtime and PyTorch), count_include_pad (AveragePool: the divisor counts padding up to
// the declared pads but never the ceil_mode overhang beyond them), storage_order (MaxPool's
// Indices output: 0 row-major, 1 column-major over the spatial dims).
// Padding never contributes a value: MaxPool skips it, AveragePool divides by the count.
// dtypes: AveragePool float32; MaxPool float32, float64, int8, uint8 (Indices is int64).
// Shape inference resolves the windows (PoolGeom, ir/ops/pool.h); the C kernels are in
// kernels/pool.cc in the C backend.
// Gaps: a window lying entirely in padding (pads >= kernel) yields the dtype's lowest value
// for MaxPool and 0 for AveragePool without count_include_pad.
// Versions: MaxPool 1, 8 (Indices output, storage_order), 10 (ceil_mode, dilations), 11,
// 12 (int8/uint8), 22 (bfloat16); AveragePool 1, 7 (count_include_pad), 10 (ceil_mode), 11,
// 19 (dilations), 22 (bfloat16). Each attribute keeps its meaning from the version that adds
// it; all are read at every opset (a model at an older opset does not set them).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/ops/ops.h"
#include "ir/ops/pool.h"

namespace onnxc {
namespace {


class Pool : public Op {
 public:
  explicit Pool(bool max) { g_.max = max; }

  void parse(AttrReader& a) override {
    auto_pad_ = a.s("auto_pad", "NOTSET");
    kernel_ = a.ints("kernel_shape");
    strides_ = a.ints("strides");
    pads_ = a.ints("pads");
    dilations_ = a.ints("dilations");
    ceil_ = a.i("ceil_mode", 0);
    if (g_.max) g_.storage_order = a.i("storage_order", 0);
    else g_.count_pad = a.i("count_include_pad", 0);
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    if (n.outputs.size() > (g_.max ? 2u : 1u)) n.invalid("too many outputs");
    if (g_.max) expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::U8});
    else expect_float(n, 0);
    const Shape& x = n.in(0)->shape;
    if (x.size() < 3) n.invalid("input " + shape_str(x) + " must have rank >= 3 (N, C, spatial...)");
    size_t r = x.size() - 2;
    auto ranked = [&](const std::vector<int64_t>& v, size_t want, const char* what) {
      if (v.size() != want)
        n.invalid(std::string(what) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(want) +
                  " for input " + shape_str(x));
    };
    if (kernel_.empty()) n.invalid("attribute 'kernel_shape' is required");
    ranked(kernel_, r, "kernel_shape");
    if (!strides_.empty()) ranked(strides_, r, "strides");
    if (!dilations_.empty()) ranked(dilations_, r, "dilations");
    if (!pads_.empty()) ranked(pads_, 2 * r, "pads");
    if (auto_pad_ != "NOTSET" && auto_pad_ != "SAME_UPPER" && auto_pad_ != "SAME_LOWER" && auto_pad_ != "VALID")
      n.invalid("auto_pad '" + auto_pad_ + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    if (ceil_ != 0 && ceil_ != 1) n.invalid("ceil_mode must be 0 or 1, got " + std::to_string(ceil_));
    if (g_.count_pad != 0 && g_.count_pad != 1) n.invalid("count_include_pad must be 0 or 1, got " + std::to_string(g_.count_pad));
    if (g_.storage_order != 0 && g_.storage_order != 1) n.invalid("storage_order must be 0 or 1, got " + std::to_string(g_.storage_order));
    g_.dims.assign(r, PoolDim{});
    Shape y = {x[0], x[1]};
    const int64_t big = int64_t{1} << 31;  // keeps (k - 1) * d and the window math far from overflow
    for (size_t i = 0; i < r; ++i) {
      PoolDim& d = g_.dims[i];
      d.in = x[i + 2];
      d.k = kernel_[i];
      d.s = strides_.empty() ? 1 : strides_[i];
      d.d = dilations_.empty() ? 1 : dilations_[i];
      d.pb = pads_.empty() ? 0 : pads_[i];
      d.pe = pads_.empty() ? 0 : pads_[i + r];
      auto check = [&](int64_t v, int64_t lo, const char* what, const std::vector<int64_t>& all) {
        if (v < lo || v > big) n.invalid(fmt::format("{} [{}]: each value must be in [{}, 2^31]", what, fmt::join(all, ","), lo));
      };
      check(d.k, 1, "kernel_shape", kernel_);
      check(d.s, 1, "strides", strides_);
      check(d.d, 1, "dilations", dilations_);
      check(d.pb, 0, "pads", pads_);
      check(d.pe, 0, "pads", pads_);
      int64_t dk = (d.k - 1) * d.d + 1;
      if (auto_pad_ == "NOTSET" || auto_pad_ == "VALID") {
        if (auto_pad_ == "VALID") d.pb = d.pe = 0;
        int64_t span = d.in + d.pb + d.pe - dk;
        if (span < 0)
          n.invalid(fmt::format("window {} (kernel {}, dilation {}) is larger than padded input dim {} ({} + pads {} + {})", dk,
                                d.k, d.d, d.in + d.pb + d.pe, d.in, d.pb, d.pe));
        if (ceil_ && auto_pad_ == "NOTSET") {
          d.out = (span + d.s - 1) / d.s + 1;
          if ((d.out - 1) * d.s >= d.in + d.pb) --d.out;
        } else {
          d.out = span / d.s + 1;
        }
      } else {
        d.out = (d.in + d.s - 1) / d.s;
        int64_t total = std::max<int64_t>(0, (d.out - 1) * d.s + dk - d.in);
        d.pb = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        d.pe = total - d.pb;
      }
      y.push_back(d.out);
    }
    set_output(n, 0, n.in(0)->dtype, y);
    if (g_.max) set_output(n, 1, DType::I64, y);
  }

  // Flat input index of spatial position p (all inside), for the Indices output.
  int64_t flat_index(int64_t plane, const std::vector<int64_t>& p) const {
    int64_t spatial = 1;
    for (auto& d : g_.dims) spatial *= d.in;
    int64_t idx = 0;
    if (g_.storage_order == 0) {
      for (size_t i = 0; i < g_.dims.size(); ++i) idx = idx * g_.dims[i].in + p[i];
    } else {
      for (size_t i = g_.dims.size(); i-- > 0;) idx = idx * g_.dims[i].in + p[i];
    }
    return plane * spatial + idx;
  }

  void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    size_t r = g_.dims.size();
    int64_t planes = x.shape[0] * x.shape[1], in_sz = 1, out_sz = 1;
    for (auto& d : g_.dims) in_sz *= d.in, out_sz *= d.out;
    bool want_idx = n.out(1) != nullptr;
    double lowest = dtype_is_float(x.dtype) ? -INFINITY : x.dtype == DType::U8 ? 0.0 : -128.0;
    std::vector<int64_t> o(r), k(r), p(r);
    for (int64_t c = 0; c < planes; ++c) {
      for (int64_t oi = 0; oi < out_sz; ++oi) {
        for (size_t i = r, rem = static_cast<size_t>(oi); i-- > 0;) {
          o[i] = static_cast<int64_t>(rem % static_cast<size_t>(g_.dims[i].out));
          rem /= static_cast<size_t>(g_.dims[i].out);
        }
        int64_t taps = 1;
        for (size_t i = 0; i < r; ++i) taps *= g_.dims[i].k;
        double acc = g_.max ? lowest : 0.0;
        int64_t cnt = 0, arg = -1;
        for (int64_t t = 0; t < taps; ++t) {
          for (size_t i = r, rem = static_cast<size_t>(t); i-- > 0;) {
            k[i] = static_cast<int64_t>(rem % static_cast<size_t>(g_.dims[i].k));
            rem /= static_cast<size_t>(g_.dims[i].k);
          }
          bool inside = true;
          int64_t xi = 0;
          for (size_t i = 0; i < r; ++i) {
            p[i] = g_.dims[i].start(o[i]) + k[i] * g_.dims[i].d;
            inside = inside && p[i] >= 0 && p[i] < g_.dims[i].in;
            xi = xi * g_.dims[i].in + p[i];
          }
          if (!inside) continue;
          double v = x.get(c * in_sz + xi);
          if (g_.max) {
            if (arg < 0 || v > acc) arg = flat_index(c, p);
            acc = std::fmax(acc, v);
          } else {
            acc += v;
            ++cnt;
          }
        }
        if (!g_.max) {
          int64_t div = cnt;
          if (g_.count_pad) {
            div = 1;
            for (size_t i = 0; i < r; ++i) div *= g_.dims[i].padded_taps(o[i]);
          }
          acc = div > 0 ? acc / static_cast<double>(div) : 0.0;
        }
        out[0].set(c * out_sz + oi, acc);
        if (want_idx) out[1].set_i64(c * out_sz + oi, arg < 0 ? 0 : arg);
      }
    }
  }






  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }
  const PoolGeom& geom() const { return g_; }

 private:
  std::string auto_pad_;
  std::vector<int64_t> kernel_, strides_, pads_, dilations_;
  int64_t ceil_ = 0;
  PoolGeom g_;
};

std::unique_ptr<Op> make_max() { return std::make_unique<Pool>(true); }
std::unique_ptr<Op> make_avg() { return std::make_unique<Pool>(false); }

}  // namespace

const PoolGeom& pool_geom(const Node& n) { return op_as<Pool>(n).geom(); }

void register_pool(OpTable& t) {
  t["MaxPool"] = make_max;
  t["AveragePool"] = make_avg;
}

}  // namespace onnxc
