#!/usr/bin/env bash
# The split-model executor on real compiled parts: compile ZOO/NAME.onnx with --split auto
# --emit so (head and tail as C shared libraries: the CPU-only mode), then drive them with
# bench/loadgen under each policy at a low rate, and check its JSON: every request completed,
# none failed or was rejected, gpu-only kept every tail on the device and cpu-tail none.
# With DEVICE dynamic=MAX: the model (exported with a symbolic batch) compiled once more with
# --dynamic batch=MAX, so that the CPU device runs a batch of requests as one call of each part
# (one slot, 2 threads: the batch's items side by side); loadgen --check then compares every
# completed request's output, byte for byte, with its input run alone, and a burst above the
# parts' throughput must form batches of several requests.
# With DEVICE cuda: compiled with --device cuda (head and tail_gpu CUDA libraries) and driven with
# loadgen --device cuda (the CUDA device, CUDA graphs on), 2 slots; exit 77 (SKIPPED) without
# nvcc, without a GPU (nvidia-smi -L) or when loadgen was built without the CUDA device.
# Usage: run_split_loadgen.sh COMPILE_MODEL LOADGEN ZOO_DIR NAME WORK_DIR [cpu|cuda|dynamic=MAX]
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
elif [ "${device%%=*}" = dynamic ]; then
  max=${device#dynamic=}
  rm -rf "$out" && mkdir -p "$out"
  "$cc_model" "$zoo/$name.onnx" -o "$out" --name "$name" --quiet --split auto --dynamic "batch=$max" --emit so
  extra=(--slots 1 --threads 2 --max-batch "$max" --check)
else
  rm -rf "$out" && mkdir -p "$out"
  "$cc_model" "$zoo/$name.onnx" -o "$out" --name "$name" --quiet --split auto --emit so
  extra=(--slots 1)
fi
for policy in gpu-only cpu-tail eft; do
  rates=4 window=2
  # dynamic: a low rate, then a burst past what the parts can serve (batches form in the queue)
  [ "${device%%=*}" = dynamic ] && rates=4,150 window=1
  "$loadgen" --head "$out/lib${name}_head.so" --tail "$out/lib${name}_tail.so" --policy "$policy" --workers 1 \
    --rates "$rates" --warmup 0.5 --window "$window" --json "$out/$policy.json" "${extra[@]}"
  /usr/bin/python3 - "$out/$policy.json" "$policy" "$device" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
policy, device = sys.argv[2], sys.argv[3]
assert r["mode"] == "models" and r["policy"] == policy, r
for x in r["rates"]:
    assert x["completed"] > 0 and x["failed"] == 0 and x["rejected"] == 0, x
    if policy == "gpu-only":
        assert x["cpu_tail_share"] == 0, x
    if policy == "cpu-tail":
        assert x["cpu_tail_share"] == 1, x
    if device.startswith("dynamic"):
        assert x["checked"] >= x["completed"] and x["mismatched"] == 0, x
if device.startswith("dynamic"):
    burst = r["rates"][-1]["batch_hist"]
    assert any(int(b) > 1 for b in burst), ("no batch of several requests in the burst", burst)
    print(f"loadgen {policy}: batches in the burst {burst}, every output equal to its request run alone")
print(f"loadgen {policy}: ok")
PY
done
