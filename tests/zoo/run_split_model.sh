#!/usr/bin/env bash
# Split-model test (compile-model --split): for each SPEC, compile ZOO/NAME.onnx into a head
# and a tail (both C, the CPU-only mode of split models), run the head on NAME.input.npy
# writing the cut tensors NAME.split.json names, run the tail on them, and compare its output
# with PyTorch's own (NAME.ref.npy): max abs error <= 1e-3 of the reference's max magnitude.
# Also checks NAME.split.json: an after=NODE cut ends at NODE, the chosen cut is one of the
# candidates, and auto's is within the latency budget.
# With --cuda-emulated the split is compiled with --device cuda (head and tail_gpu CUDA, tail C)
# and the CUDA parts run on the CPU (tests/cuda/emu_build.sh): the emulated head feeds both the
# C tail and the emulated CUDA tail, and both outputs must match PyTorch's.
# Usage: run_split_model.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR [--cuda-emulated] SPEC... [-- COMPILE_MODEL_FLAGS...]
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4
shift 4
emulated=0
if [ "${1:-}" = --cuda-emulated ]; then
  emulated=1
  shift
fi
specs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do specs+=("$1"); shift; done
[ $# -gt 0 ] && shift
extra=("$@")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work/$name" && mkdir -p "$work/$name"
k=0
for spec in "${specs[@]}"; do
  start=$(date +%s.%N)
  out="$work/$name/cut$k"
  k=$((k + 1))
  if [ $emulated = 1 ]; then
    "$cc_model" "$zoo/$name.onnx" -o "$out" --name "$name" --verify-passes --quiet --split "$spec" --device cuda --emit c "${extra[@]}"
    bash "$here/../cuda/emu_build.sh" "$out" "${name}_head"
    bash "$here/../cuda/emu_build.sh" "$out" "${name}_tail_gpu"
    (cd "$out" && gcc -std=c11 -O2 -fopenmp -DONNXC_MAIN_MODEL -o "${name}_tail" "${name}_tail.c" onnxc_main.c -lm)
    head_bin="$out/${name}_head.emu"
  else
    "$cc_model" "$zoo/$name.onnx" -o "$out" --name "$name" --verify-passes --quiet --split "$spec" "${extra[@]}"
    head_bin="$out/${name}_head"
    # One makefile per part, and a Makefile whose `so` builds both libraries (dry run).
    plan=$(make -n -C "$out" so)
    for part in head tail; do
      grep -q -- "-o lib${name}_${part}.so ${name}_${part}.c" <<< "$plan" || { echo "make so: no rule ran for lib${name}_${part}.so"; exit 1; }
    done
  fi
  # The cut tensors, and the checks on the plan.
  args=$(/usr/bin/python3 - "$out/$name.split.json" "$spec" "$out" <<'EOF'
import json, shlex, sys
path, spec, out = sys.argv[1:]
p = json.load(open(path))
cut = p["cut"]
assert p["spec"] == spec, (p["spec"], spec)
assert cut in p["candidates"], "the chosen cut is not a candidate"
if spec.startswith("after="):
    assert cut["after"] == spec[6:], (cut["after"], spec)
if spec == "auto":
    assert cut["within_budget"], "auto chose a cut over the latency budget"
    assert cut["gain"] == max(c["gain"] for c in p["candidates"] if c["within_budget"])
assert abs(cut["G_ms"] + cut["Tg_ms"] - p["gpu_ms"]) < 1e-3 * p["gpu_ms"]
heads, tails = [], []
for i, t in enumerate(cut["tensors"]):
    f = f"{out}/cut{i}.npy"
    heads.append(f"--output={t['name']}={f}")
    tails.append(f"--input={t['name']}={f}")
print(" ".join(shlex.quote(a) for a in heads))
print(" ".join(shlex.quote(a) for a in tails))
print(f"cut after {cut['after']!r}: {len(cut['tensors'])} tensor(s), {cut['cut_bytes']} bytes, gain {cut['gain']:.3f}", file=sys.stderr)
EOF
)
  head_args=$(sed -n 1p <<< "$args")
  tail_args=$(sed -n 2p <<< "$args")
  eval "\"$head_bin\" --quiet --input \"input=$zoo/$name.input.npy\" $head_args" 2>&1 | tee "$out/run.log"
  eval "\"$out/${name}_tail\" --quiet $tail_args --output \"output=$out/output.npy\"" 2>&1 | tee -a "$out/run.log"
  if grep -q -e "runtime error:" -e "Sanitizer" "$out/run.log"; then
    echo "split $name ($spec): sanitizer report in the binaries' output" >&2
    exit 1
  fi
  /usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$out/output.npy" --tol 1e-3
  if [ $emulated = 1 ]; then
    eval "\"$out/${name}_tail_gpu.emu\" --quiet $tail_args --output \"output=$out/output_gpu.npy\""
    /usr/bin/python3 "$here/../../models/compare.py" "$zoo/$name.ref.npy" "$out/output_gpu.npy" --tol 1e-3
  fi
  echo "split $name ($spec): $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
done
