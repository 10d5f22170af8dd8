// passes/quantize_int8.cc — compile-model --quantize int8 (see quantize_int8.h).
#include "passes/quantize_int8.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <set>

#include "ir/eval.h"
#include "ir/ops/gemm.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

// Why Conv n stays float ("" when it is quantized).
std::string float_reason(const Node& n) {
  if (!n.epilogue.empty()) return "it heads a fused group";
  const Value* x = n.in(0);
  const Value* w = n.in(1);
  const Value* b = n.in(2);
  if (!x || x->dtype != DType::F32 || x->constant) return "its input is not a float activation";
  if (!w || !w->constant || w->dtype != DType::F32 || w->shape.size() != 4) return "its weights are not a constant 4-D float tensor";
  if (b && (!b->constant || b->dtype != DType::F32)) return "its bias is not a constant float tensor";
  if (!n.out(0) || n.out(0)->dtype != DType::F32) return "its output is not float";
  return "";
}

// A Relu, or a Clip with constant bounds (Relu6): its output is the one a Conv's is quantized at.
bool activation(const Node& n) {
  if (n.op_type == "Relu") return true;
  if (n.op_type != "Clip") return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] && !n.inputs[i]->constant) return false;
  return true;
}

struct Range {
  float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
};

// ONNX Runtime's compute_scale_zp for uint8, asymmetric: the range widened to hold 0, its width
// in float32, the scale in float64 stored as float32, the zero point rounded half to even.
std::pair<float, uint8_t> uint8_params(Range r) {
  const float lo = std::min(r.lo, 0.0f), hi = std::max(r.hi, 0.0f);
  const double scale = static_cast<double>(hi - lo) / 255.0;
  if (!(scale >= static_cast<double>(FLT_MIN)) || !std::isfinite(scale)) return {1.0f, 0};  // empty, NaN or infinite range
  const double zp = std::nearbyint(0.0 - static_cast<double>(lo) / scale);
  return {static_cast<float>(scale), static_cast<uint8_t>(std::clamp(zp, 0.0, 255.0))};
}

// The node after `p` in g.nodes (nullptr: p is last); the first node for a graph input.
Node* node_after(Graph& g, const Node* p) {
  if (!p) return g.nodes.empty() ? nullptr : g.nodes.front().get();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].get() == p) return i + 1 < g.nodes.size() ? g.nodes[i + 1].get() : nullptr;
  ONNXC_ASSERT(false, "quantize_int8: producer not in the graph");
  return nullptr;
}

// ONNX Runtime's symmetric int8 weight parameters over `n` values: absmax = max |w| (0 inside
// the range), scale = 2 absmax / 254 in float64 stored as float32 (1 for an empty range); the
// values round(w / scale) in float32, half to even, clipped to [-127, 127] (NaN as 0).
float quantize_weights_s8(const float* src, int64_t n, int8_t* dst) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, src[i]);
    hi = std::max(hi, src[i]);
  }
  const float absmax = std::max(std::fabs(lo), std::fabs(hi));
  const double sd = static_cast<double>(absmax - (-absmax)) / 254.0;
  const float scale = !(sd >= static_cast<double>(FLT_MIN)) || !std::isfinite(sd) ? 1.0f : static_cast<float>(sd);
  for (int64_t i = 0; i < n; ++i) {
    const float q = std::nearbyint(src[i] / scale);
    dst[i] = std::isnan(q) ? 0 : static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
  }
  return scale;
}

}  // namespace

QuantizeDynamicReport quantize_dynamic_int8(Graph& g) {
  QuantizeDynamicReport rep;
  std::vector<Node*> matmuls;
  for (auto& up : g.nodes) {
    Node& n = *up;
    if ((n.op_type != "MatMul" && n.op_type != "Gemm") || n.folded() || !n.epilogue.empty()) continue;
    const Value *x = n.in(0), *w = n.in(1), *y = n.out(0);
    if (!x || x->constant || x->dtype != DType::F32 || x->shape.size() < 2) continue;
    if (!w || !w->constant || w->dtype != DType::F32 || w->shape.size() != 2 || !y || y->dtype != DType::F32) continue;
    if (n.op_type == "Gemm") {  // Y = A op(B) + C only: alpha and beta 1, A as it is, C constant float (or none)
      const GemmAttrs& a = gemm_attrs(n);
      const Value* c = n.inputs.size() > 2 ? n.in(2) : nullptr;
      if (a.alpha != 1.0 || a.beta != 1.0 || a.trans_a || (c && (!c->constant || c->dtype != DType::F32))) continue;
    }
    matmuls.push_back(&n);
  }
  std::map<const Value*, Node*> dql;  // each activation's DynamicQuantizeLinear
  std::set<const Node*> gone;
  for (Node* m : matmuls) {
    Value* x = m->in(0);
    const Value* wv = m->in(1);
    Node*& q = dql[x];
    if (!q) {
      q = insert_node(g, m, "DynamicQuantizeLinear", x->name + "_QuantizeLinear", {x}, 3);
      ++rep.activations;
    }
    // Gemm's B stored N x K (transB) is quantized as its transpose, K x N (ONNX Runtime's too).
    const bool tb = m->op_type == "Gemm" && gemm_attrs(*m).trans_b;
    Tensor w = to_plain(*wv->constant, wv->shape, wv->layout);
    if (tb) {
      Tensor t(DType::F32, {w.shape[1], w.shape[0]});
      for (int64_t i = 0; i < w.shape[0]; ++i)
        for (int64_t j = 0; j < w.shape[1]; ++j) t.data<float>()[j * w.shape[0] + i] = w.data<float>()[i * w.shape[1] + j];
      w = std::move(t);
    }
    Tensor wq(DType::I8, w.shape);
    const float ws = quantize_weights_s8(w.data<float>(), w.numel(), wq.data<int8_t>());
    Value* wqv = add_constant(g, wv->name + "_quantized", wq);
    Value* wsv = add_constant(g, wv->name + "_scale", Tensor::from_f32({ws}, {}));
    Value* wzv = add_constant(g, wv->name + "_zero_point", Tensor::from_i64({0}, DType::I8, {}));
    const std::string& base = m->name;
    Node* sm = insert_node(g, m, "Mul", base + "_quant_scales_mul", {q->out(1), wsv});
    Node* mi = insert_node(g, m, "MatMulInteger", base + "_quant", {q->out(0), wqv, q->out(2), wzv});
    Node* cast = insert_node(g, m, "Cast", base + "_quant_cast", {mi->out(0)}, 1, {{"to", attr_int(1)}});
    Node* scaled = insert_node(g, m, "Mul", base + "_quant_output_scale_mul", {cast->out(0), sm->out(0)});
    Value* y = scaled->out(0);
    if (m->op_type == "Gemm" && m->inputs.size() > 2 && m->in(2)) y = insert_node(g, m, "Add", base + "_Add", {y, m->in(2)})->out(0);
    replace_all_uses(g, m->out(0), y);
    gone.insert(m);
    ++rep.matmuls;
  }
  erase_nodes(g, gone);
  g.drop_unused_values();
  return rep;
}

QuantizeInt8Report quantize_int8(Graph& g, const std::vector<std::map<const Value*, Tensor>>& samples) {
  ONNXC_ASSERT(!samples.empty(), "quantize_int8: no calibration sample");
  QuantizeInt8Report rep;
  rep.samples = static_cast<int>(samples.size());
  // The Convs to quantize and the activation tensors: each one's input, and its output or that
  // of the Relu that is its one reader.
  std::vector<Node*> convs;
  std::map<const Node*, const Value*> conv_input;  // each Conv's activation input, before the rewrite
  std::vector<Value*> tensors;
  std::set<Value*> listed;
  auto add = [&](Value* v) {
    if (listed.insert(v).second) tensors.push_back(v);
  };
  for (auto& up : g.nodes) {
    Node& n = *up;
    if (n.op_type != "Conv" || n.folded()) continue;
    if (std::string why = float_reason(n); !why.empty()) {
      rep.float_convs.push_back(n.where() + ": " + why);
      continue;
    }
    convs.push_back(&n);
    conv_input[&n] = n.in(0);
    add(n.in(0));
    Value* out = n.out(0);
    std::vector<Node*> readers = g.users(out);
    if (!out->is_output && readers.size() == 1 && readers[0]->epilogue.empty() && activation(*readers[0]))
      out = readers[0]->out(0);
    add(out);
  }
  rep.convs = static_cast<int>(convs.size());
  if (convs.empty()) return rep;

  // Calibration: each tensor's range over every sample.
  std::map<const Value*, Range> ranges;
  for (Value* v : tensors) ranges[v];
  for (const auto& sample : samples) {
    run_reference(g, sample, [&](const Value* v, const Tensor& t) {
      auto it = ranges.find(v);
      if (it == ranges.end() || t.dtype != DType::F32) return;
      const float* p = t.data<float>();
      Range& r = it->second;
      for (int64_t i = 0, e = t.numel(); i < e; ++i)
        if (!std::isnan(p[i])) {
          r.lo = std::min(r.lo, p[i]);
          r.hi = std::max(r.hi, p[i]);
        }
    });
  }

  // Activations: T -> QuantizeLinear -> DequantizeLinear, every reader of T on the latter. The
  // scale of each Conv's input for its bias.
  std::map<const Value*, float> scale_of;
  for (Value* t : tensors) {
    Range r = ranges[t];
    if (r.lo > r.hi) r = Range{0.0f, 0.0f};  // no finite value seen
    auto [scale, zp] = uint8_params(r);
    scale_of[t] = scale;
    Node* before = node_after(g, t->producer);
    Value* s = add_constant(g, t->name + "_scale", Tensor::from_f32({scale}, {}));
    Value* z = add_constant(g, t->name + "_zero_point", Tensor::from_i64({zp}, DType::U8, {}));
    Node* q = insert_node(g, before, "QuantizeLinear", t->name + "_QuantizeLinear", {t, s, z});
    Node* dq = insert_node(g, before, "DequantizeLinear", t->name + "_DequantizeLinear", {q->out(0), s, z});
    replace_all_uses(g, t, dq->out(0));  // a graph output's name moves to dq's output
    q->inputs[0] = t;
    ++rep.tensors;
  }

  // Weights per output channel, symmetric int8 in [-127, 127]; the bias as int32.
  for (Node* c : convs) {
    const Value* wv = c->in(1);
    const Tensor& w = *wv->constant;
    const int64_t m = w.shape[0], per = m ? w.numel() / m : 0;
    Tensor wq(DType::I8, w.shape), ws(DType::F32, {m}), wz(DType::I8, {m});
    for (int64_t o = 0; o < m; ++o) {
      ws.data<float>()[o] = quantize_weights_s8(w.data<float>() + o * per, per, wq.data<int8_t>() + o * per);
    }
    std::vector<Value*> ins = {add_constant(g, wv->name + "_quantized", wq), add_constant(g, wv->name + "_scale", ws),
                               add_constant(g, wv->name + "_zero_point", wz)};
    Node* dw = insert_node(g, c, "DequantizeLinear", wv->name + "_DequantizeLinear", ins, 1, {{"axis", attr_int(0)}});
    c->inputs[1] = dw->out(0);
    if (const Value* bv = c->in(2)) {
      const Tensor& b = *bv->constant;
      const float sx = scale_of.at(conv_input.at(c));
      Tensor bq(DType::I32, b.shape), bs(DType::F32, b.shape);
      for (int64_t o = 0; o < b.numel(); ++o) {
        float s = sx * ws.data<float>()[o];
        if (s == 0.0f) s = 1.0f;
        bs.data<float>()[o] = s;
        const double q = std::nearbyint(static_cast<double>(b.data<float>()[o] / s));
        bq.data<int32_t>()[o] = std::isnan(q) ? 0 : static_cast<int32_t>(std::clamp(q, -2147483648.0, 2147483647.0));
      }
      Node* db = insert_node(g, c, "DequantizeLinear", bv->name + "_DequantizeLinear",
                             {add_constant(g, bv->name + "_quantized", bq), add_constant(g, bv->name + "_scale", bs)}, 1,
                             {{"axis", attr_int(0)}});
      c->inputs[2] = db->out(0);
    }
  }
  g.drop_unused_values();
  return rep;
}

}  // namespace onnxc
