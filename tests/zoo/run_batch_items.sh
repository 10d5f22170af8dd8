#!/usr/bin/env bash
# Batch items side by side (compile-model --parallel batch, passes/batch_items.h): ZOO/NAME.onnx,
# a model exported at batch N >= 2 (models/export_zoo.py --batch N), goes through
# run_zoo_model.sh with --parallel batch (PyTorch's output, deterministic and warning-free C,
# no libm calls); then the same binary runs at 1 thread (one arena, the items in turn) and at 3
# (more items than threads, one thread takes two) and must give PyTorch's output again, and the
# compile log must say that the items run side by side.
# Usage: run_batch_items.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR [COMPILE_MODEL_FLAGS...]
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/run_zoo_model.sh" "$@" --parallel batch | tee "$work.log"
grep -q "items of the batch side by side, one thread each" "$work.log" || {
  echo "batch items $name: the compile log does not say the items run side by side" >&2
  exit 1
}
for t in 1 3; do
  "$work/$name/$name" --input "input=$zoo/$name.input.npy" --output "output=$work/$name/output_t$t.npy" --threads "$t" --quiet
  /usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$work/$name/output_t$t.npy" --tol 1e-3
done
echo "batch items $name: PyTorch's output at the machine's threads, 1 and 3"
