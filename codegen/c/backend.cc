// codegen/c/backend.cc — the C backend: answers the passes from the kernel table
// (codegen/c/kernels/kernels.h), emits node functions through the kernels and the fused
// loops (codegen/c/fused.h), and writes the module (codegen/c/module.h).
#include <algorithm>

#include "codegen/backend.h"
#include "codegen/c/emit.h"
#include "codegen/c/fused.h"
#include "codegen/c/kernels/kernels.h"
#include "codegen/c/module.h"
#include "codegen/c/node.h"
#include "ir/op.h"

namespace onnxc {
namespace {

class CBackend : public Backend {
 public:
  CBackend(const Target& t, const COptions& o) : Backend(t), copt_(o) {}
  std::string name() const override { return "c"; }
  bool has_kernel(const std::string& op_type) const override { return find_c_kernel(op_type) != nullptr; }

  bool supports(const Node& n, const Layout& l) const override {
    const CKernel* k = find_c_kernel(n.op_type);
    if (!k) return false;
    if (l.is_plain()) return true;
    return l.is_nchwc() && k->nchwc && k->nchwc(n, l.block);
  }

  // The one-loop kernel of an index-aligned elementwise node reads each input at the
  // output's own index when the input has the output's shape, dtype and layout.
  bool may_inplace(const Node& n, const Value& out, const Value& in) const override {
    if (&out != n.out(0) || !is_index_aligned_elementwise(n)) return false;
    return in.dtype == out.dtype && in.nbytes() == out.nbytes() && in.shape == out.shape && in.layout == out.layout;
  }

  std::vector<int64_t> stored_in_output(const Node& n) const override { return inputs_in_output(n); }

  Layout weight_layout(const Node& n, size_t input) const override {
    const CKernel* k = find_c_kernel(n.op_type);
    return k && k->weight_layout ? k->weight_layout(n, input, target()) : Layout::plain();
  }

  bool takes_epilogue(const Node& n, const Node& step) const override {
    const CKernel* k = find_c_kernel(n.op_type);
    return k && k->takes_epilogue && k->takes_epilogue(n, step, target());
  }

  EmittedNode emit_node(const Node& n, const NodeParams& p) const override {
    CNodeCode c = emit_c_node(n, p, target());
    return {std::move(c.body.text), std::move(c.kernel)};
  }

  // The node's function emitted for `threads` threads: its widest parallel loop nest's
  // iterations (parallel_iterations, codegen/c/nest.h).
  int64_t parallel_items(const Node& n, int threads) const override {
    Target t = target();
    t.threads = threads;
    return parallel_iterations(emit_c_node(n, params_of(n), t).body.marks);
  }

  std::string describe_node(const Node& n) const override {
    const CNodeCode c = emit_c_node(n, params_of(n), target());
    return c.kernel + (c.plan.empty() ? "" : "; " + c.plan);
  }

  CodegenResult write_module(const Graph& g, const CodegenOptions& o) const override { return emit_c_module(g, o, copt_, *this); }

 private:
  // The parameter names emit_c_module gives a node's function.
  static NodeParams params_of(const Node& n) {
    NodeParams p;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      p.inputs.push_back(n.inputs[i] && !n.op->static_input(i) ? "x" + std::to_string(i) : "");
    for (size_t j = 0; j < n.outputs.size(); ++j) p.outputs.push_back(n.outputs[j] ? "y" + std::to_string(j) : "");
    for (size_t j = 0; j < n.extra_inputs.size(); ++j) p.extras.push_back("e" + std::to_string(j));
    return p;
  }

  COptions copt_;
};

}  // namespace

CNodeCode emit_c_node(const Node& n, const NodeParams& p, const Target& t) {
  CEmit e(n, t, p.inputs, p.outputs, p.extras);
  // "Conv nchw16c regular + epilogue": the op, the output layout, the kernel's variant, and
  // how a fused group's steps run (in the kernel, or as a loop after it).
  auto kernel = [&] {
    std::string k = n.op_type;
    const Value* o = n.out(0);
    if (o && !o->layout.is_plain()) k += " " + o->layout.str(o->shape.size());
    if (!e.variant.empty()) k += " " + e.variant;
    if (!n.epilogue.empty() && !is_index_aligned_elementwise(n)) k += e.epilogue_done ? " + epilogue" : " + fused loop";
    return k;
  };
  // A node whose outputs are all empty computes nothing (and its kernel never sees shapes
  // whose strides only an empty tensor can have).
  bool empty = true;
  for (const Value* v : n.outputs)
    if (v && numel(v->shape) != 0) empty = false;
  if (empty) {
    e("/* every output is empty: nothing to compute */");
    return {e.kernel_body(), n.op_type + " (empty)", "", ""};
  }
  const CKernel* k = find_c_kernel(n.op_type);
  ONNXC_ASSERT(k && k->emit, n.where() + ": the C backend has no kernel for " + n.op_type);
  if (n.epilogue.empty()) {
    k->emit(e);
  } else {
    if (!is_index_aligned_elementwise(n)) k->emit(e);
    if (!e.epilogue_done) emit_group_loop(e);
  }
  return {e.kernel_body(), kernel(), e.own_region, e.plan};
}

std::unique_ptr<Backend> make_c_backend(const Target& t, const COptions& o) { return std::make_unique<CBackend>(t, o); }
std::unique_ptr<Backend> make_c_backend(const Target& t) { return make_c_backend(t, COptions{}); }

}  // namespace onnxc
