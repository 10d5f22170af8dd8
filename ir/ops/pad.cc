// ir/ops/pad.cc — Pad: modes constant, reflect, edge and wrap (opset 19), any dtype.
//
// Versions: 1, 2, 11, 13, 18, 19, 21, 23, 24, 25 (the last four dtypes only). Forms: Pad-1 names its pads attribute `paddings`;
// before opset 11 `pads` and `value` are attributes; from 11 `pads` is input 1 and
// the optional constant_value input 2; opset 18 adds the optional `axes` input 3 (pads then
// has 2·len(axes) entries). pads and axes are compile-time inputs. Pads are
// [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; a negative pad crops.
// Semantics with cropping (as ONNX Runtime): each axis is first cropped by its negative
// pads, then padded by its positive pads relative to the cropped window, so edge/reflect
// mirror at the borders of what is kept. Reflect with pads larger than the window keeps
// reflecting (numpy's periodic reflection); reflect on a 1-element window repeats it.
// Wrap (opset 19) repeats the kept window periodically (numpy's "wrap").
// Pad-13 adds bfloat16, 21 and 23 the 4-bit types, 24 float8e8m0, 25 the 2-bit types: nothing
// onnxc takes. Same meaning up to opset 28.
// constant_value may be a runtime scalar. Shape inference resolves each axis (PadGeom,
// ir/ops/pad.h); the C kernel is kernels/pad.cc in the C backend.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "ir/ops/ops.h"
#include "ir/ops/pad.h"

namespace onnxc {
namespace {

class Pad : public Op {
 public:
  void parse(AttrReader& a) override {
    opset_ = a.opset();
    std::string m = a.s("mode", "constant");
    if (m == "constant") g_.mode = PadMode::Constant;
    else if (m == "reflect") g_.mode = PadMode::Reflect;
    else if (m == "edge") g_.mode = PadMode::Edge;
    else if (m == "wrap" && opset_ >= 19) g_.mode = PadMode::Wrap;
    else a.node().invalid("mode '" + m + "' is not one of constant, reflect, edge" + (opset_ >= 19 ? ", wrap" : " (wrap needs opset 19)"));
    if (opset_ < 11) {
      const char* name = opset_ < 2 ? "paddings" : "pads";
      auto p = a.opt_ints(name);
      if (!p) a.node().invalid(std::string("attribute '") + name + "' is required before opset 11");
      attr_pads_ = *p;
      g_.value = a.f("value", 0.0);
    }
  }

  // constant_value (input 2) may also be a runtime scalar.
  bool static_input(size_t i) const override { return i == 1 || i == 3 || (i == 2 && !g_.runtime_value); }

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
      g_.value = 0;
      g_.runtime_value = false;
      if (Value* cv = n.in(2)) {
        if (cv->dtype != n.in(0)->dtype)
          n.invalid(std::string("constant_value has dtype ") + dtype_name(cv->dtype) + ", data has " + dtype_name(n.in(0)->dtype));
        int64_t cn = numel(cv->shape);
        if (cn > 1) n.invalid("constant_value must be a scalar, got shape " + shape_str(cv->shape));
        if (cn == 1 && !cv->constant) g_.runtime_value = true;
        else if (cn == 1) g_.value = dtype_is_int(cv->dtype) ? static_cast<double>(cv->constant->get_i64(0)) : cv->constant->get(0);
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
    g_.axis.assign(s.size(), PadAxis{});
    for (size_t d = 0; d < s.size(); ++d) g_.axis[d].in = g_.axis[d].out = s[d];
    Shape out = s;
    for (size_t k = 0; k < na; ++k) {
      PadAxis& a = g_.axis[static_cast<size_t>(axes[k])];
      a.pb = pads[k];
      a.pe = pads[k + na];
      if (a.pb < -a.in || a.pe < -a.in || a.kept() < 0)
        n.invalid("pads " + std::to_string(a.pb) + ", " + std::to_string(a.pe) + " crop more than axis " +
                  std::to_string(axes[k]) + " of size " + std::to_string(a.in) + " holds");
      if (a.pb > INT32_MAX || a.pe > INT32_MAX)
        n.unsupported("pads " + std::to_string(a.pb) + ", " + std::to_string(a.pe) + " are too large");
      a.out = a.in + a.pb + a.pe;
      if (g_.mode != PadMode::Constant && a.kept() == 0 && a.out > 0)
        n.invalid("cannot pad axis " + std::to_string(axes[k]) + " in reflect, edge or wrap mode: nothing of it is kept (size " +
                  std::to_string(a.in) + ", pads " + std::to_string(a.pb) + ", " + std::to_string(a.pe) + ")");
      out[static_cast<size_t>(axes[k])] = a.out;
    }
    set_output(n, 0, n.in(0)->dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    Tensor& y = out[0];
    size_t es = dtype_size(x.dtype), r = g_.axis.size();
    Shape ist = strides_of(x.shape);
    std::vector<int64_t> pos(r, 0);
    for (int64_t o = 0, total = y.numel(); o < total; ++o) {
      int64_t src = 0;
      for (size_t d = 0; d < r && src >= 0; ++d) {
        int64_t i = pad_source(g_.axis[d], g_.mode, pos[d]);
        src = i < 0 ? -1 : src + i * ist[d];
      }
      if (src >= 0) std::memcpy(&y.bytes[static_cast<size_t>(o) * es], &x.bytes[static_cast<size_t>(src) * es], es);
      else if (g_.runtime_value) std::memcpy(&y.bytes[static_cast<size_t>(o) * es], in[2]->bytes.data(), es);
      else y.set(o, g_.value);  // saturating for integers, as the C literal (c_literal)
      for (size_t d = r; d-- > 0;) {
        if (++pos[d] < y.shape[d]) break;
        pos[d] = 0;
      }
    }
  }




  FusionKind kind() const override { return FusionKind::Injective; }
  const PadGeom& geom() const { return g_; }

 private:
  int64_t opset_ = 0;
  std::vector<int64_t> attr_pads_;
  PadGeom g_;
};

}  // namespace

int64_t pad_source(const PadAxis& a, PadMode m, int64_t o) {
  int64_t s = a.start(), len = a.kept(), j = o - a.lead();
  if (j >= 0 && j < len) return s + j;
  if (m == PadMode::Constant || len <= 0) return -1;
  if (m == PadMode::Edge) return s + (j < 0 ? 0 : len - 1);
  if (m == PadMode::Wrap) return s + ((j % len) + len) % len;
  if (len == 1) return s;
  int64_t p = 2 * (len - 1);
  j %= p;
  if (j < 0) j += p;
  return s + (j >= len ? p - j : j);
}

const PadGeom& pad_geom(const Node& n) { return op_as<Pad>(n).geom(); }

void register_pad(OpTable& t) {
  t["Pad"] = [] { return std::unique_ptr<Op>(std::make_unique<Pad>()); };
}

}  // namespace onnxc
