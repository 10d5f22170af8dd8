// ir/ops/reduce.cc — ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
//
// Axes come from the `axes` attribute (ReduceSum before opset 13, the others before 18) or
// from a constant second input (ReduceSum 13+, all 18+); negative axes count from the end,
// repeated axes are invalid. No axes reduces everything, unless noop_with_empty_axes = 1
// (input form only), which makes the op an identity. keepdims (default 1) keeps reduced
// dims as 1.
// Shape inference resolves which dims are reduced (ReduceGeom, ir/ops/reduce.h); the C
// kernels are kernels/reduce.cc (Sum, Mean, Max) and kernels/reduce_more.cc (the others)
// in the C backend.
// dtypes: Sum float32/float64/int32/int64, Mean float32/float64, Max and Min float32/float64/
// int32/int64/int8/uint8 and bool (opset 20: any / all), Prod, L1 and SumSquare float32/
// float64/int32/int64, L2, LogSum and LogSumExp float32/float64. Sum and Mean accumulate
// floats in the input type; the other float reductions accumulate in double (the reference
// too) and round once. Max/Min skip NaN (fmaxf/fminf). Integer Prod/L1/SumSquare wrap
// modulo 2^64 before the conversion to the dtype. Empty reductions give 0 (Sum, L1, L2,
// SumSquare), 1 (Prod), NaN (Mean), -inf (LogSum, LogSumExp) and the lowest / highest value
// (Max / Min).
// Versions: 1, 11 (negative axes), 13 (ReduceSum: axes input), 18 (the others: axes input),
// and ReduceMax/Min 12 (int8/uint8), 20 (bool), and ReduceLogSum/LogSumExp 28 (integer
// dtypes dropped; onnxc takes floats only). Same meaning at every opset up to 28.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ir/ops/elementwise.h"
#include "ir/ops/ops.h"
#include "ir/ops/reduce.h"

namespace onnxc {
namespace {

enum class R { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

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
      case R::Max: case R::Min:
        expect_dtype(n, 0, {DType::F32, DType::F64, DType::I32, DType::I64, DType::I8, DType::U8, DType::Bool});
        if (n.in(0)->dtype == DType::Bool && n.opset < 20) n.invalid("bool input needs opset 20");
        break;
      case R::Prod: case R::L1: case R::SumSquare: expect_dtype(n, 0, {DType::F32, DType::F64, DType::I32, DType::I64}); break;
      case R::L2: case R::LogSum: case R::LogSumExp: expect_dtype(n, 0, {DType::F32, DType::F64}); break;
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
    g_.reduced.assign(x.size(), false);
    g_.noop = axes.empty() && noop_;
    if (axes.empty() && !noop_) g_.reduced.assign(x.size(), true);
    for (int64_t ax : axes) {
      int64_t a = ax;
      if (!normalize_axis(a, rank)) n.invalid(fmt::format("axis {} is out of range for input {}", ax, shape_str(x)));
      if (g_.reduced[static_cast<size_t>(a)]) n.invalid(fmt::format("axis {} is repeated in axes [{}]", ax, fmt::join(axes, ",")));
      g_.reduced[static_cast<size_t>(a)] = true;
    }
    Shape y;
    for (size_t d = 0; d < x.size(); ++d) {
      if (!g_.reduced[d]) y.push_back(x[d]);
      else if (keepdims_) y.push_back(1);
    }
    set_output(n, 0, n.in(0)->dtype, y);
  }

  double lowest(DType t) const {
    switch (t) {
      case DType::I32: return std::numeric_limits<int32_t>::min();
      case DType::I64: return -9223372036854775808.0;
      case DType::I8: return -128;
      case DType::U8: case DType::Bool: return 0;
      default: return -INFINITY;
    }
  }

  double highest(DType t) const {
    switch (t) {
      case DType::I32: return std::numeric_limits<int32_t>::max();
      case DType::I64: return 9223372036854775807.0;
      case DType::I8: return 127;
      case DType::U8: return 255;
      case DType::Bool: return 1;
      default: return INFINITY;
    }
  }

  // The other reductions (kernels/reduce_more.cc mirrors them): exact integers in uint64
  // (wrapping), floats in double.
  void eval_more(const Tensor& x, Tensor& y, const Shape& st) const {
    bool ints = dtype_is_int(x.dtype) || x.dtype == DType::Bool;
    int64_t ny = y.numel();
    double init = k_ == R::Min ? highest(x.dtype) : k_ == R::Max ? lowest(x.dtype) : k_ == R::Prod ? 1 : 0;
    std::vector<double> acc(static_cast<size_t>(ny), init);
    std::vector<uint64_t> iacc(static_cast<size_t>(ny), k_ == R::Prod ? 1 : 0);
    int64_t ibound = 0;  // integer Min/Max start: the dtype's highest / lowest value
    visit_dtype(x.dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>) {
        bool is_bool = x.dtype == DType::Bool;
        ibound = k_ == R::Min ? (is_bool ? 1 : static_cast<int64_t>(std::numeric_limits<T>::max()))
                              : static_cast<int64_t>(std::numeric_limits<T>::lowest());
      }
    });
    std::vector<int64_t> imm(static_cast<size_t>(ny), ibound);
    Shape pos(x.shape.size(), 0);
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      int64_t o = 0;
      for (size_t d = 0; d < pos.size(); ++d) o += pos[d] * st[d];
      size_t u = static_cast<size_t>(o);
      if (ints) {
        int64_t v = x.get_i64(i);
        uint64_t w = static_cast<uint64_t>(v);
        switch (k_) {
          case R::Max: imm[u] = std::max(imm[u], v); break;
          case R::Min: imm[u] = std::min(imm[u], v); break;
          case R::Prod: iacc[u] *= w; break;
          case R::L1: iacc[u] += v < 0 ? 0 - w : w; break;
          case R::SumSquare: iacc[u] += w * w; break;
          default: break;
        }
      } else {
        double v = x.get(i);
        switch (k_) {
          case R::Max: acc[u] = std::fmax(acc[u], v); break;
          case R::Min: acc[u] = std::fmin(acc[u], v); break;
          case R::Prod: acc[u] *= v; break;
          case R::L1: acc[u] += std::fabs(v); break;
          case R::L2: case R::SumSquare: acc[u] += v * v; break;
          case R::LogSum: acc[u] += v; break;
          case R::LogSumExp: acc[u] += std::exp(v); break;
          default: break;
        }
      }
      for (size_t d = pos.size(); d-- > 0;) {
        if (++pos[d] < x.shape[d]) break;
        pos[d] = 0;
      }
    }
    for (int64_t o = 0; o < ny; ++o) {
      size_t u = static_cast<size_t>(o);
      if (ints) {
        y.set_i64(o, k_ == R::Max || k_ == R::Min ? imm[u] : static_cast<int64_t>(iacc[u]));
        continue;
      }
      double v = acc[u];
      if (k_ == R::L2) v = std::sqrt(v);
      if (k_ == R::LogSum || k_ == R::LogSumExp) v = std::log(v);
      y.set(o, v);
    }
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor& x = *in[0];
    Tensor& y = out[0];
    bool ints = dtype_is_int(x.dtype);
    int64_t ny = y.numel();
    int64_t count = 1;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (g_.reduced[d]) count *= x.shape[d];
    std::vector<double> acc(static_cast<size_t>(ny), k_ == R::Max ? lowest(x.dtype) : 0.0);
    std::vector<int64_t> iacc(static_cast<size_t>(ny), 0);  // exact integer sums
    // Output index of each input element: strides of kept dims, 0 on reduced ones.
    Shape ys;
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (!g_.reduced[d]) ys.push_back(x.shape[d]);
    Shape yst = strides_of(ys), st(x.shape.size(), 0);
    for (size_t d = 0, k = 0; d < x.shape.size(); ++d)
      if (!g_.reduced[d]) st[d] = yst[k++];
    if (k_ != R::Sum && k_ != R::Mean && !(k_ == R::Max && x.dtype != DType::Bool)) {
      eval_more(x, y, st);
      return;
    }
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


  FusionKind kind() const override { return FusionKind::Reduction; }
  const ReduceGeom& geom() const { return g_; }

 private:
  R k_;
  int64_t keepdims_ = 1, noop_ = 0;
  bool input_form_ = false;
  std::vector<int64_t> attr_axes_;
  ReduceGeom g_;
};

template <R k>
std::unique_ptr<Op> make() { return std::make_unique<Reduce>(k); }

}  // namespace

const ReduceGeom& reduce_geom(const Node& n) { return op_as<Reduce>(n).geom(); }

void register_reduce(OpTable& t) {
  t["ReduceSum"] = make<R::Sum>;
  t["ReduceMean"] = make<R::Mean>;
  t["ReduceMax"] = make<R::Max>;
  t["ReduceMin"] = make<R::Min>;
  t["ReduceProd"] = make<R::Prod>;
  t["ReduceL1"] = make<R::L1>;
  t["ReduceL2"] = make<R::L2>;
  t["ReduceLogSum"] = make<R::LogSum>;
  t["ReduceLogSumExp"] = make<R::LogSumExp>;
  t["ReduceSumSquare"] = make<R::SumSquare>;
}

}  // namespace onnxc
