// ir/ops/attention.h — what Attention publishes to backends: the problem as heads of
// [T, D] rows, where every tensor's element (b, h, t, d) sits at b * sb + h * sh + t * st + d
// (the 3-D form [B, T, H * D] and the 4-D form [B, H, T, D] are two sets of strides), the
// key/value sequence as `past` rows from past_key/past_value followed by the new ones, the
// mask's broadcast strides over (b, h, i, j), and the scalar attributes.
#pragma once
#include "ir/op.h"

namespace onnxc {

// nonpad_kv_seqlen values are clamped to ±2^40, and window sizes to 2^42, before any arithmetic
// (no overflow; every mask they give is the same as with the value itself, as sequences are shorter).
constexpr int64_t kAttentionMaxOffset = int64_t{1} << 40;

struct HeadStrides {
  int64_t sb = 0, sh = 0, st = 0;  // element strides of batch, head, position (d is 1)
};

struct AttentionGeom {
  int64_t B = 1, Hq = 1, Hkv = 1;  // batch, query heads, key/value heads (Hq % Hkv == 0)
  int64_t Tq = 1;                  // queries
  int64_t past = 0, Tnew = 0, Tk = 0;  // key rows from past_key, from K, and their sum
  int64_t D = 1, Dv = 1;           // head sizes of Q/K and of V
  bool in3d = false;               // Q, K, V and Y are [B, T, H * D] (else [B, H, T, D])
  HeadStrides q, k, v, y;          // Q, K, V (the new rows) and Y
  HeadStrides pk, pv;              // past_key / past_value and present_key / present_value (4-D)
  double scale = 1;                // applied to Q·K (the default 1/sqrt(D) resolved)
  double softcap = 0;              // > 0: s = softcap * tanh(s / softcap) before the mask
  bool causal = false;
  int64_t left = -1, right = -1;   // sliding window around the (offset) diagonal; -1 = unbounded (clamped, above)
  // attn_mask (input 3): absent, boolean (false masks) or added; broadcast strides over
  // (b, h, i, j) and its last dim, which may be shorter than Tk (the rest is masked).
  bool has_mask = false, mask_bool = false;
  int64_t mb = 0, mh = 0, mi = 0, mj = 0, mask_len = 0;
  bool has_nonpad = false;         // nonpad_kv_seqlen (input 6): valid keys per batch
  int64_t qk_mode = 0;             // what output 3 (qk_matmul_output), when present, holds
};
const AttentionGeom& attention_geom(const Node& n);

}  // namespace onnxc
