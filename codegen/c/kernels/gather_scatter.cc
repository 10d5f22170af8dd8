// codegen/c/kernels/gather_scatter.cc — GatherElements, ScatterElements/Scatter, GatherND
// and ScatterND in C (ir/ops/gather_scatter.cc says what they mean). Plain layout, any
// dtype. Every index read is wrapped once and clamped to its dim (gather_scatter.h).
//  GatherElements   a loop nest over indices' shape (the outermost loop parallel when
//                   large); each element reads data at its own position but the axis.
//  ScatterElements  data copied to the output (memcpy), then the same nest, serial (the
//                   order of duplicate indices matters), combining each update.
//  GatherND         per (batch, tuple): the data offset from the m indices, then the slice
//                   copied (memcpy; one assignment when the slice is one element); parallel
//                   over the tuples when large.
//  ScatterND        data copied, then per tuple (serial) the slice combined element-wise.
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/loops.h"
#include "ir/ops/gather_scatter.h"

namespace onnxc {
namespace {

// `int64_t var = fixed index` from the index expression `src`, for a dim of `dim`.
void emit_index(CEmit& e, const std::string& var, const std::string& src, int64_t dim) {
  e("int64_t {} = (int64_t){};", var, src);
  e("if ({0} < 0) {0} += {1};", var, dim);
  e("{0} = {0} < 0 ? 0 : {0} > {1} ? {1} : {0};", var, dim - 1);
}

// The C expression of `e op= u` for the element dtype t (ScatterReduction).
std::string combine(ScatterReduction r, DType t, const std::string& a, const std::string& u) {
  bool is_bool = t == DType::Bool, is_int = dtype_is_int(t);
  const char* ct = dtype_ctype(t);
  switch (r) {
    case ScatterReduction::None: return u;
    case ScatterReduction::Add:
      if (is_bool) return fmt::format("(uint8_t)({} | {})", a, u);
      if (is_int) return fmt::format("({})((uint64_t){} + (uint64_t){})", ct, a, u);
      return fmt::format("{} + {}", a, u);
    case ScatterReduction::Mul:
      if (is_bool) return fmt::format("(uint8_t)({} & {})", a, u);
      if (is_int) return fmt::format("({})((uint64_t){} * (uint64_t){})", ct, a, u);
      return fmt::format("{} * {}", a, u);
    case ScatterReduction::Max: return fmt::format("{1} > {0} ? {1} : {0}", a, u);
    case ScatterReduction::Min: return fmt::format("{1} < {0} ? {1} : {0}", a, u);
  }
  return u;
}

void emit_elements(CEmit& e) {
  const ElementsGeom& g = elements_geom(e.node);
  bool scatter = e.node.op_type != "GatherElements";
  int64_t n = numel(g.idx);
  DType t = e.out_dtype(0);
  if (scatter) emit_copy_all(e, e.out(0), e.in(0), numel(g.data), t);
  if (n == 0) return;
  Shape xst = strides_of(g.data), ist = strides_of(g.idx);
  std::string xoff, ioff;
  auto add = [](std::string& s, const std::string& term) { s += (s.empty() ? "" : " + ") + term; };
  size_t opened = 0;
  for (size_t d = 0; d < g.idx.size(); ++d) {
    if (g.idx[d] == 1) continue;
    std::string v = fmt::format("i{}", d);
    if (opened == 0 && !scatter && e.parallel(static_cast<double>(n))) e.open_nest({.loops = {{v, g.idx[d]}}});
    else open_loop(e, v, g.idx[d]);
    ++opened;
    add(ioff, ist[d] == 1 ? v : fmt::format("{} * {}", v, ist[d]));
    if (static_cast<int64_t>(d) != g.axis) add(xoff, xst[d] == 1 ? v : fmt::format("{} * {}", v, xst[d]));
  }
  if (ioff.empty()) ioff = "0";
  size_t a = static_cast<size_t>(g.axis);
  emit_index(e, "k", fmt::format("{}[{}]", e.in(1), ioff), g.data[a]);
  add(xoff, xst[a] == 1 ? "k" : fmt::format("k * {}", xst[a]));
  if (!scatter) {
    e("{}[{}] = {}[{}];", e.out(0), ioff, e.in(0), xoff);
  } else {
    std::string dst = fmt::format("{}[{}]", e.out(0), xoff), u = fmt::format("{}[{}]", e.in(2), ioff);
    e("{} = {};", dst, combine(g.red, t, dst, u));
  }
  for (size_t j = 0; j < opened; ++j) e("}}");
}

void emit_nd(CEmit& e) {
  const NDGeom& g = nd_geom(e.node);
  bool scatter = e.node.op_type == "ScatterND";
  DType t = e.out_dtype(0);
  const char* ct = dtype_ctype(t);
  if (scatter) emit_copy_all(e, e.out(0), e.in(0), numel(e.in_shape(0)), t);
  int64_t rows = g.batch * g.tuples;
  if (rows == 0 || g.slice == 0) return;
  e("/* {} of {} tuples of {} indices, slices of {} elements */", e.node.op_type, rows, g.m, g.slice);
  if (!scatter && rows > 1 && e.parallel(static_cast<double>(rows * g.slice))) e.open_nest({.loops = {{"r", rows}}});
  else open_loop(e, "r", rows);
  std::string off = g.batch > 1 ? fmt::format("(r / {}) * {}", g.tuples, g.batch_stride) : "0";
  for (int64_t k = 0; k < g.m; ++k) {
    std::string v = fmt::format("k{}", k);
    emit_index(e, v, fmt::format("{}[r * {} + {}]", e.in(1), g.m, k), g.dims[static_cast<size_t>(k)]);
    off += fmt::format(" + {} * {}", v, g.strides[static_cast<size_t>(k)]);
  }
  e("const int64_t off = {};", off);
  if (!scatter) {
    if (g.slice == 1) e("{}[r] = {}[off];", e.out(0), e.in(0));
    else e("memcpy({} + r * {}, {} + off, {} * sizeof({}));", e.out(0), g.slice, e.in(0), g.slice, ct);
  } else if (g.red == ScatterReduction::None && g.slice > 1) {
    e("memcpy({} + off, {} + r * {}, {} * sizeof({}));", e.out(0), e.in(2), g.slice, g.slice, ct);
  } else {
    open_loop(e, "s", g.slice);
    std::string dst = fmt::format("{}[off + s]", e.out(0));
    e("{} = {};", dst, combine(g.red, t, dst, fmt::format("{}[r * {} + s]", e.in(2), g.slice)));
    e("}}");
  }
  e("}}");
}

}  // namespace

void register_gather_scatter(CKernelTable& t) {
  t["GatherElements"] = {emit_elements, nullptr, nullptr, nullptr};
  t["ScatterElements"] = {emit_elements, nullptr, nullptr, nullptr};
  t["Scatter"] = {emit_elements, nullptr, nullptr, nullptr};
  t["GatherND"] = {emit_nd, nullptr, nullptr, nullptr};
  t["ScatterND"] = {emit_nd, nullptr, nullptr, nullptr};
}

}  // namespace onnxc
