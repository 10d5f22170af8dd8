// codegen/c/kernels/registry.cc — the C kernel table: op type → kernel (see kernels.h).
#include "codegen/c/kernels/kernels.h"

namespace onnxc {

static CKernelTable build_table() {
  CKernelTable t;
  register_elementwise(t);
  register_conv(t);
  register_conv_transpose(t);
  register_norm(t);
  register_pool(t);
  register_global_pool(t);
  register_gemm(t);
  register_reduce(t);
  register_softmax(t);
  register_movement(t);
  register_layout_transform(t);
  register_pad(t);
  register_resize(t);
  register_constant(t);
  register_compare(t);
  register_math(t);
  register_activation(t);
  register_expand(t);
  register_reduce_more(t);
  register_argmax(t);
  register_layer_norm(t);
  register_attention(t);
  register_gather_scatter(t);
  register_trilu(t);
  register_cumsum(t);
  register_onehot(t);
  register_topk(t);
  register_stat_norm(t);
  register_loss(t);
  register_signal(t);
  register_einsum(t);
  register_grid_sample(t);
  register_roi_align(t);
  register_max_unpool(t);
  register_det(t);
  register_quantize(t);
  register_rnn(t);
  return t;
}

const CKernel* find_c_kernel(const std::string& op_type) {
  static const CKernelTable t = build_table();
  auto it = t.find(op_type);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace onnxc
