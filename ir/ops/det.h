// ir/ops/det.h — what Det publishes to backends (ir/ops/det.cc): X [batch..., M, M] viewed
// as `batch` matrices of M x M -> Y [batch...].
//
// The algorithm, shared by the reference eval and the C kernel: each matrix copied to double,
// LU decomposition with partial pivoting (the row with the largest |a[i][k]| at or below
// the diagonal, the first of equals; a row swap negates the sign); det = sign times the
// product of the pivots, 0 as soon as a pivot is exactly 0, rounded once to X's type.
// M = 0 gives 1. The C kernel keeps the matrix on the stack: M is at most kDetMaxM.
#pragma once
#include "ir/op.h"

namespace onnxc {

constexpr int64_t kDetMaxM = 128;  // 128 x 128 doubles = 128 KiB of stack per task

struct DetGeom {
  int64_t batch = 1, M = 0;
};
const DetGeom& det_geom(const Node& n);

}  // namespace onnxc
