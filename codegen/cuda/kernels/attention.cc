// codegen/cuda/kernels/attention.cc — Attention (ir/ops/attention.cc), LayerNormalization and
// RMSNormalization (ir/ops/layer_norm.cc) in CUDA: the ops the recognize pass puts back in
// transformer exports, one thread per row, plain and simple (the C backend's kernels are the
// fast ones).
//  Attention: one thread per (batch, query head, query): for each key in turn, the scaled
//    product (softcapped), the bias (attn_mask added, causal and window masks as -inf), and an
//    online-softmax step: the running maximum m, the sum l rescaled by e^(m_old - m), the Dv
//    output accumulators (a local array) rescaled and added p · V[j]; Y = o / l, 0 for a row
//    with every key masked. Keys j < past come from past_key/past_value. Not here: the
//    present_key/present_value and qk_matmul_output outputs, nonpad_kv_seqlen, boolean masks
//    (the node stays on the C backend: --device cuda refuses it by name).
//  LayerNormalization / RMSNormalization: one thread per row, mean and variance in double as the
//    C kernel, then Y (and Mean and InvStdDev when asked).
#include <fmt/format.h>

#include "codegen/cuda/kernels/kernels.h"
#include "ir/ops/attention.h"
#include "ir/ops/layer_norm.h"

namespace onnxc {
namespace {

std::string term(const std::string& v, int64_t stride) {
  return stride == 0 ? "0" : stride == 1 ? v : fmt::format("{} * {}", v, stride);
}

void emit_attention(CuEmit& e) {
  const AttentionGeom& g = attention_geom(e.node);
  e.flat(g.B * g.Hq * g.Tq);
  e("const int64_t qi = i % {};", g.Tq);
  e("const int64_t h = (i / {}) % {};", g.Tq, g.Hq);
  e("const int64_t b = i / {};", g.Tq * g.Hq);
  e("const int64_t hk = h / {};", g.Hq / g.Hkv);
  e("const float* __restrict__ q = {} + {} + {} + {};", e.in(0), term("b", g.q.sb), term("h", g.q.sh), term("qi", g.q.st));
  auto row = [&](size_t in, size_t past_in, const HeadStrides& s, const HeadStrides& ps) {
    std::string cur = fmt::format("{} + {} + {} + {}", e.in(in), term("b", s.sb), term("hk", s.sh),
                                  term(g.past ? fmt::format("(j - {})", g.past) : "j", s.st));
    if (g.past == 0) return cur;
    return fmt::format("(j < {} ? {} + {} + {} + {} : {})", g.past, e.in(past_in), term("b", ps.sb), term("hk", ps.sh), term("j", ps.st), cur);
  };
  e("float m = -INFINITY, l = 0.0f;");
  e("float o[{}];", g.Dv);
  e("for (int64_t d = 0; d < {}; ++d) o[d] = 0.0f;", g.Dv);
  e("for (int64_t j = 0; j < {}; ++j) {{", g.Tk);
  e("const float* __restrict__ kr = {};", row(1, 4, g.k, g.pk));
  e("float s = 0.0f;");
  e("for (int64_t d = 0; d < {}; ++d) s = fmaf(q[d], kr[d], s);", g.D);
  e("s *= {};", c_float(g.scale));
  if (g.softcap > 0) e("s = {} * tanhf(s * {});", c_float(g.softcap), c_float(1.0 / g.softcap));
  if (g.has_mask) {
    std::string v = fmt::format("{}[{} + {} + {} + {}]", e.in(3), term("b", g.mb), term("h", g.mh), term("qi", g.mi), term("j", g.mj));
    e("s += {};", g.mask_len < g.Tk ? fmt::format("(j < {} ? {} : -INFINITY)", g.mask_len, v) : v);
  }
  if (g.causal || g.left >= 0 || g.right >= 0) e("const int64_t diff = qi + {} - j;", g.past);
  if (g.causal) e("if (diff < 0) s = -INFINITY;");
  if (g.left >= 0) e("if (diff > {}) s = -INFINITY;", g.left);
  if (g.right >= 0) e("if (-diff > {}) s = -INFINITY;", g.right);
  e("if (s == -INFINITY) continue;");
  e("const float mn = s > m ? s : m;");
  e("const float al = expf(m - mn), p = expf(s - mn);");
  e("l = l * al + p;");
  e("const float* __restrict__ vr = {};", row(2, 5, g.v, g.pv));
  e("for (int64_t d = 0; d < {}; ++d) o[d] = fmaf(p, vr[d], o[d] * al);", g.Dv);
  e("m = mn;");
  e("}}");
  e("const float r = l > 0.0f ? 1.0f / l : 0.0f;");
  e("float* __restrict__ y = {} + {} + {} + {};", e.out(0), term("b", g.y.sb), term("h", g.y.sh), term("qi", g.y.st));
  e("for (int64_t d = 0; d < {}; ++d) y[d] = o[d] * r;", g.Dv);
}

bool attention_ok(const Node& n) {
  const AttentionGeom& g = attention_geom(n);
  return !n.out(1) && !n.out(2) && !n.out(3) && !g.has_nonpad && !g.mask_bool;
}

void emit_layer_norm(CuEmit& e) {
  const LayerNormGeom& g = layer_norm_geom(e.node);
  e.flat(g.rows);
  e("const float* __restrict__ x = {} + i * {};", e.in(0), g.cols);
  e("float* __restrict__ y = {} + i * {};", e.out(0), g.cols);
  e("double mean = 0.0, sq = 0.0;");
  if (!g.rms) {
    e("for (int64_t c = 0; c < {}; ++c) mean += (double)x[c];", g.cols);
    e("mean /= {};", c_double(static_cast<double>(g.cols)));
  }
  e("for (int64_t c = 0; c < {}; ++c) {{ const double d = (double)x[c] - mean; sq += d * d; }}", g.cols);
  e("const float m = (float)mean, is = (float)(1.0 / sqrt(sq / {} + {}));", c_double(static_cast<double>(g.cols)), c_double(g.epsilon));
  std::string b = !g.rms && e.has_in(2) ? fmt::format(" + {}[{}]", e.in(2), g.bias_per_col ? "c" : "0") : "";
  e("for (int64_t c = 0; c < {}; ++c) y[c] = (x[c] - m) * is * {}[{}]{};", g.cols, e.in(1), g.scale_per_col ? "c" : "0", b);
  if (!g.rms && e.node.out(1)) e("{}[i] = m;", e.out(1));
  if (!g.rms && e.node.out(2)) e("{}[i] = is;", e.out(2));
}

}  // namespace

void register_cuda_attention(CuKernelTable& t) {
  t["Attention"] = {emit_attention, attention_ok, nullptr};
  t["LayerNormalization"] = {emit_layer_norm, nullptr, nullptr};
  t["RMSNormalization"] = {emit_layer_norm, nullptr, nullptr};
}

}  // namespace onnxc
