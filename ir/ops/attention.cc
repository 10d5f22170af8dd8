// ir/ops/attention.cc — Attention (23): scaled dot-product attention over heads,
//   Y = softmax(scale · Q·Kᵀ [softcapped] + bias) · V
// Inputs Q, K, V, and optional attn_mask, past_key, past_value, nonpad_kv_seqlen (24);
// outputs Y and optional present_key, present_value, qk_matmul_output.
//  - Q, K, V are 4-D [B, H, T, D] or 3-D [B, T, H * D] with q_num_heads and kv_num_heads
//    (the 3-D forms are split into heads, and Y joined back, as Reshape + Transpose would).
//    K and V may have fewer heads than Q (grouped-query attention): query head h reads
//    key/value head h / (Hq / Hkv). V's head size may differ from Q's and K's.
//  - past_key/past_value [B, Hkv, P, D] come before K/V's rows; present_key/present_value
//    are that concatenation.
//  - scale defaults to 1/sqrt(D). The bias is 0, plus attn_mask (added when float; a false
//    boolean masks the position: -inf), whose last dim may be shorter than the key length
//    (the missing keys are masked), broadcast to [B, Hq, Tq, Tk]; is_causal masks key j for
//    query i when j > i + offset, offset being the past length, or nonpad_kv_seqlen[b] - Tq
//    with that input (24), else 0; nonpad_kv_seqlen masks keys from nonpad_kv_seqlen[b] on;
//    left_window_size/right_window_size (25) mask keys farther than that before/after the
//    query's offset position.
//  - softcap > 0 maps the scaled product s to softcap · tanh(s / softcap) before the bias.
//  - A row whose every key is masked (all bias -inf) gives zeros, as ONNX's reference does.
//  - qk_matmul_output (output 3): the scaled product (mode 0), softcapped (1), with the bias
//    (2) or after the softmax (3); modes 1 and 2 as ONNX's reference and test data number
//    them (softcap, then bias).
// float32; softmax_precision is accepted and the softmax computed in float32 (float64 here).
// Versions: 23, 24 (nonpad_kv_seqlen), 25 (left_window_size, right_window_size); the same
// meanings up to opset 28. The C kernel is kernels/attention.cc in the C backend; the
// recognize pass (passes/recognize.cc) makes this op from exported MatMul/Softmax chains.
#include "ir/ops/attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Attention : public Op {
 public:
  void parse(AttrReader& a) override {
    causal_ = a.i("is_causal", 0) != 0;
    qh_ = a.opt_i("q_num_heads");
    kvh_ = a.opt_i("kv_num_heads");
    mode_ = a.i("qk_matmul_output_mode", 0);
    scale_ = a.opt_f("scale");
    softcap_ = a.f("softcap", 0.0);
    a.i("softmax_precision", 1);
    if (a.opset() >= 25) {
      left_ = a.i("left_window_size", -1);
      right_ = a.i("right_window_size", -1);
      if (left_ < -1 || right_ < -1) a.node().invalid(fmt::format("window sizes {} and {} must be -1 or at least 0", left_, right_));
    }
    if (mode_ < 0 || mode_ > 3) a.node().invalid(fmt::format("qk_matmul_output_mode {} is not 0, 1, 2 or 3", mode_));
    if (softcap_ < 0) a.node().invalid(fmt::format("softcap {} is negative", softcap_));
  }

  void infer(Node& n) override {
    size_t max_in = n.opset >= 24 ? 7 : 6;
    if (n.inputs.size() < 3 || n.inputs.size() > max_in || !n.in(0) || !n.in(1) || !n.in(2))
      n.invalid(fmt::format("expects inputs Q, K, V and up to {} optional ones", max_in - 3));
    if (n.outputs.size() > 4) n.invalid("has at most 4 outputs (Y, present_key, present_value, qk_matmul_output)");
    for (size_t i = 0; i < 3; ++i) {
      if (n.in(i)->dtype == DType::F16)
        n.unsupported(fmt::format("input {} is {}; onnxc computes Attention in float32 only", i, dtype_name(n.in(i)->dtype)));
      expect_dtype(n, i, {DType::F32});
    }
    const Shape &q = n.in(0)->shape, &k = n.in(1)->shape, &v = n.in(2)->shape;
    if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
      n.invalid(fmt::format("Q {}, K {} and V {} must all be 3-D or all 4-D", shape_str(q), shape_str(k), shape_str(v)));
    g_ = AttentionGeom{};
    g_.causal = causal_;
    g_.softcap = softcap_;
    g_.left = std::min(left_, 4 * kAttentionMaxOffset);
    g_.right = std::min(right_, 4 * kAttentionMaxOffset);
    g_.qk_mode = mode_;
    g_.in3d = q.size() == 3;
    g_.B = q[0];
    if (k[0] != g_.B || v[0] != g_.B) n.invalid(fmt::format("Q {}, K {} and V {} differ in batch", shape_str(q), shape_str(k), shape_str(v)));
    if (g_.in3d) {
      if (!qh_ || !kvh_) n.invalid("3-D Q, K and V need the q_num_heads and kv_num_heads attributes");
      g_.Hq = *qh_;
      g_.Hkv = *kvh_;
      if (g_.Hq <= 0 || g_.Hkv <= 0) n.invalid(fmt::format("q_num_heads {} and kv_num_heads {} must be positive", g_.Hq, g_.Hkv));
      if (q[2] % g_.Hq || k[2] % g_.Hkv || v[2] % g_.Hkv)
        n.invalid(fmt::format("hidden sizes of Q {}, K {} and V {} are not multiples of q_num_heads {} and kv_num_heads {}", q[2], k[2],
                              v[2], g_.Hq, g_.Hkv));
      g_.Tq = q[1];
      g_.Tnew = k[1];
      if (v[1] != k[1]) n.invalid(fmt::format("K {} and V {} differ in sequence length", shape_str(k), shape_str(v)));
      g_.D = q[2] / g_.Hq;
      if (k[2] / g_.Hkv != g_.D)
        n.invalid(fmt::format("Q's head size {} and K's {} differ (hidden sizes {} and {})", g_.D, k[2] / g_.Hkv, q[2], k[2]));
      g_.Dv = v[2] / g_.Hkv;
      g_.q = {g_.Tq * q[2], g_.D, q[2]};
      g_.k = {g_.Tnew * k[2], g_.D, k[2]};
      g_.v = {g_.Tnew * v[2], g_.Dv, v[2]};
    } else {
      g_.Hq = q[1];
      g_.Hkv = k[1];
      g_.Tq = q[2];
      g_.Tnew = k[2];
      g_.D = q[3];
      g_.Dv = v[3];
      if (qh_ && *qh_ != g_.Hq) n.invalid(fmt::format("q_num_heads {} differs from Q's heads {}", *qh_, g_.Hq));
      if (kvh_ && *kvh_ != g_.Hkv) n.invalid(fmt::format("kv_num_heads {} differs from K's heads {}", *kvh_, g_.Hkv));
      if (v[1] != g_.Hkv || v[2] != g_.Tnew || k[3] != g_.D)
        n.invalid(fmt::format("Q {}, K {} and V {} do not agree in heads, length or head size", shape_str(q), shape_str(k), shape_str(v)));
      g_.q = {g_.Hq * g_.Tq * g_.D, g_.Tq * g_.D, g_.D};
      g_.k = {g_.Hkv * g_.Tnew * g_.D, g_.Tnew * g_.D, g_.D};
      g_.v = {g_.Hkv * g_.Tnew * g_.Dv, g_.Tnew * g_.Dv, g_.Dv};
    }
    if (g_.Hq % g_.Hkv != 0) n.invalid(fmt::format("{} query heads are not a multiple of {} key/value heads", g_.Hq, g_.Hkv));
    // past_key / past_value.
    const Value *pk = n.in(4), *pv = n.in(5);
    if (!pk != !pv) n.invalid("past_key and past_value come together");
    if (pk) {
      for (size_t i : {4, 5}) expect_dtype(n, i, {DType::F32});
      const Shape &a = pk->shape, &b = pv->shape;
      if (a.size() != 4 || b.size() != 4 || a[0] != g_.B || b[0] != g_.B || a[1] != g_.Hkv || b[1] != g_.Hkv || a[2] != b[2] ||
          a[3] != g_.D || b[3] != g_.Dv)
        n.invalid(fmt::format("past_key {} and past_value {} must be [{}, {}, P, {}] and [{}, {}, P, {}]", shape_str(a), shape_str(b), g_.B,
                              g_.Hkv, g_.D, g_.B, g_.Hkv, g_.Dv));
      g_.past = a[2];
    }
    g_.Tk = g_.past + g_.Tnew;
    g_.pk = {g_.Hkv * g_.past * g_.D, g_.past * g_.D, g_.D};
    g_.pv = {g_.Hkv * g_.past * g_.Dv, g_.past * g_.Dv, g_.Dv};
    // nonpad_kv_seqlen.
    if (const Value* np = n.in(6)) {
      expect_dtype(n, 6, {DType::I64});
      if (np->shape != Shape{g_.B}) n.invalid(fmt::format("nonpad_kv_seqlen {} must be [{}]", shape_str(np->shape), g_.B));
      if (pk) n.invalid("nonpad_kv_seqlen cannot be combined with past_key and past_value");
      g_.has_nonpad = true;
    }
    // attn_mask: right-aligned broadcast to [B, Hq, Tq, Tk], last dim at most Tk.
    if (const Value* m = n.in(3)) {
      expect_dtype(n, 3, {DType::F32, DType::Bool});
      const Shape& s = m->shape;
      g_.has_mask = true;
      g_.mask_bool = m->dtype == DType::Bool;
      if (s.empty() || s.size() > 4) n.invalid(fmt::format("attn_mask {} must have 1 to 4 dims", shape_str(s)));
      const Shape full{g_.B, g_.Hq, g_.Tq, g_.Tk};
      const Shape st = strides_of(s);
      int64_t* strides[4] = {&g_.mb, &g_.mh, &g_.mi, &g_.mj};
      for (size_t d = 0; d < s.size(); ++d) {
        size_t f = 4 - s.size() + d;
        bool last = d + 1 == s.size();
        if (last ? s[d] > full[f] || s[d] < 1 : s[d] != 1 && s[d] != full[f])
          n.invalid(fmt::format("attn_mask {} does not broadcast to [batch, q heads, q length, key length] = {}", shape_str(s), shape_str(full)));
        *strides[f] = s[d] == 1 && !last ? 0 : st[d];
      }
      g_.mask_len = s.back();  // keys past it are masked, as ONNX pads the mask with -inf
    }
    for (int64_t d : {g_.B, g_.Hq, g_.Tq, g_.Tk, g_.D, g_.Dv})
      if (d == 0) n.unsupported(fmt::format("Q {}, K {} and V {} (with the past rows) have an empty dim", shape_str(q), shape_str(k), shape_str(v)));
    g_.scale = scale_ ? *scale_ : 1.0 / std::sqrt(static_cast<double>(g_.D));
    Shape y = g_.in3d ? Shape{g_.B, g_.Tq, g_.Hq * g_.Dv} : Shape{g_.B, g_.Hq, g_.Tq, g_.Dv};
    g_.y = g_.in3d ? HeadStrides{g_.Tq * g_.Hq * g_.Dv, g_.Dv, g_.Hq * g_.Dv} : HeadStrides{g_.Hq * g_.Tq * g_.Dv, g_.Tq * g_.Dv, g_.Dv};
    set_output(n, 0, DType::F32, y);
    if (n.out(1)) set_output(n, 1, DType::F32, {g_.B, g_.Hkv, g_.Tk, g_.D});
    if (n.out(2)) set_output(n, 2, DType::F32, {g_.B, g_.Hkv, g_.Tk, g_.Dv});
    if (n.out(3)) set_output(n, 3, DType::F32, {g_.B, g_.Hq, g_.Tq, g_.Tk});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const AttentionGeom& g = g_;
    auto at = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
    const Tensor *Q = in[0], *K = in[1], *V = in[2], *M = at(3), *PK = at(4), *PV = at(5), *NP = at(6);
    const double inf = std::numeric_limits<double>::infinity();
    auto key = [&](int64_t b, int64_t hk, int64_t j, int64_t d) {
      return j < g.past ? PK->get(b * g.pk.sb + hk * g.pk.sh + j * g.pk.st + d) : K->get(b * g.k.sb + hk * g.k.sh + (j - g.past) * g.k.st + d);
    };
    auto val = [&](int64_t b, int64_t hk, int64_t j, int64_t d) {
      return j < g.past ? PV->get(b * g.pv.sb + hk * g.pv.sh + j * g.pv.st + d) : V->get(b * g.v.sb + hk * g.v.sh + (j - g.past) * g.v.st + d);
    };
    for (int64_t b = 0; b < g.B; ++b) {
      for (int64_t hk = 0; hk < g.Hkv; ++hk)
        for (int64_t j = 0; j < g.Tk; ++j) {
          if (out.size() > 1 && !out[1].bytes.empty())
            for (int64_t d = 0; d < g.D; ++d) out[1].set(((b * g.Hkv + hk) * g.Tk + j) * g.D + d, key(b, hk, j, d));
          if (out.size() > 2 && !out[2].bytes.empty())
            for (int64_t d = 0; d < g.Dv; ++d) out[2].set(((b * g.Hkv + hk) * g.Tk + j) * g.Dv + d, val(b, hk, j, d));
        }
      const int64_t np = NP ? std::clamp<int64_t>(NP->get_i64(b), -kAttentionMaxOffset, kAttentionMaxOffset) : 0;
      const int64_t valid = NP ? std::clamp<int64_t>(np, 0, g.Tk) : g.Tk;
      const int64_t offset = g.past > 0 ? g.past : NP ? np - g.Tq : 0;
      for (int64_t h = 0; h < g.Hq; ++h) {
        const int64_t hk = h / (g.Hq / g.Hkv);
        for (int64_t i = 0; i < g.Tq; ++i) {
          std::vector<double> s(g.Tk), bias(g.Tk, 0.0);
          bool any = false;
          for (int64_t j = 0; j < g.Tk; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < g.D; ++d) dot += Q->get(b * g.q.sb + h * g.q.sh + i * g.q.st + d) * key(b, hk, j, d);
            s[j] = dot * g.scale;
            if (g.qk_mode == 0 && out.size() > 3 && !out[3].bytes.empty()) out[3].set(((b * g.Hq + h) * g.Tq + i) * g.Tk + j, s[j]);
            if (g.softcap > 0) s[j] = g.softcap * std::tanh(s[j] / g.softcap);
            double& bj = bias[j];
            if (M) {
              if (j >= g.mask_len) bj = -inf;
              else {
                double m = M->get(b * g.mb + h * g.mh + i * g.mi + j * g.mj);
                bj = g.mask_bool ? (m != 0 ? 0.0 : -inf) : m;
              }
            }
            const int64_t diff = i + offset - j;
            if (g.causal && diff < 0) bj = -inf;
            if ((g.left >= 0 && diff > g.left) || (g.right >= 0 && -diff > g.right)) bj = -inf;
            if (j >= valid) bj = -inf;
            if (g.qk_mode == 1 && out.size() > 3 && !out[3].bytes.empty()) out[3].set(((b * g.Hq + h) * g.Tq + i) * g.Tk + j, s[j]);
            s[j] += bj;
            if (g.qk_mode == 2 && out.size() > 3 && !out[3].bytes.empty()) out[3].set(((b * g.Hq + h) * g.Tq + i) * g.Tk + j, s[j]);
            any = any || bj != -inf;
          }
          double mx = -inf, sum = 0;
          for (double x : s) mx = std::fmax(mx, x);
          std::vector<double> p(g.Tk, 0.0);
          if (any && mx != -inf) {
            for (int64_t j = 0; j < g.Tk; ++j) sum += p[j] = std::exp(s[j] - mx);
            for (double& x : p) x /= sum;
          }
          if (g.qk_mode == 3 && out.size() > 3 && !out[3].bytes.empty())
            for (int64_t j = 0; j < g.Tk; ++j) out[3].set(((b * g.Hq + h) * g.Tq + i) * g.Tk + j, p[j]);
          for (int64_t d = 0; d < g.Dv; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < g.Tk; ++j)
              acc += p[j] * val(b, hk, j, d);
            out[0].set(b * g.y.sb + h * g.y.sh + i * g.y.st + d, acc);
          }
        }
      }
    }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 23; }
  const AttentionGeom& geom() const { return g_; }

 private:
  bool causal_ = false;
  int64_t mode_ = 0, left_ = -1, right_ = -1;
  double softcap_ = 0;
  std::optional<int64_t> qh_, kvh_;
  std::optional<double> scale_;
  AttentionGeom g_;
};

}  // namespace

const AttentionGeom& attention_geom(const Node& n) { return op_as<Attention>(n).geom(); }

void register_attention(OpTable& t) {
  t["Attention"] = [] { return std::unique_ptr<Op>(std::make_unique<Attention>()); };
}

}  // namespace onnxc
