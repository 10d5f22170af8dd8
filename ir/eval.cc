// ir/eval.cc — op preparation, shape inference with constant propagation, the reference
// interpreter, the verifier and the IR dump (see eval.h).
#include "ir/eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ir/cost.h"
#include "ir/op.h"

namespace onnxc {

void prepare_ops(Graph& g) {
  for (auto& n : g.nodes) {
    if (n->op) continue;
    OpFactory f = find_op(n->op_type);
    if (!f) n->unsupported("op type '" + n->op_type + "' is not supported by onnxc (see compile-model --list-ops)");
    n->op = f();
    if (n->opset < n->op->min_opset())
      n->invalid(n->op_type + " does not exist before opset " + std::to_string(n->op->min_opset()) + " (the model imports opset " +
                 std::to_string(n->opset) + ")");
    AttrReader a(*n);
    n->op->parse(a);
    a.done();
  }
}

namespace {

// Runs n (and its epilogue) on logical tensors; `in` covers n.all_inputs().
std::vector<Tensor> eval_logical(const Node& n, const std::vector<const Tensor*>& in) {
  std::vector<const Tensor*> own(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n.inputs.size()));
  std::vector<Tensor> out(n.outputs.size());
  for (size_t j = 0; j < n.outputs.size(); ++j) {
    Value* v = j == 0 && n.anchor_out ? n.anchor_out : n.outputs[j];
    if (v) out[j] = Tensor(v->dtype, v->shape);
  }
  n.op->eval(n, own, out);
  if (n.epilogue.empty()) return out;
  // The group's environment: extra inputs, then each internal value as it is computed
  // (anchor_out, then every step's output). A step may read any of them.
  std::map<const Value*, const Tensor*> env;
  for (size_t i = 0; i < n.extra_inputs.size(); ++i) env[n.extra_inputs[i]] = in[n.inputs.size() + i];
  std::map<const Value*, Tensor> internal;
  internal[n.anchor_out] = std::move(out[0]);
  env[n.anchor_out] = &internal[n.anchor_out];
  for (auto& step : n.epilogue) {
    std::vector<const Tensor*> sin;
    for (Value* v : step->inputs) {
      if (!v) { sin.push_back(nullptr); continue; }
      auto it = env.find(v);
      if (it == env.end() && v->constant) { sin.push_back(nullptr); continue; }  // resolved below
      ONNXC_ASSERT(it != env.end(), step->where() + ": fused input '" + v->name + "' is neither internal to its group nor an extra input");
      sin.push_back(it->second);
    }
    // Constant inputs of a step that are not extra inputs (static ones) are read as stored.
    std::vector<Tensor> plain_consts;
    plain_consts.reserve(step->inputs.size());
    for (size_t i = 0; i < step->inputs.size(); ++i)
      if (step->inputs[i] && !sin[i]) {
        Value* v = step->inputs[i];
        plain_consts.push_back(to_plain(*v->constant, v->shape, v->layout));
        sin[i] = &plain_consts.back();
      }
    std::vector<Tensor> r = eval_logical(*step, sin);
    const Value* sv = step->out(0);
    internal[sv] = std::move(r[0]);
    env[sv] = &internal[sv];
  }
  out[0] = std::move(internal[n.epilogue.back()->out(0)]);
  return out;
}

}  // namespace

std::vector<Tensor> eval_node(const Node& n, const std::vector<const Tensor*>& in) {
  std::vector<Value*> ins = n.all_inputs();
  ONNXC_ASSERT(in.size() == ins.size() || (in.size() == n.inputs.size() && n.extra_inputs.empty()),
               n.where() + ": eval_node got " + std::to_string(in.size()) + " inputs");
  if (n.op->layout_native()) {
    std::vector<Tensor> out(n.outputs.size());
    for (size_t j = 0; j < n.outputs.size(); ++j)
      if (Value* v = n.outputs[j]) out[j] = Tensor(v->dtype, v->physical_shape());
    n.op->eval(n, in, out);
    return out;
  }
  std::vector<Tensor> conv;
  conv.reserve(in.size());
  std::vector<const Tensor*> plain(in);
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] && ins[i] && !ins[i]->layout.is_plain()) {
      conv.push_back(to_plain(*in[i], ins[i]->shape, ins[i]->layout));
      plain[i] = &conv.back();
    }
  std::vector<Tensor> out = eval_logical(n, plain);
  for (size_t j = 0; j < n.outputs.size(); ++j)
    if (Value* v = n.outputs[j]; v && !v->layout.is_plain()) out[j] = to_layout(out[j], v->layout);
  return out;
}

void infer_shapes(Graph& g, int64_t fold_limit) {
  MemoryBudget budget(g);
  for (auto& np : g.nodes) {
    Node& n = *np;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Value* v = n.inputs[i];
      ONNXC_ASSERT(!v || v->shape_known, n.where() + ": input '" + (v ? v->name : "") + "' has no shape yet");
    }
    n.op->infer(n);
    bool all_const = true;
    int64_t out_elems = 0;
    uint64_t out_bytes = 0;
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      Value* v = n.outputs[j];
      if (!v) continue;
      if (!v->shape_known || v->dtype == DType::Undefined) {
        // Ops type every output they define; an untyped one past the first is an output
        // the op does not have (a model that lists too many outputs).
        if (j > 0)
          n.invalid("output " + std::to_string(j) + " '" + v->name + "' is not an output of " + n.op_type + " (it has " +
                    std::to_string(n.outputs.size()) + " outputs, the op defines fewer)");
        ONNXC_ASSERT(false, n.where() + ": infer left output '" + v->name + "' without type");
      }
      if (v->shape.size() > kMaxRank)
        n.unsupported("output '" + v->name + "' would have " + std::to_string(v->shape.size()) + " dimensions; onnxc supports up to " +
                      std::to_string(kMaxRank));
      int64_t e = numel(v->shape);
      out_elems = e > fold_limit ? fold_limit + 1 : std::min(out_elems + e, fold_limit + 1);  // no overflow
      out_bytes = add_bytes(out_bytes, nbytes_of(v->shape, v->dtype), n.where() + ": the outputs");
      if (!v->constant) all_const = false;
    }
    if (all_const) continue;  // the op set its outputs itself (Constant, Shape)
    std::vector<const Tensor*> in;
    all_const = true;  // now: are all inputs constant?
    for (Value* v : n.inputs) {
      if (v && !v->constant) { all_const = false; break; }
      in.push_back(v ? v->constant.get() : nullptr);
    }
    // Too big to fold, over the memory cap, or too much work (then the node stays code; the
    // arena check after memory planning sees its output).
    if (!all_const || out_elems > fold_limit || !budget.fits(out_bytes) || eval_work(n) > kMaxFoldWork) continue;
    budget.charge(out_bytes, n.where());
    std::vector<Tensor> out = eval_node(n, in);
    for (size_t j = 0; j < n.outputs.size(); ++j)
      if (Value* v = n.outputs[j]) v->constant = std::make_shared<const Tensor>(std::move(out[j]));
  }
}

std::map<const Value*, Tensor> run_reference(const Graph& g, const std::map<const Value*, Tensor>& inputs,
                                             const std::function<void(const Value*, const Tensor&)>& seen) {
  std::map<const Value*, const Tensor*> env;
  std::map<const Value*, Tensor> owned;
  for (auto& [v, t] : inputs) {
    env[v] = &t;
    if (seen) seen(v, t);
  }
  for (auto& v : g.values)
    if (v->constant) env[v.get()] = v->constant.get();
  for (auto& n : g.nodes) {
    if (n->folded()) continue;
    std::vector<const Tensor*> in;
    for (Value* v : n->all_inputs()) {
      if (!v) { in.push_back(nullptr); continue; }
      auto it = env.find(v);
      ONNXC_ASSERT(it != env.end(), n->where() + ": no value for input '" + v->name + "'");
      in.push_back(it->second);
    }
    std::vector<Tensor> out = eval_node(*n, in);
    for (size_t j = 0; j < n->outputs.size(); ++j)
      if (Value* v = n->outputs[j]) {
        owned[v] = std::move(out[j]);
        env[v] = &owned[v];
        if (seen) seen(v, owned[v]);
      }
  }
  std::map<const Value*, Tensor> result;
  for (Value* v : g.outputs) {
    auto it = env.find(v);
    ONNXC_ASSERT(it != env.end(), "no value for graph output '" + v->name + "'");
    result[v] = *it->second;
  }
  return result;
}

void verify_graph(const Graph& g) {
  std::set<const Value*> defined;
  for (Value* v : g.inputs) defined.insert(v);
  for (auto& v : g.values)
    if (v->constant && !v->producer) defined.insert(v.get());
  std::set<const Value*> internal;  // internal values of fused groups
  std::set<std::string> names;
  for (auto& v : g.values) ONNXC_ASSERT(names.insert(v->name).second, "duplicate value name '" + v->name + "'");
  for (auto& n : g.nodes) {
    ONNXC_ASSERT(n->op, n->where() + ": no op");
    for (Value* v : n->all_inputs())
      ONNXC_ASSERT(!v || defined.count(v), n->where() + ": input '" + (v ? v->name : "") + "' used before definition");
    for (Value* v : n->outputs) {
      if (!v) continue;
      ONNXC_ASSERT(v->producer == n.get(), n->where() + ": output '" + v->name + "' has another producer");
      ONNXC_ASSERT(!internal.count(v) && defined.insert(v).second, "value '" + v->name + "' defined twice");
      ONNXC_ASSERT(v->shape_known, "value '" + v->name + "' has no shape");
      if (v->constant)
        ONNXC_ASSERT(v->constant->shape == v->physical_shape() && v->constant->dtype == v->dtype,
                     "constant '" + v->name + "' is stored as " + shape_str(v->constant->shape) + ", expected " + v->type_str());
    }
    ONNXC_ASSERT(n->epilogue.empty() == (n->anchor_out == nullptr), n->where() + ": epilogue without anchor output");
    if (!n->epilogue.empty()) {
      // Internal values (anchor_out, every step output but the last) live only inside the
      // group: each is read by a later step, none is a graph output or defined elsewhere.
      const Value* a = n->anchor_out;
      ONNXC_ASSERT(!a->is_output && !defined.count(a) && internal.insert(a).second,
                   n->where() + ": anchor output '" + a->name + "' is also a graph output or defined elsewhere");
      std::map<const Value*, bool> group_internal = {{a, false}};  // value → read by a later step
      for (size_t k = 0; k < n->epilogue.size(); ++k) {
        const Node& e = *n->epilogue[k];
        ONNXC_ASSERT(e.op && e.outputs.size() == 1 && e.out(0), e.where() + ": bad epilogue node");
        bool reads_internal = false;
        for (size_t i = 0; i < e.inputs.size(); ++i) {
          Value* v = e.inputs[i];
          if (auto it = v ? group_internal.find(v) : group_internal.end(); it != group_internal.end()) {
            reads_internal = it->second = true;
            continue;
          }
          // (an integer group's step bakes its constant scales in: passes/fuse.cc)
          const bool baked = v && v->constant && (e.op->static_input(i) || n->out(0)->dtype != DType::F32);
          ONNXC_ASSERT(!v || baked || std::count(n->extra_inputs.begin(), n->extra_inputs.end(), v),
                       e.where() + ": epilogue input '" + (v ? v->name : "") + "' is neither internal to the group nor an extra input");
        }
        ONNXC_ASSERT(reads_internal, e.where() + ": epilogue node reads no value of its group");
        const Value* o = e.out(0);
        if (k + 1 == n->epilogue.size()) {
          ONNXC_ASSERT(o == n->out(0), n->where() + ": last epilogue output is not the group's output");
          break;
        }
        ONNXC_ASSERT(!o->is_output, e.where() + ": internal value '" + o->name + "' of a fused group is a graph output");
        ONNXC_ASSERT(!defined.count(o) && internal.insert(o).second, e.where() + ": internal value '" + o->name + "' defined twice");
        ONNXC_ASSERT(o->shape_known, "value '" + o->name + "' has no shape");
        group_internal[o] = false;
      }
      for (auto& [v, read] : group_internal)
        ONNXC_ASSERT(read, n->where() + ": internal value '" + v->name + "' of the group is never read");
    }
  }
  for (Value* v : g.inputs) ONNXC_ASSERT(v->layout.is_plain(), "graph input '" + v->name + "' is not plain");
  for (Value* v : g.outputs) ONNXC_ASSERT(v->layout.is_plain(), "graph output '" + v->name + "' is not plain");
  for (Value* v : g.outputs) ONNXC_ASSERT(defined.count(v), "graph output '" + v->name + "' is never produced");
}

std::string dump_ir(const Graph& g) {
  std::string s = fmt::format("graph {} (opset {}, {} nodes)\n", g.name, g.opset, g.nodes.size());
  for (Value* v : g.inputs) s += fmt::format("  input  %{} : {}\n", v->name, v->type_str());
  size_t consts = 0, const_bytes = 0;
  for (auto& v : g.values)
    if (v->constant && !v->producer) ++consts, const_bytes += v->constant->nbytes();
  s += fmt::format("  {} initializers/constants, {} bytes\n", consts, const_bytes);
  size_t transforms = 0;
  for (auto& n : g.nodes) transforms += n->op_type == "onnxc.layout_transform";
  if (transforms) s += fmt::format("  # {} layout transform{}\n", transforms, transforms == 1 ? "" : "s");
  if (g.arena_bytes >= 0)
    s += fmt::format("  # memory plan: arena {} bytes for intermediate tensors of {} bytes in all\n", g.arena_bytes, g.arena_tensor_bytes);
  auto args = [](const std::vector<Value*>& vs) {
    std::string r;
    for (Value* v : vs) {
      if (!r.empty()) r += ", ";
      r += v ? "%" + v->name + (v->constant ? "(const)" : "") : "_";
    }
    return r;
  };
  for (auto& n : g.nodes) {
    std::string outs;
    for (Value* v : n->outputs) {
      if (!outs.empty()) outs += ", ";
      outs += v ? fmt::format("%{} : {}", v->name, v->type_str()) : "_";
      if (v && v->arena_offset >= 0) outs += fmt::format(" @{}", v->arena_offset);
      if (v && v->stored_in) outs += fmt::format(" (in %{})", v->stored_in->name);
    }
    std::string op = n->op_type, from = n->name;
    for (auto& e : n->epilogue) op += "+" + e->op_type;
    if (!n->origin.empty()) from = fmt::format("{}", fmt::join(n->origin, ", "));
    for (auto& e : n->epilogue) from += ", " + (e->origin.empty() ? e->name : fmt::format("{}", fmt::join(e->origin, ", ")));
    std::string ins = args(n->inputs);
    if (!n->extra_inputs.empty()) ins += " | " + args(n->extra_inputs);  // a fused group's extra inputs
    s += fmt::format("  {}{} = {}({})  # {}\n", n->folded() ? "[folded] " : "", outs, op, ins, from);
    for (auto& e : n->epilogue) {
      std::vector<Value*> ins;
      for (Value* v : e->inputs) ins.push_back(v);
      s += fmt::format("      | {}({}) -> %{}\n", e->op_type, args(ins), e->out(0)->name);
    }
  }
  for (Value* v : g.outputs) s += fmt::format("  output %{} : {}{}\n", v->name, v->type_str(), v->constant ? " (constant)" : "");
  return s;
}

}  // namespace onnxc
