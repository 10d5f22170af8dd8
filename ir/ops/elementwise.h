// ir/ops/elementwise.h — helpers shared by elementwise and broadcasting ops:
// multidirectional broadcast shapes, reference index maps and the C loop nest.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "codegen/c_emit.h"
#include "ir/op.h"

namespace onnxc {

// Broadcast shape of all present inputs; an invalid-model error naming the shapes otherwise.
Shape broadcast_inputs(const Node& n);
// For every element of `out` (C order), the flat index of the element of `in` it reads.
std::vector<int64_t> broadcast_index(const Shape& out, const Shape& in);
// Emits a loop nest over `out`; stmt() receives, per input shape, the C index expression
// of the element to read, and "i" for the output index; it returns one C statement.
void emit_broadcast(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                    const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt);

}  // namespace onnxc
