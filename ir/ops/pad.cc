// ir/ops/pad.cc — not implemented yet: registers no op, so models using it are rejected
// as unsupported with the op's name.
#include "ir/ops/ops.h"

namespace onnxc {

void register_pad(OpTable&) {}

}  // namespace onnxc
