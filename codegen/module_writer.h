// codegen/module_writer.h — what every backend's module writer (codegen/c/module.cc,
// codegen/cuda/module.cc) writes the same way: the weights file, C literals and comments,
// shape lists, the output folder with the runtime's files, NAME_info's type-erased entry
// points and the --profile table. One definition each, so that a model built by either
// backend loads with the same runtime.
#pragma once
#include <cstdint>
#include <map>
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
