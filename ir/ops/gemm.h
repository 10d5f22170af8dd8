// ir/ops/gemm.h — what Gemm and MatMul publish to backends: the resolved matrix product.
#pragma once
#include "ir/op.h"

namespace onnxc {

// Gemm: Y (M x N) = alpha * op(A) * op(B) + beta * C; op(A) is M x K (A stored K x M when
// trans_a), op(B) is K x N (B stored N x K when trans_b); C[i * c_si + j * c_sj] (0 strides
// broadcast).
struct GemmAttrs {
  double alpha = 1, beta = 1;
  int64_t trans_a = 0, trans_b = 0;
  int64_t M = 0, N = 0, K = 0, c_si = 0, c_sj = 0;
};
const GemmAttrs& gemm_attrs(const Node& n);

// MatMul: per batch index (batch dims broadcast), [M, K] x [K, N]; a_st / b_st are the
// element strides of A's / B's matrices per output batch dim, 0 where it broadcasts.
struct MatMulGeom {
  int64_t M = 0, N = 0, K = 0;
  Shape batch, a_st, b_st;
};
const MatMulGeom& matmul_geom(const Node& n);
// Resolves A [..., M, K] x B [..., K, N] with numpy's rules (a 1-D A is [1, K], a 1-D B is
// [K, 1], batch dims broadcast) and sets *y to the product's shape (the added dims removed).
// Shared by MatMul and the integer products; mismatched shapes are invalid.
MatMulGeom resolve_matmul(const Node& n, const Shape& a, const Shape& b, Shape* y);
// Element strides of an operand's batch dims `own` aligned right against `batch`, for
// matrices of `mat` elements; 0 where the operand broadcasts.
Shape batch_strides(const Shape& batch, const Shape& own, int64_t mat);

}  // namespace onnxc
