// ir/dtype.h — element types of the graph IR.
//
// Codes are ONNX TensorProto.DataType codes so that the importer, the weights file and
// the generated C (runtime/onnxc_runtime.h uses the same numbers) agree without tables.
// Compute is float32; the integer types and bool exist for shape tensors, indices and
// data movement. float16/bfloat16/string are not supported (the importer rejects them).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxc {

enum class DType : int {
  Undefined = 0, F32 = 1, U8 = 2, I8 = 3, U16 = 4, I16 = 5, I32 = 6, I64 = 7,
  Bool = 9, F64 = 11, U32 = 12, U64 = 13,
};

size_t dtype_size(DType t);          // 0 for Undefined
const char* dtype_name(DType t);     // "f32", "i64", ...
const char* dtype_ctype(DType t);    // "float", "int64_t", "uint8_t" (bool is uint8_t)
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);          // signed or unsigned integer (not bool)
bool dtype_supported(int onnx_code); // one of the codes above, except Undefined

}  // namespace onnxc
