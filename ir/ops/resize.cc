// ir/ops/resize.cc — Resize (opsets 10, 11, 13, 18) and Upsample (7, 9; deprecated at 10
// but accepted at any opset the model declares).
//
// Semantics follow the ONNX reference implementation (onnx/reference/ops/op_resize.py),
// which the backend tests are generated from: every axis is interpolated independently;
// an output index x maps to x_original by coordinate_transformation_mode, where
// "length_resized" is scale·length_original as a fraction (it differs from the integer
// output length when scales are given); the taps around x_original get the weights of
// the mode (nearest: 1 tap by nearest_mode; linear: 2; cubic: 4 with cubic_coeff_a;
// antialias stretches the linear/cubic filter by 1/scale when downscaling);
// exclude_outside zeroes taps outside the input and renormalises; taps are then clamped
// to the input (edge padding). tf_crop_and_resize maps through roi and gives
// extrapolation_value outside [0, length_original - 1].
// Resize-10 and Upsample are asymmetric + floor (nearest), as ONNX's 10→11 version
// converter rewrites them; Upsample-7 takes scales as an attribute, later ones as input 1.
// Resize-11 also accepts tf_half_pixel_for_nn; Resize-18 adds axes, antialias and
// keep_aspect_ratio_policy. scales/sizes/roi must be compile-time constants; roi is read
// only for tf_crop_and_resize.
//
// Per axis the taps are tabulated at compile time (src = input offsets, wt = weights;
// duplicate taps merged, zero taps dropped), so the emitted C is loops over gathers from
// static const tables: identity axes are merged into blocks, the taps of outer resized
// axes are hoisted into row pointers and weights, and the innermost loop is a gather
// (or a contiguous read for an innermost identity block). With several outer taps the
// source rows are first combined into a local row (contiguous), so the gather runs once.
// Nearest upsampling copies an output block when its source equals the previous one's.
// Filters with many taps (antialias at strong downscaling, cubic on 3+ axes) use tap
// loops in the innermost body instead.
// NCHWc (float32 nearest / linear of the spatial axes): per output position the same tap
// tables, b lanes innermost (emit_nchwc).
// Gaps: nearest is any dtype, linear/cubic are float32 only.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>

#include "codegen/c_emit.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class Interp { Nearest, Linear, Cubic };
enum class Coord { HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize };
enum class Round { PreferFloor, PreferCeil, Floor, Ceil };

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

std::string scaled(const std::string& i, int64_t st) { return st == 1 ? i : fmt::format("{} * {}", i, st); }
void add_term(std::string& acc, const std::string& t) { acc += (acc.empty() ? "" : " + ") + t; }

// A static const table of `rows` x `k` literals ([rows] when k == 1), packed several per line.
void emit_table(CEmit& e, const std::string& type, const std::string& name, size_t rows, size_t k,
                const std::vector<std::string>& v) {
  e("static const {} {}[{}]{} = {{", type, name, rows, k == 1 ? "" : fmt::format("[{}]", k));
  std::string line;
  for (size_t r = 0; r < rows; ++r) {
    std::string item;
    if (k == 1) item = v[r];
    else {
      item = "{";
      for (size_t t = 0; t < k; ++t) item += (t ? ", " : "") + v[r * k + t];
      item += "}";
    }
    line += item + (r + 1 < rows ? "," : "");
    if (line.size() > 90 || r + 1 == rows) { e("{}", line); line.clear(); }
    else line += " ";
  }
  e("}};");
}

class Resize : public Op {
 public:
  explicit Resize(bool upsample) : upsample_(upsample) {}

  void parse(AttrReader& a) override {
    opset_ = a.opset();
    const Node& n = a.node();
    std::string m = a.s("mode", "nearest");
    if (m == "nearest") interp_ = Interp::Nearest;
    else if (m == "linear") interp_ = Interp::Linear;
    else if (m == "cubic" && !upsample_ && opset_ >= 11) interp_ = Interp::Cubic;
    else n.invalid("mode '" + m + "' is not one of nearest, linear" + (!upsample_ && opset_ >= 11 ? ", cubic" : ""));
    desc_ = m + (interp_ == Interp::Nearest ? " (floor)" : "") + ", asymmetric";
    if (upsample_) {
      // Upsample-7 has a scales attribute; some converters keep it in later opsets too.
      if (a.has("scales") || opset_ < 9) {
        attr_scales_ = a.floats("scales");
        if (attr_scales_.empty()) n.invalid("attribute 'scales' is required for Upsample before opset 9");
        has_attr_scales_ = true;
      }
      return;
    }
    if (opset_ < 11) return;
    std::string c = a.s("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") coord_ = Coord::HalfPixel;
    else if (c == "half_pixel_symmetric" && opset_ >= 19) coord_ = Coord::HalfPixelSymmetric;
    else if (c == "pytorch_half_pixel") coord_ = Coord::PytorchHalfPixel;
    else if (c == "align_corners") coord_ = Coord::AlignCorners;
    else if (c == "asymmetric") coord_ = Coord::Asymmetric;
    else if (c == "tf_half_pixel_for_nn" && opset_ < 13) coord_ = Coord::TfHalfPixelForNn;
    else if (c == "tf_crop_and_resize") coord_ = Coord::TfCropAndResize;
    else n.invalid("coordinate_transformation_mode '" + c + "' is not valid at opset " + std::to_string(opset_));
    cubic_a_ = a.f("cubic_coeff_a", -0.75);
    exclude_outside_ = a.i("exclude_outside", 0) != 0;
    extrapolation_ = a.f("extrapolation_value", 0.0);
    std::string r = a.s("nearest_mode", "round_prefer_floor");
    if (r == "round_prefer_floor") round_ = Round::PreferFloor;
    else if (r == "round_prefer_ceil") round_ = Round::PreferCeil;
    else if (r == "floor") round_ = Round::Floor;
    else if (r == "ceil") round_ = Round::Ceil;
    else n.invalid("nearest_mode '" + r + "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
    desc_ = m + (interp_ == Interp::Nearest ? " (" + r + ")" : "") + ", " + c;
    if (opset_ < 18) return;
    int64_t aa = a.i("antialias", 0);
    if (aa != 0 && aa != 1) n.invalid("antialias must be 0 or 1, got " + std::to_string(aa));
    antialias_ = aa == 1 && interp_ != Interp::Nearest;
    if (antialias_) desc_ += ", antialias";
    if (auto ax = a.opt_ints("axes")) { axes_ = *ax; has_axes_ = true; }
    policy_ = a.s("keep_aspect_ratio_policy", "stretch");
    if (policy_ != "stretch" && policy_ != "not_larger" && policy_ != "not_smaller")
      n.invalid("keep_aspect_ratio_policy '" + policy_ + "' is not one of stretch, not_larger, not_smaller");
  }

  bool static_input(size_t i) const override { return i > 0; }

  // Scales of a scales tensor (or attribute), checked against the expected count.
  std::vector<double> read_scales(const Node& n, std::vector<double> s, size_t want) const {
    if (s.size() != want)
      n.invalid("scales has " + std::to_string(s.size()) + " values, expected " + std::to_string(want));
    for (double v : s)
      if (!(v > 0) || !std::isfinite(v) || (upsample_ && v < 1))
        n.invalid("scale " + fmt::format("{}", v) + (upsample_ ? " is not >= 1" : " is not a positive number"));
    return s;
  }

  void infer(Node& n) override {
    if (!n.in(0)) n.invalid("input 0 (X) is required");
    const Shape& s = n.in(0)->shape;
    size_t r = s.size();
    DType dt = n.in(0)->dtype;
    if (interp_ != Interp::Nearest && dt != DType::F32)
      n.unsupported(std::string(interp_ == Interp::Linear ? "linear" : "cubic") + " resize of " + dtype_name(dt) +
                    " data is not supported (float32 only)");
    size_t max_in = upsample_ ? (has_attr_scales_ ? 1 : 2) : opset_ < 11 ? 2 : 4;
    if (n.inputs.size() > max_in) n.invalid("takes at most " + std::to_string(max_in) + " inputs, got " + std::to_string(n.inputs.size()));
    axis_.assign(r, ResizeAxis{});
    for (size_t d = 0; d < r; ++d) axis_[d].in = axis_[d].out = s[d];
    auto tensor_scales = [&](size_t i) {
      const Tensor& t = static_tensor(n, i, "scales");
      if (!dtype_is_float(t.dtype)) n.invalid(std::string("scales must be float, got ") + dtype_name(t.dtype));
      return t.to_f64();
    };
    if (upsample_ || opset_ < 11) {
      std::vector<double> sc;
      if (has_attr_scales_) sc = attr_scales_;
      else if (n.in(1)) sc = tensor_scales(1);
      else n.invalid("input 1 (scales) is required");
      sc = read_scales(n, sc, r);
      for (size_t d = 0; d < r; ++d) set_scale(axis_[d], sc[d]);
    } else {
      infer_11(n, s);
    }
    Shape out(r);
    for (size_t d = 0; d < r; ++d) {
      out[d] = axis_[d].out;
      if (out[d] > INT32_MAX) n.unsupported("output dimension " + std::to_string(out[d]) + " is too large");
      if (axis_[d].in == 0 && axis_[d].out > 0)
        n.invalid("cannot resize the empty axis " + std::to_string(d) + " to size " + std::to_string(axis_[d].out));
    }
    set_output(n, 0, dt, out);
    tables_.assign(r, AxisTable{});
    if (numel(out) == 0) return;
    for (size_t d = 0; d < r; ++d) tables_[d] = tabulate(axis_[d]);
  }

  static void set_scale(ResizeAxis& a, double scale) {
    a.scale = scale;
    a.out = static_cast<int64_t>(std::floor(std::min(static_cast<double>(a.in) * scale, 4e18)));
  }

  void infer_11(const Node& n, const Shape& s) {
    int64_t r = static_cast<int64_t>(s.size());
    std::vector<int64_t> axes;
    if (has_axes_) {
      std::set<int64_t> seen;
      for (int64_t ax : axes_) {
        int64_t orig = ax;
        if (!normalize_axis(ax, r)) n.invalid("axis " + std::to_string(orig) + " is out of range for rank " + std::to_string(r));
        if (!seen.insert(ax).second) n.invalid("axis " + std::to_string(orig) + " appears twice in axes");
        axes.push_back(ax);
      }
    } else {
      for (int64_t d = 0; d < r; ++d) axes.push_back(d);
    }
    size_t na = axes.size();
    auto present = [&](size_t i) { return n.in(i) && numel(n.in(i)->shape) > 0; };
    bool has_scales = present(2), has_sizes = present(3);
    if (has_scales && has_sizes) n.invalid("only one of scales and sizes may be given, got both");
    if (!has_scales && !has_sizes) n.invalid("one of scales and sizes must be given (non-empty)");
    if (coord_ == Coord::TfCropAndResize) {
      if (!n.in(1)) n.invalid("tf_crop_and_resize needs input 1 (roi)");
      const Tensor& rt = static_tensor(n, 1, "roi");
      if (!dtype_is_float(rt.dtype)) n.invalid(std::string("roi must be float, got ") + dtype_name(rt.dtype));
      if (static_cast<size_t>(rt.numel()) != 2 * na)
        n.invalid("roi has " + std::to_string(rt.numel()) + " values, expected " + std::to_string(2 * na));
      for (size_t k = 0; k < na; ++k) {
        ResizeAxis& a = axis_[static_cast<size_t>(axes[k])];
        double b = rt.get(static_cast<int64_t>(k)), e = rt.get(static_cast<int64_t>(k + na));
        a.roi0 = b;
        a.roi_len = rt.dtype == DType::F32 ? static_cast<double>(static_cast<float>(e) - static_cast<float>(b)) : e - b;
      }
    }
    if (has_scales) {
      const Tensor& t = static_tensor(n, 2, "scales");
      if (!dtype_is_float(t.dtype)) n.invalid(std::string("scales must be float, got ") + dtype_name(t.dtype));
      std::vector<double> sc = read_scales(n, t.to_f64(), na);
      for (size_t k = 0; k < na; ++k) set_scale(axis_[static_cast<size_t>(axes[k])], sc[k]);
      return;
    }
    const Tensor& t = static_tensor(n, 3, "sizes");
    if (!dtype_is_int(t.dtype)) n.invalid(std::string("sizes must be int64, got ") + dtype_name(t.dtype));
    std::vector<int64_t> sz = t.to_i64();
    if (sz.size() != na) n.invalid("sizes has " + std::to_string(sz.size()) + " values, expected " + std::to_string(na));
    for (int64_t v : sz)
      if (v < 0) n.invalid("size " + std::to_string(v) + " is negative");
    for (size_t k = 0; k < na; ++k) {
      ResizeAxis& a = axis_[static_cast<size_t>(axes[k])];
      a.out = sz[k];
      a.scale = a.in > 0 ? static_cast<double>(a.out) / static_cast<double>(a.in) : 1.0;
    }
    if (policy_ == "stretch") return;
    double sc = policy_ == "not_larger" ? INFINITY : -INFINITY;
    for (size_t k = 0; k < na; ++k) {
      double v = axis_[static_cast<size_t>(axes[k])].scale;
      sc = policy_ == "not_larger" ? std::min(sc, v) : std::max(sc, v);
    }
    for (size_t k = 0; k < na; ++k) {
      ResizeAxis& a = axis_[static_cast<size_t>(axes[k])];
      a.scale = sc;
      a.out = static_cast<int64_t>(std::min(sc * static_cast<double>(a.in) + 0.5, 4e18));
    }
  }

  // The taps of output index x along axis a, following the ONNX reference: source indices
  // (clamped into [0, in)) and weights; false when x lies outside the crop window.
  bool taps(const ResizeAxis& a, int64_t x, std::vector<int64_t>& idx, std::vector<double>& w) const {
    double in = static_cast<double>(a.in), s = a.scale, ow = s * in, xd = static_cast<double>(x), xo = 0;
    switch (coord_) {
      case Coord::HalfPixel: xo = (xd + 0.5) / s - 0.5; break;
      case Coord::HalfPixelSymmetric: {
        double adj = static_cast<double>(a.out) / ow, offset = in / 2 * (1 - adj);
        xo = offset + (xd + 0.5) / s - 0.5;
        break;
      }
      case Coord::PytorchHalfPixel: xo = ow == 1 ? -0.5 : (xd + 0.5) / s - 0.5; break;
      case Coord::AlignCorners: xo = ow == 1 ? 0.0 : xd * (in - 1) / (ow - 1); break;
      case Coord::Asymmetric: xo = xd / s; break;
      case Coord::TfHalfPixelForNn: xo = (xd + 0.5) / s; break;
      case Coord::TfCropAndResize:
        xo = ow == 1 ? a.roi_len * (in - 1) / 2 : xd * a.roi_len * (in - 1) / (ow - 1);
        xo += a.roi0 * (in - 1);
        if (xo < 0 || xo > in - 1) return false;
        break;
    }
    double fl = std::floor(xo);
    bool integral = xo == fl;
    double ratio = integral ? 1.0 : xo - fl;  // in (0, 1]: the left tap is the one below x_original
    int64_t left = static_cast<int64_t>(fl) - (integral ? 1 : 0);
    std::vector<double> c;
    int64_t first = left;  // source index of c[0]
    double sa = std::min(s, 1.0);
    switch (interp_) {
      case Interp::Nearest: {
        bool up = integral || round_ == Round::Ceil || (round_ == Round::PreferFloor && ratio > 0.5) ||
                  (round_ == Round::PreferCeil && ratio >= 0.5);
        c = {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
        break;
      }
      case Interp::Linear:
        if (!antialias_) {
          c = {1 - ratio, ratio};
          break;
        } else {
          int64_t start = static_cast<int64_t>(std::floor(-1 / sa) + 1), n = 2 - 2 * start;
          double sum = 0;
          for (int64_t j = start; j < start + n; ++j) {
            double v = std::clamp(1 - std::fabs((static_cast<double>(j) - ratio) * sa), 0.0, 1.0);
            c.push_back(v);
            sum += v;
          }
          for (double& v : c) v /= sum;
          first = left + start;
        }
        break;
      case Interp::Cubic: {
        double A = cubic_a_;
        if (!antialias_) {
          double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
          c = {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
               ((A + 2) * q - (A + 3)) * q * q + 1, ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
          first = left - 1;
        } else {
          auto coeff = [A](double v) {
            v = std::fabs(v);
            if (v <= 1) return (A + 2) * v * v * v - (A + 3) * v * v + 1;
            if (v < 2) return A * v * v * v - 5 * A * v * v + 8 * A * v - 4 * A;
            return 0.0;
          };
          int64_t start = static_cast<int64_t>(std::floor(-2 / sa) + 1), end = 2 - start;
          double sum = 0;
          for (int64_t j = start; j < end; ++j) {
            c.push_back(coeff(sa * (static_cast<double>(j) - ratio)));
            sum += c.back();
          }
          for (double& v : c) v /= sum;
          first = left + start;
        }
        break;
      }
    }
    if (exclude_outside_) {
      double sum = 0;
      for (size_t t = 0; t < c.size(); ++t) {
        int64_t i = first + static_cast<int64_t>(t);
        if (i < 0 || i >= a.in) c[t] = 0;
        sum += c[t];
      }
      for (double& v : c) v /= sum;
    }
    idx.clear();
    w.clear();
    for (size_t t = 0; t < c.size(); ++t) {
      int64_t i = std::clamp<int64_t>(first + static_cast<int64_t>(t), 0, a.in - 1);
      idx.push_back(i);
      w.push_back(c[t]);
    }
    return true;
  }

  // Tabulates one axis: taps merged by source index, zero weights dropped, rows padded
  // to the widest with weight-0 repeats of their last tap.
  AxisTable tabulate(const ResizeAxis& a) const {
    AxisTable t;
    std::vector<std::vector<std::pair<int64_t, double>>> rows(static_cast<size_t>(a.out));
    std::vector<int64_t> idx;
    std::vector<double> w;
    int64_t first_in = -1, last_in = -1;
    for (int64_t x = 0; x < a.out; ++x) {
      if (!taps(a, x, idx, w)) continue;
      ONNXC_ASSERT(last_in < 0 || last_in == x - 1, "resize: crop window is not an interval");
      if (first_in < 0) first_in = x;
      last_in = x;
      auto& row = rows[static_cast<size_t>(x)];
      for (size_t k = 0; k < idx.size(); ++k) {
        auto it = std::find_if(row.begin(), row.end(), [&](auto& p) { return p.first == idx[k]; });
        if (it != row.end()) it->second += w[k];
        else row.emplace_back(idx[k], w[k]);
      }
      row.erase(std::remove_if(row.begin(), row.end(), [](auto& p) { return p.second == 0.0; }), row.end());
      if (row.empty()) row.emplace_back(idx[0], 0.0);
      t.k = std::max(t.k, row.size());
    }
    t.lo = first_in < 0 ? 0 : first_in;
    t.hi = first_in < 0 ? 0 : last_in + 1;
    for (auto& row : rows) {
      for (size_t k = 0; k < t.k; ++k) {
        bool real = k < row.size();
        t.idx.push_back(row.empty() ? 0 : real ? row[k].first : row.back().first);
        t.w.push_back(real ? row[k].second : 0.0);
      }
    }
    return t;
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    Tensor& y = out[0];
    size_t r = axis_.size(), es = dtype_size(x.dtype);
    Shape ist = strides_of(x.shape);
    bool flt = dtype_is_float(y.dtype);
    std::vector<int64_t> pos(r, 0);
    for (int64_t o = 0, total = y.numel(); o < total; ++o) {
      bool inside = true;
      for (size_t d = 0; d < r; ++d) inside = inside && pos[d] >= tables_[d].lo && pos[d] < tables_[d].hi;
      if (!inside) {
        if (flt) y.set(o, extrapolation_);
        else y.set_i64(o, static_cast<int64_t>(extrapolation_));
      } else if (flt) {
        // Sum over every combination of taps, weights multiplied across axes.
        double acc = 0;
        std::function<void(size_t, int64_t, double)> sum = [&](size_t d, int64_t off, double wgt) {
          if (d == r) { acc += wgt * x.get(off); return; }
          const AxisTable& t = tables_[d];
          for (size_t k = 0; k < t.k; ++k) {
            size_t j = static_cast<size_t>(pos[d]) * t.k + k;
            sum(d + 1, off + t.idx[j] * ist[d], wgt * t.w[j]);
          }
        };
        sum(0, 0, 1.0);
        y.set(o, acc);
      } else {  // nearest on non-float data: copy the heaviest tap of every axis
        int64_t off = 0;
        for (size_t d = 0; d < r; ++d) {
          const AxisTable& t = tables_[d];
          size_t b = static_cast<size_t>(pos[d]) * t.k, best = b;
          for (size_t k = b; k < b + t.k; ++k)
            if (t.w[k] > t.w[best]) best = k;
          off += t.idx[best] * ist[d];
        }
        std::memcpy(&y.bytes[static_cast<size_t>(o) * es], &x.bytes[static_cast<size_t>(off) * es], es);
      }
      for (size_t d = r; d-- > 0;) {
        if (++pos[d] < y.shape[d]) break;
        pos[d] = 0;
      }
    }
  }

  // NCHWc: float32 nearest / linear resizes of the spatial axes (N and C unchanged).
  bool supports_nchwc(const Node& n, int64_t b) const override {
    if (b < 1 || axis_.size() < 3 || n.in(0)->dtype != DType::F32 || numel(n.out(0)->shape) == 0) return false;
    if (interp_ != Interp::Nearest && interp_ != Interp::Linear) return false;
    return tables_[0].identity(axis_[0]) && tables_[1].identity(axis_[1]);
  }

  // NCHW[b]c: per (image, channel block) and output position, the taps of every spatial
  // axis from the same tables as the plain kernel; each tap combination adds weight × b
  // lanes (a plain copy when every axis is a pure gather).
  void emit_nchwc(CEmit& e) const {
    const Shape& xs = e.in_shape(0);
    const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
    ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b), "NCHWc resize on " + e.node.in(0)->type_str());
    const size_t r = axis_.size();
    int64_t IS = 1, OS = 1;
    bool unit = true;
    for (size_t d = 2; d < r; ++d) IS *= axis_[d].in, OS *= axis_[d].out, unit = unit && tables_[d].unit();
    e("/* NCHW{}c resize ({}) of the spatial axes: srcA, wtA = input indices and weights of the taps along axis A. */", b, desc_);
    for (size_t d = 2; d < r; ++d) {
      const AxisTable& t = tables_[d];
      size_t rows = static_cast<size_t>(axis_[d].out);
      std::vector<std::string> src, wt;
      for (size_t j = 0; j < rows * t.k; ++j) {
        src.push_back(std::to_string(t.idx[j]));
        wt.push_back(c_float(t.w[j]));
      }
      emit_table(e, "int64_t", fmt::format("src{}", d), rows, t.k, src);
      if (!unit) emit_table(e, "float", fmt::format("wt{}", d), rows, t.k, wt);
    }
    const int64_t planes = xs[0] * CB;
    if (planes > 1 && planes * OS * b >= (1 << 16)) e("ONNXC_PRAGMA(omp parallel for schedule(static))");
    e("for (int64_t c = 0; c < {}; ++c) {{", planes);
    e("const float* restrict x = {} + c * {};", e.in(0), IS * b);
    e("float* restrict y = {} + c * {};", e.out(0), OS * b);
    std::string outside, dst = "o2";
    for (size_t d = 2; d < r; ++d) {
      e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", d, axis_[d].out);
      if (d > 2) dst = fmt::format("({}) * {} + o{}", dst, axis_[d].out, d);
      const AxisTable& t = tables_[d];
      if (t.lo > 0) outside += fmt::format("{}o{} < {}", outside.empty() ? "" : " || ", d, t.lo);
      if (t.hi < axis_[d].out) outside += fmt::format("{}o{} >= {}", outside.empty() ? "" : " || ", d, t.hi);
    }
    e("float* restrict yp = y + ({}) * {};", dst, b);
    if (!outside.empty()) {
      e("if ({}) {{", outside);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) yp[l] = {};", b, c_float(extrapolation_));
      e("continue;");
      e("}}");
    }
    auto tap = [&](size_t d) { return tables_[d].k == 1 ? fmt::format("src{0}[o{0}]", d) : fmt::format("src{0}[o{0}][t{0}]", d); };
    std::string src = tap(2);
    for (size_t d = 3; d < r; ++d) src = fmt::format("({}) * {} + {}", src, axis_[d].in, tap(d));
    if (unit) {
      e("const float* restrict xp = x + ({}) * {};", src, b);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) yp[l] = xp[l];", b);
    } else {
      e("float a[{}];", b);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) a[l] = 0.0f;", b);
      std::string w;
      for (size_t d = 2; d < r; ++d) {
        if (tables_[d].k > 1) e("for (int64_t t{0} = 0; t{0} < {1}; ++t{0}) {{", d, tables_[d].k);
        w += fmt::format("{}{}", w.empty() ? "" : " * ",
                         tables_[d].k == 1 ? fmt::format("wt{0}[o{0}]", d) : fmt::format("wt{0}[o{0}][t{0}]", d));
      }
      e("const float w = {};", w);
      e("const float* restrict xp = x + ({}) * {};", src, b);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) a[l] = ONNXC_FMA(w, xp[l], a[l]);", b);
      for (size_t d = 2; d < r; ++d)
        if (tables_[d].k > 1) e("}}");
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l];", b);
    }
    for (size_t d = 2; d < r; ++d) e("}}");
    e("}}");
  }

  void emit(CEmit& e) const override {
    if (e.out_layout(0).is_nchwc()) return emit_nchwc(e);
    const char* ct = e.in_ctype(0);
    int64_t total = numel(e.out_shape(0));
    if (total == 0) { e("/* empty output */"); return; }
    std::string ext = c_literal(e.out_dtype(0), extrapolation_);
    for (size_t d = 0; d < axis_.size(); ++d) {
      if (tables_[d].lo < tables_[d].hi) continue;
      e("/* axis {} lies wholly outside the crop: the output is all extrapolation_value */", d);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t i = 0; i < {}; ++i) {}[i] = {};", total, e.out(0), ext);
      return;
    }
    // Merge runs of identity axes into blocks; resized axes stay one dim each.
    struct Dim { bool resized; size_t axis; int64_t in, out; };
    std::vector<Dim> dims;
    for (size_t d = 0; d < axis_.size(); ++d) {
      const ResizeAxis& a = axis_[d];
      bool resized = !tables_[d].identity(a);
      if (!resized && a.out == 1) continue;  // nothing to loop over
      if (!resized && !dims.empty() && !dims.back().resized) {
        dims.back().in *= a.in;
        dims.back().out *= a.out;
        continue;
      }
      dims.push_back({resized, d, a.in, a.out});
    }
    if (dims.empty()) dims.push_back({false, 0, 1, 1});
    Shape loop_dims;
    for (auto& D : dims) loop_dims.push_back(D.out);
    e("/* {}: {} -> {}; loops over {}", desc_, shape_str(e.in_shape(0)), shape_str(e.out_shape(0)), shape_str(loop_dims));
    e("   (identity axes merged); srcA, wtA = input offsets and weights of the taps along input axis A */");
    size_t nd = dims.size();
    Shape ist(nd), ost(nd);
    for (size_t d = nd, si = 1, so = 1; d-- > 0;) {
      ist[d] = static_cast<int64_t>(si);
      ost[d] = static_cast<int64_t>(so);
      si *= static_cast<size_t>(dims[d].in);
      so *= static_cast<size_t>(dims[d].out);
    }
    // Tables: src = input element offsets of the taps (index times the dim's stride), wt = weights.
    size_t combos = 1, inner_k = 1;
    for (size_t d = 0; d < nd; ++d) {
      if (!dims[d].resized) continue;
      const AxisTable& t = tables_[dims[d].axis];
      int64_t maxoff = (dims[d].in - 1) * ist[d];
      std::vector<std::string> src, wt;
      for (size_t j = 0; j < t.idx.size(); ++j) {
        src.push_back(std::to_string(t.idx[j] * ist[d]));
        wt.push_back(c_float(t.w[j]));
      }
      size_t rows = static_cast<size_t>(dims[d].out);
      emit_table(e, maxoff <= INT32_MAX ? "int32_t" : "int64_t", fmt::format("src{}", dims[d].axis), rows, t.k, src);
      if (!t.unit()) emit_table(e, "float", fmt::format("wt{}", dims[d].axis), rows, t.k, wt);
      if (d + 1 < nd) combos *= t.k;
      else inner_k = t.k;
    }
    bool hoist = combos <= 8 && combos * inner_k <= 16;  // larger unrolled sums do not vectorize with clang
    auto tab = [&](const char* name, const Dim& D, const std::string& i, const std::string& t) {
      return tables_[D.axis].k == 1 ? fmt::format("{}{}[{}]", name, D.axis, i) : fmt::format("{}{}[{}][{}]", name, D.axis, i, t);
    };
    // Outer loops. With hoisting, each resized level multiplies the row pointers (p) and
    // their weights (a) by its taps; otherwise the taps become loops in the innermost body.
    struct Combo { std::string ptr, wt; };
    std::vector<Combo> cs = {{e.in(0), ""}};
    struct Level { size_t d; std::string pend; };
    std::vector<Level> looped;
    std::string yoff, pend;
    bool par = total >= (1 << 15);
    for (size_t d = 0; d + 1 < nd; ++d) {
      const Dim& D = dims[d];
      std::string iv = fmt::format("i{}", d);
      if (d == 0 && par && D.out > 1) e("ONNXC_PRAGMA(omp parallel for)");
      e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", iv, D.out);
      std::string yhere = yoff;
      add_term(yhere, scaled(iv, ost[d]));
      if (D.resized) {
        const AxisTable& t = tables_[D.axis];
        if (t.lo > 0 || t.hi < D.out) {
          std::string cond = t.lo > 0 && t.hi < D.out ? fmt::format("{0} < {1} || {0} >= {2}", iv, t.lo, t.hi)
                           : t.lo > 0                ? fmt::format("{} < {}", iv, t.lo)
                                                     : fmt::format("{} >= {}", iv, t.hi);
          e("/* outside the crop */");
          e("if ({}) {{", cond);
          e("{}* restrict yb = {} + {};", ct, e.out(0), yhere);
          e("for (int64_t j = 0; j < {}; ++j) yb[j] = {};", ost[d], ext);
          e("continue;");
          e("}}");
        }
      }
      yoff = yhere;
      if (!D.resized) {
        add_term(pend, scaled(iv, ist[d]));
        continue;
      }
      // Nearest upsampling repeats source rows: copy the block just written instead.
      if (tables_[D.axis].unit() && !(d == 0 && par && D.out > 1)) {
        const AxisTable& t = tables_[D.axis];
        bool repeats = false;
        for (int64_t o = std::max<int64_t>(t.lo, 1); o < t.hi; ++o)
          repeats = repeats || t.idx[static_cast<size_t>(o)] == t.idx[static_cast<size_t>(o - 1)];
        if (repeats) {
          e("/* same source as the previous block */");
          e("if ({0} > {1} && src{2}[{0}] == src{2}[{0} - 1]) {{", iv, t.lo, D.axis);
          e("{}* restrict yb = {} + {};", ct, e.out(0), yhere);
          e("memcpy(yb, yb - {0}, {0} * sizeof({1}));", ost[d], ct);
          e("continue;");
          e("}}");
        }
      }
      if (!hoist) {
        looped.push_back({d, pend});
        pend.clear();
        continue;
      }
      const AxisTable& t = tables_[D.axis];
      std::vector<Combo> next;
      for (const Combo& c : cs) {
        for (size_t k = 0; k < t.k; ++k) {
          std::string p = fmt::format("p{}_{}", d, next.size());
          std::string off = pend;
          add_term(off, tab("src", D, iv, std::to_string(k)));
          e("const {}* restrict {} = {} + {};", ct, p, c.ptr, off);
          std::string w = c.wt;
          if (!t.unit()) {
            w = fmt::format("a{}_{}", d, next.size());
            e("const float {} = {}{};", w, c.wt.empty() ? "" : c.wt + " * ", tab("wt", D, iv, std::to_string(k)));
          }
          next.push_back({p, w});
        }
      }
      cs = next;
      pend.clear();
    }
    // Innermost dim.
    const Dim& D = dims.back();
    std::string iv = fmt::format("i{}", nd - 1);
    e("{}* restrict yr = {}{};", ct, e.out(0), yoff.empty() ? "" : " + " + yoff);
    int64_t lo = 0, hi = D.out;
    if (D.resized) lo = tables_[D.axis].lo, hi = tables_[D.axis].hi;
    if (lo > 0) e("for (int64_t {0} = 0; {0} < {1}; ++{0}) yr[{0}] = {2};  /* outside the crop */", iv, lo, ext);
    if (hoist && !pend.empty()) {  // identity offsets since the last resized level
      for (size_t c = 0; c < cs.size(); ++c) {
        std::string q = fmt::format("r_{}", c);
        e("const {}* restrict {} = {} + {};", ct, q, cs[c].ptr, pend);
        cs[c].ptr = q;
      }
      pend.clear();
    }
    if (hi > lo && hoist && cs.size() > 1 && D.resized && D.in <= 4096 && D.in <= 2 * D.out * static_cast<int64_t>(inner_k)) {
      // Combine the source rows of the outer taps once (contiguous), then gather from that row.
      std::string sum;
      for (const Combo& c : cs) add_term(sum, c.wt.empty() ? c.ptr + "[j]" : fmt::format("{} * {}[j]", c.wt, c.ptr));
      e("float row[{}];", D.in);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t j = 0; j < {}; ++j) row[j] = {};", D.in, sum);
      cs = {{"row", ""}};
    }
    if (hi > lo) {
      // Tap loops inside the body do not vectorize (clang warns about a failed simd request).
      if (hoist) e("ONNXC_PRAGMA(omp {}simd)", nd == 1 && par ? "parallel for " : "");
      else if (nd == 1 && par) e("ONNXC_PRAGMA(omp parallel for)");
      e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) {{", iv, lo, hi);
      if (hoist) {
        std::string sum;
        for (const Combo& c : cs) {
          std::string inner;
          if (!D.resized) inner = fmt::format("{}[{}]", c.ptr, iv);
          else {
            const AxisTable& t = tables_[D.axis];
            for (size_t k = 0; k < t.k; ++k) {
              std::string g = fmt::format("{}[{}]", c.ptr, tab("src", D, iv, std::to_string(k)));
              add_term(inner, t.unit() ? g : fmt::format("{} * {}", tab("wt", D, iv, std::to_string(k)), g));
            }
            if (t.k > 1 && !c.wt.empty()) inner = "(" + inner + ")";
          }
          add_term(sum, c.wt.empty() ? inner : fmt::format("{} * {}", c.wt, inner));
        }
        e("yr[{}] = {};", iv, sum);
      } else {
        emit_tap_loops(e, dims, looped, pend, iv);
      }
      e("}}");
    }
    if (hi < D.out) e("for (int64_t {0} = {1}; {0} < {2}; ++{0}) yr[{0}] = {3};  /* outside the crop */", iv, hi, D.out, ext);
    for (size_t d = 0; d + 1 < nd; ++d) e("}}");
  }

  // The innermost body when taps are not hoisted: one loop per resized dim over its taps
  // (float data only: many taps only arise from linear/cubic filters).
  template <class DimT, class LevelT>
  void emit_tap_loops(CEmit& e, const std::vector<DimT>& dims, const std::vector<LevelT>& looped,
                      const std::string& pend_inner, const std::string& iv) const {
    auto tab = [&](const char* name, const DimT& D, const std::string& i, const std::string& t) {
      return tables_[D.axis].k == 1 ? fmt::format("{}{}[{}]", name, D.axis, i) : fmt::format("{}{}[{}][{}]", name, D.axis, i, t);
    };
    e("float acc = 0.0f;");
    std::string ptr = e.in(0), wt;
    size_t open = 0;
    for (const auto& L : looped) {
      const DimT& D = dims[L.d];
      const AxisTable& t = tables_[D.axis];
      std::string i = fmt::format("i{}", L.d), tv = fmt::format("t{}", L.d);
      if (t.k > 1) {
        e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", tv, t.k);
        ++open;
      }
      std::string off = L.pend;
      add_term(off, tab("src", D, i, tv));
      std::string q = fmt::format("q{}", L.d);
      e("const float* restrict {} = {} + {};", q, ptr, off);
      ptr = q;
      if (!t.unit()) {
        std::string b = fmt::format("b{}", L.d);
        e("const float {} = {}{};", b, wt.empty() ? "" : wt + " * ", tab("wt", D, i, tv));
        wt = b;
      }
    }
    const DimT& D = dims.back();
    std::string pre = wt.empty() ? "" : wt + " * ";
    if (!D.resized) {
      std::string off = pend_inner;
      add_term(off, iv);
      e("acc += {}{}[{}];", pre, ptr, off);
    } else {
      const AxisTable& t = tables_[D.axis];
      std::string base = pend_inner.empty() ? "" : pend_inner + " + ";
      std::string tv = "t";
      if (t.k > 1) e("for (int64_t t = 0; t < {}; ++t) {{", t.k);
      std::string g = fmt::format("{}[{}{}]", ptr, base, tab("src", D, iv, tv));
      e("acc += {}{}{};", pre, t.unit() ? "" : tab("wt", D, iv, tv) + " * ", g);
      if (t.k > 1) e("}}");
    }
    for (size_t k = 0; k < open; ++k) e("}}");
    e("yr[{}] = acc;", iv);
  }

  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  bool upsample_;
  int64_t opset_ = 0;
  Interp interp_ = Interp::Nearest;
  Coord coord_ = Coord::Asymmetric;  // Resize-10 and Upsample
  Round round_ = Round::Floor;       // Resize-10 and Upsample
  double cubic_a_ = -0.75, extrapolation_ = 0;
  bool exclude_outside_ = false, antialias_ = false;
  std::vector<double> attr_scales_;
  bool has_attr_scales_ = false;
  std::vector<int64_t> axes_;
  bool has_axes_ = false;
  std::string policy_ = "stretch";
  std::string desc_;  // "linear, half_pixel" for the emitted comment
  std::vector<ResizeAxis> axis_;  // per input axis, set by infer
  std::vector<AxisTable> tables_;
};

}  // namespace

void register_resize(OpTable& t) {
  t["Resize"] = [] { return std::unique_ptr<Op>(std::make_unique<Resize>(false)); };
  t["Upsample"] = [] { return std::unique_ptr<Op>(std::make_unique<Resize>(true)); };
}

}  // namespace onnxc
