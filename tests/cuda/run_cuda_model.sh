#!/usr/bin/env bash
# CUDA backend zoo tests. Usage: run_cuda_model.sh compile|run COMPILE_MODEL ZOO_DIR NAME WORK_DIR [ARGS...]
# ARGS go to compile-model (--gpu-libs cudnn,cublas: the library path; then the libraries must
# be there too, probed by building a tiny program with nvcc that calls both, else exit 77).
#  compile  compile-model --device cuda --emit so: the generated NAME.cu must build with nvcc
#           ($ONNXC_NVCC, else /usr/local/cuda/bin/nvcc; -arch=sm_90 -O3) without a warning,
#           and a second compile must give byte-identical NAME.cu, NAME.h and NAME.weights.
#           Prints how long nvcc took. Without nvcc: exit 77 (ctest SKIP_RETURN_CODE).
#  run      --emit exe, run the binary on NAME.input.npy and compare with PyTorch's NAME.ref.npy
#           (tolerance as the zoo tests: 1e-3 of the reference's max magnitude). Without a
#           CUDA GPU (nvidia-smi lists none) or without nvcc: exit 77, never a pass.
# With --gpu-precision tf32 or fp16 in ARGS: compile also requires tensor-core kernels in the .cu
# (wmma::mma_sync), and run compares at 1e-2 (operands rounded to 10 mantissa bits).
set -euo pipefail
mode=$1 cc_model=$2 zoo=$3 name=$4 work=$5
shift 5
extra=("$@")
tol=1e-3 tensor_cores=0
if [[ " ${extra[*]} " == *" --gpu-precision tf32 "* || " ${extra[*]} " == *" --gpu-precision fp16 "* ]]; then
  tol=1e-2 tensor_cores=1
fi
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${ONNXC_NVCC:-/usr/local/cuda/bin/nvcc}
if ! command -v "$nvcc" > /dev/null 2>&1; then
  echo "SKIPPED: nvcc '$nvcc' not found (set ONNXC_NVCC)"
  exit 77
fi
if [ "$mode" = run ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIPPED: no CUDA GPU on this machine (nvidia-smi lists none)"
  exit 77
fi
if [[ " ${extra[*]} " == *" --gpu-libs "* ]]; then
  mkdir -p "$work"
  probe=$(mktemp -d "$work/probe.XXXXXX")
  printf '#include <cudnn.h>\n#include <cublas_v2.h>\nint main(void) { cublasHandle_t h; (void)h; return cudnnGetVersion() == 0; }\n' > "$probe/p.cu"
  if ! "$nvcc" -o "$probe/p" "$probe/p.cu" -lcudnn -lcublas > "$probe/log" 2>&1; then
    echo "SKIPPED: cuDNN or cuBLAS not usable with '$nvcc' (headers or libraries missing):"
    cat "$probe/log"
    rm -rf "$probe"
    exit 77
  fi
  rm -rf "$probe"
fi
dir="$work/$name"
rm -rf "$dir" && mkdir -p "$work"
case "$mode" in
  compile)
    start=$(date +%s.%N)
    "$cc_model" "$zoo/$name.onnx" -o "$dir" --name "$name" --device cuda --emit so --nvcc "$nvcc" --verify-passes "${extra[@]}" 2>&1 | tee "$dir.log"
    if grep -i -q -e 'warning' "$dir.log"; then
      echo "cuda $name: nvcc warned on the generated code" >&2
      exit 1
    fi
    bash "$here/check_gpu_libs.sh" "$dir/$name.cu" "${extra[@]}"
    if [ $tensor_cores = 1 ] && ! grep -q 'wmma::mma_sync' "$dir/$name.cu"; then
      echo "cuda $name: --gpu-precision, but no tensor-core kernel in $name.cu" >&2
      exit 1
    fi
    "$cc_model" "$zoo/$name.onnx" -o "$dir.again" --name "$name" --device cuda --emit c --quiet "${extra[@]}"
    for f in "$name.cu" "$name.h" "$name.weights"; do cmp "$dir/$f" "$dir.again/$f"; done
    rm -rf "$dir.again"
    echo "cuda $name: total $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
    ;;
  run)
    "$cc_model" "$zoo/$name.onnx" -o "$dir" --name "$name" --device cuda --emit exe --nvcc "$nvcc" --quiet "${extra[@]}"
    "$dir/$name" --input "input=$zoo/$name.input.npy" --output "output=$dir/output.npy" --bench 10
    /usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$dir/output.npy" --tol "$tol"
    ;;
  *)
    echo "usage: run_cuda_model.sh compile|run COMPILE_MODEL ZOO_DIR NAME WORK_DIR" >&2
    exit 2
    ;;
esac
