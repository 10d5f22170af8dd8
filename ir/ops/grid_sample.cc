// ir/ops/grid_sample.cc — GridSample(X, grid) → Y: Y[n, c, oy, ox] samples X[n, c] at the
// normalized location grid[n, oy, ox] = (gx, gy) in [-1, 1] (beyond that: padding), gx
// along W and gy along H. The arithmetic (denormalization, taps, weights, padding) is in
// grid_sample.h, shared with the C kernel (kernels/grid_sample.cc).
// Attributes: mode (opset 16: bilinear (default), nearest, bicubic; opset 20: the same
// modes renamed linear (default), nearest, cubic — the other era's names are invalid),
// padding_mode (zeros (default), border, reflection), align_corners (0 (default) or 1).
// X float32 or float64 (ONNX allows any type for X; integer X is refused), grid float32
// or float64; Y has X's type and the arithmetic runs in it.
// Versions: 16 (4-D X only), 20 (mode names, N-d: X [N, C, D1..Dk], grid
// [N, D1_out..Dk_out, k]), 22 (bfloat16). Only the 2-D form (k = 2) is implemented: other
// k at opset 20+ are refused as unsupported (an X that is not 4-D at opset 16 is invalid).
// Gaps: coordinates beyond +-2^30 pixels (and NaN, taken as far below) are clamped there
// before they become integer taps (grid_sample.h).
#include "ir/ops/grid_sample.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

// Keys' cubic convolution weights (A = -0.75) of fraction t, as ONNX Runtime writes them.
template <class T>
void cubic_weights(T t, T w[4]) {
  const T A = T(-0.75);
  t = t < 0 ? -t : t;
  w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
  w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  w[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
  w[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

class GridSample : public Op {
 public:
  void parse(AttrReader& a) override {
    const Node& n = a.node();
    bool v20 = a.opset() >= 20;
    std::string m = a.s("mode", v20 ? "linear" : "bilinear");
    if (m == "nearest") g_.mode = GridMode::Nearest;
    else if (m == (v20 ? "linear" : "bilinear")) g_.mode = GridMode::Linear;
    else if (m == (v20 ? "cubic" : "bicubic")) g_.mode = GridMode::Cubic;
    else if (m == "linear" || m == "cubic")
      n.invalid(fmt::format("mode '{}' is a name of opset 20 and later; before, it is '{}'", m, m == "linear" ? "bilinear" : "bicubic"));
    else if (m == "bilinear" || m == "bicubic")
      n.invalid(fmt::format("mode '{}' was renamed '{}' at opset 20", m, m == "bilinear" ? "linear" : "cubic"));
    else
      n.invalid(fmt::format("mode '{}' is not one of {}", m, v20 ? "linear, nearest, cubic" : "bilinear, nearest, bicubic"));
    std::string p = a.s("padding_mode", "zeros");
    if (p == "zeros") g_.pad = GridPad::Zeros;
    else if (p == "border") g_.pad = GridPad::Border;
    else if (p == "reflection") g_.pad = GridPad::Reflection;
    else n.invalid(fmt::format("padding_mode '{}' is not one of zeros, border, reflection", p));
    int64_t ac = a.i("align_corners", 0);
    if (ac != 0 && ac != 1) n.invalid(fmt::format("align_corners must be 0 or 1, got {}", ac));
    g_.align_corners = ac == 1;
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 2) n.invalid(fmt::format("expects 2 inputs (X, grid), got {}", n.inputs.size()));
    const Value& x = need_input(n, 0, "X");
    const Value& grid = need_input(n, 1, "grid");
    if (!dtype_is_float(x.dtype))
      n.unsupported(fmt::format("X of dtype {} is not supported (only float32 and float64)", dtype_name(x.dtype)));
    expect_dtype(n, 1, {DType::F32, DType::F64});
    const Shape& xs = x.shape;
    const Shape& gs = grid.shape;
    if (n.opset < 20) {
      if (xs.size() != 4) n.invalid(fmt::format("X {} must be 4-D (N, C, H, W) before opset 20", shape_str(xs)));
    } else if (xs.size() < 3) {
      n.invalid(fmt::format("X {} must have rank >= 3 (N, C, D1...)", shape_str(xs)));
    }
    size_t k = xs.size() - 2;
    if (gs.size() != xs.size() || gs.back() != static_cast<int64_t>(k))
      n.invalid(fmt::format("grid {} must have shape [N, out dims ({}), {}] for X {}", shape_str(gs), k, k, shape_str(xs)));
    if (gs[0] != xs[0]) n.invalid(fmt::format("grid {} and X {} have different batch sizes", shape_str(gs), shape_str(xs)));
    if (k != 2)
      n.unsupported(fmt::format("{}-D sampling (X {}) is not supported; only 2-D (4-D X [N, C, H, W])", k, shape_str(xs)));
    g_.N = xs[0], g_.C = xs[1], g_.H = xs[2], g_.W = xs[3], g_.Ho = gs[1], g_.Wo = gs[2];
    set_output(n, 0, x.dtype, {g_.N, g_.C, g_.Ho, g_.Wo});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    if (in[0]->dtype == DType::F64) run<double>(*in[0], *in[1], out[0]);
    else run<float>(*in[0], *in[1], out[0]);
  }

  int64_t min_opset() const override { return 16; }
  const GridSampleGeom& geom() const { return g_; }

 private:
  template <class T>
  T denorm(double g, int64_t len) const {
    T v = static_cast<T>(g), x = g_.align_corners ? (v + 1) / 2 * static_cast<T>(len - 1) : ((v + 1) * static_cast<T>(len) - 1) / 2;
    const T lim = static_cast<T>(kGridSampleLimit);
    return !(x >= -lim) ? -lim : x > lim ? lim : x;
  }

  template <class T>
  void run(const Tensor& X, const Tensor& grid, Tensor& Y) const {
    const GridSampleGeom& g = g_;
    const T* xd = X.data<T>();
    T* yd = Y.data<T>();
    const int64_t plane = g.H * g.W, oplane = g.Ho * g.Wo;
    if (plane == 0) {
      std::fill(yd, yd + Y.numel(), T(0));
      return;
    }
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t p = 0; p < oplane; ++p) {
        const int64_t gp = (n * oplane + p) * 2;
        const T x = denorm<T>(grid.get(gp), g.W), y = denorm<T>(grid.get(gp + 1), g.H);
        // taps: rows ry (offsets r * W, -1 for a zero) and columns cx, with weights
        int64_t ry[4], cx[4];
        T wy[4], wx[4];
        int K = 1;
        auto tap = [&](int64_t v, int64_t L) { return grid_sample_tap(v, L, g.pad, g.align_corners); };
        if (g.mode == GridMode::Nearest) {
          ry[0] = tap(static_cast<int64_t>(std::nearbyint(y)), g.H);
          cx[0] = tap(static_cast<int64_t>(std::nearbyint(x)), g.W);
        } else if (g.mode == GridMode::Linear) {
          K = 2;
          const int64_t x1 = static_cast<int64_t>(std::floor(x)), y1 = static_cast<int64_t>(std::floor(y));
          wx[0] = static_cast<T>(x1 + 1) - x, wx[1] = x - static_cast<T>(x1);
          wy[0] = static_cast<T>(y1 + 1) - y, wy[1] = y - static_cast<T>(y1);
          for (int j = 0; j < 2; ++j) cx[j] = tap(x1 + j, g.W), ry[j] = tap(y1 + j, g.H);
        } else {
          K = 4;
          const int64_t x0 = static_cast<int64_t>(std::floor(x)) - 1, y0 = static_cast<int64_t>(std::floor(y)) - 1;
          cubic_weights<T>(x - static_cast<T>(x0) - 1, wx);
          cubic_weights<T>(y - static_cast<T>(y0) - 1, wy);
          for (int j = 0; j < 4; ++j) cx[j] = tap(x0 + j, g.W), ry[j] = tap(y0 + j, g.H);
        }
        for (int j = 0; j < K; ++j) ry[j] = ry[j] < 0 ? -1 : ry[j] * g.W;
        for (int64_t c = 0; c < g.C; ++c) {
          const T* xc = xd + (n * g.C + c) * plane;
          auto pix = [&](int i, int j) { return ry[i] >= 0 && cx[j] >= 0 ? xc[ry[i] + cx[j]] : T(0); };
          T acc;
          if (K == 1) {
            acc = pix(0, 0);
          } else {
            acc = 0;
            for (int i = 0; i < K; ++i) {
              T v = 0;
              for (int j = 0; j < K; ++j) v += wx[j] * pix(i, j);
              acc += wy[i] * v;
            }
          }
          yd[(n * g.C + c) * oplane + p] = acc;
        }
      }
  }

  GridSampleGeom g_;
};

}  // namespace

const GridSampleGeom& grid_sample_geom(const Node& n) { return op_as<GridSample>(n).geom(); }

void register_grid_sample(OpTable& t) {
  t["GridSample"] = [] { return std::unique_ptr<Op>(std::make_unique<GridSample>()); };
}

}  // namespace onnxc
