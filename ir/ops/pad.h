// ir/ops/pad.h — what Pad publishes to backends: per input axis, what is kept and what is
// padded (negative pads crop first), the mode, and the pad value.
#pragma once
#include <algorithm>
#include <vector>

#include "ir/op.h"

namespace onnxc {

enum class PadMode { Constant, Reflect, Edge, Wrap };

struct PadAxis {
  int64_t in = 1, out = 1, pb = 0, pe = 0;
  int64_t start() const { return std::max<int64_t>(-pb, 0); }                 // first kept input index
  int64_t kept() const { return in - start() - std::max<int64_t>(-pe, 0); }   // kept length
  int64_t lead() const { return std::max<int64_t>(pb, 0); }                   // padded elements before
};

// Source index along one axis for output index o, or -1 for the pad value.
int64_t pad_source(const PadAxis& a, PadMode m, int64_t o);

struct PadGeom {
  PadMode mode = PadMode::Constant;
  double value = 0;             // the pad value, when constant
  bool runtime_value = false;   // constant_value is a runtime input (input 2) instead
  std::vector<PadAxis> axis;    // per input axis
};
const PadGeom& pad_geom(const Node& n);

}  // namespace onnxc
