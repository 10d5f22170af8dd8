#!/usr/bin/env bash
# The split-model executor on real compiled parts: compile ZOO/NAME.onnx with --split auto
# --emit so (head and tail as C shared libraries: the CPU-only mode), then drive them with
# bench/loadgen under each policy at a low rate, and check its JSON: every request completed,
# none failed or was rejected, gpu-only kept every tail on the device and cpu-tail none.
# With DEVICE cuda: compiled with --device cuda (head and tail_gpu CUDA libraries) and driven with
# loadgen --device cuda (the CUDA device, CUDA graphs on), 2 slots; exit 77 (SKIPPED) without
# nvcc, without a GPU (nvidia-smi -L) or when loadgen was built without the CUDA device.
# Usage: run_split_loadgen.sh COMPILE_MODEL LOADGEN ZOO_DIR NAME WORK_DIR [cpu|cuda]
set -euo pipefail
cc_model=$1 loadgen=$2 zoo=$3 name=$4 work=$5 device=${6:-cpu}
out="$work/$name"
extra=()
if [ "$device" = cuda ]; then
  nvcc=${ONNXC_NVCC:-/usr/local/cuda/bin/nvcc}
  if ! command -v "$nvcc" > /dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "SKIPPED: needs nvcc and a CUDA GPU (nvidia-smi lists none)"
    exit 77
  fi
  if "$loadgen" --device cuda --head x --tail x --tail-device x 2>&1 | grep -q "built without"; then
    echo "SKIPPED: loadgen was built without the CUDA device"
    exit 77
  fi
  rm -rf "$out" && mkdir -p "$out"
  "$cc_model" "$zoo/$name.onnx" -o "$out" --name "$name" --quiet --split auto --device cuda --emit so --nvcc "$nvcc"
  extra=(--device cuda --cuda-graphs --tail-device "$out/lib${name}_tail_gpu.so" --slots 2)
else
  rm -rf "$out" && mkdir -p "$out"
  "$cc_model" "$zoo/$name.onnx" -o "$out" --name "$name" --quiet --split auto --emit so
  extra=(--slots 1)
fi
for policy in gpu-only cpu-tail eft; do
  "$loadgen" --head "$out/lib${name}_head.so" --tail "$out/lib${name}_tail.so" --policy "$policy" --workers 1 \
    --rates 4 --warmup 0.5 --window 2 --json "$out/$policy.json" "${extra[@]}"
  /usr/bin/python3 - "$out/$policy.json" "$policy" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
policy = sys.argv[2]
assert r["mode"] == "models" and r["policy"] == policy, r
for x in r["rates"]:
    assert x["completed"] > 0 and x["failed"] == 0 and x["rejected"] == 0, x
    if policy == "gpu-only":
        assert x["cpu_tail_share"] == 0, x
    if policy == "cpu-tail":
        assert x["cpu_tail_share"] == 1, x
print(f"loadgen {policy}: ok")
PY
done
