#!/usr/bin/env bash
# Installs onnxc's build and test dependencies from Debian 12's packages (clang-14 and its
# runtime libraries build the fuzz targets: tools/fuzz.sh; gcc-aarch64-linux-gnu and qemu-user
# cross-compile and run the SVE tests, tests/cross/) — only the missing ones, so root
# is needed only when something is missing — then configures and builds into BUILD_DIR
# (default: build/). Used by tools/demo.sh, tools/test.sh and bench/run.sh.
# ONNXC_EXTRA_PACKAGES adds Debian packages to the list (bench/run.sh: python3-matplotlib);
# ONNXC_BUILD_TARGETS builds only those targets (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PACKAGES="cmake make g++ gcc clang clang-14 libclang-rt-14-dev libonnx-dev libprotobuf-dev protobuf-compiler llvm-dev libomp-dev
  libfmt-dev libcli11-dev libgtest-dev python3 python3-numpy python3-onnx python3-torch python3-torchvision
  gcc-aarch64-linux-gnu qemu-user
  ${ONNXC_EXTRA_PACKAGES:-}"
if [ "${ONNXC_SKIP_APT:-0}" != 1 ]; then
  # Only what is missing is installed, so a machine that has everything needs neither root
  # nor the network.
  missing=()
  for p in $PACKAGES; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$st" = "install ok installed" ] || missing+=("$p")
  done
  # node and npm run ONNX Runtime for the opset tests; any install of them will do.
  { command -v node && command -v npm; } > /dev/null || missing+=(nodejs npm)
  if [ ${#missing[@]} = 0 ]; then
    echo "== Debian packages: all installed"
  else
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
      command -v sudo > /dev/null || { echo "setup.sh: missing packages (${missing[*]}); run as root or install sudo" >&2; exit 1; }
      SUDO=sudo
    fi
    echo "== installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
  fi
fi
# ONNX Runtime 1.30 for the tests that compare with it (tests/opset/): from npm, once
# (--ignore-scripts: the package ships its library; its install script wants the network).
if [ "${ONNXC_SKIP_ORT:-0}" != 1 ]; then
  if [ -f tests/ort/node_modules/onnxruntime-node/package.json ]; then
    echo "== onnxruntime-node: installed"
  else
    command -v npm > /dev/null || { echo "setup.sh: npm is missing (Debian package npm)" >&2; exit 1; }
    echo "== installing onnxruntime-node@1.30.0 into tests/ort/node_modules"
    (cd tests/ort && npm install --ignore-scripts --no-save --no-package-lock onnxruntime-node@1.30.0)
  fi
fi
echo "== building onnxc in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
targets=()
for t in ${ONNXC_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
