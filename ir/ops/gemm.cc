// ir/ops/gemm.cc — Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A (M x K),
// B' = transB ? B^T : B (K x N), A and B 2-D.
//
// C is optional (opset 11+) and broadcasts unidirectionally to M x N (scalar, [N], [1,N],
// [M,1], [M,N]...). Opsets 1-6 carry a `broadcast` attribute; it is accepted and C is
// always broadcast. float32 only. Shape inference resolves GemmAttrs (ir/ops/gemm.h); the C
// kernel is kernels/gemm.cc in the C backend.
// Versions: 1, 6, 7 (C broadcasts unidirectionally), 9, 11 (C optional), 13 (bfloat16);
// unchanged up to opset 28.
#include <fmt/format.h>

#include "ir/ops/gemm.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Gemm : public Op {
 public:
  void parse(AttrReader& a) override {
    g_.alpha = a.f("alpha", 1.0);
    g_.beta = a.f("beta", 1.0);
    g_.trans_a = a.i("transA", 0);
    g_.trans_b = a.i("transB", 0);
    if (a.opset() < 7) a.ignore("broadcast");
  }

  void infer(Node& n) override {
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || !n.in(0) || !n.in(1)) n.invalid("expects inputs A, B and optional C");
    if (n.opset < 11 && !n.in(2)) n.invalid("input C is required before opset 11");
    expect_float(n, 0);
    expect_float(n, 1);
    if (n.in(2)) expect_float(n, 2);
    if (g_.trans_a != 0 && g_.trans_a != 1) n.invalid("transA must be 0 or 1, got " + std::to_string(g_.trans_a));
    if (g_.trans_b != 0 && g_.trans_b != 1) n.invalid("transB must be 0 or 1, got " + std::to_string(g_.trans_b));
    const Shape& a = n.in(0)->shape;
    const Shape& b = n.in(1)->shape;
    if (a.size() != 2 || b.size() != 2) n.invalid("A " + shape_str(a) + " and B " + shape_str(b) + " must be 2-D");
    g_.M = g_.trans_a ? a[1] : a[0];
    g_.K = g_.trans_a ? a[0] : a[1];
    g_.N = g_.trans_b ? b[0] : b[1];
    int64_t kb = g_.trans_b ? b[1] : b[0];
    if (kb != g_.K)
      n.invalid(fmt::format("inner dimensions differ: A {} (transA={}) and B {} (transB={})", shape_str(a), g_.trans_a, shape_str(b),
                            g_.trans_b));
    g_.c_si = g_.c_sj = 0;
    if (Value* c = n.in(2)) {
      const Shape& cs = c->shape;
      Shape y = {g_.M, g_.N};
      bool ok = cs.size() <= 2;
      for (size_t d = 0; ok && d < cs.size(); ++d) {
        int64_t want = y[2 - cs.size() + d];
        ok = cs[d] == want || cs[d] == 1;
      }
      if (!ok) n.invalid("C " + shape_str(cs) + " does not broadcast to Y " + shape_str(y));
      // Strides of C along i and j (0 where it broadcasts).
      if (cs.size() == 2) {
        g_.c_si = cs[0] == 1 ? 0 : cs[1];
        g_.c_sj = cs[1] == 1 ? 0 : 1;
      } else if (cs.size() == 1) {
        g_.c_sj = cs[0] == 1 ? 0 : 1;
      }
    }
    set_output(n, 0, DType::F32, {g_.M, g_.N});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Tensor &a = *in[0], &b = *in[1];
    const Tensor* c = in.size() > 2 ? in[2] : nullptr;
    for (int64_t i = 0; i < g_.M; ++i)
      for (int64_t j = 0; j < g_.N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < g_.K; ++k)
          s += a.get(g_.trans_a ? k * g_.M + i : i * g_.K + k) * b.get(g_.trans_b ? j * g_.K + k : k * g_.N + j);
        double v = g_.alpha * s;
        if (c && g_.beta != 0.0) v += g_.beta * c->get(i * g_.c_si + j * g_.c_sj);
        out[0].set(i * g_.N + j, v);
      }
  }


  FusionKind kind() const override { return FusionKind::OutElementwiseFusable; }
  const GemmAttrs& attrs() const { return g_; }

 private:
  GemmAttrs g_;
};

std::unique_ptr<Op> make() { return std::make_unique<Gemm>(); }

}  // namespace

const GemmAttrs& gemm_attrs(const Node& n) { return op_as<Gemm>(n).attrs(); }

void register_gemm(OpTable& t) { t["Gemm"] = make; }

}  // namespace onnxc
