// ir/eval.cc — op preparation, shape inference with constant propagation, the reference
// interpreter, the verifier and the IR dump (see eval.h).
#include "ir/eval.h"

#include <fmt/format.h>

#include <set>

#include "ir/op.h"

namespace onnxc {

void prepare_ops(Graph& g) {
  for (auto& n : g.nodes) {
    if (n->op) continue;
    OpFactory f = find_op(n->op_type);
    if (!f) n->unsupported("op type '" + n->op_type + "' is not supported by onnxc (see compile-model --list-ops)");
    n->op = f();
    if (n->opset < n->op->min_opset())
      n->unsupported("opset " + std::to_string(n->opset) + " is not supported for " + n->op_type + " (onnxc follows opset " +
                     std::to_string(n->op->min_opset()) + " and later)");
    AttrReader a(*n);
    n->op->parse(a);
    a.done();
  }
}

std::vector<Tensor> eval_node(const Node& n, const std::vector<const Tensor*>& in) {
  std::vector<Tensor> out(n.outputs.size());
  for (size_t j = 0; j < n.outputs.size(); ++j)
    if (Value* v = n.outputs[j]) out[j] = Tensor(v->dtype, v->shape);
  n.op->eval(n, in, out);
  return out;
}

void infer_shapes(Graph& g, int64_t fold_limit) {
  for (auto& np : g.nodes) {
    Node& n = *np;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Value* v = n.inputs[i];
      ONNXC_ASSERT(!v || v->shape_known, n.where() + ": input '" + (v ? v->name : "") + "' has no shape yet");
    }
    n.op->infer(n);
    bool all_const = true;
    int64_t out_elems = 0;
    for (Value* v : n.outputs) {
      if (!v) continue;
      if (!v->shape_known || v->dtype == DType::Undefined)
        ONNXC_ASSERT(false, n.where() + ": infer left output '" + v->name + "' without type");
      out_elems += numel(v->shape);
      if (!v->constant) all_const = false;
    }
    if (all_const) continue;  // the op set its outputs itself (Constant, Shape)
    std::vector<const Tensor*> in;
    all_const = true;  // now: are all inputs constant?
    for (Value* v : n.inputs) {
      if (v && !v->constant) { all_const = false; break; }
      in.push_back(v ? v->constant.get() : nullptr);
    }
    if (!all_const || out_elems > fold_limit) continue;
    std::vector<Tensor> out = eval_node(n, in);
    for (size_t j = 0; j < n.outputs.size(); ++j)
      if (Value* v = n.outputs[j]) v->constant = std::make_shared<const Tensor>(std::move(out[j]));
  }
}

std::map<const Value*, Tensor> run_reference(const Graph& g, const std::map<const Value*, Tensor>& inputs) {
  std::map<const Value*, const Tensor*> env;
  std::map<const Value*, Tensor> owned;
  for (auto& [v, t] : inputs) env[v] = &t;
  for (auto& v : g.values)
    if (v->constant) env[v.get()] = v->constant.get();
  for (auto& n : g.nodes) {
    bool folded = true;
    for (Value* v : n->outputs)
      if (v && !v->constant) folded = false;
    if (folded) continue;
    std::vector<const Tensor*> in;
    for (Value* v : n->inputs) {
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
  std::set<std::string> names;
  for (auto& v : g.values) ONNXC_ASSERT(names.insert(v->name).second, "duplicate value name '" + v->name + "'");
  for (auto& n : g.nodes) {
    ONNXC_ASSERT(n->op, n->where() + ": no op");
    for (Value* v : n->inputs)
      ONNXC_ASSERT(!v || defined.count(v), n->where() + ": input '" + (v ? v->name : "") + "' used before definition");
    for (Value* v : n->outputs) {
      if (!v) continue;
      ONNXC_ASSERT(v->producer == n.get(), n->where() + ": output '" + v->name + "' has another producer");
      ONNXC_ASSERT(defined.insert(v).second, "value '" + v->name + "' defined twice");
      ONNXC_ASSERT(v->shape_known, "value '" + v->name + "' has no shape");
    }
  }
  for (Value* v : g.outputs) ONNXC_ASSERT(defined.count(v), "graph output '" + v->name + "' is never produced");
}

std::string dump_ir(const Graph& g) {
  std::string s = fmt::format("graph {} (opset {}, {} nodes)\n", g.name, g.opset, g.nodes.size());
  for (Value* v : g.inputs) s += fmt::format("  input  %{} : {}\n", v->name, v->type_str());
  size_t consts = 0, const_bytes = 0;
  for (auto& v : g.values)
    if (v->constant && !v->producer) ++consts, const_bytes += v->constant->nbytes();
  s += fmt::format("  {} initializers/constants, {} bytes\n", consts, const_bytes);
  for (auto& n : g.nodes) {
    std::string outs, ins;
    bool folded = true;
    for (Value* v : n->outputs) {
      if (!outs.empty()) outs += ", ";
      outs += v ? fmt::format("%{} : {}", v->name, v->type_str()) : "_";
      if (v && !v->constant) folded = false;
    }
    for (Value* v : n->inputs) {
      if (!ins.empty()) ins += ", ";
      ins += v ? "%" + v->name + (v->constant ? "(const)" : "") : "_";
    }
    s += fmt::format("  {}{} = {}({})  # {}\n", folded ? "[folded] " : "", outs, n->op_type, ins, n->name);
  }
  for (Value* v : g.outputs) s += fmt::format("  output %{} : {}{}\n", v->name, v->type_str(), v->constant ? " (constant)" : "");
  return s;
}

}  // namespace onnxc
