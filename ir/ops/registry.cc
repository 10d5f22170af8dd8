// ir/ops/registry.cc — the op table: op type → factory (see ops.h).
#include <algorithm>

#include "ir/ops/ops.h"

namespace onnxc {

static OpTable build_table() {
  OpTable t;
  register_unary(t);
  register_binary(t);
  register_variadic(t);
  register_clip(t);
  register_conv(t);
  register_conv_transpose(t);
  register_batchnorm(t);
  register_lrn(t);
  register_pool(t);
  register_global_pool(t);
  register_gemm(t);
  register_matmul(t);
  register_reduce(t);
  register_softmax(t);
  register_flatten(t);
  register_reshape(t);
  register_transpose(t);
  register_concat(t);
  register_split(t);
  register_slice(t);
  register_squeeze(t);
  register_gather(t);
  register_shape(t);
  register_cast(t);
  register_pad(t);
  register_resize(t);
  register_identity(t);
  register_constant(t);
  register_compare(t);
  register_math(t);
  register_activation(t);
  register_expand(t);
  register_argmax(t);
  register_layer_norm(t);
  register_attention(t);
  register_gather_scatter(t);
  register_trilu(t);
  register_cumsum(t);
  register_onehot(t);
  register_depth_to_space(t);
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
  register_layout_transform(t);
  return t;
}

static const OpTable& table() {
  static const OpTable t = build_table();
  return t;
}

OpFactory find_op(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> r;
  for (auto& [k, f] : table())
    if (k.rfind("onnxc.", 0) != 0) r.push_back(k);  // internal ops (onnxc.*) are not listed
  return r;
}

}  // namespace onnxc
