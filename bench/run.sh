#!/usr/bin/env bash
# bench/run.sh — the CPU benchmark in one command: onnxc against ONNX Runtime and OpenVINO on the
# model zoo, written to bench/results/cpu.md, cpu.json and cpu.png (bench/README.md).
# Through tools/setup.sh it installs what is missing — Debian packages incl. python3-matplotlib,
# and into the project's Python environment (.venv, or ONNXC_VENV) the pinned PyPI packages of
# requirements.txt (onnxruntime, onnx) and bench/requirements.txt (openvino) — and builds
# build/compile-model; then, under that environment's Python, bench/run_bench.py exports the zoo
# models that models/out lacks (batch 1 and batch 8, models/export_zoo.py, a few minutes) and runs
# the benchmark. Its options pass through, e.g. a quick subset:
#   bash bench/run.sh --models resnet50 mobilenet_v2 --rounds 3 --skip-ablation
#   bash bench/run.sh --engines ort ...     # ONNX Runtime only
# ONNXC_SKIP_APT=1 / ONNXC_SKIP_PIP=1 skip the package checks (as in tools/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ONNXC_EXTRA_PACKAGES="python3-matplotlib" ONNXC_REQUIREMENTS="bench/requirements.txt" \
  ONNXC_BUILD_TARGETS="compile-model" bash tools/setup.sh
VENV=${ONNXC_VENV:-$PWD/.venv}
export ONNXC_BENCH_COMMAND="bash bench/run.sh${*:+ $*}"
exec "$VENV/bin/python" bench/run_bench.py --export-missing --compiler build/compile-model "$@"
