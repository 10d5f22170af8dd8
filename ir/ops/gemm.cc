// ir/ops/gemm.cc — not implemented yet: registers no op, so models using it are rejected
// as unsupported with the op's name.
#include "ir/ops/ops.h"

namespace onnxc {

void register_gemm(OpTable&) {}

}  // namespace onnxc
