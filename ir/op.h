// ir/op.h — the interface every ONNX op implements, one file per op under ir/ops/.
//
// An Op object is created per node (ir/ops/registry.cc maps op types to factories) and
// holds that node's parsed attributes. It knows:
//   parse  — read attributes with ONNX defaults; unknown attributes are errors (AttrReader)
//   infer  — set output dtypes and static shapes; may read constant inputs (shape, axes...)
//   eval   — naive reference evaluation in C++ (constant folding, --verify, pass tests)
//   emit   — the body of this node's C function (codegen/c_emit.h)
//   kind   — TVM-style fusion kind, used by the fusion pass
// Inputs the op consumes at compile time (Reshape's shape, Clip's min/max, Pad's pads...)
// are declared with static_input(); they must be constants and are not passed to C.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

class CEmit;

enum class FusionKind { Elementwise, Broadcast, Injective, Reduction, OutElementwiseFusable, Opaque };

class Op {
 public:
  virtual ~Op() = default;
  virtual void parse(AttrReader& a) { (void)a; }
  virtual void infer(Node& n) = 0;
  // `in[i]` is nullptr for an absent input; `out[j]` arrives allocated with the inferred
  // dtype and shape of output j (empty for an absent output).
  virtual void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const = 0;
  virtual void emit(CEmit& e) const = 0;
  virtual FusionKind kind() const { return FusionKind::Opaque; }
  virtual bool static_input(size_t i) const { (void)i; return false; }
  // Oldest opset whose semantics this implementation follows. Most ops changed before
  // opset 7 (consumed_inputs, legacy broadcast), so that is the default.
  virtual int64_t min_opset() const { return 7; }

  // Layouts (ir/layout.h). eval() normally sees logical tensors; an op whose eval works on
  // the stored form (layout_transform) returns true here.
  virtual bool layout_native() const { return false; }
  // Whether emit() can run this node with its activations in NCHWc with block b (the
  // layout pass asks; the op then finds the layouts on its Values at emit time).
  virtual bool supports_nchwc(const Node& n, int64_t b) const { (void)n; (void)b; return false; }

  // Fusion: a side-effect-free C expression of output 0 for one element, given C
  // expressions of the inputs' elements (present inputs only; each may be evaluated more
  // than once). Empty when the node cannot be expressed this way (then it is not fused
  // into a loop).
  virtual std::string c_expr(const Node& n, const std::vector<std::string>& args) const {
    (void)n; (void)args;
    return {};
  }
};

using OpFactory = std::unique_ptr<Op> (*)();
OpFactory find_op(const std::string& op_type);
std::vector<std::string> supported_ops();  // sorted

// Helpers shared by ops.
// The constant value of a static input; fails with a clear message when it is not constant.
const Tensor& static_tensor(const Node& n, size_t i, const char* what);
void set_output(Node& n, size_t i, DType t, Shape s);
// Checks input i exists and has one of the given dtypes.
void expect_dtype(const Node& n, size_t i, std::initializer_list<DType> allowed);
void expect_float(const Node& n, size_t i);

}  // namespace onnxc
