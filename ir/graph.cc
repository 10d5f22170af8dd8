// ir/graph.cc — Graph/Node/Value basics, attribute reading, op helpers and error helpers.
#include "ir/graph.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "ir/op.h"

namespace onnxc {

void fail_invalid(const std::string& msg) { throw CompileError(CompileError::Kind::Invalid, msg); }
void fail_unsupported(const std::string& msg) { throw CompileError(CompileError::Kind::Unsupported, msg); }
void internal_error(const char* file, int line, const char* cond, const std::string& msg) {
  std::ostringstream s;
  s << file << ":" << line << ": assertion '" << cond << "' failed: " << msg;
  throw InternalError(s.str());
}

std::string Value::type_str() const {
  if (!shape_known) return std::string(dtype_name(dtype)) + "[?]";
  if (layout.is_plain()) return std::string(dtype_name(dtype)) + shape_str(shape);
  return std::string(dtype_name(dtype)) + shape_str(physical_shape()) + " " + layout.str(shape.size());
}

uint64_t Value::nbytes() const { return nbytes_of(physical_shape(), dtype); }

std::string bytes_str(uint64_t bytes) {
  static const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s (%llu bytes)", v, kUnits[u], static_cast<unsigned long long>(bytes));
  return buf;
}

// "over the --max-memory cap of C; raise it ...": how every cap error ends.
static std::string over_cap(const Graph& g) {
  return "over the --max-memory cap of " + bytes_str(g.max_memory) + "; raise it with --max-memory SIZE (0 = no cap)";
}

void check_memory_cap(const Graph& g, uint64_t bytes, const std::string& what) {
  if (!g.max_memory || bytes <= g.max_memory) return;
  fail_unsupported(what + " needs " + bytes_str(bytes) + ", " + over_cap(g));
}

uint64_t constant_bytes(const Graph& g) {
  uint64_t n = 0;
  for (auto& v : g.values)
    if (v->constant) n = add_bytes(n, v->constant->nbytes(), "the graph's constants");
  return n;
}

void MemoryBudget::charge(uint64_t bytes, const std::string& what) {
  if (fits(bytes)) {
    used_ += bytes;
    return;
  }
  fail_unsupported(what + " needs " + bytes_str(bytes) + ", which would bring the constants held to " +
                   bytes_str(add_bytes(used_, bytes, "the constants held")) + ", " + over_cap(g_));
}

std::vector<Value*> Node::all_inputs() const {
  std::vector<Value*> r = inputs;
  r.insert(r.end(), extra_inputs.begin(), extra_inputs.end());
  return r;
}

bool Node::folded() const {
  for (Value* v : outputs)
    if (v && !v->constant) return false;
  return true;
}

Node::Node() = default;
Node::~Node() = default;

std::string Node::where() const {
  return "node '" + name + "' (" + op_type + ", opset " + std::to_string(opset) + ")";
}
void Node::invalid(const std::string& msg) const { fail_invalid(where() + ": " + msg); }
void Node::unsupported(const std::string& msg) const { fail_unsupported(where() + ": " + msg); }

Value* Graph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Value* Graph::add_value(const std::string& name) {
  ONNXC_ASSERT(!find(name), "duplicate value " + name);
  values.push_back(std::make_unique<Value>());
  Value* v = values.back().get();
  v->name = name;
  by_name_[name] = v;
  return v;
}

std::string Graph::fresh_name(const std::string& base) const {
  if (!find(base)) return base;
  for (int k = 1;; ++k)
    if (!find(base + "_" + std::to_string(k))) return base + "_" + std::to_string(k);
}

void Graph::swap_names(Value* a, Value* b) {
  std::swap(a->name, b->name);
  by_name_[a->name] = a;
  by_name_[b->name] = b;
}

std::vector<Node*> Graph::users(const Value* v) const {
  std::vector<Node*> r;
  for (auto& n : nodes)
    if (std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end() ||
        std::find(n->extra_inputs.begin(), n->extra_inputs.end(), v) != n->extra_inputs.end())
      r.push_back(n.get());
  return r;
}

void Graph::drop_unused_values() {
  std::set<const Value*> used(inputs.begin(), inputs.end());
  used.insert(outputs.begin(), outputs.end());
  auto mark = [&](const Node& n) {
    for (Value* v : n.inputs) used.insert(v);
    for (Value* v : n.outputs) used.insert(v);
  };
  for (auto& n : nodes) {
    mark(*n);
    for (Value* v : n->extra_inputs) used.insert(v);
    if (n->anchor_out) used.insert(n->anchor_out);
    for (auto& e : n->epilogue) mark(*e);
  }
  std::vector<std::unique_ptr<Value>> keep;
  for (auto& v : values) {
    if (used.count(v.get())) keep.push_back(std::move(v));
    else by_name_.erase(v->name);
  }
  values = std::move(keep);
}

static const char* attr_type_name(Attr::Type t) {
  switch (t) {
    case Attr::Type::Float: return "a float"; case Attr::Type::Int: return "an int";
    case Attr::Type::String: return "a string"; case Attr::Type::Tensor: return "a tensor";
    case Attr::Type::Floats: return "a list of floats"; case Attr::Type::Ints: return "a list of ints";
    case Attr::Type::Strings: return "a list of strings"; case Attr::Type::Graph: return "a graph";
    case Attr::Type::Other: break;
  }
  return "an unsupported type";
}

const Attr* AttrReader::get(const std::string& name, Attr::Type t) {
  read_.push_back(name);
  auto it = n_.attrs.find(name);
  if (it == n_.attrs.end()) return nullptr;
  if (it->second.type != t)
    n_.invalid("attribute '" + name + "' must be " + attr_type_name(t) + ", got " + attr_type_name(it->second.type));
  return &it->second;
}

int64_t AttrReader::i(const std::string& name, int64_t def) { auto a = get(name, Attr::Type::Int); return a ? a->i : def; }
std::optional<int64_t> AttrReader::opt_i(const std::string& name) {
  auto a = get(name, Attr::Type::Int);
  return a ? std::optional<int64_t>(a->i) : std::nullopt;
}
double AttrReader::f(const std::string& name, double def) { auto a = get(name, Attr::Type::Float); return a ? a->f : def; }
std::optional<double> AttrReader::opt_f(const std::string& name) {
  auto a = get(name, Attr::Type::Float);
  return a ? std::optional<double>(a->f) : std::nullopt;
}
std::string AttrReader::s(const std::string& name, const std::string& def) {
  auto a = get(name, Attr::Type::String);
  return a ? a->s : def;
}
std::vector<int64_t> AttrReader::ints(const std::string& name, std::vector<int64_t> def) {
  auto a = get(name, Attr::Type::Ints);
  return a ? a->ints : def;
}
std::optional<std::vector<int64_t>> AttrReader::opt_ints(const std::string& name) {
  auto a = get(name, Attr::Type::Ints);
  return a ? std::optional<std::vector<int64_t>>(a->ints) : std::nullopt;
}
std::vector<double> AttrReader::floats(const std::string& name, std::vector<double> def) {
  auto a = get(name, Attr::Type::Floats);
  return a ? a->floats : def;
}
std::vector<std::string> AttrReader::strings(const std::string& name, std::vector<std::string> def) {
  auto a = get(name, Attr::Type::Strings);
  return a ? a->strings : def;
}
std::shared_ptr<const Tensor> AttrReader::tensor(const std::string& name) {
  auto a = get(name, Attr::Type::Tensor);
  return a ? a->t : nullptr;
}
void AttrReader::done() const {
  for (auto& [name, a] : n_.attrs)
    if (std::find(read_.begin(), read_.end(), name) == read_.end())
      n_.invalid("unknown attribute '" + name + "'");
}

const Tensor& static_tensor(const Node& n, size_t i, const char* what) {
  Value* v = n.in(i);
  if (!v) n.invalid(std::string("input ") + std::to_string(i) + " (" + what + ") is absent");
  if (!v->constant)
    n.unsupported(std::string("input ") + std::to_string(i) + " ('" + v->name + "', " + what +
                  ") must be a compile-time constant");
  return *v->constant;
}

void set_output(Node& n, size_t i, DType t, Shape s) {
  Value* v = n.out(i);
  if (!v) return;
  numel(s);  // validates
  v->dtype = t;
  v->shape = std::move(s);
  v->shape_known = true;
}

void expect_dtype(const Node& n, size_t i, std::initializer_list<DType> allowed) {
  Value* v = n.in(i);
  if (!v) n.invalid("input " + std::to_string(i) + " is required");
  for (DType t : allowed)
    if (v->dtype == t) return;
  std::string names;
  for (DType t : allowed) names += std::string(names.empty() ? "" : ", ") + dtype_name(t);
  n.unsupported("input " + std::to_string(i) + " ('" + v->name + "') has dtype " + dtype_name(v->dtype) +
                ", supported: " + names);
}

void expect_float(const Node& n, size_t i) { expect_dtype(n, i, {DType::F32}); }

bool is_index_aligned_elementwise(const Node& n) {
  if (!n.op || !n.op->index_aligned() || n.outputs.size() != 1 || !n.out(0) || n.out(0)->dtype != DType::F32 || n.folded())
    return false;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.in(i) && !n.op->static_input(i) && n.in(i)->dtype != DType::F32) return false;
  return true;
}

}  // namespace onnxc
