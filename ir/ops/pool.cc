// ir/ops/pool.cc — MaxPool and AveragePool over N x C x D1 x ... x Dr (r >= 1; 1-D, 2-D
// and 3-D are the usual cases, any r works).
//
// Attributes: kernel_shape (required), strides, pads [b1..br, e1..er], dilations,
// auto_pad (NOTSET / SAME_UPPER / SAME_LOWER / VALID: auto_pad overrides pads), ceil_mode
// (explicit pads only; a last window must start inside the input or its left padding, as in
// ONNX Runtime and PyTorch), count_include_pad (AveragePool: the divisor counts padding up to
// the declared pads but never the ceil_mode overhang beyond them), storage_order (MaxPool's
// Indices output: 0 row-major, 1 column-major over the spatial dims).
// Padding never contributes a value: MaxPool skips it, AveragePool divides by the count.
// The C code loops over N*C planes (OpenMP), then output positions; each position computes
// its clipped window range per dim once, so the window loops carry no bounds tests. Dims
// where no window can be clipped use constant ranges. Window loops are short and stay
// scalar (no omp simd: clang cannot vectorize an fmaxf reduction and warns).
// dtypes: AveragePool float32; MaxPool float32, float64, int8, uint8 (Indices is int64).
// NCHWc (float32, no Indices): per output position, window taps outer and the channel-block
// lanes innermost (emit_nchwc), any spatial rank.
// Gaps: a window lying entirely in padding (pads >= kernel) yields the dtype's lowest value
// for MaxPool and 0 for AveragePool without count_include_pad.
#include <algorithm>
#include <cmath>
#include <limits>

#include "codegen/c_emit.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

// Per spatial dim: input size, output size, kernel, stride, dilation, pad begin / end.
struct Dim {
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

class Pool : public Op {
 public:
  explicit Pool(bool max) : max_(max) {}

  void parse(AttrReader& a) override {
    auto_pad_ = a.s("auto_pad", "NOTSET");
    kernel_ = a.ints("kernel_shape");
    strides_ = a.ints("strides");
    pads_ = a.ints("pads");
    dilations_ = a.ints("dilations");
    ceil_ = a.i("ceil_mode", 0);
    if (max_) storage_order_ = a.i("storage_order", 0);
    else count_pad_ = a.i("count_include_pad", 0);
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects exactly 1 input");
    if (n.outputs.size() > (max_ ? 2u : 1u)) n.invalid("too many outputs");
    if (max_) expect_dtype(n, 0, {DType::F32, DType::F64, DType::I8, DType::U8});
    else expect_float(n, 0);
    const Shape& x = n.in(0)->shape;
    if (x.size() < 3) n.invalid("input " + shape_str(x) + " must have rank >= 3 (N, C, spatial...)");
    size_t r = x.size() - 2;
    auto ranked = [&](const std::vector<int64_t>& v, size_t want, const char* what) {
      if (v.size() != want)
        n.invalid(std::string(what) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(want) +
                  " for input " + shape_str(x));
    };
    if (kernel_.empty()) n.invalid("attribute 'kernel_shape' is required");
    ranked(kernel_, r, "kernel_shape");
    if (!strides_.empty()) ranked(strides_, r, "strides");
    if (!dilations_.empty()) ranked(dilations_, r, "dilations");
    if (!pads_.empty()) ranked(pads_, 2 * r, "pads");
    if (auto_pad_ != "NOTSET" && auto_pad_ != "SAME_UPPER" && auto_pad_ != "SAME_LOWER" && auto_pad_ != "VALID")
      n.invalid("auto_pad '" + auto_pad_ + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    if (ceil_ != 0 && ceil_ != 1) n.invalid("ceil_mode must be 0 or 1, got " + std::to_string(ceil_));
    if (count_pad_ != 0 && count_pad_ != 1) n.invalid("count_include_pad must be 0 or 1, got " + std::to_string(count_pad_));
    if (storage_order_ != 0 && storage_order_ != 1) n.invalid("storage_order must be 0 or 1, got " + std::to_string(storage_order_));
    dims_.assign(r, Dim{});
    Shape y = {x[0], x[1]};
    const int64_t big = int64_t{1} << 31;  // keeps (k - 1) * d and the window math far from overflow
    for (size_t i = 0; i < r; ++i) {
      Dim& d = dims_[i];
      d.in = x[i + 2];
      d.k = kernel_[i];
      d.s = strides_.empty() ? 1 : strides_[i];
      d.d = dilations_.empty() ? 1 : dilations_[i];
      d.pb = pads_.empty() ? 0 : pads_[i];
      d.pe = pads_.empty() ? 0 : pads_[i + r];
      auto check = [&](int64_t v, int64_t lo, const char* what, const std::vector<int64_t>& all) {
        if (v < lo || v > big) n.invalid(fmt::format("{} [{}]: each value must be in [{}, 2^31]", what, fmt::join(all, ","), lo));
      };
      check(d.k, 1, "kernel_shape", kernel_);
      check(d.s, 1, "strides", strides_);
      check(d.d, 1, "dilations", dilations_);
      check(d.pb, 0, "pads", pads_);
      check(d.pe, 0, "pads", pads_);
      int64_t dk = (d.k - 1) * d.d + 1;
      if (auto_pad_ == "NOTSET" || auto_pad_ == "VALID") {
        if (auto_pad_ == "VALID") d.pb = d.pe = 0;
        int64_t span = d.in + d.pb + d.pe - dk;
        if (span < 0)
          n.invalid(fmt::format("window {} (kernel {}, dilation {}) is larger than padded input dim {} ({} + pads {} + {})", dk,
                                d.k, d.d, d.in + d.pb + d.pe, d.in, d.pb, d.pe));
        if (ceil_ && auto_pad_ == "NOTSET") {
          d.out = (span + d.s - 1) / d.s + 1;
          if ((d.out - 1) * d.s >= d.in + d.pb) --d.out;
        } else {
          d.out = span / d.s + 1;
        }
      } else {
        d.out = (d.in + d.s - 1) / d.s;
        int64_t total = std::max<int64_t>(0, (d.out - 1) * d.s + dk - d.in);
        d.pb = auto_pad_ == "SAME_UPPER" ? total / 2 : total - total / 2;
        d.pe = total - d.pb;
      }
      y.push_back(d.out);
    }
    set_output(n, 0, n.in(0)->dtype, y);
    if (max_) set_output(n, 1, DType::I64, y);
  }

  // Flat input index of spatial position p (all inside), for the Indices output.
  int64_t flat_index(int64_t plane, const std::vector<int64_t>& p) const {
    int64_t spatial = 1;
    for (auto& d : dims_) spatial *= d.in;
    int64_t idx = 0;
    if (storage_order_ == 0) {
      for (size_t i = 0; i < dims_.size(); ++i) idx = idx * dims_[i].in + p[i];
    } else {
      for (size_t i = dims_.size(); i-- > 0;) idx = idx * dims_[i].in + p[i];
    }
    return plane * spatial + idx;
  }

  void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    size_t r = dims_.size();
    int64_t planes = x.shape[0] * x.shape[1], in_sz = 1, out_sz = 1;
    for (auto& d : dims_) in_sz *= d.in, out_sz *= d.out;
    bool want_idx = n.out(1) != nullptr;
    double lowest = dtype_is_float(x.dtype) ? -INFINITY : x.dtype == DType::U8 ? 0.0 : -128.0;
    std::vector<int64_t> o(r), k(r), p(r);
    for (int64_t c = 0; c < planes; ++c) {
      for (int64_t oi = 0; oi < out_sz; ++oi) {
        for (size_t i = r, rem = static_cast<size_t>(oi); i-- > 0;) {
          o[i] = static_cast<int64_t>(rem % static_cast<size_t>(dims_[i].out));
          rem /= static_cast<size_t>(dims_[i].out);
        }
        int64_t taps = 1;
        for (size_t i = 0; i < r; ++i) taps *= dims_[i].k;
        double acc = max_ ? lowest : 0.0;
        int64_t cnt = 0, arg = -1;
        for (int64_t t = 0; t < taps; ++t) {
          for (size_t i = r, rem = static_cast<size_t>(t); i-- > 0;) {
            k[i] = static_cast<int64_t>(rem % static_cast<size_t>(dims_[i].k));
            rem /= static_cast<size_t>(dims_[i].k);
          }
          bool inside = true;
          int64_t xi = 0;
          for (size_t i = 0; i < r; ++i) {
            p[i] = dims_[i].start(o[i]) + k[i] * dims_[i].d;
            inside = inside && p[i] >= 0 && p[i] < dims_[i].in;
            xi = xi * dims_[i].in + p[i];
          }
          if (!inside) continue;
          double v = x.get(c * in_sz + xi);
          if (max_) {
            if (arg < 0 || v > acc) arg = flat_index(c, p);
            acc = std::fmax(acc, v);
          } else {
            acc += v;
            ++cnt;
          }
        }
        if (!max_) {
          int64_t div = cnt;
          if (count_pad_) {
            div = 1;
            for (size_t i = 0; i < r; ++i) div *= dims_[i].padded_taps(o[i]);
          }
          acc = div > 0 ? acc / static_cast<double>(div) : 0.0;
        }
        out[0].set(c * out_sz + oi, acc);
        if (want_idx) out[1].set_i64(c * out_sz + oi, arg < 0 ? 0 : arg);
      }
    }
  }

  // NCHWc: float32 without the Indices output (see emit_nchwc).
  bool supports_nchwc(const Node& n, int64_t b) const override {
    return b >= 1 && n.in(0)->dtype == DType::F32 && !n.out(1) && n.in(0)->shape.size() >= 3;
  }

  // NCHW[b]c: tasks (image and channel block, first output dim); per output position the
  // clipped window ranges as in the plain kernel, then per tap one simd loop over the b
  // lanes into a lane accumulator. Padding lanes are pooled like the others (they only
  // reach padding lanes of the output).
  void emit_nchwc(CEmit& e) const {
    const Shape& xs = e.in_shape(0);
    const size_t r = dims_.size();
    const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
    ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b) && !e.node.out(1) && e.in_dtype(0) == DType::F32,
                 "NCHWc pool on " + e.node.in(0)->type_str());
    int64_t planes = xs[0] * CB, in_sz = 1, out_sz = 1, taps = 1;
    for (auto& d : dims_) in_sz *= d.in, out_sz *= d.out, taps *= d.k;
    e("/* NCHW{}c {}: per (image, channel block, output position) the window's valid taps, lanes innermost. */", b,
      max_ ? "max pooling" : "average pooling");
    if (planes * out_sz * taps * b >= (1 << 15) && planes * dims_[0].out > 1)
      e("ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))");
    e("for (int64_t c = 0; c < {}; ++c) {{", planes);
    for (size_t i = 0; i < r; ++i) {
      const Dim& d = dims_[i];
      e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", i, d.out);
      if (i == 0) {
        e("const float* restrict x = {} + c * {};", e.in(0), in_sz * b);
        e("float* restrict y = {} + c * {};", e.out(0), out_sz * b);
      }
      emit_window(e, i);
    }
    std::string oidx = "o0";
    for (size_t i = 1; i < r; ++i) oidx = fmt::format("{} * {} + o{}", i == 1 ? oidx : "(" + oidx + ")", dims_[i].out, i);
    e("float a[{}];", b);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) a[l] = {};", b, max_ ? "-INFINITY" : "0.0f");
    for (size_t i = 0; i < r; ++i) {
      const Dim& d = dims_[i];
      std::string pos = d.d == 1 ? fmt::format("p{0} + k{0}", i) : fmt::format("p{0} + k{0} * {1}", i, d.d);
      e("for (int64_t k{0} = lo{0}; k{0} < hi{0}; ++k{0}) {{", i);
      if (i == 0) e("const int64_t q{} = {};", i, pos);
      else e("const int64_t q{} = q{} * {} + {};", i, i - 1, d.in, pos);
    }
    e("const float* restrict xp = x + q{} * {};", r - 1, b);
    e("ONNXC_PRAGMA(omp simd)");
    if (max_) e("for (int64_t l = 0; l < {}; ++l) a[l] = fmaxf(a[l], xp[l]);", b);
    else e("for (int64_t l = 0; l < {}; ++l) a[l] += xp[l];", b);
    for (size_t i = 0; i < r; ++i) e("}}");
    e("float* restrict yp = y + ({}) * {};", oidx, b);
    if (max_) {
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l];", b);
    } else {
      const bool all_full = avg_all_full();
      std::string div = c_float(static_cast<double>(taps));
      if (!all_full) {
        emit_avg_count(e);
        e("const float den = cnt > 0 ? (float)cnt : 1.0f;  /* no taps: a[] is 0 */");
        div.clear();
      }
      e("ONNXC_PRAGMA(omp simd)");
      if (!div.empty()) e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l] / {};", b, div);
      else e("for (int64_t l = 0; l < {}; ++l) yp[l] = a[l] / den;", b);
    }
    for (size_t i = 0; i < r; ++i) e("}}");
    e("}}");
  }

  // Inside output loop o{i}: the window start p{i} and the valid tap range [lo{i}, hi{i})
  // of spatial dim i (shared by the plain and NCHWc kernels).
  // AveragePool's divisor is the tap count everywhere when no window is clipped (or, with
  // count_include_pad, none overhangs the padded extent).
  bool avg_all_full() const {
    bool all_full = true;
    for (auto& d : dims_) all_full = all_full && (count_pad_ ? !d.overhang() : !d.clipped());
    return all_full;
  }
  // Otherwise: `cnt`, the taps of the current window inside the input (or inside the padded
  // extent with count_include_pad), from the window bounds lo/hi and the pad offsets p.
  void emit_avg_count(CEmit& e) const {
    std::string cnt;
    for (size_t i = 0; i < dims_.size(); ++i) {
      const Dim& d = dims_[i];
      std::string f;
      if (!count_pad_) f = fmt::format("(hi{0} - lo{0})", i);
      else if (!d.overhang()) f = std::to_string(d.k);
      else {
        std::string room = fmt::format("{} - p{}", d.in + d.pe, i);
        if (d.d != 1) room = fmt::format("({} + {}) / {}", room, d.d - 1, d.d);
        e("const int64_t e{} = {};", i, room);
        f = fmt::format("(e{0} < {1} ? e{0} : {1})", i, d.k);
      }
      cnt += (cnt.empty() ? "" : " * ") + f;
    }
    e("const int64_t cnt = {};", cnt);
  }

  void emit_window(CEmit& e, size_t i) const {
    const Dim& d = dims_[i];
    std::string start = d.s == 1 ? fmt::format("o{}", i) : fmt::format("o{} * {}", i, d.s);
    if (d.pb) start += fmt::format(" - {}", d.pb);
    e("const int64_t p{} = {};", i, start);
    if (!d.clipped()) {
      e("const int64_t lo{} = 0, hi{} = {};", i, i, d.k);
      return;
    }
    if (d.pb == 0) e("const int64_t lo{} = 0;", i);
    else if (d.d == 1) e("const int64_t lo{0} = p{0} < 0 ? -p{0} : 0;", i);
    else e("const int64_t lo{0} = p{0} < 0 ? (-p{0} + {1}) / {2} : 0;", i, d.d - 1, d.d);
    std::string room = fmt::format("{} - p{}", d.in, i);
    if (d.d != 1) room = fmt::format("({} + {}) / {}", room, d.d - 1, d.d);
    e("const int64_t r{} = {};", i, room);
    e("const int64_t hi{0} = r{0} < {1} ? r{0} : {1};", i, d.k);
  }

  void emit(CEmit& e) const override {
    if (e.out_layout(0).is_nchwc()) return emit_nchwc(e);
    const Shape& xs = e.in_shape(0);
    size_t r = dims_.size();
    DType t = e.in_dtype(0);
    const char* ct = e.in_ctype(0);
    bool want_idx = e.node.out(1) != nullptr;
    int64_t planes = xs[0] * xs[1], in_sz = 1, out_sz = 1, taps = 1;
    for (auto& d : dims_) in_sz *= d.in, out_sz *= d.out, taps *= d.k;
    std::string lowest = t == DType::F32 || t == DType::F64 ? "(-INFINITY)" : t == DType::U8 ? "0" : "(-128)";
    if (planes > 1 && planes * out_sz * taps >= (1 << 15)) e("ONNXC_PRAGMA(omp parallel for)");
    e("for (int64_t c = 0; c < {}; ++c) {{", planes);
    e("const {}* restrict x = {} + c * {};", ct, e.in(0), in_sz);
    e("{}* restrict y = {} + c * {};", ct, e.out(0), out_sz);
    if (want_idx) e("int64_t* restrict yi = {} + c * {};", e.out(1), out_sz);
    // Output position loops; per dim the window start p{i} and tap range [lo{i}, hi{i}).
    for (size_t i = 0; i < r; ++i) {
      const Dim& d = dims_[i];
      e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", i, d.out);
      emit_window(e, i);
    }
    // Output offset of this position.
    std::string oidx = "o0";
    for (size_t i = 1; i < r; ++i) oidx = fmt::format("{} * {} + o{}", i == 1 ? oidx : "(" + oidx + ")", dims_[i].out, i);
    if (max_) {
      e("{} m = {};", ct, lowest);
      if (want_idx) e("int64_t mi = -1;");
    } else {
      e("float s = 0.0f;");
    }
    // Window loops; q{i} is the row offset in the plane through dim i.
    for (size_t i = 0; i < r; ++i) {
      const Dim& d = dims_[i];
      std::string pos = d.d == 1 ? fmt::format("p{0} + k{0}", i) : fmt::format("p{0} + k{0} * {1}", i, d.d);
      bool last = i + 1 == r;
      if (last && !want_idx) {
        std::string base = i == 0 ? "x" : fmt::format("x + q{} * {}", i - 1, d.in);
        if (i > 0) e("const {}* restrict row = {};", ct, base);
        e("for (int64_t k{0} = lo{0}; k{0} < hi{0}; ++k{0}) {{", i);
        std::string v = fmt::format("{}[{}]", i > 0 ? "row" : "x", pos);
        if (!max_) e("s += {};", v);
        else if (t == DType::F32) e("m = fmaxf(m, {});", v);
        else if (t == DType::F64) e("m = fmax(m, {});", v);
        else e("m = {0} > m ? {0} : m;", v);
      } else {
        e("for (int64_t k{0} = lo{0}; k{0} < hi{0}; ++k{0}) {{", i);
        if (i == 0) e("const int64_t q{} = {};", i, pos);
        else e("const int64_t q{} = q{} * {} + {};", i, i - 1, d.in, pos);
        if (last) {  // MaxPool with Indices
          e("const {} v = x[q{}];", ct, i);
          e("if (mi < 0 || v > m) {{");
          if (storage_order_ == 0) {
            e("mi = q{};", i);
          } else {
            // Column-major over spatial dims: the index of (h, w, ...) is h + H * (w + W * ...).
            std::string cm = fmt::format("p{0} + k{0}", r - 1);
            if (dims_[r - 1].d != 1) cm = fmt::format("p{0} + k{0} * {1}", r - 1, dims_[r - 1].d);
            for (size_t j = r - 1; j-- > 0;) {
              std::string pj = dims_[j].d == 1 ? fmt::format("p{0} + k{0}", j) : fmt::format("p{0} + k{0} * {1}", j, dims_[j].d);
              cm = fmt::format("{} + {} * ({})", pj, dims_[j].in, cm);
            }
            e("mi = {};", cm);
          }
          e("}}");
          if (t == DType::F32) e("m = fmaxf(m, v);");
          else if (t == DType::F64) e("m = fmax(m, v);");
          else e("m = v > m ? v : m;");
        }
      }
    }
    for (size_t i = 0; i < r; ++i) e("}}");
    if (max_) {
      e("y[{}] = m;", oidx);
      if (want_idx) e("yi[{}] = c * {} + (mi < 0 ? 0 : mi);", oidx, in_sz);
    } else {
      // Divisor: taps inside the input, or inside the padded extent with count_include_pad.
      const bool all_full = avg_all_full();
      if (all_full) {
        e("y[{}] = s / {};", oidx, c_float(static_cast<double>(taps)));
      } else {
        emit_avg_count(e);
        e("y[{}] = cnt > 0 ? s / (float)cnt : 0.0f;", oidx);
      }
    }
    for (size_t i = 0; i < r; ++i) e("}}");
    e("}}");
  }

  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }

 private:
  bool max_;
  std::string auto_pad_;
  std::vector<int64_t> kernel_, strides_, pads_, dilations_;
  int64_t ceil_ = 0, count_pad_ = 0, storage_order_ = 0;
  std::vector<Dim> dims_;
};

std::unique_ptr<Op> make_max() { return std::make_unique<Pool>(true); }
std::unique_ptr<Op> make_avg() { return std::make_unique<Pool>(false); }

}  // namespace

void register_pool(OpTable& t) {
  t["MaxPool"] = make_max;
  t["AveragePool"] = make_avg;
}

}  // namespace onnxc
