#!/usr/bin/env bash
# The CPU check of generated binaries on an x86-64 CPU without AVX-512: qemu-x86_64 -cpu max
# emulates AVX2 and FMA but no AVX-512. A zoo model built for --target x86-64-avx512 must refuse
# to run there (exit 1 and onnxc_check_cpu's message naming what the CPU lacks: not an illegal
# instruction, which is what a build without the check dies of), and the same model built for
# x86-64-avx2 must run there and match PyTorch's output (models/compare.py, 1e-3 of the
# reference's max magnitude).
#
#   run_x86_guard.sh COMPILE_MODEL ZOO_DIR WORK_DIR NAME
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v qemu-x86_64 > /dev/null || { echo "run_x86_guard.sh: qemu-x86_64 is missing (Debian package qemu-user)" >&2; exit 1; }
[ $# = 4 ] || { echo "usage: run_x86_guard.sh COMPILE_MODEL ZOO_DIR WORK_DIR NAME" >&2; exit 1; }
compiler=$1 zoo=$2 work=$3 name=$4
for target in x86-64-avx512 x86-64-avx2; do
  out="$work/${name}_$target"
  rm -rf "$out"
  "$compiler" "$zoo/$name.onnx" -o "$out" --name "$name" --target "$target" --quiet
  start=$(date +%s)
  rc=0
  qemu-x86_64 -cpu max "$out/$name" --input "input=$zoo/$name.input.npy" --output "output=$out/output.npy" --threads 2 \
    > "$out/run.log" 2>&1 || rc=$?
  if [ "$target" = x86-64-avx512 ]; then
    want="$name: built for x86-64-avx512; this CPU lacks AVX-512F"
    if [ "$rc" != 1 ] || ! grep -qF "$want" "$out/run.log" || [ -e "$out/output.npy" ]; then
      echo "FAIL: the x86-64-avx512 build under qemu-x86_64 -cpu max exited $rc; expected 1, '$want' and no output:"
      cat "$out/run.log"
      exit 1
    fi
    echo "== $name, x86-64-avx512 on a CPU without AVX-512: refused ($(cat "$out/run.log"))"
  else
    [ "$rc" = 0 ] || { echo "FAIL: the x86-64-avx2 build under qemu-x86_64 -cpu max exited $rc:"; cat "$out/run.log"; exit 1; }
    echo "== $name, x86-64-avx2 under qemu-x86_64 -cpu max: ran in $(($(date +%s) - start)) s"
    /usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$out/output.npy" --tol 1e-3
  fi
done
