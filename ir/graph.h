// ir/graph.h — the graph IR: values, nodes, attributes, and the graph that owns them.
//
// Conventions: every Value has a static shape and a dtype once shape inference has run
// (ir/infer.cc). A Value with `constant` set is known at compile time (an initializer, a
// Constant node, or something computed from constants); codegen stores such values in the
// weights file and never emits code for the nodes that produce them. Absent optional
// inputs and outputs ("" in ONNX) are nullptr in Node::inputs / Node::outputs.
// Graph::nodes is kept in topological order. Passes (issue 3) rewrite the graph in place.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/tensor.h"

namespace onnxc {

class Op;
struct Node;

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  bool shape_known = false;
  std::shared_ptr<const Tensor> constant;  // compile-time value, if known
  Node* producer = nullptr;
  bool is_input = false;   // graph (runtime) input
  bool is_output = false;  // graph output
  std::string type_str() const;  // "f32[1,3,224,224]"
};

struct Attr {
  enum class Type { Float, Int, String, Tensor, Floats, Ints, Strings, Graph, Other };
  Type type = Type::Other;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<const Tensor> t;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

struct Node {
  std::string name;     // ONNX node name (or a generated "OpType_k" when the model has none)
  std::string op_type;
  int64_t opset = 0;
  std::map<std::string, Attr> attrs;
  std::vector<Value*> inputs;   // nullptr = absent optional input
  std::vector<Value*> outputs;  // nullptr = absent optional output
  std::unique_ptr<Op> op;

  Node();
  ~Node();
  Value* in(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* out(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
  std::string where() const;  // "node 'conv_3' (Conv, opset 13)"
  [[noreturn]] void invalid(const std::string& msg) const;
  [[noreturn]] void unsupported(const std::string& msg) const;
};

struct Graph {
  std::string model_path;  // for messages
  std::string name;
  int64_t opset = 0;
  std::vector<std::unique_ptr<Value>> values;
  std::vector<std::unique_ptr<Node>> nodes;  // topological order
  std::vector<Value*> inputs, outputs;

  Value* find(const std::string& name) const;
  Value* add_value(const std::string& name);  // name must be new
  std::vector<Node*> users(const Value* v) const;

 private:
  std::map<std::string, Value*> by_name_;
};

// Reads a node's attributes for Op::parse: applies ONNX defaults, checks types, and
// `done()` rejects any attribute the op did not read (unknown attributes are errors).
class AttrReader {
 public:
  explicit AttrReader(const Node& n) : n_(n) {}
  const Node& node() const { return n_; }
  int64_t opset() const { return n_.opset; }
  bool has(const std::string& name) const { return n_.attrs.count(name) != 0; }
  int64_t i(const std::string& name, int64_t def);
  std::optional<int64_t> opt_i(const std::string& name);
  double f(const std::string& name, double def);
  std::optional<double> opt_f(const std::string& name);
  std::string s(const std::string& name, const std::string& def);
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> def = {});
  std::optional<std::vector<int64_t>> opt_ints(const std::string& name);
  std::vector<double> floats(const std::string& name, std::vector<double> def = {});
  std::shared_ptr<const Tensor> tensor(const std::string& name);  // nullptr when absent
  void ignore(const std::string& name) { read_.push_back(name); }  // accepted, has no effect
  void done() const;

 private:
  const Attr* get(const std::string& name, Attr::Type t);
  const Node& n_;
  std::vector<std::string> read_;
};

}  // namespace onnxc
