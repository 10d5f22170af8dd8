// codegen/c/kernels/ew_loop.cc — see ew_loop.h.
#include "codegen/c/kernels/ew_loop.h"

#include "ir/ops/elementwise.h"

namespace onnxc {

void emit_ew_loop(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                  const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt, bool simd) {
  int64_t n = numel(out);
  bool flat = true;
  for (auto& s : ins) flat = flat && numel(s) == n;
  if (flat || out.empty()) {
    std::vector<std::string> idx(ins.size());
    for (size_t k = 0; k < ins.size(); ++k) idx[k] = numel(ins[k]) == 1 && n != 1 ? "0" : "i";
    bool par = e.parallel(static_cast<double>(n));
    if (par) e("ONNXC_PRAGMA(omp parallel for{})", simd && n >= 4 ? " simd" : "");
    else if (simd && n >= 4) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i = 0; i < {}; ++i) {{", n);
    e("{}", stmt(idx, "i"));
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
    const bool par = d == 0 && e.parallel(static_cast<double>(n)) && dims[0] > 1;
    const bool inner = d + 1 == dims.size() && simd && dims[d] >= 4;
    if (par) e("ONNXC_PRAGMA(omp parallel for{})", inner ? " simd" : "");
    else if (inner) e("ONNXC_PRAGMA(omp simd)");
    e("for (int64_t i{0} = 0; i{0} < {1}; ++i{0}) {{", d, dims[d]);
  }
  e("{}", body);
  for (size_t d = 0; d < dims.size(); ++d) e("}}");
}

bool ew_nchwc_ok(const Node& n, int64_t) {
  const Value* o = n.out(0);
  if (!o || o->dtype != DType::F32 || o->shape.size() < 3 || o->shape.size() > 5 || n.outputs.size() != 1) return false;
  for (const Value* v : n.inputs)
    if (v && v->dtype != DType::F32) return false;
  return true;
}

}  // namespace onnxc
