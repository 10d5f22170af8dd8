// ir/tensor.h — shapes and dense tensors of the IR.
//
// A Tensor owns its bytes (C order, native little-endian). Reference evaluation and
// constant folding read and write elements either through typed pointers (data<T>())
// or through the dtype-generic get/set accessors, which go through double (exact for
// every float32 and every integer below 2^53) or int64 (get_i64/set_i64, exact for
// all int64 values; used for shape math and indices).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace onnxc {

using Shape = std::vector<int64_t>;

// Most dimensions a tensor may have (as numpy's .npy files). Loops and the reference
// evaluator nest once per dimension, so the importer and shape inference refuse more.
constexpr size_t kMaxRank = 32;

// Number of elements; throws CompileError(Invalid) on negative dims or when the product of
// the nonzero dims passes 2^62 (an empty tensor included: its strides must fit too).
int64_t numel(const Shape& s);
// Bytes of a tensor of shape s and element type t: numel(s) * dtype_size(t), checked; throws
// CompileError(Invalid) when it does not fit in 63 bits. Every allocation size comes from here.
uint64_t nbytes_of(const Shape& s, DType t);
// a + b for byte counts, or CompileError(Invalid) naming `what` when the sum passes 2^63.
uint64_t add_bytes(uint64_t a, uint64_t b, const std::string& what);
std::string shape_str(const Shape& s);  // "[1,3,224,224]"
Shape strides_of(const Shape& s);       // C-order element strides
// ONNX multidirectional (numpy) broadcasting; returns false when not broadcastable.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out);
// Normalises a possibly negative axis against rank; returns false when out of range.
bool normalize_axis(int64_t& axis, int64_t rank);

struct Tensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<unsigned char> bytes;

  Tensor() = default;
  Tensor(DType t, Shape s);  // zero-filled; sizes checked (nbytes_of), out of memory is a CompileError
  int64_t numel() const { return onnxc::numel(shape); }
  size_t nbytes() const { return bytes.size(); }
  template <class T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
  double get(int64_t i) const;
  void set(int64_t i, double v);
  int64_t get_i64(int64_t i) const;
  void set_i64(int64_t i, int64_t v);
  std::vector<int64_t> to_i64() const;  // all elements as int64 (any integer or float dtype)
  std::vector<double> to_f64() const;
  static Tensor from_i64(const std::vector<int64_t>& v, DType t = DType::I64, Shape s = {-1});
  static Tensor from_f32(const std::vector<float>& v, Shape s);
};

}  // namespace onnxc
