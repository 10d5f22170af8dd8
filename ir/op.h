// ir/op.h — the interface every ONNX op implements, one file per op under ir/ops/: what
// the op means, never how a target runs it (that is the backends', one kernel family per
// file: kernels/ of the C backend).
//
// An Op object is created per node (ir/ops/registry.cc maps op types to factories) and
// holds that node's parsed attributes. It knows:
//   parse  — read attributes with ONNX defaults; unknown attributes are errors (AttrReader)
//   infer  — set output dtypes and static shapes; may read constant inputs (shape, axes...)
//   eval   — naive reference evaluation in C++ (constant folding, --verify, pass tests)
//   kind   — TVM-style fusion kind, used by the fusion pass
//   index_aligned — whether output elements depend only on the inputs' elements at the same
//            (broadcast) index (see is_index_aligned_elementwise)
// Inputs the op consumes at compile time (Reshape's shape, Clip's min/max, Pad's pads...)
// are declared with static_input(); they must be constants and are not passed to the
// generated code. What a backend needs beyond the node's values (parsed attributes,
// resolved geometry) an op publishes as a struct in its header, ir/ops/<op>.h, with an
// accessor taking the node (e.g. conv_geom(n)).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

enum class FusionKind { Elementwise, Broadcast, Injective, Reduction, OutElementwiseFusable, Opaque };

class Op {
 public:
  virtual ~Op() = default;
  virtual void parse(AttrReader& a) { (void)a; }
  virtual void infer(Node& n) = 0;
  // `in[i]` is nullptr for an absent input; `out[j]` arrives allocated with the inferred
  // dtype and shape of output j (empty for an absent output).
  virtual void eval(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const = 0;
  virtual FusionKind kind() const { return FusionKind::Opaque; }
  // Whether each element of output 0 is a function of the inputs' elements at the same
  // index under numpy broadcasting, and of nothing else (Relu, Add, Clip, Max...).
  virtual bool index_aligned() const { return false; }
  virtual bool static_input(size_t i) const { (void)i; return false; }
  // The opset that introduced the op (its first version); a node at an older opset is an
  // invalid model. Every later version up to the importer's newest opset is handled by
  // parse/infer, which implement each version's forms or refuse a specific one by name;
  // each op file lists the versions of its op.
  virtual int64_t min_opset() const { return 1; }

  // Layouts (ir/layout.h). eval() normally sees logical tensors; an op whose eval works on
  // the stored form (layout_transform) returns true here.
  virtual bool layout_native() const { return false; }
};

// The one answer to "is n computed element by element, in float32": an index-aligned op
// (Op::index_aligned) with exactly one output, not folded, whose output and runtime
// (non-static) inputs are float32. For a fused group it describes the anchor. The fusion
// pass chains such nodes into one loop; backends let them write over an input that dies
// there (memory planning asks Backend::may_inplace), and every backend can compute them
// one element at a time.
bool is_index_aligned_elementwise(const Node& n);

// The op of node n as its concrete class T (the accessors of ir/ops/<op>.h use it);
// an internal error when n holds another op.
template <class T>
const T& op_as(const Node& n) {
  const T* p = dynamic_cast<const T*>(n.op.get());
  ONNXC_ASSERT(p, n.where() + ": the node's op is not of the expected class");
  return *p;
}

using OpFactory = std::unique_ptr<Op> (*)();
OpFactory find_op(const std::string& op_type);
std::vector<std::string> supported_ops();  // sorted

// Helpers shared by ops.
// The constant value of a static input; fails with a clear message when it is absent or not constant.
const Tensor& static_tensor(const Node& n, size_t i, const char* what);
void set_output(Node& n, size_t i, DType t, Shape s);
// Checks input i exists and has one of the given dtypes.
void expect_dtype(const Node& n, size_t i, std::initializer_list<DType> allowed);
void expect_float(const Node& n, size_t i);

}  // namespace onnxc
