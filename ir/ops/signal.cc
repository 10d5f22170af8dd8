// ir/ops/signal.cc — the signal ops of opset 17: DFT, STFT, the cosine-sum windows and
// MelWeightMatrix (signal.h has the views the backends read). Complex tensors are float
// tensors whose last dimension holds (real, imaginary): 2, or 1 for a real signal.
//
//   DFT(input, dft_length?)          17: axis attribute (default 1), inverse, onesided.
//   DFT(input, dft_length?, axis?)   20: the axis became an int64 scalar input (default -2,
//                                    the last signal axis); the attribute is gone.
//       The transform runs along the axis, which may count from the end but never names the
//       last (complex) dimension: [-r, -2] or [0, r - 2] for an input of rank r >= 2.
//       dft_length (>= 1, default the axis length) truncates or zero-pads the signal; the
//       output has dft_length bins on the axis and a last dimension of 2. inverse divides by
//       dft_length. onesided (both versions, as ONNX's current shape inference and ONNX
//       Runtime 1.30 define it): forward, a real input's first dft_length / 2 + 1 bins (a
//       complex input is invalid: "onesided output is not possible"); inverse, the inverse of
//       a one-sided spectrum (numpy's irfft): a complex input holding the first bins of a
//       Hermitian spectrum, a real output [..., n, ..., 1] with n = dft_length or
//       2 * (bins - 1), bins past n / 2 + 1 ignored (a real input is invalid).
//   STFT(signal, frame_step, window?, frame_length?)   17: onesided (default 1).
//       signal [batch, length, 1 or 2]; frames of frame_length samples (or the window's
//       length; both given must agree) every frame_step samples, as many as fit:
//       (length - frame_length) / frame_step + 1; each multiplied by the (real, rank 1)
//       window and transformed. Output [batch, frames, bins, 2]. onesided keeps the first
//       frame_length / 2 + 1 bins, of a complex signal too (as ONNX Runtime does). A
//       frame_length that differs from the window's length is refused (unsupported: ONNX
//       does not say what it means; ONNX Runtime refuses it too).
//   HannWindow, HammingWindow, BlackmanWindow(size)   17: periodic (default 1),
//       output_datatype (default float). a0 - a1 cos(2 pi k/N) + a2 cos(4 pi k/N) with
//       (a0, a1, a2) = (1/2, 1/2, 0), (25/46, 21/46, 0), (0.42, 0.5, 0.08), N = size
//       (periodic) or size - 1 (symmetric; NaN for size 1, 0/0 as in ONNX's function body).
//   MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
//       upper_edge_hertz)   17: output_datatype. Triangles on the mel scale
//       mel(f) = 2595 log10(1 + f / 700), computed as ONNX's reference and ONNX Runtime do:
//       num_mel_bins + 2 points evenly spaced in mel by (mel(upper) - mel(lower)) /
//       (num_mel_bins + 2), each mapped back to hertz and to the spectrogram bin
//       floor((dft_length + 1) * hz / sample_rate), in double.
// Inputs that fix the output's shape are compile-time constants: DFT's dft_length and axis,
// STFT's frame_step and frame_length, a window's size; and every input of MelWeightMatrix,
// whose values all decide where its nonzero entries go. Windows and MelWeightMatrix are
// therefore constants themselves, folded by their eval below; their C kernels only run when
// folding does not. DFT and STFT sum in double whatever the float type (eval and the C
// kernels alike) over exact twiddles (unit_root), and round once: a float32 bin is within half
// an ulp of float32 of a sum whose own error is about n 2^-53 sum|x| — far inside the 1e-3
// relative the node tests allow. float32 and float64 (float16 models are computed in
// float32); output_datatype float16 and bfloat16 are refused, and so are transforms longer
// than 65536 points (dft_length, frame_length: a direct O(n^2) sum is no use there) and more
// than 2^24 mel bins. Same meanings up to opset 28.
// The C kernels are kernels/signal.cc.
#include "ir/ops/signal.h"

#include <fmt/format.h>

#include <cmath>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {

void unit_root(int64_t t, int64_t n, double* c, double* s) {
  ONNXC_ASSERT(n >= 1, "unit_root of a non-positive n");
  // The angle is (q + r/n) * pi/4 for the octant q = floor(8t/n) mod 8 and r in [0, n);
  // measured from the octant's nearer end, phi = num/n * pi/4 is in [0, pi/4].
  const long double kPi = 3.141592653589793238462643383279502884L;
  __int128 u = static_cast<__int128>((t % n + n) % n) * 8;
  int64_t q = static_cast<int64_t>(u / n), r = static_cast<int64_t>(u % n);
  int64_t num = (q & 1) ? n - r : r;
  long double phi = kPi / 4 * static_cast<long double>(num) / static_cast<long double>(n);
  double cp = static_cast<double>(cosl(phi)), sp = static_cast<double>(sinl(phi));
  switch (q) {
    case 0: *c = cp, *s = sp; return;      // phi
    case 1: *c = sp, *s = cp; return;      // pi/2 - phi
    case 2: *c = -sp, *s = cp; return;     // pi/2 + phi
    case 3: *c = -cp, *s = sp; return;     // pi - phi
    case 4: *c = -cp, *s = -sp; return;    // pi + phi
    case 5: *c = -sp, *s = -cp; return;    // 3pi/2 - phi
    case 6: *c = sp, *s = -cp; return;     // 3pi/2 + phi
    default: *c = cp, *s = -sp; return;    // 2pi - phi
  }
}

double window_value(const WindowGeom& g, int64_t k) {
  if (g.period == 0) return std::nan("");
  double c1, c2, s;
  unit_root(k, g.period, &c1, &s);
  unit_root(2 * k, g.period, &c2, &s);
  return g.a0 - g.a1 * c1 + g.a2 * c2;
}

namespace {

// The longest transform: the sums are direct, O(n^2) per transform, and the twiddles are
// static tables in the emitted C (kernels/signal.cc).
constexpr int64_t kMaxDftLength = 65536;

void check_dft_length(const Node& n, int64_t len, const char* what) {
  if (len > kMaxDftLength)
    n.unsupported(fmt::format("{} {} is over {}: onnxc computes the transform directly, in O(n^2), with its twiddles as "
                              "tables in the emitted C", what, len, kMaxDftLength));
}

// A static scalar integer input (int32/int64, one element).
int64_t static_scalar(const Node& n, size_t i, const char* what) {
  std::vector<int64_t> v = static_ints(n, i, what);
  if (v.size() != 1) n.invalid(fmt::format("input {} ({}) must be a scalar, got {} values", i, what, v.size()));
  return v[0];
}

int64_t bool_attr(AttrReader& a, const char* name, int64_t def) {
  int64_t v = a.i(name, def);
  if (v != 0 && v != 1) a.node().invalid(fmt::format("attribute '{}' must be 0 or 1, got {}", name, v));
  return v;
}

// output_datatype: one of the types the op may produce (T2/T3 of the schema) that onnxc holds.
DType out_dtype_attr(AttrReader& a) {
  int64_t t = a.i("output_datatype", 1);
  switch (t) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 11: case 12: case 13:
      return static_cast<DType>(t);
    case 10: case 16:
      a.node().unsupported(fmt::format("output_datatype {} ({}) is not supported", t, t == 10 ? "float16" : "bfloat16"));
    default:
      a.node().invalid(fmt::format("output_datatype {} is not a numeric tensor type", t));
  }
}

// The reference transform of signal.h's view, in double.
void eval_dft(const DftGeom& g, const Tensor& x, const Tensor* w, Tensor& y) {
  std::vector<double> wr(static_cast<size_t>(g.n)), wi(static_cast<size_t>(g.n));
  for (int64_t t = 0; t < g.n; ++t) {
    unit_root(t, g.n, &wr[static_cast<size_t>(t)], &wi[static_cast<size_t>(t)]);
    if (!g.inverse) wi[static_cast<size_t>(t)] = -wi[static_cast<size_t>(t)];
  }
  for (int64_t a = 0; a < g.count_a; ++a)
    for (int64_t b = 0; b < g.count_b; ++b)
      for (int64_t k = 0; k < g.bins; ++k) {
        double re = 0, im = 0;
        for (int64_t j = 0, t = 0; j < g.used; ++j) {
          int64_t xi = a * g.xa + b * g.xb + j * g.xs;
          double xr = x.get(xi), xm = g.comps == 2 ? x.get(xi + 1) : 0.0;
          if (w) xr *= w->get(j), xm *= w->get(j);
          const double c = wr[static_cast<size_t>(t)], s = wi[static_cast<size_t>(t)];
          if (g.c2r) re += (j == 0 || 2 * j == g.n ? 1.0 : 2.0) * (xr * c - xm * s);
          else re += xr * c - xm * s, im += xr * s + xm * c;
          t += k;
          if (t >= g.n) t -= g.n;
        }
        if (g.inverse) re /= static_cast<double>(g.n), im /= static_cast<double>(g.n);
        int64_t yi = a * g.ya + b * g.yb + k * g.ys;
        y.set(yi, re);
        if (!g.c2r) y.set(yi + 1, im);
      }
}

class Dft : public Op {
 public:
  void parse(AttrReader& a) override {
    if (a.opset() < 20) axis_ = a.i("axis", 1);
    g_.inverse = bool_attr(a, "inverse", 0) == 1;
    onesided_ = bool_attr(a, "onesided", 0) == 1;
  }

  bool static_input(size_t i) const override { return i >= 1; }

  void infer(Node& n) override {
    size_t most = n.opset >= 20 ? 3 : 2;
    if (n.inputs.empty() || n.inputs.size() > most)
      n.invalid(fmt::format("expects 1 to {} inputs ({}), got {}", most, n.opset >= 20 ? "input, dft_length, axis" : "input, dft_length",
                            n.inputs.size()));
    const Value& x = need_input(n, 0, "input");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    const Shape& xs = x.shape;
    int64_t r = static_cast<int64_t>(xs.size());
    if (r < 2 || (xs.back() != 1 && xs.back() != 2))
      n.invalid(fmt::format("input {} must have rank >= 2 and a last dimension of 1 (real) or 2 (complex)", shape_str(xs)));
    int64_t axis = axis_;
    if (n.opset >= 20) axis = n.in(2) ? static_scalar(n, 2, "axis") : -2;
    int64_t ax = axis < 0 ? axis + r : axis;
    if (ax < 0 || ax > r - 2)
      n.invalid(fmt::format("axis {} is not a signal axis of input {}: it must be in [{}, -2] or [0, {}] (the last dimension holds "
                            "the real and imaginary parts)", axis, shape_str(xs), -r, r - 2));
    g_.comps = xs.back();
    g_.c2r = onesided_ && g_.inverse;
    if (onesided_ && !g_.inverse && g_.comps != 1)
      n.invalid(fmt::format("onesided needs a real input (last dimension 1), got {}: the one-sided transform of a complex signal "
                            "is not defined", shape_str(xs)));
    if (g_.c2r && g_.comps != 2)
      n.invalid(fmt::format("onesided with inverse (the inverse of a one-sided spectrum) needs a complex input (last dimension 2), "
                            "got {}", shape_str(xs)));
    int64_t len = xs[static_cast<size_t>(ax)], dft_len = g_.c2r ? 2 * (len - 1) : len;
    if (n.in(1)) {
      dft_len = static_scalar(n, 1, "dft_length");
      if (dft_len < 1) n.invalid(fmt::format("dft_length {} must be at least 1", dft_len));
    } else if (dft_len < 1) {
      n.invalid(fmt::format("the axis {} of input {} gives a transform of {} points; set dft_length", ax, shape_str(xs), dft_len));
    }
    check_dft_length(n, dft_len, "dft_length");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < ax; ++d) outer *= xs[static_cast<size_t>(d)];
    for (int64_t d = ax + 1; d < r - 1; ++d) inner *= xs[static_cast<size_t>(d)];
    int64_t out_comps = g_.c2r ? 1 : 2;
    g_.n = dft_len;
    g_.used = std::min(len, g_.c2r ? dft_len / 2 + 1 : dft_len);
    g_.bins = onesided_ && !g_.inverse ? dft_len / 2 + 1 : dft_len;
    g_.count_a = outer, g_.count_b = inner;
    g_.xa = len * inner * g_.comps, g_.xb = g_.comps, g_.xs = inner * g_.comps;
    g_.ya = g_.bins * inner * out_comps, g_.yb = out_comps, g_.ys = inner * out_comps;
    Shape ys = xs;
    ys[static_cast<size_t>(ax)] = g_.bins;
    ys.back() = out_comps;
    set_output(n, 0, x.dtype, ys);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    eval_dft(g_, *in[0], nullptr, out[0]);
  }

  int64_t min_opset() const override { return 17; }
  const DftGeom& geom() const { return g_; }

 private:
  int64_t axis_ = 1;
  bool onesided_ = false;
  DftGeom g_;
};

class Stft : public Op {
 public:
  void parse(AttrReader& a) override { onesided_ = bool_attr(a, "onesided", 1) == 1; }

  bool static_input(size_t i) const override { return i == 1 || i == 3; }

  void infer(Node& n) override {
    if (n.inputs.size() < 2 || n.inputs.size() > 4)
      n.invalid(fmt::format("expects 2 to 4 inputs (signal, frame_step, window, frame_length), got {}", n.inputs.size()));
    const Value& x = need_input(n, 0, "signal");
    need_input(n, 1, "frame_step");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    const Shape& xs = x.shape;
    if (xs.size() != 3 || (xs[2] != 1 && xs[2] != 2))
      n.invalid(fmt::format("signal {} must be [batch, length, 1] (real) or [batch, length, 2] (complex)", shape_str(xs)));
    int64_t step = static_scalar(n, 1, "frame_step");
    if (step < 1) n.invalid(fmt::format("frame_step {} must be at least 1", step));
    int64_t frame = -1;
    if (const Value* w = n.in(2)) {
      if (w->dtype != x.dtype) n.invalid(fmt::format("window is {}, signal is {}", dtype_name(w->dtype), dtype_name(x.dtype)));
      if (w->shape.size() != 1) n.invalid(fmt::format("window {} must have rank 1", shape_str(w->shape)));
      frame = w->shape[0];
    }
    if (n.in(3)) {
      int64_t fl = static_scalar(n, 3, "frame_length");
      if (fl < 1) n.invalid(fmt::format("frame_length {} must be at least 1", fl));
      if (frame >= 0 && fl != frame)
        n.unsupported(fmt::format("frame_length {} differs from the window's length {}", fl, frame));
      frame = fl;
    }
    if (frame < 0) n.invalid("needs a window or a frame_length");
    if (frame < 1) n.invalid("the window is empty");
    check_dft_length(n, frame, "frame_length");
    int64_t batch = xs[0], len = xs[1];
    if (frame > len) n.invalid(fmt::format("frames of {} samples do not fit the signal {}", frame, shape_str(xs)));
    g_.comps = xs[2];
    g_.n = g_.used = frame;
    g_.bins = onesided_ ? frame / 2 + 1 : frame;
    g_.window = n.in(2) != nullptr;
    int64_t frames = (len - frame) / step + 1;
    g_.count_a = batch, g_.count_b = frames;
    g_.xa = len * g_.comps, g_.xb = step * g_.comps, g_.xs = g_.comps;
    g_.ya = frames * g_.bins * 2, g_.yb = g_.bins * 2, g_.ys = 2;
    set_output(n, 0, x.dtype, {batch, frames, g_.bins, 2});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    eval_dft(g_, *in[0], in.size() > 2 ? in[2] : nullptr, out[0]);
  }

  int64_t min_opset() const override { return 17; }
  const DftGeom& geom() const { return g_; }

 private:
  bool onesided_ = true;
  DftGeom g_;
};

enum class Win { Hann, Hamming, Blackman };

class Window : public Op {
 public:
  explicit Window(Win w) {
    if (w == Win::Hann) g_.a0 = 0.5, g_.a1 = 0.5;
    else if (w == Win::Hamming) g_.a0 = 25.0 / 46.0, g_.a1 = 21.0 / 46.0;
    else g_.a0 = 0.42, g_.a1 = 0.5, g_.a2 = 0.08;
  }

  void parse(AttrReader& a) override {
    periodic_ = bool_attr(a, "periodic", 1) == 1;
    dtype_ = out_dtype_attr(a);
  }

  bool static_input(size_t i) const override { return i == 0; }

  void infer(Node& n) override {
    if (n.inputs.size() != 1) n.invalid(fmt::format("expects 1 input (size), got {}", n.inputs.size()));
    need_input(n, 0, "size");
    int64_t size = static_scalar(n, 0, "size");
    if (size < 0) n.invalid(fmt::format("size {} is negative", size));
    g_.size = size;
    g_.period = periodic_ ? size : size - 1;
    set_output(n, 0, dtype_, {size});
  }

  void eval(const Node&, const std::vector<const Tensor*>&, std::vector<Tensor>& out) const override {
    for (int64_t k = 0; k < g_.size; ++k) out[0].set(k, window_value(g_, k));
  }

  int64_t min_opset() const override { return 17; }
  const WindowGeom& geom() const { return g_; }

 private:
  bool periodic_ = true;
  DType dtype_ = DType::F32;
  WindowGeom g_;
};

class MelWeightMatrix : public Op {
 public:
  void parse(AttrReader& a) override { dtype_ = out_dtype_attr(a); }

  bool static_input(size_t) const override { return true; }

  void infer(Node& n) override {
    if (n.inputs.size() != 5)
      n.invalid(fmt::format("expects 5 inputs (num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz), got {}",
                            n.inputs.size()));
    const char* names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
    for (size_t i = 0; i < 5; ++i) need_input(n, i, names[i]);
    int64_t mels = static_scalar(n, 0, "num_mel_bins"), dft = static_scalar(n, 1, "dft_length"), rate = static_scalar(n, 2, "sample_rate");
    if (mels < 0) n.invalid(fmt::format("num_mel_bins {} is negative", mels));
    if (mels > (int64_t{1} << 24)) n.unsupported(fmt::format("num_mel_bins {} is over 2^24", mels));
    if (dft < 1) n.invalid(fmt::format("dft_length {} must be at least 1", dft));
    if (rate < 1) n.invalid(fmt::format("sample_rate {} must be at least 1", rate));
    double edge[2];
    for (size_t i = 3; i < 5; ++i) {
      expect_dtype(n, i, {DType::F32, DType::F64});
      const Tensor& t = static_tensor(n, i, names[i]);
      if (t.numel() != 1) n.invalid(fmt::format("{} must be a scalar, got shape {}", names[i], shape_str(t.shape)));
      edge[i - 3] = t.get(0);
      if (!std::isfinite(edge[i - 3])) n.invalid(fmt::format("{} {} is not a frequency", names[i], edge[i - 3]));
    }
    g_.spec_bins = dft / 2 + 1;
    g_.mel_bins = mels;
    g_.points.clear();
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    double lo = mel(edge[0]), step = (mel(edge[1]) - lo) / static_cast<double>(mels + 2);
    for (int64_t i = 0; i < mels + 2; ++i) {
      double hz = 700.0 * (std::pow(10.0, (lo + step * static_cast<double>(i)) / 2595.0) - 1.0);
      double bin = std::floor((static_cast<double>(dft) + 1.0) * hz / static_cast<double>(rate));
      if (!(bin >= 0 && bin < static_cast<double>(g_.spec_bins)))
        n.invalid(fmt::format("lower_edge_hertz {} and upper_edge_hertz {} put mel point {} at spectrogram bin {}, outside the {} "
                              "bins of dft_length {} at sample_rate {}", edge[0], edge[1], i, bin, g_.spec_bins, dft, rate));
      g_.points.push_back(static_cast<int64_t>(bin));
    }
    set_output(n, 0, dtype_, {g_.spec_bins, mels});
  }

  void eval(const Node&, const std::vector<const Tensor*>&, std::vector<Tensor>& out) const override {
    Tensor& y = out[0];
    const int64_t M = g_.mel_bins;
    for (int64_t i = 0; i < M; ++i) {
      int64_t lo = g_.points[static_cast<size_t>(i)], c = g_.points[static_cast<size_t>(i + 1)], hi = g_.points[static_cast<size_t>(i + 2)];
      if (c == lo) y.set(c * M + i, 1.0);
      for (int64_t j = lo; c != lo && j <= c; ++j)
        y.set(j * M + i, static_cast<double>(j - lo) / static_cast<double>(c - lo));
      for (int64_t j = c; j < hi; ++j) y.set(j * M + i, static_cast<double>(hi - j) / static_cast<double>(hi - c));
    }
  }

  int64_t min_opset() const override { return 17; }
  const MelGeom& geom() const { return g_; }

 private:
  DType dtype_ = DType::F32;
  MelGeom g_;
};

}  // namespace

const DftGeom& dft_geom(const Node& n) {
  if (n.op_type == "STFT") return op_as<Stft>(n).geom();
  return op_as<Dft>(n).geom();
}
const WindowGeom& window_geom(const Node& n) { return op_as<Window>(n).geom(); }
const MelGeom& mel_geom(const Node& n) { return op_as<MelWeightMatrix>(n).geom(); }

void register_signal(OpTable& t) {
  t["DFT"] = [] { return std::unique_ptr<Op>(std::make_unique<Dft>()); };
  t["STFT"] = [] { return std::unique_ptr<Op>(std::make_unique<Stft>()); };
  t["HannWindow"] = [] { return std::unique_ptr<Op>(std::make_unique<Window>(Win::Hann)); };
  t["HammingWindow"] = [] { return std::unique_ptr<Op>(std::make_unique<Window>(Win::Hamming)); };
  t["BlackmanWindow"] = [] { return std::unique_ptr<Op>(std::make_unique<Window>(Win::Blackman)); };
  t["MelWeightMatrix"] = [] { return std::unique_ptr<Op>(std::make_unique<MelWeightMatrix>()); };
}

}  // namespace onnxc
