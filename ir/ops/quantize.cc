// ir/ops/quantize.cc — linear quantization (ir/ops/quantize.h has the views the backends read):
//   QuantizeLinear(x, y_scale, y_zero_point)    y = saturate(round(x / y_scale) + y_zero_point)
//   DequantizeLinear(x, x_scale, x_zero_point)  y = (x - x_zero_point) * x_scale
//   DynamicQuantizeLinear(x) → y, y_scale, y_zero_point   uint8 from x's range extended to 0
//   MatMulInteger, ConvInteger                   int32 products of (x - zero point) terms
//   QLinearMatMul, QLinearConv                   the same, requantized to y_scale, y_zero_point
//   onnxc.qdq_add(a, ..., b, ..., y_scale, y_zp) QuantizeLinear(DequantizeLinear(a) +
//                                                DequantizeLinear(b)) in one op, per tensor
//                                                (made by passes/integer_ops.cc); onnxc.qdq_mul
//                                                the same with a product
//   onnxc.lookup(x, table)                       y = table[x - lowest value of x's type]: any
//                                                function of one 8-bit tensor, element by
//                                                element, as a table (passes/integer_ops.cc)
// round is round half to even; saturate clamps to the output type's range (NaN goes to its
// lowest value). Zero points default to 0, and QuantizeLinear's output to uint8.
// Arithmetic, the same in the reference and the C: x / scale in float32 (float16 scales and
// inputs computed in float32 like every float16 value, see ir/dtype.h), int32 x in double;
// dequantization (float)(x - zero point) * scale; the *Integer ops and the QLinear ops
// accumulate exactly in int32 (wrapping modulo 2^32 past its range), and the QLinear ops
// requantize as (float)acc * m with m = (float)(scale_a * scale_b) / y_scale in float32, as
// ONNX Runtime does. DynamicQuantizeLinear follows its function body: scale = (max - min) /
// 255 (max(0, max x), min(0, min x)), zero point = round(clip(-min / scale, 0, 255)), and a
// scale of 1 when x is all zeros (as ONNX Runtime; the body would divide 0 by 0).
// Versions:
//   QuantizeLinear    10 (per tensor; x float32 or int32; uint8, int8), 13 (axis: per-axis
//                     scales), 19 (saturate: float8 outputs only, accepted 0 or 1 with no
//                     effect), 21 (block_size: blocked scales; output_dtype; int16, uint16),
//                     23 (y_scale's type may differ from x's; precision: float32 or float16,
//                     both computed in float32), 24 (float8e8m0 scales), 25 (int2, uint2
//                     outputs), 28 (float6 outputs): types onnxc refuses by name.
//   DequantizeLinear  10 (uint8, int8, int32 per tensor), 13 (axis), 19 (float16 scales),
//                     21 (block_size; int16, uint16), 23 (output_dtype: float32 or float16),
//                     24, 25, 28 (float8e8m0 scales, 2-bit and float6 inputs: refused by the importer).
//   DynamicQuantizeLinear 11; MatMulInteger 10; ConvInteger 10 (Conv's attributes);
//   QLinearMatMul 10, 21 (float8 types, float16 scales); QLinearConv 10.
// Refused by name (exit 3): float8, int4, uint4 and float4 outputs or output_dtype (the
// importer refuses such tensors as inputs, naming the type), bfloat16, int32 scales and
// `precision` other than float32/float16. Zero-point and scale shapes: per tensor (a scalar
// or one element), per axis / per row, column or output channel, blocked (Q/DQ at 21), as
// the ONNX spec lists them; anything else is an invalid model. The C kernels are
// kernels/quantize.cc.
#include "ir/ops/quantize.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ir/ops/elementwise.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {

void int_range(DType t, double* lo, double* hi) {
  switch (t) {
    case DType::U8: *lo = 0, *hi = 255; return;
    case DType::I8: *lo = -128, *hi = 127; return;
    case DType::U16: *lo = 0, *hi = 65535; return;
    case DType::I16: *lo = -32768, *hi = 32767; return;
    default: break;
  }
  ONNXC_ASSERT(false, std::string("int_range on ") + dtype_name(t));
}

float round_saturate(float v, float zp, float lo, float hi) {
  v = std::nearbyint(v) + zp;
  v = v > lo ? v : lo;
  return v < hi ? v : hi;
}

namespace {

// int32 = the int64 sum modulo 2^32 (what int32 accumulation with wrap-around gives).
int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

// Whether input i is a single value (a scalar or one element, rank <= 1).
bool one_value(const Node& n, size_t i) { return n.in(i)->shape.size() <= 1 && numel(n.in(i)->shape) == 1; }

void expect_same_dtype(const Node& n, size_t i, size_t like, const char* what, const char* like_what) {
  if (n.in(i)->dtype != n.in(like)->dtype)
    n.invalid(fmt::format("{} has dtype {}, {} has {}: they must match", what, dtype_name(n.in(i)->dtype), like_what,
                          dtype_name(n.in(like)->dtype)));
}

// A scale must be float32 (float16 arrives widened); int32 scales (QuantizeLinear-19+) are refused.
void expect_scale(const Node& n, size_t i, const char* what) {
  DType t = n.in(i)->dtype;
  if (t == DType::I32) n.unsupported(fmt::format("{} of dtype int32 is not supported (float32 and float16 scales are)", what));
  if (t != DType::F32) n.invalid(fmt::format("{} has dtype {}, expected a float type", what, dtype_name(t)));
}

// ---------------------------------------------------------------- QuantizeLinear, DequantizeLinear

class QuantDequant : public Op {
 public:
  explicit QuantDequant(bool quantize) : q_(quantize) {}

  void parse(AttrReader& a) override {
    const Node& n = a.node();
    if (a.opset() >= 13) axis_ = a.i("axis", 1);
    if (a.opset() >= 21) {
      block_ = a.i("block_size", 0);
      if (block_ < 0) n.invalid(fmt::format("block_size {} is negative", block_));
    }
    if (q_) {
      if (a.opset() >= 19) {
        // Only float8 outputs saturate or not; integer outputs always saturate.
        int64_t sat = a.i("saturate", 1);
        if (sat != 0 && sat != 1) n.invalid(fmt::format("attribute 'saturate' must be 0 or 1, got {}", sat));
      }
      if (a.opset() >= 21) out_code_ = a.i("output_dtype", 0);
      if (a.opset() >= 23) {
        int64_t p = a.i("precision", 0);
        if (p != 0 && p != 1 && p != 10)
          n.unsupported(fmt::format("precision {} ({}) is not supported (float32 and float16 are, both computed in float32)", p,
                                    onnx_type_name(p)));
      }
    } else if (a.opset() >= 23) {
      out_code_ = a.i("output_dtype", 0);
      if (out_code_ == 16) n.unsupported("output_dtype bfloat16 is not supported");
      if (out_code_ != 0 && out_code_ != 1 && out_code_ != 10)
        n.invalid(fmt::format("output_dtype {} ({}) is not float32, float16 or bfloat16", out_code_, onnx_type_name(out_code_)));
    }
  }

  void infer(Node& n) override {
    const char* sname = q_ ? "y_scale" : "x_scale";
    const char* zname = q_ ? "y_zero_point" : "x_zero_point";
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || !n.in(0) || !n.in(1))
      n.invalid(fmt::format("expects inputs x, {} and optional {}", sname, zname));
    if (n.outputs.size() != 1 || !n.out(0)) n.invalid("expects 1 output");
    expect_scale(n, 1, sname);
    DType y = DType::F32;
    if (q_) {
      expect_dtype(n, 0, {DType::F32, DType::I32});
      y = out_type(n);
      int_range(y, &g_.qmin, &g_.qmax);
    } else {
      DType t = n.in(0)->dtype;
      bool wide = n.opset >= 21 && (t == DType::U16 || t == DType::I16);
      if (t != DType::U8 && t != DType::I8 && t != DType::I32 && !wide)
        n.invalid(fmt::format("x has dtype {}; DequantizeLinear-{} takes uint8, int8{}, int32", dtype_name(t), n.opset,
                              n.opset >= 21 ? ", uint16, int16" : ""));
      if (n.in(2)) expect_same_dtype(n, 2, 0, zname, "x");
    }
    resolve(n, sname, zname);
    set_output(n, 0, y, n.in(0)->shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    const float* s = in[1]->data<float>();
    const Tensor* zp = in.size() > 2 ? in[2] : nullptr;
    for (int64_t o = 0; o < g_.outer; ++o)
      for (int64_t a = 0; a < g_.len; ++a)
        for (int64_t i = 0; i < g_.inner; ++i) {
          int64_t xi = (o * g_.len + a) * g_.inner + i;
          int64_t si = o * g_.s_outer + a / g_.block * g_.s_axis + i * g_.s_inner;
          int64_t z = zp ? zp->get_i64(si) : 0;
          if (!q_) {
            out[0].data<float>()[xi] = static_cast<float>(x.get_i64(xi) - z) * s[si];
          } else if (x.dtype == DType::F32) {
            float v = round_saturate(x.data<float>()[xi] / s[si], static_cast<float>(z), static_cast<float>(g_.qmin),
                                     static_cast<float>(g_.qmax));
            out[0].set_i64(xi, static_cast<int64_t>(v));
          } else {  // int32 x: in double, exact
            double v = std::nearbyint(static_cast<double>(x.data<int32_t>()[xi]) / static_cast<double>(s[si])) + static_cast<double>(z);
            v = v > g_.qmin ? v : g_.qmin;
            out[0].set_i64(xi, static_cast<int64_t>(v < g_.qmax ? v : g_.qmax));
          }
        }
  }

  // Per tensor, each element maps alone (the layout pass may run it on blocked channels).
  FusionKind kind() const override {
    return g_.s_outer == 0 && g_.s_axis == 0 && g_.s_inner == 0 ? FusionKind::Elementwise : FusionKind::Opaque;
  }
  int64_t min_opset() const override { return 10; }
  const QuantGeom& geom() const { return g_; }

 private:
  // QuantizeLinear's output type: y_zero_point's, else output_dtype (21+), else uint8.
  DType out_type(const Node& n) const {
    bool wide = n.opset >= 21;
    auto allowed = [&](DType t) { return t == DType::U8 || t == DType::I8 || (wide && (t == DType::U16 || t == DType::I16)); };
    const char* list = wide ? "uint8, int8, uint16 or int16" : "uint8 or int8";
    DType y = DType::U8;
    if (n.in(2)) {
      y = n.in(2)->dtype;
      if (!allowed(y)) n.invalid(fmt::format("y_zero_point has dtype {}, expected {}", dtype_name(y), list));
    }
    if (out_code_ != 0) {
      int64_t c = out_code_;
      if ((c >= 17 && c <= 23) || c == 16)
        n.unsupported(fmt::format("output_dtype {} ({}) is not supported: onnxc quantizes to {}", c, onnx_type_name(c), list));
      DType t = c > 0 && c < 1000 && dtype_supported(static_cast<int>(c)) ? static_cast<DType>(c) : DType::Undefined;
      if (!allowed(t)) n.invalid(fmt::format("output_dtype {} ({}) is not a quantized type", c, onnx_type_name(c)));
      if (n.in(2) && t != y)
        n.invalid(fmt::format("output_dtype {} does not match y_zero_point's dtype {}", onnx_type_name(c), dtype_name(y)));
      y = t;
    }
    return y;
  }

  // x as [outer, len, inner] around `a`.
  void split(const Shape& xs, int64_t a) {
    g_.outer = g_.inner = 1;
    for (size_t d = 0; d < xs.size(); ++d)
      if (static_cast<int64_t>(d) < a) g_.outer *= xs[d];
      else if (static_cast<int64_t>(d) > a) g_.inner *= xs[d];
    g_.len = xs[static_cast<size_t>(a)];
  }

  // Per tensor, per axis or blocked, from the scale's shape (and block_size).
  void resolve(const Node& n, const char* sname, const char* zname) {
    const Shape& xs = n.in(0)->shape;
    const Shape& ss = n.in(1)->shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    if (n.in(2) && n.in(2)->shape != ss && !(one_value(n, 1) && one_value(n, 2)))
      n.invalid(fmt::format("{} {} must have the shape of {} {}", zname, shape_str(n.in(2)->shape), sname, shape_str(ss)));
    g_.outer = g_.inner = g_.block = 1;
    g_.len = numel(xs);
    g_.s_outer = g_.s_axis = g_.s_inner = 0;
    if (block_ > 0) {
      if (static_cast<int64_t>(ss.size()) != r || r == 0)
        n.invalid(fmt::format("block_size {} needs {} of x's rank: {} for x {}", block_, sname, shape_str(ss), shape_str(xs)));
      int64_t a = move_axis(n, axis_, r, "axis");
      size_t ua = static_cast<size_t>(a);
      int64_t blocks = xs[ua] == 0 ? 0 : (xs[ua] - 1) / block_ + 1;
      for (size_t d = 0; d < xs.size(); ++d)
        if (d == ua ? ss[d] != blocks : ss[d] != xs[d])
          n.invalid(fmt::format("{} {} must be x's shape {} with axis {} cut into blocks of {} ({} blocks)", sname, shape_str(ss),
                                shape_str(xs), a, block_, blocks));
      split(xs, a);
      g_.block = block_;
      g_.s_inner = 1;
      g_.s_axis = g_.inner;
      g_.s_outer = blocks * g_.inner;
    } else if (one_value(n, 1)) {
      // per tensor
    } else if (ss.size() == 1) {
      if (n.opset < 13) n.invalid(fmt::format("{} {} must be a scalar before opset 13 (per-axis scales came then)", sname, shape_str(ss)));
      if (r == 0) n.invalid(fmt::format("{} {} is per axis but x is a scalar", sname, shape_str(ss)));
      int64_t a = move_axis(n, axis_, r, "axis");
      if (ss[0] != xs[static_cast<size_t>(a)])
        n.invalid(fmt::format("{} {} must have one value per index of axis {} of x {}", sname, shape_str(ss), a, shape_str(xs)));
      split(xs, a);
      g_.s_axis = 1;
    } else {
      n.invalid(fmt::format("{} {} must be a scalar or 1-D (per axis){}", sname, shape_str(ss),
                            n.opset >= 21 ? ", or have x's rank with block_size" : ""));
    }
  }

  bool q_;
  int64_t axis_ = 1, block_ = 0, out_code_ = 0;
  QuantGeom g_;
};

// ---------------------------------------------------------------- DynamicQuantizeLinear

class DynamicQuantizeLinear : public Op {
 public:
  void infer(Node& n) override {
    if (n.inputs.size() != 1 || !n.in(0)) n.invalid("expects 1 input");
    if (n.outputs.size() != 3 || !n.out(0) || !n.out(1) || !n.out(2)) n.invalid("expects 3 outputs (y, y_scale, y_zero_point)");
    expect_float(n, 0);
    set_output(n, 0, DType::U8, n.in(0)->shape);
    set_output(n, 1, DType::F32, {});
    set_output(n, 2, DType::U8, {});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const float* x = in[0]->data<float>();
    const int64_t n = in[0]->numel();
    float lo = 0.0f, hi = 0.0f;  // NaN never replaces them
    for (int64_t i = 0; i < n; ++i) {
      lo = x[i] < lo ? x[i] : lo;
      hi = x[i] > hi ? x[i] : hi;
    }
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    float zp = 0.0f - lo / scale;
    zp = zp > 0.0f ? zp : 0.0f;
    zp = std::nearbyint(zp < 255.0f ? zp : 255.0f);
    for (int64_t i = 0; i < n; ++i) out[0].data<uint8_t>()[i] = static_cast<uint8_t>(round_saturate(x[i] / scale, zp, 0.0f, 255.0f));
    out[1].data<float>()[0] = scale;
    out[2].data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  }

  int64_t min_opset() const override { return 11; }
};

// ---------------------------------------------------------------- shared by the matrix products and convolutions

// The value of parameter p at offset `off` (0 when absent), as int64 / float.
int64_t zp_at(const std::vector<const Tensor*>& in, const QParam& p, int64_t off) {
  return p.input < 0 ? 0 : in[static_cast<size_t>(p.input)]->get_i64(off);
}
float scale_at(const std::vector<const Tensor*>& in, const QParam& p, int64_t off) {
  return in[static_cast<size_t>(p.input)]->data<float>()[off];
}

// Requantization of an int32 accumulator (the QLinear ops).
int64_t requantize(int32_t acc, float m, float zp, double lo, double hi) {
  return static_cast<int64_t>(round_saturate(static_cast<float>(acc) * m, zp, static_cast<float>(lo), static_cast<float>(hi)));
}

// Whether `terms` products of two 8-bit values less their zero points (each at most 255 in
// magnitude), plus a bias when `bias`, may leave int32's range.
bool may_wrap(double terms, bool bias) { return bias || terms * 255.0 * 255.0 > 2147483647.0; }

// A scalar parameter: a scalar or one element.
QParam scalar_param(const Node& n, int i, const char* what) {
  if (!one_value(n, static_cast<size_t>(i)))
    n.invalid(fmt::format("{} {} must be a scalar (one value per tensor)", what, shape_str(n.in(static_cast<size_t>(i))->shape)));
  QParam p;
  p.input = i;
  return p;
}

// ---------------------------------------------------------------- MatMulInteger, QLinearMatMul

class QMatMul : public Op {
 public:
  explicit QMatMul(bool qlinear) { g_.qlinear = qlinear; }

  void infer(Node& n) override {
    const bool ql = g_.qlinear;
    if (ql ? n.inputs.size() != 8 : n.inputs.size() < 2 || n.inputs.size() > 4)
      n.invalid(ql ? "expects 8 inputs (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point)"
                   : "expects inputs A, B and optional a_zero_point, b_zero_point");
    if (ql)
      for (size_t i = 0; i < 8; ++i)
        if (!n.in(i)) n.invalid(fmt::format("input {} is required", i));
    g_.a = 0;
    g_.b = ql ? 3 : 1;
    const size_t ia = 0, ib = static_cast<size_t>(g_.b);
    if (!n.in(ia) || !n.in(ib)) n.invalid("inputs A and B are required");
    expect_dtype(n, ia, {DType::U8, DType::I8});
    expect_dtype(n, ib, {DType::U8, DType::I8});
    const Shape& a = n.in(ia)->shape;
    const Shape& b = n.in(ib)->shape;
    Shape ys;
    static_cast<MatMulGeom&>(g_) = resolve_matmul(n, a, b, &ys);
    const Shape am = a.size() == 1 ? Shape{1, a[0]} : a;  // the operands as matrices, for the parameters
    const Shape bm = b.size() == 1 ? Shape{b[0], 1} : b;
    const int iaz = 2, ibz = ql ? 5 : 3;
    g_.a_zp = g_.b_zp = QParam{};
    if (n.in(iaz)) {
      expect_same_dtype(n, iaz, ia, "a_zero_point", "A");
      g_.a_zp = matrix_param(n, iaz, am, true, "a_zero_point");
    }
    if (n.in(static_cast<size_t>(ibz))) {
      expect_same_dtype(n, static_cast<size_t>(ibz), ib, "b_zero_point", "B");
      g_.b_zp = matrix_param(n, ibz, bm, false, "b_zero_point");
    }
    g_.wrap = may_wrap(static_cast<double>(g_.K), false);
    DType y = DType::I32;
    if (ql) {
      expect_scale(n, 1, "a_scale");
      expect_scale(n, 4, "b_scale");
      expect_scale(n, 6, "y_scale");
      expect_dtype(n, 7, {DType::U8, DType::I8});
      g_.a_scale = matrix_param(n, 1, am, true, "a_scale");
      g_.b_scale = matrix_param(n, 4, bm, false, "b_scale");
      g_.y_scale = scalar_param(n, 6, "y_scale");
      g_.y_zp = scalar_param(n, 7, "y_zero_point");
      y = n.in(7)->dtype;
      int_range(y, &g_.qmin, &g_.qmax);
    }
    set_output(n, 0, y, ys);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor &a = *in[static_cast<size_t>(g_.a)], &b = *in[static_cast<size_t>(g_.b)];
    const int64_t batch = numel(g_.batch);
    const Shape cont = strides_of(g_.batch);
    auto boff = [&](const Shape& st, int64_t bt) {
      int64_t off = 0;
      for (size_t d = 0; d < g_.batch.size(); ++d) off += bt / cont[d] % g_.batch[d] * (st.empty() ? 0 : st[d]);
      return off;
    };
    for (int64_t bt = 0; bt < batch; ++bt) {
      const int64_t ao = boff(g_.a_st, bt), bo = boff(g_.b_st, bt);
      for (int64_t i = 0; i < g_.M; ++i)
        for (int64_t j = 0; j < g_.N; ++j) {
          const int64_t az = zp_at(in, g_.a_zp, boff(g_.a_zp.batch_st, bt) + i * g_.a_zp.step);
          const int64_t bz = zp_at(in, g_.b_zp, boff(g_.b_zp.batch_st, bt) + j * g_.b_zp.step);
          int64_t s = 0;
          for (int64_t k = 0; k < g_.K; ++k) s += (a.get_i64(ao + i * g_.K + k) - az) * (b.get_i64(bo + k * g_.N + j) - bz);
          const int64_t yi = (bt * g_.M + i) * g_.N + j;
          if (!g_.qlinear) {
            out[0].data<int32_t>()[yi] = wrap32(s);
            continue;
          }
          float m = scale_at(in, g_.a_scale, boff(g_.a_scale.batch_st, bt) + i * g_.a_scale.step) *
                    scale_at(in, g_.b_scale, boff(g_.b_scale.batch_st, bt) + j * g_.b_scale.step);
          m = m / scale_at(in, g_.y_scale, 0);
          out[0].set_i64(yi, requantize(wrap32(s), m, static_cast<float>(zp_at(in, g_.y_zp, 0)), g_.qmin, g_.qmax));
        }
    }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 10; }
  const QMatMulGeom& geom() const { return g_; }

 private:

  // A's per-row (rows) or B's per-column parameter: one value, a vector [M] / [N], or the
  // operand's shape with K cut to 1 ([..., M, 1] / [..., 1, N]).
  QParam matrix_param(const Node& n, int i, const Shape& mat, bool rows, const char* what) const {
    QParam p;
    p.input = i;
    const Shape& ps = n.in(static_cast<size_t>(i))->shape;
    const int64_t cnt = rows ? g_.M : g_.N;
    if (numel(ps) == 1) return p;
    p.step = 1;
    if (ps.size() == 1 && ps[0] == cnt) return p;
    Shape want = mat;
    want[rows ? mat.size() - 1 : mat.size() - 2] = 1;
    if (ps != want)
      n.invalid(fmt::format("{} {} must be a scalar, [{}] or {} (one value per {})", what, shape_str(ps), cnt, shape_str(want),
                            rows ? "row of A" : "column of B"));
    p.batch_st = batch_strides(g_.batch, Shape(mat.begin(), mat.end() - 2), cnt);
    return p;
  }

  QMatMulGeom g_;
};

// ---------------------------------------------------------------- ConvInteger, QLinearConv

class QConv : public Op {
 public:
  explicit QConv(bool qlinear) { g_.qlinear = qlinear; }

  void parse(AttrReader& a) override { at_.parse(a, false); }

  void infer(Node& n) override {
    const bool ql = g_.qlinear;
    if (ql ? n.inputs.size() < 8 || n.inputs.size() > 9 : n.inputs.size() < 2 || n.inputs.size() > 4)
      n.invalid(ql ? "expects inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point and optional B"
                   : "expects inputs x, w and optional x_zero_point, w_zero_point");
    if (ql)
      for (size_t i = 0; i < 8; ++i)
        if (!n.in(i)) n.invalid(fmt::format("input {} is required", i));
    g_.x = 0;
    g_.w = ql ? 3 : 1;
    g_.bias = ql && n.in(8) ? 8 : -1;
    const size_t ix = 0, iw = static_cast<size_t>(g_.w);
    if (!n.in(ix) || !n.in(iw)) n.invalid("inputs x and w are required");
    expect_dtype(n, ix, {DType::U8, DType::I8});
    expect_dtype(n, iw, {DType::U8, DType::I8});
    ConvGeom& g = g_.conv;
    resolve_geometry(n, g);
    const int ixz = 2, iwz = ql ? 5 : 3;
    g_.x_zp = g_.w_zp = QParam{};
    if (n.in(ixz)) {
      expect_same_dtype(n, ixz, ix, "x_zero_point", "x");
      g_.x_zp = scalar_param(n, ixz, "x_zero_point");
    }
    if (n.in(static_cast<size_t>(iwz))) {
      expect_same_dtype(n, static_cast<size_t>(iwz), iw, "w_zero_point", "w");
      g_.w_zp = channel_param(n, iwz, "w_zero_point");
    }
    DType y = DType::I32;
    if (ql) {
      expect_scale(n, 1, "x_scale");
      expect_scale(n, 4, "w_scale");
      expect_scale(n, 6, "y_scale");
      expect_dtype(n, 7, {DType::U8, DType::I8});
      g_.x_scale = scalar_param(n, 1, "x_scale");
      g_.w_scale = channel_param(n, 4, "w_scale");
      g_.y_scale = scalar_param(n, 6, "y_scale");
      g_.y_zp = scalar_param(n, 7, "y_zero_point");
      if (g_.bias >= 0) {
        expect_dtype(n, 8, {DType::I32});
        if (n.in(8)->shape != Shape{g.M}) n.invalid(fmt::format("B {} must have shape [{}]", shape_str(n.in(8)->shape), g.M));
      }
      y = n.in(7)->dtype;
      int_range(y, &g_.qmin, &g_.qmax);
    }
    g_.products_wrap = may_wrap(static_cast<double>(g.CG) * static_cast<double>(g.k_size()), false);
    g_.wrap = g_.products_wrap || g_.bias >= 0;
    Shape ys{g.N, g.M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    set_output(n, 0, y, ys);
  }

  // Reference: per output element, the sum over its group's input channels and the kernel
  // positions that land inside x (padding adds nothing).
  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const ConvGeom& g = g_.conv;
    const Tensor &x = *in[static_cast<size_t>(g_.x)], &w = *in[static_cast<size_t>(g_.w)];
    const size_t r = g.rank();
    const int64_t XS = g.in_size(), YS = g.out_size(), KS = g.k_size();
    const int64_t xz = zp_at(in, g_.x_zp, 0);
    for (int64_t b = 0; b < g.N; ++b)
      for (int64_t m = 0; m < g.M; ++m) {
        const int64_t wz = zp_at(in, g_.w_zp, m * g_.w_zp.step);
        const int64_t x0 = (b * g.C + m / g.MG * g.CG) * XS;
        for (int64_t p = 0; p < YS; ++p) {
          Shape op = unravel(p, g.out);
          int64_t s = g_.bias >= 0 ? in[static_cast<size_t>(g_.bias)]->get_i64(m) : 0;
          for (int64_t kp = 0; kp < KS; ++kp) {
            Shape kk = unravel(kp, g.k), ip(r);
            bool inside = true;
            for (size_t d = 0; d < r; ++d) {
              ip[d] = op[d] * g.s[d] - g.pb[d] + kk[d] * g.d[d];
              inside = inside && ip[d] >= 0 && ip[d] < g.in[d];
            }
            if (!inside) continue;
            const int64_t xi = ravel(ip, g.in);
            for (int64_t c = 0; c < g.CG; ++c)
              s += (x.get_i64(x0 + c * XS + xi) - xz) * (w.get_i64((m * g.CG + c) * KS + kp) - wz);
          }
          const int64_t yi = (b * g.M + m) * YS + p;
          if (!g_.qlinear) {
            out[0].data<int32_t>()[yi] = wrap32(s);
            continue;
          }
          float mult = scale_at(in, g_.x_scale, 0) * scale_at(in, g_.w_scale, m * g_.w_scale.step);
          mult = mult / scale_at(in, g_.y_scale, 0);
          out[0].set_i64(yi, requantize(wrap32(s), mult, static_cast<float>(zp_at(in, g_.y_zp, 0)), g_.qmin, g_.qmax));
        }
      }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 10; }
  const QConvGeom& geom() const { return g_; }

 private:
  // One value, or one per output channel ([M]).
  QParam channel_param(const Node& n, int i, const char* what) const {
    QParam p;
    p.input = i;
    const Shape& ps = n.in(static_cast<size_t>(i))->shape;
    if (one_value(n, static_cast<size_t>(i))) return p;
    if (ps != Shape{g_.conv.M})
      n.invalid(fmt::format("{} {} must be a scalar or [{}] (one value per output channel)", what, shape_str(ps), g_.conv.M));
    p.step = 1;
    return p;
  }

  // Conv's geometry (as ir/ops/conv.cc resolves it) for x and w of any 8-bit type.
  void resolve_geometry(const Node& n, ConvGeom& g) const {
    const Shape& xs = n.in(static_cast<size_t>(g_.x))->shape;
    const Shape& ws = n.in(static_cast<size_t>(g_.w))->shape;
    if (xs.size() < 3) n.invalid("x " + shape_str(xs) + " must have rank >= 3 (N, C, spatial dims)");
    if (ws.size() != xs.size()) n.invalid("w " + shape_str(ws) + " must have the rank of x " + shape_str(xs));
    if (numel(xs) == 0 || numel(ws) == 0)
      n.unsupported("empty tensors are not supported (x " + shape_str(xs) + ", w " + shape_str(ws) + ")");
    g.N = xs[0], g.C = xs[1], g.G = at_.group, g.M = ws[0];
    if (g.G < 1) n.invalid(fmt::format("group {} must be >= 1", g.G));
    if (g.C % g.G != 0 || g.M % g.G != 0)
      n.invalid(fmt::format("group {} does not divide the input channels {} and output channels {}", g.G, g.C, g.M));
    g.CG = g.C / g.G, g.MG = g.M / g.G;
    if (ws[1] != g.CG)
      n.invalid(fmt::format("w {} has {} input channels per group, expected C/group = {}/{} = {}", shape_str(ws), ws[1], g.C, g.G, g.CG));
    g.in.assign(xs.begin() + 2, xs.end());
    g.k.assign(ws.begin() + 2, ws.end());
    read_conv_attrs(n, at_, g);
    resolve_conv_output(n, at_, g, "x");
  }

  ConvAttrs at_;
  QConvGeom g_;
};

// ---------------------------------------------------------------- onnxc.qdq_add

// onnxc.qdq_add(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point) →
// y, in one op what a QDQ model's DequantizeLinear(a), DequantizeLinear(b) → Add →
// QuantizeLinear(y) means, with those ops' float32 arithmetic:
//   y = saturate(round_half_even(((float)(a - a_zp) * a_scale + (float)(b - b_zp) * b_scale) / y_scale) + y_zp)
// and onnxc.qdq_mul the same with Mul (the product of the two dequantized values). a and b
// (uint8 or int8, each with its zero point's type) broadcast as Add's inputs; every scale and
// zero point is one value; y has y_zero_point's type.
class QdqAdd : public Op {
 public:
  explicit QdqAdd(bool mul) : mul_(mul) {}

  void infer(Node& n) override {
    if (n.inputs.size() != 8)
      n.invalid("expects inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point");
    for (size_t i = 0; i < 8; ++i)
      if (!n.in(i)) n.invalid(fmt::format("input {} is required", i));
    if (n.outputs.size() != 1 || !n.out(0)) n.invalid("expects 1 output");
    static const char* names[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};
    for (size_t i : {0, 3}) {
      expect_dtype(n, i, {DType::U8, DType::I8});
      expect_same_dtype(n, i + 2, i, names[i + 2], names[i]);
    }
    for (int i : {1, 4, 6}) {
      expect_scale(n, static_cast<size_t>(i), names[i]);
      scalar_param(n, i, names[i]);
    }
    for (int i : {2, 5, 7}) scalar_param(n, i, names[i]);
    expect_dtype(n, 7, {DType::U8, DType::I8});
    int_range(n.in(7)->dtype, &qmin_, &qmax_);
    Shape ys;
    if (!broadcast_shapes(n.in(0)->shape, n.in(3)->shape, &ys))
      n.invalid(fmt::format("a {} and b {} cannot be broadcast together", shape_str(n.in(0)->shape), shape_str(n.in(3)->shape)));
    set_output(n, 0, n.in(7)->dtype, ys);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& ys = out[0].shape;
    const std::vector<int64_t> ia = broadcast_index(ys, in[0]->shape), ib = broadcast_index(ys, in[3]->shape);
    const float sa = in[1]->data<float>()[0], sb = in[4]->data<float>()[0], sy = in[6]->data<float>()[0];
    const int64_t za = in[2]->get_i64(0), zb = in[5]->get_i64(0);
    const float zy = static_cast<float>(in[7]->get_i64(0));
    for (int64_t i = 0; i < numel(ys); ++i) {
      const float da = static_cast<float>(in[0]->get_i64(ia[static_cast<size_t>(i)]) - za) * sa;
      const float db = static_cast<float>(in[3]->get_i64(ib[static_cast<size_t>(i)]) - zb) * sb;
      const float v = round_saturate((mul_ ? da * db : da + db) / sy, zy, static_cast<float>(qmin_), static_cast<float>(qmax_));
      out[0].set_i64(i, static_cast<int64_t>(v));
    }
  }

  double qmin() const { return qmin_; }
  double qmax() const { return qmax_; }

 private:
  bool mul_;
  double qmin_ = 0, qmax_ = 0;
};

// ---------------------------------------------------------------- onnxc.lookup

// onnxc.lookup(x, table) → y: y[i] = table[x[i] - lowest], lowest the smallest value of x's type
// (0 for uint8, -128 for int8); table has 256 elements of uint8 or int8, y has table's type and
// x's shape. The integer-ops pass writes it for a QDQ model's DequantizeLinear → elementwise
// float ops → QuantizeLinear (a SiLU, a Sigmoid, a HardSwish between quantize steps), with the
// table those ops compute for each of the 256 inputs.
class Lookup : public Op {
 public:
  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects inputs x and table");
    if (n.outputs.size() != 1 || !n.out(0)) n.invalid("expects 1 output");
    expect_dtype(n, 0, {DType::U8, DType::I8});
    expect_dtype(n, 1, {DType::U8, DType::I8});
    if (numel(n.in(1)->shape) != 256 || n.in(1)->shape.size() != 1)
      n.invalid(fmt::format("table has shape {}, expected [256] (one entry per value of x's type)", shape_str(n.in(1)->shape)));
    set_output(n, 0, n.in(1)->dtype, n.in(0)->shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const int64_t lowest = in[0]->dtype == DType::I8 ? -128 : 0;
    for (int64_t i = 0; i < out[0].numel(); ++i) out[0].set_i64(i, in[1]->get_i64(in[0]->get_i64(i) - lowest));
  }
};

}  // namespace

const QuantGeom& quant_geom(const Node& n) { return op_as<QuantDequant>(n).geom(); }
const QMatMulGeom& qmatmul_geom(const Node& n) { return op_as<QMatMul>(n).geom(); }
const QConvGeom& qconv_geom(const Node& n) { return op_as<QConv>(n).geom(); }
void qdq_add_range(const Node& n, double* lo, double* hi) {
  *lo = op_as<QdqAdd>(n).qmin();
  *hi = op_as<QdqAdd>(n).qmax();
}

void register_quantize(OpTable& t) {
  t["QuantizeLinear"] = [] { return std::unique_ptr<Op>(std::make_unique<QuantDequant>(true)); };
  t["DequantizeLinear"] = [] { return std::unique_ptr<Op>(std::make_unique<QuantDequant>(false)); };
  t["DynamicQuantizeLinear"] = [] { return std::unique_ptr<Op>(std::make_unique<DynamicQuantizeLinear>()); };
  t["MatMulInteger"] = [] { return std::unique_ptr<Op>(std::make_unique<QMatMul>(false)); };
  t["QLinearMatMul"] = [] { return std::unique_ptr<Op>(std::make_unique<QMatMul>(true)); };
  t["ConvInteger"] = [] { return std::unique_ptr<Op>(std::make_unique<QConv>(false)); };
  t["QLinearConv"] = [] { return std::unique_ptr<Op>(std::make_unique<QConv>(true)); };
  t["onnxc.qdq_add"] = [] { return std::unique_ptr<Op>(std::make_unique<QdqAdd>(false)); };
  t["onnxc.qdq_mul"] = [] { return std::unique_ptr<Op>(std::make_unique<QdqAdd>(true)); };
  t["onnxc.lookup"] = [] { return std::unique_ptr<Op>(std::make_unique<Lookup>()); };
}

}  // namespace onnxc
