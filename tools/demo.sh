#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install dependencies, build onnxc, export
# resnet50 with PyTorch (random weights, fixed seed), compile it to C, build the inference
# binary, run it on PyTorch's input, and compare with PyTorch's output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
echo "== exporting resnet50 (models/export_zoo.py)"
/usr/bin/python3 models/export_zoo.py --out build/zoo resnet50
echo "== compiling resnet50 with compile-model"
build/compile-model build/zoo/resnet50.onnx -o build/resnet50 --name resnet50
echo "== running the generated binary"
build/resnet50/resnet50 --input input=build/zoo/resnet50.input.npy --output output=build/resnet50/output.npy --bench 5
/usr/bin/python3 models/compare.py build/zoo/resnet50.ref.npy build/resnet50/output.npy --tol 1e-3
