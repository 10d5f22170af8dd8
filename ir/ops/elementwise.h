// ir/ops/elementwise.h — helpers shared by elementwise and broadcasting ops:
// multidirectional broadcast shapes and reference index maps, plus the dtype helpers of the
// small data ops (Cast, Clip, Max/Min): a visitor over the C++ element types and UB-free
// dtype conversion (float → integer saturates: NaN → 0, out of range → the type's limits,
// like Tensor::set; integer → integer wraps modulo 2^N; anything → bool is `!= 0`); the C
// backend mirrors it (c_convert).
#pragma once
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "ir/op.h"

namespace onnxc {

// Parsed attributes of the unary ops that have some (LeakyRelu, HardSigmoid, Elu: alpha,
// beta with ONNX defaults; 0 elsewhere), and Clip's attribute bounds (opset < 11; from
// opset 11 the bounds are inputs 1 and 2). For backends.
struct UnaryAttrs {
  double alpha = 0, beta = 0;
};
const UnaryAttrs& unary_attrs(const Node& n);
struct ClipAttrs {
  double lo = 0, hi = 0;
};
const ClipAttrs& clip_attrs(const Node& n);
// IsInf's attributes (ir/ops/compare.cc).
struct IsInfAttrs {
  bool negative = true, positive = true;
};
IsInfAttrs isinf_attrs(const Node& n);
// The attributes of the activations of ir/ops/activation.cc (Selu: alpha, gamma; Celu,
// ThresholdedRelu: alpha; Gelu: tanh = approximate "tanh"), and Mod's fmod (ir/ops/math.cc).
struct ActivationAttrs {
  double alpha = 0, gamma = 0;
  bool tanh = false;
};
const ActivationAttrs& activation_attrs(const Node& n);
bool mod_fmod(const Node& n);
bool bitshift_left(const Node& n);  // BitShift's direction is LEFT (ir/ops/math.cc)
// ConstantOfShape's one-element fill value (ir/ops/constant.cc).
const Tensor& constant_of_shape_value(const Node& n);

// Broadcasting of the binary ops before opset 7 (Add, Sub, Mul, Div, Pow, Equal, Less,
// Greater, And, Or, Xor): attribute broadcast (default 0: A and B have the same shape) and
// axis (where B's dims lie in A's; default: A's trailing dims). Where it means what numpy
// broadcasting computes (B aligned with A's trailing dims, or B a single element) the op
// runs as at opset 7; another axis is refused by name (exit 3).
struct LegacyBroadcast {
  int64_t broadcast = 0;
  std::optional<int64_t> axis;
};
LegacyBroadcast read_legacy_broadcast(AttrReader& a);  // call only at opset < 7
void check_legacy_broadcast(const Node& n, const LegacyBroadcast& lb);

// Broadcast shape of all present inputs; an invalid-model error naming the shapes otherwise.
Shape broadcast_inputs(const Node& n);
// For every element of `out` (C order), the flat index of the element of `in` it reads.
std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in);
// Element strides of `in` right-aligned against `out`, 0 on broadcast dimensions.
Shape broadcast_strides(const Shape& out, const Shape& in);

// Calls f(T{}) with the C++ element type of t (bool is uint8_t holding 0 or 1, as in the C).
template <class F>
void visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); return;
    case DType::F64: f(double{}); return;
    case DType::I8: f(int8_t{}); return;
    case DType::I16: f(int16_t{}); return;
    case DType::I32: f(int32_t{}); return;
    case DType::I64: f(int64_t{}); return;
    case DType::U8: case DType::Bool: f(uint8_t{}); return;
    case DType::U16: f(uint16_t{}); return;
    case DType::U32: f(uint32_t{}); return;
    case DType::U64: f(uint64_t{}); return;
    case DType::F16:  // edges only (ir/dtype.h): Cast converts it through Tensor::get/set
    case DType::Undefined: break;
  }
  ONNXC_ASSERT(false, std::string("visit_dtype on ") + dtype_name(t));
}

// Reference conversion of one element to D (`to_bool`: the target dtype is bool).
template <class D, class S>
D convert_value(S s, bool to_bool) {
  if (to_bool) return static_cast<D>(s != S(0) ? 1 : 0);
  if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    if (std::isnan(s)) return 0;
    if (s <= static_cast<S>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    if (s >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  }
  return static_cast<D>(s);
}

}  // namespace onnxc
