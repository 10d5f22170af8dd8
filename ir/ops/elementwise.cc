// ir/ops/elementwise.cc — broadcast helpers (see elementwise.h).
#include "ir/ops/elementwise.h"

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

Shape broadcast_strides(const Shape& out, const Shape& in) {
  Shape st(out.size(), 0), own = strides_of(in);
  size_t off = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) st[off + d] = in[d] == 1 ? 0 : own[d];
  return st;
}

std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in) {
  int64_t n = numel(out);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  Shape st = broadcast_strides(out, in);
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

}  // namespace onnxc
