// ir/dtype.h — element types of the graph IR.
//
// Codes are ONNX TensorProto.DataType codes so that the importer, the weights file and
// the generated C (runtime/onnxc_runtime.h uses the same numbers) agree without tables.
// Compute is float32; the integer types and bool exist for shape tensors, indices and
// data movement. float16 (F16, IEEE binary16 held as its uint16_t bits) exists only at a
// model's edges: the importer turns float16 initializers into float32 ones and puts a Cast
// after each float16 graph input and before each float16 graph output, so only Cast ever
// reads or writes F16 (frontend/onnx_import.cc). bfloat16/string are not supported.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxc {

enum class DType : int {
  Undefined = 0, F32 = 1, U8 = 2, I8 = 3, U16 = 4, I16 = 5, I32 = 6, I64 = 7,
  Bool = 9, F16 = 10, F64 = 11, U32 = 12, U64 = 13,
};

size_t dtype_size(DType t);          // 0 for Undefined
const char* dtype_name(DType t);     // "f32", "i64", ...
const char* dtype_ctype(DType t);    // "float", "int64_t", "uint8_t" (bool is uint8_t)
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);          // signed or unsigned integer (not bool)
bool dtype_is_signed_int(DType t);   // int8, int16, int32 or int64
bool dtype_supported(int onnx_code); // one of the codes above, except Undefined and F16 (edges only)
// Name of any ONNX element type code, including those onnxc has no DType for ("float16",
// "bfloat16", "string", "complex64", "int4", the float8 kinds...), for messages; "unknown"
// for a code ONNX does not define.
const char* onnx_type_name(int64_t onnx_code);

// IEEE binary16 <-> float32: exact widening; narrowing rounds to nearest even, overflow to
// +-inf, NaN stays NaN (its payload's top bits kept, quiet).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

}  // namespace onnxc
