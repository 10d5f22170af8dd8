// ir/ops/det.cc — Det(X) → Y: the determinant of each square matrix in the last two dims of
// X [*, M, M], Y [*] (a scalar for a 2-D X). float32 or float64; computed in double by LU
// decomposition with partial pivoting (det.h), rounded once. NaN or infinite entries give
// what the elimination gives (NaN, usually). Matrices larger than kDetMaxM x kDetMaxM (128)
// are refused: the C kernel factors each matrix in a stack buffer.
// Versions: 11, 22 (bfloat16). The C kernel is kernels/det.cc.
#include "ir/ops/det.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

// The determinant of the M x M row-major matrix a (overwritten), as det.h says.
double lu_det(std::vector<double>& a, int64_t M) {
  double det = 1;
  for (int64_t k = 0; k < M; ++k) {
    int64_t p = k;
    double best = std::fabs(a[static_cast<size_t>(k * M + k)]);
    for (int64_t i = k + 1; i < M; ++i) {
      double v = std::fabs(a[static_cast<size_t>(i * M + k)]);
      if (v > best) best = v, p = i;
    }
    if (a[static_cast<size_t>(p * M + k)] == 0) return 0;
    if (p != k) {
      for (int64_t j = 0; j < M; ++j) std::swap(a[static_cast<size_t>(k * M + j)], a[static_cast<size_t>(p * M + j)]);
      det = -det;
    }
    const double piv = a[static_cast<size_t>(k * M + k)];
    det *= piv;
    for (int64_t i = k + 1; i < M; ++i) {
      const double f = a[static_cast<size_t>(i * M + k)] / piv;
      for (int64_t j = k + 1; j < M; ++j) a[static_cast<size_t>(i * M + j)] -= f * a[static_cast<size_t>(k * M + j)];
    }
  }
  return det;
}

class Det : public Op {
 public:
  void infer(Node& n) override {
    if (n.inputs.size() != 1) n.invalid(fmt::format("expects 1 input, got {}", n.inputs.size()));
    const Value& x = need_input(n, 0, "X");
    expect_dtype(n, 0, {DType::F32, DType::F64});
    const Shape& xs = x.shape;
    if (xs.size() < 2 || xs[xs.size() - 1] != xs[xs.size() - 2])
      n.invalid(fmt::format("X {} must have rank >= 2 with square matrices in the last two dims", shape_str(xs)));
    g_.M = xs.back();
    if (g_.M > kDetMaxM) n.unsupported(fmt::format("matrices of {} x {} (X {}) are not supported; at most {} x {}", g_.M, g_.M, shape_str(xs), kDetMaxM, kDetMaxM));
    Shape y(xs.begin(), xs.end() - 2);
    g_.batch = numel(y);
    set_output(n, 0, x.dtype, y);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const int64_t mm = g_.M * g_.M;
    std::vector<double> a(static_cast<size_t>(mm));
    for (int64_t b = 0; b < g_.batch; ++b) {
      for (int64_t i = 0; i < mm; ++i) a[static_cast<size_t>(i)] = in[0]->get(b * mm + i);
      out[0].set(b, lu_det(a, g_.M));
    }
  }

  int64_t min_opset() const override { return 11; }
  const DetGeom& geom() const { return g_; }

 private:
  DetGeom g_;
};

}  // namespace

const DetGeom& det_geom(const Node& n) { return op_as<Det>(n).geom(); }

void register_det(OpTable& t) {
  t["Det"] = [] { return std::unique_ptr<Op>(std::make_unique<Det>()); };
}

}  // namespace onnxc
