// ir/tensor.cc — dtype table, shape helpers and Tensor element access (see tensor.h).
#include "ir/tensor.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include "ir/error.h"

namespace onnxc {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::F64: case DType::I64: case DType::U64: return 8;
    case DType::U8: case DType::I8: case DType::Bool: return 1;
    case DType::U16: case DType::I16: case DType::F16: return 2;
    case DType::Undefined: return 0;
  }
  return 0;
}

const char* onnx_type_name(int64_t c) {
  switch (c) {
    case 0: return "undefined";
    case 8: return "string";
    case 10: return "float16";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    // Types newer than the onnx headers onnxc builds with (opsets 19-28), by code.
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    case 25: return "uint2";
    case 26: return "int2";
    case 27: return "float6e2m3";
    case 28: return "float6e3m2";
    default: break;
  }
  return c > 0 && c < 1000 && dtype_supported(static_cast<int>(c)) ? dtype_name(static_cast<DType>(c)) : "unknown";
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32"; case DType::F64: return "f64";
    case DType::I8: return "i8"; case DType::I16: return "i16"; case DType::I32: return "i32"; case DType::I64: return "i64";
    case DType::U8: return "u8"; case DType::U16: return "u16"; case DType::U32: return "u32"; case DType::U64: return "u64";
    case DType::Bool: return "bool"; case DType::F16: return "f16"; case DType::Undefined: return "undefined";
  }
  return "?";
}

const char* dtype_ctype(DType t) {
  switch (t) {
    case DType::F32: return "float"; case DType::F64: return "double";
    case DType::I8: return "int8_t"; case DType::I16: return "int16_t"; case DType::I32: return "int32_t"; case DType::I64: return "int64_t";
    case DType::U8: case DType::Bool: return "uint8_t";
    case DType::U16: case DType::F16: return "uint16_t"; case DType::U32: return "uint32_t"; case DType::U64: return "uint64_t";
    case DType::Undefined: break;
  }
  ONNXC_ASSERT(false, "ctype of undefined dtype");
}

bool dtype_is_float(DType t) { return t == DType::F32 || t == DType::F64; }
bool dtype_is_int(DType t) { return !dtype_is_float(t) && t != DType::Bool && t != DType::Undefined; }
bool dtype_is_signed_int(DType t) { return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64; }

bool dtype_supported(int c) {
  switch (c) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 9: case 11: case 12: case 13: return true;
    default: return false;
  }
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0);  // inf, or a quiet NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal half: man * 2^-24, normal as a float
    int e = -1;
    uint32_t m = man;
    do { m <<= 1; ++e; } while (!(m & 0x400u));
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));  // NaN, quiet
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // rounds to beyond 65504: inf
  if (ax < 0x38800000u) {                          // below 2^-14: a subnormal half or 0
    if (ax < 0x33000000u) return sign;             // below 2^-25: rounds to 0 (2^-25 itself is a tie to even 0)
    const uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24: the half's unit 2^-24 against the float's mantissa
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = ax - 0x38000000u;  // rebias 127 -> 15 (exponent field minus 112)
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // a carry into the exponent is right
  return static_cast<uint16_t>(sign | r);
}

int64_t numel(const Shape& s) {
  // The product of the nonzero dimensions is bounded too, so that an empty tensor such as
  // [0, 2^40, 2^40] is refused like its nonempty siblings: strides and batch offsets of a
  // tensor are products of its dimensions, and each of them must fit in 63 bits with room
  // for one more factor of two.
  constexpr int64_t kMax = int64_t{1} << 62;
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : s) {
    if (d < 0) fail_invalid("negative dimension in shape " + shape_str(s));
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > kMax / d)
      fail_invalid("shape " + shape_str(s) +
                   (std::count(s.begin(), s.end(), 0) ? " is empty, but its nonzero dimensions multiply past 2^62"
                                                      : " has too many elements (more than 2^62)"));
    n *= d;
  }
  return empty ? 0 : n;
}

uint64_t nbytes_of(const Shape& s, DType t) {
  const uint64_t n = static_cast<uint64_t>(numel(s)), es = dtype_size(t);
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (es && n > kMax / es)
    fail_invalid(std::string("a ") + dtype_name(t) + " tensor of shape " + shape_str(s) + " has " + std::to_string(n) +
                 " elements, more than 2^63 bytes");
  return n * es;
}

uint64_t add_bytes(uint64_t a, uint64_t b, const std::string& what) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (a > kMax || b > kMax - a) fail_invalid(what + " comes to more than 2^63 bytes");
  return a + b;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) {
    if (s[i] != 0 && st[i] > std::numeric_limits<int64_t>::max() / s[i]) {
      // Only an empty tensor (a zero dimension elsewhere) gets here without overflowing
      // numel; nothing of it is ever addressed, so its remaining strides are 0.
      numel(s);
      for (size_t j = 0; j < i; ++j) st[j] = 0;
      break;
    }
    st[i - 1] = st[i] * s[i];
  }
  return st;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  size_t r = std::max(a.size(), b.size());
  Shape o(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) o[i] = da;
    else if (da == 1) o[i] = db;
    else return false;
  }
  *out = o;
  return true;
}

bool normalize_axis(int64_t& axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  return true;
}

Tensor::Tensor(DType t, Shape s) : dtype(t), shape(std::move(s)) {
  const uint64_t n = nbytes_of(shape, t);
  if (n > std::numeric_limits<size_t>::max()) fail_unsupported("a tensor of shape " + shape_str(shape) + " does not fit in memory");
  try {
    bytes.assign(static_cast<size_t>(n), 0);
  } catch (const std::bad_alloc&) {
    fail_unsupported("out of memory allocating " + std::to_string(n) + " bytes for a " + dtype_name(t) + " tensor of shape " +
                     shape_str(shape));
  } catch (const std::length_error&) {
    fail_unsupported("cannot allocate " + std::to_string(n) + " bytes for a " + dtype_name(t) + " tensor of shape " + shape_str(shape));
  }
}

template <class T> static T load(const unsigned char* p) { T v; std::memcpy(&v, p, sizeof v); return v; }
template <class T> static void store(unsigned char* p, T v) { std::memcpy(p, &v, sizeof v); }

double Tensor::get(int64_t i) const {
  const unsigned char* p = bytes.data() + i * dtype_size(dtype);
  switch (dtype) {
    case DType::F32: return load<float>(p); case DType::F64: return load<double>(p);
    case DType::I8: return load<int8_t>(p); case DType::I16: return load<int16_t>(p);
    case DType::I32: return load<int32_t>(p); case DType::I64: return static_cast<double>(load<int64_t>(p));
    case DType::U8: case DType::Bool: return load<uint8_t>(p); case DType::U16: return load<uint16_t>(p);
    case DType::U32: return load<uint32_t>(p); case DType::U64: return static_cast<double>(load<uint64_t>(p));
    case DType::F16: return half_to_float(load<uint16_t>(p));
    case DType::Undefined: break;
  }
  ONNXC_ASSERT(false, "get on undefined dtype");
}

// Float → integer conversion saturates instead of invoking undefined behaviour.
template <class T> static T sat_cast(double v) {
  if (v != v) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

void Tensor::set(int64_t i, double v) {
  unsigned char* p = bytes.data() + i * dtype_size(dtype);
  switch (dtype) {
    case DType::F32: store<float>(p, static_cast<float>(v)); return;
    case DType::F64: store<double>(p, v); return;
    case DType::I8: store(p, sat_cast<int8_t>(v)); return;
    case DType::I16: store(p, sat_cast<int16_t>(v)); return;
    case DType::I32: store(p, sat_cast<int32_t>(v)); return;
    case DType::I64: store(p, sat_cast<int64_t>(v)); return;
    case DType::U8: store(p, sat_cast<uint8_t>(v)); return;
    case DType::Bool: store<uint8_t>(p, v != 0); return;
    case DType::U16: store(p, sat_cast<uint16_t>(v)); return;
    case DType::U32: store(p, sat_cast<uint32_t>(v)); return;
    case DType::U64: store(p, sat_cast<uint64_t>(v)); return;
    case DType::F16: store<uint16_t>(p, float_to_half(static_cast<float>(v))); return;  // double rounding, as float16(float32(v))
    case DType::Undefined: break;
  }
  ONNXC_ASSERT(false, "set on undefined dtype");
}

int64_t Tensor::get_i64(int64_t i) const {
  const unsigned char* p = bytes.data() + i * dtype_size(dtype);
  switch (dtype) {
    case DType::I64: return load<int64_t>(p);
    case DType::U64: return static_cast<int64_t>(load<uint64_t>(p));
    case DType::F32: case DType::F64: case DType::F16: return sat_cast<int64_t>(get(i));
    default: return static_cast<int64_t>(get(i));
  }
}

void Tensor::set_i64(int64_t i, int64_t v) {
  unsigned char* p = bytes.data() + i * dtype_size(dtype);
  if (dtype == DType::I64) store<int64_t>(p, v);
  else if (dtype == DType::U64) store<uint64_t>(p, static_cast<uint64_t>(v));
  else set(i, static_cast<double>(v));
}

std::vector<int64_t> Tensor::to_i64() const {
  std::vector<int64_t> r(static_cast<size_t>(numel()));
  for (size_t i = 0; i < r.size(); ++i) r[i] = get_i64(static_cast<int64_t>(i));
  return r;
}

std::vector<double> Tensor::to_f64() const {
  std::vector<double> r(static_cast<size_t>(numel()));
  for (size_t i = 0; i < r.size(); ++i) r[i] = get(static_cast<int64_t>(i));
  return r;
}

Tensor Tensor::from_i64(const std::vector<int64_t>& v, DType t, Shape s) {
  if (s.size() == 1 && s[0] == -1) s = {static_cast<int64_t>(v.size())};
  Tensor r(t, s);
  for (size_t i = 0; i < v.size(); ++i) r.set_i64(static_cast<int64_t>(i), v[i]);
  return r;
}

Tensor Tensor::from_f32(const std::vector<float>& v, Shape s) {
  Tensor r(DType::F32, std::move(s));
  ONNXC_ASSERT(static_cast<size_t>(r.numel()) == v.size(), "from_f32 size");
  if (!v.empty()) std::memcpy(r.bytes.data(), v.data(), v.size() * sizeof(float));  // data() may be null when empty
  return r;
}

}  // namespace onnxc
