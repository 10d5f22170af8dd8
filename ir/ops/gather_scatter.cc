// ir/ops/gather_scatter.cc — the index-driven data ops:
//   GatherElements(data, indices)         out[i] = data[i with i[axis] = indices[i]]
//   ScatterElements(data, indices, upd)   out = data; out[i with i[axis] = indices[i]] op= upd[i]
//   Scatter                                the deprecated name of ScatterElements (9, 11)
//   GatherND(data, indices)               out[b, t, :] = data[b, indices[b, t, 0..m), :]
//   ScatterND(data, indices, upd)         out = data; out[indices[t, 0..m), :] op= upd[t, :]
// `axis` (default 0) may be negative; indices are int32 or int64 (ONNX: int64 only for the
// ND ops; onnxc takes both) and may be negative (counted from the end). Out of range: see
// gather_scatter.h (constant → invalid model, runtime → clamped). GatherElements and
// ScatterElements take indices whose dims other than `axis` are at most data's (each
// indexes a prefix of that dim, as ONNX Runtime allows). Updates are applied in indices'
// C order, so duplicate indices keep the last update (reduction none) or combine them all.
// GatherND's batch_dims b: the first b dims of data and indices agree and are looped over.
// Any data dtype.
// Versions: GatherElements 11, 13 (bfloat16); ScatterElements 11, 13, 16 (reduction
// none/add/mul), 18 (max/min); Scatter 9, 11 (deprecated: kept as ScatterElements);
// GatherND 11, 12 (batch_dims), 13; ScatterND 11, 13, 16 (reduction none/add/mul), 18
// (max/min). A reduction newer than the node's opset is an invalid model. Same meaning up
// to 28. The C kernels are kernels/gather_scatter.cc.
#include "ir/ops/gather_scatter.h"

#include <fmt/format.h>

#include "ir/ops/elementwise.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

int64_t fix_index(int64_t v, int64_t dim) {
  if (v < 0) v += dim;
  return v < 0 ? 0 : v >= dim ? dim - 1 : v;
}

void check_index_dtype(const Node& n, size_t i) {
  const Value& ix = need_input(n, i, "indices");
  if (ix.dtype != DType::I64 && ix.dtype != DType::I32)
    n.invalid(fmt::format("indices must be int32 or int64, got {}", dtype_name(ix.dtype)));
}

ScatterReduction parse_reduction(AttrReader& a) {
  if (a.opset() < 16) return ScatterReduction::None;
  std::string r = a.s("reduction", "none");
  if (r == "none") return ScatterReduction::None;
  if (r == "add") return ScatterReduction::Add;
  if (r == "mul") return ScatterReduction::Mul;
  if (r == "max" || r == "min") {
    if (a.opset() < 18) a.node().invalid(fmt::format("reduction '{}' needs opset 18 (this node is at opset {})", r, a.opset()));
    return r == "max" ? ScatterReduction::Max : ScatterReduction::Min;
  }
  a.node().invalid(fmt::format("reduction '{}' is not one of none, add, mul, max, min", r));
}

// e op= u for the reference (see ScatterReduction).
template <class T>
T combine(T e, T u, ScatterReduction r, bool is_bool) {
  switch (r) {
    case ScatterReduction::None: return u;
    case ScatterReduction::Add:
      if constexpr (std::is_integral_v<T>) {
        if (is_bool) return static_cast<T>(e | u);
        return static_cast<T>(static_cast<uint64_t>(e) + static_cast<uint64_t>(u));
      } else {
        return e + u;
      }
    case ScatterReduction::Mul:
      if constexpr (std::is_integral_v<T>) {
        if (is_bool) return static_cast<T>(e & u);
        return static_cast<T>(static_cast<uint64_t>(e) * static_cast<uint64_t>(u));
      } else {
        return e * u;
      }
    case ScatterReduction::Max: return u > e ? u : e;
    case ScatterReduction::Min: return u < e ? u : e;
  }
  return u;
}

// ---- GatherElements, ScatterElements, Scatter ----

class Elements : public Op {
 public:
  Elements(bool scatter, int64_t first) : scatter_(scatter), first_(first) {}

  void parse(AttrReader& a) override {
    axis_ = a.i("axis", 0);
    if (scatter_) g_.red = parse_reduction(a);
  }

  void infer(Node& n) override {
    size_t want = scatter_ ? 3 : 2;
    if (n.inputs.size() != want)
      n.invalid(fmt::format("expects {} inputs ({}), got {}", want, scatter_ ? "data, indices, updates" : "data, indices", n.inputs.size()));
    const Value& x = need_input(n, 0, "data");
    check_index_dtype(n, 1);
    const Value& ix = *n.in(1);
    int64_t r = static_cast<int64_t>(x.shape.size());
    if (r == 0) n.invalid("data must have rank >= 1");
    if (ix.shape.size() != x.shape.size())
      n.invalid(fmt::format("indices {} must have the rank of data {}", shape_str(ix.shape), shape_str(x.shape)));
    g_.axis = move_axis(n, axis_, r, "axis");
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (static_cast<int64_t>(d) != g_.axis && ix.shape[d] > x.shape[d])
        n.invalid(fmt::format("indices {} is larger than data {} in dim {} (not the axis)", shape_str(ix.shape), shape_str(x.shape), d));
    if (scatter_) {
      const Value& u = need_input(n, 2, "updates");
      if (u.shape != ix.shape) n.invalid(fmt::format("updates {} must have the shape of indices {}", shape_str(u.shape), shape_str(ix.shape)));
      if (u.dtype != x.dtype) n.invalid(fmt::format("updates have dtype {}, data {}", dtype_name(u.dtype), dtype_name(x.dtype)));
    }
    int64_t dim = x.shape[static_cast<size_t>(g_.axis)];
    if (dim == 0 && numel(ix.shape) > 0) n.invalid("cannot index an axis of size 0");
    if (ix.constant)
      for (int64_t v : ix.constant->to_i64())
        if (v < -dim || v >= dim) n.invalid(fmt::format("index {} is out of range [{}, {}] (axis {} of {})", v, -dim, dim - 1, g_.axis, shape_str(x.shape)));
    g_.data = x.shape;
    g_.idx = ix.shape;
    set_output(n, 0, x.dtype, scatter_ ? x.shape : ix.shape);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    const Tensor& ix = *in[1];
    size_t a = static_cast<size_t>(g_.axis);
    int64_t dim = x.shape[a];
    if (!scatter_) {
      for (int64_t i = 0, total = ix.numel(); i < total; ++i) {
        Shape p = unravel(i, ix.shape);
        p[a] = fix_index(ix.get_i64(i), dim);
        copy_elem(out[0], i, x, ravel(p, x.shape));
      }
      return;
    }
    copy_all(out[0], x);
    bool is_bool = x.dtype == DType::Bool;
    visit_dtype(x.dtype, [&](auto v) {
      using T = decltype(v);
      T* y = out[0].data<T>();
      const T* u = in[2]->data<T>();
      for (int64_t i = 0, total = ix.numel(); i < total; ++i) {
        Shape p = unravel(i, ix.shape);
        p[a] = fix_index(ix.get_i64(i), dim);
        int64_t o = ravel(p, x.shape);
        y[o] = combine<T>(y[o], u[i], g_.red, is_bool);
      }
    });
  }

  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t min_opset() const override { return first_; }
  const ElementsGeom& geom() const { return g_; }

 private:
  bool scatter_;
  int64_t first_;
  int64_t axis_ = 0;
  ElementsGeom g_;
};

// ---- GatherND, ScatterND ----

class ND : public Op {
 public:
  explicit ND(bool scatter) : scatter_(scatter) {}

  void parse(AttrReader& a) override {
    if (scatter_) g_.red = parse_reduction(a);
    else if (a.opset() >= 12) batch_dims_ = a.i("batch_dims", 0);
  }

  void infer(Node& n) override {
    size_t want = scatter_ ? 3 : 2;
    if (n.inputs.size() != want)
      n.invalid(fmt::format("expects {} inputs ({}), got {}", want, scatter_ ? "data, indices, updates" : "data, indices", n.inputs.size()));
    const Value& x = need_input(n, 0, "data");
    check_index_dtype(n, 1);
    const Shape& xs = x.shape;
    const Shape& is = n.in(1)->shape;
    int64_t r = static_cast<int64_t>(xs.size()), q = static_cast<int64_t>(is.size()), b = batch_dims_;
    if (r < 1 || q < 1) n.invalid(fmt::format("data {} and indices {} must have rank >= 1", shape_str(xs), shape_str(is)));
    if (b < 0 || b >= std::min(r, q))
      n.invalid(fmt::format("batch_dims {} must be in [0, {}) for data {} and indices {}", b, std::min(r, q), shape_str(xs), shape_str(is)));
    for (int64_t d = 0; d < b; ++d)
      if (xs[static_cast<size_t>(d)] != is[static_cast<size_t>(d)])
        n.invalid(fmt::format("batch dim {} differs: data {}, indices {}", d, shape_str(xs), shape_str(is)));
    int64_t m = is.back();
    if (m < 1 || m > r - b)
      n.invalid(fmt::format("the last dim of indices {} must be in [1, {}] for data {}", shape_str(is), r - b, shape_str(xs)));
    Shape xst = strides_of(xs);
    g_ = NDGeom{1, 1, m, 1, 0, {}, {}, g_.red};
    for (int64_t d = 0; d < b; ++d) g_.batch *= xs[static_cast<size_t>(d)];
    for (int64_t d = b; d + 1 < q; ++d) g_.tuples *= is[static_cast<size_t>(d)];
    for (int64_t d = b + m; d < r; ++d) g_.slice *= xs[static_cast<size_t>(d)];
    g_.batch_stride = b > 0 ? xst[static_cast<size_t>(b - 1)] : numel(xs);
    for (int64_t k = 0; k < m; ++k) {
      g_.dims.push_back(xs[static_cast<size_t>(b + k)]);
      g_.strides.push_back(xst[static_cast<size_t>(b + k)]);
    }
    for (int64_t dim : g_.dims)
      if (dim == 0 && g_.batch * g_.tuples > 0) n.invalid(fmt::format("cannot index data {} with an empty dim", shape_str(xs)));
    if (const Value* ix = n.in(1); ix->constant) {
      std::vector<int64_t> v = ix->constant->to_i64();
      for (size_t j = 0; j < v.size(); ++j) {
        int64_t dim = g_.dims[j % static_cast<size_t>(m)];
        if (v[j] < -dim || v[j] >= dim)
          n.invalid(fmt::format("index {} is out of range [{}, {}] for dim {} of data {}", v[j], -dim, dim - 1, b + static_cast<int64_t>(j % static_cast<size_t>(m)), shape_str(xs)));
      }
    }
    // GatherND's output / ScatterND's updates: indices.shape[:-1] + data.shape[b+m:].
    Shape os(is.begin(), is.end() - 1);
    os.insert(os.end(), xs.begin() + b + m, xs.end());
    if (scatter_) {
      const Value& u = need_input(n, 2, "updates");
      if (u.shape != os) n.invalid(fmt::format("updates {} must have shape {} (indices.shape[:-1] + data.shape[{}:])", shape_str(u.shape), shape_str(os), m));
      if (u.dtype != x.dtype) n.invalid(fmt::format("updates have dtype {}, data {}", dtype_name(u.dtype), dtype_name(x.dtype)));
      set_output(n, 0, x.dtype, xs);
    } else {
      set_output(n, 0, x.dtype, os);
    }
  }

  // Element offset in data of tuple t of batch bi (indices row `row`).
  int64_t offset(const Tensor& ix, int64_t bi, int64_t row) const {
    int64_t off = bi * g_.batch_stride;
    for (int64_t k = 0; k < g_.m; ++k)
      off += fix_index(ix.get_i64(row * g_.m + k), g_.dims[static_cast<size_t>(k)]) * g_.strides[static_cast<size_t>(k)];
    return off;
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    const Tensor& ix = *in[1];
    if (!scatter_) {
      for (int64_t bi = 0; bi < g_.batch; ++bi)
        for (int64_t t = 0; t < g_.tuples; ++t) {
          int64_t row = bi * g_.tuples + t, off = offset(ix, bi, row);
          for (int64_t s = 0; s < g_.slice; ++s) copy_elem(out[0], row * g_.slice + s, x, off + s);
        }
      return;
    }
    copy_all(out[0], x);
    bool is_bool = x.dtype == DType::Bool;
    visit_dtype(x.dtype, [&](auto v) {
      using T = decltype(v);
      T* y = out[0].data<T>();
      const T* u = in[2]->data<T>();
      for (int64_t t = 0; t < g_.tuples; ++t) {
        int64_t off = offset(ix, 0, t);
        for (int64_t s = 0; s < g_.slice; ++s) y[off + s] = combine<T>(y[off + s], u[t * g_.slice + s], g_.red, is_bool);
      }
    });
  }

  FusionKind kind() const override { return FusionKind::Injective; }
  int64_t min_opset() const override { return 11; }
  const NDGeom& geom() const { return g_; }

 private:
  bool scatter_;
  int64_t batch_dims_ = 0;
  NDGeom g_;
};

}  // namespace

const ElementsGeom& elements_geom(const Node& n) { return op_as<Elements>(n).geom(); }
const NDGeom& nd_geom(const Node& n) { return op_as<ND>(n).geom(); }

void register_gather_scatter(OpTable& t) {
  t["GatherElements"] = [] { return std::unique_ptr<Op>(std::make_unique<Elements>(false, 11)); };
  t["ScatterElements"] = [] { return std::unique_ptr<Op>(std::make_unique<Elements>(true, 11)); };
  t["Scatter"] = [] { return std::unique_ptr<Op>(std::make_unique<Elements>(true, 9)); };
  t["GatherND"] = [] { return std::unique_ptr<Op>(std::make_unique<ND>(false)); };
  t["ScatterND"] = [] { return std::unique_ptr<Op>(std::make_unique<ND>(true)); };
}

}  // namespace onnxc
