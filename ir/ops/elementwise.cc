// ir/ops/elementwise.cc — broadcast helpers (see elementwise.h).
//
// The C loop nest: when every input has the output's shape it is one flat loop; otherwise
// one loop per output dimension, each input indexed with its own strides (0 on broadcast
// dimensions). Outer loops over large tensors are OpenMP-parallel.
#include "ir/ops/elementwise.h"

#include <fmt/format.h>

#include <cctype>

namespace onnxc {

Shape broadcast_inputs(const Node& n) {
  Shape out;
  bool first = true;
  std::string shapes;
  for (Value* v : n.inputs) {
    if (!v) continue;
    shapes += (shapes.empty() ? "" : " and ") + shape_str(v->shape);
    if (first) { out = v->shape; first = false; continue; }
    if (!broadcast_shapes(out, v->shape, &out)) n.invalid("input shapes " + shapes + " cannot be broadcast together");
  }
  return out;
}

bool elementwise_nchwc_ok(const Node& n) {
  const Value* o = n.out(0);
  return o && o->dtype == DType::F32 && o->shape.size() >= 3 && o->shape.size() <= 5 && n.outputs.size() == 1;
}

std::string subst_x(const std::string& expr, const std::string& arg) {
  std::string r;
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] == 'x' && (i == 0 || !word(expr[i - 1])) && (i + 1 == expr.size() || !word(expr[i + 1]))) r += "(" + arg + ")";
    else r += expr[i];
  }
  return r;
}

// Strides of `in` aligned right against `out`, 0 on broadcast dimensions.
static Shape aligned_strides(const Shape& out, const Shape& in) {
  Shape st(out.size(), 0), own = strides_of(in);
  size_t off = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) st[off + d] = in[d] == 1 ? 0 : own[d];
  return st;
}

std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in) {
  int64_t n = numel(out);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  Shape st = aligned_strides(out, in);
  Shape pos(out.size(), 0);
  int64_t cur = 0;
  for (int64_t i = 0; i < n; ++i) {
    idx[static_cast<size_t>(i)] = cur;
    for (size_t d = out.size(); d-- > 0;) {
      ++pos[d];
      cur += st[d];
      if (pos[d] < out[d]) break;
      cur -= st[d] * pos[d];
      pos[d] = 0;
    }
  }
  return idx;
}

// `omp simd` on a loop that calls libm (expf, tanhf, powf...) cannot be honoured without
// fast-math, and clang warns "loop not vectorized" at -O3: leave the hint off there.
static bool vectorizable(const std::string& body) {
  for (const char* f : {"expf(", "logf(", "tanhf(", "erff(", "powf(", "exp(", "log(", "tanh(", "erf(", "pow(", "fmod"})
    if (body.find(f) != std::string::npos) return false;
  return true;
}

void emit_broadcast(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                    const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt) {
  int64_t n = numel(out);
  bool flat = true;
  for (auto& s : ins) flat = flat && numel(s) == n;
  if (flat || out.empty()) {
    std::vector<std::string> idx(ins.size());
    for (size_t k = 0; k < ins.size(); ++k) idx[k] = numel(ins[k]) == 1 && n != 1 ? "0" : "i";
    std::string body = stmt(idx, "i");
    bool simd = vectorizable(body);
    if (n >= (1 << 16)) e("ONNXC_PRAGMA(omp parallel for{})", simd ? " simd" : "");
    else if (simd) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) {{", n);
    e("{}", body);
    e("}}");
    return;
  }
  // Merge adjacent output dimensions where every input either spans both or broadcasts both.
  std::vector<Shape> st;
  for (auto& s : ins) st.push_back(aligned_strides(out, s));
  Shape dims;
  std::vector<Shape> mst(ins.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < ins.size(); ++k) {
      int64_t prev = mst[k].back();
      merge = (prev == 0 && st[k][d] == 0) || (prev != 0 && prev == st[k][d] * out[d]);
    }
    if (merge) {
      dims.back() *= out[d];
      for (size_t k = 0; k < ins.size(); ++k) mst[k].back() = st[k][d];
    } else {
      dims.push_back(out[d]);
      for (size_t k = 0; k < ins.size(); ++k) mst[k].push_back(st[k][d]);
    }
  }
  std::vector<std::string> idx(ins.size());
  std::string oi;
  Shape ost = strides_of(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    for (size_t k = 0; k < ins.size(); ++k)
      if (mst[k][d]) idx[k] += fmt::format("{}i{}{}", idx[k].empty() ? "" : " + ", d, mst[k][d] == 1 ? "" : fmt::format(" * {}", mst[k][d]));
    oi += fmt::format("{}i{}{}", oi.empty() ? "" : " + ", d, ost[d] == 1 ? "" : fmt::format(" * {}", ost[d]));
  }
  for (auto& s : idx)
    if (s.empty()) s = "0";
  std::string body = stmt(idx, oi.empty() ? "0" : oi);
  bool simd = vectorizable(body);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d == 0 && n >= (1 << 16) && dims[0] > 1) e("ONNXC_PRAGMA(omp parallel for)");
    if (d + 1 == dims.size() && simd) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i{0} = 0; i{0} < {1}; ++i{0}) {{", d, dims[d]);
  }
  e("{}", body);
  for (size_t d = 0; d < dims.size(); ++d) e("}}");
}

}  // namespace onnxc

namespace onnxc {

std::string c_elem_literal(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::F32: return c_float(t.get(i));
    case DType::F64: return c_double(t.get(i));
    case DType::U64: return std::to_string(static_cast<uint64_t>(t.get_i64(i))) + "ULL";
    default: return c_int(t.get_i64(i));
  }
}

// Limits of an integer dtype as C literals, and as the float type `from` (rounded; max
// rounds up to a power of two for the wide types, which is what the comparison needs).
template <class D>
static void int_limits(DType from, std::string* lo, std::string* hi, std::string* flo, std::string* fhi) {
  using L = std::numeric_limits<D>;
  *lo = c_int(static_cast<int64_t>(L::lowest()));
  *hi = std::is_same_v<D, uint64_t> ? "18446744073709551615ULL" : c_int(static_cast<int64_t>(L::max()));
  if (from == DType::F32) {
    *flo = c_float(static_cast<float>(L::lowest()));
    *fhi = c_float(static_cast<float>(L::max()));
  } else {
    *flo = c_double(static_cast<double>(L::lowest()));
    *fhi = c_double(static_cast<double>(L::max()));
  }
}

std::string c_convert(DType from, DType to, const std::string& x) {
  std::string ct = dtype_ctype(to);
  if (to == DType::Bool) return from == DType::Bool ? x : fmt::format("({})({} != 0)", ct, x);
  if (from == to) return x;
  if (!dtype_is_float(from) || dtype_is_float(to)) return fmt::format("({}){}", ct, x);
  std::string lo, hi, flo, fhi;
  visit_dtype(to, [&](auto v) {
    using D = decltype(v);
    if constexpr (std::is_integral_v<D>) int_limits<D>(from, &lo, &hi, &flo, &fhi);
  });
  return fmt::format("({})({} != {} ? 0 : {} <= {} ? {} : {} >= {} ? {} : ({}){})", ct, x, x, x, flo, lo, x, fhi, hi, ct, x);
}

}  // namespace onnxc
