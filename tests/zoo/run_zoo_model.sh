#!/usr/bin/env bash
# Zoo model test: compile ZOO/NAME.onnx with compile-model, run the generated binary on
# NAME.input.npy and compare its output with PyTorch's own (NAME.ref.npy, written by
# models/export_zoo.py): max abs error <= 1e-3 of the reference's max magnitude (a quantized
# model: in steps of its output's scale, see below). Also checks
# that a second compile gives byte-identical C and weights (the emitter is deterministic) and
# that gcc and clang (at -O3) find no warning in the C with -Wall -Wextra, and that neither
# gcc's binary nor clang's object code calls libm's exp, log, tanh, erf or max/min functions
# (the kernels use the inline helpers of codegen/c/vmath.h and compare-selects instead).
# Usage: run_zoo_model.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR [COMPILE_MODEL_FLAGS...]
# (extra flags such as --channel-block 256, --layout nchw or "--cflags=-O2 -fsanitize=address"
# go to both compiles). A sanitizer report in the binary's output fails the test.
# ONNXC_ZOO_RUN_THREADS=1,3,8: also run the binary with --threads 1, 3 and 8 (a fork-join region's
# thread groups at fewer and more threads than lists) and check each output the same way.
# ONNXC_ZOO_SANITIZED=1 (the sanitized build's tests set it): compile, build and run once, no
# second compile, warning checks or --bench: those concern the same C text, which the
# unsanitized build checks, and an instrumented resnet50 takes ~30 s per inference.
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4
shift 4
extra=("$@")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work/$name" && mkdir -p "$work"
start=$(date +%s.%N)
"$cc_model" "$zoo/$name.onnx" -o "$work/$name" --name "$name" --verify-passes "${extra[@]}"
bench=(--bench 3)
if [ "${ONNXC_ZOO_SANITIZED:-0}" = 1 ]; then
  bench=()
else
  # The emitted C and weights must be deterministic: a second compile gives identical files.
  "$cc_model" "$zoo/$name.onnx" -o "$work/$name.again" --name "$name" --emit c --quiet "${extra[@]}"
  for f in "$name.c" "$name.h" "$name.weights"; do cmp "$work/$name/$f" "$work/$name.again/$f"; done
  rm -rf "$work/$name.again"
  # The generated C is warning-free under gcc and clang with -Wall -Wextra; clang compiles at -O3
  # for real, since its optimizer warns about loops it was asked to vectorize and could not.
  # ($name.c includes the runtime; onnxc_main.c is the generic driver.) ONNXC_ZOO_CLANG=syntax
  # (the block-size and schedule variants: the same kernel texts as the model's default build,
  # whose test compiles them at -O3) checks clang's front-end warnings only; the -O3 compile is
  # up to half of such a test's time (googlenet: 32 s of clang).
  (cd "$work/$name" && gcc -std=c11 -fsyntax-only -fopenmp -Wall -Wextra -Werror -DONNXC_MAIN_MODEL "$name.c" onnxc_main.c)
  if [ "${ONNXC_ZOO_CLANG:-O3}" = syntax ]; then
    (cd "$work/$name" && clang -std=c11 -fsyntax-only -march=native -fopenmp -Wall -Wextra -Werror -DONNXC_MAIN_MODEL "$name.c")
  else
    (cd "$work/$name" && clang -std=c11 -O3 -march=native -fopenmp -Wall -Wextra -Werror -DONNXC_MAIN_MODEL -c "$name.c" -o "$name.clang.o")
  fi
  (cd "$work/$name" && clang -std=c11 -fsyntax-only -Wall -Wextra -Werror onnxc_main.c)
  # No libm calls in the kernels: the inline helpers of codegen/c/vmath.h and compare-selects.
  for f in "$work/$name/$name" "$work/$name/$name.clang.o"; do
    [ -f "$f" ] || continue
    calls=$(nm -u "$f" | awk '{print $2}' | sed 's/@.*//' | grep -E -x 'expf|exp|logf|log|tanhf|erff|fmaxf|fmax|fminf|fmin' || true)
    if [ -n "$calls" ]; then
      echo "zoo $name: $f calls libm in its kernels:" $calls >&2
      exit 1
    fi
  done
  rm -f "$work/$name/$name.clang.o"
fi
# A sanitized build (--cflags with -fsanitize=...) must run without a sanitizer report.
"$work/$name/$name" --input "input=$zoo/$name.input.npy" --output "output=$work/$name/output.npy" "${bench[@]}" 2>&1 | tee "$work/$name/run.log"
if grep -q -e "runtime error:" -e "Sanitizer" "$work/$name/run.log"; then
  echo "zoo $name: sanitizer report in the binary's output" >&2
  exit 1
fi
# A quantized model (models/quantize_zoo.py) is compared in steps of its output's scale
# (NAME.step.txt), at most ONNXC_ZOO_STEPS (default 1) steps off ONNX Runtime's output.
tol=(--tol 1e-3)
if [ -f "$zoo/$name.step.txt" ]; then tol=(--step "$(cat "$zoo/$name.step.txt")" --steps "${ONNXC_ZOO_STEPS:-1}"); fi
/usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$work/$name/output.npy" "${tol[@]}"
for t in ${ONNXC_ZOO_RUN_THREADS:+${ONNXC_ZOO_RUN_THREADS//,/ }}; do
  echo "zoo $name: --threads $t"
  "$work/$name/$name" --input "input=$zoo/$name.input.npy" --output "output=$work/$name/output_t$t.npy" --threads "$t" --quiet
  /usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$work/$name/output_t$t.npy" "${tol[@]}"
done
echo "zoo $name: total $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
