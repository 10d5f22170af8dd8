// passes/recognize.cc — finds ops that exporters spell out as chains of primitives and puts
// the op back: LayerNormalization, RMSNormalization, Gelu (erf and tanh forms) and Attention.
// PyTorch exports nn.LayerNorm below opset 17 and nn.GELU below opset 20 as the chains below,
// RMSNorm and attention at every opset; each chain is one kernel (layer_norm, one pass per
// row; attention, fused with an online softmax) or one elementwise step a MatMul's epilogue can
// take (fuse.cc), instead of several functions and as many sweeps over the activations.
//
//  1. LayerNormalization over the trailing dims from `axis` (both ReduceMeans over those
//     dims with keepdims; Pow(d, 2) or Mul(d, d); Div(d, s) or Mul(d, Reciprocal(s)) or
//     Mul(d, Div(1, s))), with the affine step when it follows:
//       m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2)); s = Sqrt(Add(v, eps));
//       n = Div(d, s); y = Mul(n, gamma); z = Add(y, beta)
//         ⇒   z = LayerNormalization(x, gamma, beta, axis, epsilon = eps)
//     Without the Mul, Scale is a constant 1 (and there is no B); without the Add, no B.
//  2. RMSNormalization, the same without the mean (torch.rsqrt exports as Div(1, Sqrt)):
//       v = ReduceMean(Pow(x, 2)); s = Sqrt(Add(v, eps)); n = Mul(x, Div(1, s)); y = Mul(n, gamma)
//         ⇒   y = RMSNormalization(x, gamma, axis, epsilon = eps)
//  3. Gelu, the product of x, 0.5 and (1 + f) in any grouping, f being
//       erf(x / √2) (or erf(x · (1/√2)))                     ⇒   Gelu(x)
//       tanh(√(2/π) · (x + 0.044715 · x³)), x³ = Pow(x, 3) or x · (x · x)
//                                                             ⇒   Gelu(x, approximate = "tanh")
//  4. Attention over 4-D heads q [B, H, Tq, D], kᵀ [B, H, D, Tk] (a Transpose of K), v [B, H, Tk, Dv],
//     the scale (Div or Mul by a scalar constant) and the mask (Add of a float32 value that
//     broadcasts to the scores and has their last dim) optional:
//       s = MatMul(q, kᵀ); t = Div(s, c); u = Add(t, mask); p = Softmax(u, axis = -1); o = MatMul(p, v)
//         ⇒   o = Attention(q, k, v, mask, scale = 1/c)                               (4-D form)
//     The mask may also be Where(c, t, fill) around the scores, c a constant boolean mask and
//     fill a constant that hides as -inf does (at most -1e30: Hugging Face's GPT-2 fills with
//     float32's lowest), with no row of c hiding every key: c becomes the boolean attn_mask
//     (unless an additive mask follows too). A constant mask, boolean or additive (0 and -inf
//     or at most -1e30), that shows key j to query i exactly when j <= i becomes is_causal,
//     so the kernel skips the key tiles past a task's last query.
//     Scalar scalings of q and of kᵀ before the product (Div or Mul by a constant: Whisper
//     multiplies each by D^-1/4) multiply into the scale too, as one of q's or k's projection
//     before the heads' Reshape does in the 3-D form below (Hugging Face's Whisper and BART).
//     k is kᵀ's Transpose with its permutation's last two entries swapped (a copy the kernel
//     reads; the identity when kᵀ was Transpose(k, [0, 1, 3, 2]), which simplify removes).
//     When q, v are Transpose(Reshape(x, [B, T, H, D]), [0, 2, 1, 3]) of [B, T, H * D] tensors,
//     kᵀ is Transpose(Reshape(xk), [0, 2, 3, 1]) and o is only read by Transpose(o, [0, 2, 1, 3])
//     and a Reshape to [B, Tq, H * Dv] (PyTorch's multi-head attention), those go too:
//         ⇒   y = Attention(xq, xk, xv, mask, q_num_heads = kv_num_heads = H, scale)  (3-D form)
// A chain matches only as a whole: every value inside it has its one reader inside it (x may
// have others), the constants are scalars within 1e-6 of the values above, the dims are
// float32 or float64 (attention: float32), and the result has x's shape. Gamma and beta are
// constants that vary only along the normalised dims; one with another shape than those dims
// is broadcast to them (a new constant, counted against --max-memory). The new node takes over
// the chain's output value (its name and any graph-output role) and lists the chain's nodes in
// Node::origin; the rest of the chain becomes dead and goes. LayerNormalization is tried
// first, so its core is never taken for an RMSNormalization of x - mean(x). An op the backend
// has no kernel for (Backend::has_kernel) is left as its chain.
// Known gaps: the Mul/Add form with gamma before the division (Div(Mul(d, gamma), s)),
// GELU as x · Sigmoid(1.702 x) (Swish-like, left to fuse.cc) and Gelu's x · Φ(x) written with
// other constants are not recognised; nor SkipLayerNorm; nor attention over 3-D [B·H, T, D]
// batches (bmm exports), with a softmax in another dtype, or with a Where mask and an
// additive one unless the Where is causal; a Q/K/V Split of one projection stays a copy (the
// kernel could read the packed rows with strides).
#include <cmath>
#include <map>
#include <set>

#include "codegen/backend.h"
#include "ir/op.h"
#include "ir/ops/reduce.h"
#include "ir/ops/softmax.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

struct Matcher {
  Graph& g;
  MemoryBudget& mb;
  const Backend* backend;  // null: every op may be put back
  std::map<const Value*, size_t> uses;                 // readers (a graph output counts one)
  std::map<const Value*, std::vector<Node*>> readers;  // the nodes reading each value
  std::map<const Node*, size_t> pos;                   // index in Graph::nodes
  std::set<const Node*> taken;                          // nodes already in a match this sweep
  // Chain ends replaced this sweep: kept until the sweep ends, as the maps above point to them.
  std::vector<std::unique_ptr<Node>> removed;

  Matcher(Graph& gr, MemoryBudget& m, const Backend* be) : g(gr), mb(m), backend(be) {
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      Node* n = g.nodes[k].get();
      pos[n] = k;
      for (Value* v : n->all_inputs())
        if (v) ++uses[v], readers[v].push_back(n);
    }
    for (Value* v : g.outputs) ++uses[v];
  }

  // The node computing v when it is a plain, not yet taken `op`.
  Node* prod(const Value* v, const char* op) const {
    if (!v || !v->producer || v->constant) return nullptr;
    Node* p = v->producer;
    if (p->op_type != op || !p->epilogue.empty() || taken.count(p) || !pos.count(p)) return nullptr;
    return p;
  }

  // v is read once, by the chain, and is not a graph output.
  bool internal(const Value* v) const {
    auto it = uses.find(v);
    return v && !v->is_output && it != uses.end() && it->second == 1;
  }

  // An internal value computed by a plain `op`.
  Node* inner(const Value* v, const char* op) const { return internal(v) ? prod(v, op) : nullptr; }

  static bool scalar(const Value* v, double* out) {
    if (!v || !v->constant || v->constant->numel() != 1) return false;
    *out = v->constant->get(0);
    return std::isfinite(*out);
  }
  static bool scalar_near(const Value* v, double want) {
    double x;
    return scalar(v, &x) && std::fabs(x - want) <= 1e-6 * std::fabs(want);
  }

  // A binary commutative node's operand that satisfies `pred`, trying both: its index, or -1.
  template <class P>
  static int find_operand(const Node* n, P pred) {
    if (!n || n->inputs.size() != 2) return -1;
    if (pred(n->in(0))) return 0;
    if (pred(n->in(1))) return 1;
    return -1;
  }

  // Index of the trailing reduced dims' first dim when a ReduceMean reduces exactly the
  // trailing dims of its input and keeps them; -1 otherwise.
  static int64_t trailing_mean_axis(const Node& rm) {
    const Value* x = rm.in(0);
    if (!x || !rm.out(0) || !x->shape_known || rm.out(0)->shape.size() != x->shape.size()) return -1;
    const ReduceGeom& geo = reduce_geom(rm);
    if (geo.noop || geo.reduced.size() != x->shape.size()) return -1;
    int64_t first = -1;
    for (size_t d = 0; d < geo.reduced.size(); ++d) {
      if (geo.reduced[d] && first < 0) first = static_cast<int64_t>(d);
      if (!geo.reduced[d] && first >= 0) return -1;
    }
    return first;
  }

  struct Norm {
    Value* x = nullptr;          // what is normalised
    int64_t axis = -1;           // first normalised dim
    double eps = 0;
    std::vector<Node*> nodes;    // the chain so far
    Value* out = nullptr;        // the chain's current output
  };

  // The normalisation core ending at node c: c divides `base` by sqrt(mean(base²) + eps)
  // over base's trailing dims. `base_uses` is set to how often base is read inside the core.
  bool norm_core(Node* c, Norm* r, Value** base, size_t* base_uses) {
    Value* s = nullptr;
    std::vector<Node*> nodes;
    if (c->op_type == "Div" && c->inputs.size() == 2) {
      *base = c->in(0);
      s = c->in(1);
    } else if (c->op_type == "Mul") {
      Node* rec = nullptr;
      int j = find_operand(c, [&](const Value* v) {
        if (Node* p = inner(v, "Reciprocal")) return rec = p, true;
        Node* p = inner(v, "Div");
        return p && scalar_near(p->in(0), 1.0) && (rec = p, true);
      });
      if (j < 0) return false;
      *base = c->in(1 - j);
      s = rec->op_type == "Reciprocal" ? rec->in(0) : rec->in(1);
      nodes.push_back(rec);
    } else {
      return false;
    }
    Node* sq = inner(s, "Sqrt");
    if (!sq) return false;
    Node* add = inner(sq->in(0), "Add");
    if (!add) return false;
    int e = find_operand(add, [&](const Value* v) { return scalar(v, &r->eps); });
    if (e < 0 || r->eps < 0) return false;
    Node* rm = inner(add->in(1 - e), "ReduceMean");
    if (!rm) return false;
    Node* sqr = inner(rm->in(0), "Pow");
    if (sqr && !(sqr->inputs.size() == 2 && sqr->in(0) == *base && scalar_near(sqr->in(1), 2.0))) return false;
    if (!sqr) {
      sqr = inner(rm->in(0), "Mul");
      if (!sqr || sqr->in(0) != *base || sqr->in(1) != *base) return false;
    }
    *base_uses = sqr->op_type == "Mul" ? 3 : 2;  // the square's reads and c's
    Value* x = *base;
    if (!x || !x->shape_known || (x->dtype != DType::F32 && x->dtype != DType::F64)) return false;
    r->axis = trailing_mean_axis(*rm);
    if (r->axis < 0 || !c->out(0) || c->out(0)->shape != x->shape || c->out(0)->dtype != x->dtype) return false;
    nodes.insert(nodes.end(), {sqr, rm, add, sq, c});
    r->nodes = std::move(nodes);
    r->out = c->out(0);
    return true;
  }

  bool try_layer_norm(Node* c, Norm* r) {
    Value* d;
    size_t du;
    if (!norm_core(c, r, &d, &du)) return false;
    Node* sub = prod(d, "Sub");
    if (!sub || d->is_output || uses[d] != du) return false;
    Node* mean = inner(sub->in(1), "ReduceMean");
    if (!mean || mean->in(0) != sub->in(0) || trailing_mean_axis(*mean) != r->axis) return false;
    r->x = sub->in(0);
    if (r->x->shape != d->shape) return false;
    r->nodes.insert(r->nodes.begin(), {mean, sub});
    return true;
  }

  bool try_rms_norm(Node* c, Norm* r) {
    Value* x;
    size_t xu;
    if (!norm_core(c, r, &x, &xu)) return false;
    r->x = x;
    return true;
  }

  // A constant that varies only along x's dims from `axis` on, and the same dtype as x.
  static bool per_normalised(const Value* v, const Value* x, int64_t axis) {
    if (!v || !v->constant || v->dtype != x->dtype || v->shape.size() > x->shape.size()) return false;
    size_t off = x->shape.size() - v->shape.size();
    for (size_t i = 0; i < v->shape.size(); ++i) {
      int64_t xd = x->shape[off + i];
      if (v->shape[i] != 1 && (static_cast<int64_t>(off + i) < axis || v->shape[i] != xd)) return false;
    }
    return true;
  }

  // The next step of the chain when it is `op` with a per-normalised constant operand.
  Node* affine_step(const Norm& r, const char* op, Value** k) {
    if (!internal(r.out)) return nullptr;
    auto it = readers.find(r.out);
    if (it == readers.end() || it->second.size() != 1) return nullptr;
    Node* n = it->second[0];
    if (n->op_type != op || !n->epilogue.empty() || taken.count(n) || n->inputs.size() != 2) return nullptr;
    int j = n->in(0) == r.out ? 1 : 0;
    if (n->in(1 - j) != r.out || !per_normalised(n->in(j), r.x, r.axis)) return nullptr;
    if (!n->out(0) || n->out(0)->shape != r.x->shape || n->out(0)->dtype != r.x->dtype) return nullptr;
    *k = n->in(j);
    return n;
  }

  // v as a constant of exactly the normalised shape (v itself when it has that shape).
  Value* as_normalised(Value* v, const Value* x, int64_t axis, const std::string& what) {
    Shape norm(x->shape.begin() + axis, x->shape.end());
    if (v->shape == norm) return v;
    Tensor t(v->dtype, norm);
    mb.charge(t.nbytes(), what);
    // Right-aligned broadcast of v over norm (v's leading dims, before axis, are all 1).
    Shape vs = v->shape;
    while (vs.size() > norm.size()) vs.erase(vs.begin());
    while (vs.size() < norm.size()) vs.insert(vs.begin(), 1);
    for (int64_t i = 0; i < t.numel(); ++i) {
      int64_t rest = i, src = 0, stride = 1;
      for (size_t d = norm.size(); d-- > 0;) {
        int64_t c = rest % norm[d];
        rest /= norm[d];
        if (vs[d] != 1) src += c * stride;
        stride *= vs[d];
      }
      t.set(i, v->constant->get(src));
    }
    return add_constant(g, v->name, t);
  }

  // Gelu: the product t = x · 0.5 · (1 + f(x)), grouped any way.
  bool try_gelu(Node* t, std::vector<Node*>* nodes, Value** x, std::string* approx) {
    if (t->op_type != "Mul" || t->inputs.size() != 2) return false;
    std::vector<Value*> leaves;
    std::vector<Node*> muls;
    for (Value* v : t->inputs) {
      Node* m = inner(v, "Mul");  // x itself is read at least twice, so never expanded
      if (m && m->inputs.size() == 2 && leaves.size() + 2 <= 3) {
        leaves.push_back(m->in(0));
        leaves.push_back(m->in(1));
        muls.push_back(m);
      } else {
        leaves.push_back(v);
      }
    }
    if (leaves.size() != 3) return false;
    int half = -1;
    for (int i = 0; i < 3; ++i)
      if (scalar_near(leaves[static_cast<size_t>(i)], 0.5)) half = i;
    if (half < 0) return false;
    for (int i = 0; i < 3; ++i) {
      if (i == half) continue;
      Value* c = leaves[static_cast<size_t>(i)];
      Value* xv = leaves[static_cast<size_t>(3 - half - i)];
      std::vector<Node*> chain;
      if (one_plus(c, xv, &chain, approx)) {
        if (!xv || !xv->shape_known || (xv->dtype != DType::F32 && xv->dtype != DType::F64)) return false;
        if (!t->out(0) || t->out(0)->shape != xv->shape || t->out(0)->dtype != xv->dtype) return false;
        *x = xv;
        *nodes = chain;
        nodes->insert(nodes->end(), muls.begin(), muls.end());
        nodes->push_back(t);
        return true;
      }
    }
    return false;
  }

  // c = 1 + erf(x / √2) or 1 + tanh(√(2/π) (x + 0.044715 x³)).
  bool one_plus(Value* c, Value* x, std::vector<Node*>* chain, std::string* approx) {
    Node* add = inner(c, "Add");
    if (!add) return false;
    int one = find_operand(add, [](const Value* v) { return scalar_near(v, 1.0); });
    if (one < 0) return false;
    Value* f = add->in(1 - one);
    if (Node* erf = inner(f, "Erf")) {
      Value* a = erf->in(0);
      Node* scale = inner(a, "Div");
      if (scale && !(scale->in(0) == x && scalar_near(scale->in(1), std::sqrt(2.0)))) return false;
      if (!scale) {
        scale = inner(a, "Mul");
        if (!scale || find_operand(scale, [&](const Value* v) { return scalar_near(v, std::sqrt(0.5)); }) < 0) return false;
        if (scale->in(0) != x && scale->in(1) != x) return false;
      }
      *chain = {scale, erf, add};
      *approx = "none";
      return true;
    }
    Node* th = inner(f, "Tanh");
    if (!th) return false;
    Node* q = inner(th->in(0), "Mul");
    int k = find_operand(q, [](const Value* v) { return scalar_near(v, std::sqrt(2.0 / 3.14159265358979323846)); });
    if (k < 0) return false;
    Node* u = inner(q->in(1 - k), "Add");
    int xi = find_operand(u, [&](const Value* v) { return v == x; });
    if (xi < 0) return false;
    Node* w = inner(u->in(1 - xi), "Mul");
    int ci = find_operand(w, [](const Value* v) { return scalar_near(v, 0.044715); });
    if (ci < 0) return false;
    Value* cube = w->in(1 - ci);
    std::vector<Node*> cn;
    if (Node* p = inner(cube, "Pow")) {
      if (p->inputs.size() != 2 || p->in(0) != x || !scalar_near(p->in(1), 3.0)) return false;
      cn = {p};
    } else if (Node* m = inner(cube, "Mul")) {
      int xj = find_operand(m, [&](const Value* v) { return v == x; });
      if (xj < 0) return false;
      Node* sq = inner(m->in(1 - xj), "Mul");
      if (!sq || sq->in(0) != x || sq->in(1) != x) return false;
      cn = {sq, m};
    } else {
      return false;
    }
    *chain = cn;
    chain->insert(chain->end(), {w, u, q, th, add});
    *approx = "tanh";
    return true;
  }

  // A Transpose's permutation (its default, the reversal, when the attribute is absent).
  static std::vector<int64_t> perm_of(const Node& t) {
    auto it = t.attrs.find("perm");
    if (it != t.attrs.end()) return it->second.ints;
    std::vector<int64_t> p(t.in(0) ? t.in(0)->shape.size() : 0);
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(p.size() - 1 - i);
    return p;
  }

  struct Attn {
    Value *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;  // 4-D heads [B, H, T, D]; K untransposed
    Node* kt = nullptr;          // the Transpose making Kᵀ (its permutation is turned into K's)
    double scale = 1;
    bool causal = false;         // is_causal: key j masked for query i when j > i
    int64_t heads = 0;
    std::vector<Node*> nodes;    // MatMul, scale, mask Add, Softmax, MatMul
  };

  // x = Div(y, c) or Mul(y, c) (either order) with a scalar constant c, x internal and of y's
  // shape: that node, with y and the factor (1/c or c) in *y and *f; null otherwise.
  Node* scalar_scaling(Value* x, Value** y, double* f) const {
    double c = 0;
    Node* n = nullptr;
    if (Node* d = inner(x, "Div"); d && d->inputs.size() == 2 && scalar(d->in(1), &c) && c != 0) {
      n = d, *y = d->in(0), *f = 1 / c;
    } else if (Node* m = inner(x, "Mul")) {
      int j = find_operand(m, [&](const Value* v) { return scalar(v, &c); });
      if (j >= 0) n = m, *y = m->in(1 - j), *f = c;
    }
    if (!n || !*y || (*y)->shape != x->shape) return nullptr;
    return n;
  }

  // The scores x = MatMul(q, kᵀ), or that scaled by a scalar constant (scalar_scaling): the
  // MatMul, the scaling node (or null) and the scale.
  Node* scores(Value* x, Node** sc, double* scale) {
    *scale = 1;
    Value* y = nullptr;
    if ((*sc = scalar_scaling(x, &y, scale))) x = y;
    Node* qk = inner(x, "MatMul");
    return qk && qk->inputs.size() == 2 ? qk : nullptr;
  }

  // Whether mask m (float32 or bool) broadcasts to the scores' shape ps [B, H, Tq, Tk] with
  // its own last dim Tk.
  static bool mask_fits(const Value* m, const Shape& ps) {
    if (!m || m->shape.empty() || m->shape.size() > 4 || m->shape.back() != ps[3]) return false;
    for (size_t d = 0; d < m->shape.size(); ++d)
      if (m->shape[d] != 1 && m->shape[d] != ps[4 - m->shape.size() + d]) return false;
    return true;
  }

  // A mask value that hides its key exactly as -inf does: e^(s + v - max) is 0 for every
  // score s of finite magnitude below 1e29 (PyTorch's finfo.min, -inf).
  static bool hides(double v) { return v <= -1e30; }

  // Whether the constant mask c [.., Tq, Tk], the scores' last two dims ps[2], ps[3] (bool:
  // true shows; float32: 0 shows, hides(v) hides) is the causal one, key j shown to query i
  // exactly when j <= i, in every slice.
  static bool causal_mask(const Value* c, const Shape& ps) {
    if (!c || !c->constant || c->shape.size() < 2) return false;
    const int64_t Tq = c->shape[c->shape.size() - 2], Tk = c->shape.back();
    if (Tq != ps[2] || Tk != ps[3]) return false;
    const Tensor& t = *c->constant;
    for (int64_t x = 0; x < t.numel(); ++x) {
      const int64_t j = x % Tk, i = x / Tk % Tq;
      const double v = t.get(x);
      const bool shown = c->dtype == DType::Bool ? v != 0 : v == 0;
      if (shown != (j <= i) || (c->dtype != DType::Bool && !shown && !hides(v))) return false;
    }
    return true;
  }

  // x = Where(c, t, fill): a constant boolean mask c that fits the scores, a constant fill
  // that hides (hides()), no row of c hiding every key (Attention gives such a row zeros,
  // the softmax a uniform row). The node, or null.
  Node* where_mask(Value* x, const Shape& ps) const {
    Node* w = inner(x, "Where");
    if (!w || w->inputs.size() != 3 || !w->out(0) || w->out(0)->shape != ps) return nullptr;
    const Value *c = w->in(0), *fill = w->in(2);
    if (!c || !c->constant || c->dtype != DType::Bool || !mask_fits(c, ps) || !w->in(1) || w->in(1)->shape != ps) return nullptr;
    if (!fill || !fill->constant || fill->constant->numel() != 1 || !hides(fill->constant->get(0))) return nullptr;
    const Tensor& t = *c->constant;
    const int64_t Tk = c->shape.back();
    for (int64_t row = 0; row < t.numel() / Tk; ++row) {
      bool any = false;
      for (int64_t j = 0; j < Tk && !any; ++j) any = t.get(row * Tk + j) != 0;
      if (!any) return nullptr;
    }
    return w;
  }

  // o = MatMul(Softmax(Add(Div|Mul(MatMul(q, kt), c), mask)), v), the Div/Mul and the Add
  // optional (or the Div/Mul on q before the product), kt a Transpose of K, over 4-D heads
  // [B, H, T, D] of the same batch and head count, or 3-D ones [B·H, T, D] without a mask.
  bool try_attention(Node* o, Attn* r) {
    if (o->op_type != "MatMul" || o->inputs.size() != 2 || !o->out(0)) return false;
    Node* sm = inner(o->in(0), "Softmax");
    if (!sm) return false;
    const Shape& ps = sm->out(0)->shape;
    const size_t R = ps.size();
    if ((R != 3 && R != 4) || softmax_geom(*sm).inner != 1 || softmax_geom(*sm).L != ps[R - 1]) return false;
    std::vector<Node*> nodes = {sm, o};
    Node* sc = nullptr;
    Node* qk = nullptr;
    // The scores, or Where(c, scores, fill) (Hugging Face's GPT-2 masks so).
    Node* wh = nullptr;
    auto masked_scores = [&](Value* t) {
      if ((wh = R == 4 ? where_mask(t, ps) : nullptr)) t = wh->in(1);
      return scores(t, &sc, &r->scale);
    };
    if (Node* add = inner(sm->in(0), "Add")) {
      for (int j = 0; j < 2 && !qk; ++j)
        if ((qk = masked_scores(add->in(j)))) r->mask = add->in(1 - j);
      if (R != 4 || !qk || !r->mask || r->mask->dtype != DType::F32 || !mask_fits(r->mask, ps)) return false;
      nodes.insert(nodes.begin(), add);
    } else {
      qk = masked_scores(sm->in(0));
      if (!qk) return false;
    }
    // A causal mask becomes is_causal (the kernel skips the key tiles no query sees); Where's
    // other masks become the boolean attn_mask, when there is no additive one.
    if (wh) {
      if (causal_mask(wh->in(0), ps)) r->causal = true;
      else if (r->mask) return false;
      else r->mask = wh->in(0);
      nodes.insert(nodes.begin(), wh);
    }
    if (r->mask && r->mask->dtype == DType::F32 && causal_mask(r->mask, ps)) r->mask = nullptr, r->causal = true;
    if (sc) nodes.insert(nodes.begin(), sc);
    nodes.insert(nodes.begin(), qk);
    Value* x = qk->out(0);
    Value* q = qk->in(0);
    // Scales on q and on kᵀ before the product (nn.MultiheadAttention divides q by √D;
    // Whisper multiplies both by D^-1/4): the scale is the product of all of them.
    std::vector<Node*> pre;
    Value* y = nullptr;
    double f = 1;
    if (Node* n = scalar_scaling(q, &y, &f)) pre.push_back(n), q = y, r->scale *= f;
    Value* kv = qk->in(1);
    if (Node* n = scalar_scaling(kv, &y, &f)) pre.push_back(n), kv = y, r->scale *= f;
    Node* kt = inner(kv, "Transpose");
    if (!kt || !kt->in(0) || perm_of(*kt).size() != R) return false;
    Value* v = o->in(1);
    for (const Value* t : {q, kv, v, o->out(0)})
      if (!t || t->dtype != DType::F32 || !t->shape_known || t->shape.size() != R) return false;
    const Shape &qs = q->shape, &ks = kv->shape, &vs = v->shape;
    // q [.., Tq, D], kᵀ [.., D, Tk], v [.., Tk, Dv], the same leading dims: no broadcast.
    Shape want(qs.begin(), qs.end() - 2);
    for (size_t i = 0; i + 2 < R; ++i)
      if (ks[i] != qs[i] || vs[i] != qs[i]) return false;
    if (ks[R - 2] != qs[R - 1] || vs[R - 2] != ks[R - 1]) return false;
    want.insert(want.end(), {qs[R - 2], ks[R - 1]});
    if (x->shape != want || ps != want) return false;
    for (Node* n : nodes)
      if (n != o && n->out(0)->shape != ps) return false;
    nodes.insert(nodes.begin(), pre.begin(), pre.end());
    r->q = q;
    r->k = kv;
    r->v = v;
    r->kt = kt;
    r->heads = R == 4 ? qs[1] : qs[0];
    r->nodes = std::move(nodes);
    return true;
  }

  // The Reshape of x to [T, N, D] under h = Transpose(that, perm), both internal (the heads of
  // nn.MultiheadAttention, sequence first); the Transpose goes to *nodes.
  Node* seq_first_heads(Value* h, const std::vector<int64_t>& perm, std::vector<Node*>* nodes) {
    Node* t = inner(h, "Transpose");
    if (!t || perm_of(*t) != perm) return nullptr;
    Node* rs = inner(t->in(0), "Reshape");
    if (!rs || !rs->in(0) || rs->out(0)->shape.size() != 3) return nullptr;
    nodes->push_back(t);
    return rs;
  }

  // Rank-3 heads [N, T, D] as nn.MultiheadAttention exports them at batch 1: q and v are
  // Transpose(Reshape(x, [T, N, D]), [1, 0, 2]), kᵀ is Transpose(Reshape(xk, [T, N, D]), [1, 2, 0]),
  // and o is read by Transpose(o, [1, 0, 2]) and then only by a Reshape. Each input Reshape is
  // turned into one to [1, T, N · D] (the same bytes: the batch is 1) and the output Reshape
  // reads the Attention's [1, Tq, N · Dv]: the 3-D form, N heads. False (nothing changed) otherwise.
  bool seq_first_attention(const Attn& r, Node* o, std::vector<Node*>* chain, std::vector<Value*>* ins, Node** out_reshape) {
    std::vector<Node*> nodes;
    Node* rq = seq_first_heads(r.q, {1, 0, 2}, &nodes);
    Node* rv = seq_first_heads(r.v, {1, 0, 2}, &nodes);
    if (!rq || !rv || perm_of(*r.kt) != std::vector<int64_t>{1, 2, 0}) return false;
    Node* rk = inner(r.kt->in(0), "Reshape");
    if (!rk || !rk->in(0) || rk->out(0)->shape.size() != 3) return false;
    nodes.push_back(r.kt);
    if (!internal(o->out(0))) return false;
    auto it = readers.find(o->out(0));
    if (it == readers.end() || it->second.size() != 1) return false;
    Node* t = it->second[0];
    if (t->op_type != "Transpose" || taken.count(t) || !t->epilogue.empty() || perm_of(*t) != std::vector<int64_t>{1, 0, 2}) return false;
    if (!internal(t->out(0))) return false;
    auto jt = readers.find(t->out(0));
    if (jt == readers.end() || jt->second.size() != 1) return false;
    Node* ro = jt->second[0];
    if (ro->op_type != "Reshape" || taken.count(ro) || !ro->epilogue.empty() || !ro->out(0) || ro->inputs.size() != 2 || !ro->in(1)->constant)
      return false;
    for (int64_t d : ro->in(1)->constant->to_i64())  // a 0 would copy a dim of the input, whose shape changes
      if (d == 0) return false;
    nodes.push_back(t);
    // Commit: each input Reshape now makes [1, T, N · D].
    for (Node* rs : {rq, rk, rv}) {
      const Shape& hs = rs->out(0)->shape;
      rs->inputs[1] = add_constant(g, rs->name + "_joined", Tensor::from_i64({1, hs[0], hs[1] * hs[2]}));
      AttrReader a(*rs);
      rs->op->parse(a);
      a.done();
      rs->op->infer(*rs);
    }
    chain->insert(chain->end(), nodes.begin(), nodes.end());
    *ins = {rq->out(0), rk->out(0), rv->out(0)};
    *out_reshape = ro;
    return true;
  }

  // x [B, T, H * D] when h = Transpose(Reshape(x, [B, T, H, D]), perm) and both are internal.
  Value* joined_heads(Value* h, const std::vector<int64_t>& perm, std::vector<Node*>* nodes) {
    Node* t = inner(h, "Transpose");
    if (!t || perm_of(*t) != perm) return nullptr;
    Node* rs = inner(t->in(0), "Reshape");
    if (!rs) return nullptr;
    Value* x = rs->in(0);
    const Shape& r = rs->out(0)->shape;
    if (!x || !x->shape_known || x->shape.size() != 3 || r.size() != 4 || x->shape[0] != r[0] || x->shape[1] != r[1] || x->shape[2] != r[2] * r[3])
      return nullptr;
    nodes->insert(nodes->end(), {rs, t});
    return x;
  }

  // The Reshape to [B, T, H * Dv] after Transpose(o, [0, 2, 1, 3]), when they are o's only readers.
  Node* joined_output(Value* o, std::vector<Node*>* nodes) {
    if (!internal(o)) return nullptr;
    auto it = readers.find(o);
    if (it == readers.end() || it->second.size() != 1) return nullptr;
    Node* t = it->second[0];
    if (t->op_type != "Transpose" || taken.count(t) || !t->epilogue.empty() || perm_of(*t) != std::vector<int64_t>{0, 2, 1, 3}) return nullptr;
    Value* tv = t->out(0);
    if (!internal(tv)) return nullptr;
    auto jt = readers.find(tv);
    if (jt == readers.end() || jt->second.size() != 1) return nullptr;
    Node* rs = jt->second[0];
    if (rs->op_type != "Reshape" || taken.count(rs) || !rs->epilogue.empty() || !rs->out(0)) return nullptr;
    const Shape &a = tv->shape, &b = rs->out(0)->shape;
    if (b.size() != 3 || b[0] != a[0] || b[1] != a[1] || b[2] != a[2] * a[3]) return nullptr;
    nodes->insert(nodes->end(), {t, rs});
    return rs;
  }

  // Replaces the chain `nodes` (its last node last) by op(inputs, attrs), which produces the
  // chain's output value.
  void replace(const std::vector<Node*>& nodes, const std::string& op, const std::vector<Value*>& inputs,
               std::map<std::string, Attr> attrs) {
    Node* last = nullptr;
    for (Node* n : nodes) {
      taken.insert(n);
      if (!last || pos[n] > pos[last]) last = n;
    }
    auto n = std::make_unique<Node>();
    n->name = last->name;
    n->op_type = op;
    n->attrs = std::move(attrs);
    n->inputs = inputs;
    Value* y = last->out(0);
    n->outputs = {y};
    OpFactory f = find_op(op);
    ONNXC_ASSERT(f, "recognize: unknown op " + op);
    n->op = f();
    n->opset = std::max(g.opset, n->op->min_opset());
    AttrReader a(*n);
    n->op->parse(a);
    a.done();
    n->op->infer(*n);
    std::vector<const Node*> ordered(nodes.begin(), nodes.end());
    std::sort(ordered.begin(), ordered.end(), [&](const Node* p, const Node* q) { return pos[p] < pos[q]; });
    for (const Node* m : ordered)
      if (m->origin.empty()) n->origin.push_back(m->name);
      else n->origin.insert(n->origin.end(), m->origin.begin(), m->origin.end());
    y->producer = n.get();
    last->outputs[0] = nullptr;
    size_t k = pos[last];
    pos.erase(last);
    removed.push_back(std::move(g.nodes[k]));  // the rest of the chain is now dead
    g.nodes[k] = std::move(n);
    pos[g.nodes[k].get()] = k;
    taken.insert(g.nodes[k].get());
  }

  bool runs(const char* op) const { return !backend || backend->has_kernel(op); }

  bool sweep() {
    bool changed = false;
    const size_t count = g.nodes.size();
    // Normalisations, LayerNormalization before RMSNormalization.
    for (int rms = 0; rms < 2; ++rms)
      for (size_t k = 0; k < count && runs(rms ? "RMSNormalization" : "LayerNormalization"); ++k) {
        Node* c = g.nodes[k].get();
        if (taken.count(c) || !c->epilogue.empty() || (c->op_type != "Div" && c->op_type != "Mul")) continue;
        Norm r;
        if (!(rms ? try_rms_norm(c, &r) : try_layer_norm(c, &r))) continue;
        Value* gamma = nullptr;
        Value* beta = nullptr;
        if (Node* m = affine_step(r, "Mul", &gamma)) {
          r.nodes.push_back(m);
          r.out = m->out(0);
          if (!rms)
            if (Node* a = affine_step(r, "Add", &beta)) {
              r.nodes.push_back(a);
              r.out = a->out(0);
            }
        }
        const char* op = rms ? "RMSNormalization" : "LayerNormalization";
        std::string what = std::string("the ") + (beta ? "Scale and B" : "Scale") + " of the " + op + " at " + c->where();
        std::vector<Value*> ins = {r.x};
        if (gamma) {
          ins.push_back(as_normalised(gamma, r.x, r.axis, what));
        } else {
          Tensor one(r.x->dtype, {1});
          one.set(0, 1.0);
          mb.charge(one.nbytes(), what);
          ins.push_back(add_constant(g, c->name + "_scale", one));
        }
        if (beta) ins.push_back(as_normalised(beta, r.x, r.axis, what));
        replace(r.nodes, op, ins, {{"axis", attr_int(r.axis)}, {"epsilon", attr_float(r.eps)}});
        changed = true;
      }
    // Attention, from the second MatMul.
    for (size_t k = 0; k < count && runs("Attention"); ++k) {
      Node* o = g.nodes[k].get();
      if (taken.count(o) || !o->epilogue.empty()) continue;
      Attn r;
      if (!try_attention(o, &r)) continue;
      std::vector<Value*> ins;
      std::map<std::string, Attr> attrs = {{"scale", attr_float(r.scale)}};
      if (r.causal) attrs["is_causal"] = attr_int(1);
      if (r.q->shape.size() == 3) {
        Node* ro = nullptr;
        if (!seq_first_attention(r, o, &r.nodes, &ins, &ro)) continue;
        attrs["q_num_heads"] = attr_int(r.heads);
        attrs["kv_num_heads"] = attr_int(r.heads);
        replace(r.nodes, "Attention", ins, attrs);
        AttrReader a(*ro);  // its input is now the Attention's [1, Tq, N · Dv]
        ro->op->parse(a);
        a.done();
        ro->op->infer(*ro);
        changed = true;
        continue;
      }
      std::vector<Node*> outer;
      Value* q3 = joined_heads(r.q, {0, 2, 1, 3}, &outer);
      // kᵀ = Transpose(Reshape(x, [B, T, H, D]), [0, 2, 3, 1]), as PyTorch exports k.transpose(-1, -2).
      Value* k3 = joined_heads(r.k, {0, 2, 3, 1}, &outer);
      Value* v3 = joined_heads(r.v, {0, 2, 1, 3}, &outer);
      Node* joined = q3 && k3 && v3 ? joined_output(o->out(0), &outer) : nullptr;
      if (joined) {
        // A scale on q's or k's projection itself, before the heads' Reshape (Hugging Face's
        // Whisper and BART multiply q's): folded into the scale too.
        for (Value** x3 : {&q3, &k3}) {
          Value* y = nullptr;
          double f = 1;
          if (Node* n = scalar_scaling(*x3, &y, &f)) outer.push_back(n), *x3 = y, r.scale *= f;
        }
        attrs["scale"] = attr_float(r.scale);
        ins = {q3, k3, v3};
        attrs["q_num_heads"] = attr_int(r.heads);
        attrs["kv_num_heads"] = attr_int(r.heads);
        r.nodes.insert(r.nodes.end(), outer.begin(), outer.end());
      } else {
        // K [B, H, Tk, D]: the transpose's permutation with its last two entries swapped.
        if (!internal(r.k)) continue;
        std::vector<int64_t> p = perm_of(*r.kt);
        std::swap(p[2], p[3]);
        r.kt->attrs["perm"] = attr_ints(p);
        AttrReader a(*r.kt);
        r.kt->op->parse(a);
        a.done();
        r.kt->op->infer(*r.kt);
        ins = {r.q, r.k, r.v};
      }
      if (r.mask) ins.push_back(r.mask);
      replace(r.nodes, "Attention", ins, attrs);
      changed = true;
    }
    for (size_t k = 0; k < count && runs("Gelu"); ++k) {
      Node* t = g.nodes[k].get();
      if (taken.count(t) || !t->epilogue.empty()) continue;
      std::vector<Node*> nodes;
      Value* x = nullptr;
      std::string approx;
      if (!try_gelu(t, &nodes, &x, &approx)) continue;
      replace(nodes, "Gelu", {x}, {{"approximate", attr_string(approx)}});
      changed = true;
    }
    return changed;
  }
};

}  // namespace

bool recognize_ops(Graph& g, const PassOptions& o) {
  MemoryBudget mb(g);
  bool changed = false;
  // A match never creates another (the new ops are not part of any chain), so one sweep
  // finds them all; the second only confirms.
  for (int round = 0; round < 2; ++round) {
    Matcher m(g, mb, o.backend);
    if (!m.sweep()) break;
    remove_dead_nodes(g);
    changed = true;
  }
  g.drop_unused_values();
  return changed;
}

}  // namespace onnxc
