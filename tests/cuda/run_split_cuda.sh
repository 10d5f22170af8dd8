#!/usr/bin/env bash
# The split-model executor on its CUDA device (runtime/onnxc_split_cuda.h) with a zoo model cut
# by compile-model --split auto --device cuda: tests/cuda/split_cuda_check.c links the head and
# tail_gpu (CUDA, through NAME_cuda_info.run_device), the C tail, the executor and the device,
# runs gpu-only (with and without CUDA graphs), cpu-tail and eft, and compares every request's
# output with PyTorch's (NAME.ref.npy for NAME.input.npy).
# Usage: run_split_cuda.sh emulate|compile|run COMPILE_MODEL ZOO_DIR NAME WORK_DIR
#  emulate  the CUDA parts and the device built as C++ against tests/cuda/emu/cuda_runtime.h and
#           run on the CPU: the whole GPU path checked without a GPU.
#  compile  the same built with nvcc and linked with cudart (warnings are errors). Without nvcc
#           ($ONNXC_NVCC, else /usr/local/cuda/bin/nvcc): exit 77 (SKIPPED).
#  run      compile, then run it on the GPU. Without nvcc or a GPU (nvidia-smi -L): exit 77.
set -euo pipefail
mode=$1 cc_model=$2 zoo=$3 name=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nvcc=${ONNXC_NVCC:-/usr/local/cuda/bin/nvcc}
if [ "$mode" != emulate ]; then
  if ! command -v "$nvcc" > /dev/null 2>&1; then
    echo "SKIPPED: nvcc '$nvcc' not found (set ONNXC_NVCC)"
    exit 77
  fi
  if [ "$mode" = run ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "SKIPPED: no CUDA GPU on this machine (nvidia-smi lists none)"
    exit 77
  fi
fi
dir="$work/$name.$mode"
rm -rf "$dir" && mkdir -p "$dir"
"$cc_model" "$zoo/$name.onnx" -o "$dir" --name "$name" --quiet --split auto --device cuda --emit c
"${PYTHON:-/usr/bin/python3}" - "$zoo/$name" "$dir" <<'PY'
import sys
import numpy as np
src, out = sys.argv[1:]
np.load(src + ".input.npy").astype(np.float32).tofile(out + "/input.f32")
np.load(src + ".ref.npy").astype(np.float32).tofile(out + "/ref.f32")
PY
defs=(-DHEAD="${name}_head" -DTAIL_GPU="${name}_tail_gpu" -DTAIL="${name}_tail")
flags=(-O2 -Wall -Wextra -Werror -I"$root/runtime" -I"$dir")
cd "$dir"
gcc -std=c11 -O2 -fopenmp -c "${name}_tail.c" -o tail.o
gcc -std=c11 "${flags[@]}" -c "$root/runtime/onnxc_split.c" -o onnxc_split.o
if [ "$mode" = emulate ]; then
  bash "$here/emu_build.sh" "$dir" "${name}_head" --object
  bash "$here/emu_build.sh" "$dir" "${name}_tail_gpu" --object
  for f in "$root/runtime/onnxc_split_cuda.c" "$here/split_cuda_check.c"; do
    g++ -std=c++20 -x c++ "${flags[@]}" -I"$here/emu" "${defs[@]}" -c "$f" -o "$(basename "$f" .c).o"
  done
  g++ -o check "${name}_head.emu.o" "${name}_tail_gpu.emu.o" tail.o onnxc_split.o onnxc_split_cuda.o split_cuda_check.o -fopenmp -lpthread -lm
else
  for part in head tail_gpu; do
    "$nvcc" -arch=sm_90 -O3 -Xcompiler -Wall,-Wextra,-Werror -c "${name}_$part.cu" -o "$part.o"
  done
  cuda_inc="$(dirname "$(dirname "$(command -v "$nvcc")")")/include"
  gcc -std=c11 "${flags[@]}" -I"$cuda_inc" -c "$root/runtime/onnxc_split_cuda.c" -o onnxc_split_cuda.o
  gcc -std=c11 "${flags[@]}" -I"$cuda_inc" "${defs[@]}" -c "$here/split_cuda_check.c" -o split_cuda_check.o
  "$nvcc" -o check head.o tail_gpu.o tail.o onnxc_split.o onnxc_split_cuda.o split_cuda_check.o -Xcompiler -fopenmp -lpthread -lm
  if [ "$mode" = compile ]; then
    echo "split $name on the CUDA device: built with nvcc"
    exit 0
  fi
fi
./check input.f32 ref.f32
