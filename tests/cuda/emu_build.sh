#!/usr/bin/env bash
# Builds DIR/NAME.cu (compile-model --device cuda --emit c) for the CPU: the launches rewritten
# for tests/cuda/emu/cuda_runtime.h (a CPU stand-in for the CUDA runtime and built-ins), the .cu
# compiled as C++ with g++ and linked with the generic driver into DIR/NAME.emu. On an x86-64
# with FMA, -mfma: the kernels' fmaf is then one instruction instead of a libm call (~3x faster
# emulated convolutions; AArch64 always has it); the same numbers, as fmaf is exact either way
# and g++ -std=c++20 does not contract a * b + c on its own. Not -march=native: it made the
# emulated cuDNN's naive double-precision convolution ~15% slower.
# With --object, only DIR/NAME.emu.o, without the driver's ONNXC_MAIN_MODEL (to link several models
# into one program).
# Usage: emu_build.sh DIR NAME [--object]
set -euo pipefail
dir=$1 name=$2 object=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
fma=()
if [ "$(uname -m)" = x86_64 ] && grep -qw fma /proc/cpuinfo; then fma=(-mfma); fi
sed -E 's/^(\s*)(\w+)<<<(.*)>>>\(/\1ONNXC_EMU_LAUNCH(\2, \3)(/' "$dir/$name.cu" > "$dir/$name.emu.cc"
if grep -q '<<<' "$dir/$name.emu.cc"; then
  echo "cuda emulation $name: a kernel launch was not rewritten" >&2
  exit 1
fi
if [ "$object" = --object ]; then
  (cd "$dir" && g++ -std=c++20 -O2 "${fma[@]}" -I"$here/emu" -I. -c "$name.emu.cc" -o "$name.emu.o")
  exit 0
fi
(cd "$dir" && g++ -std=c++20 -O2 "${fma[@]}" -I"$here/emu" -I. -DONNXC_MAIN_MODEL -c "$name.emu.cc" -o "$name.emu.o" &&
  gcc -std=c11 -O2 -c onnxc_main.c -o onnxc_main.o && g++ -o "$name.emu" "$name.emu.o" onnxc_main.o -lpthread)
