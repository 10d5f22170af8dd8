// ir/ops/roi_align.cc — RoiAlign(X, rois, batch_indices) → Y: for each region of interest r
// (rois[r] = x1, y1, x2, y2 in input coordinates times spatial_scale, on image
// batch_indices[r] of X), a PH x PW grid of bins, each the average (mode avg, default) or
// the maximum (mode max) of bilinear samples of X; roi_align.h has the arithmetic, shared
// with the C kernel (kernels/roi_align.cc).
// Attributes: mode (avg, max), output_height PH and output_width PW (default 1, >= 1),
// sampling_ratio (samples per bin along each axis; 0 (default): ceil(roi size / bins), per
// roi at run time), spatial_scale (default 1), coordinate_transformation_mode (16:
// half_pixel (default) or output_half_pixel; RoiAlign-10 has no such attribute and behaves as
// output_half_pixel).
// X and rois float32 or float64 (the same), batch_indices int64 (int32 accepted). The
// indices are read at run time; one outside [0, N) is CLAMPED to [0, N - 1] (the nearest
// image, as Gather clamps its runtime indices) instead of reading outside X; constant ones
// are checked here (out of range: an invalid model).
// Versions: 10, 16 (coordinate_transformation_mode, default half_pixel), 22 (bfloat16).
// Gaps: the sample count of a bin is not bounded beyond kRoiAlignMaxGrid per axis: a huge roi
// with sampling_ratio 0 takes long (as in ONNX Runtime).
#include "ir/ops/roi_align.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class RoiAlign : public Op {
 public:
  void parse(AttrReader& a) override {
    const Node& n = a.node();
    std::string m = a.s("mode", "avg");
    if (m != "avg" && m != "max") n.invalid(fmt::format("mode '{}' is not one of avg, max", m));
    g_.max = m == "max";
    g_.PH = a.i("output_height", 1);
    g_.PW = a.i("output_width", 1);
    if (g_.PH < 1 || g_.PW < 1) n.invalid(fmt::format("output_height {} and output_width {} must be at least 1", g_.PH, g_.PW));
    g_.sampling_ratio = a.i("sampling_ratio", 0);
    if (g_.sampling_ratio < 0 || g_.sampling_ratio > kRoiAlignMaxGrid)
      n.invalid(fmt::format("sampling_ratio {} is not in [0, 2^30]", g_.sampling_ratio));
    g_.scale = a.f("spatial_scale", 1.0);
    g_.half_pixel = false;
    if (a.opset() >= 16) {
      std::string c = a.s("coordinate_transformation_mode", "half_pixel");
      if (c != "half_pixel" && c != "output_half_pixel")
        n.invalid(fmt::format("coordinate_transformation_mode '{}' is not one of half_pixel, output_half_pixel", c));
      g_.half_pixel = c == "half_pixel";
    }
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 3) n.invalid(fmt::format("expects 3 inputs (X, rois, batch_indices), got {}", n.inputs.size()));
    const Value& x = need_input(n, 0, "X");
    const Value& rois = need_input(n, 1, "rois");
    const Value& bi = need_input(n, 2, "batch_indices");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    if (rois.dtype != x.dtype)
      n.invalid(fmt::format("rois has dtype {}, X has {} (they must match)", dtype_name(rois.dtype), dtype_name(x.dtype)));
    expect_dtype(n, 2, {DType::I64, DType::I32});
    const Shape& xs = x.shape;
    if (xs.size() != 4) n.invalid(fmt::format("X {} must be 4-D (N, C, H, W)", shape_str(xs)));
    if (rois.shape.size() != 2 || rois.shape[1] != 4) n.invalid(fmt::format("rois {} must have shape [num_rois, 4]", shape_str(rois.shape)));
    g_.R = rois.shape[0];
    if (bi.shape != Shape{g_.R})
      n.invalid(fmt::format("batch_indices {} must have shape [{}] (one per roi of rois {})", shape_str(bi.shape), g_.R,
                            shape_str(rois.shape)));
    g_.N = xs[0], g_.C = xs[1], g_.H = xs[2], g_.W = xs[3];
    if (bi.constant)
      for (int64_t r = 0; r < g_.R; ++r) {
        int64_t b = bi.constant->get_i64(r);
        if (b < 0 || b >= g_.N) n.invalid(fmt::format("batch_indices[{}] = {} is out of range [0, {}) (X {})", r, b, g_.N, shape_str(xs)));
      }
    set_output(n, 0, x.dtype, {g_.R, g_.C, g_.PH, g_.PW});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    if (in[0]->dtype == DType::F64) run<double>(*in[0], *in[1], *in[2], out[0]);
    else run<float>(*in[0], *in[1], *in[2], out[0]);
  }

  int64_t min_opset() const override { return 10; }
  const RoiAlignGeom& geom() const { return g_; }

 private:
  // The sample count along one axis from ceil(roi size / bins) (roi_align.h).
  template <class T>
  static int64_t grid_count(T v) {
    T c = std::ceil(v);
    return !(c >= 1) ? 0 : c > static_cast<T>(kRoiAlignMaxGrid) ? kRoiAlignMaxGrid : static_cast<int64_t>(c);
  }

  template <class T>
  void run(const Tensor& X, const Tensor& rois, const Tensor& bi, Tensor& Y) const {
    const RoiAlignGeom& g = g_;
    const T* xd = X.data<T>();
    const T* rd = rois.data<T>();
    T* yd = Y.data<T>();
    const int64_t plane = g.H * g.W, bins = g.PH * g.PW;
    std::fill(yd, yd + Y.numel(), T(0));
    if (X.numel() == 0) return;
    const T scale = static_cast<T>(g.scale), off = g.half_pixel ? T(0.5) : T(0);
    for (int64_t r = 0; r < g.R; ++r) {
      int64_t b = bi.get_i64(r);
      b = b < 0 ? 0 : b > g.N - 1 ? g.N - 1 : b;
      const T* xb = xd + b * g.C * plane;
      T* yr = yd + r * g.C * bins;
      const T sw = rd[r * 4] * scale - off, sh = rd[r * 4 + 1] * scale - off;
      const T ew = rd[r * 4 + 2] * scale - off, eh = rd[r * 4 + 3] * scale - off;
      T rw = ew - sw, rh = eh - sh;
      if (!g.half_pixel) {
        rw = rw < T(1) ? T(1) : rw;
        rh = rh < T(1) ? T(1) : rh;
      }
      const T bh = rh / static_cast<T>(g.PH), bw = rw / static_cast<T>(g.PW);
      const int64_t gh = g.sampling_ratio > 0 ? g.sampling_ratio : grid_count(rh / static_cast<T>(g.PH));
      const int64_t gw = g.sampling_ratio > 0 ? g.sampling_ratio : grid_count(rw / static_cast<T>(g.PW));
      const T count = static_cast<T>(std::max<int64_t>(gh * gw, 1));
      for (int64_t ph = 0; ph < g.PH; ++ph)
        for (int64_t pw = 0; pw < g.PW; ++pw) {
          T* yo = yr + ph * g.PW + pw;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const T yy = sh + static_cast<T>(ph) * bh + static_cast<T>(static_cast<double>(iy) + 0.5) * bh / static_cast<T>(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const T xx = sw + static_cast<T>(pw) * bw + static_cast<T>(static_cast<double>(ix) + 0.5) * bw / static_cast<T>(gw);
              int64_t p[4] = {0, 0, 0, 0};
              T w[4] = {0, 0, 0, 0};
              if (yy >= -1 && yy <= static_cast<T>(g.H) && xx >= -1 && xx <= static_cast<T>(g.W)) {
                T y = yy <= 0 ? T(0) : yy, x = xx <= 0 ? T(0) : xx;
                int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh, xh;
                if (yl >= g.H - 1) yh = yl = g.H - 1, y = static_cast<T>(yl);
                else yh = yl + 1;
                if (xl >= g.W - 1) xh = xl = g.W - 1, x = static_cast<T>(xl);
                else xh = xl + 1;
                const T ly = y - static_cast<T>(yl), lx = x - static_cast<T>(xl), hy = T(1) - ly, hx = T(1) - lx;
                p[0] = yl * g.W + xl, p[1] = yl * g.W + xh, p[2] = yh * g.W + xl, p[3] = yh * g.W + xh;
                w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
              }
              for (int64_t c = 0; c < g.C; ++c) {
                const T* xc = xb + c * plane;
                T& o = yo[c * bins];
                if (!g.max) {
                  o += w[0] * xc[p[0]] + w[1] * xc[p[1]] + w[2] * xc[p[2]] + w[3] * xc[p[3]];
                } else {
                  T v = w[0] * xc[p[0]];
                  for (int k = 1; k < 4; ++k) v = v < w[k] * xc[p[k]] ? w[k] * xc[p[k]] : v;
                  o = first ? v : o < v ? v : o;
                }
              }
              first = false;
            }
          }
          if (!g.max)
            for (int64_t c = 0; c < g.C; ++c) yo[c * bins] /= count;
        }
    }
  }

  RoiAlignGeom g_;
};

}  // namespace

const RoiAlignGeom& roi_align_geom(const Node& n) { return op_as<RoiAlign>(n).geom(); }

void register_roi_align(OpTable& t) {
  t["RoiAlign"] = [] { return std::unique_ptr<Op>(std::make_unique<RoiAlign>()); };
}

}  // namespace onnxc
