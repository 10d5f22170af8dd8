// codegen/module_writer.cc — what the C and CUDA module writers share (see module_writer.h).
#include "codegen/module_writer.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ir/error.h"

namespace fs = std::filesystem;

namespace onnxc {

uint64_t fnv1a(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string c_string(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') r += '\\', r += static_cast<char>(c);
    else if (c < 32 || c >= 127) r += fmt::format("\\{:03o}", c);
    else r += static_cast<char>(c);
  }
  return r + "\"";
}

std::string comment_safe(std::string s) {
  for (size_t p = 0; p + 1 < s.size(); ++p)
    if ((s[p] == '*' && s[p + 1] == '/') || (s[p] == '/' && s[p + 1] == '*')) s.insert(p + 1, " ");
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 32) c = ' ';
  return s;
}

std::string shape_list(const Shape& s) {
  if (s.empty()) return "0";
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r;
}

std::string c_identifier(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

std::string weights_file(const std::map<const Value*, uint64_t>& offsets, uint64_t bytes, uint64_t* checksum) {
  std::string payload(bytes, '\0');
  for (const auto& [v, off] : offsets)
    std::copy(v->constant->bytes.begin(), v->constant->bytes.end(), payload.begin() + static_cast<std::ptrdiff_t>(off));
  *checksum = fnv1a(reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
  std::string head(64, '\0');
  auto put = [&](size_t off, const void* p, size_t n) { std::memcpy(head.data() + off, p, n); };
  const uint32_t version = 1, hsize = 64;
  put(0, "ONNXCWTS", 8);
  put(8, &version, 4);
  put(12, &hsize, 4);
  put(16, &bytes, 8);
  put(24, checksum, 8);
  return head + payload;
}

ModuleFolder::ModuleFolder(const std::string& outdir) : dir_(outdir) {
  std::error_code ec;
  fs::create_directories(fs::path(outdir), ec);
  if (ec) throw CompileError(CompileError::Kind::Io, "cannot create output folder '" + outdir + "': " + ec.message());
}

void ModuleFolder::put(const std::string& file, const std::string& data) {
  const fs::path p = fs::path(dir_) / file;
  std::ofstream f(p, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  f.close();
  if (!f) throw CompileError(CompileError::Kind::Io, "cannot write '" + p.string() + "'");
  result.files.push_back(file);
}

void ModuleFolder::put_runtime() {
  put("onnxc_types.h", kRuntimeTypes);
  put("onnxc_runtime.h", kRuntimeHeader);
  put("onnxc_runtime.c", kRuntimeSource);
  put("onnxc_main.c", kRuntimeMain);
}

std::string info_entry_points(const std::string& N) {
  return fmt::format(
      "/* {0}_info's entry points: the ones above with the instance type erased. */\n"
      "static int {0}_info_create(const char* weights_path, const onnxc_options* options, void** ctx) {{\n"
      "  {0}_ctx* c = NULL;\n  int rc = {0}_create(weights_path, options, ctx ? &c : NULL);\n  if (ctx) *ctx = c;\n  return rc;\n}}\n\n"
      "static int {0}_info_create_from_memory(const void* blob, size_t size, const onnxc_options* options, void** ctx) {{\n"
      "  {0}_ctx* c = NULL;\n  int rc = {0}_create_from_memory(blob, size, options, ctx ? &c : NULL);\n  if (ctx) *ctx = c;\n  return rc;\n}}\n\n"
      "static int {0}_info_run_v(void* ctx, const void* const* inputs, const size_t* input_bytes, void* const* outputs,\n"
      "{1:{2}}const size_t* output_bytes) {{\n"
      "  return {0}_run_v(({0}_ctx*)ctx, inputs, input_bytes, outputs, output_bytes);\n}}\n\n"
      "static int {0}_info_destroy(void** ctx) {{\n"
      "  {0}_ctx* c = ctx ? ({0}_ctx*)*ctx : NULL;\n  int rc = {0}_destroy(ctx ? &c : NULL);\n  if (ctx) *ctx = c;\n  return rc;\n}}\n\n",
      N, "", N.size() + 23);
}

std::string profile_ops_table(const std::string& N, const std::string& what, const std::vector<ProfileRow>& rows) {
  std::string s = fmt::format("/* {}: nodes, ops, kernel, output, FLOPs, bytes. */\n"
                              "static const onnxc_op_info {}_ops[{}_PROFILE_OPS] = {{\n", what, N, N);
  for (const ProfileRow& r : rows)
    s += fmt::format("  {{{}, {}, {}, {}, {:.17g}, {:.17g}}},\n", c_string(r.nodes), c_string(r.ops), c_string(r.kernel), c_string(r.output),
                     r.cost.flops, r.cost.bytes);
  return s + fmt::format("}};\n\n"
                         "int {0}_profile(const {0}_ctx* ctx, double* seconds) {{\n"
                         "  if (!ctx || !seconds) return onnxc_fail(ONNXC_ERR_ARG, \"{0}_profile: ctx or seconds is NULL\");\n"
                         "  memcpy(seconds, ctx->prof, sizeof ctx->prof);\n  return ONNXC_OK;\n}}\n\n",
                         N);
}

}  // namespace onnxc
