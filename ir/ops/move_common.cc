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

void emit_copy_all(CEmit& e, const std::string& dst, const std::string& src, int64_t numel, DType t) {
  if (numel == 0) return;
  e("memcpy({}, {}, {} * sizeof({}));", dst, src, numel, dtype_ctype(t));
}

// "5 + i0 * 20 - i1 * 3": the element offset of a view at loop counters i0..i{k-1}.
static std::string offset_expr(int64_t off, const Shape& st) {
  std::string s = off ? c_int(off) : "";
  for (size_t d = 0; d < st.size(); ++d) {
    if (st[d] == 0) continue;
    int64_t a = st[d] < 0 ? -st[d] : st[d];
    std::string term = fmt::format("i{}{}", d, a == 1 ? "" : " * " + c_int(a));
    if (s.empty()) s = st[d] < 0 ? "-" + term : term;
    else s += (st[d] < 0 ? " - " : " + ") + term;
  }
  return s;
}

void emit_strided_copy(CEmit& e, const std::string& dst, const StridedView& dv, const std::string& src,
                       const StridedView& sv, const Shape& dims, DType t) {
  ONNXC_ASSERT(dv.stride.size() == dims.size() && sv.stride.size() == dims.size(), "strided copy rank mismatch");
  int64_t total = numel(dims);
  if (total == 0) return;
  // Drop size-1 dimensions and merge neighbours that are contiguous in both views.
  Shape n, ds, ss;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!n.empty() && ds.back() == dv.stride[d] * dims[d] && ss.back() == sv.stride[d] * dims[d]) {
      n.back() *= dims[d];
      ds.back() = dv.stride[d];
      ss.back() = sv.stride[d];
      continue;
    }
    n.push_back(dims[d]);
    ds.push_back(dv.stride[d]);
    ss.push_back(sv.stride[d]);
  }
  int64_t run = 0;  // elements of the contiguous innermost run, copied by memcpy
  if (!n.empty() && ds.back() == 1 && ss.back() == 1) {
    run = n.back();
    n.pop_back();
    ds.pop_back();
    ss.pop_back();
  }
  const char* ct = dtype_ctype(t);
  for (size_t d = 0; d < n.size(); ++d) {
    if (d == 0 && total >= (int64_t{1} << 16) && n[0] > 1) e("ONNXC_PRAGMA(omp parallel for)");
    else if (d + 1 == n.size() && run == 0) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i{0} = 0; i{0} < {1}; ++i{0}) {{", d, n[d]);
  }
  std::string di = offset_expr(dv.offset, ds), si = offset_expr(sv.offset, ss);
  if (run) {
    e("memcpy({}, {}, {} * sizeof({}));", di.empty() ? dst : dst + " + " + di, si.empty() ? src : src + " + " + si, run, ct);
  } else {
    e("{}[{}] = {}[{}];", dst, di.empty() ? "0" : di, src, si.empty() ? "0" : si);
  }
  for (size_t d = 0; d < n.size(); ++d) e("}}");
}

}  // namespace onnxc
