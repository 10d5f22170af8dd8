// ir/ops/pad.cc — Pad (opsets 2–18): modes constant, reflect and edge, any dtype.
//
// Forms: before opset 11 `pads` and `value` are attributes; from 11 `pads` is input 1 and
// the optional constant_value input 2; opset 18 adds the optional `axes` input 3 (pads then
// has 2·len(axes) entries). pads and axes are compile-time inputs. Pads are
// [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; a negative pad crops.
// Semantics with cropping (as ONNX Runtime): each axis is first cropped by its negative
// pads, then padded by its positive pads relative to the cropped window, so edge/reflect
// mirror at the borders of what is kept. Reflect with pads larger than the window keeps
// reflecting (numpy's periodic reflection); reflect on a 1-element window repeats it.
// Emitted C: axes without padding are merged; padded outer axes index a static table of
// source rows (-1 = pad value); the innermost row is left pad, a memcpy of the kept part,
// right pad. constant_value may be a runtime scalar. NCHWc (spatial pads only, any mode):
// per output position the source position from per-axis tables, b lanes copied or filled
// (emit_nchwc). Gaps: mode "wrap" (opset 19).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "codegen/c_emit.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class PadMode { Constant, Reflect, Edge };

struct PadAxis {
  int64_t in = 1, out = 1, pb = 0, pe = 0;
  int64_t start() const { return std::max<int64_t>(-pb, 0); }                 // first kept input index
  int64_t kept() const { return in - start() - std::max<int64_t>(-pe, 0); }   // kept length
  int64_t lead() const { return std::max<int64_t>(pb, 0); }                   // padded elements before
};

// Source index along one axis for output index o, or -1 for the pad value.
int64_t pad_source(const PadAxis& a, PadMode m, int64_t o) {
  int64_t s = a.start(), len = a.kept(), j = o - a.lead();
  if (j >= 0 && j < len) return s + j;
  if (m == PadMode::Constant || len <= 0) return -1;
  if (m == PadMode::Edge) return s + (j < 0 ? 0 : len - 1);
  if (len == 1) return s;
  int64_t p = 2 * (len - 1);
  j %= p;
  if (j < 0) j += p;
  return s + (j >= len ? p - j : j);
}

// A static const table, several entries per line.
void emit_table(CEmit& e, const std::string& decl, const std::vector<int64_t>& v) {
  e("static const {}[{}] = {{", decl, v.size());
  std::string line;
  for (size_t i = 0; i < v.size(); ++i) {
    line += std::to_string(v[i]) + (i + 1 < v.size() ? "," : "");
    if (line.size() > 90 || i + 1 == v.size()) { e("{}", line); line.clear(); }
    else line += " ";
  }
  e("}};");
}

class Pad : public Op {
 public:
  void parse(AttrReader& a) override {
    opset_ = a.opset();
    std::string m = a.s("mode", "constant");
    if (m == "constant") mode_ = PadMode::Constant;
    else if (m == "reflect") mode_ = PadMode::Reflect;
    else if (m == "edge") mode_ = PadMode::Edge;
    else if (m == "wrap" && opset_ >= 19) a.node().unsupported("mode 'wrap' is not supported");
    else a.node().invalid("mode '" + m + "' is not one of constant, reflect, edge");
    if (opset_ < 11) {
      auto p = a.opt_ints("pads");
      if (!p) a.node().invalid("attribute 'pads' is required before opset 11");
      attr_pads_ = *p;
      value_ = a.f("value", 0.0);
    }
  }

  // constant_value (input 2) may also be a runtime scalar.
  bool static_input(size_t i) const override { return i == 1 || i == 3 || (i == 2 && !runtime_value_); }

  void infer(Node& n) override {
    if (!n.in(0)) n.invalid("input 0 (data) is required");
    const Shape& s = n.in(0)->shape;
    int64_t r = static_cast<int64_t>(s.size());
    std::vector<int64_t> pads;
    if (opset_ < 11) {
      if (n.inputs.size() > 1) n.invalid("takes 1 input before opset 11, got " + std::to_string(n.inputs.size()));
      pads = attr_pads_;
    } else {
      size_t max_in = opset_ >= 18 ? 4 : 3;
      if (n.inputs.size() > max_in) n.invalid("takes at most " + std::to_string(max_in) + " inputs, got " + std::to_string(n.inputs.size()));
      if (!n.in(1)) n.invalid("input 1 (pads) is required from opset 11");
      const Tensor& pt = static_tensor(n, 1, "pads");
      if (!dtype_is_int(pt.dtype)) n.invalid(std::string("pads must be int64, got ") + dtype_name(pt.dtype));
      pads = pt.to_i64();
      value_ = 0;
      runtime_value_ = false;
      if (Value* cv = n.in(2)) {
        if (cv->dtype != n.in(0)->dtype)
          n.invalid(std::string("constant_value has dtype ") + dtype_name(cv->dtype) + ", data has " + dtype_name(n.in(0)->dtype));
        int64_t cn = numel(cv->shape);
        if (cn > 1) n.invalid("constant_value must be a scalar, got shape " + shape_str(cv->shape));
        if (cn == 1 && !cv->constant) runtime_value_ = true;
        else if (cn == 1) value_ = dtype_is_int(cv->dtype) ? static_cast<double>(cv->constant->get_i64(0)) : cv->constant->get(0);
      }
    }
    std::vector<int64_t> axes;
    if (n.in(3)) {
      const Tensor& at = static_tensor(n, 3, "axes");
      if (!dtype_is_int(at.dtype)) n.invalid(std::string("axes must be int32 or int64, got ") + dtype_name(at.dtype));
      axes = at.to_i64();
      std::set<int64_t> seen;
      for (auto& ax : axes) {
        int64_t orig = ax;
        if (!normalize_axis(ax, r)) n.invalid("axis " + std::to_string(orig) + " is out of range for rank " + std::to_string(r));
        if (!seen.insert(ax).second) n.invalid("axis " + std::to_string(orig) + " appears twice in axes");
      }
    } else {
      for (int64_t d = 0; d < r; ++d) axes.push_back(d);
    }
    size_t na = axes.size();
    if (pads.size() != 2 * na)
      n.invalid("pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * na) +
                (n.in(3) ? " (2 per axis in axes)" : " (2 per input dimension, input " + shape_str(s) + ")"));
    axis_.assign(s.size(), PadAxis{});
    for (size_t d = 0; d < s.size(); ++d) axis_[d].in = axis_[d].out = s[d];
    Shape out = s;
    for (size_t k = 0; k < na; ++k) {
      PadAxis& a = axis_[static_cast<size_t>(axes[k])];
      a.pb = pads[k];
      a.pe = pads[k + na];
      if (a.pb < -a.in || a.pe < -a.in || a.kept() < 0)
        n.invalid("pads " + std::to_string(a.pb) + ", " + std::to_string(a.pe) + " crop more than axis " +
                  std::to_string(axes[k]) + " of size " + std::to_string(a.in) + " holds");
      if (a.pb > INT32_MAX || a.pe > INT32_MAX)
        n.unsupported("pads " + std::to_string(a.pb) + ", " + std::to_string(a.pe) + " are too large");
      a.out = a.in + a.pb + a.pe;
      if (mode_ != PadMode::Constant && a.kept() == 0 && a.out > 0)
        n.invalid("cannot pad axis " + std::to_string(axes[k]) + " in reflect or edge mode: nothing of it is kept (size " +
                  std::to_string(a.in) + ", pads " + std::to_string(a.pb) + ", " + std::to_string(a.pe) + ")");
      out[static_cast<size_t>(axes[k])] = a.out;
    }
    set_output(n, 0, n.in(0)->dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    Tensor& y = out[0];
    size_t es = dtype_size(x.dtype), r = axis_.size();
    Shape ist = strides_of(x.shape);
    std::vector<int64_t> pos(r, 0);
    for (int64_t o = 0, total = y.numel(); o < total; ++o) {
      int64_t src = 0;
      for (size_t d = 0; d < r && src >= 0; ++d) {
        int64_t i = pad_source(axis_[d], mode_, pos[d]);
        src = i < 0 ? -1 : src + i * ist[d];
      }
      if (src >= 0) std::memcpy(&y.bytes[static_cast<size_t>(o) * es], &x.bytes[static_cast<size_t>(src) * es], es);
      else if (runtime_value_) std::memcpy(&y.bytes[static_cast<size_t>(o) * es], in[2]->bytes.data(), es);
      else if (dtype_is_int(y.dtype)) y.set_i64(o, static_cast<int64_t>(value_));
      else y.set(o, value_);
      for (size_t d = r; d-- > 0;) {
        if (++pos[d] < y.shape[d]) break;
        pos[d] = 0;
      }
    }
  }

  // NCHWc: pads on the spatial axes only (any mode; padding lanes get the pad value too).
  bool supports_nchwc(const Node& n, int64_t b) const override {
    if (b < 1 || axis_.size() < 3 || numel(n.out(0)->shape) == 0) return false;
    return axis_[0].pb == 0 && axis_[0].pe == 0 && axis_[1].pb == 0 && axis_[1].pe == 0;
  }

  // NCHW[b]c: per (image, channel block) and output position, the source position from
  // one table per spatial axis (-1 = pad value), then b lanes copied or filled.
  void emit_nchwc(CEmit& e) const {
    const char* ct = e.in_ctype(0);
    const Shape& xs = e.in_shape(0);
    const int64_t b = e.out_layout(0).block, CB = ceil_div_pos(xs[1], b);
    ONNXC_ASSERT(e.in_layout(0) == Layout::nchwc(b), "NCHWc pad on " + e.node.in(0)->type_str());
    const size_t r = axis_.size();
    int64_t IS = 1, OS = 1;
    for (size_t d = 2; d < r; ++d) IS *= axis_[d].in, OS *= axis_[d].out;
    std::string v = c_literal(e.in_dtype(0), value_);
    if (runtime_value_) {
      e("const {} v = {}[0];", ct, e.in(2));
      v = "v";
    }
    static const char* names[] = {"constant", "reflect", "edge"};
    e("/* NCHW{}c {} pad of the spatial axes: source position per axis from a table (-1 = pad value). */", b,
      names[static_cast<int>(mode_)]);
    for (size_t d = 2; d < r; ++d) {
      std::vector<int64_t> t;
      for (int64_t o = 0; o < axis_[d].out; ++o) t.push_back(pad_source(axis_[d], mode_, o));
      emit_table(e, fmt::format("int64_t src{}", d), t);
    }
    const int64_t planes = xs[0] * CB;
    if (planes > 1 && planes * OS * b >= (1 << 16)) e("ONNXC_PRAGMA(omp parallel for schedule(static))");
    e("for (int64_t c = 0; c < {}; ++c) {{", planes);
    e("const {}* restrict x = {} + c * {};", ct, e.in(0), IS * b);
    e("{}* restrict y = {} + c * {};", ct, e.out(0), OS * b);
    for (size_t d = 2; d < r; ++d) {
      e("for (int64_t o{0} = 0; o{0} < {1}; ++o{0}) {{", d, axis_[d].out);
      e("const int64_t s{0} = src{0}[o{0}];", d);
    }
    std::string any_pad, src = "s2", dst = "o2";
    for (size_t d = 2; d < r; ++d) {
      any_pad += fmt::format("{}s{} < 0", d > 2 ? " || " : "", d);
      if (d > 2) {
        src = fmt::format("({}) * {} + s{}", src, axis_[d].in, d);
        dst = fmt::format("({}) * {} + o{}", dst, axis_[d].out, d);
      }
    }
    e("{}* restrict yp = y + ({}) * {};", ct, dst, b);
    e("if ({}) {{", any_pad);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) yp[l] = {};", b, v);
    e("}} else {{");
    e("const {}* restrict xp = x + ({}) * {};", ct, src, b);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) yp[l] = xp[l];", b);
    e("}}");
    for (size_t d = 2; d < r; ++d) e("}}");
    e("}}");
  }

  void emit(CEmit& e) const override {
    if (e.out_layout(0).is_nchwc()) return emit_nchwc(e);
    const char* ct = e.in_ctype(0);
    DType dt = e.in_dtype(0);
    int64_t total = numel(e.out_shape(0));
    if (total == 0) { e("/* empty output */"); return; }
    std::string v = c_literal(dt, value_);
    if (runtime_value_) {
      e("const {} v = {}[0];", ct, e.in(2));
      v = "v";
    }
    // Merge runs of unpadded axes; an axis of which nothing is kept makes the output all pad value.
    std::vector<PadAxis> dims;
    std::vector<size_t> orig;  // original axis of each merged dim (for table names)
    bool all_pad = false;
    for (size_t d = 0; d < axis_.size(); ++d) {
      const PadAxis& a = axis_[d];
      if (a.kept() == 0) all_pad = true;
      bool plain = a.pb == 0 && a.pe == 0;
      if (plain && a.in == 1) continue;  // nothing to loop over
      if (plain && !dims.empty() && dims.back().pb == 0 && dims.back().pe == 0) {
        dims.back().in *= a.in;
        dims.back().out *= a.out;
        continue;
      }
      dims.push_back(a);
      orig.push_back(d);
    }
    if (all_pad) {
      e("/* nothing of the input is kept: the output is all pad value */");
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t i = 0; i < {}; ++i) {}[i] = {};", total, e.out(0), v);
      return;
    }
    if (dims.empty()) { dims.push_back(PadAxis{}); orig.push_back(0); }
    Shape loop_dims;
    for (auto& D : dims) loop_dims.push_back(D.out);
    static const char* names[] = {"constant", "reflect", "edge"};
    e("/* {}: {} -> {}; loops over {} (unpadded axes merged); srcA = source index along input axis A{} */",
      names[static_cast<int>(mode_)], shape_str(e.in_shape(0)), shape_str(e.out_shape(0)), shape_str(loop_dims),
      mode_ == PadMode::Constant ? " (-1 = pad value)" : "");
    size_t k = dims.size();
    Shape ist(k), ost(k);
    for (size_t d = k, si = 1, so = 1; d-- > 0;) {
      ist[d] = static_cast<int64_t>(si);
      ost[d] = static_cast<int64_t>(so);
      si *= static_cast<size_t>(dims[d].in);
      so *= static_cast<size_t>(dims[d].out);
    }
    // Tables: source index of each output index along padded outer dims; the innermost
    // dim's reflect pads get one table per side.
    for (size_t d = 0; d + 1 < k; ++d) {
      const PadAxis& a = dims[d];
      if (a.pb == 0 && a.pe == 0) continue;
      std::vector<int64_t> t;
      for (int64_t o = 0; o < a.out; ++o) t.push_back(pad_source(a, mode_, o));
      emit_table(e, fmt::format("int64_t src{}", orig[d]), t);
    }
    const PadAxis& w = dims[k - 1];
    int64_t L = w.lead(), M = w.kept(), R = w.out - L - M, s = w.start();
    size_t wa = orig[k - 1];
    if (mode_ == PadMode::Reflect) {
      std::vector<int64_t> lt, rt;
      for (int64_t o = 0; o < L; ++o) lt.push_back(pad_source(w, mode_, o));
      for (int64_t o = L + M; o < w.out; ++o) rt.push_back(pad_source(w, mode_, o));
      if (L > 0) emit_table(e, fmt::format("int64_t lsrc{}", wa), lt);
      if (R > 0) emit_table(e, fmt::format("int64_t rsrc{}", wa), rt);
    }
    // Outer loops.
    std::string xoff, yoff;
    auto add = [](std::string& acc, const std::string& term) { acc += (acc.empty() ? "" : " + ") + term; };
    auto scaled = [](const std::string& i, int64_t st) { return st == 1 ? i : fmt::format("{} * {}", i, st); };
    for (size_t d = 0; d + 1 < k; ++d) {
      const PadAxis& a = dims[d];
      if (d == 0 && total >= (1 << 15) && a.out > 1) e("ONNXC_PRAGMA(omp parallel for)");
      e("for (int64_t i{0} = 0; i{0} < {1}; ++i{0}) {{", d, a.out);
      add(yoff, scaled("i" + std::to_string(d), ost[d]));
      if (a.pb == 0 && a.pe == 0) {
        add(xoff, scaled("i" + std::to_string(d), ist[d]));
        continue;
      }
      e("const int64_t s{0} = src{1}[i{0}];", d, orig[d]);
      if (mode_ == PadMode::Constant) {
        e("if (s{} < 0) {{", d);
        e("{}* restrict yb = {} + {};", ct, e.out(0), yoff);
        e("for (int64_t i = 0; i < {}; ++i) yb[i] = {};", ost[d], v);
        e("continue;");
        e("}}");
      }
      add(xoff, scaled("s" + std::to_string(d), ist[d]));
    }
    // Innermost row: left pad, kept part, right pad.
    std::string xr = xoff.empty() ? e.in(0) : fmt::format("{} + {}", e.in(0), xoff);
    std::string yr = yoff.empty() ? e.out(0) : fmt::format("{} + {}", e.out(0), yoff);
    e("const {}* restrict xr = {};", ct, xr);
    e("{}* restrict yr = {};", ct, yr);
    auto side = [&](int64_t from, int64_t n, const char* table) {
      if (n <= 0) return;
      std::string val = mode_ == PadMode::Constant ? v
                      : mode_ == PadMode::Edge ? fmt::format("xr[{}]", from == 0 ? s : s + M - 1)
                                               : fmt::format("xr[{}{}[i]]", table, wa);
      if (from == 0) e("for (int64_t i = 0; i < {}; ++i) yr[i] = {};", n, val);
      else e("for (int64_t i = 0; i < {}; ++i) yr[{} + i] = {};", n, from, val);
    };
    side(0, L, "lsrc");
    e("memcpy(yr{}, xr{}, {} * sizeof({}));", L ? fmt::format(" + {}", L) : "", s ? fmt::format(" + {}", s) : "", M, ct);
    side(L + M, R, "rsrc");
    for (size_t d = 0; d + 1 < k; ++d) e("}}");
  }

  FusionKind kind() const override { return FusionKind::Injective; }

 private:
  int64_t opset_ = 0;
  PadMode mode_ = PadMode::Constant;
  std::vector<int64_t> attr_pads_;
  double value_ = 0;
  bool runtime_value_ = false;  // constant_value is a runtime input (read as x2[0])
  std::vector<PadAxis> axis_;  // per input axis, set by infer
};

}  // namespace

void register_pad(OpTable& t) {
  t["Pad"] = [] { return std::unique_ptr<Op>(std::make_unique<Pad>()); };
}

}  // namespace onnxc
