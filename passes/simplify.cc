// passes/simplify.cc — algebraic simplification: fold per-channel affine ops into the
// convolution or Gemm before them, cancel or merge data-movement pairs.
//
//  1. BatchNormalization (inference form, constant scale/B/mean/var) after a Conv (any
//     group, any rank) or Gemm whose output it alone reads becomes part of the producer's
//     weights and bias, with s = scale / sqrt(var + eps):
//       y = Conv(x, W, b); z = BN(y)   ⇒   z = Conv(x, W * s[m], (b - mean) * s + B)
//       y = Gemm(a, B, C); z = BN(y)   ⇒   z = Gemm(a, B * s[n], beta * C * s + (B_bn - mean * s)), beta = 1
//  2. Any other BatchNormalization on X [N, C, ...] becomes a per-channel Mul and Add with
//     constants of shape [C, 1, ..., 1] (they broadcast against X):
//       z = BN(x)   ⇒   z = Add(Mul(x, s), B - mean * s)
//  3. Mul / Add / Sub / Div by a constant that varies at most along the channel dim (shape
//     [M,1,1], [1,M,1,1], [1], scalar...; it must not change the conv's output shape) after
//     a Conv whose output it alone reads goes into the conv's weights and bias:
//       y = Conv(x, W, b); z = Mul(y, v)   ⇒   z = Conv(x, W * v[m], b * v[m])
//       y = Conv(x, W, b); z = Add(y, v)   ⇒   z = Conv(x, W, b + v[m])
//     Sub works either way round (v - y negates W); Div only as y / v with v nonzero.
//  4. Transpose pairs: Transpose(Transpose(x, p1), p2) with composed perm q[j] = p1[p2[j]]:
//       q identity   ⇒   x                  (when the graph output naming rules allow)
//       otherwise    ⇒   Transpose(x, q)    (when the inner output has one use)
//  5. Reshape chains: Reshape(R(x), s) where R is Reshape, Flatten, Squeeze or Unsqueeze
//     whose output has one use   ⇒   Reshape(x, s') with s' the static output shape.
//     A Reshape (Flatten, Squeeze, Unsqueeze) whose output shape equals its input's is
//     removed:  y = Reshape(x, shape(x))   ⇒   x.
//  6. A ReduceMean over the two spatial dims of a 4-D float tensor that keeps them is a global
//     average pool (torch.mean(x, (2, 3), keepdim=True), e.g. NFNet's SE blocks), which the
//     layout pass runs on blocked channels instead of between two layout transforms:
//       y = ReduceMean(x [N,C,H,W], axes [2,3] or [-2,-1], keepdims=1)   ⇒   y = GlobalAveragePool(x)
//  7. Conv kernel taps that read only padding, for every output, go: the leading and
//     trailing taps along a spatial dim whose input index o*s - pb + k*d is outside X for
//     every output o (a dilation reaching past the input: DeepLab's ASPP at 14x14 with rates
//     24 and 36). The pads shrink by the dropped taps' reach, so every output reads the same
//     inputs with the same weights:
//       y = Conv(x [.,.,14,14], W [M,C,3,3], dilations 24, pads 24)   ⇒   y = Conv(x, W[:, :, 1:2, 1:2], pads 0)
//  8. A 1-D Conv (X [N, C, L] float32, W a constant) becomes a 2-D one over [N, C, 1, L]
//     between two Reshapes, with W [M, C/G, 1, k] and the resolved pads, so that the layout
//     pass runs it on blocked channels like any 2-D conv (Whisper's and wav2vec's front ends);
//     an index-aligned elementwise op of one input that reads the output Reshape (the
//     convolution's activation) moves before it, where it fuses into the conv, and the Reshape
//     pair between two such convs then cancels (rewrite 5):
//       y = Conv(x, W); z = Gelu(y)   ⇒   x4 = Reshape(x, [N, C, 1, L]); y4 = Conv(x4, W4);
//                                           z4 = Gelu(y4); z = Reshape(z4, [N, M, L'])
// Then dead nodes and unused values go. Rewrites repeat (a few sweeps) until nothing
// changes, so chains such as Conv → BN → Mul → Add fold completely; rewrite 8a waits until
// then (the folds read the conv's own output).
// Conventions: float32 only; constants are plain (the pass runs before the layout pass);
// new weights are computed in double and rounded once to float; the folded node lists the
// nodes it absorbed in Node::origin. Nodes with an epilogue are left alone.
// Known gaps: no folding into a following conv (padding breaks Add), none into MatMul, no
// Mul/Add folding after Gemm.
#include <cmath>

#include "ir/op.h"
#include "ir/ops/conv.h"
#include "ir/ops/reduce.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

bool plain_f32_const(const Value* v) {
  return v && v->constant && v->dtype == DType::F32 && v->layout.is_plain();
}

// v is read by exactly one node and is not a graph output.
bool sole_use(const Graph& g, const Value* v) { return !v->is_output && use_count(g, v) == 1; }

// A plain node (no fused epilogue) whose values are all stored plain.
bool simple_node(const Node& n) {
  if (!n.epilogue.empty()) return false;
  for (Value* v : n.inputs)
    if (v && !v->layout.is_plain()) return false;
  for (Value* v : n.outputs)
    if (v && !v->layout.is_plain()) return false;
  return true;
}

// Re-creates n's op after its inputs or attributes changed: parse and infer again.
void reprepare(Node& n) {
  OpFactory f = find_op(n.op_type);
  ONNXC_ASSERT(f, "simplify: unknown op " + n.op_type);
  n.op = f();
  AttrReader a(n);
  n.op->parse(a);
  a.done();
  n.op->infer(n);
}

// `into` takes over the later node `from` (a BN or Mul after a conv): into's names, then from's.
void absorb_origin(Node& into, const Node& from) {
  if (into.origin.empty()) into.origin.push_back(into.name);
  if (from.origin.empty()) into.origin.push_back(from.name);
  else into.origin.insert(into.origin.end(), from.origin.begin(), from.origin.end());
}

// `into` takes over the earlier node `from`, which is dead after the rewrite (the inner
// Transpose or Reshape of a pair): from's names, then into's. from's list moves rather than
// being copied, so merging a chain of n nodes one by one stays linear.
void absorb_earlier_origin(Node& into, Node& from) {
  std::vector<std::string> r = std::move(from.origin);
  from.origin = {};
  if (r.empty()) r.push_back(from.name);
  if (into.origin.empty()) r.push_back(into.name);
  else r.insert(r.end(), into.origin.begin(), into.origin.end());
  into.origin = std::move(r);
}

double attr_f(const Node& n, const std::string& name, double def) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.f;
}
int64_t attr_i(const Node& n, const std::string& name, int64_t def) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.i;
}

// The per-channel affine map y = x * a[c] + c[c] of an inference BatchNormalization with
// constant float32 parameters of shape [C]; false when it is not one.
bool bn_affine(const Node& bn, std::vector<double>* a, std::vector<double>* c) {
  if (bn.op_type != "BatchNormalization" || !simple_node(bn) || bn.inputs.size() != 5) return false;
  Value* x = bn.in(0);
  if (!x || x->dtype != DType::F32 || x->shape.size() < 2) return false;
  for (size_t j = 1; j < bn.outputs.size(); ++j)
    if (bn.out(j)) return false;
  int64_t C = x->shape[1];
  for (size_t i = 1; i < 5; ++i)
    if (!plain_f32_const(bn.in(i)) || bn.in(i)->shape != Shape{C}) return false;
  double eps = attr_f(bn, "epsilon", 1e-5);
  std::vector<double> sc = bn.in(1)->constant->to_f64(), b = bn.in(2)->constant->to_f64();
  std::vector<double> mean = bn.in(3)->constant->to_f64(), var = bn.in(4)->constant->to_f64();
  a->resize(static_cast<size_t>(C));
  c->resize(static_cast<size_t>(C));
  for (size_t k = 0; k < static_cast<size_t>(C); ++k) {
    (*a)[k] = sc[k] / std::sqrt(var[k] + eps);
    (*c)[k] = b[k] - mean[k] * (*a)[k];
  }
  return true;
}

// Whether conv can take a per-output-channel affine map into its weights (constant float32
// W and bias, plain, no epilogue).
bool conv_foldable(const Node& conv) {
  return conv.op_type == "Conv" && simple_node(conv) && plain_f32_const(conv.in(1)) &&
         (!conv.in(2) || plain_f32_const(conv.in(2))) && conv.out(0) && conv.out(0)->dtype == DType::F32;
}

// conv(x) * a[m] + c[m]  ⇒  conv with W[m] * a[m] and bias b[m] * a[m] + c[m].
void fold_affine_into_conv(Graph& g, MemoryBudget& mb, Node& conv, const std::vector<double>& a, const std::vector<double>& c) {
  const Value* w = conv.in(1);
  const Value* b = conv.in(2);
  int64_t M = w->shape[0];
  ONNXC_ASSERT(static_cast<int64_t>(a.size()) == M && static_cast<int64_t>(c.size()) == M, "simplify: channel count");
  const Tensor& wt = *w->constant;
  mb.charge(add_bytes(wt.nbytes(), static_cast<uint64_t>(M) * 4, "new weights"), "folding into the weights of " + conv.where());
  Tensor w2(DType::F32, w->shape);
  int64_t per = M ? wt.numel() / M : 0;
  for (int64_t i = 0; i < wt.numel(); ++i) w2.set(i, wt.get(i) * a[static_cast<size_t>(i / per)]);
  Tensor b2(DType::F32, {M});
  for (int64_t m = 0; m < M; ++m) {
    double bias = b ? b->constant->get(m) : 0.0;
    b2.set(m, bias * a[static_cast<size_t>(m)] + c[static_cast<size_t>(m)]);
  }
  // Named after the node: folding again gives _1, _2... rather than a growing suffix.
  conv.inputs[1] = add_constant(g, conv.name + "_weight", w2);
  Value* nb = add_constant(g, conv.name + "_bias", b2);
  if (conv.inputs.size() < 3) conv.inputs.resize(3, nullptr);
  conv.inputs[2] = nb;
  reprepare(conv);
}

// Gemm(A, B, C) * a[n] + c[n]  ⇒  Gemm(A, B * a[n], beta * C * a[n] + c[n]) with beta = 1.
// False when B or C is not a plain float32 constant.
bool fold_affine_into_gemm(Graph& g, MemoryBudget& mb, Node& gemm, const std::vector<double>& a, const std::vector<double>& c) {
  Value* bv = gemm.in(1);
  Value* cv = gemm.in(2);
  Value* y = gemm.out(0);
  if (!plain_f32_const(bv) || (cv && !plain_f32_const(cv)) || !y || y->shape.size() != 2) return false;
  int64_t M = y->shape[0], N = y->shape[1];
  if (static_cast<int64_t>(a.size()) != N) return false;
  bool trans_b = attr_i(gemm, "transB", 0) != 0;
  double beta = attr_f(gemm, "beta", 1.0);
  const Tensor& bt = *bv->constant;
  mb.charge(add_bytes(bt.nbytes(), nbytes_of({M, N}, DType::F32), "new weights"), "folding into the weights of " + gemm.where());
  int64_t K = N ? bt.numel() / N : 0;
  Tensor b2(DType::F32, bv->shape);
  for (int64_t i = 0; i < bt.numel(); ++i) {
    int64_t n = trans_b ? i / K : i % N;  // B is [N, K] with transB, else [K, N]
    b2.set(i, bt.get(i) * a[static_cast<size_t>(n)]);
  }
  // C's strides along i and j (0 where it broadcasts), as in ir/ops/gemm.cc.
  bool use_c = cv && beta != 0.0;
  int64_t si = 0, sj = 0;
  if (use_c) {
    const Shape& cs = cv->shape;
    if (cs.size() == 2) si = cs[0] == 1 ? 0 : cs[1], sj = cs[1] == 1 ? 0 : 1;
    if (cs.size() == 1) sj = cs[0] == 1 ? 0 : 1;
  }
  int64_t rows = si ? M : 1;
  Tensor c2(DType::F32, si ? Shape{M, N} : Shape{N});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double base = use_c ? beta * cv->constant->get(i * si + j * sj) : 0.0;
      c2.set(i * N + j, base * a[static_cast<size_t>(j)] + c[static_cast<size_t>(j)]);
    }
  gemm.inputs[1] = add_constant(g, gemm.name + "_B", b2);
  Value* nc = add_constant(g, gemm.name + "_C", c2);
  if (gemm.inputs.size() < 3) gemm.inputs.resize(3, nullptr);
  gemm.inputs[2] = nc;
  gemm.attrs["beta"] = attr_float(1.0);
  reprepare(gemm);
  return true;
}

// Rewrite 1: y = Conv/Gemm(...); z = BN(y)   ⇒   z = Conv/Gemm(... folded weights ...).
bool fold_bn_into_producer(Graph& g, MemoryBudget& mb, Node& bn) {
  std::vector<double> a, c;
  if (!bn_affine(bn, &a, &c)) return false;
  Value* y = bn.in(0);
  Node* p = y->producer;
  if (!p || !sole_use(g, y) || !can_replace(bn.out(0), y)) return false;
  if (p->op_type == "Conv") {
    if (!conv_foldable(*p) || p->in(1)->shape[0] != y->shape[1]) return false;
    fold_affine_into_conv(g, mb, *p, a, c);
  } else if (p->op_type == "Gemm") {
    if (!simple_node(*p) || y->shape.size() != 2 || !fold_affine_into_gemm(g, mb, *p, a, c)) return false;
  } else {
    return false;
  }
  absorb_origin(*p, bn);
  replace_all_uses(g, bn.out(0), y);
  erase_node(g, &bn);
  return true;
}

// Rewrite 2: z = BN(x)   ⇒   z = Add(Mul(x, s), t) with [C, 1, ..., 1] constants.
bool bn_to_mul_add(Graph& g, MemoryBudget& mb, Node& bn) {
  std::vector<double> a, c;
  if (!bn_affine(bn, &a, &c)) return false;
  Value* x = bn.in(0);
  Value* z = bn.out(0);
  int64_t C = x->shape[1];
  Shape cs(x->shape.size() - 1, 1);
  cs[0] = C;
  mb.charge(2 * nbytes_of(cs, DType::F32), "the scale and shift of " + bn.where());
  Tensor st(DType::F32, cs), tt(DType::F32, cs);
  for (int64_t k = 0; k < C; ++k) {
    st.set(k, a[static_cast<size_t>(k)]);
    tt.set(k, c[static_cast<size_t>(k)]);
  }
  Value* sv = add_constant(g, bn.name + "_scale", st);
  Value* tv = add_constant(g, bn.name + "_shift", tt);
  Node* mul = insert_node(g, &bn, "Mul", bn.name + "_mul", {x, sv});
  Node* add = insert_node(g, &bn, "Add", bn.name + "_add", {mul->out(0), tv});
  mul->origin = add->origin = bn.origin.empty() ? std::vector<std::string>{bn.name} : bn.origin;
  replace_all_uses(g, z, add->out(0));
  erase_node(g, &bn);
  return true;
}

// The per-channel values of constant v broadcast against a conv output of shape ys
// ([N, M, ...]): v must not change ys and may vary only along dim 1. False otherwise.
bool channel_values(const Value* v, const Shape& ys, std::vector<double>* out) {
  if (!plain_f32_const(v) || v->shape.size() > ys.size() || ys.size() < 2) return false;
  size_t off = ys.size() - v->shape.size();
  bool per_channel = false;
  for (size_t d = 0; d < v->shape.size(); ++d) {
    int64_t dim = v->shape[d];
    if (dim == 1) continue;
    if (d + off == 1 && dim == ys[1]) per_channel = true;
    else return false;
  }
  int64_t M = ys[1];
  out->resize(static_cast<size_t>(M));
  for (int64_t m = 0; m < M; ++m) (*out)[static_cast<size_t>(m)] = v->constant->get(per_channel ? m : 0);
  return true;
}

// Rewrite 3: z = Mul/Add/Sub/Div(Conv(...), v)   ⇒   z = Conv(... folded weights ...).
bool fold_binary_into_conv(Graph& g, MemoryBudget& mb, Node& n) {
  const std::string& op = n.op_type;
  if ((op != "Mul" && op != "Add" && op != "Sub" && op != "Div") || !simple_node(n) || n.inputs.size() != 2 || !n.out(0))
    return false;
  for (size_t i = 0; i < 2; ++i) {
    if (i == 1 && op == "Div") break;  // v / y is not affine in y
    Value* y = n.in(i);
    Node* p = y ? y->producer : nullptr;
    std::vector<double> v;
    if (!p || !conv_foldable(*p) || y != p->out(0) || n.out(0)->shape != y->shape || n.out(0)->dtype != DType::F32 ||
        !channel_values(n.in(1 - i), y->shape, &v) || !sole_use(g, y) || !can_replace(n.out(0), y))
      continue;
    size_t M = v.size();
    std::vector<double> a(M, 1.0), c(M, 0.0);
    bool ok = true;
    for (size_t m = 0; m < M; ++m) {
      if (op == "Mul") a[m] = v[m];
      else if (op == "Add") c[m] = v[m];
      else if (op == "Sub" && i == 0) c[m] = -v[m];
      else if (op == "Sub") a[m] = -1.0, c[m] = v[m];
      else if (v[m] != 0.0) a[m] = 1.0 / v[m];  // Div
      else ok = false;
    }
    if (!ok) return false;
    fold_affine_into_conv(g, mb, *p, a, c);
    absorb_origin(*p, n);
    replace_all_uses(g, n.out(0), y);
    erase_node(g, &n);
    return true;
  }
  return false;
}

std::vector<int64_t> transpose_perm(const Node& t) {
  auto it = t.attrs.find("perm");
  if (it != t.attrs.end()) return it->second.ints;
  std::vector<int64_t> p;
  for (size_t d = t.in(0)->shape.size(); d-- > 0;) p.push_back(static_cast<int64_t>(d));
  return p;
}

// y is the only value x should become: the graph output naming rules allow it, and a
// graph output does not take over a value others read (as fold-constants' identities).
bool can_forward(const Graph& g, Value* y, Value* x) {
  return x->layout == y->layout && can_replace(y, x) && !(y->is_output && use_count(g, x) > 1);
}

// The inner Transpose of Transpose(Transpose(x, p1), p2) and the composed perm
// q[j] = p1[p2[j]]; nullptr when t2 is not such a pair.
Node* transpose_pair(Node& t2, std::vector<int64_t>* q) {
  if (t2.op_type != "Transpose" || !simple_node(t2) || !t2.in(0) || !t2.out(0)) return nullptr;
  Node* t1 = t2.in(0)->producer;
  if (!t1 || t1->op_type != "Transpose" || !simple_node(*t1) || !t1->in(0)) return nullptr;
  std::vector<int64_t> p1 = transpose_perm(*t1), p2 = transpose_perm(t2);
  if (p1.size() != p2.size()) return nullptr;
  q->resize(p2.size());
  for (size_t j = 0; j < p2.size(); ++j) (*q)[j] = p1[static_cast<size_t>(p2[j])];
  return t1;
}

// Rewrite 4a: Transpose(Transpose(x, p1), p2) with p1∘p2 the identity   ⇒   x.
bool cancel_transposes(Graph& g, Node& t2) {
  std::vector<int64_t> q;
  Node* t1 = transpose_pair(t2, &q);
  if (!t1) return false;
  for (size_t j = 0; j < q.size(); ++j)
    if (q[j] != static_cast<int64_t>(j)) return false;
  Value* x = t1->in(0);
  Value* y = t2.out(0);
  if (!can_forward(g, y, x)) return false;
  replace_all_uses(g, y, x);
  erase_node(g, &t2);
  return true;
}

// Rewrite 4b: Transpose(Transpose(x, p1), p2), inner output read once   ⇒   Transpose(x, p1∘p2).
// (An identity q lands here only when 4a cannot forward x: one copy instead of two.)
bool compose_transposes(Graph& g, Node& t2) {
  std::vector<int64_t> q;
  Node* t1 = transpose_pair(t2, &q);
  if (!t1 || !sole_use(g, t2.in(0))) return false;
  t2.inputs[0] = t1->in(0);
  t2.attrs["perm"] = attr_ints(q);
  absorb_earlier_origin(t2, *t1);
  reprepare(t2);
  return true;
}

bool is_reshape_like(const Node& n) {
  return n.op_type == "Reshape" || n.op_type == "Flatten" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze";
}

// Rewrite 5a: Reshape(R(x), s)   ⇒   Reshape(x, s') for R reshape-like with one use.
bool merge_reshapes(Graph& g, Node& r2) {
  if (r2.op_type != "Reshape" || !simple_node(r2) || !r2.in(0) || !r2.out(0)) return false;
  Value* mid = r2.in(0);
  Node* r1 = mid->producer;
  if (!r1 || !is_reshape_like(*r1) || !simple_node(*r1) || !r1->in(0) || !sole_use(g, mid)) return false;
  const Shape& s = r2.out(0)->shape;
  for (int64_t d : s)
    if (d == 0) return false;  // a literal 0 would need allowzero
  r2.inputs[0] = r1->in(0);
  r2.inputs[1] = add_constant(g, r2.name + "_shape", Tensor::from_i64(s));
  absorb_earlier_origin(r2, *r1);
  reprepare(r2);
  return true;
}

// Rewrite 5b: y = Reshape(x, shape(x))   ⇒   x (also Flatten, Squeeze, Unsqueeze).
bool remove_noop_reshape(Graph& g, Node& n) {
  if (!is_reshape_like(n) || !simple_node(n) || !n.in(0) || !n.out(0)) return false;
  Value* x = n.in(0);
  Value* y = n.out(0);
  if (x->shape != y->shape || !can_forward(g, y, x)) return false;
  replace_all_uses(g, y, x);
  erase_node(g, &n);
  return true;
}

// Rewrite 6: y = ReduceMean(x [N,C,H,W], spatial axes, keepdims=1)   ⇒   y = GlobalAveragePool(x).
// The node changes its op in place; its output value, shape and name stay.
bool spatial_mean_to_global_pool(Node& n) {
  if (n.op_type != "ReduceMean" || !simple_node(n) || !n.in(0) || !n.out(0)) return false;
  const Value* x = n.in(0);
  if (x->dtype != DType::F32 || x->shape.size() != 4 || n.out(0)->shape.size() != 4) return false;
  const ReduceGeom& r = reduce_geom(n);
  if (r.noop || r.reduced != std::vector<bool>{false, false, true, true}) return false;
  if (n.origin.empty()) n.origin.push_back(n.name);
  n.op_type = "GlobalAveragePool";
  n.inputs.resize(1);  // a constant axes input (opset 18) goes; unused values are dropped at the end
  n.attrs.clear();
  reprepare(n);
  return true;
}

// Rewrite 7: Conv taps that read only padding for every output go (see the file comment).
bool drop_padding_taps(Graph& g, MemoryBudget& mb, Node& n) {
  if (n.op_type != "Conv" || !simple_node(n) || !plain_f32_const(n.in(1)) || !n.out(0)) return false;
  const ConvGeom geo = conv_geom(n);
  const size_t r = geo.rank();
  std::vector<int64_t> k0(r), k1(r), pb(r), pe(r), kn(r);
  bool any = false;
  for (size_t i = 0; i < r; ++i) {
    int64_t lo_tap = -1, hi_tap = -1;
    for (int64_t k = 0; k < geo.k[i]; ++k) {
      if (conv_tap_outputs(geo, i, k) == 0) continue;
      if (lo_tap < 0) lo_tap = k;
      hi_tap = k;
    }
    if (lo_tap < 0) return false;  // no tap reads X at all: the output is the bias; left alone
    k0[i] = lo_tap;
    k1[i] = hi_tap;
    kn[i] = hi_tap - lo_tap + 1;
    pb[i] = geo.pb[i] - lo_tap * geo.d[i];
    pe[i] = geo.pe[i] - (geo.k[i] - 1 - hi_tap) * geo.d[i];
    if (pb[i] < 0 || pe[i] < 0) return false;
    any |= kn[i] != geo.k[i];
  }
  if (!any) return false;
  const Value* w = n.in(1);
  const Tensor& wt = *w->constant;
  Shape ws{w->shape[0], w->shape[1]};
  ws.insert(ws.end(), kn.begin(), kn.end());
  Tensor w2(DType::F32, ws);
  mb.charge(w2.nbytes(), "dropping the padding taps of " + n.where());
  // Copy W[m, c, k0 + j...] for every index of the smaller kernel.
  const int64_t planes = w->shape[0] * w->shape[1];
  std::vector<int64_t> j(r, 0);
  for (int64_t dst = 0; dst < w2.numel(); ++dst) {
    int64_t rest = dst;
    for (size_t i = r; i-- > 0;) {
      j[i] = rest % kn[i];
      rest /= kn[i];
    }
    int64_t src = rest;  // the (m, c) plane, < planes
    ONNXC_ASSERT(src < planes, "simplify: tap copy");
    for (size_t i = 0; i < r; ++i) src = src * geo.k[i] + k0[i] + j[i];
    w2.set(dst, wt.get(src));
  }
  if (n.origin.empty()) n.origin.push_back(n.name);
  const Shape before = n.out(0)->shape;
  n.inputs[1] = add_constant(g, n.name + "_taps", w2);
  std::vector<int64_t> pads = pb, dil(r);
  pads.insert(pads.end(), pe.begin(), pe.end());
  for (size_t i = 0; i < r; ++i) dil[i] = kn[i] == 1 ? 1 : geo.d[i];  // one tap: the dilation no longer matters
  n.attrs["pads"] = attr_ints(pads);
  n.attrs["dilations"] = attr_ints(dil);
  n.attrs.erase("auto_pad");  // the pads above are the resolved ones
  if (n.attrs.count("kernel_shape")) n.attrs["kernel_shape"] = attr_ints(kn);
  reprepare(n);
  ONNXC_ASSERT(n.out(0)->shape == before, "simplify: dropping the padding taps of " + n.where() + " changed its output shape");
  return true;
}

// Rewrite 8a: a 1-D Conv, g.nodes[k], as a 2-D one over a unit height (see the file comment).
bool conv1d_as_2d(Graph& g, MemoryBudget& mb, size_t k) {
  Node& n = *g.nodes[k];
  if (n.op_type != "Conv" || !simple_node(n) || !plain_f32_const(n.in(1)) || !n.out(0) || !n.in(0)) return false;
  Value* x = n.in(0);
  Value* y = n.out(0);
  // Not for empty tensors: a 0 in a Reshape's shape copies the input's dim.
  if (x->dtype != DType::F32 || !x->shape_known || x->shape.size() != 3 || numel(x->shape) == 0 || numel(y->shape) == 0) return false;
  const ConvGeom geo = conv_geom(n);
  const Value* w = n.in(1);
  Tensor w4(DType::F32, {w->shape[0], w->shape[1], 1, w->shape[2]});
  mb.charge(w4.nbytes(), "the 2-D weights of " + n.where());
  std::copy(w->constant->bytes.begin(), w->constant->bytes.end(), w4.bytes.begin());
  const Shape ys = y->shape;
  if (n.origin.empty()) n.origin.push_back(n.name);
  Node* in = insert_node(g, &n, "Reshape", n.name + "_as_2d", {x, add_constant(g, n.name + "_as_2d_shape", Tensor::from_i64({x->shape[0], x->shape[1], 1, x->shape[2]}))});
  n.inputs[0] = in->out(0);
  n.inputs[1] = add_constant(g, n.name + "_2d", w4);
  n.attrs["kernel_shape"] = attr_ints({1, geo.k[0]});
  n.attrs["strides"] = attr_ints({1, geo.s[0]});
  n.attrs["dilations"] = attr_ints({1, geo.d[0]});
  n.attrs["pads"] = attr_ints({0, geo.pb[0], 0, geo.pe[0]});
  n.attrs.erase("auto_pad");  // the pads above are the resolved ones
  // The Reshape back to [N, M, L'] takes over y's readers (and its name, when an output);
  // the conv now sits at k + 1.
  Node* next = k + 2 < g.nodes.size() ? g.nodes[k + 2].get() : nullptr;
  Node* out = insert_node(g, next, "Reshape", n.name + "_as_1d", {y, add_constant(g, n.name + "_as_1d_shape", Tensor::from_i64(ys))});
  replace_all_uses(g, y, out->out(0));
  out->inputs[0] = y;
  reprepare(n);
  reprepare(*out);
  ONNXC_ASSERT(out->out(0)->shape == ys, "simplify: the 2-D form of " + n.where() + " changed its output shape");
  return true;
}

// Rewrite 8b: z = U(Reshape(y)), U = g.nodes[k], y a Conv's output, the Reshape's output read
// only by U, an index-aligned elementwise op of one input   ⇒   z = Reshape(U(y)). The two
// nodes swap places: U takes the Reshape's position and its input, the Reshape U's position
// and output.
bool elementwise_before_reshape(Graph& g, size_t k) {
  Node& u = *g.nodes[k];
  if (!simple_node(u) || u.inputs.size() != 1 || !u.out(0) || !is_index_aligned_elementwise(u)) return false;
  Value* m = u.in(0);
  Node* r = m ? m->producer : nullptr;
  if (!r || r->op_type != "Reshape" || !simple_node(*r) || !sole_use(g, m)) return false;
  Value* y = r->in(0);
  if (!y || !y->producer || y->producer->op_type != "Conv" || y->shape.size() != 4) return false;
  Value* z = u.out(0);
  size_t ir = 0;
  while (ir < k && g.nodes[ir].get() != r) ++ir;
  if (ir == k) return false;
  u.inputs[0] = y;
  u.outputs[0] = m;
  m->producer = &u;
  r->inputs[0] = m;
  r->outputs[0] = z;
  z->producer = r;
  std::swap(g.nodes[ir], g.nodes[k]);
  reprepare(u);
  reprepare(*r);
  return true;
}

// One sweep over the nodes; each node is tried as the last node of a pattern.
// `late`: rewrite 8a too, once nothing else folds into a 1-D conv (a BatchNormalization reading
// it would otherwise read the Reshape after it).
bool sweep(Graph& g, MemoryBudget& mb, bool late) {
  bool changed = false;
  for (size_t k = 0; k < g.nodes.size();) {
    Node& n = *g.nodes[k];
    if (n.folded()) {
      ++k;
      continue;
    }
    if (fold_bn_into_producer(g, mb, n) || fold_binary_into_conv(g, mb, n) || cancel_transposes(g, n) ||
        remove_noop_reshape(g, n)) {
      changed = true;  // n was erased; nodes[k] is the next one
      continue;
    }
    if (bn_to_mul_add(g, mb, n)) {
      changed = true;  // Mul and Add now sit at k, k + 1
      k += 2;
      continue;
    }
    if (late && conv1d_as_2d(g, mb, k)) {
      changed = true;  // the input Reshape now sits at k, the conv at k + 1, the output Reshape at k + 2
      k += 3;
      continue;
    }
    changed |= compose_transposes(g, n) || merge_reshapes(g, n) || spatial_mean_to_global_pool(n) ||
               drop_padding_taps(g, mb, n) || elementwise_before_reshape(g, k);  // n stays
    ++k;
  }
  return changed;
}

}  // namespace

bool simplify(Graph& g, const PassOptions&) {
  bool changed = false;
  MemoryBudget mb(g);  // new weights count against --max-memory (old ones go at the end of a round)
  for (int late = 0; late < 2; ++late)
    for (int round = 0; round < 8; ++round) {
      bool c = sweep(g, mb, late);
      c |= remove_dead_nodes(g);
      if (!c) break;
      changed = true;
    }
  g.drop_unused_values();
  return changed;
}

}  // namespace onnxc
