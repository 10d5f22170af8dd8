// ir/ops/matmul.cc — MatMul with numpy semantics: A [..., M, K] x B [..., K, N] → [..., M, N],
// batch dims broadcast; a 1-D A is [1, K] and a 1-D B is [K, 1], the added dim removed
// from the result.
//
// The loop nest is emit_gemm (pool_gemm.cc). When B has no batch of its own and A's batches
// are contiguous (activations times a weight matrix), the batch folds into M so the tiles see
// one tall matrix. float32 only.
#include "ir/ops/ops.h"
#include "ir/ops/pool_gemm.h"

namespace onnxc {
namespace {

class MatMul : public Op {
 public:
  void infer(Node& n) override {
    if (n.inputs.size() != 2 || !n.in(0) || !n.in(1)) n.invalid("expects exactly 2 inputs");
    expect_float(n, 0);
    expect_float(n, 1);
    const Shape& a = n.in(0)->shape;
    const Shape& b = n.in(1)->shape;
    if (a.empty() || b.empty()) n.invalid("inputs " + shape_str(a) + " and " + shape_str(b) + " must have rank >= 1");
    Shape am = a.size() == 1 ? Shape{1, a[0]} : a;
    Shape bm = b.size() == 1 ? Shape{b[0], 1} : b;
    M_ = am[am.size() - 2], K_ = am.back();
    N_ = bm.back();
    if (bm[bm.size() - 2] != K_) n.invalid("inner dimensions differ: A " + shape_str(a) + " and B " + shape_str(b));
    Shape ab(am.begin(), am.end() - 2), bb(bm.begin(), bm.end() - 2);
    if (!broadcast_shapes(ab, bb, &batch_))
      n.invalid("batch dims of A " + shape_str(a) + " and B " + shape_str(b) + " cannot be broadcast together");
    a_st_ = aligned(ab, M_ * K_);
    b_st_ = aligned(bb, K_ * N_);
    Shape y = batch_;
    if (a.size() > 1) y.push_back(M_);
    if (b.size() > 1) y.push_back(N_);
    set_output(n, 0, DType::F32, y);
  }

  // Element strides of an operand's batch dims aligned right against batch_, 0 on broadcast.
  Shape aligned(const Shape& own, int64_t mat) const {
    Shape st(batch_.size(), 0), cont = strides_of(own);
    size_t off = batch_.size() - own.size();
    for (size_t d = 0; d < own.size(); ++d) st[off + d] = own[d] == 1 ? 0 : cont[d] * mat;
    return st;
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor &a = *in[0], &b = *in[1];
    int64_t batch = numel(batch_);
    Shape cont = strides_of(batch_);
    for (int64_t bt = 0; bt < batch; ++bt) {
      int64_t ao = 0, bo = 0;
      for (size_t d = 0; d < batch_.size(); ++d) {
        int64_t idx = bt / cont[d] % batch_[d];
        ao += idx * a_st_[d];
        bo += idx * b_st_[d];
      }
      for (int64_t i = 0; i < M_; ++i)
        for (int64_t j = 0; j < N_; ++j) {
          double s = 0;
          for (int64_t k = 0; k < K_; ++k) s += a.get(ao + i * K_ + k) * b.get(bo + k * N_ + j);
          out[0].set((bt * M_ + i) * N_ + j, s);
        }
    }
  }

  void emit(CEmit& e) const override {
    GemmSpec g;
    g.M = M_, g.N = N_, g.K = K_;
    g.a = e.in(0), g.b = e.in(1), g.y = e.out(0);
    g.batch_shape = batch_, g.a_bstride = a_st_, g.b_bstride = b_st_;
    bool b_shared = true, a_full = true;
    Shape cont = strides_of(batch_);
    for (size_t d = 0; d < batch_.size(); ++d) {
      b_shared = b_shared && (b_st_[d] == 0 || batch_[d] == 1);
      a_full = a_full && (batch_[d] == 1 || a_st_[d] == cont[d] * M_ * K_);
    }
    if (b_shared && a_full) {  // [..., M, K] x [K, N]: one (batch * M) x K product
      g.M = numel(batch_) * M_;
      g.batch_shape.clear(), g.a_bstride.clear(), g.b_bstride.clear();
    }
    emit_gemm(e, g);
  }

  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }

 private:
  int64_t M_ = 0, N_ = 0, K_ = 0;
  Shape batch_, a_st_, b_st_;
};

std::unique_ptr<Op> make() { return std::make_unique<MatMul>(); }

}  // namespace

void register_matmul(OpTable& t) { t["MatMul"] = make; }

}  // namespace onnxc
