// ir/ops/resize.cc — Resize (versions 10, 11, 13, 18, 19) and Upsample (7, 9; deprecated at 10
// but accepted at any opset the model declares). Upsample-1, an experimental op with
// height_scale/width_scale attributes (opsets 1 to 6), is refused (exit 3). Resize-19 adds
// coordinate_transformation_mode half_pixel_symmetric; unchanged after it up to opset 28.
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
// Per axis shape inference tabulates the taps at compile time (input indices and weights;
// duplicate taps merged, zero taps dropped: ResizeGeom, ir/ops/resize.h); the reference and
// the C backend's kernel (kernels/resize.cc) both read those tables.
// Gaps: nearest is any dtype, linear/cubic are float32 only.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <set>

#include "ir/ops/ops.h"
#include "ir/ops/resize.h"

namespace onnxc {
namespace {

constexpr int64_t kMaxResizeAxis = int64_t{1} << 24;  // output size per axis (infer)

enum class Coord { HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize };
enum class Round { PreferFloor, PreferCeil, Floor, Ceil };

class Resize : public Op {
 public:
  explicit Resize(bool upsample) : upsample_(upsample) {}

  void parse(AttrReader& a) override {
    opset_ = a.opset();
    const Node& n = a.node();
    if (upsample_ && opset_ < 7) n.unsupported("Upsample-1 (experimental, opsets 1 to 6) is not supported");
    std::string m = a.s("mode", "nearest");
    if (m == "nearest") g_.interp = Interp::Nearest;
    else if (m == "linear") g_.interp = Interp::Linear;
    else if (m == "cubic" && !upsample_ && opset_ >= 11) g_.interp = Interp::Cubic;
    else n.invalid("mode '" + m + "' is not one of nearest, linear" + (!upsample_ && opset_ >= 11 ? ", cubic" : ""));
    g_.desc = m + (g_.interp == Interp::Nearest ? " (floor)" : "") + ", asymmetric";
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
    g_.extrapolation = a.f("extrapolation_value", 0.0);
    std::string r = a.s("nearest_mode", "round_prefer_floor");
    if (r == "round_prefer_floor") round_ = Round::PreferFloor;
    else if (r == "round_prefer_ceil") round_ = Round::PreferCeil;
    else if (r == "floor") round_ = Round::Floor;
    else if (r == "ceil") round_ = Round::Ceil;
    else n.invalid("nearest_mode '" + r + "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
    g_.desc = m + (g_.interp == Interp::Nearest ? " (" + r + ")" : "") + ", " + c;
    if (opset_ < 18) return;
    int64_t aa = a.i("antialias", 0);
    if (aa != 0 && aa != 1) n.invalid("antialias must be 0 or 1, got " + std::to_string(aa));
    antialias_ = aa == 1 && g_.interp != Interp::Nearest;
    if (antialias_) g_.desc += ", antialias";
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
    if (g_.interp != Interp::Nearest && dt != DType::F32)
      n.unsupported(std::string(g_.interp == Interp::Linear ? "linear" : "cubic") + " resize of " + dtype_name(dt) +
                    " data is not supported (float32 only)");
    size_t max_in = upsample_ ? (has_attr_scales_ ? 1 : 2) : opset_ < 11 ? 2 : 4;
    if (n.inputs.size() > max_in) n.invalid("takes at most " + std::to_string(max_in) + " inputs, got " + std::to_string(n.inputs.size()));
    g_.axis.assign(r, ResizeAxis{});
    for (size_t d = 0; d < r; ++d) g_.axis[d].in = g_.axis[d].out = s[d];
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
      for (size_t d = 0; d < r; ++d) set_scale(g_.axis[d], sc[d]);
    } else {
      infer_11(n, s);
    }
    Shape out(r);
    for (size_t d = 0; d < r; ++d) {
      out[d] = g_.axis[d].out;
      // Each output index along an axis gets a row of taps at compile time (tabulate): bounded
      // so that a huge scale cannot make the compiler allocate gigabytes for its tables.
      if (out[d] > kMaxResizeAxis)
        n.unsupported("output dimension " + std::to_string(out[d]) + " is too large (onnxc resizes an axis to at most 2^24)");
      if (g_.axis[d].in == 0 && g_.axis[d].out > 0)
        n.invalid("cannot resize the empty axis " + std::to_string(d) + " to size " + std::to_string(g_.axis[d].out));
    }
    set_output(n, 0, dt, out);
    g_.tables.assign(r, AxisTable{});
    if (numel(out) == 0) return;
    for (size_t d = 0; d < r; ++d) g_.tables[d] = tabulate(g_.axis[d]);
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
        ResizeAxis& a = g_.axis[static_cast<size_t>(axes[k])];
        double b = rt.get(static_cast<int64_t>(k)), e = rt.get(static_cast<int64_t>(k + na));
        a.roi0 = b;
        a.roi_len = rt.dtype == DType::F32 ? static_cast<double>(static_cast<float>(e) - static_cast<float>(b)) : e - b;
      }
    }
    if (has_scales) {
      const Tensor& t = static_tensor(n, 2, "scales");
      if (!dtype_is_float(t.dtype)) n.invalid(std::string("scales must be float, got ") + dtype_name(t.dtype));
      std::vector<double> sc = read_scales(n, t.to_f64(), na);
      for (size_t k = 0; k < na; ++k) set_scale(g_.axis[static_cast<size_t>(axes[k])], sc[k]);
      return;
    }
    const Tensor& t = static_tensor(n, 3, "sizes");
    if (!dtype_is_int(t.dtype)) n.invalid(std::string("sizes must be int64, got ") + dtype_name(t.dtype));
    std::vector<int64_t> sz = t.to_i64();
    if (sz.size() != na) n.invalid("sizes has " + std::to_string(sz.size()) + " values, expected " + std::to_string(na));
    for (int64_t v : sz)
      if (v < 0) n.invalid("size " + std::to_string(v) + " is negative");
    for (size_t k = 0; k < na; ++k) {
      ResizeAxis& a = g_.axis[static_cast<size_t>(axes[k])];
      a.out = sz[k];
      a.scale = a.in > 0 ? static_cast<double>(a.out) / static_cast<double>(a.in) : 1.0;
    }
    if (policy_ == "stretch") return;
    double sc = policy_ == "not_larger" ? INFINITY : -INFINITY;
    for (size_t k = 0; k < na; ++k) {
      double v = g_.axis[static_cast<size_t>(axes[k])].scale;
      sc = policy_ == "not_larger" ? std::min(sc, v) : std::max(sc, v);
    }
    for (size_t k = 0; k < na; ++k) {
      ResizeAxis& a = g_.axis[static_cast<size_t>(axes[k])];
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
    switch (g_.interp) {
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
    size_t r = g_.axis.size(), es = dtype_size(x.dtype);
    Shape ist = strides_of(x.shape);
    bool flt = dtype_is_float(y.dtype);
    std::vector<int64_t> pos(r, 0);
    for (int64_t o = 0, total = y.numel(); o < total; ++o) {
      bool inside = true;
      for (size_t d = 0; d < r; ++d) inside = inside && pos[d] >= g_.tables[d].lo && pos[d] < g_.tables[d].hi;
      if (!inside) {
        if (flt) y.set(o, g_.extrapolation);
        else y.set_i64(o, static_cast<int64_t>(g_.extrapolation));
      } else if (flt) {
        // Sum over every combination of taps, weights multiplied across axes.
        double acc = 0;
        std::function<void(size_t, int64_t, double)> sum = [&](size_t d, int64_t off, double wgt) {
          if (d == r) { acc += wgt * x.get(off); return; }
          const AxisTable& t = g_.tables[d];
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
          const AxisTable& t = g_.tables[d];
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





  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t min_opset() const override { return upsample_ ? 1 : 10; }
  const ResizeGeom& geom() const { return g_; }

 private:
  bool upsample_;
  int64_t opset_ = 0;
  Coord coord_ = Coord::Asymmetric;  // Resize-10 and Upsample
  Round round_ = Round::Floor;       // Resize-10 and Upsample
  double cubic_a_ = -0.75;
  bool exclude_outside_ = false, antialias_ = false;
  std::vector<double> attr_scales_;
  bool has_attr_scales_ = false;
  std::vector<int64_t> axes_;
  bool has_axes_ = false;
  std::string policy_ = "stretch";
  ResizeGeom g_;  // axes and tables set by infer
};

}  // namespace

const ResizeGeom& resize_geom(const Node& n) { return op_as<Resize>(n).geom(); }

void register_resize(OpTable& t) {
  t["Resize"] = [] { return std::unique_ptr<Op>(std::make_unique<Resize>(false)); };
  t["Upsample"] = [] { return std::unique_ptr<Op>(std::make_unique<Resize>(true)); };
}

}  // namespace onnxc
