// driver/build.h — the generated module built into an executable or a library: the C with
// the target's C compiler, the CUDA with nvcc; and --target checked against --cc/--cflags
// before anything is built.
#pragma once
#include <string>
#include <vector>

#include "codegen/target.h"
#include "driver/options.h"

namespace onnxc::driver {

// Builds the executable or shared library with -Wall -Wextra (the generated C and the runtime
// are warning-free under both; the tests add -Werror); returns the C compiler's exit status.
// NAME.c includes the runtime itself; the executable adds the generic driver onnxc_main.c,
// which runs the model NAME.c points it to when built with -DONNXC_MAIN_MODEL. The driver is
// the same for every model: with --driver-object FILE it is compiled once into FILE (on
// first use; written to a temporary name and renamed, so parallel compiles may share FILE)
// and linked from there, which is how the node tests build ~1000 models.
// Builds the emitted C; the compiler's messages go to stderr and into *output.
int build(const Options& o, const std::string& name, const Target& t, double* seconds, std::string* output);

// --device cuda: builds OUTDIR/NAME.cu with nvcc (--nvcc PATH, else $ONNXC_NVCC, else
// /usr/local/cuda/bin/nvcc) for --gpu-arch: -O3, host code with -fPIC -Wall -Wextra, linked
// with the libraries the module calls (--gpu-libs: -lcudnn, -lcublas). The
// executable links the generic driver onnxc_main.c (nvcc hands it to the host C compiler).
// Returns nvcc's exit status; -1 when nvcc is not there.
int build_cuda(const Options& o, const std::string& name, const std::vector<std::string>& libs, double* seconds, std::string* output,
               std::string* nvcc_used);

// --target against what --cc and --cflags compile for (the compiler's predefined macros,
// `cc FLAGS -dM -E`): another architecture, or SVE off or at another fixed length than an
// aarch64-sve:BITS target's, contradicts the target and is refused (exit 1) before anything
// is built. A named x86 target whose extensions the flags leave out builds correct but
// slower code: a warning. The host target with the default compiler and flags cannot
// contradict itself, and --emit c builds nothing here: neither is checked.
int check_target_flags(const Options& o, const Target& t);

}  // namespace onnxc::driver
