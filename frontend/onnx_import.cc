// frontend/onnx_import.cc — ONNX protobuf → ir::Graph (see onnx_import.h).
//
// float16 (ir/dtype.h): initializers and tensor attributes become float32; a float16 graph
// input gets a Cast to float32 that every node reads instead, a float16 graph output is
// computed in float32 and converted by a Cast at the end, and the output of a Cast to
// float16 is read by the other nodes through a Cast back to float32 (so it is rounded).
// ONNX Runtime's QOperator ops (com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearConcat, QGemm) are expanded into
// DequantizeLinear → the float op → QuantizeLinear (expand_contrib).
// Known gaps: sparse initializers, subgraph attributes (If/Loop/Scan), other non-default
// domains, bfloat16/string tensors and segment-split tensors are rejected as unsupported. Opsets 1 to kMaxOpset (28) are read; each op file under ir/ops/ lists the
// versions of its op and handles (or refuses by name) the forms each version adds. A model
// importing a newer opset is refused as a whole (exit 3): its ops may mean something onnxc
// does not know.
#include "frontend/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "ir/eval.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

// ONNX Runtime's QOperator ops of domain com.microsoft that the importer expands (expand_contrib).
const std::set<std::string> kContribOps = {"QGemm", "QLinearAdd", "QLinearConcat", "QLinearGlobalAveragePool",
                                           "QLinearLeakyRelu", "QLinearMul", "QLinearSigmoid"};

// Newest opset of the default domain onnxc knows: every op file describes its op up to it.
constexpr int64_t kMaxOpset = 28;

DType convert_dtype(int c, const std::string& what) {
  if (!dtype_supported(c)) fail_unsupported(what + " has element type " + onnx_type_name(c) + " (code " + std::to_string(c) + "), which onnxc does not support");
  return static_cast<DType>(c);
}

std::string read_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw CompileError(CompileError::Kind::Io, "cannot read " + what + " '" + path + "': it is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CompileError(CompileError::Kind::Io, "cannot open " + what + " '" + path + "': " + std::strerror(errno));
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw CompileError(CompileError::Kind::Io, "error reading " + what + " '" + path + "'");
  return s;
}

class Importer {
 public:
  Importer(const std::string& model_dir, const ImportOptions& opt) : dir_(model_dir), opt_(opt) {}

  std::unique_ptr<Graph> run(const onnx::ModelProto& m, const std::string& display) {
    g_ = std::make_unique<Graph>();
    g_->model_path = display;
    if (!m.has_graph()) fail_invalid("model has no graph");
    const onnx::GraphProto& gp = m.graph();
    g_->name = gp.name().empty() ? "main" : gp.name();
    g_->max_memory = opt_.max_memory;
    budget_ = std::make_unique<MemoryBudget>(*g_);
    read_opset(m);
    for (const auto& t : gp.initializer()) add_initializer(t);
    if (gp.sparse_initializer_size()) fail_unsupported("sparse initializers are not supported");
    for (const auto& o : gp.output())
      if (o.type().has_tensor_type() && o.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT16) half_outputs_.insert(o.name());
    for (const auto& n : gp.node()) {
      model_names_.insert(n.name());
      model_names_.insert(n.output().begin(), n.output().end());
    }
    for (const auto& i : gp.input()) model_names_.insert(i.name());
    read_inputs(gp);
    read_nodes(gp);
    read_outputs(gp);
    prepare_ops(*g_);
    infer_shapes(*g_);
    for (Value* v : g_->outputs) check_memory_cap(*g_, v->nbytes(), "graph output '" + v->name + "' " + v->type_str());
    verify_graph(*g_);
    return std::move(g_);
  }

 private:
  void read_opset(const onnx::ModelProto& m) {
    for (const auto& o : m.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") g_->opset = o.version();
    if (m.opset_import_size() == 0) g_->opset = 1;  // IR version 1..2 models have no opset_import
    if (g_->opset == 0) fail_invalid("model imports no opset of the default ONNX domain");
    if (g_->opset < 0) fail_invalid("model imports opset " + std::to_string(g_->opset) + " of the default ONNX domain; opsets start at 1");
    if (g_->opset > kMaxOpset)
      fail_unsupported("opset " + std::to_string(g_->opset) + " is newer than onnxc knows: it supports opsets 1 to " +
                       std::to_string(kMaxOpset) + " of the default ONNX domain");
  }

  // Element count and bytes of a shape, or an error that names `what`.
  static void bytes_of(const Shape& shape, DType dt, const std::string& what, int64_t* n, uint64_t* nbytes) {
    if (shape.size() > kMaxRank)
      fail_unsupported(what + " has " + std::to_string(shape.size()) + " dimensions; onnxc supports up to " + std::to_string(kMaxRank));
    try {
      *n = numel(shape);
      *nbytes = nbytes_of(shape, dt);
    } catch (const CompileError& e) {
      fail_invalid(what + ": " + e.what());
    }
  }

  // Checks a TensorProto completely (dims, sizes, which data fields it uses, external data
  // range) before allocating anything, charges its bytes to the memory budget, then copies.
  std::shared_ptr<const Tensor> convert_tensor(const onnx::TensorProto& t, const std::string& what) {
    // float16 data (raw_data, or int32_data holding the bits) becomes a float32 tensor.
    const bool half = t.data_type() == onnx::TensorProto::FLOAT16;
    DType dt = half ? DType::F16 : convert_dtype(t.data_type(), what);
    Shape shape(t.dims().begin(), t.dims().end());
    for (int64_t d : shape)
      if (d < 0) fail_invalid(what + " has negative dimension in " + shape_str(shape));
    if (t.has_segment()) fail_unsupported(what + " is segmented, which is not supported");
    const std::string type = std::string(dtype_name(dt)) + shape_str(shape);
    int64_t n;
    uint64_t nbytes;
    bytes_of(shape, dt, what, &n, &nbytes);
    // The typed field this dtype's values belong in (ONNX TensorProto), and every typed
    // field that holds values.
    const char* field = dt == DType::F32 ? "float_data" : dt == DType::F64 ? "double_data" : dt == DType::I64 ? "int64_data"
                        : dt == DType::U32 || dt == DType::U64 ? "uint64_data" : "int32_data";
    std::vector<std::pair<const char*, int>> typed;
    for (auto [name, count] : {std::pair<const char*, int>{"float_data", t.float_data_size()}, {"double_data", t.double_data_size()},
                               {"int32_data", t.int32_data_size()}, {"int64_data", t.int64_data_size()},
                               {"uint64_data", t.uint64_data_size()}, {"string_data", t.string_data_size()}})
      if (count) typed.emplace_back(name, count);
    const bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
    if (external && (t.has_raw_data() || !typed.empty()))
      fail_invalid(what + " stores its data externally but also has " + (t.has_raw_data() ? "raw_data" : typed[0].first));
    if (!external && t.external_data_size())
      fail_invalid(what + " has external_data entries but its data_location is not EXTERNAL");
    if (t.has_raw_data() && !typed.empty())
      fail_invalid(what + " " + type + " has both raw_data (" + std::to_string(t.raw_data().size()) + " bytes) and " + typed[0].first +
                   " (" + std::to_string(typed[0].second) + " values); a tensor keeps its data in one of them");
    if (typed.size() > 1)
      fail_invalid(what + " " + type + " has values in both " + typed[0].first + " and " + typed[1].first);
    ExternalRange ext;
    if (external) {
      ext = external_range(t, what, nbytes);
    } else if (t.has_raw_data()) {
      if (t.raw_data().size() != nbytes)
        fail_invalid(what + " " + type + " needs " + std::to_string(nbytes) + " bytes but raw_data has " + std::to_string(t.raw_data().size()));
    } else if (!typed.empty() && std::strcmp(typed[0].first, field) != 0) {
      fail_invalid(what + " " + type + " has its values in " + typed[0].first + ", but " + dtype_name(dt) + " values belong in " + field);
    } else {
      int64_t count = typed.empty() ? 0 : typed[0].second;
      if (count != n)
        fail_invalid(what + " " + type + " needs " + std::to_string(n) + " elements but its " + field + " holds " + std::to_string(count));
    }
    budget_->charge(nbytes, what + " " + type);
    auto out = std::make_shared<Tensor>(dt, shape);
    if (nbytes == 0) {
      // an empty tensor: nothing to copy (its data fields may be null)
    } else if (external) {
      read_external(ext, what, out->bytes);
    } else if (t.has_raw_data()) {
      std::memcpy(out->bytes.data(), t.raw_data().data(), nbytes);
    } else if (dt == DType::F32) {
      std::memcpy(out->bytes.data(), t.float_data().data(), nbytes);
    } else if (dt == DType::F64) {
      std::memcpy(out->bytes.data(), t.double_data().data(), nbytes);
    } else if (dt == DType::I64) {
      std::memcpy(out->bytes.data(), t.int64_data().data(), nbytes);
    } else if (dt == DType::U32 || dt == DType::U64) {
      for (int64_t i = 0; i < n; ++i) out->set_i64(i, static_cast<int64_t>(t.uint64_data(static_cast<int>(i))));
    } else if (half) {
      for (int64_t i = 0; i < n; ++i) out->data<uint16_t>()[i] = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
    } else {
      for (int64_t i = 0; i < n; ++i) out->set(i, t.int32_data(static_cast<int>(i)));
    }
    if (half) {
      budget_->charge(nbytes * 2, what + " " + type + " as float32");
      auto wide = std::make_shared<Tensor>(DType::F32, shape);
      for (int64_t i = 0; i < n; ++i) wide->data<float>()[i] = half_to_float(out->data<uint16_t>()[i]);
      return wide;
    }
    return out;
  }

  struct ExternalRange {
    fs::path file;
    std::string location;
    int64_t offset = 0;
  };

  // Where an external tensor of `need` bytes lies; checks the location stays in the model's
  // folder and that offset and length are numbers that describe a range inside the file.
  ExternalRange external_range(const onnx::TensorProto& t, const std::string& what, uint64_t need) {
    ExternalRange r;
    std::optional<int64_t> length;
    for (const auto& kv : t.external_data()) {
      if (kv.key() == "location") {
        r.location = kv.value();
        continue;
      }
      if (kv.key() != "offset" && kv.key() != "length") continue;  // "checksum" and others: not used
      int64_t v = 0;
      try {
        size_t used = 0;
        v = std::stoll(kv.value(), &used);
        if (used != kv.value().size()) throw std::invalid_argument("trailing characters");
      } catch (const std::exception&) {
        fail_invalid(what + ": external data " + kv.key() + " '" + kv.value() + "' is not a number");
      }
      if (v < 0) fail_invalid(what + ": external data " + kv.key() + " " + std::to_string(v) + " is negative");
      if (kv.key() == "offset") r.offset = v;
      else length = v;
    }
    if (r.location.empty()) fail_invalid(what + ": external data has no location");
    if (dir_.empty()) fail_invalid(what + ": external data '" + r.location + "' cannot be resolved for a model read from memory");
    fs::path rel(r.location);
    if (rel.is_absolute()) fail_invalid(what + ": external data location '" + r.location + "' is an absolute path; it must be relative to the model's folder");
    std::error_code ec;
    fs::path base = fs::weakly_canonical(fs::path(dir_), ec);
    r.file = fs::weakly_canonical(base / rel, ec);
    auto [bi, fi] = std::mismatch(base.begin(), base.end(), r.file.begin(), r.file.end());
    if (ec || bi != base.end() || r.file == base)
      fail_invalid(what + ": external data location '" + r.location + "' points outside the model's folder");
    if (!fs::is_regular_file(r.file, ec)) fail_invalid(what + ": external data file '" + r.location + "' does not exist in the model's folder");
    uint64_t fsize = fs::file_size(r.file, ec);
    if (ec) fail_invalid(what + ": cannot read external data file '" + r.location + "'");
    if (length && static_cast<uint64_t>(*length) != need)
      fail_invalid(what + ": external data length " + std::to_string(*length) + " does not match the tensor's " + std::to_string(need) + " bytes");
    const uint64_t off = static_cast<uint64_t>(r.offset);
    if (off > fsize || fsize - off < need)
      fail_invalid(what + ": external data range [" + std::to_string(off) + ", +" + std::to_string(need) + ") is outside '" + r.location +
                   "' (" + std::to_string(fsize) + " bytes)");
    return r;
  }

  void read_external(const ExternalRange& r, const std::string& what, std::vector<unsigned char>& dst) {
    std::ifstream f(r.file, std::ios::binary);
    f.seekg(r.offset);
    f.read(reinterpret_cast<char*>(dst.data()), static_cast<std::streamsize>(dst.size()));
    if (!f) fail_invalid(what + ": error reading external data file '" + r.location + "'");
  }

  void add_initializer(const onnx::TensorProto& t) {
    if (t.name().empty()) fail_invalid("an initializer has no name");
    if (g_->find(t.name())) fail_invalid("initializer '" + t.name() + "' is defined twice");
    Value* v = g_->add_value(t.name());
    v->constant = convert_tensor(t, "initializer '" + t.name() + "'");
    v->dtype = v->constant->dtype;
    v->shape = v->constant->shape;
    v->shape_known = true;
  }

  void read_inputs(const onnx::GraphProto& gp) {
    for (auto& [name, s] : opt_.input_shapes) {
      bool found = false;
      std::string names;
      for (const auto& in : gp.input()) {
        found = found || in.name() == name;
        if (!g_->find(in.name())) names += (names.empty() ? "" : ", ") + in.name();
      }
      if (!found || g_->find(name)) fail_invalid("--input-shape names '" + name + "', which is not a graph input (inputs: " + names + ")");
    }
    check_dynamic(gp);
    std::set<std::string> seen;
    for (const auto& in : gp.input()) {
      if (!seen.insert(in.name()).second) fail_invalid("graph input '" + in.name() + "' is listed twice");
      if (g_->find(in.name())) continue;  // an initializer listed as input (IR < 4): a constant
      std::string what = "graph input '" + in.name() + "'";
      if (!in.has_type() || !in.type().has_tensor_type()) fail_unsupported(what + " is not a tensor");
      const auto& tt = in.type().tensor_type();
      Value* v = g_->add_value(in.name());
      v->dtype = tt.elem_type() == onnx::TensorProto::FLOAT16 ? DType::F16 : convert_dtype(tt.elem_type(), what);
      v->is_input = true;
      auto ov = opt_.input_shapes.find(in.name());
      if (!tt.has_shape() && ov == opt_.input_shapes.end())
        fail_invalid(what + " has no shape; give one with --input-shape " + in.name() + "=d0,d1,...");
      Shape shape;
      for (int k = 0; tt.has_shape() && k < tt.shape().dim_size(); ++k) {
        const auto& d = tt.shape().dim(k);
        const std::string param = d.has_dim_param() ? d.dim_param() : "";
        const DynamicDim* dyn = named_dim(opt_.dynamic, in.name(), k, d);
        const DynamicDim* fix = named_dim(opt_.fixed, in.name(), k, d);
        if ((dyn || fix) && ov != opt_.input_shapes.end())
          fail_invalid((dyn ? "--dynamic " + dyn->spec() : "--fix-dim " + fix->spec()) + " names dimension " + std::to_string(k) + " of " +
                       what + ", whose shape --input-shape also gives: give it with one of them");
        if (dyn && fix)
          fail_invalid("--dynamic " + dyn->spec() + " and --fix-dim " + fix->spec() + " both name dimension " + std::to_string(k) + " of " +
                       what + ": give it with one of them");
        if (dyn) {
          if (opt_.dynamic_uses) opt_.dynamic_uses->push_back({dyn, in.name(), k});
          shape.push_back(dyn->max);
          continue;
        }
        if (fix) {
          shape.push_back(fix->max);
          continue;
        }
        if (d.has_dim_value() && d.dim_value() >= 0) { shape.push_back(d.dim_value()); continue; }
        if (ov != opt_.input_shapes.end()) { shape.push_back(-1); continue; }
        std::string sym = !param.empty() ? "'" + param + "'" : "(unnamed)";
        const std::string spec = !param.empty() ? param : in.name() + ":" + std::to_string(k);
        fail_invalid(what + " dimension " + std::to_string(k) + " " + sym + " is symbolic; fix it with --fix-dim " + spec +
                     "=N (or --input-shape " + in.name() + "=d0,d1,...) or keep it a run-time size with --dynamic " + spec + "=MAX");
      }
      if (ov != opt_.input_shapes.end()) {
        const Shape& o = ov->second;
        if (tt.has_shape() && o.size() != shape.size())
          fail_invalid(what + " has rank " + std::to_string(shape.size()) + " but --input-shape gives " + shape_str(o));
        for (size_t k = 0; k < shape.size(); ++k)
          if (shape[k] >= 0 && shape[k] != o[k])
            fail_invalid(what + " dimension " + std::to_string(k) + " is fixed to " + std::to_string(shape[k]) +
                         " in the model but --input-shape gives " + std::to_string(o[k]));
        shape = o;
      }
      if (opt_.batch_one && !shape.empty()) shape[0] = 1;
      int64_t n;
      uint64_t nbytes;
      bytes_of(shape, v->dtype, what, &n, &nbytes);
      check_memory_cap(*g_, nbytes, what + " " + dtype_name(v->dtype) + shape_str(shape));
      v->shape = shape;
      v->shape_known = true;
      g_->inputs.push_back(v);
      if (v->dtype == DType::F16) alias_[v->name] = edge_cast(v, DType::F32);  // the nodes read its float32 copy
    }
  }

  // The --dynamic (--fix-dim) dimension in `list` that names dimension k of graph input `input`
  // (by its symbol, when the model leaves it symbolic, or by input and axis), or null.
  static const DynamicDim* named_dim(const std::vector<DynamicDim>& list, const std::string& input, int k,
                                     const onnx::TensorShapeProto_Dimension& d) {
    const bool fixed = d.has_dim_value() && d.dim_value() >= 0;
    const std::string param = d.has_dim_param() ? d.dim_param() : "";
    for (const DynamicDim& dd : list)
      if (dd.symbol.empty() ? dd.input == input && dd.axis == k : !fixed && dd.symbol == param) return &dd;
    return nullptr;
  }

  // --dynamic and --fix-dim: each names a symbolic dimension of a graph input (not an
  // initializer listed as one), else the error says what the model has.
  void check_dynamic(const onnx::GraphProto& gp) {
    check_named(gp, opt_.dynamic, "--dynamic");
    check_named(gp, opt_.fixed, "--fix-dim");
  }
  void check_named(const onnx::GraphProto& gp, const std::vector<DynamicDim>& list, const std::string& option) {
    std::set<std::string> symbols;  // "'batch' (input:0)"
    std::set<const DynamicDim*> found;
    for (const auto& in : gp.input()) {
      if (g_->find(in.name()) || !in.has_type() || !in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
      const auto& shape = in.type().tensor_type().shape();
      for (int k = 0; k < shape.dim_size(); ++k) {
        const auto& d = shape.dim(k);
        const bool fixed = d.has_dim_value() && d.dim_value() >= 0;
        const std::string param = d.has_dim_param() ? d.dim_param() : "";
        if (!fixed && !param.empty()) symbols.insert("'" + param + "' (" + in.name() + ":" + std::to_string(k) + ")");
        const DynamicDim* dd = named_dim(list, in.name(), k, d);
        if (dd && fixed)
          fail_invalid(option + " " + dd->spec() + ": graph input '" + in.name() + "' dimension " + std::to_string(k) + " is fixed to " +
                       std::to_string(d.dim_value()) + " in the model");
        if (dd) found.insert(dd);
      }
    }
    for (const DynamicDim& dd : list)
      if (!found.count(&dd)) {
        std::string names;
        for (auto& s : symbols) names += (names.empty() ? "" : ", ") + s;
        fail_invalid(option + " " + dd.spec() + " names no symbolic dimension of a graph input (symbolic dimensions: " +
                     (names.empty() ? std::string("none") : names) + ")");
      }
  }

  // float16 at the edges (ir/dtype.h): a Cast of `from` to `to` (F32 or F16), placed at the end
  // of the node list; returns its output, a new value named after `from`.
  Value* edge_cast(Value* from, DType to, const std::string& out_name = "") {
    const std::string name = fresh_name(from->name + (to == DType::F16 ? "_to_float16" : "_to_float32"));
    const std::string out = out_name.empty() ? fresh_name(from->name + (to == DType::F16 ? "~f16" : "~f32")) : out_name;
    return append_node("Cast", std::max<int64_t>(g_->opset, 13), name, {from}, {{"to", int_attr(static_cast<int64_t>(to))}}, out);
  }

  // A node the importer adds (not in the model): appended to the node list with one output,
  // a new value named `out_name`; returns that value.
  Value* append_node(const std::string& type, int64_t opset, const std::string& name, const std::vector<Value*>& inputs,
                     std::map<std::string, Attr> attrs, const std::string& out_name) {
    auto n = std::make_unique<Node>();
    n->op_type = type;
    n->opset = opset;
    n->name = name;
    n->attrs = std::move(attrs);
    n->inputs = inputs;
    Value* out = g_->add_value(out_name);
    out->producer = n.get();
    n->outputs.push_back(out);
    g_->nodes.push_back(std::move(n));
    return out;
  }

  static Attr int_attr(int64_t v) {
    Attr a;
    a.type = Attr::Type::Int;
    a.i = v;
    return a;
  }

  // A value or node name used nowhere in the model: `base`, else base_1, base_2, ...
  std::string fresh_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; model_names_.count(name) || g_->find(name); ++k) name = base + "_" + std::to_string(k);
    model_names_.insert(name);
    return name;
  }

  Value* lookup(const std::string& name) const {
    auto it = alias_.find(name);
    return it != alias_.end() ? it->second : g_->find(name);
  }

  Attr convert_attr(const onnx::AttributeProto& a, const std::string& where) {
    Attr r;
    using A = onnx::AttributeProto;
    int type = a.type();
    if (type == A::UNDEFINED) {  // very old models leave the type out
      if (a.has_f()) type = A::FLOAT; else if (a.has_i()) type = A::INT; else if (a.has_s()) type = A::STRING;
      else if (a.has_t()) type = A::TENSOR; else if (a.floats_size()) type = A::FLOATS;
      else if (a.ints_size()) type = A::INTS; else if (a.strings_size()) type = A::STRINGS;
    }
    switch (type) {
      case A::FLOAT: r.type = Attr::Type::Float; r.f = a.f(); break;
      case A::INT: r.type = Attr::Type::Int; r.i = a.i(); break;
      case A::STRING: r.type = Attr::Type::String; r.s = a.s(); break;
      case A::TENSOR: r.type = Attr::Type::Tensor; r.t = convert_tensor(a.t(), where + ": attribute '" + a.name() + "'"); break;
      case A::FLOATS: r.type = Attr::Type::Floats; r.floats.assign(a.floats().begin(), a.floats().end()); break;
      case A::INTS: r.type = Attr::Type::Ints; r.ints.assign(a.ints().begin(), a.ints().end()); break;
      case A::STRINGS: r.type = Attr::Type::Strings; r.strings.assign(a.strings().begin(), a.strings().end()); break;
      case A::GRAPH: case A::GRAPHS:
        fail_unsupported(where + ": attribute '" + a.name() + "' is a subgraph; control flow is not supported");
      default: r.type = Attr::Type::Other; break;
    }
    return r;
  }

  void read_nodes(const onnx::GraphProto& gp) {
    int n_nodes = gp.node_size();
    // Kahn's algorithm over node indices, keeping the model's order where it is valid.
    std::map<std::string, int> producer;
    for (int k = 0; k < n_nodes; ++k)
      for (const auto& o : gp.node(k).output())
        if (!o.empty()) {
          if (g_->find(o)) fail_invalid("value '" + o + "' is produced by node '" + gp.node(k).name() + "' but is also a graph input or initializer");
          if (!producer.emplace(o, k).second) fail_invalid("value '" + o + "' is produced by more than one node");
        }
    std::vector<std::vector<int>> users(n_nodes);
    std::vector<int> pending(n_nodes, 0);
    for (int k = 0; k < n_nodes; ++k) {
      std::set<int> deps;
      for (const auto& i : gp.node(k).input()) {
        if (i.empty()) continue;
        auto it = producer.find(i);
        if (it != producer.end()) deps.insert(it->second);
        else if (!g_->find(i))
          fail_invalid("node '" + gp.node(k).name() + "' (" + gp.node(k).op_type() + "): input '" + i +
                       "' is not produced by any node, initializer or graph input");
      }
      for (int d : deps) users[d].push_back(k);
      pending[k] = static_cast<int>(deps.size());
    }
    std::vector<int> order, ready;
    for (int k = n_nodes - 1; k >= 0; --k)
      if (pending[k] == 0) ready.push_back(k);
    while (!ready.empty()) {
      int k = ready.back();
      ready.pop_back();
      order.push_back(k);
      for (int u = static_cast<int>(users[k].size()) - 1; u >= 0; --u)
        if (--pending[users[k][u]] == 0) ready.push_back(users[k][u]);
    }
    if (static_cast<int>(order.size()) != n_nodes) {
      for (int k = 0; k < n_nodes; ++k)
        if (pending[k] > 0) fail_invalid("the graph has a cycle through node '" + gp.node(k).name() + "' (" + gp.node(k).op_type() + ")");
    }
    std::map<std::string, int> name_count;
    for (int k : order) {
      const auto& np = gp.node(k);
      auto n = std::make_unique<Node>();
      n->op_type = np.op_type();
      n->name = np.name().empty() ? np.op_type() + "_" + std::to_string(k) : np.name();
      n->opset = g_->opset;
      if (np.domain() == "com.microsoft" && kContribOps.count(n->op_type)) {
        expand_contrib(np, n->name);
        continue;
      }
      if (!np.domain().empty() && np.domain() != "ai.onnx")
        n->unsupported("operator domain '" + np.domain() + "' is not supported (only the default ONNX domain is, and ONNX Runtime's "
                       "QOperator ops of com.microsoft: " + contrib_list() + ")");
      if (n->op_type.rfind("onnxc.", 0) == 0)  // the compiler's internal ops are not ONNX ops
        n->unsupported("op type '" + n->op_type + "' is not an ONNX op");
      for (const auto& a : np.attribute()) {
        if (n->attrs.count(a.name())) n->invalid("attribute '" + a.name() + "' is given twice");
        n->attrs[a.name()] = convert_attr(a, n->where());
      }
      for (const auto& i : np.input()) n->inputs.push_back(i.empty() ? nullptr : lookup(i));
      // Every op's first output is required (only later ones may be left out with ""), but
      // for RNN, GRU and LSTM, whose Y is optional: a Y left out gets an internal name and is
      // computed all the same, as a scratch tensor nothing reads.
      const bool y_optional = n->op_type == "RNN" || n->op_type == "GRU" || n->op_type == "LSTM";
      if (np.output_size() == 0 || (np.output(0).empty() && !y_optional))
        n->invalid("has no first output (every op's first output is required)");
      // float16 inside the graph: a Cast to float16 keeps its float16 output (rounded), read by
      // the other nodes through a Cast back to float32; a float16 graph output is computed in
      // float32 and converted by a Cast at the end (read_outputs).
      const bool to_half = n->op_type == "Cast" && n->attrs.count("to") &&
                           (n->attrs["to"].type == Attr::Type::Int ? n->attrs["to"].i == 10 : n->attrs["to"].s == "FLOAT16");
      std::vector<Value*> widen;
      for (const auto& o : np.output()) {
        if (o.empty() && !n->outputs.empty()) { n->outputs.push_back(nullptr); continue; }
        const bool half_output = half_outputs_.count(o) && !to_half;
        Value* v = g_->add_value(o.empty() ? fresh_name(n->name + "_Y") : half_output ? fresh_name(o + "~f32") : o);
        v->producer = n.get();
        n->outputs.push_back(v);
        if (half_output) alias_[o] = v;
        if (to_half) widen.push_back(v);
      }
      g_->nodes.push_back(std::move(n));
      for (Value* v : widen) alias_[v->name] = edge_cast(v, DType::F32);
    }
  }

  // ONNX Runtime's QOperator ops (domain com.microsoft, as its quantize_static writes them with
  // QuantFormat.QOperator) become what they mean in standard ops: DequantizeLinear of each 8-bit
  // input, the float op, QuantizeLinear of the result into the output (the QDQ form, which
  // --quantized integer turns into integer ops again: passes/integer_ops.cc). Each new node
  // lists the contrib node in Node::origin. Inputs by position as ONNX Runtime's contrib op
  // schemas give them; the output's zero point must be given (its type is the output's).
  void expand_contrib(const onnx::NodeProto& np, const std::string& name) {
    const std::string& op = np.op_type();
    const std::string where = "node '" + name + "' (" + op + ", domain com.microsoft)";
    std::map<std::string, Attr> attrs;
    for (const auto& a : np.attribute()) attrs[a.name()] = convert_attr(a, where);
    auto attr_i = [&](const char* k, int64_t def) { return attrs.count(k) ? attrs[k].i : def; };
    for (const auto& [k, a] : attrs) {
      static const std::map<std::string, std::set<std::string>> known = {
          {"QLinearLeakyRelu", {"alpha"}}, {"QLinearGlobalAveragePool", {"channels_last"}}, {"QLinearConcat", {"axis"}},
          {"QGemm", {"alpha", "transA", "transB"}}};
      auto it = known.find(op);
      if (it == known.end() || !it->second.count(k)) fail_unsupported(where + ": attribute '" + k + "' is not supported");
    }
    auto in = [&](int i) -> Value* {
      if (i >= np.input_size() || np.input(i).empty()) return nullptr;
      Value* v = lookup(np.input(i));
      if (!v) fail_invalid(where + ": input '" + np.input(i) + "' is not produced by any node, initializer or graph input");
      return v;
    };
    auto need = [&](int i, const char* what) {
      Value* v = in(i);
      if (!v) fail_unsupported(where + ": " + what + " (input " + std::to_string(i) + ") is missing; onnxc needs it");
      return v;
    };
    auto add = [&](const std::string& type, const std::string& suffix, const std::vector<Value*>& ins,
                   std::map<std::string, Attr> a = {}, const std::string& out = "") {
      const int64_t opset = type == "QuantizeLinear" || type == "DequantizeLinear" ? std::max<int64_t>(g_->opset, 13) : g_->opset;
      const std::string node_name = fresh_name(name + "/" + suffix);
      Value* v = append_node(type, opset, node_name, ins, std::move(a), out.empty() ? fresh_name(node_name + "_output") : out);
      v->producer->origin = {name};
      return v;
    };
    auto dq = [&](int x, const char* what) {
      return add("DequantizeLinear", std::string("dequantize_") + what, {need(x, what), need(x + 1, "a scale"), in(x + 2)});
    };
    auto q = [&](Value* v, int s) {
      return add("QuantizeLinear", "quantize", {v, need(s, "the output's scale"), need(s + 1, "the output's zero point")}, {},
                 np.output(0));
    };
    if (np.output_size() != 1 || np.output(0).empty()) fail_invalid(where + ": expects one output");
    if (op == "QLinearAdd" || op == "QLinearMul") {
      q(add(op == "QLinearAdd" ? "Add" : "Mul", "float", {dq(0, "a"), dq(3, "b")}), 6);
    } else if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu") {
      std::map<std::string, Attr> a;
      if (attrs.count("alpha")) a["alpha"] = attrs["alpha"];
      q(add(op == "QLinearSigmoid" ? "Sigmoid" : "LeakyRelu", "float", {dq(0, "x")}, a), 3);
    } else if (op == "QLinearGlobalAveragePool") {
      if (attr_i("channels_last", 0) != 0) fail_unsupported(where + ": channels_last 1 is not supported");
      q(add("GlobalAveragePool", "float", {dq(0, "x")}), 3);
    } else if (op == "QLinearConcat") {
      if (np.input_size() < 5 || (np.input_size() - 2) % 3 != 0)
        fail_invalid(where + ": expects Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input");
      std::vector<Value*> parts;
      for (int k = 2; k < np.input_size(); k += 3) parts.push_back(dq(k, "x"));
      std::map<std::string, Attr> a;
      a["axis"] = int_attr(attr_i("axis", 0));
      q(add("Concat", "float", parts, a), 0);
    } else {  // QGemm: y = alpha * DQ(A) DQ(B) + DQ(C) with C's scale a_scale * b_scale, quantized when y_scale is given
      if (attrs.count("alpha") && attrs["alpha"].f != 1.0) fail_unsupported(where + ": alpha other than 1 is not supported");
      const int64_t trans_b = attr_i("transB", 0);
      std::map<std::string, Attr> per_column;
      per_column["axis"] = int_attr(trans_b ? 0 : 1);  // B's scales per output column, when not one
      Value* b = add("DequantizeLinear", "dequantize_b", {need(3, "b"), need(4, "b's scale"), in(5)}, per_column);
      std::vector<Value*> gin = {dq(0, "a"), b};
      if (Value* c = in(6)) {
        Value* cs = add("Mul", "bias_scale", {need(1, "a's scale"), need(4, "b's scale")});
        gin.push_back(add("DequantizeLinear", "dequantize_bias", {c, cs}, {{"axis", int_attr(0)}}));
      }
      std::map<std::string, Attr> a;
      a["transA"] = int_attr(attr_i("transA", 0));
      a["transB"] = int_attr(trans_b);
      const bool quantized = in(7) != nullptr;
      Value* y = add("Gemm", "float", gin, a, quantized ? "" : np.output(0));
      if (quantized) q(y, 7);
    }
  }

  static std::string contrib_list() {
    std::string r;
    for (const auto& o : kContribOps) r += (r.empty() ? "" : ", ") + o;
    return r;
  }

  void read_outputs(const onnx::GraphProto& gp) {
    if (gp.output_size() == 0) fail_invalid("the graph has no outputs");
    for (const auto& o : gp.output()) {
      Value* v = g_->find(o.name());
      auto half = alias_.find(o.name());
      if (!v && half != alias_.end() && half_outputs_.count(o.name()))  // float16, computed in float32
        v = edge_cast(half->second, DType::F16, o.name());
      if (!v) fail_invalid("graph output '" + o.name() + "' is not produced by any node");
      v->is_output = true;
      g_->outputs.push_back(v);
    }
  }

  std::string dir_;
  std::set<std::string> model_names_;             // every value and node name of the model
  std::set<std::string> half_outputs_;            // graph outputs declared float16
  std::map<std::string, Value*> alias_;           // float16 value -> its float32 copy
  const ImportOptions& opt_;
  std::unique_ptr<Graph> g_;
  std::unique_ptr<MemoryBudget> budget_;  // initializers and tensor attributes, before allocating each
};

}  // namespace

std::unique_ptr<Graph> import_onnx_bytes(const std::string& bytes, const std::string& model_dir,
                                         const std::string& display_name, const ImportOptions& opt) {
  if (bytes.empty()) fail_invalid("the file is empty, not an ONNX model");
  onnx::ModelProto m;
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) fail_unsupported("models over 2 GiB must store weights as external data");
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    fail_invalid("not a valid ONNX model (the protobuf could not be parsed: truncated or not an ONNX file)");
  return Importer(model_dir, opt).run(m, display_name);
}

std::string DynamicDim::spec() const {
  return (symbol.empty() ? input + ":" + std::to_string(axis) : symbol) + "=" + std::to_string(max);
}

std::unique_ptr<Graph> import_onnx_file(const std::string& path, const ImportOptions& opt) {
  std::string bytes = read_file(path, "model");
  fs::path p(path);
  std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  return import_onnx_bytes(bytes, dir, path, opt);
}

}  // namespace onnxc
