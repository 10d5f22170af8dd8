#!/usr/bin/env bash
# bench/gpu_pack.sh — the folder bench/gpu_run.sh takes to a GPU machine: compile-model, the
# shared libraries it needs beyond the C and C++ runtimes (libprotobuf, libfmt, libLLVM...) as
# PKG/libs.tar.xz (gpu_run.sh unpacks those the machine lacks), the zoo's graphs without
# their weights (bench/gpu_models.py pack), batch 1 and batch 32, and the ONNX node test cases
# the CUDA backend runs (PKG/nodecases.tar.xz, for gpu_run.sh's node_cuda step): about 52 MB in
# all, however large the weights.
# Usage: [ONNXC_GPU_BASELINE=OLD_COMPILE_MODEL] bash bench/gpu_pack.sh PKG [MODEL...]   (after tools/setup.sh, tests/node/generate.py
# build/nodecases, and models/export_zoo.py with and without --batch 32 into models/out)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ]; then
  echo "usage: bash bench/gpu_pack.sh PKG [MODEL...]" >&2
  exit 2
fi
[ -x "$root/build/compile-model" ] || { echo "gpu_pack.sh: $root/build/compile-model is missing (bash tools/setup.sh)" >&2; exit 1; }
nodecases="$root/build/nodecases/node"
ls -d "$nodecases"/test_* > /dev/null 2>&1 || {
  echo "gpu_pack.sh: no node test cases in $nodecases ($root/.venv/bin/python tests/node/generate.py $root/build/nodecases)" >&2
  exit 1
}
pkg=$1
shift
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet50 googlenet mobilenet_v2 efficientnet_b0 densenet201 vgg19)
names=()
for m in "${models[@]}"; do
  for s in "$m" "${m}_b32"; do
    [ -f "$root/models/out/$s.onnx" ] && names+=("$s")
  done
done
[ ${#names[@]} -gt 0 ] || { echo "gpu_pack.sh: none of the models is in models/out (models/export_zoo.py)" >&2; exit 1; }
rm -rf "$pkg" && mkdir -p "$pkg/bin" "$pkg/libs" "$pkg/models"
cp "$root/build/compile-model" "$pkg/bin/"
# ONNXC_GPU_BASELINE=PATH: another compile-model (an older build, same libraries) as
# bin/compile-model.base, which gpu_run.sh's cuda_baseline step benchmarks next to this one.
if [ -n "${ONNXC_GPU_BASELINE:-}" ]; then
  [ -x "$ONNXC_GPU_BASELINE" ] || { echo "gpu_pack.sh: ONNXC_GPU_BASELINE=$ONNXC_GPU_BASELINE is not an executable" >&2; exit 1; }
  cp "$ONNXC_GPU_BASELINE" "$pkg/bin/compile-model.base"
fi
ldd "$root/build/compile-model" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$pkg/libs/" ;;
  esac
done
(cd "$pkg/libs" && tar -cf - -- * | xz -6 -T0 > ../libs.tar.xz)
rm -rf "$pkg/libs"
/usr/bin/python3 "$root/bench/gpu_models.py" pack "$root/models/out" "$pkg/models" "${names[@]}"
# The node test cases whose every node is a CUDA op (compile-model --device cuda --list-ops;
# Constant aside) and that compile-model --device cuda accepts as run_node_tests.py feeds them
# (inputs other than float baked in as constants). The check runs run_node_tests.py here with
# /bin/true for nvcc: compile-model stops after writing the .cu, a case it accepts is counted as
# failed ("wrote no build/model") and one it refuses (exit 3) as unsupported.
sel=$(mktemp -d /tmp/gpu_pack_nodes.XXXXXX)
trap 'rm -rf "$sel"' EXIT
"$root/.venv/bin/python" "$root/tests/node/run_node_tests.py" --compiler "$root/build/compile-model" --cases "$nodecases" \
  --jobs "$(nproc)" --extra-args "--device cuda --nvcc /bin/true" --json "$sel/cases.json" > "$sel/log" 2>&1 || true
[ -f "$sel/cases.json" ] || { tail -n 5 "$sel/log" >&2; echo "gpu_pack.sh: run_node_tests.py wrote no results" >&2; exit 1; }
"$root/build/compile-model" --device cuda --list-ops > "$sel/ops"
"$root/.venv/bin/python" - "$sel/cases.json" "$sel/ops" "$nodecases" > "$sel/list" <<'EOF'
import json, os, sys
import onnx
results, ops_file, cases = sys.argv[1:]
ops = {l.split()[0] for l in open(ops_file) if l.strip() and not l.startswith("#")} | {"Constant"}
for c in json.load(open(results))["cases"]:
    if c["status"] == "unsupported":
        continue
    graph = onnx.load(os.path.join(cases, c["name"], "model.onnx")).graph
    if all(n.domain in ("", "ai.onnx") and n.op_type in ops for n in graph.node):
        print(c["name"])
EOF
[ -s "$sel/list" ] || { echo "gpu_pack.sh: no node test case compiles with --device cuda" >&2; exit 1; }
tar -cf - -C "$nodecases" -T "$sel/list" | xz -6 -T0 > "$pkg/nodecases.tar.xz"
echo "gpu_pack.sh: $(wc -l < "$sel/list") of $(ls -d "$nodecases"/test_* | wc -l) node test cases for --device cuda"
du -sh "$pkg"
