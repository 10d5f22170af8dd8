#!/usr/bin/env bash
# bench/run.sh — the CPU benchmark in one command: onnxc against ONNX Runtime on the model zoo,
# written to bench/results/cpu.md, cpu.json and cpu.png (bench/README.md).
# It installs what is missing (Debian packages incl. python3-matplotlib, onnxruntime-node 1.30.0
# into tests/ort/, both through tools/setup.sh), builds build/compile-model, exports the zoo
# models that models/out lacks (batch 1 and batch 8, models/export_zoo.py, a few minutes), then
# runs bench/run_bench.py; its options pass through, e.g. a quick subset:
#   bash bench/run.sh --models resnet50 mobilenet_v2 --rounds 3 --skip-ablation
# ONNXC_SKIP_APT=1 skips the package check (as in tools/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ONNXC_EXTRA_PACKAGES="python3-matplotlib" ONNXC_BUILD_TARGETS="compile-model" bash tools/setup.sh
export ONNXC_BENCH_COMMAND="bash bench/run.sh${*:+ $*}"
exec /usr/bin/python3 bench/run_bench.py --export-missing --compiler build/compile-model "$@"
