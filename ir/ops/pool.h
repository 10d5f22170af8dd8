// ir/ops/pool.h — what MaxPool and AveragePool publish to backends: the windows that shape
// inference resolved (auto_pad, ceil_mode and dilations applied), per spatial dimension.
#pragma once
#include <algorithm>
#include <vector>

#include "ir/op.h"

namespace onnxc {

// Per spatial dim: input size, output size, kernel, stride, dilation, pad begin / end.
struct PoolDim {
  int64_t in = 0, out = 0, k = 1, s = 1, d = 1, pb = 0, pe = 0;
  int64_t start(int64_t o) const { return o * s - pb; }
  // Kernel taps [lo, hi) of output o that land inside the input.
  int64_t lo(int64_t o) const { int64_t p = start(o); return p < 0 ? (-p + d - 1) / d : 0; }
  int64_t hi(int64_t o) const {
    int64_t room = in - start(o);
    return room <= 0 ? 0 : std::min(k, (room + d - 1) / d);
  }
  // Taps inside the padded extent [-pb, in + pe) (count_include_pad divisor).
  int64_t padded_taps(int64_t o) const {
    int64_t room = in + pe - start(o);
    return room <= 0 ? 0 : std::min(k, (room + d - 1) / d);
  }
  bool clipped() const {  // can any window reach outside the input?
    return pb > 0 || (out - 1) * s - pb + (k - 1) * d + 1 > in;
  }
  bool overhang() const {  // can any window reach beyond the padded extent?
    return (out - 1) * s - pb + (k - 1) * d + 1 > in + pe;
  }
};

struct PoolGeom {
  bool max = false;             // MaxPool (else AveragePool)
  int64_t count_pad = 0;        // AveragePool's count_include_pad
  int64_t storage_order = 0;    // MaxPool's Indices: 0 row-major, 1 column-major
  std::vector<PoolDim> dims;    // per spatial dimension
  // AveragePool's divisor is the tap count everywhere when no window is clipped (or, with
  // count_include_pad, none overhangs the padded extent).
  bool avg_all_full() const {
    bool all_full = true;
    for (auto& d : dims) all_full = all_full && (count_pad ? !d.overhang() : !d.clipped());
    return all_full;
  }
};
const PoolGeom& pool_geom(const Node& n);

}  // namespace onnxc
