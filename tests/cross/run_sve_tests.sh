#!/usr/bin/env bash
# Long-vector targets under emulation: the C that onnxc emits for `--target aarch64-sve:BITS`
# (channel blocks of BITS/32 floats, vector-extension tiles as long as the SVE registers) is
# cross-compiled with Debian's aarch64-linux-gnu-gcc (-O2 -march=armv8.2-a+sve
# -msve-vector-bits=BITS, static) and run with qemu-aarch64 at that vector length. This stands
# in for the long-vector multicores the layout is for (../shared/design.md).
#
#   run_sve_tests.sh layout COMPILE_MODEL WORK_DIR BITS...
#       the layout-pass models of tests/passes/layout_models.py (conv chain, residual block,
#       inception concat, MobileNet-v2 block, elementwise ops, odd channel counts) at each BITS, each checked by compile-model --verify (the reference evaluator)
#       with the binary run under qemu (--run-with);
#   run_sve_tests.sh zoo COMPILE_MODEL ZOO_DIR WORK_DIR NAME BITS...
#       a zoo model at each BITS against PyTorch's output (models/compare.py, 1e-3 of the
#       reference's max magnitude); then the same binary on a CPU running SVE at another
#       length (512 bits, or 1024 for a 512-bit build) must refuse to run: exit 1 and the
#       CPU check's message (onnxc_check_cpu), not an all-zero output.
#
# qemu-user runs SVE code at 512 bits unless the CPU property sve-default-vector-length (in
# bytes) says otherwise: with sve-max-vq alone, code built for 1024 or 2048 bits runs at 512
# and computes garbage (the verify step catches exactly that).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" > /dev/null || { echo "run_sve_tests.sh: $tool is missing (Debian packages gcc-aarch64-linux-gnu, qemu-user)" >&2; exit 1; }
done
cflags() { echo "-O2 -march=armv8.2-a+sve -msve-vector-bits=$1 -ffp-contract=fast -static -Wall -Wextra -Werror"; }
qemu() { echo "qemu-aarch64 -cpu max,sve-max-vq=$(($1 / 128)),sve-default-vector-length=$(($1 / 8))"; }
mode=$1
shift
case "$mode" in
  layout)
    compiler=$1 work=$2
    shift 2
    for bits in "$@"; do
      echo "== aarch64-sve:$bits, channel block $((bits / 32))"
      /usr/bin/python3 "$here/../passes/layout_models.py" --compiler "$compiler" --work "$work/sve$bits" --blocks $((bits / 32)) --no-nchw \
        --cflags "$(cflags "$bits")" \
        --extra-args "--target aarch64-sve:$bits --cc aarch64-linux-gnu-gcc --run-with '$(qemu "$bits")'"
    done
    ;;
  zoo)
    compiler=$1 zoo=$2 work=$3 name=$4
    shift 4
    for bits in "$@"; do
      out="$work/${name}_sve$bits"
      rm -rf "$out"
      start=$(date +%s)
      "$compiler" "$zoo/$name.onnx" -o "$out" --name "$name" --target "aarch64-sve:$bits" --cc aarch64-linux-gnu-gcc --cflags "$(cflags "$bits")" --quiet
      built=$(date +%s)
      $(qemu "$bits") "$out/$name" --input "input=$zoo/$name.input.npy" --output "output=$out/output.npy" --threads 2 > "$out/run.log" 2>&1 ||
        { cat "$out/run.log"; exit 1; }
      echo "== $name, aarch64-sve:$bits: built in $((built - start)) s, ran under qemu in $(($(date +%s) - built)) s"
      /usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$out/output.npy" --tol 1e-3
      other=$((bits == 512 ? 1024 : 512))
      rc=0
      $(qemu "$other") "$out/$name" --quiet > "$out/other.log" 2>&1 || rc=$?
      want="built for aarch64-sve:$bits (SVE at $bits bits); this CPU runs SVE at $other bits"
      if [ "$rc" != 1 ] || ! grep -qF "$want" "$out/other.log"; then
        echo "FAIL: the aarch64-sve:$bits build on a CPU at $other bits exited $rc; expected 1 and '$want':"
        cat "$out/other.log"
        exit 1
      fi
      echo "== $name, aarch64-sve:$bits on a CPU at $other bits: refused ($(cat "$out/other.log"))"
    done
    ;;
  *)
    echo "usage: run_sve_tests.sh layout COMPILE_MODEL WORK_DIR BITS... | zoo COMPILE_MODEL ZOO_DIR WORK_DIR NAME BITS..." >&2
    exit 1
    ;;
esac
