// ir/ops/resize.h — what Resize and Upsample publish to backends: per input axis its sizes
// and the tabulated taps of every output index (input indices and weights, as the ONNX
// reference computes them), resolved by shape inference.
#pragma once
#include <string>
#include <vector>

#include "ir/op.h"

namespace onnxc {

enum class Interp { Nearest, Linear, Cubic };

// One input axis: sizes, its scale and (tf_crop_and_resize) its roi.
struct ResizeAxis {
  int64_t in = 1, out = 1;
  double scale = 1;
  double roi0 = 0, roi_len = 1;  // roi start and end - start (computed in the roi's dtype)
};

// The tabulated taps of one axis: for each output index, k source indices and weights.
struct AxisTable {
  int64_t lo = 0, hi = 0;  // outputs in [lo, hi) are inside the crop; others are extrapolation_value
  size_t k = 1;
  std::vector<int64_t> idx;  // out * k indices in [0, in)
  std::vector<double> w;     // out * k weights
  bool unit() const {  // one tap of weight 1 everywhere (a pure gather)
    if (k != 1) return false;
    for (double v : w)
      if (v != 1.0) return false;
    return true;
  }
  bool identity(const ResizeAxis& a) const {
    if (a.in != a.out || lo != 0 || hi != a.out || !unit()) return false;
    for (int64_t o = 0; o < a.out; ++o)
      if (idx[static_cast<size_t>(o)] != o) return false;
    return true;
  }
};

struct ResizeGeom {
  Interp interp = Interp::Nearest;
  double extrapolation = 0;       // tf_crop_and_resize's value outside the crop
  std::string desc;               // "linear, half_pixel": mode and coordinate transformation, for comments
  std::vector<ResizeAxis> axis;   // per input axis
  std::vector<AxisTable> tables;  // per input axis
};
const ResizeGeom& resize_geom(const Node& n);

}  // namespace onnxc
