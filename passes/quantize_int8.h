// passes/quantize_int8.h — compile-model --quantize int8: a float model quantized by the compiler
// from calibration inputs, as ONNX Runtime's quantize_static writes a QDQ model (QDQ format,
// MinMax calibration, per-channel symmetric int8 weights, uint8 activations, op types Conv, Relu
// and Clip), so that the integer-ops pass then runs its convolutions as QLinearConv.
//
// Calibration: the reference evaluator (ir/eval.h) runs the imported graph on each sample and
// records the smallest and largest value of every tensor that is quantized: each Conv's
// activation input, and its output — the output of the Relu, or of the Clip with constant bounds
// (Relu6), that is the Conv's one reader when there is one (its range, whose zero point 0 and
// largest value within the Clip's bound make the saturation the activation). Over all
// samples, with 0 always inside the range:
//   scale = (max - min) / 255, zero point = round(-min / scale)    (uint8, asymmetric)
// in ONNX Runtime's arithmetic (the range's width in float32, the division in float64, the scale
// stored as float32, round half to even; a range narrower than float32's smallest normal number
// gets scale 1 and zero point 0). Each such tensor T becomes QuantizeLinear → DequantizeLinear
// with every reader of T reading the DequantizeLinear (a graph output keeps its name on it).
// Weights (constant float, 4-D): per output channel m, absmax = max |W[m]|, scale = 2 absmax / 254
// (range [-127, 127], zero point 0), Wq = round(W / scale) in float32, clipped; the bias:
// Bq = round(B / (sx * sw[m])) as int32, its scale sx * sw[m] in float32. Both as constant
// int8/int32 tensors read through DequantizeLinear (axis 0).
// Which Convs: float, constant 4-D weights and bias (or none), not in a fused group. Others, and
// every other op, stay float (their inputs may be dequantized values). quantize_dynamic_int8
// below is the transformers' counterpart (--quantize int8-dynamic).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace onnxc {

struct QuantizeInt8Report {
  int convs = 0;          // Convs whose weights were quantized
  int tensors = 0;        // activation tensors given QuantizeLinear → DequantizeLinear
  int samples = 0;
  std::vector<std::string> float_convs;  // Convs left float, with the reason
};

// Quantizes g (imported, shapes inferred, no pass run yet) from `samples`: each one a value for
// every graph input. At least one sample.
QuantizeInt8Report quantize_int8(Graph& g, const std::vector<std::map<const Value*, Tensor>>& samples);

// compile-model --quantize int8-dynamic: the float MatMuls (and Gemms: Y = A B + C, B stored
// either way, C constant or none, then one Add) of constant 2-D weights rewritten as
// ONNX Runtime's quantize_dynamic writes them (its defaults: int8 weights per tensor, symmetric in
// [-127, 127], scale = 2 absmax / 254 as in quantize_int8; activations quantized at run time),
//   y = MatMul(x, W)  ->  xq, xs, xz = DynamicQuantizeLinear(x)   (one per activation x)
//                         y = Cast(MatMulInteger(xq, Wq, xz, 0), float) * Mul(xs, ws)
// the form the byte-quads product and its fused float steps run (codegen/c/kernels/quantize.cc):
// no calibration. The transformers' projections and feed-forward products; the attention's
// products of two activations, and every other op, stay float.
struct QuantizeDynamicReport {
  int matmuls = 0;      // MatMuls quantized
  int activations = 0;  // DynamicQuantizeLinear nodes (one per distinct input)
};
QuantizeDynamicReport quantize_dynamic_int8(Graph& g);

}  // namespace onnxc
