// tests/passes/pass_test_util.h — building small graphs by hand and checking that a pass
// keeps their meaning: every pass test runs the reference evaluator on random inputs
// before and after the pass and compares (Glow's GraphOptzTest style), besides checking
// the structure it expects.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/target.h"
#include "ir/eval.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "passes/pass.h"

namespace onnxc::test {

// The backend the tests compile for: the C backend on a fixed target (16-float vectors,
// 8 threads), so the tests do not depend on the machine they run on.
inline const Backend& test_backend() {
  static const std::unique_ptr<Backend> b = make_c_backend(parse_target("generic-vector:16"));
  return *b;
}
// PassOptions with the test backend (the layout pass and memory planning ask it).
inline PassOptions test_pass_options() {
  PassOptions o;
  o.backend = &test_backend();
  return o;
}

// Builds a graph node by node; values are created by name, shapes inferred as we go.
class GraphBuilder {
 public:
  GraphBuilder() : g(std::make_unique<Graph>()) {
    g->name = "test";
    g->opset = 14;  // every op the tests build exists there (HardSwish since 14)
    g->model_path = "test.onnx";
  }

  Value* input(const std::string& name, Shape s, DType t = DType::F32) {
    Value* v = g->add_value(name);
    v->dtype = t;
    v->shape = std::move(s);
    v->shape_known = true;
    v->is_input = true;
    g->inputs.push_back(v);
    return v;
  }

  Value* constant(const std::string& name, Tensor t) {
    Value* v = g->add_value(name);
    v->dtype = t.dtype;
    v->shape = t.shape;
    v->shape_known = true;
    v->constant = std::make_shared<const Tensor>(std::move(t));
    return v;
  }

  // A float32 constant with values uniform in [lo, hi).
  Value* random_constant(const std::string& name, Shape s, float lo = -1, float hi = 1) {
    Tensor t(DType::F32, std::move(s));
    std::uniform_real_distribution<float> d(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, d(rng));
    return constant(name, std::move(t));
  }

  // Adds a node and returns its outputs (shapes inferred, constants propagated).
  std::vector<Value*> node_n(const std::string& op, const std::vector<Value*>& ins, size_t nout,
                             std::map<std::string, Attr> attrs = {}, const std::string& name = "") {
    auto n = std::make_unique<Node>();
    n->name = name.empty() ? op + "_" + std::to_string(g->nodes.size()) : name;
    n->op_type = op;
    n->opset = g->opset;
    n->attrs = std::move(attrs);
    n->inputs = ins;
    std::vector<Value*> outs;
    for (size_t j = 0; j < nout; ++j) {
      Value* v = g->add_value(g->fresh_name(n->name + (nout == 1 ? "" : "_" + std::to_string(j))));
      v->producer = n.get();
      n->outputs.push_back(v);
      outs.push_back(v);
    }
    g->nodes.push_back(std::move(n));
    prepare_ops(*g);
    infer_shapes(*g);  // as the importer: constant inputs propagate (the nodes stay)
    return outs;
  }
  Value* node(const std::string& op, const std::vector<Value*>& ins, std::map<std::string, Attr> attrs = {},
              const std::string& name = "") {
    return node_n(op, ins, 1, std::move(attrs), name)[0];
  }

  void output(Value* v) {
    v->is_output = true;
    g->outputs.push_back(v);
  }

  std::unique_ptr<Graph> g;
  std::mt19937 rng{42};
};

inline std::map<const Value*, Tensor> random_inputs(const Graph& g, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::map<const Value*, Tensor> in;
  for (Value* v : g.inputs) {
    Tensor t(v->dtype, v->shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, d(rng));
    in[v] = std::move(t);
  }
  return in;
}

// Outputs by graph output position (values may be replaced by a pass).
inline std::vector<Tensor> reference_outputs(const Graph& g, const std::map<const Value*, Tensor>& in) {
  auto r = run_reference(g, in);
  std::vector<Tensor> out;
  for (Value* v : g.outputs) out.push_back(r.at(v));
  return out;
}

inline void expect_close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol = 1e-5) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].shape, b[k].shape) << "output " << k;
    double max_err = 0, max_ref = 0;
    for (int64_t i = 0; i < a[k].numel(); ++i) {
      const double x = a[k].get(i), y = b[k].get(i);
      // NaN on one side only is an infinite error (std::max would drop a NaN difference).
      const double err = std::isnan(x) || std::isnan(y) ? (std::isnan(x) == std::isnan(y) ? 0.0 : INFINITY) : std::fabs(x - y);
      max_err = std::max(max_err, err);
      if (!std::isnan(x)) max_ref = std::max(max_ref, std::fabs(x));
    }
    EXPECT_LE(max_err, tol * std::max(1.0, max_ref)) << "output " << k << " differs after the pass";
  }
}

// Runs `pass` on g (verifying the graph after it) and checks the outputs did not change.
// Returns what the pass returned.
inline bool run_pass_checked(Graph& g, const std::function<bool(Graph&)>& pass, double tol = 1e-5) {
  verify_graph(g);
  auto in = random_inputs(g);
  // Graph inputs survive every pass; key the inputs by name to be safe.
  auto before = reference_outputs(g, in);
  bool changed = pass(g);
  verify_graph(g);
  std::map<const Value*, Tensor> in2;
  for (Value* v : g.inputs)
    for (auto& [old, t] : in)
      if (old->name == v->name) in2[v] = t;
  auto after = reference_outputs(g, in2);
  expect_close(before, after, tol);
  return changed;
}

inline size_t count_ops(const Graph& g, const std::string& op) {
  size_t k = 0;
  for (auto& n : g.nodes) k += n->op_type == op;
  return k;
}

}  // namespace onnxc::test
