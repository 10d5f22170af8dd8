// ir/ops/quantize.h — what the quantization ops publish to backends (ir/ops/quantize.cc):
// where each element finds its scale and zero point, the resolved matrix-product and
// convolution geometry, and the inputs of each op by role.
//
// Conventions: zero points are read as int32 (every quantized type fits); scales are float32.
// Integer products accumulate in int32; `wrap` says whether the sum may leave int32's range
// for some input values, in which case the accumulator is held as uint32_t and wraps modulo
// 2^32 (two's complement int32 wrap-around, as other engines' int32 accumulators, without
// C's undefined signed overflow).
#pragma once
#include <cstdint>

#include "ir/ops/conv.h"
#include "ir/ops/gemm.h"

namespace onnxc {

// QuantizeLinear / DequantizeLinear: x viewed as [outer, len, inner] around the axis. The
// scale and zero point of x's element (o, a, i) are element
//   o * s_outer + (a / block) * s_axis + i * s_inner
// of their tensors: all strides 0 per tensor; s_axis 1 per axis; blocked (opset 21), the
// scale has x's shape with the axis cut to ceil(len / block): s_outer = that * inner,
// s_axis = inner, s_inner = 1.
// The range of an 8- or 16-bit integer output type (an internal error for any other).
void int_range(DType t, double* lo, double* hi);
// v rounded half to even (nearbyint in the default rounding mode), plus the zero point,
// saturated to [lo, hi] by compare-selects (NaN → lo): QuantizeLinear's and the requantizations'
// last step, as the C kernels compute it.
float round_saturate(float v, float zp, float lo, float hi);

struct QuantGeom {
  int64_t outer = 1, len = 1, inner = 1, block = 1;
  int64_t s_outer = 0, s_axis = 0, s_inner = 0;
  double qmin = 0, qmax = 0;  // QuantizeLinear: the range of the output type
};
const QuantGeom& quant_geom(const Node& n);

// A scale or zero point of a matrix product or convolution: absent (`input` -1, zero point
// 0), one value, or one per row of A / column of B / output channel of W (`step` 1). For
// the matrix products the N-D form (A's batch dims, one per row) also advances by
// `batch_st` per output batch dim (0 where it does not vary).
struct QParam {
  int input = -1;
  int64_t step = 0;
  Shape batch_st;
};

// MatMulInteger(A, B, a_zero_point, b_zero_point) → int32, and QLinearMatMul(a, a_scale,
// a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point): per output batch index,
// [M, K] x [K, N]; a_st / b_st are the element strides of A's / B's matrices per output
// batch dim, 0 where it broadcasts. a_* parameters go per row i, b_* per column j.
// QLinearMatMul: y = saturate(round_half_even(acc * (a_scale * b_scale / y_scale)) + y_zero_point).
struct QMatMulGeom : MatMulGeom {  // the product's shapes and strides, as MatMul resolves them
  bool qlinear = false;
  int a = 0, b = 1;  // input indices of the operands
  QParam a_zp, b_zp, a_scale, b_scale, y_scale, y_zp;  // scales and y_*: QLinearMatMul only
  bool wrap = false;
  double qmin = 0, qmax = 0;  // QLinearMatMul: the range of y's type
};
const QMatMulGeom& qmatmul_geom(const Node& n);

// ConvInteger(x, w, x_zero_point, w_zero_point) → int32, and QLinearConv(x, x_scale,
// x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B): Conv's geometry;
// padding contributes nothing (a padded x equals its zero point). w_* parameters may go per
// output channel. QLinearConv: acc starts at B[m]; y = saturate(round_half_even(acc *
// (x_scale * w_scale / y_scale)) + y_zero_point).
struct QConvGeom {
  bool qlinear = false;
  int x = 0, w = 1, bias = -1;  // input indices
  ConvGeom conv;
  QParam x_zp, w_zp, x_scale, w_scale, y_scale, y_zp;
  bool products_wrap = false;  // the sum of the CG·K1···Kk products may leave int32's range
  bool wrap = false;           // that, or a bias is added
  double qmin = 0, qmax = 0;
};
const QConvGeom& qconv_geom(const Node& n);

// onnxc.qdq_add and onnxc.qdq_mul (DequantizeLinear, DequantizeLinear → Add or Mul →
// QuantizeLinear in one op; their inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point,
// y_scale, y_zero_point, each scale and zero point one value): the range of y's type.
void qdq_add_range(const Node& n, double* lo, double* hi);

}  // namespace onnxc
