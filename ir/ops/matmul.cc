// ir/ops/matmul.cc — MatMul with numpy semantics: A [..., M, K] x B [..., K, N] → [..., M, N],
// batch dims broadcast; a 1-D A is [1, K] and a 1-D B is [K, 1], the added dim removed
// from the result.
//
// float32 only. Shape inference resolves MatMulGeom (ir/ops/gemm.h); the C kernel is
// kernels/gemm.cc in the C backend.
// Versions: 1, 9, 13 (dtypes only); unchanged up to opset 28.
#include "ir/ops/gemm.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class MatMul : public Op {
 public:
  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects exactly 2 inputs");
    expect_float(n, 0);
    expect_float(n, 1);
    Shape y;
    g_ = resolve_matmul(n, n.in(0)->shape, n.in(1)->shape, &y);
    set_output(n, 0, DType::F32, y);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor &a = *in[0], &b = *in[1];
    int64_t batch = numel(g_.batch);
    Shape cont = strides_of(g_.batch);
    for (int64_t bt = 0; bt < batch; ++bt) {
      int64_t ao = 0, bo = 0;
      for (size_t d = 0; d < g_.batch.size(); ++d) {
        int64_t idx = bt / cont[d] % g_.batch[d];
        ao += idx * g_.a_st[d];
        bo += idx * g_.b_st[d];
      }
      for (int64_t i = 0; i < g_.M; ++i)
        for (int64_t j = 0; j < g_.N; ++j) {
          double s = 0;
          for (int64_t k = 0; k < g_.K; ++k) s += a.get(ao + i * g_.K + k) * b.get(bo + k * g_.N + j);
          out[0].set((bt * g_.M + i) * g_.N + j, s);
        }
    }
  }

  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }
  const MatMulGeom& geom() const { return g_; }

 private:
  MatMulGeom g_;
};

std::unique_ptr<Op> make() { return std::make_unique<MatMul>(); }

}  // namespace

Shape batch_strides(const Shape& batch, const Shape& own, int64_t mat) {
  Shape st(batch.size(), 0), cont = strides_of(own);
  size_t off = batch.size() - own.size();
  for (size_t d = 0; d < own.size(); ++d) st[off + d] = own[d] == 1 ? 0 : cont[d] * mat;
  return st;
}

MatMulGeom resolve_matmul(const Node& n, const Shape& a, const Shape& b, Shape* y) {
  MatMulGeom g;
  if (a.empty() || b.empty()) n.invalid("inputs " + shape_str(a) + " and " + shape_str(b) + " must have rank >= 1");
  Shape am = a.size() == 1 ? Shape{1, a[0]} : a;
  Shape bm = b.size() == 1 ? Shape{b[0], 1} : b;
  g.M = am[am.size() - 2], g.K = am.back();
  g.N = bm.back();
  if (bm[bm.size() - 2] != g.K) n.invalid("inner dimensions differ: A " + shape_str(a) + " and B " + shape_str(b));
  Shape ab(am.begin(), am.end() - 2), bb(bm.begin(), bm.end() - 2);
  if (!broadcast_shapes(ab, bb, &g.batch))
    n.invalid("batch dims of A " + shape_str(a) + " and B " + shape_str(b) + " cannot be broadcast together");
  g.a_st = batch_strides(g.batch, ab, g.M * g.K);
  g.b_st = batch_strides(g.batch, bb, g.K * g.N);
  *y = g.batch;
  if (a.size() > 1) y->push_back(g.M);
  if (b.size() > 1) y->push_back(g.N);
  return g;
}

const MatMulGeom& matmul_geom(const Node& n) { return op_as<MatMul>(n).geom(); }

void register_matmul(OpTable& t) { t["MatMul"] = make; }

}  // namespace onnxc
