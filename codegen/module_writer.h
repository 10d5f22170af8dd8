// codegen/module_writer.h — what every backend's module writer (codegen/c/module.cc,
// codegen/cuda/module.cc) writes the same way: the weights file, C literals and comments,
// shape lists, the output folder with the runtime's files, the header's guard and tensor
// macros, the tensor tables, the create/destroy checks, NAME_run_v, NAME_info and its
// type-erased entry points and the --profile table. One definition each, so that a model
// built by either backend has the same API and loads with the same runtime.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "ir/cost.h"
#include "ir/graph.h"

namespace onnxc {

// Runtime sources embedded in the compiler at build time (runtime_sources.cc, written by
// codegen/c/embed_runtime.cmake from runtime/).
extern const char* const kRuntimeTypes;
extern const char* const kRuntimeHeader;
extern const char* const kRuntimeSource;
extern const char* const kRuntimeMain;

// FNV-1a (64-bit) of n bytes: the weights file's checksum, which the runtime's loader checks.
uint64_t fnv1a(const unsigned char* p, size_t n);

// s as a C string literal: quotes and backslashes escaped, other bytes outside printable ASCII
// as octal escapes.
std::string c_string(const std::string& s);

// Text for inside a C comment: it neither closes the comment nor opens one inside it
// (-Wcomment): a space goes between the characters of each "*/" and "/*" (a node named
// "/*ow_1"); control characters become spaces.
std::string comment_safe(std::string s);

// "1, 3, 224, 224" (a scalar's empty shape as "0", so that the C array is not empty).
std::string shape_list(const Shape& s);

// Sanitises any string into a C identifier fragment: [A-Za-z0-9_], not starting with a digit.
std::string c_identifier(const std::string& s);

// NAME.weights: a 64-byte header ("ONNXCWTS", format version 1 and the header size as
// uint32, the payload's size and its fnv1a as uint64, little-endian as the host writes them),
// then the payload of `bytes` bytes, each constant's bytes at its offset. *checksum: the fnv1a.
std::string weights_file(const std::map<const Value*, uint64_t>& offsets, uint64_t bytes, uint64_t* checksum);

// x + n rounded up to `align`, checked for overflow (what: the block it grows, for the error).
uint64_t place_after(uint64_t x, uint64_t n, uint64_t align, const std::string& what);

// The buffers of a module and their C names: the graph's inputs and outputs (v_NAME), the
// constants its functions read, placed one after another in the weights file (w_NAME), and
// the intermediate tensors in the arena (t_NAME) at the memory plan's offsets, or one after
// another where there is no plan; each name unique (at most 48 characters and a suffix).
// Offsets are checked for overflow and the totals against --max-memory as they grow.
struct ModuleBuffers {
  // The graph's nodes with code (not folded), in order; weights aligned to weights_align
  // bytes, arena tensors without a plan to arena_align.
  ModuleBuffers(const Graph& graph, uint64_t weights_align, uint64_t arena_align);
  // Names and places every buffer; io(v) is called for each graph input, then for each graph
  // output that is neither a constant nor an input, at its first slot (out_index), after
  // naming it.
  void place(const std::function<void(const Value*)>& io = {});
  std::string unique(const std::string& base);
  // The pointers to the weights and the arena tensors, declared at the start of a run from
  // `weights` and `arena` (the blocks' base pointers): one line each, its comment the tensor.
  std::string weight_and_arena_pointers() const;
  // Node n's function as the module calls it: the names of its parameters (x0... the inputs
  // that are not static, y0... the outputs, e0... the fused group's extra inputs), its
  // parameter list with each pointer qualified by qualifier(v) (" restrict", " __restrict__"
  // or ""), the call's arguments (the module's buffers), and for its comment the tensors it
  // reads and writes, its ops ("Conv+Relu") and the ONNX nodes it comes from.
  struct NodeSignature {
    std::vector<std::string> ins, outs, extras, params, args;
    std::string reads, writes, ops, from;
  };
  NodeSignature node_signature(const Node& n, const std::function<std::string(const Value*)>& qualifier) const;

  const Graph& g;
  std::vector<const Node*> emitted;
  std::map<const Value*, std::string> name;  // C name of each buffer
  std::map<const Value*, uint64_t> woff;     // weights offsets
  std::vector<const Value*> weights;         // in file order
  std::map<const Value*, uint64_t> aoff;     // arena offsets
  std::vector<const Value*> arena;
  std::map<const Value*, size_t> out_index;  // value -> first graph output slot it fills
  uint64_t wbytes = 0, abytes = 0;

 private:
  uint64_t walign_, aalign_;
  std::set<std::string> used_names_;
  std::map<std::string, int> next_suffix_;  // unique(): next suffix to try per stem
};

// The functions of a module's nodes (C functions, CUDA kernels) in order of first use: an
// identical one (the same key: signature and body, for a kernel its launch too) is written once,
// its comment naming every node it computes.
class FunctionTable {
 public:
  struct Function {
    std::string name, comment, rest;  // rest: "(params) {\n body }\n\n"
    size_t uses = 0;
  };
  // The function for `key`: the one already there, whose comment gains `comment`, or a new one
  // named make_name(); *fresh says which.
  std::string add(const std::string& key, const std::string& rest, const std::string& comment, const std::function<std::string()>& make_name,
                  bool* fresh = nullptr);
  // Every function as `decl` (e.g. "static void ") and its name and rest after its comment;
  // one that several nodes share first says so: "One NOUN for the N nodes below (the same SAME)".
  std::string text(const std::string& decl, const std::string& noun, const std::string& same) const;
  const std::vector<Function>& functions() const { return fns_; }

 private:
  std::vector<Function> fns_;
  std::map<std::string, size_t> index_;  // key -> its function in fns_
};

// The output folder of a module (created if missing; CompileError Io otherwise): put() writes
// a file and lists it in result.files; put_runtime() writes the runtime's four files.
class ModuleFolder {
 public:
  explicit ModuleFolder(const std::string& outdir);
  void put(const std::string& file, const std::string& data);
  void put_runtime();
  CodegenResult result;

 private:
  std::string dir_;
};

// "NAME_ctx* ctx, const float* in0, ..., float* out0, ...": NAME_run's parameters.
std::string run_params(const std::string& N, const Graph& g);

// NAME.h's opening comment: its title, naming the model's source file (and what it was compiled
// for, e.g. " for CUDA"), then `body` (lines " * ...\n", the backend's words).
std::string header_comment(const std::string& N, const std::string& source, const std::string& compiled_for, const std::string& body);
// NAME.h after its opening comment: the include guard, includes and `extern "C"` (header_open),
// and their end (header_close).
std::string header_open(const std::string& N);
std::string header_close();

// NAME.h's declarations of the API, each after its comment (a whole "/* ... */\n", the
// backend's words): the instance type, the create functions, NAME_run, NAME_run_v, then
// `after_run_v` (more declarations, with their comments), NAME_destroy, the status
// functions and NAME_info, then `after_info`.
struct ApiComments {
  std::string ctx, create, create_from_memory, create_sharing, run, run_v, after_run_v, destroy, after_info;
};
std::string api_declarations(const std::string& N, const Graph& g, const ApiComments& c);

// NAME.h's macros of the inputs and outputs (NAME_NUM_INPUTS, NAME_INPUT0_NAME, _DTYPE, _NDIM,
// _SHAPE, _SIZE...) and of the weights file (NAME_WEIGHTS_BYTES, NAME_WEIGHTS_CHECKSUM);
// shapes as the API sees them (Graph::api_shape).
std::string io_macros(const std::string& N, const Graph& g, uint64_t weights_bytes, uint64_t checksum);

// The tensor tables NAME_inputs and NAME_outputs (onnxc_tensor_info), which the entry points
// check buffers against and NAME_info points to; then a blank line.
std::string tensor_tables(const std::string& N, const Graph& g);

// NAME_status_string and NAME_last_error.
std::string status_functions(const std::string& N);

// NAME_create and NAME_create_from_memory: `attrs` (before `int`), the module's
// NAME_check_create, then body(fn, load): the rest of function fn, where `load` is the call that
// reads the weights file (onnxc_weights_load_file) or its image (onnxc_weights_from_memory)
// into `dest`, checked against NAME_WEIGHTS_BYTES and NAME_WEIGHTS_CHECKSUM.
std::string create_functions(const std::string& N, const std::string& attrs, const std::string& dest,
                             const std::function<std::string(const std::string& fn, const std::string& load)>& body);

// NAME_create_sharing: the module's NAME_check_create, then a new instance (NAME_new_instance
// with `instance_args` after the shared weights) on other's weights, whose count add_ref
// raises. `attrs`: what goes before `int` ("ONNXC_BASELINE " or "").
std::string create_sharing_function(const std::string& N, const std::string& attrs, const std::string& add_ref, const std::string& instance_args);

// The opening of NAME_destroy: the handle's checks, then `N_ctx* c` taken from it and *ctx
// set to NULL; the module writes the rest.
std::string destroy_opening(const std::string& N);

// NAME_run_v: the arrays' checks (onnxc_check_buffers on the sizes), then NAME_run.
std::string run_v_function(const std::string& N, const Graph& g);

// What NAME_info says of the module besides its tensors and entry points.
struct ModuleInfo {
  std::string openmp;  // the `openmp` field's initialiser, with its comment or #ifdef
  std::string device;  // "NULL /* device: the CPU */", "\"cuda\""...
  std::string target;  // the `target` field's initialiser
  bool profile = false;
  bool cplusplus = false;  // the module is C++ (onnxc_main_model is declared extern "C")
  std::string extra;       // after NAME_info, before onnxc_main_model (NAME_cuda_info...)
};
// NAME_info's entry points (info_entry_points, below), the --profile hook when built with it,
// NAME_info itself and the onnxc_main_model pointer of an executable.
std::string model_info(const std::string& N, const Graph& g, const ModuleInfo& info);

// A module's makefile: its opening comment (from the command that runs it: "make", or
// "make -f FILE" for another --makefile name), its variables before and after RUNTIME (the
// runtime's files), and the recipes of its three rules: the executable NAME (NAME.EXT with the
// generic driver onnxc_main.o), onnxc_main.o, and libNAME.so.
struct Makefile {
  std::function<std::string(const std::string& make)> comment;
  std::string variables, after_runtime;
  std::string executable, driver, library;
};
std::string makefile_text(const std::string& name, const std::string& ext, const Makefile& mk, const std::string& make);

// A module's files: NAME.h, NAME.EXT and NAME.weights, and its makefile.
struct ModuleFiles {
  std::string header, ext, source, weights;
  Makefile makefile;
  size_t distinct_functions = 0;  // functions or kernels written, identical ones once
};
// The files of module m (a ModuleBuffers with plan(), source() and header(checksum)): its
// buffers placed, then the weights (their checksum goes into the header), the source, the
// header. The makefile and the count of distinct functions are the caller's to add.
template <class M>
ModuleFiles module_files(M& m, const char* ext) {
  m.plan();
  ModuleFiles f;
  uint64_t checksum = 0;
  f.weights = weights_file(m.woff, m.wbytes, &checksum);
  f.ext = ext;
  f.source = m.source();
  f.header = m.header(checksum);
  return f;
}
// Writes them and the runtime's files into opt.outdir (NAME.h, the source, the weights, the
// runtime, the makefile, in that order) and returns the result with the buffers' totals.
CodegenResult write_module(const CodegenOptions& opt, const ModuleBuffers& m, const ModuleFiles& f);

// NAME_info's entry points: NAME_info_create, _create_from_memory, _run_v and _destroy, the
// API's functions with the instance type erased (onnxc_model_info, onnxc_types.h).
std::string info_entry_points(const std::string& N);

// --profile: one emitted function of a module (C function, CUDA node) as NAME_info.ops describes
// it (onnxc_op_info): its ONNX nodes, op types, kernel, output and cost.
struct ProfileRow {
  std::string nodes, ops, kernel, output;
  NodeCost cost;
};
// The module's `static const onnxc_op_info NAME_ops[NAME_PROFILE_OPS]` of `rows` (its comment
// opening with `what`) and NAME_profile(ctx, seconds), copying ctx->prof; the C and CUDA modules'.
std::string profile_ops_table(const std::string& N, const std::string& what, const std::vector<ProfileRow>& rows);

}  // namespace onnxc
