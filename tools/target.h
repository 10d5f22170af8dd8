// tools/target.h — what the generated code is compiled for.
//
// The host is described through LLVM's host detection (CPU name and features); the
// vector width it implies (512 bits on AVX-512, 256 on AVX/AVX2, 128 on SSE/NEON) sizes
// the channel blocks of the layout pass. `--target` overrides it with a named target.
#pragma once
#include <string>
#include <vector>

namespace onnxc {

struct Target {
  std::string name;   // "host" or the --target spec
  std::string cpu;    // e.g. "skylake-avx512"
  std::vector<std::string> features;  // enabled vector features, e.g. "avx512f"
  int vector_bits = 128;
  std::string march;  // C compiler flag for this target ("" = compiler default)
  int vector_floats() const { return vector_bits / 32; }
  std::string describe() const;
};

Target host_target();
// "host", "avx512", "avx2", "sse", "neon", "sve256" ... "sve2048", or "generic-<bits>".
// Throws CompileError(Invalid) listing the accepted names otherwise.
Target parse_target(const std::string& spec);

}  // namespace onnxc
