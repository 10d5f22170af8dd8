// codegen/c/kernels/ew_loop.cc — see ew_loop.h.
#include "codegen/c/kernels/ew_loop.h"

#include "codegen/c/loops.h"
#include "ir/ops/elementwise.h"

namespace onnxc {

void emit_ew_loop(CEmit& e, const Shape& out, const std::vector<Shape>& ins,
                  const std::function<std::string(const std::vector<std::string>&, const std::string&)>& stmt, bool simd) {
  emit_broadcast_simd(e, out, ins, stmt, [simd](const std::string&, int64_t trip) { return simd && trip >= 4; });
}

bool ew_nchwc_ok(const Node& n, int64_t) {
  const Value* o = n.out(0);
  if (!o || o->dtype != DType::F32 || o->shape.size() < 3 || o->shape.size() > 5 || n.outputs.size() != 1) return false;
  for (const Value* v : n.inputs)
    if (v && v->dtype != DType::F32) return false;
  return true;
}

}  // namespace onnxc
