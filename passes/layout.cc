// passes/layout.cc — NCHW → NCHWc (TVM's alter-layout, ONNX Runtime's nchwc_transformer):
// decides for every node whether it runs on blocked activations (Layout::nchwc(b),
// b = PassOptions::channel_block) and inserts onnxc.layout_transform nodes where a consumer
// needs another layout than its producer gives.
//
// Nodes are visited in topological order; a node goes NCHWc when the backend says it can
// run it so (Backend::supports(n, NCHWc(b))) and its inputs can be given the layouts the
// contract asks for:
//  - Conv: as conv_blocking (ir/ops/conv.h) says: X blocked, except a "first layer"
//    (group 1, C < b, X plain — the graph input) which reads NCHW directly; W (a constant)
//    repacked into Layout::filter(b, bi); bias stays plain. Grouped convs whose groups are
//    not whole blocks stay plain.
//  - elementwise/broadcast ops (FusionKind Elementwise/Broadcast): full-channel inputs
//    blocked (a per-channel constant [C,1,1] becomes a rank-aligned [1,C,1,1] constant
//    stored NCHWc), channel-1 inputs and scalars plain; a full-channel activation of lower
//    rank than the output keeps the node plain.
//  - other ops that say yes (pools, global pools, Concat, Resize, Pad): every non-static
//    input blocked.
// Only Conv goes blocked on plain inputs (it is where the layout pays); the other ops follow:
// they go blocked only when some activation input already arrives blocked, so elementwise
// ops on the graph input, or a global pool after a conv that had to stay plain, stay plain.
// Outputs of a blocked node are NCHWc(b); everything else reads plain values.
//   x → Conv → Relu → Flatten         ⇒   x → Conv' → Relu → T(16→0) → Flatten
//   (Conv', Relu on NCHW16c; T = onnxc.layout_transform; Conv' reads x plain, first layer)
// Transforms are memoised per (value, layout) and inserted before their first consumer; a
// value that is itself the output of a transform is converted back by reading the
// transform's input (plain → blocked → plain cancels). Graph outputs stay plain: a blocked
// output gets a final transform that takes over its ONNX name.
// Known gaps: the choice is greedy, in one forward sweep, without a cost model: a conv goes
// blocked even when that costs a transform on each side; a node's layout never depends on
// its consumers (a blocked Relu whose only consumer is plain could have stayed plain at the
// same cost, one transform either way). Concat on channels goes blocked whatever the split
// (inputs that are not whole blocks are copied lane-shifted), so GoogLeNet and DenseNet keep
// their blocks across every concat at any b.
// Running the pass again on its own output changes nothing. Repacked constants (padded to
// whole blocks, up to b times larger) count against --max-memory before they are made.
#include <map>
#include <tuple>

#include "codegen/backend.h"
#include "ir/op.h"
#include "ir/ops/conv.h"
#include "passes/pass.h"

namespace onnxc {
namespace {

using NchwcQuery = std::function<bool(const Node&, int64_t)>;

// How the rewritten node reads input i.
enum class Role {
  Keep,          // absent or static input: untouched
  Plain,         // plain NCHW (or any rank < 3 value, always plain)
  Blocked,       // NCHWc(b), as it is (constants repacked)
  BlockedAlign,  // elementwise full-channel constant: reshaped to the output's rank, NCHWc(b)
  Filter,        // Conv weights: Layout::filter(b, bi)
};

struct Plan {
  bool blocked = false;
  std::vector<Role> roles;
  int64_t filter_bi = 0;
};

using LayoutKey = std::tuple<int, int64_t, int64_t>;
LayoutKey key_of(const Layout& l) { return {static_cast<int>(l.kind), l.block, l.in_block}; }

int64_t block_of(const Layout& l) { return l.is_nchwc() ? l.block : 0; }

class LayoutPass {
 public:
  LayoutPass(Graph& g, int64_t b, const NchwcQuery& q) : g_(g), b_(b), query_(q), budget_(g) {}

  bool run() {
    std::vector<Node*> order;
    for (auto& n : g_.nodes) order.push_back(n.get());
    for (Node* n : order) {
      Plan p = plan(*n);
      apply(*n, p);
    }
    for (size_t k = 0; k < g_.outputs.size(); ++k)
      if (!g_.outputs[k]->layout.is_plain()) output_plain(g_.outputs[k]);
    if (changed_) g_.drop_unused_values();
    return changed_;
  }

 private:
  Plan plain_plan(const Node& n) const {
    Plan p;
    p.roles.assign(n.inputs.size(), Role::Plain);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.in(i) || (n.op && n.op->static_input(i))) p.roles[i] = Role::Keep;
    return p;
  }

  Plan plan(const Node& n) const {
    Plan p = plain_plan(n);
    if (n.op_type == "onnxc.layout_transform") {  // already placed (a second run)
      p.roles.assign(n.inputs.size(), Role::Keep);
      return p;
    }
    if (!n.op || n.folded() || !n.epilogue.empty() || n.outputs.empty()) return p;
    for (Value* v : n.outputs)
      if (v && (v->shape.size() < 3 || !v->shape_known)) return p;
    if (!n.out(0) || !query_(n, b_)) return p;
    Plan q = p;
    q.blocked = true;
    bool ok = n.op_type == "Conv" ? plan_conv(n, q)
              : n.op->kind() == FusionKind::Elementwise || n.op->kind() == FusionKind::Broadcast ? plan_elementwise(n, q)
                                                                                                   : plan_other(n, q);
    return ok ? q : p;
  }

  bool plan_conv(const Node& n, Plan& p) const {
    Value* x = n.in(0);
    Value* w = n.in(1);
    if (!x || !w || !w->constant) return false;
    const ConvBlocked v = conv_blocking(n, b_, x->layout.is_plain());
    if (v.kind == ConvBlocking::None) return false;
    p.roles[0] = v.kind == ConvBlocking::FirstLayer ? Role::Plain : Role::Blocked;
    p.roles[1] = Role::Filter;
    p.filter_bi = v.filter_in_block;
    return true;
  }

  bool plan_elementwise(const Node& n, Plan& p) const {
    const Shape& out = n.out(0)->shape;
    const size_t r = out.size();
    const int64_t C = out[1];
    bool follows_blocked = false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (p.roles[i] == Role::Keep) continue;
      Value* v = n.in(i);
      if (v->shape.size() > r) return false;
      Shape a(r - v->shape.size(), 1);
      a.insert(a.end(), v->shape.begin(), v->shape.end());
      if (a[1] == 1 && C != 1) {
        p.roles[i] = Role::Plain;  // read through the broadcast view
        continue;
      }
      if (a[1] != C) return false;
      if (v->constant) {
        p.roles[i] = Role::BlockedAlign;
        continue;
      }
      if (v->shape.size() != r) return false;  // would need a reshape
      p.roles[i] = Role::Blocked;
      follows_blocked = follows_blocked || v->layout == Layout::nchwc(b_);
    }
    return follows_blocked;
  }

  bool plan_other(const Node& n, Plan& p) const {
    bool follows_blocked = false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (p.roles[i] == Role::Keep) continue;
      if (n.in(i)->shape.size() < 3) return false;
      p.roles[i] = Role::Blocked;
      follows_blocked = follows_blocked || n.in(i)->layout == Layout::nchwc(b_);
    }
    return follows_blocked;
  }

  void apply(Node& n, const Plan& p) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Value* v = n.in(i);
      switch (p.roles[i]) {
        case Role::Keep: break;
        case Role::Plain: n.inputs[i] = as_layout(v, Layout::plain(), &n); break;
        case Role::Blocked: n.inputs[i] = as_layout(v, Layout::nchwc(b_), &n); break;
        case Role::BlockedAlign: n.inputs[i] = aligned_constant(v, n.out(0)->shape.size()); break;
        case Role::Filter: n.inputs[i] = as_layout(v, Layout::filter(b_, p.filter_bi), &n); break;
      }
    }
    if (!p.blocked) return;
    for (Value* v : n.outputs)
      if (v && v->layout != Layout::nchwc(b_)) {
        v->layout = Layout::nchwc(b_);
        changed_ = true;
      }
  }

  // v in layout l: v itself, a repacked constant, or the output of a (memoised) transform
  // inserted before `before` (nullptr: at the end).
  Value* as_layout(Value* v, const Layout& l, Node* before) {
    if (v->layout == l) return v;
    auto key = std::make_pair(v, key_of(l));
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    Value* r = nullptr;
    if (v->constant) {  // repacked (padded up to whole blocks): counted before it is made
      budget_.charge(nbytes_of(physical_shape(v->shape, l), v->dtype), "repacking constant '" + v->name + "' " + v->type_str() +
                     " as " + dtype_name(v->dtype) + shape_str(physical_shape(v->shape, l)) + (before ? " for " + before->where() : std::string()));
      r = add_constant(g_, v->name + "_" + (l.is_plain() ? std::string("plain") : l.str(v->shape.size())),
                       to_plain(*v->constant, v->shape, v->layout), l);
    } else if (auto src = source_.find(v); src != source_.end() && src->second->layout == l) {
      // y = T(x); z = T'(y) with T' undoing T   ⇒   z is x
      r = src->second;
    } else {
      ONNXC_ASSERT(l.is_plain() || l.is_nchwc(), "layout: activation '" + v->name + "' asked in a filter layout");
      const int64_t from = block_of(v->layout), to = block_of(l);
      std::string suffix = to ? "nchw" + std::to_string(to) + "c" : "nchw";
      Node* t = insert_node(g_, before, "onnxc.layout_transform", v->name + "_to_" + suffix, {v}, 1,
                            {{"from", attr_int(from)}, {"to", attr_int(to)}});
      r = t->out(0);
      source_[r] = v;
    }
    memo_[key] = r;
    changed_ = true;
    return r;
  }

  // A full-channel constant of an elementwise node, right-aligned to the output's rank and
  // stored NCHWc:   Mul(x[1,C,H,W], s[C,1,1])   ⇒   Mul(x, s'[1,C,1,1] NCHWc)
  Value* aligned_constant(Value* v, size_t rank) {
    if (v->layout == Layout::nchwc(b_) && v->shape.size() == rank) return v;
    auto key = std::make_pair(v, rank);
    if (auto it = aligned_.find(key); it != aligned_.end()) return it->second;
    Shape s(rank - v->shape.size(), 1);
    s.insert(s.end(), v->shape.begin(), v->shape.end());
    budget_.charge(nbytes_of(physical_shape(s, Layout::nchwc(b_)), v->dtype), "repacking constant '" + v->name + "' " + v->type_str());
    Tensor t = to_plain(*v->constant, v->shape, v->layout);
    t.shape = s;
    Value* r = add_constant(g_, v->name + "_" + Layout::nchwc(b_).str(rank), t, Layout::nchwc(b_));
    aligned_[key] = r;
    changed_ = true;
    return r;
  }

  // A blocked graph output: a transform back to plain takes over its name (other consumers
  // keep reading the blocked value).
  //   y = Relu(x) NCHW16c, output y   ⇒   y' = Relu(x) NCHW16c; y = T(16→0)(y'), output y
  void output_plain(Value* v) {
    Value* t = as_layout(v, Layout::plain(), nullptr);
    if (!can_replace(v, t)) {  // e.g. the same value listed twice: a copy of its own
      Node* n = insert_node(g_, nullptr, "onnxc.layout_transform", v->name + "_to_nchw", {v}, 1,
                            {{"from", attr_int(block_of(v->layout))}, {"to", attr_int(0)}});
      t = n->out(0);
    }
    for (Value*& o : g_.outputs)
      if (o == v) o = t;
    v->is_output = false;
    t->is_output = true;
    g_.swap_names(v, t);
    changed_ = true;
  }

  Graph& g_;
  const int64_t b_;
  const NchwcQuery& query_;
  bool changed_ = false;
  MemoryBudget budget_;  // repacked constants against --max-memory
  std::map<std::pair<Value*, LayoutKey>, Value*> memo_;
  std::map<std::pair<Value*, size_t>, Value*> aligned_;
  std::map<Value*, Value*> source_;  // output of an inserted transform → its input
};

}  // namespace

bool layout_nchwc_with(Graph& g, const PassOptions& o, const std::function<bool(const Node&, int64_t)>& supports) {
  if (!o.nchwc) return false;
  const int64_t b = o.channel_block;
  ONNXC_ASSERT(b >= 4 && b <= 256 && (b & (b - 1)) == 0, "layout: channel block " + std::to_string(b) + " is not a power of two from 4 to 256");
  return LayoutPass(g, b, supports).run();
}

bool layout_nchwc(Graph& g, const PassOptions& o) {
  ONNXC_ASSERT(!o.nchwc || o.backend, "layout needs PassOptions::backend");
  return layout_nchwc_with(g, o, [&](const Node& n, int64_t b) { return o.backend->supports(n, Layout::nchwc(b)); });
}

}  // namespace onnxc
