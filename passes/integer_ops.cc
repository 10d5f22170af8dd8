// passes/integer_ops.cc — integer convolutions, residual adds and activation tables from
// quantized (QDQ) models.
// Quantization tools (ONNX Runtime's quantize_static, NNCF, Neural Compressor) write an int8
// model as float ops between DequantizeLinear and QuantizeLinear nodes; computed as written,
// every convolution runs in float on dequantized copies and is rounded back. This pass puts the
// integer op the sandwich stands for in its place, as ONNX Runtime's QDQ selectors do, so
// activations stay 8-bit between layers and the products accumulate exactly in int32:
//
//   x = DQ(xq, sx, zx); w = DQ(wq, sw, zw); b = DQ(bq, sb); y = Conv(x, w, b) [; y = Relu(y)];
//   yq = Q(y, sy, zy)
//     ⇒   yq = QLinearConv(xq, sx, zx, wq, sw, zw, sy, zy, bq)        (Conv's attributes)
//
// Conditions (a sandwich that does not meet them stays as written, which is always correct):
// xq and yq are uint8 or int8; sx, zx, sy, zy are constants of one value each (zero points
// given); wq is a constant int8 or uint8 with constant scales and zero points, per tensor or
// per output channel (axis 0, no blocks); the bias, when there is one, is a constant int32
// dequantized with no zero point (or zero) by scales within 1e-6 (relative) of sx * sw[m],
// the bias scale QLinearConv implies; the Conv's output (and the Relu's) has the Q as its one
// reader. A Relu or a Clip with constant bounds between Conv and Q goes when Q's saturation
// already clips there: Q(lo) is the lowest value of yq's type and Q(hi) the highest (for Relu:
// zy the lowest), so Q(Clip(y)) = Q(y); Relu6 under an output range within [0, 6] included.
// The residual adds of the same models (a Relu or Clip between Add and Q as above):
//
//   a = DQ(aq, sa, za); b = DQ(bq, sb, zb); y = Add(a, b) [; y = Relu(y)]; yq = Q(y, sy, zy)
//     ⇒   yq = onnxc.qdq_add(aq, sa, za, bq, sb, zb, sy, zy)
//
// when aq, bq and yq are uint8 or int8, every scale and zero point is one constant value and
// Add's output (and the Relu's) has the Q as its one reader; onnxc.qdq_add (ir/ops/quantize.cc)
// is those ops' float arithmetic in one pass over the bytes (no float tensors written); the C
// may fuse a product and the sum into an FMA, as float kernels do, which can move a value by
// one step where it lands next to a rounding boundary. A Mul there (a squeeze-and-excitation's
// gate times its input) becomes onnxc.qdq_mul the same way (a product: no FMA, so exact).
// And max pools, whose maximum commutes with a monotonic dequantization:
//
//   x = DQ(xq, s, z); y = MaxPool(x); yq = Q(y, s, z)   ⇒   yq = MaxPool(xq)
//
// when the scale (> 0) and zero point are the same constants on both sides and yq has xq's
// type: Q(DQ(v)) = v for every 8-bit v (|v - z| <= 255, so (v - z) * s / s rounds back to v - z
// in float32), the pool has no Indices output and its output the Q as its one reader. And
// concatenations, Q being elementwise:
//
//   Q(Concat(DQ_1(a_1), ..., DQ_n(a_n)))   ⇒   Concat(Q(DQ_1(a_1)), ..., Q(DQ_n(a_n)))
//
// each DQ per tensor of an 8-bit a_i, each Q(DQ_i(a_i)) a_i itself where DQ_i's quantization is
// Q's, else an onnxc.lookup (below), the Concat's output read only by the Q.
// Functions of one 8-bit tensor, element by element (matched first, on the graph as imported):
//
//   x = DQ(xq, sx, zx); y = f(x); yq = Q(y, sy, zy)     ⇒   yq = onnxc.lookup(xq, table)
//
// where f is made of elementwise float ops (is_index_aligned_elementwise: Sigmoid, Mul, Clip,
// HardSwish, Erf...) whose other inputs are constants of one value, and of per-tensor Q → DQ
// pairs (a QDQ model's SiLU is x * DQ(Q(Sigmoid(x)))); every DQ of xq is per tensor, the values
// inside are read only inside (nor graph outputs) and have xq's shape. table[i] is what those
// ops compute for xq = lowest + i, by the reference ops (ir/eval.h) at compile time, so the
// lookup equals the reference's ops exactly; the C of the float ops it replaces (expf...) may
// round a value the other way next to a rounding boundary. A region inside a larger one goes
// with it. ONNX Runtime's QLinearSigmoid and QLinearLeakyRelu are such tables.
// The DQ nodes stay for their other readers and go with the dead code otherwise.
// Arithmetic: QLinearConv (ir/ops/quantize.cc) accumulates in int32 and requantizes with
// the float32 multiplier sx * sw[m] / sy, rounding half to even, as ONNX Runtime's
// QLinearConv; the float sandwich it replaces rounds differently only where the float
// convolution's rounding error moves a value across a rounding boundary (one step).
// Runs first: constant folding would otherwise turn DQ(wq) into float weights. The new node
// lists the sandwich's nodes in Node::origin.
// A Gemm sandwich (y = x W^T + b: x of rank 2, transB = 1 as PyTorch writes a Linear layer, alpha
// and beta 1; the same conditions on x, W, b and Q) is the 1x1 convolution of its rows:
//
//   yq = Q(Gemm(DQ(xq), DQ(wq), DQ(bq)))
//     ⇒   yq = Reshape(QLinearConv(Reshape(xq, [N, K, 1, 1]), ..., wq as [M, K, 1, 1], ..., bq), [N, M])
//
// (a classifier head: its weights as int8 bytes, a quarter of the float ones it streams otherwise).
// Known gaps: MatMul sandwiches (QLinearMatMul), other Gemms and average pools stay float between
// their DQ and Q.
#include <algorithm>
#include <cmath>
#include <set>

#include "codegen/backend.h"
#include "ir/eval.h"
#include "ir/op.h"
#include "ir/ops/elementwise.h"
#include "ir/ops/gemm.h"
#include "ir/ops/quantize.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

bool const_one(const Value* v) { return v && v->constant && v->shape.size() <= 1 && numel(v->shape) == 1; }
bool int8_type(DType t) { return t == DType::U8 || t == DType::I8; }

// The attribute `name` of n, or `def` when absent.
int64_t int_attr(const Node& n, const char* name, int64_t def) {
  auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.i;
}

// n is a DequantizeLinear with constant scale (and zero point, when `need_zp`) and no blocks.
bool dequantize(const Node* n, bool need_zp) {
  return n && n->op_type == "DequantizeLinear" && n->epilogue.empty() && n->in(1) && n->in(1)->constant &&
         (!need_zp || (n->in(2) && n->in(2)->constant)) && (!n->in(2) || n->in(2)->constant) &&
         int_attr(*n, "block_size", 0) == 0;
}

// d is a DequantizeLinear of a uint8 or int8 tensor with one constant scale and zero point.
bool dequantize_bytes(const Node* d) {
  return dequantize(d, true) && const_one(d->in(1)) && const_one(d->in(2)) && int8_type(d->in(0)->dtype);
}

struct Sandwich {
  Node* q = nullptr;     // QuantizeLinear
  Node* relu = nullptr;  // optional
  Node* conv = nullptr;
  Node* dx = nullptr;  // DQ of x
  Node* dw = nullptr;  // DQ of W
  Node* db = nullptr;  // DQ of B, optional
};

struct AddSandwich {
  Node* q = nullptr;     // QuantizeLinear
  Node* relu = nullptr;  // optional
  Node* add = nullptr;
  Node* da = nullptr;  // DQ of a
  Node* db = nullptr;  // DQ of b
};

struct PoolSandwich {
  Node* q = nullptr;  // QuantizeLinear
  Node* pool = nullptr;
  Node* dx = nullptr;  // DQ of x
};

struct ConcatSandwich {
  Node* q = nullptr;  // QuantizeLinear
  Node* concat = nullptr;
  std::vector<Node*> dq;  // DQ of each input
};

// A function of one 8-bit tensor, element by element, that ends in a QuantizeLinear.
struct LookupRegion {
  Node* q = nullptr;         // QuantizeLinear
  Value* xq = nullptr;       // the 8-bit tensor it is a function of
  std::vector<Node*> nodes;  // DequantizeLinear, elementwise and QuantizeLinear nodes, q included
};

// Regions of more nodes are left as written (a bound on the work of matching, far above the
// SiLU's six).
constexpr size_t kMaxLookupNodes = 32;

class Matcher {
 public:
  explicit Matcher(Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      position_[g.nodes[i].get()] = i;
      for (Value* v : g.nodes[i]->all_inputs())
        if (v) users_[v].push_back(g.nodes[i].get());
    }
  }

  // The sandwich ending in QuantizeLinear q, if it meets the conditions above.
  bool match(Node* q, Sandwich* s) const {
    if (!quantize_per_tensor(q)) return false;
    s->q = q;
    Node* c = sole_reader_producer(q->in(0));
    if (!relu_under(q, &c, &s->relu)) return false;
    if (!c || (c->op_type != "Conv" && !gemm_as_conv(*c)) || !c->epilogue.empty() || c->inputs.size() < 2) return false;
    s->conv = c;
    s->dx = c->in(0) ? c->in(0)->producer : nullptr;
    s->dw = c->in(1) ? c->in(1)->producer : nullptr;
    s->db = c->in(2) ? c->in(2)->producer : nullptr;
    if (!dequantize_bytes(s->dx)) return false;
    if (!dequantize(s->dw, true) || !s->dw->in(0)->constant || !int8_type(s->dw->in(0)->dtype)) return false;
    const Value* wq = s->dw->in(0);
    const int64_t M = wq->shape.empty() ? 0 : wq->shape[0];
    if (c->op_type == "Gemm" && (wq->shape.size() != 2 || wq->shape[1] != c->in(0)->shape[1])) return false;
    if (!per_channel(*s->dw, M)) return false;
    if (c->in(2)) return bias_ok(*s, M);
    return true;
  }

  // Replaces the sandwich by QLinearConv, which takes over yq; a Gemm's by the 1x1 QLinearConv
  // between two Reshapes (appended to the node list: true, the caller re-sorts it).
  bool replace(const Sandwich& s) {
    if (s.conv->op_type == "Gemm") {
      Value* xq = s.dx->in(0);
      const Value* wq = s.dw->in(0);
      const int64_t N = xq->shape[0], K = xq->shape[1], M = wq->shape[0];
      Node* image = insert_node(g_, nullptr, "Reshape", s.conv->name + "_image",
                                {xq, add_constant(g_, s.conv->name + "_image_shape", Tensor::from_i64({N, K, 1, 1}))}, 1, {});
      Tensor w = *wq->constant;
      w.shape = {M, K, 1, 1};
      std::vector<Value*> in = {image->out(0), s.dx->in(1), s.dx->in(2), add_constant(g_, wq->name + "_1x1", w), s.dw->in(1), s.dw->in(2),
                                s.q->in(1), s.q->in(2)};
      if (s.db) in.push_back(s.db->in(0));
      Attr k;
      k.type = Attr::Type::Ints;
      k.ints = {1, 1};
      Node* conv = insert_node(g_, nullptr, "QLinearConv", s.conv->name, in, 1, {{"kernel_shape", k}});
      conv->origin = {s.dx->name, s.dw->name};
      if (s.db) conv->origin.push_back(s.db->name);
      conv->origin.push_back(s.conv->name);
      substitute(s.q, "Reshape", s.conv->name + "_rows", {}, {conv->out(0), add_constant(g_, s.conv->name + "_rows_shape", Tensor::from_i64({N, M}))},
                 {s.relu, s.q});
      return true;
    }
    std::map<std::string, Attr> attrs;
    for (const char* a : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}) {
      auto it = s.conv->attrs.find(a);
      if (it != s.conv->attrs.end()) attrs[a] = it->second;
    }
    std::vector<Value*> in = {s.dx->in(0), s.dx->in(1), s.dx->in(2), s.dw->in(0), s.dw->in(1), s.dw->in(2), s.q->in(1), s.q->in(2)};
    if (s.db) in.push_back(s.db->in(0));
    substitute(s.q, "QLinearConv", s.conv->name, std::move(attrs), in, {s.dx, s.dw, s.db, s.conv, s.relu, s.q});
    return false;
  }

  // The residual sandwich ending in QuantizeLinear q, if it meets the conditions above.
  // (An Add when `add`, a Mul when `mul`.)
  bool match_add(Node* q, AddSandwich* s, bool add, bool mul) const {
    if (!quantize_per_tensor(q)) return false;
    s->q = q;
    Node* c = sole_reader_producer(q->in(0));
    if (!relu_under(q, &c, &s->relu)) return false;
    if (!c || !((c->op_type == "Add" && add) || (c->op_type == "Mul" && mul)) || !c->epilogue.empty() || c->inputs.size() != 2 ||
        c->opset < 7)
      return false;
    s->add = c;
    for (int i = 0; i < 2; ++i) {
      Node* d = c->in(static_cast<size_t>(i)) ? c->in(static_cast<size_t>(i))->producer : nullptr;
      if (!dequantize_bytes(d)) return false;
      (i ? s->db : s->da) = d;
    }
    return true;
  }

  // Replaces the residual sandwich by onnxc.qdq_add (onnxc.qdq_mul), which takes over yq.
  void replace(const AddSandwich& s) {
    substitute(s.q, s.add->op_type == "Mul" ? "onnxc.qdq_mul" : "onnxc.qdq_add", s.add->name, {},
               {s.da->in(0), s.da->in(1), s.da->in(2), s.db->in(0), s.db->in(1), s.db->in(2), s.q->in(1), s.q->in(2)},
               {s.da, s.db, s.add, s.relu, s.q});
  }

  // The max pool sandwich ending in QuantizeLinear q, if it meets the conditions above.
  bool match_pool(Node* q, PoolSandwich* s) const {
    if (!quantize_per_tensor(q)) return false;
    s->q = q;
    s->pool = sole_reader_producer(q->in(0));
    const Node* c = s->pool;
    if (!c || c->op_type != "MaxPool" || !c->epilogue.empty() || c->out(1)) return false;
    s->dx = c->in(0)->producer;
    const Node* d = s->dx;
    return dequantize_bytes(d) && same_quantization(*d, *q);
  }

  // Replaces the sandwich by the MaxPool on xq, which takes over yq.
  void replace(const PoolSandwich& s) {
    substitute(s.q, "MaxPool", s.pool->name, s.pool->attrs, {s.dx->in(0)}, {s.dx, s.pool, s.q});
  }

  // The concatenation sandwich ending in QuantizeLinear q, if it meets the conditions above.
  bool match_concat(Node* q, ConcatSandwich* s) const {
    if (!quantize_per_tensor(q)) return false;
    s->q = q;
    s->concat = sole_reader_producer(q->in(0));
    const Node* c = s->concat;
    if (!c || c->op_type != "Concat" || !c->epilogue.empty()) return false;
    s->dq.clear();
    for (Value* v : c->inputs) {
      Node* d = v ? v->producer : nullptr;
      if (!dequantize_bytes(d)) return false;
      s->dq.push_back(d);
    }
    return !s->dq.empty();
  }

  // Replaces the sandwich by the Concat of each input's Q(DQ(xq)): xq itself where that is the
  // identity, an onnxc.lookup otherwise (appended to the node list: the caller re-sorts it).
  // False (the sandwich stays) when a table cannot be computed.
  bool replace(const ConcatSandwich& s) {
    std::vector<Value*> parts;
    for (Node* d : s.dq) {
      Value* xq = d->in(0);
      if (same_quantization(*d, *s.q)) {
        parts.push_back(xq);
        continue;
      }
      Value y;  // Q(DQ(xq)) as a region: d and a QuantizeLinear like s.q on its output
      y.name = s.q->out(0)->name;
      Node qi;
      qi.name = s.q->name;
      qi.op_type = s.q->op_type;
      qi.opset = s.q->opset;
      qi.attrs = s.q->attrs;
      qi.inputs = {d->out(0), s.q->in(1), s.q->in(2)};
      qi.outputs = {&y};
      std::shared_ptr<const Tensor> table = lookup_table(LookupRegion{&qi, xq, {d, &qi}});
      if (!table) return false;
      Node* n = insert_node(g_, nullptr, "onnxc.lookup", d->name + "_requantized", {xq, add_constant(g_, d->name + "_table", *table)});
      n->origin = {d->name, s.q->name};
      parts.push_back(n->out(0));
    }
    std::vector<const Node*> nodes(s.dq.begin(), s.dq.end());
    nodes.push_back(s.concat);
    nodes.push_back(s.q);
    substitute(s.q, "Concat", s.concat->name, s.concat->attrs, parts, nodes);
    return true;
  }

  // The region ending in QuantizeLinear q, if it meets the conditions above.
  bool match_lookup(Node* q, LookupRegion* r) const {
    if (!quantize_per_tensor(q)) return false;
    *r = LookupRegion{q, nullptr, {}};
    std::set<const Node*> in;
    if (!collect(q, r, &in) || !r->xq) return false;
    const Shape& shape = q->out(0)->shape;
    if (r->xq->shape != shape) return false;
    for (const Node* n : r->nodes) {
      if (n->out(0)->shape != shape) return false;
      if (n == q || (n->op_type == "DequantizeLinear" && n->in(0) == r->xq)) continue;
      if (n->out(0)->is_output) return false;
      for (const Node* u : users_.at(n->out(0)))
        if (!in.count(u)) return false;
    }
    std::sort(r->nodes.begin(), r->nodes.end(), [&](const Node* a, const Node* b) { return position_.at(a) < position_.at(b); });
    return true;
  }

  // Replaces the region by onnxc.lookup of its table; false (the region stays) when the
  // reference ops could not compute the table.
  bool replace(const LookupRegion& r) {
    std::shared_ptr<const Tensor> table = lookup_table(r);
    if (!table) return false;
    Value* t = add_constant(g_, r.q->out(0)->name + "_table", *table);
    const Node* last = r.q->in(0)->producer;
    substitute(r.q, "onnxc.lookup", last->op_type == "DequantizeLinear" ? r.q->name : last->name, {}, {r.xq, t},
               std::vector<const Node*>(r.nodes.begin(), r.nodes.end()));
    return true;
  }

 private:
  // Adds n and, through its inputs, what it is computed from to the region: a QuantizeLinear
  // per tensor, a DequantizeLinear per tensor (of r->xq, or of a QuantizeLinear in the region)
  // or an elementwise float op (is_index_aligned_elementwise) whose other inputs are constants
  // of one element. False when something else is found.
  bool collect(Node* n, LookupRegion* r, std::set<const Node*>* in) const {
    if (in->count(n)) return true;
    if (in->size() >= kMaxLookupNodes || !n->epilogue.empty()) return false;
    if (n->op_type == "DequantizeLinear") {
      if (!dequantize(n, false) || !const_one(n->in(1)) || (n->in(2) && !const_one(n->in(2))) || !int8_type(n->in(0)->dtype))
        return false;
      in->insert(n);
      r->nodes.push_back(n);
      Value* u = n->in(0);
      if (u->producer && u->producer->op_type == "QuantizeLinear" && !u->is_output) {
        // A quantize step inside the function, when what it quantizes is one too; otherwise u
        // is the tensor the function reads.
        const size_t size = r->nodes.size();
        Value* const xq = r->xq;
        if (collect(u->producer, r, in)) return true;
        for (size_t i = size; i < r->nodes.size(); ++i) in->erase(r->nodes[i]);
        r->nodes.resize(size);
        r->xq = xq;
      }
      if (r->xq && r->xq != u) return false;
      r->xq = u;
      return true;
    }
    if (n->op_type == "QuantizeLinear" ? !quantize_per_tensor(n) : !is_index_aligned_elementwise(*n)) return false;
    in->insert(n);
    r->nodes.push_back(n);
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      Value* v = n->inputs[i];
      if (!v || n->op->static_input(i)) continue;
      if (v->constant) {
        if (numel(v->shape) != 1) return false;
      } else if (!v->producer || !collect(v->producer, r, in)) {
        return false;
      }
    }
    return true;
  }

  // What r's nodes compute for each of r.xq's 256 values, by the reference ops: a copy of the
  // region on a constant x of those values, folded by shape inference. Null when that fails.
  std::shared_ptr<const Tensor> lookup_table(const LookupRegion& r) const {
    Graph t;
    t.model_path = g_.model_path;
    t.name = g_.name;
    t.opset = g_.opset;
    std::map<const Value*, Value*> map;
    Value* x = t.add_value("x");
    x->dtype = r.xq->dtype;
    x->shape = {256};
    x->shape_known = true;
    Tensor xs(x->dtype, x->shape);
    const int64_t lowest = x->dtype == DType::I8 ? -128 : 0;
    for (int64_t i = 0; i < 256; ++i) xs.set_i64(i, lowest + i);
    x->constant = std::make_shared<const Tensor>(std::move(xs));
    map[r.xq] = x;
    auto copy = [&](Value* v) -> Value* {  // the copy of v (a constant when not yet copied)
      if (!v) return nullptr;
      if (auto it = map.find(v); it != map.end()) return it->second;
      Value* c = t.add_value(t.fresh_name(v->name));
      c->dtype = v->dtype;
      c->shape = v->shape;
      c->shape_known = true;
      c->constant = v->constant;
      return map[v] = c;
    };
    for (const Node* n : r.nodes) {
      auto c = std::make_unique<Node>();
      c->name = n->name;
      c->op_type = n->op_type;
      c->opset = n->opset;
      c->attrs = n->attrs;
      for (Value* v : n->inputs) c->inputs.push_back(copy(v));
      Value* o = t.add_value(t.fresh_name(n->out(0)->name));
      o->producer = c.get();
      c->outputs = {o};
      map[n->out(0)] = o;
      t.nodes.push_back(std::move(c));
    }
    try {
      prepare_ops(t);
      infer_shapes(t);
    } catch (const CompileError&) {
      return nullptr;
    }
    const Value* y = map.at(r.q->out(0));
    if (!y->constant || y->constant->numel() != 256) return nullptr;
    auto table = std::make_shared<Tensor>(y->dtype, Shape{256});
    table->bytes = y->constant->bytes;
    return table;
  }

  // A new node of type `op` (attributes, inputs) takes over q's output in q's place in the node
  // list (replacing does not move other nodes, so the positions found at the start hold); it
  // lists `nodes` (the sandwich) in Node::origin. The rest of the sandwich is now dead (or read
  // elsewhere).
  void substitute(Node* q, const char* op, const std::string& name, std::map<std::string, Attr> attrs,
                  const std::vector<Value*>& in, const std::vector<const Node*>& nodes) {
    auto n = std::make_unique<Node>();
    n->name = name;
    n->op_type = op;
    n->attrs = std::move(attrs);
    n->inputs = in;
    Value* y = q->out(0);
    n->outputs = {y};
    n->op = find_op(op)();
    n->opset = std::max<int64_t>(g_.opset, n->op->min_opset());
    AttrReader a(*n);
    n->op->parse(a);
    a.done();
    n->op->infer(*n);
    for (const Node* m : nodes)
      if (m) {
        if (m->origin.empty()) n->origin.push_back(m->name);
        else n->origin.insert(n->origin.end(), m->origin.begin(), m->origin.end());
      }
    y->producer = n.get();
    q->outputs[0] = nullptr;
    std::unique_ptr<Node>& slot = g_.nodes[position_.at(q)];
    position_[n.get()] = position_.at(q);
    removed_.push_back(std::move(slot));
    slot = std::move(n);
  }

  // q is a QuantizeLinear of float32 to an 8-bit type with one constant scale and zero point.
  static bool quantize_per_tensor(const Node* q) {
    return q->op_type == "QuantizeLinear" && q->epilogue.empty() && q->in(0) && const_one(q->in(1)) && const_one(q->in(2)) &&
           int8_type(q->out(0)->dtype) && q->in(0)->dtype == DType::F32;
  }

  // Whether DequantizeLinear d and QuantizeLinear q (both per tensor) have the same finite scale
  // above 0, zero point and 8-bit type, so that q(d(v)) = v for every v.
  static bool same_quantization(const Node& d, const Node& q) {
    const float sd = static_cast<float>(d.in(1)->constant->get(0)), sq = static_cast<float>(q.in(1)->constant->get(0));
    return sd == sq && sd > 0 && std::isfinite(sd) && d.in(2)->constant->get(0) == q.in(2)->constant->get(0) &&
           d.in(0)->dtype == q.out(0)->dtype;
  }

  // When *c (what q quantizes) is a Relu or Clip that q's saturation makes redundant, moves *c
  // to its input's producer and sets *relu; false when it is a Relu or Clip that is not.
  bool relu_under(const Node* q, Node** c, Node** relu) const {
    if (!*c || ((*c)->op_type != "Relu" && (*c)->op_type != "Clip") || !(*c)->epilogue.empty()) return true;
    double lo = 0, hi = HUGE_VAL;  // Relu
    if ((*c)->op_type == "Clip" && !clip_bounds(**c, &lo, &hi)) return false;
    if (!saturates_at(*q, lo, hi)) return false;
    *relu = *c;
    *c = sole_reader_producer((*c)->in(0));
    return true;
  }

 private:
  // The producer of v when v's one reader is the node asking (v is not a graph output).
  Node* sole_reader_producer(const Value* v) const {
    if (!v || v->is_output) return nullptr;
    auto it = users_.find(v);
    return it != users_.end() && it->second.size() == 1 ? v->producer : nullptr;
  }

  // Clip c's constant bounds (absent: unbounded); false when one is not a constant.
  static bool clip_bounds(const Node& c, double* lo, double* hi) {
    *lo = -HUGE_VAL;
    *hi = HUGE_VAL;
    if (c.opset < 11) {
      *lo = clip_attrs(c).lo;
      *hi = clip_attrs(c).hi;
      return true;
    }
    for (size_t i = 1; i < 3; ++i)
      if (const Value* v = c.in(i)) {
        if (!v->constant) return false;
        (i == 1 ? *lo : *hi) = v->constant->get(0);
      }
    return true;
  }

  // Whether q's saturation already clips at [lo, hi]: q(lo) is the type's lowest value and q(hi)
  // its highest (an infinite bound: nothing to check), so q(clip(y)) = q(y) for every y (q is
  // monotonic). For Relu (lo 0) that is a zero point at the type's lowest value.
  static bool saturates_at(const Node& q, double lo, double hi) {
    const float scale = static_cast<float>(q.in(1)->constant->get(0));
    const float zp = static_cast<float>(q.in(2)->constant->get(0));
    double qmin = 0, qmax = 0;
    int_range(q.out(0)->dtype, &qmin, &qmax);
    auto quantize = [&](double v) {  // QuantizeLinear's arithmetic (ir/ops/quantize.h)
      return round_saturate(static_cast<float>(v) / scale, zp, static_cast<float>(qmin), static_cast<float>(qmax));
    };
    return (!std::isfinite(lo) || quantize(lo) == qmin) && (!std::isfinite(hi) || quantize(hi) == qmax);
  }

  // A Gemm that is a 1x1 convolution of its rows: y = x W^T (+ bias), x of rank 2 (N x K), W
  // (M x K, transB = 1, as PyTorch writes a Linear layer), alpha and beta 1.
  static bool gemm_as_conv(const Node& c) {
    if (c.op_type != "Gemm" || !c.in(0) || !c.in(0)->shape_known || c.in(0)->shape.size() != 2) return false;
    const GemmAttrs& a = gemm_attrs(c);
    return a.alpha == 1.0 && a.beta == 1.0 && a.trans_a == 0 && a.trans_b == 1;
  }

  // dw's scale and zero point: one value, or one per output channel along axis 0.
  static bool per_channel(const Node& dw, int64_t M) {
    const Value* s = dw.in(1);
    const Value* z = dw.in(2);
    if (const_one(s) && const_one(z)) return true;
    const int64_t axis = int_attr(dw, "axis", 1);
    const int64_t rank = static_cast<int64_t>(dw.in(0)->shape.size());
    return (axis == 0 || axis == -rank) && s->shape == Shape{M} && z->shape == Shape{M};
  }

  static bool bias_ok(const Sandwich& s, int64_t M) {
    const Node& db = *s.db;
    if (!dequantize(&db, false) || !db.in(0)->constant || db.in(0)->dtype != DType::I32 || db.in(0)->shape != Shape{M})
      return false;
    if (db.in(2))
      for (int64_t i = 0; i < numel(db.in(2)->shape); ++i)
        if (db.in(2)->constant->get(i) != 0) return false;
    const Tensor& sb = *db.in(1)->constant;
    const Tensor& sw = *s.dw->in(1)->constant;
    if (sb.numel() != 1 && sb.numel() != M) return false;
    const float sx = static_cast<float>(s.dx->in(1)->constant->get(0));
    for (int64_t m = 0; m < M; ++m) {
      const float want = sx * static_cast<float>(sw.get(sw.numel() == 1 ? 0 : m));
      const double have = sb.get(sb.numel() == 1 ? 0 : m);
      if (!(std::fabs(have - want) <= 1e-6 * std::fabs(want))) return false;
    }
    return true;
  }

  Graph& g_;
  std::map<const Value*, std::vector<Node*>> users_;  // the nodes reading each value (once per input)
  std::map<const Node*, size_t> position_;  // index in g_.nodes
  std::vector<std::unique_ptr<Node>> removed_;
};

}  // namespace

bool integer_ops(Graph& g, const PassOptions& o) {
  const bool conv = !o.backend || o.backend->has_kernel("QLinearConv");
  const bool add = !o.backend || o.backend->has_kernel("onnxc.qdq_add");
  const bool mul = !o.backend || o.backend->has_kernel("onnxc.qdq_mul");
  const bool lookup = !o.backend || o.backend->has_kernel("onnxc.lookup");
  const bool pool = !o.backend || o.backend->has_kernel("MaxPool");
  bool changed = false;
  // The functions of one tensor first: a Mul or Add inside one (a SiLU's) goes with its table
  // rather than becoming an onnxc.qdq_mul beside a smaller table.
  if (lookup) {
    Matcher m(g);
    std::vector<LookupRegion> regions;
    for (auto& n : g.nodes) {
      LookupRegion r;
      if (m.match_lookup(n.get(), &r)) regions.push_back(std::move(r));
    }
    std::set<const Node*> inside;  // a QuantizeLinear inside a larger region goes with it
    for (const LookupRegion& r : regions)
      for (const Node* n : r.nodes)
        if (n != r.q) inside.insert(n);
    for (const LookupRegion& r : regions)
      if (!inside.count(r.q) && m.replace(r)) changed = true;
    if (changed) remove_dead_nodes(g);
  }
  if (conv || add || mul || pool || lookup) {
    Matcher m(g);
    std::vector<Sandwich> found;
    std::vector<AddSandwich> adds;
    std::vector<PoolSandwich> pools;
    std::vector<ConcatSandwich> concats;
    for (auto& n : g.nodes) {
      Sandwich s;
      AddSandwich a;
      PoolSandwich p;
      ConcatSandwich c;
      if (conv && m.match(n.get(), &s)) found.push_back(s);
      else if ((add || mul) && m.match_add(n.get(), &a, add, mul)) adds.push_back(a);
      else if (pool && m.match_pool(n.get(), &p)) pools.push_back(p);
      else if (lookup && m.match_concat(n.get(), &c)) concats.push_back(c);
    }
    bool appended = false;
    for (const Sandwich& s : found) appended = m.replace(s) || appended;
    for (const AddSandwich& a : adds) m.replace(a);
    for (const PoolSandwich& p : pools) m.replace(p);
    for (const ConcatSandwich& c : concats) appended = m.replace(c) || appended;
    if (appended) topo_sort(g);
    changed = changed || !found.empty() || !adds.empty() || !pools.empty() || appended;
  }
  if (!changed) return false;
  remove_dead_nodes(g);
  g.drop_unused_values();
  return true;
}

}  // namespace onnxc
