// ir/ops/grid_sample.h — what GridSample publishes to backends (ir/ops/grid_sample.cc): the
// sizes and parsed attributes of its 2-D form, X [N, C, H, W], grid [N, Ho, Wo, 2] ->
// Y [N, C, Ho, Wo].
//
// The arithmetic, shared by the reference eval and the C kernel, in X's float type T (as
// ONNX Runtime computes it):
//   x = (gx + 1) / 2 * (W - 1)      align_corners = 1   (gx = grid[..., 0]; y from gy, H)
//   x = ((gx + 1) * W - 1) / 2      align_corners = 0
//   then x is clamped to [-kGridSampleLimit, kGridSampleLimit] (NaN goes to the low end), so
//   that the integer taps below never overflow.
//   nearest  Y = pixel(nearbyint(y), nearbyint(x))           (ties to even)
//   linear   x1 = floor(x), taps x1, x1 + 1 with weights (x1 + 1 - x, x - x1); likewise y;
//            Y = wy0 * (wx0 * p00 + wx1 * p01) + wy1 * (wx0 * p10 + wx1 * p11)
//   cubic    x0 = floor(x) - 1, taps x0 .. x0 + 3 with Keys' weights (A = -0.75) of
//            t = x - x0 - 1; rows first: v_i = sum_j wx_j * p(i, j), Y = sum_i wy_i * v_i
// The padding mode applies to each integer tap, as ONNX Runtime (1.30) and PyTorch's bicubic
// do it. For nearest and linear this equals padding the coordinate first, as ONNX's
// reference does; for cubic near the borders the reference (which pads the coordinate,
// then the taps) differs, and onnxc follows ONNX Runtime:
//   zeros       a tap outside [0, L) reads 0
//   border      the tap is clamped to [0, L - 1]
//   reflection  the tap is reflected by the borders until inside: about -0.5 and L - 0.5
//               (align_corners 0: period 2L), about 0 and L - 1 (align_corners 1: period
//               2(L - 1); L = 1 always reads 0)
// An X with an empty spatial dim has no pixel: Y is all zeros.
#pragma once
#include "ir/op.h"

namespace onnxc {

enum class GridMode { Nearest, Linear, Cubic };
enum class GridPad { Zeros, Border, Reflection };

// Coordinates are clamped to +-2^30 pixels before they become integer taps.
constexpr double kGridSampleLimit = 1073741824.0;

struct GridSampleGeom {
  GridMode mode = GridMode::Linear;
  GridPad pad = GridPad::Zeros;
  bool align_corners = false;
  int64_t N = 0, C = 0, H = 0, W = 0, Ho = 0, Wo = 0;
};
const GridSampleGeom& grid_sample_geom(const Node& n);

// The tap v (any integer) of a dim of length L (> 0) under padding p: the index to read, or
// -1 for a zero (zeros padding only).
inline int64_t grid_sample_tap(int64_t v, int64_t L, GridPad p, bool align_corners) {
  switch (p) {
    case GridPad::Zeros: return v >= 0 && v < L ? v : -1;
    case GridPad::Border: return v < 0 ? 0 : v > L - 1 ? L - 1 : v;
    case GridPad::Reflection: {
      if (align_corners && L == 1) return 0;
      int64_t period = align_corners ? 2 * (L - 1) : 2 * L;
      int64_t m = v % period;
      if (m < 0) m += period;
      return m < L ? m : period - m - (align_corners ? 0 : 1);
    }
  }
  return -1;
}

}  // namespace onnxc
