// ir/ops/roi_align.h — what RoiAlign publishes to backends (ir/ops/roi_align.cc): X
// [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] -> Y [R, C, PH, PW].
//
// The arithmetic, shared by the reference eval and the C kernel, in X's float type T (as
// ONNX Runtime computes it), per roi r:
//   b = batch_indices[r], CLAMPED to [0, N - 1] (ONNX leaves an index outside [0, N)
//       undefined; a constant one is an invalid model at compile time)
//   off = 0.5 (half_pixel) or 0 (output_half_pixel, and RoiAlign-10)
//   start_w = x1 * scale - off, end_w = x2 * scale - off (h from y1, y2 likewise)
//   roi_w = end_w - start_w; without half_pixel at least 1 (`roi_w < 1 ? 1 : roi_w`)
//   bin_w = roi_w / PW; gw = sampling_ratio if > 0, else ceil(roi_w / PW) as an integer
//       (below 1 (NaN too) -> 0, above kRoiAlignMaxGrid -> kRoiAlignMaxGrid)
//   count = max(gh * gw, 1)
// per output bin (ph, pw) and sample (iy, ix):
//   y = start_h + ph * bin_h + (iy + 0.5) * bin_h / gh   (x likewise)
//   a sample with !(y >= -1 && y <= H && x >= -1 && x <= W) (NaN too) has weights 0;
//   else y = max(y, 0), y_low = (int)y, y_high = y_low + 1, except y_low >= H - 1 where
//   y_low = y_high = H - 1 and y = y_low; ly = y - y_low, hy = 1 - ly (x likewise);
//   weights hy * hx, hy * lx, ly * hx, ly * lx of pixels (y_low, x_low), (y_low, x_high),
//   (y_high, x_low), (y_high, x_high)
//   avg: Y = (sum over samples of w1 * p1 + w2 * p2 + w3 * p3 + w4 * p4) / count
//   max: Y = max over samples of max(max(max(w1 * p1, w2 * p2), w3 * p3), w4 * p4),
//        max(a, b) = a < b ? b : a (ONNX Runtime's); 0 with no sample
// An X with no element (N, H or W is 0) gives Y all zeros.
#pragma once
#include "ir/op.h"

namespace onnxc {

// The most samples per bin along one axis (keeps the float -> integer conversion defined).
constexpr int64_t kRoiAlignMaxGrid = int64_t{1} << 30;

struct RoiAlignGeom {
  bool max = false, half_pixel = true;
  double scale = 1;
  int64_t sampling_ratio = 0;
  int64_t N = 0, C = 0, H = 0, W = 0, R = 0, PH = 1, PW = 1;
};
const RoiAlignGeom& roi_align_geom(const Node& n);

}  // namespace onnxc
