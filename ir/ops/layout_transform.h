// ir/ops/layout_transform.h — what onnxc.layout_transform publishes to backends: the block
// sizes it converts between (0 = plain NCHW).
#pragma once
#include "ir/op.h"

namespace onnxc {

struct LayoutTransformBlocks {
  int64_t from = 0, to = 0;
};
LayoutTransformBlocks layout_transform_blocks(const Node& n);

}  // namespace onnxc
