#!/usr/bin/env bash
# Zoo model test: compile ZOO/NAME.onnx with compile-model, run the generated binary on
# NAME.input.npy and compare its output with PyTorch's own (NAME.ref.npy, written by
# models/export_zoo.py): max abs error <= 1e-3 of the reference's max magnitude.
# Usage: run_zoo_model.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work/$name" && mkdir -p "$work"
start=$(date +%s.%N)
"$cc_model" "$zoo/$name.onnx" -o "$work/$name" --name "$name"
"$work/$name/$name" --input "input=$zoo/$name.input.npy" --output "output=$work/$name/output.npy" --bench 3
/usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$work/$name/output.npy" --tol 1e-3
echo "zoo $name: total $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
