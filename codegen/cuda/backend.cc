// codegen/cuda/backend.cc — the CUDA backend: plain NCHW float32 only. It answers the passes
// from the CUDA kernel table (codegen/cuda/kernels/kernels.h): no blocked layouts (the layout
// pass keeps every activation plain), plain weights (no packing), and no in-place reuse
// (conservative: every kernel reads its inputs and writes a separate output). It emits one
// `__global__` kernel per node or fused group and writes the module (codegen/cuda/module.h).
// A node or fused step it cannot run is refused at write_module, naming the node and op
// (exit 3 in compile-model).
#include "codegen/backend.h"
#include "codegen/cuda/kernels/kernels.h"
#include "codegen/cuda/module.h"
#include "ir/op.h"

namespace onnxc {

std::string cuda_unsupported_reason(const Node& n) {
  const CuKernel* k = find_cuda_kernel(n.op_type);
  if (!k) return n.op_type + " is not supported by the CUDA backend";
  auto f32 = [](const Value* v) { return !v || v->dtype == DType::F32; };
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.op->static_input(i) && (i == 0 || !k->data_input0_only) && !f32(n.inputs[i]))
      return n.op_type + " on " + n.in(i)->type_str() + " is not supported by the CUDA backend (float32 only)";
  for (const Value* v : n.outputs)
    if (!f32(v)) return n.op_type + " producing " + v->type_str() + " is not supported by the CUDA backend (float32 only)";
  if (k->ok && !k->ok(n)) return n.op_type + " with these attributes or outputs is not supported by the CUDA backend";
  for (auto& step : n.epilogue) {
    const CuKernel* s = find_cuda_kernel(step->op_type);
    if (!s || !s->expr)
      return n.op_type + " fused with " + step->op_type + " (node '" + step->name + "') is not supported by the CUDA backend";
  }
  if (!cu_epilogue_ok(n)) return n.op_type + " with a non-float32 fused step is not supported by the CUDA backend";
  return "";
}

CudaKernelCode emit_cuda_kernel(const Node& n, const NodeParams& p, const Target& t, GpuPrecision precision) {
  if (std::string why = cuda_unsupported_reason(n); !why.empty()) n.unsupported(why);
  const CuKernel* k = find_cuda_kernel(n.op_type);
  CuEmit e(n, t, p.inputs, p.outputs, p.extras);
  e.precision = precision;
  k->emit(e);
  if (!n.epilogue.empty() && !e.epilogue_done)
    n.unsupported(n.op_type + " with a fused epilogue (" + n.epilogue.front()->op_type + "...) is not supported by the CUDA backend");
  std::string kernel = n.op_type;
  if (!e.variant.empty()) kernel += " " + e.variant;
  if (!n.epilogue.empty() && !is_index_aligned_elementwise(n)) kernel += " + epilogue";
  return {e.body(), kernel, e.grid, e.block, e.range_check};
}

CudaKernelCode emit_cuda_lib_epilogue(const Node& n, const NodeParams& p, const Target& t, const std::string& bias) {
  CuEmit e(n, t, p.inputs, p.outputs, p.extras);
  e.flat(numel(n.out(0)->shape));
  const std::string y = e.out(0) + "[i]";
  e("{}", cu_epilogue(e, bias.empty() ? y : y + " + " + bias, "i", y));
  std::string kernel = bias.empty() ? "epilogue" : "bias";
  if (!bias.empty() && !n.epilogue.empty()) kernel += " + epilogue";
  return {e.body(), kernel + " in place", e.grid, e.block};
}

namespace {

class CudaBackend : public Backend {
 public:
  CudaBackend(const Target& t, const CudaOptions& o) : Backend(t), copt_(o) {}
  std::string name() const override { return "cuda"; }
  bool has_kernel(const std::string& op_type) const override { return find_cuda_kernel(op_type) != nullptr; }
  bool supports(const Node& n, const Layout& l) const override { return l.is_plain() && cuda_unsupported_reason(n).empty(); }
  bool may_inplace(const Node&, const Value&, const Value&) const override { return false; }
  Layout weight_layout(const Node&, size_t) const override { return Layout::plain(); }
  EmittedNode emit_node(const Node& n, const NodeParams& p) const override {
    CudaKernelCode c = emit_cuda_kernel(n, p, target());
    return {c.body, c.kernel};
  }
  CodegenResult write_module(const Graph& g, const CodegenOptions& o) const override { return emit_cuda_module(g, o, copt_, *this); }

 private:
  CudaOptions copt_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const Target& t, const CudaOptions& o) { return std::make_unique<CudaBackend>(t, o); }
std::unique_ptr<Backend> make_cuda_backend(const Target& t) { return make_cuda_backend(t, CudaOptions{}); }

}  // namespace onnxc
