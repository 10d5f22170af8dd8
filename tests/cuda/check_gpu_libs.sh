#!/usr/bin/env bash
# With --gpu-libs among ARGS (compile-model's), checks that the generated FILE.cu calls the
# libraries asked for (cuDNN's cudnnConvolutionForward, cuBLAS's cublasSgemm...), so that a
# --gpu-libs test cannot pass on the generated kernels alone. Usage: check_gpu_libs.sh FILE.cu [ARGS...]
set -euo pipefail
cu=$1
shift
libs=""
while [ $# -gt 0 ]; do
  if [ "$1" = --gpu-libs ] && [ $# -gt 1 ]; then libs=$2; shift; fi
  shift
done
for lib in ${libs//,/ }; do
  case "$lib" in
    cudnn) call=cudnnConvolutionForward ;;
    cublas) call=cublasSgemm ;;
    *) continue ;;
  esac
  if ! grep -q "$call(" "$cu"; then
    echo "--gpu-libs $lib: $cu does not call $call" >&2
    exit 1
  fi
done
