#!/usr/bin/env bash
# Runs a model's generated CUDA on the CPU and compares its output with PyTorch's (the zoo's
# NAME.ref.npy, tolerance as the zoo tests: 1e-3 of the reference's max magnitude), so the
# kernels' index arithmetic is checked for numbers without a GPU: compile-model --device cuda
# --emit c, the launches rewritten for tests/cuda/emu/cuda_runtime.h (a CPU stand-in for the
# CUDA runtime and built-ins), the .cu built as C++ with g++ and linked with the generic driver.
# Usage: run_emulated.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR [ARGS...]; ARGS go to compile-model
# (--gpu-libs cudnn,cublas: the library calls run against tests/cuda/emu/cudnn.h and
# cublas_v2.h, naive CPU references of exactly those calls).
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
dir="$work/$name"
rm -rf "$dir" && mkdir -p "$work"
start=$(date +%s.%N)
"$cc_model" "$zoo/$name.onnx" -o "$dir" --name "$name" --device cuda --emit c --verify-passes --quiet "$@"
bash "$here/check_gpu_libs.sh" "$dir/$name.cu" "$@"
bash "$here/emu_build.sh" "$dir" "$name"
"$dir/$name.emu" --input "input=$zoo/$name.input.npy" --output "output=$dir/output.npy"
/usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$dir/output.npy" --tol 1e-3
echo "cuda emulation $name: total $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
