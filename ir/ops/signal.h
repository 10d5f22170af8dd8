// ir/ops/signal.h — what the signal ops (ir/ops/signal.cc) publish to backends: the
// transforms of DFT and STFT as one strided view, the cosine-sum windows' coefficients and
// MelWeightMatrix's triangle corners, all resolved by shape inference from constant inputs.
#pragma once
#include <vector>

#include "ir/op.h"

namespace onnxc {

// DFT and STFT as count_a × count_b independent transforms of length n. Transform (a, b)
// reads sample j (j < used) at input element a*xa + b*xb + j*xs (its imaginary part at +1
// when comps is 2; a real input has comps 1), multiplied by window[j] when `window` (STFT's
// input 2), and writes bin k (k < bins) at output element a*ya + b*yb + k*ys, real part then
// imaginary part:
//   y[k] = sum_{j < used} x[j] * w[(k*j) mod n],   w[t] = exp(-+2*pi*i*t/n)
// (minus forward, plus inverse, which also divides by n). Samples past `used` are the zero
// padding up to n; bins is n, or n/2 + 1 when onesided.
// c2r (DFT onesided and inverse: the inverse of a one-sided spectrum): the input holds bins
// 0 .. used-1 (used <= n/2 + 1) of the spectrum of a real signal, whose other bins are their
// conjugates (x[n - j] = conj(x[j])); the output is that real signal, one value per sample
// k < bins = n at a*ya + b*yb + k*ys:
//   y[k] = 1/n sum_{j < used} c_j Re(x[j] w[(k*j) mod n]),  c_j = 1 for j = 0 and j = n/2, else 2
//   DFT:  the input viewed as [outer, len, inner, comps] around the axis: a = outer index,
//         b = inner index; used = min(len, n) (c2r: min(len, n/2 + 1)).
//   STFT: the signal [batch, len, comps]: a = batch, b = frame (frame b starts at sample
//         b * frame_step); used = n = frame_length.
struct DftGeom {
  int64_t count_a = 1, count_b = 1;
  int64_t xa = 0, xb = 0, xs = 1;
  int64_t ya = 0, yb = 0, ys = 2;
  int64_t comps = 1, n = 1, used = 1, bins = 1;
  bool inverse = false, window = false, c2r = false;
};
const DftGeom& dft_geom(const Node& n);  // DFT or STFT

// cos and sin of 2*pi*t/n (n >= 1, any t), from an angle reduced to [0, pi/4] by the
// symmetries of the circle: exactly 0 and +-1 at the quarter turns, and each to within half
// an ulp or so of double elsewhere. The DFT twiddles and the windows use it.
void unit_root(int64_t t, int64_t n, double* c, double* s);

// HannWindow, HammingWindow, BlackmanWindow: y[k] = a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N)
// for k < size, N = size (periodic) or size - 1 (symmetric); N = 0 (a symmetric window of one
// sample) gives NaN, as ONNX's function body and ONNX Runtime compute it.
struct WindowGeom {
  double a0 = 0, a1 = 0, a2 = 0;
  int64_t size = 0, period = 0;
};
const WindowGeom& window_geom(const Node& n);
double window_value(const WindowGeom& g, int64_t k);  // the reference value of y[k], in double

// MelWeightMatrix: the output [spec_bins, mel_bins] is 0 except the triangle of each mel bin
// i, with corners lo = points[i], c = points[i + 1], hi = points[i + 2] (spectrogram bins, all
// in [0, spec_bins)): y[j][i] = (j - lo) / (c - lo) for lo <= j <= c (just 1 at c when
// c == lo), and (hi - j) / (hi - c) for c <= j < hi (both give 1 at j == c).
struct MelGeom {
  int64_t spec_bins = 0, mel_bins = 0;
  std::vector<int64_t> points;  // mel_bins + 2
};
const MelGeom& mel_geom(const Node& n);

}  // namespace onnxc
