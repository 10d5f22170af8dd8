// ir/ops/move_common.cc — helpers of the data-movement ops (see move_common.h).
#include "ir/ops/move_common.h"

#include <fmt/format.h>

#include <cstring>

namespace onnxc {

int64_t move_axis(const Node& n, int64_t axis, int64_t rank, const char* what) {
  int64_t a = axis;
  if (!normalize_axis(a, rank))
    n.invalid(fmt::format("{} {} is out of range [{}, {}] for rank {}", what, axis, -rank, rank - 1, rank));
  return a;
}

std::vector<int64_t> static_ints(const Node& n, size_t i, const char* what) {
  const Tensor& t = static_tensor(n, i, what);
  if (t.dtype != DType::I64 && t.dtype != DType::I32)
    n.invalid(fmt::format("input {} ({}) must be int64 or int32, got {}", i, what, dtype_name(t.dtype)));
  if (t.shape.size() > 1) n.invalid(fmt::format("input {} ({}) must be a 1-D tensor, got shape {}", i, what, shape_str(t.shape)));
  return t.to_i64();
}

const Value& need_input(const Node& n, size_t i, const char* what) {
  Value* v = n.in(i);
  if (!v) n.invalid(fmt::format("input {} ({}) is required", i, what));
  if (v->dtype == DType::Undefined) n.invalid(fmt::format("input {} ({}) has no dtype", i, what));
  return *v;
}

Shape unravel(int64_t i, const Shape& s) {
  Shape idx(s.size(), 0);
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t ravel(const Shape& idx, const Shape& s) {
  int64_t r = 0;
  for (size_t d = 0; d < s.size(); ++d) r = r * s[d] + idx[d];
  return r;
}

void copy_elem(Tensor& dst, int64_t di, const Tensor& src, int64_t si) {
  ONNXC_ASSERT(dst.dtype == src.dtype, "copy_elem between different dtypes");
  size_t es = dtype_size(dst.dtype);
  std::memcpy(dst.bytes.data() + static_cast<size_t>(di) * es, src.bytes.data() + static_cast<size_t>(si) * es, es);
}

void copy_all(Tensor& dst, const Tensor& src) {
  ONNXC_ASSERT(dst.dtype == src.dtype && dst.nbytes() == src.nbytes(), "copy_all between different tensors");
  if (src.nbytes()) std::memcpy(dst.bytes.data(), src.bytes.data(), src.nbytes());
}

}  // namespace onnxc
