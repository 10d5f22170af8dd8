// ir/ops/pool_gemm.h — the matrix-product loop nest shared by Gemm and MatMul (pool group).
//
// Y[bt] (M x N, row-major, contiguous batches) = alpha * op(A[bt]) * op(B[bt]) + beta * C
// for bt < batch, float32. op(A) is M x K (A stored K x M when trans_a), op(B) is K x N
// (B stored N x K when trans_b). Batch offsets of A and B come from the broadcast batch
// shape and per-dim element strides (0 = broadcast). C, when named, is indexed
// C[i * c_si + j * c_sj] (0 strides broadcast) and is the same for every batch.
#pragma once
#include <string>

#include "codegen/c_emit.h"

namespace onnxc {

struct GemmSpec {
  int64_t M = 0, N = 0, K = 0;
  std::string a, b, y;           // C array names
  bool trans_a = false, trans_b = false;
  Shape batch_shape;             // output batch dims (empty: one product)
  Shape a_bstride, b_bstride;    // element stride of A / B per batch dim, 0 on broadcast
  double alpha = 1.0;
  std::string c;                 // bias array, empty for none
  double beta = 1.0;
  int64_t c_si = 0, c_sj = 0;
};

// Writes the loop nest into e. Large products get OpenMP parallel tiles.
void emit_gemm(CEmit& e, const GemmSpec& g);

}  // namespace onnxc
