#!/usr/bin/env bash
# Installs onnxc's build and test dependencies from Debian 12's packages (clang-14 and its
# runtime libraries build the fuzz targets: tools/fuzz.sh) — only the missing ones, so root
# is needed only when something is missing — then configures and builds into BUILD_DIR
# (default: build/). Used by tools/demo.sh and tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
PACKAGES="cmake make g++ gcc clang clang-14 libclang-rt-14-dev libonnx-dev libprotobuf-dev protobuf-compiler llvm-dev libomp-dev
  libfmt-dev libcli11-dev libgtest-dev python3 python3-numpy python3-onnx python3-torch python3-torchvision"
if [ "${ONNXC_SKIP_APT:-0}" != 1 ]; then
  # Only what is missing is installed, so a machine that has everything needs neither root
  # nor the network.
  missing=()
  for p in $PACKAGES; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$st" = "install ok installed" ] || missing+=("$p")
  done
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
echo "== building onnxc in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"
