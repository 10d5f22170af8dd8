// ir/ops/gemm.cc — Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (M x K),
// B' = transB ? B^T : B (K x N), A and B 2-D.
//
// C is optional (opset 11+) and broadcasts unidirectionally to M x N (scalar, [N], [1,N],
// [M,1], [M,N]...). Opsets 1-6 carry a `broadcast` attribute; it is accepted and C is
// always broadcast. The loop nest is emit_gemm (pool_gemm.cc): the batch-1 classifier layer
// (transB, M = 1) is a parallel set of contiguous dot products, anything larger a blocked
// i, k, j loop. float32 only.
#include "ir/ops/ops.h"
#include "ir/ops/pool_gemm.h"

namespace onnxc {
namespace {

class Gemm : public Op {
 public:
  void parse(AttrReader& a) override {
    alpha_ = a.f("alpha", 1.0);
    beta_ = a.f("beta", 1.0);
    trans_a_ = a.i("transA", 0);
    trans_b_ = a.i("transB", 0);
    if (a.opset() < 7) a.ignore("broadcast");
  }

  void infer(Node& n) override {
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || !n.in(0) || !n.in(1)) n.invalid("expects inputs A, B and optional C");
    if (n.opset < 11 && !n.in(2)) n.invalid("input C is required before opset 11");
    expect_float(n, 0);
    expect_float(n, 1);
    if (n.in(2)) expect_float(n, 2);
    if (trans_a_ != 0 && trans_a_ != 1) n.invalid("transA must be 0 or 1, got " + std::to_string(trans_a_));
    if (trans_b_ != 0 && trans_b_ != 1) n.invalid("transB must be 0 or 1, got " + std::to_string(trans_b_));
    const Shape& a = n.in(0)->shape;
    const Shape& b = n.in(1)->shape;
    if (a.size() != 2 || b.size() != 2) n.invalid("A " + shape_str(a) + " and B " + shape_str(b) + " must be 2-D");
    M_ = trans_a_ ? a[1] : a[0];
    K_ = trans_a_ ? a[0] : a[1];
    N_ = trans_b_ ? b[0] : b[1];
    int64_t kb = trans_b_ ? b[1] : b[0];
    if (kb != K_)
      n.invalid(fmt::format("inner dimensions differ: A {} (transA={}) and B {} (transB={})", shape_str(a), trans_a_, shape_str(b),
                            trans_b_));
    c_si_ = c_sj_ = 0;
    if (Value* c = n.in(2)) {
      const Shape& cs = c->shape;
      Shape y = {M_, N_};
      bool ok = cs.size() <= 2;
      for (size_t d = 0; ok && d < cs.size(); ++d) {
        int64_t want = y[2 - cs.size() + d];
        ok = cs[d] == want || cs[d] == 1;
      }
      if (!ok) n.invalid("C " + shape_str(cs) + " does not broadcast to Y " + shape_str(y));
      // Strides of C along i and j (0 where it broadcasts).
      if (cs.size() == 2) {
        c_si_ = cs[0] == 1 ? 0 : cs[1];
        c_sj_ = cs[1] == 1 ? 0 : 1;
      } else if (cs.size() == 1) {
        c_sj_ = cs[0] == 1 ? 0 : 1;
      }
    }
    set_output(n, 0, DType::F32, {M_, N_});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor &a = *in[0], &b = *in[1];
    const Tensor* c = in.size() > 2 ? in[2] : nullptr;
    for (int64_t i = 0; i < M_; ++i)
      for (int64_t j = 0; j < N_; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K_; ++k)
          s += a.get(trans_a_ ? k * M_ + i : i * K_ + k) * b.get(trans_b_ ? j * K_ + k : k * N_ + j);
        double v = alpha_ * s;
        if (c && beta_ != 0.0) v += beta_ * c->get(i * c_si_ + j * c_sj_);
        out[0].set(i * N_ + j, v);
      }
  }

  void emit(CEmit& e) const override {
    GemmSpec g;
    g.M = M_, g.N = N_, g.K = K_;
    g.a = e.in(0), g.b = e.in(1), g.y = e.out(0);
    g.trans_a = trans_a_, g.trans_b = trans_b_;
    g.alpha = alpha_;
    if (e.has_in(2) && beta_ != 0.0) {
      g.c = e.in(2), g.beta = beta_, g.c_si = c_si_, g.c_sj = c_sj_;
    }
    emit_gemm(e, g);
  }

  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }

 private:
  double alpha_ = 1, beta_ = 1;
  int64_t trans_a_ = 0, trans_b_ = 0;
  int64_t M_ = 0, N_ = 0, K_ = 0, c_si_ = 0, c_sj_ = 0;
};

std::unique_ptr<Op> make() { return std::make_unique<Gemm>(); }

}  // namespace

void register_gemm(OpTable& t) { t["Gemm"] = make; }

}  // namespace onnxc
