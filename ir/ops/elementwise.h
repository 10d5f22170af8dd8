// ir/ops/elementwise.h — helpers shared by elementwise and broadcasting ops:
// multidirectional broadcast shapes, reference index maps and the C loop nest, plus the
// dtype helpers of the small data ops (Cast, Clip, Max/Min): a visitor over the C++
// element types, exact C literals of tensor elements, and UB-free dtype conversion in C
// and C++ (float → integer saturates: NaN → 0, out of range → the type's limits, like
// Tensor::set; integer → integer wraps modulo 2^N; anything → bool is `!= 0`).
#pragma once
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include "codegen/c_emit.h"
#include "ir/op.h"

namespace onnxc {

// Broadcast shape of all present inputs; an invalid-model error naming the shapes otherwise.
Shape broadcast_inputs(const Node& n);
// For every element of `out` (C order), the flat index of the element of `in` it reads.
std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in);
// Emits a loop nest over `out`; stmt() receives, per input shape, the C index expression
// of the element to read, and "i" for the output index; it returns one C statement.
void emit_broadcast(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                    const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt);

// Elementwise/broadcast ops run in NCHWc when their float32 output has rank 3 to 5 (the
// layout pass gives every input a layout the output's view can read, see CEmit::in_view).
bool elementwise_nchwc_ok(const Node& n);
// Substitutes the C expression `arg` for the whole-word identifier `x` in `expr`.
std::string subst_x(const std::string& expr, const std::string& arg);

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
    case DType::Undefined: break;
  }
  ONNXC_ASSERT(false, "visit_dtype on undefined dtype");
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

// Exact C literal of element i of t, in t's own dtype ("0.5f", "-3", "18446744073709551615ULL").
std::string c_elem_literal(const Tensor& t, int64_t i);
// C expression converting `x` (a side-effect-free expression of dtype `from`) to dtype `to`
// with the semantics of convert_value; `x` may be evaluated several times.
std::string c_convert(DType from, DType to, const std::string& x);

}  // namespace onnxc
