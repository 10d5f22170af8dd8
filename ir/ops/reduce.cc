// ir/ops/reduce.cc — ReduceSum, ReduceMean, ReduceMax.
//
// Axes come from the `axes` attribute (ReduceSum before opset 13, the others before 18) or
// from a constant second input (ReduceSum 13+, all 18+); negative axes count from the end,
// repeated axes are invalid. No axes reduces everything, unless noop_with_empty_axes = 1
// (input form only), which makes the op an identity. keepdims (default 1) keeps reduced
// dims as 1.
// The C code drops size-1 dims and merges neighbouring dims that are both reduced or both
// kept. One trailing reduced group is a parallel set of contiguous reductions into a local
// accumulator (SIMD for sums; max stays scalar, see softmax.cc); any other pattern
// initialises Y, accumulates in a loop nest whose innermost loop runs over contiguous
// memory, and (Mean) divides at the end. Only a leading kept group runs in parallel.
// dtypes: Sum float32/float64/int32/int64, Mean float32/float64, Max float32/float64/int32/
// int64/int8/uint8. Float sums accumulate in the input type; Max uses fmaxf (skips NaN).
// Empty reductions give 0 (Sum), NaN (Mean) and the lowest value (Max).
#include <cmath>
#include <limits>

#include "codegen/c_emit.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

enum class R { Sum, Mean, Max };

class Reduce : public Op {
 public:
  explicit Reduce(R k) : k_(k) {}

  bool axes_input(int64_t opset) const { return opset >= (k_ == R::Sum ? 13 : 18); }

  void parse(AttrReader& a) override {
    keepdims_ = a.i("keepdims", 1);
    input_form_ = axes_input(a.opset());
    if (input_form_) noop_ = a.i("noop_with_empty_axes", 0);
    else attr_axes_ = a.ints("axes");
  }

  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    if (n.inputs.empty() || !n.in(0)) n.invalid("input 'data' is required");
    if (n.inputs.size() > (input_form_ ? 2u : 1u))
      n.invalid(input_form_ ? "expects at most 2 inputs (data, axes)" : "expects exactly 1 input (axes is an attribute here)");
    switch (k_) {
      case R::Sum: expect_dtype(n, 0, {DType::F32, DType::F64, DType::I32, DType::I64}); break;
      case R::Mean: expect_dtype(n, 0, {DType::F32, DType::F64}); break;
      case R::Max: expect_dtype(n, 0, {DType::F32, DType::F64, DType::I32, DType::I64, DType::I8, DType::U8}); break;
    }
    if (keepdims_ != 0 && keepdims_ != 1) n.invalid("keepdims must be 0 or 1, got " + std::to_string(keepdims_));
    if (noop_ != 0 && noop_ != 1) n.invalid("noop_with_empty_axes must be 0 or 1, got " + std::to_string(noop_));
    std::vector<int64_t> axes = attr_axes_;
    if (input_form_ && n.in(1)) {
      const Tensor& t = static_tensor(n, 1, "axes");
      if (!dtype_is_int(t.dtype) || t.shape.size() > 1) n.invalid("axes must be a 1-D integer tensor, got " + n.in(1)->type_str());
      axes = t.to_i64();
    }
    const Shape& x = n.in(0)->shape;
    int64_t rank = static_cast<int64_t>(x.size());
    red_.assign(x.size(), false);
    noop_now_ = axes.empty() && noop_;
    if (axes.empty() && !noop_) red_.assign(x.size(), true);
    for (int64_t ax : axes) {
      int64_t a = ax;
      if (!normalize_axis(a, rank)) n.invalid(fmt::format("axis {} is out of range for input {}", ax, shape_str(x)));
      if (red_[static_cast<size_t>(a)]) n.invalid(fmt::format("axis {} is repeated in axes [{}]", ax, fmt::join(axes, ",")));
      red_[static_cast<size_t>(a)] = true;
    }
    Shape y;
    for (size_t d = 0; d < x.size(); ++d) {
      if (!red_[d]) y.push_back(x[d]);
      else if (keepdims_) y.push_back(1);
    }
    set_output(n, 0, n.in(0)->dtype, y);
  }

  double lowest(DType t) const {
    switch (t) {
      case DType::I32: return std::numeric_limits<int32_t>::min();
      case DType::I64: return -9223372036854775808.0;
      case DType::I8: return -128;
      case DType::U8: return 0;
      default: return -INFINITY;
    }
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    Tensor& y = out[0];
    bool ints = dtype_is_int(x.dtype);
    int64_t ny = y.numel();
    int64_t count = 1;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (red_[d]) count *= x.shape[d];
    std::vector<double> acc(static_cast<size_t>(ny), k_ == R::Max ? lowest(x.dtype) : 0.0);
    std::vector<int64_t> iacc(static_cast<size_t>(ny), 0);  // exact integer sums
    // Output index of each input element: strides of kept dims, 0 on reduced ones.
    Shape ys;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (!red_[d]) ys.push_back(x.shape[d]);
    Shape yst = strides_of(ys), st(x.shape.size(), 0);
    for (size_t d = 0, k = 0; d < x.shape.size(); ++d)
      if (!red_[d]) st[d] = yst[k++];
    Shape pos(x.shape.size(), 0);
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      int64_t o = 0;
      for (size_t d = 0; d < pos.size(); ++d) o += pos[d] * st[d];
      size_t u = static_cast<size_t>(o);
      if (k_ == R::Max) acc[u] = std::fmax(acc[u], x.get(i));
      else if (ints) iacc[u] = static_cast<int64_t>(static_cast<uint64_t>(iacc[u]) + static_cast<uint64_t>(x.get_i64(i)));
      else acc[u] += x.get(i);
      for (size_t d = pos.size(); d-- > 0;) {
        if (++pos[d] < x.shape[d]) break;
        pos[d] = 0;
      }
    }
    for (int64_t o = 0; o < ny; ++o) {
      size_t u = static_cast<size_t>(o);
      if (ints && k_ != R::Max) y.set_i64(o, iacc[u]);
      else if (k_ == R::Max && ints) y.set_i64(o, static_cast<int64_t>(acc[u]));
      else y.set(o, k_ == R::Mean ? acc[u] / static_cast<double>(count) : acc[u]);
    }
  }

  void emit(CEmit& e) const override {
    const Shape& x = e.in_shape(0);
    DType t = e.in_dtype(0);
    const char* ct = e.in_ctype(0);
    int64_t ny = numel(e.out_shape(0)), nx = numel(x);
    if (noop_now_) {
      e("memcpy({}, {}, {});", e.out(0), e.in(0), nx * static_cast<int64_t>(dtype_size(t)));
      return;
    }
    // Groups of neighbouring dims with the same role, size-1 dims dropped.
    std::vector<int64_t> size;
    std::vector<bool> red;
    int64_t count = 1;
    for (size_t d = 0; d < x.size(); ++d) {
      if (red_[d]) count *= x[d];
      if (x[d] == 1) continue;
      if (!red.empty() && red.back() == red_[d]) size.back() *= x[d];
      else size.push_back(x[d]), red.push_back(red_[d]);
    }
    bool fl = t == DType::F32, dbl = t == DType::F64;
    std::string init = k_ != R::Max ? c_literal(t, 0)
                     : fl || dbl     ? "(-INFINITY)"
                     : t == DType::I32 ? "INT32_MIN"
                     : t == DType::I64 ? "INT64_MIN"
                     : t == DType::I8  ? "INT8_MIN"
                                       : "0";
    auto combine = [&](const std::string& a, const std::string& b) {
      if (k_ != R::Max) return fmt::format("{} + {}", a, b);
      if (fl) return fmt::format("fmaxf({}, {})", a, b);
      if (dbl) return fmt::format("fmax({}, {})", a, b);
      return fmt::format("{1} > {0} ? {1} : {0}", a, b);
    };
    std::string divisor = c_literal(t, static_cast<double>(count));
    auto finish = [&](const std::string& v) { return k_ == R::Mean ? fmt::format("{} / {}", v, divisor) : v; };
    size_t m = size.size();
    int nred = 0;
    for (bool r : red) nred += r;

    if (nred == 0) {  // only size-1 dims are reduced: a copy (Mean divides by 1)
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t i = 0; i < {}; ++i) {}[i] = {}[i];", nx, e.out(0), e.in(0));
      return;
    }
    if (nred == 1 && red.back()) {  // [outer, R]: one contiguous reduction per output
      int64_t r = size.back();
      if (ny > 1 && nx >= (1 << 16)) e("ONNXC_PRAGMA(omp parallel for)");
      e("for (int64_t o = 0; o < {}; ++o) {{", ny);
      e("const {}* restrict x = {} + o * {};", ct, e.in(0), r);
      e("{} acc = {};", ct, init);
      if (k_ != R::Max) e("ONNXC_PRAGMA(omp simd reduction(+:acc))");
      e("for (int64_t i = 0; i < {}; ++i) acc = {};", r, combine("acc", "x[i]"));
      e("{}[o] = {};", e.out(0), finish("acc"));
      e("}}");
      return;
    }
    // General: Y = init; accumulate over a loop nest in input order; Mean divides at the end.
    e("for (int64_t o = 0; o < {}; ++o) {}[o] = {};", ny, e.out(0), init);
    Shape xst = strides_of(Shape(size.begin(), size.end()));
    Shape kept;
    for (size_t g = 0; g < m; ++g)
      if (!red[g]) kept.push_back(size[g]);
    Shape kst = strides_of(kept);
    std::vector<int64_t> yst(m, 0);
    for (size_t g = 0, k = 0; g < m; ++g)
      if (!red[g]) yst[g] = kst[k++];
    auto index = [&](const std::vector<int64_t>& st, size_t upto) {
      std::string s;
      for (size_t g = 0; g < upto; ++g)
        if (st[g]) s += fmt::format("{}g{}{}", s.empty() ? "" : " + ", g, st[g] == 1 ? "" : fmt::format(" * {}", st[g]));
      return s.empty() ? std::string("0") : s;
    };
    std::vector<int64_t> xs(xst.begin(), xst.end());
    bool par = !red[0] && size[0] > 1 && nx >= (1 << 16);
    for (size_t g = 0; g + 1 < m; ++g) {
      if (g == 0 && par) e("ONNXC_PRAGMA(omp parallel for)");
      e("for (int64_t g{0} = 0; g{0} < {1}; ++g{0}) {{", g, size[g]);
    }
    std::string xi = index(xs, m - 1), yi = index(yst, m - 1);
    if (red.back()) {
      e("const {}* restrict x = {} + {};", ct, e.in(0), xi);
      e("{} acc = {};", ct, init);
      if (k_ != R::Max) e("ONNXC_PRAGMA(omp simd reduction(+:acc))");
      e("for (int64_t i = 0; i < {}; ++i) acc = {};", size.back(), combine("acc", "x[i]"));
      e("{0}[{1}] = {2};", e.out(0), yi, combine(fmt::format("{}[{}]", e.out(0), yi), "acc"));
    } else {
      e("const {}* restrict x = {} + {};", ct, e.in(0), xi);
      e("{}* restrict y = {} + {};", ct, e.out(0), yi);
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t i = 0; i < {}; ++i) y[i] = {};", size.back(), combine("y[i]", "x[i]"));
    }
    for (size_t g = 0; g + 1 < m; ++g) e("}}");
    if (k_ == R::Mean) {
      e("ONNXC_PRAGMA(omp simd)");
      e("for (int64_t o = 0; o < {}; ++o) {}[o] = {};", ny, e.out(0), finish(fmt::format("{}[o]", e.out(0))));
    }
  }

  FusionKind kind() const override { return FusionKind::Reduction; }

 private:
  R k_;
  int64_t keepdims_ = 1, noop_ = 0;
  bool input_form_ = false, noop_now_ = false;
  std::vector<int64_t> attr_axes_;
  std::vector<bool> red_;
};

template <R k>
std::unique_ptr<Op> make() { return std::make_unique<Reduce>(k); }

}  // namespace

void register_reduce(OpTable& t) {
  t["ReduceSum"] = make<R::Sum>;
  t["ReduceMean"] = make<R::Mean>;
  t["ReduceMax"] = make<R::Max>;
}

}  // namespace onnxc
