// ir/graph.h — the graph IR: values, nodes, attributes, and the graph that owns them.
//
// Conventions: every Value has a static shape and a dtype once shape inference has run
// (each op's Op::infer, called by the importer and when a pass inserts a node). A Value
// with `constant` set is known at compile time (an initializer, a Constant node, or
// something computed from constants); the backends store such values in the weights file
// and emit no code for the nodes that produce them. Absent optional
// inputs and outputs ("" in ONNX) are nullptr in Node::inputs / Node::outputs.
// Graph::nodes is kept in topological order. Passes (passes/) rewrite the graph in place.
// A Value's shape is logical; `layout` says how it is stored (ir/layout.h).
// Fused groups (passes/fuse.cc): a node may carry an epilogue, elementwise nodes (kept
// whole: op, attrs, name) run in order after it. The anchor's own output 0 (`anchor_out`)
// and every step's output but the last are the group's internal values: each step reads
// at least one earlier internal value (not only the latest: x * sigmoid(x) reads anchor_out
// twice), internal values are read only inside the group and are never graph outputs. The
// last step's output is the group's output 0 (its producer is the group node). Values the
// steps read from outside the group are listed in `extra_inputs` (constants too, unless the
// step op declares the input static); all_inputs() is inputs + extras.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/layout.h"
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
  Layout layout;            // storage layout (plain unless the layout pass changed it)
  int64_t arena_offset = -1;  // byte offset in the arena (memory plan), -1 = not planned
  // Memory plan: the value whose bytes contain this one (a Concat input stored at its place
  // in the Concat's output, or a Concat whose inputs all lie in order inside another one's),
  // null when it has a buffer of its own.
  const Value* stored_in = nullptr;
  Shape physical_shape() const { return onnxc::physical_shape(shape, layout); }
  uint64_t nbytes() const;  // stored bytes (physical shape)
  std::string type_str() const;  // "f32[1,3,224,224]", "f32[1,4,56,56,16] NCHW16c"
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
  // Fused group (see the file comment); empty for a plain node.
  std::vector<std::unique_ptr<Node>> epilogue;
  std::vector<Value*> extra_inputs;
  Value* anchor_out = nullptr;
  std::vector<std::string> origin;  // ONNX node names this node stands for, when not just `name`
  // compile-model --dynamic on a dimension other than the batch (Graph::run_size_max): a node
  // that must stop at the run's entries of that dimension (attention's keys), or may for speed
  // (the rows of a matrix product or LayerNormalization), takes the run-time size n, and that
  // dimension has run_a * n + run_b entries at run time; run_a 0: it does not.
  int64_t run_a = 0, run_b = 0;
  bool run_queries = false;  // Attention: its queries are the run's rows too (self-attention)

  Node();
  ~Node();
  Value* in(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* out(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
  std::vector<Value*> all_inputs() const;  // inputs, then extra_inputs
  bool folded() const;  // every output is a compile-time constant (no code is emitted)
  std::string where() const;  // "node 'conv_3' (Conv, opset 13)"
  [[noreturn]] void invalid(const std::string& msg) const;
  [[noreturn]] void unsupported(const std::string& msg) const;
};

// How the backend runs a fork-join region (Graph::task_regions) inside the inference, which the
// schedule's cost model predicts for (passes/schedule.h) and the C backend writes: each node
// an OpenMP task with depend clauses, its loops taskloops
// (compile-model --task-form omp-tasks, the default); each list on a group of the threads that
// share its loops (--task-form groups); or `omp parallel sections`, one thread per list
// (--omp-region op).
enum class RegionForm { OmpTasks, Groups, Sections };

// Which fork-join regions the schedule pass keeps in Graph::task_regions (compile-model
// --parallel auto|task|loop): those predicted to gain (Auto), every one it finds (Every:
// --parallel task) or none (None: --parallel loop, each node in turn with loop parallelism
// inside).
enum class TaskRegions { Auto, Every, None };

struct Graph {
  std::string model_path;  // for messages
  std::string name;
  int64_t opset = 0;
  std::vector<std::unique_ptr<Value>> values;
  std::vector<std::unique_ptr<Node>> nodes;  // topological order
  std::vector<Value*> inputs, outputs;

  Value* find(const std::string& name) const;
  Value* add_value(const std::string& name);  // name must be new
  std::string fresh_name(const std::string& base) const;  // a value name not yet used
  void swap_names(Value* a, Value* b);
  std::vector<Node*> users(const Value* v) const;  // nodes reading v (extra inputs included)
  // Drops values no node, graph input/output or epilogue refers to.
  void drop_unused_values();
  int64_t arena_bytes = -1;  // size of the planned arena (memory plan), -1 = not planned
  // compile-model --parallel batch (passes/batch_items.h): this graph is one item of a batch of
  // batch_items (> 1), which the generated code runs side by side, one item per thread, each
  // with its own arena; its graph inputs and outputs are the first of batch_items rows of the
  // model's. 1 = the graph is the whole model.
  int64_t batch_items = 1;
  // compile-model --dynamic (a run-time batch): batch_items is the most items a run takes, and
  // each run says how many (1 to batch_items); the API's shapes hold the most.
  bool dynamic_batch = false;
  // compile-model --dynamic on another dimension (passes/dynamic_dims.h, a transformer's
  // tokens): the graph is the model at run_size_max, and a run of n (1..run_size_max) computes
  // in place, in the first entries of each tensor along its run-time dimensions. Every graph
  // input and output has n entries along dimension run_size_axis, the dimensions before it 1.
  // 0: no such size.
  int64_t run_size_max = 0;
  int run_size_axis = -1;
  std::string run_size_symbol;
  size_t run_size_nodes = 0;  // the nodes with Node::run_a set, which the code generator checks
  // The shape of graph input or output v as the generated API sees it: with batch_items > 1,
  // the first dimension holds every item's rows.
  Shape api_shape(const Value* v) const {
    Shape s = v->shape;
    if (batch_items > 1 && !s.empty()) s[0] *= batch_items;
    return s;
  }
  int64_t arena_tensor_bytes = 0;  // memory plan: sum of the sizes of the tensors it placed
  // Fork-join regions of the macro-task schedule (passes/schedule.cc, compile-model
  // --parallel): the emitted nodes at positions first..last of `nodes` run as the lists of
  // `groups` side by side, each on a group of the threads (one thread each when there are no
  // more threads than lists), every list in graph order; other nodes run one after another
  // with loop parallelism inside. Memory planning keeps every tensor a region touches live
  // for the whole region.
  struct TaskRegion {
    size_t first = 0, last = 0;                // positions in `nodes`, inclusive
    std::vector<std::vector<size_t>> groups;   // positions of the emitted nodes of each list
    std::vector<double> list_seconds;          // predicted time of each list at one thread
    int threads = 1;                            // the threads the predictions are for
    double loop_seconds = 0, task_seconds = 0;  // predicted: one after another / side by side
  };
  std::vector<TaskRegion> task_regions;  // in order, disjoint
  // Memory cap in bytes (compile-model --max-memory), 0 = none. It bounds the constants the
  // compiler holds (initializers as they are read, tensors made by folding or repacking:
  // MemoryBudget), the weights file, the arena, and each graph input and output.
  uint64_t max_memory = 0;

 private:
  std::map<std::string, Value*> by_name_;
};

// The default of --max-memory (and ImportOptions::max_memory): 8 GiB.
constexpr uint64_t kDefaultMaxMemory = uint64_t{8} << 30;

// "1.5 GiB (1610612736 bytes)".
std::string bytes_str(uint64_t bytes);
// Throws CompileError(Unsupported) when `bytes` is over the graph's cap:
//   "<what> needs N bytes, over the --max-memory cap of C; raise it with --max-memory SIZE (0 = no cap)"
void check_memory_cap(const Graph& g, uint64_t bytes, const std::string& what);

// Bytes of every constant the graph holds (values with `constant` set).
uint64_t constant_bytes(const Graph& g);

// Counts the bytes of constant tensors a stage creates against Graph::max_memory, starting
// from what the graph holds when it is made. Tensors are counted when created and not
// released when they become unused: the count bounds what the stage can hold at once.
class MemoryBudget {
 public:
  explicit MemoryBudget(const Graph& g) : g_(g), used_(constant_bytes(g)) {}
  // Whether `bytes` more fit under the cap (folding asks, and leaves the node as code if not).
  bool fits(uint64_t bytes) const { return !g_.max_memory || (bytes <= g_.max_memory && used_ <= g_.max_memory - bytes); }
  // Counts `bytes` more; CompileError(Unsupported) naming `what` when they do not fit.
  void charge(uint64_t bytes, const std::string& what);
  uint64_t used() const { return used_; }

 private:
  const Graph& g_;
  uint64_t used_;
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
  std::vector<std::string> strings(const std::string& name, std::vector<std::string> def = {});
  std::shared_ptr<const Tensor> tensor(const std::string& name);  // nullptr when absent
  void ignore(const std::string& name) { read_.push_back(name); }  // accepted, has no effect
  void done() const;

 private:
  const Attr* get(const std::string& name, Attr::Type t);
  const Node& n_;
  std::vector<std::string> read_;
};

}  // namespace onnxc
