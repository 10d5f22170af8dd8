// fuzz/fuzz_import.cc — libFuzzer target 1: the ONNX importer on raw bytes.
//
// Feeds the input to import_onnx_bytes (protobuf parse, initializer and attribute
// conversion, topological sort, op parsing, shape inference with constant propagation,
// graph verification). External data is refused for models read from memory, so the
// target touches no file. Outcome rules: fuzz/fuzz_common.h.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/onnx_import.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  onnxc::fuzz::run_guarded("fuzz_import", [&] {
    onnxc::ImportOptions opt;
    opt.max_memory = onnxc::fuzz::kMaxMemory;
    auto g = onnxc::import_onnx_bytes(bytes, "", "fuzz.onnx", opt);
  });
  return 0;
}
