// fuzz/fuzz_pipeline.cc — libFuzzer target 2: import + every pass + C emission, driven by
// structured mutations of valid models.
//
// LLVMFuzzerCustomMutator decodes the input as an ONNX ModelProto, applies one to three
// model-level mutations (below) and re-encodes it; inputs that do not decode, and one
// mutation in eight, get libFuzzer's byte-level mutation instead, so the importer's
// parse errors stay covered too. Mutations:
//   dims        a graph input's or initializer's dims (interesting values, rank changes)
//   attribute   change, drop or add an attribute (ints, floats, strings, lists)
//   op type     a node becomes another supported op
//   edges       rewire, drop or add a node input; rename an output; reorder nodes
//   initializer truncate, grow or retype data; move raw_data to typed fields and back
//   opset       the default domain's version
//   nodes       delete or duplicate a node; change the graph's outputs
// LLVMFuzzerTestOneInput imports the model, runs the pass pipeline (with the graph
// verifier after every pass) at a layout and channel block chosen from the input's hash,
// and emits the C module into a scratch folder. Outcome rules: fuzz/fuzz_common.h.
//
// Built with -DONNXC_FUZZ_COMPILE_C (the target fuzz_emit_c), it also runs the C compiler
// on the emitted module (`cc -std=c11 -fopenmp -fsyntax-only -Wall -Wextra -Werror`;
// ONNXC_FUZZ_CC names another compiler) when the file is at most 1 MiB: a module that
// does not compile warning-free is a finding too. About a hundred times slower per input,
// so it is a target of its own.
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/target.h"
#include "frontend/onnx_import.h"
#include "fuzz/fuzz_common.h"
#include "ir/op.h"
#include "passes/pass.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Rng = std::mt19937_64;

int64_t pick(Rng& r, int64_t n) { return n <= 0 ? 0 : static_cast<int64_t>(r() % static_cast<uint64_t>(n)); }
bool coin(Rng& r, int in) { return pick(r, in) == 0; }

int64_t interesting_int(Rng& r, int64_t old) {
  static const int64_t v[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 17, 64, 255, 256, 1000, -1, -2, -3, 1LL << 31, (1LL << 31) - 1,
                              1LL << 32, INT64_MAX, INT64_MIN, (1LL << 62)};
  auto wrap = [](uint64_t u) { return static_cast<int64_t>(u); };  // two's complement, no overflow
  switch (pick(r, 4)) {
    case 0: return wrap(static_cast<uint64_t>(old) + 1);
    case 1: return wrap(static_cast<uint64_t>(old) - 1);
    case 2: return wrap(static_cast<uint64_t>(old) * 2);
    default: return v[pick(r, sizeof v / sizeof v[0])];
  }
}

float interesting_float(Rng& r, float old) {
  static const float v[] = {0.0f, 1.0f, -1.0f, 0.5f, 1e-5f, 1e30f, -1e30f, 3.4e38f, 1e-40f, INFINITY, -INFINITY, NAN, 2.0f};
  return coin(r, 3) ? old * 2 + 1 : v[pick(r, sizeof v / sizeof v[0])];
}

// Every value name in the graph (inputs, initializers, node outputs), for rewiring.
std::vector<std::string> value_names(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (auto& i : g.input()) names.push_back(i.name());
  for (auto& t : g.initializer()) names.push_back(t.name());
  for (auto& n : g.node())
    for (auto& o : n.output()) names.push_back(o);
  return names;
}

std::string any_value(Rng& r, const onnx::GraphProto& g) {
  auto names = value_names(g);
  if (names.empty() || coin(r, 16)) return coin(r, 2) ? "" : "no_such_value";
  return names[static_cast<size_t>(pick(r, static_cast<int64_t>(names.size())))];
}

void mutate_dims(Rng& r, google::protobuf::RepeatedField<int64_t>* dims) {
  switch (pick(r, 4)) {
    case 0:
      if (dims->size()) dims->Set(static_cast<int>(pick(r, dims->size())), interesting_int(r, dims->Get(0)));
      break;
    case 1: dims->Add(coin(r, 2) ? 1 : interesting_int(r, 2)); break;
    case 2:
      if (dims->size()) dims->RemoveLast();
      break;
    default:
      if (dims->size()) {
        int k = static_cast<int>(pick(r, dims->size()));
        dims->Set(k, std::max<int64_t>(0, interesting_int(r, dims->Get(k)) % 64));
      }
  }
}

void mutate_input_shape(Rng& r, onnx::GraphProto* g) {
  if (!g->input_size()) return;
  auto* in = g->mutable_input(static_cast<int>(pick(r, g->input_size())));
  auto* tt = in->mutable_type()->mutable_tensor_type();
  if (coin(r, 8)) { tt->set_elem_type(static_cast<int32_t>(pick(r, 17))); return; }
  auto* shape = tt->mutable_shape();
  switch (pick(r, 4)) {
    case 0: shape->add_dim()->set_dim_value(coin(r, 2) ? 1 : interesting_int(r, 3)); break;
    case 1:
      if (shape->dim_size()) shape->mutable_dim()->RemoveLast();
      break;
    case 2:
      if (shape->dim_size()) shape->mutable_dim(static_cast<int>(pick(r, shape->dim_size())))->set_dim_param("N");
      break;
    default:
      if (shape->dim_size()) {
        auto* d = shape->mutable_dim(static_cast<int>(pick(r, shape->dim_size())));
        d->set_dim_value(interesting_int(r, d->dim_value()));
      }
  }
}

void mutate_initializer(Rng& r, onnx::GraphProto* g) {
  if (!g->initializer_size()) return;
  auto* t = g->mutable_initializer(static_cast<int>(pick(r, g->initializer_size())));
  switch (pick(r, 7)) {
    case 0: mutate_dims(r, t->mutable_dims()); break;
    case 1:  // dims and data together, so the tensor stays well formed
      mutate_dims(r, t->mutable_dims());
      if (t->has_raw_data()) {
        int64_t n = 1;
        for (int64_t d : t->dims()) n = (d >= 0 && d < 4096 && n < 4096) ? n * d : 4096;
        int esize = t->data_type() == onnx::TensorProto::INT64 || t->data_type() == onnx::TensorProto::DOUBLE ? 8 : 4;
        t->mutable_raw_data()->resize(static_cast<size_t>(n * esize), '\1');
      }
      break;
    case 2:
      if (t->has_raw_data() && !t->raw_data().empty()) t->mutable_raw_data()->resize(static_cast<size_t>(pick(r, static_cast<int64_t>(t->raw_data().size()))));
      else if (t->float_data_size()) t->mutable_float_data()->RemoveLast();
      else if (t->int64_data_size()) t->mutable_int64_data()->RemoveLast();
      break;
    case 3: t->set_data_type(static_cast<int32_t>(pick(r, 17))); break;
    case 4:  // typed data beside raw data
      if (t->data_type() == onnx::TensorProto::INT64) t->add_int64_data(interesting_int(r, 1));
      else t->add_float_data(interesting_float(r, 1.0f));
      break;
    case 5:  // interesting values inside raw data (shape tensors, axes, pads...)
      if (t->raw_data().size() >= 8 && t->data_type() == onnx::TensorProto::INT64) {
        int64_t v = interesting_int(r, 1);
        size_t k = static_cast<size_t>(pick(r, static_cast<int64_t>(t->raw_data().size() / 8)));
        std::memcpy(&(*t->mutable_raw_data())[k * 8], &v, 8);
      } else if (t->raw_data().size() >= 4) {
        float v = interesting_float(r, 1.0f);
        size_t k = static_cast<size_t>(pick(r, static_cast<int64_t>(t->raw_data().size() / 4)));
        std::memcpy(&(*t->mutable_raw_data())[k * 4], &v, 4);
      }
      break;
    default:
      if (coin(r, 2)) t->set_name(any_value(r, *g));
      else t->set_data_location(onnx::TensorProto::EXTERNAL);
  }
}

const char* const kAttrNames[] = {"axis", "axes", "perm", "kernel_shape", "pads", "strides", "dilations", "group", "keepdims",
                                  "mode", "auto_pad", "alpha", "beta", "epsilon", "transA", "transB", "ceil_mode",
                                  "count_include_pad", "to", "value", "split", "starts", "ends", "shape", "output_padding",
                                  "coordinate_transformation_mode", "scales", "sizes", "exclusive", "reverse", "blocksize"};

void mutate_attribute(Rng& r, onnx::NodeProto* n) {
  using A = onnx::AttributeProto;
  if (!n->attribute_size() || coin(r, 4)) {  // add one
    A* a = n->add_attribute();
    a->set_name(kAttrNames[pick(r, sizeof kAttrNames / sizeof kAttrNames[0])]);
    switch (pick(r, 4)) {
      case 0: a->set_type(A::INT); a->set_i(interesting_int(r, 1)); break;
      case 1: a->set_type(A::INTS); for (int k = 0, m = static_cast<int>(pick(r, 6)); k < m; ++k) a->add_ints(interesting_int(r, 1)); break;
      case 2: a->set_type(A::FLOAT); a->set_f(interesting_float(r, 1.0f)); break;
      default: a->set_type(A::STRING); a->set_s(coin(r, 2) ? "SAME_UPPER" : "nearest");
    }
    return;
  }
  int k = static_cast<int>(pick(r, n->attribute_size()));
  A* a = n->mutable_attribute(k);
  switch (pick(r, 6)) {
    case 0: n->mutable_attribute()->DeleteSubrange(k, 1); return;
    case 1: a->set_type(static_cast<A::AttributeType>(pick(r, 15))); return;
    default: break;
  }
  switch (a->type()) {
    case A::INT: a->set_i(interesting_int(r, a->i())); break;
    case A::FLOAT: a->set_f(interesting_float(r, a->f())); break;
    case A::INTS:
      if (a->ints_size() && !coin(r, 4)) a->set_ints(static_cast<int>(pick(r, a->ints_size())), interesting_int(r, a->ints(0)));
      else if (coin(r, 2)) a->add_ints(interesting_int(r, 1));
      else if (a->ints_size()) a->mutable_ints()->RemoveLast();
      break;
    case A::FLOATS:
      if (a->floats_size()) a->set_floats(static_cast<int>(pick(r, a->floats_size())), interesting_float(r, a->floats(0)));
      else a->add_floats(interesting_float(r, 1.0f));
      break;
    case A::STRING: {
      static const char* const s[] = {"", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge",
                                      "linear", "nearest", "cubic", "half_pixel", "align_corners", "asymmetric", "DCR", "CRD", "garbage"};
      a->set_s(s[pick(r, sizeof s / sizeof s[0])]);
      break;
    }
    case A::TENSOR: {
      auto* t = a->mutable_t();
      if (coin(r, 2)) mutate_dims(r, t->mutable_dims());
      else t->set_data_type(static_cast<int32_t>(pick(r, 17)));
      break;
    }
    default: break;
  }
}

void mutate_edges(Rng& r, onnx::GraphProto* g) {
  if (!g->node_size()) return;
  auto* n = g->mutable_node(static_cast<int>(pick(r, g->node_size())));
  switch (pick(r, 6)) {
    case 0:
      if (n->input_size()) n->set_input(static_cast<int>(pick(r, n->input_size())), any_value(r, *g));
      break;
    case 1: n->add_input(any_value(r, *g)); break;
    case 2:
      if (n->input_size()) n->mutable_input()->RemoveLast();
      break;
    case 3:
      if (n->output_size()) n->set_output(static_cast<int>(pick(r, n->output_size())), any_value(r, *g));
      break;
    case 4: n->add_output(coin(r, 2) ? "" : "extra_out"); break;
    default:
      if (g->node_size() > 1) g->mutable_node()->SwapElements(static_cast<int>(pick(r, g->node_size())), static_cast<int>(pick(r, g->node_size())));
  }
}

void mutate_nodes(Rng& r, onnx::GraphProto* g) {
  switch (pick(r, 4)) {
    case 0:
      if (g->node_size()) g->mutable_node()->DeleteSubrange(static_cast<int>(pick(r, g->node_size())), 1);
      break;
    case 1:
      if (g->node_size()) {
        onnx::NodeProto copy = g->node(static_cast<int>(pick(r, g->node_size())));
        for (int k = 0; k < copy.output_size(); ++k) copy.set_output(k, copy.output(k) + "_dup");
        *g->add_node() = copy;
      }
      break;
    case 2:
      if (g->output_size()) g->mutable_output(static_cast<int>(pick(r, g->output_size())))->set_name(any_value(r, *g));
      break;
    default: {
      auto* o = g->add_output();
      o->set_name(any_value(r, *g));
    }
  }
}

void mutate_model(Rng& r, onnx::ModelProto* m) {
  auto* g = m->mutable_graph();
  switch (pick(r, 8)) {
    case 0: mutate_input_shape(r, g); break;
    case 1: mutate_initializer(r, g); break;
    case 2: case 3:
      if (g->node_size()) mutate_attribute(r, g->mutable_node(static_cast<int>(pick(r, g->node_size()))));
      break;
    case 4:
      if (g->node_size()) {
        static const std::vector<std::string> ops = onnxc::supported_ops();
        g->mutable_node(static_cast<int>(pick(r, g->node_size())))->set_op_type(ops[static_cast<size_t>(pick(r, static_cast<int64_t>(ops.size())))]);
      }
      break;
    case 5: mutate_edges(r, g); break;
    case 6: mutate_nodes(r, g); break;
    default: {
      if (!m->opset_import_size()) m->add_opset_import();
      static const int64_t v[] = {0, 1, 5, 6, 7, 9, 10, 11, 12, 13, 14, 17, 18, 19, 22, -1};
      m->mutable_opset_import(0)->set_version(v[pick(r, sizeof v / sizeof v[0])]);
    }
  }
}

// The scratch folder for emitted files: one per process, removed at exit. Held in a
// plain buffer so the exit handler never sees a destroyed object.
char g_scratch[256];

const char* scratch_dir() {
  if (!g_scratch[0]) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "onnxc-fuzz-XXXXXX").string();
    if (tmpl.size() >= sizeof g_scratch || !mkdtemp(tmpl.data())) std::abort();
    std::memcpy(g_scratch, tmpl.c_str(), tmpl.size() + 1);
    std::atexit([] { std::error_code ec; std::filesystem::remove_all(g_scratch, ec); });
  }
  return g_scratch;
}

#ifdef ONNXC_FUZZ_COMPILE_C
// Runs the C compiler's syntax and type checks on the emitted module; aborts (a finding)
// with the compiler's first messages when it fails.
void compile_emitted(const char* dir, const char* name) {
  const std::filesystem::path c = std::filesystem::path(dir) / (std::string(name) + ".c");
  std::error_code ec;
  const auto size = std::filesystem::file_size(c, ec);
  if (ec || size > (1u << 20)) return;
  const char* cc = std::getenv("ONNXC_FUZZ_CC");
  const std::filesystem::path log = std::filesystem::path(dir) / "cc.log";
  const std::string cmd = std::string(cc && *cc ? cc : "cc") + " -std=c11 -fopenmp -fsyntax-only -Wall -Wextra -Werror -I'" + dir +
                          "' '" + c.string() + "' > '" + log.string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc == 0) return;
  std::fprintf(stderr, "fuzz_emit_c: the emitted C does not compile (%s, status %d):\n", cmd.c_str(), rc);
  if (FILE* f = std::fopen(log.c_str(), "r")) {
    char line[1024];
    for (int k = 0; k < 30 && std::fgets(line, sizeof line, f); ++k) std::fputs(line, stderr);
    std::fclose(f);
  }
  std::abort();
}
#endif

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Rng r(seed);
  onnx::ModelProto m;
  if (coin(r, 8) || !m.ParseFromArray(data, static_cast<int>(size)) || !m.has_graph()) return LLVMFuzzerMutate(data, size, max_size);
  for (int k = 0, n = 1 + static_cast<int>(pick(r, 3)); k < n; ++k) mutate_model(r, &m);
  std::string out;
  if (!m.SerializeToString(&out) || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

#ifdef ONNXC_FUZZ_COMPILE_C
constexpr const char* kTarget = "fuzz_emit_c";
#else
constexpr const char* kTarget = "fuzz_pipeline";
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  uint64_t h = std::hash<std::string>()(bytes);
  onnxc::fuzz::run_guarded(kTarget, [&] {
    onnxc::ImportOptions io;
    io.max_memory = onnxc::fuzz::kMaxMemory;
    auto g = onnxc::import_onnx_bytes(bytes, "", "fuzz.onnx", io);
    // A fixed target (16-float vectors), so a finding replays the same on any machine.
    static const std::unique_ptr<onnxc::Backend> backend = onnxc::make_c_backend(onnxc::parse_target("generic-vector:16"));
    onnxc::PassOptions po;
    po.backend = backend.get();
    po.nchwc = h % 4 != 0;
    static const int64_t blocks[] = {4, 16, 64, 8};
    po.channel_block = blocks[(h >> 8) % 4];
    po.verify_each = true;
    onnxc::run_pipeline(*g, po);
    onnxc::CodegenOptions co{"fuzz_model", scratch_dir(), "fuzz.onnx"};
    backend->write_module(*g, co);
#ifdef ONNXC_FUZZ_COMPILE_C
    compile_emitted(scratch_dir(), "fuzz_model");
#endif
  });
  return 0;
}
