// ir/ops/elementwise.cc — broadcast helpers (see elementwise.h).
#include "ir/ops/elementwise.h"

#include <fmt/format.h>

namespace onnxc {

LegacyBroadcast read_legacy_broadcast(AttrReader& a) {
  LegacyBroadcast lb;
  lb.broadcast = a.i("broadcast", 0);
  lb.axis = a.opt_i("axis");
  return lb;
}

void check_legacy_broadcast(const Node& n, const LegacyBroadcast& lb) {
  const Shape& a = n.in(0)->shape;
  const Shape& b = n.in(1)->shape;
  if (lb.broadcast != 0 && lb.broadcast != 1) n.invalid(fmt::format("attribute 'broadcast' must be 0 or 1, got {}", lb.broadcast));
  if (lb.broadcast == 0) {
    if (a != b)
      n.invalid(fmt::format("inputs {} and {} differ in shape; before opset 7 that needs attribute broadcast=1", shape_str(a),
                            shape_str(b)));
    return;
  }
  int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  if (rb > ra) n.invalid(fmt::format("B {} has a higher rank than A {} (legacy broadcast, opset < 7)", shape_str(b), shape_str(a)));
  int64_t axis = lb.axis.value_or(ra - rb);
  if (axis < 0 || axis + rb > ra)
    n.invalid(fmt::format("axis {} does not place B {} inside A {} (legacy broadcast, opset < 7)", axis, shape_str(b), shape_str(a)));
  if (numel(b) == 1) return;
  for (int64_t d = 0; d < rb; ++d)
    if (b[static_cast<size_t>(d)] != a[static_cast<size_t>(axis + d)])
      n.invalid(fmt::format("B {} does not match A {} from axis {} (legacy broadcast, opset < 7)", shape_str(b), shape_str(a), axis));
  if (axis != ra - rb)
    n.unsupported(fmt::format("legacy broadcast (opset < 7) of B {} along axis {} of A {} is not supported; onnxc takes the legacy "
                              "form where it equals numpy broadcasting (B aligned with A's trailing dims, or a single element)",
                              shape_str(b), axis, shape_str(a)));
}

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
