// codegen/c/emit.h — what a C kernel writes into: the body of one C function, and exact C
// literals.
//
// The module writer (codegen/c/module.cc) gives every emitted node a function
//   static void nK_name(const T* restrict x0, ..., T* restrict y0, ...)
// where xI is present, non-static input I and yJ is output J, with shapes as
// compile-time constants. A kernel (codegen/c/kernels/) writes the body line by line
// through operator() (CWriter, codegen/c/nest.h):
//   e("for (int64_t i = 0; i < {}; ++i) {{", n);  ... e("}}");
// Lines ending in '{' indent what follows; lines starting with '}' dedent. Parallel loop
// nests go in as data (e.open_nest, nest.h), and so do the statements beside them at the top
// of the body (e.local, e.open_scope, e.serial: what the one parallel region's forms read);
// vector hints as ONNXC_PRAGMA(omp simd) lines (pragmas vanish without OpenMP); whether a
// loop nest goes parallel is the target's answer (parallel(work), codegen/target.h).
// c_float()/c_int() print exact C literals.
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "codegen/c/nest.h"
#include "codegen/target.h"
#include "ir/graph.h"

namespace onnxc {

std::string c_float(double v);   // exact float32 literal: "0.5f", "-INFINITY", "NAN", "1.17549435e-38f"
std::string c_double(double v);  // exact double literal
std::string c_int(int64_t v);    // "42", "(-9223372036854775807LL - 1)"; LL suffix when outside int32
std::string c_literal(DType t, double v);  // a literal of type t (float, double or integer)

class CEmit : public CWriter {
 public:
  CEmit(const Node& n, const Target& t, std::vector<std::string> in_names, std::vector<std::string> out_names,
        std::vector<std::string> extra_names = {})
      : node(n), target(t), ins_(std::move(in_names)), outs_(std::move(out_names)), extras_(std::move(extra_names)) {}
  const Node& node;
  const Target& target;
  // Set by a kernel that applied node.epilogue (a fused group's steps) itself; otherwise the
  // backend follows the kernel with the group loop (codegen/c/fused.h).
  bool epilogue_done = false;
  // The variant a kernel chose ("plane", "nchwc depthwise"...), named in the per-op profile.
  std::string variant;
  // A kernel with a plan of its own (codegen/c/kernels/*_plan.h): the plan in one line
  // (describe()), which compile-model --dump-ir prints per node.
  std::string plan;
  // Set by a kernel whose loops keep their own fork/join inside the run's one parallel region
  // (codegen/c/region.h), saying why: the module calls it between two regions, as written.
  std::string own_region;
  // Whether a loop nest doing `work` scalar operations goes parallel (Target::parallel).
  bool parallel(double work) const { return target.parallel(work); }

  bool has_in(size_t i) const { return i < ins_.size() && !ins_[i].empty(); }
  const std::string& in(size_t i) const;
  const std::string& out(size_t i) const;
  // Name of the fused group's extra input k (node.extra_inputs[k]); empty when static.
  const std::string& extra(size_t k) const { return extras_.at(k); }
  const Shape& in_shape(size_t i) const { return node.in(i)->shape; }    // logical
  const Shape& out_shape(size_t i) const { return node.out(i)->shape; }  // logical
  // Shapes for elementwise/broadcast loops in the stored layout (ir/layout.h): logical
  // shapes when output 0 is plain; when it is NCHWc, its physical shape and each input's
  // NCHWc broadcast view. Elementwise ops index with these and work in either layout.
  Shape out_view(size_t i) const { return node.out(i)->physical_shape(); }
  Shape in_view(size_t i) const { return view_of(node.in(i)); }
  Shape view_of(const Value* v) const;
  const Layout& in_layout(size_t i) const { return node.in(i)->layout; }
  const Layout& out_layout(size_t i) const { return node.out(i)->layout; }
  DType in_dtype(size_t i) const { return node.in(i)->dtype; }
  DType out_dtype(size_t i) const { return node.out(i)->dtype; }
  const char* in_ctype(size_t i) const { return dtype_ctype(in_dtype(i)); }
  const char* out_ctype(size_t i) const { return dtype_ctype(out_dtype(i)); }

  using CWriter::operator();

 private:
  std::vector<std::string> ins_, outs_, extras_;
};

}  // namespace onnxc
