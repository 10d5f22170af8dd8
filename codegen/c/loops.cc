// codegen/c/loops.cc — the loop helpers of the C kernels (see loops.h).
#include "codegen/c/loops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <type_traits>

#include "ir/ops/elementwise.h"

namespace onnxc {

// "2 * ow - 1", "ow + 3", "ow", "5" (var empty → constant).
std::string affine(const std::string& var, int64_t coef, int64_t off) {
  std::string s;
  if (!var.empty() && coef != 0) s = coef == 1 ? var : fmt::format("{} * {}", coef, var);
  if (s.empty()) return std::to_string(off);
  if (off > 0) s += fmt::format(" + {}", off);
  if (off < 0) s += fmt::format(" - {}", -off);
  return s;
}

std::string index_term(const std::string& var, int64_t stride) {
  if (stride == 0) return "";
  return stride == 1 ? var : fmt::format("{} * {}", var, stride);
}

std::string index_sum(const std::vector<std::string>& parts) {
  std::string s;
  for (auto& p : parts)
    if (!p.empty() && p != "0") s += (s.empty() ? "" : " + ") + p;
  return s.empty() ? "0" : s;
}

// `omp simd` for a loop of `trip` iterations; none for very short loops (clang warns that
// it cannot vectorize them).
void simd(CEmit& e, int64_t trip, const std::string& clauses) {
  if (trip >= 4) e("ONNXC_PRAGMA(omp simd{})", clauses.empty() ? "" : " " + clauses);
}

// Opens `for (int64_t v = 0; v < end; v += step) {`, or, when that would run once, a
// block declaring `const int64_t v = 0;` (clang 14 fails to vectorize simd loops nested in
// some single-trip loops). One `}` closes either.
void open_loop(CEmit& e, const std::string& v, int64_t end, int64_t step) {
  if (end > 0 && end <= step) {
    e.open_scope(v, 0);
  } else if (step == 1) {
    e("for (int64_t {0} = 0; {0} < {1}; ++{0}) {{", v, end);
  } else {
    e("for (int64_t {0} = 0; {0} < {1}; {0} += {2}) {{", v, end, step);
  }
}

// The task loops of a kernel, (variable, end, step) outermost first: the single-trip ones
// become constants, then the others open, the first carrying `omp parallel for` that
// collapses them all when `par`. One `}` per loop closes them.
void open_tasks(CEmit& e, const std::vector<NestLoop>& loops, bool par) {
  auto once = [](const NestLoop& l) { return l.end > 0 && l.end <= l.step; };  // one iteration: a block
  int64_t real = 0;
  for (const NestLoop& l : loops) real += l.end > l.step;
  for (const NestLoop& l : loops)
    if (once(l)) open_loop(e, l.var, l.end, l.step);
  if (par && real > 0) {
    ParallelNest nest;
    nest.schedule_static = true;
    for (const NestLoop& l : loops)
      if (!once(l)) nest.loops.push_back({l.var, l.end, l.step});
    e.open_nest(nest);
    return;
  }
  for (const NestLoop& l : loops)
    if (!once(l)) open_loop(e, l.var, l.end, l.step);
}

void open_collapsed(CEmit& e, const std::vector<NestLoop>& loops, bool par) {
  if (par) {
    e.open_nest({.loops = loops, .schedule_static = true});
    return;
  }
  for (const NestLoop& l : loops) e("{} {{", l.header());
}

// `omp simd` on a loop that calls libm (powf...) cannot be honoured without fast-math, and
// clang warns "loop not vectorized" at -O3: leave the hint off there. Calls of the inline
// helpers of codegen/c/vmath.h (onnxc_expf...) vectorize: only whole-word libm names count;
// the runtime's float16 widening (onnxc_f16_to_f32, a loop for subnormals) does not.
static bool vectorizable(const std::string& body) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const char* f : {"expf(", "logf(", "tanhf(", "erff(", "powf(", "exp(", "log(", "tanh(", "erf(", "pow(", "fmod", "sinf(", "cosf(",
                        "tanf(", "sinhf(", "coshf(", "log1pf(", "onnxc_f16_to_f32("})
    for (size_t p = body.find(f); p != std::string::npos; p = body.find(f, p + 1))
      if (p == 0 || !word(body[p - 1])) return false;
  return true;
}

void emit_broadcast_simd(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                         const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt,
                         const std::function<bool(const std::string& body, int64_t trip)>& simd_ok) {
  int64_t n = numel(out);
  bool flat = true;
  for (auto& s : ins) flat = flat && numel(s) == n;
  if (flat || out.empty()) {
    std::vector<std::string> idx(ins.size());
    for (size_t k = 0; k < ins.size(); ++k) idx[k] = numel(ins[k]) == 1 && n != 1 ? "0" : "i";
    std::string body = stmt(idx, "i");
    bool simd = simd_ok(body, n);
    if (e.parallel(static_cast<double>(n))) {
      e.open_nest({.loops = {{"i", n}}, .simd = simd});
    } else {
      if (simd) e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t i = 0; i < {}; ++i) {{", n);
    }
    e("{}", body);
    e("}}");
    return;
  }
  // Merge adjacent output dimensions where every input either spans both or broadcasts both.
  std::vector<Shape> st;
  for (auto& s : ins) st.push_back(broadcast_strides(out, s));
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
  for (size_t d = 0; d < dims.size(); ++d) {
    // One pragma per loop: a single loop that is both parallel and innermost gets the combined form.
    const bool par = d == 0 && e.parallel(static_cast<double>(n)) && dims[0] > 1,
               inner = d + 1 == dims.size() && simd_ok(body, dims[d]);
    if (par) {
      e.open_nest({.loops = {{fmt::format("i{}", d), dims[d]}}, .simd = inner});
      continue;
    }
    if (inner) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i{0} = 0; i{0} < {1}; ++i{0}) {{", d, dims[d]);
  }
  e("{}", body);
  for (size_t d = 0; d < dims.size(); ++d) e("}}");
}

void emit_broadcast(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                    const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt) {
  emit_broadcast_simd(e, out, ins, stmt, [](const std::string& body, int64_t) { return vectorizable(body); });
}

void emit_table(CEmit& e, const std::string& decl, const std::string& dims, const std::vector<std::string>& items) {
  e.local("static const {}{} = {{", decl, dims);
  std::string line;
  for (size_t i = 0; i < items.size(); ++i) {
    line += items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() > 90 || i + 1 == items.size()) {
      e("{}", line);
      line.clear();
    } else {
      line += " ";
    }
  }
  e("}};");
}

void emit_table(CEmit& e, const std::string& decl, const std::vector<int64_t>& values) {
  std::vector<std::string> items;
  items.reserve(values.size());
  for (int64_t v : values) items.push_back(std::to_string(v));
  emit_table(e, decl, fmt::format("[{}]", values.size()), items);
}

void emit_max_reduce(CEmit& e, const std::string& acc, const std::string& init, const std::string& x, int64_t n, DType t) {
  const char* ct = dtype_ctype(t);
  int64_t lanes = 4;  // a power of two (the fold halves it)
  while (lanes * 2 <= e.target.vector_bits / 8 / static_cast<int64_t>(dtype_size(t))) lanes *= 2;
  e("{} {} = {};", ct, acc, init);
  const int64_t full = n < 2 * lanes ? 0 : n / lanes * lanes;  // elements covered by the lane loop
  if (full > 0) {
    e("{{");
    e("{} {}_l[{}];", ct, acc, lanes);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {}; ++l) {}_l[l] = {};", lanes, acc, init);
    e("for (int64_t i = 0; i < {}; i += {}) {{", full, lanes);
    e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t l = 0; l < {0}; ++l) {1}_l[l] = {2}[i + l] > {1}_l[l] ? {2}[i + l] : {1}_l[l];", lanes, acc, x);
    e("}}");
    // The tail into the first lanes, then the lanes folded in halves (a tree, not a serial
    // chain of `lanes` dependent selects).
    if (full < n) e("for (int64_t l = 0; l < {0}; ++l) {1}_l[l] = {2}[{3} + l] > {1}_l[l] ? {2}[{3} + l] : {1}_l[l];", n - full, acc, x, full);
    for (int64_t h = lanes / 2; h >= 1; h /= 2)
      e("for (int64_t l = 0; l < {0}; ++l) {1}_l[l] = {1}_l[l + {0}] > {1}_l[l] ? {1}_l[l + {0}] : {1}_l[l];", h, acc);
    e("{0} = {0}_l[0] > {0} ? {0}_l[0] : {0};", acc);
    e("}}");
  } else if (n > 0) {
    e("for (int64_t i = 0; i < {0}; ++i) {1} = {2}[i] > {1} ? {2}[i] : {1};", n, acc, x);
  }
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

namespace {

// A strided copy as a loop nest: the loops' trip counts and strides in both views once size-1
// dimensions are dropped and contiguous neighbours merged, and the innermost contiguous run
// (0 when there is none) that one memcpy copies.
struct CopyNest {
  Shape n, ds, ss;
  int64_t run = 0;
  bool parallel = false;  // its outermost loop is worth splitting across the threads
  bool first_whole = false;  // its first loop is the view's dims[0], merged with nothing
};

CopyNest copy_nest(CEmit& e, const StridedView& dv, const StridedView& sv, const Shape& dims) {
  ONNXC_ASSERT(dv.stride.size() == dims.size() && sv.stride.size() == dims.size(), "strided copy rank mismatch");
  CopyNest c;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!c.n.empty() && c.ds.back() == dv.stride[d] * dims[d] && c.ss.back() == sv.stride[d] * dims[d]) {
      c.n.back() *= dims[d];
      c.ds.back() = dv.stride[d];
      c.ss.back() = sv.stride[d];
      continue;
    }
    c.n.push_back(dims[d]);
    c.ds.push_back(dv.stride[d]);
    c.ss.push_back(sv.stride[d]);
  }
  if (!c.n.empty() && c.ds.back() == 1 && c.ss.back() == 1) {
    c.run = c.n.back();
    c.n.pop_back();
    c.ds.pop_back();
    c.ss.pop_back();
  }
  c.first_whole = !dims.empty() && dims[0] > 1 && !c.n.empty() && c.n[0] == dims[0];
  c.parallel = !c.n.empty() && e.parallel(static_cast<double>(numel(dims)));
  return c;
}

// The dim of a copy nest to tile with the innermost one, or -1: when the innermost loop writes
// contiguously but reads with a stride and an outer loop reads contiguously (a transpose),
// both go in square tiles of one cache line per side, so that every line read or written is
// used whole while it is in L1 (walking the output in order would read a new line per element).
int tiled_dim(const CopyNest& c) {
  if (c.run || c.n.size() < 2 || c.ds.back() != 1 || c.ss.back() == 1 || c.n.back() < 8) return -1;
  for (size_t d = 0; d + 1 < c.n.size(); ++d)
    if (c.ss[d] == 1 && c.n[d] >= 8) return static_cast<int>(d);
  return -1;
}

// The loop nest of one copy. in_region: inside an `omp parallel` region shared with other
// copies, the outermost loop is `omp for nowait` (disjoint destinations need no barrier
// between the copies; the region's end is one) and a lone memcpy `omp single nowait`.
// A transpose-like nest (tiled_dim) loops over tiles of T x T elements, T filling a line.
void emit_copy_nest(CEmit& e, const CopyNest& c, const std::string& dst, const StridedView& dv, const std::string& src,
                    const StridedView& sv, DType t, bool in_region, const std::string& rows) {
  if (in_region && c.n.empty()) e.single_nowait();
  if (!in_region && !c.parallel) e.serial();  // a copy changes no local: one thread may make it for all
  const int tp = tiled_dim(c);
  const size_t L = c.n.size() - 1;
  const int64_t T = std::max<int64_t>(8, 64 / std::max<int64_t>(1, static_cast<int64_t>(dtype_size(t))));
  for (size_t d = 0; d < c.n.size(); ++d) {
    const bool tiled = tp >= 0 && (d == static_cast<size_t>(tp) || d == L);
    const NestLoop loop = tiled ? NestLoop{fmt::format("i{}b", d), c.n[d], T} : NestLoop{fmt::format("i{}", d), c.n[d]};
    // A run-time size: the entries of dims[0] past the run's rows are skipped.
    const bool stop = d == 0 && !rows.empty() && c.first_whole && tp < 0;
    if (d == 0 && (in_region || c.parallel)) {
      e.open_nest({.loops = {loop}, .form = in_region ? NestForm::SharedNowait : NestForm::Fork});
      if (stop) e("if (i0 >= {}) continue;", rows);
      continue;
    }
    if (d + 1 == c.n.size() && c.run == 0 && tp < 0) e("ONNXC_PRAGMA(omp simd)");
    e("{} {{", loop.header());
    if (stop) e("if (i0 >= {}) continue;", rows);
  }
  if (tp >= 0) {
    for (size_t d : {static_cast<size_t>(tp), L}) {
      if (d == L) simd(e, T);
      if (c.n[d] % T == 0) e("for (int64_t i{0} = i{0}b; i{0} < i{0}b + {1}; ++i{0}) {{", d, T);
      else e("for (int64_t i{0} = i{0}b; i{0} < (i{0}b + {1} < {2} ? i{0}b + {1} : {2}); ++i{0}) {{", d, T, c.n[d]);
    }
  }
  const char* ct = dtype_ctype(t);
  std::string di = offset_expr(dv.offset, c.ds), si = offset_expr(sv.offset, c.ss);
  if (c.run) {
    e("memcpy({}, {}, {} * sizeof({}));", di.empty() ? dst : dst + " + " + di, si.empty() ? src : src + " + " + si, c.run, ct);
  } else {
    e("{}[{}] = {}[{}];", dst, di.empty() ? "0" : di, src, si.empty() ? "0" : si);
  }
  for (size_t d = 0; d < c.n.size() + (tp >= 0 ? 2 : 0); ++d) e("}}");
}

}  // namespace

void emit_strided_copy(CEmit& e, const std::string& dst, const StridedView& dv, const std::string& src,
                       const StridedView& sv, const Shape& dims, DType t) {
  if (numel(dims) == 0) return;
  emit_copy_nest(e, copy_nest(e, dv, sv, dims), dst, dv, src, sv, t, false, "");
}

void emit_strided_copies(CEmit& e, const std::vector<StridedCopy>& copies) {
  std::vector<CopyNest> nests;
  std::vector<const StridedCopy*> live;
  int parallel = 0;
  for (const StridedCopy& c : copies) {
    if (numel(c.dims) == 0) continue;
    nests.push_back(copy_nest(e, c.dv, c.sv, c.dims));
    live.push_back(&c);
    parallel += nests.back().parallel;
  }
  const bool region = parallel >= 2;
  if (region) e.open_parallel_block();
  for (size_t k = 0; k < live.size(); ++k)
    emit_copy_nest(e, nests[k], live[k]->dst, live[k]->dv, live[k]->src, live[k]->sv, live[k]->t, region, live[k]->rows);
  if (region) e("}}");
}

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
  // float16 (uint16_t bits) through float32, with the runtime's conversions
  if (from == DType::F16 && to != DType::F16) return c_convert(DType::F32, to, "onnxc_f16_to_f32(" + x + ")");
  if (to == DType::F16 && from != DType::F16) return "onnxc_f32_to_f16(" + c_convert(from, DType::F32, x) + ")";
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
