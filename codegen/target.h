// codegen/target.h — the machine the generated code is for: one description handed to the
// passes (the layout pass sizes channel blocks from it) and to every kernel of every backend.
//
// A Target comes from host detection (LLVM's CPU name and features, the caches from the
// operating system) or from a named target (`compile-model --target NAME`):
//   host                  this machine
//   x86-64-sse4           x86-64-v2: 128-bit vectors, 16 registers
//   x86-64-avx2           x86-64-v3: 256-bit vectors with FMA, 16 registers
//   x86-64-avxvnni        x86-64-v3 and AVX-VNNI (256-bit byte dot products: Alder Lake on)
//   x86-64-avx512         x86-64-v4: 512-bit vectors with FMA, 32 registers
//   x86-64-avx512vnni     x86-64-v4 and AVX-512 VNNI (Cascade Lake, Ice Lake, Sapphire Rapids, Zen 4)
//   aarch64-neon          128-bit NEON, 32 registers
//   aarch64-sve:BITS      SVE with a fixed vector length of BITS (128..2048, a power of two)
//   generic-vector:N      a machine with N-float vectors (N a power of two, 4..4096)
// Named targets describe a typical core of that kind: caches and threads are typical values,
// not measured ones. Parallelism: whether a loop nest is split across threads is decided
// here, in Target::parallel, from the work it does (scalar operations: multiply-adds,
// compares, element copies) and the target; kernels only say how much work they have.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace onnxc {

// 3×3 convolutions: Winograd F(2×2, 3×3) where conv_winograd predicts a gain (Auto), never
// (Direct), or wherever the kernel applies (Winograd).
enum class ConvAlgorithm { Auto, Direct, Winograd };

struct Target {
  std::string name;                   // "host" or the --target spec
  std::string arch;                   // "x86-64", "aarch64" or "generic"
  std::string cpu;                    // e.g. "znver4", "x86-64-v4"
  std::vector<std::string> features;  // vector features, e.g. "avx512f", "fma"
  int vector_bits = 128;              // width of one vector register
  int vector_registers = 16;          // architectural vector registers
  bool fma = false;                   // fused multiply-add in hardware
  int64_t l1d_bytes = 32 << 10;       // per core
  int64_t l2_bytes = 1 << 20;         // per core
  int64_t l3_bytes = 8 << 20;         // shared
  int threads = 1;                    // cores the generated code plans for
  ConvAlgorithm conv_algorithm = ConvAlgorithm::Auto;  // compile-model --conv-algorithm
  std::string cc = "cc";              // C compiler that builds the generated code
  std::string cflags;                 // its optimisation and architecture flags
  // The fewest scalar operations a loop nest must do before it is split across threads
  // (below it, starting the threads costs more than it saves).
  int64_t parallel_min_work = int64_t{1} << 16;

  int vector_floats() const { return vector_bits / 32; }
  // The vector registers a register tile of vectors of `floats` floats may count on (at least 8).
  // A generic-vector target is built by a compiler for whatever machine (-O3, no -march): its
  // long vectors take several registers there, so its tiles hold at most a 512-bit register
  // file's worth of floats (32 x 16).
  int64_t tile_registers(int64_t floats) const {
    const int64_t r = vector_registers > 8 ? vector_registers : 8;
    if (arch != "generic") return r;
    const int64_t cap = 32 * 16 / floats;
    return r < cap ? r : cap > 4 ? cap : 4;
  }
  // Whether a loop nest doing `work` scalar operations should run on several threads.
  bool parallel(double work) const { return threads > 1 && work >= static_cast<double>(parallel_min_work); }
  // One line for the compile summary and --dump-ir.
  std::string describe() const;
};

Target host_target();
// A target by name (see the file comment; "" = host). Throws CompileError(Invalid) listing
// the accepted names otherwise.
Target parse_target(const std::string& spec);
// The names accepted by parse_target, for --help.
std::string target_names();

}  // namespace onnxc
