#!/usr/bin/env bash
# Runs a model's generated CUDA on the CPU and compares its output with PyTorch's (the zoo's
# NAME.ref.npy, tolerance as the zoo tests: 1e-3 of the reference's max magnitude), so the
# kernels' index arithmetic is checked for numbers without a GPU: compile-model --device cuda
# --emit c, the launches rewritten for tests/cuda/emu/cuda_runtime.h (a CPU stand-in for the
# CUDA runtime and built-ins), the .cu built as C++ with g++ and linked with the generic driver.
# Usage: run_emulated.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
dir="$work/$name"
rm -rf "$dir" && mkdir -p "$work"
start=$(date +%s.%N)
"$cc_model" "$zoo/$name.onnx" -o "$dir" --name "$name" --device cuda --emit c --verify-passes --quiet
sed -E 's/^(\s*)(\w+)<<<(.*)>>>\(/\1ONNXC_EMU_LAUNCH(\2, \3)(/' "$dir/$name.cu" > "$dir/$name.emu.cc"
if grep -q '<<<' "$dir/$name.emu.cc"; then
  echo "cuda emulation $name: a kernel launch was not rewritten" >&2
  exit 1
fi
(cd "$dir" && g++ -std=c++20 -O2 -I"$here/emu" -I. -DONNXC_MAIN_MODEL -c "$name.emu.cc" -o "$name.emu.o" &&
  gcc -std=c11 -O2 -c onnxc_main.c -o onnxc_main.o && g++ -o "$name.emu" "$name.emu.o" onnxc_main.o -lpthread)
"$dir/$name.emu" --input "input=$zoo/$name.input.npy" --output "output=$dir/output.npy"
/usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$dir/output.npy" --tol 1e-3
echo "cuda emulation $name: total $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
