#!/usr/bin/env bash
# Installs onnxc's build and test dependencies on Debian 12 and builds it:
#  1. Debian's packages (clang-14 and its runtime libraries build the fuzz targets: tools/fuzz.sh;
#     gcc-aarch64-linux-gnu and qemu-user cross-compile and run the SVE tests, tests/cross/) —
#     only the missing ones, so root is needed only when something is missing;
#  2. the project's Python environment .venv, made once from Debian's /usr/bin/python3 with
#     --system-site-packages (Debian's torch, torchvision and numpy stay visible in it: PyPI's
#     torch is a multi-GB CUDA build), and in it the pinned PyPI packages of requirements.txt
#     (ONNX Runtime, onnx) — pip runs only when one is missing or at another version;
#  3. configures and builds into BUILD_DIR (default: build/), whose tests run Python with
#     .venv/bin/python (CMake's ONNXC_PYTHON).
# Once everything is installed no step needs the network. Used by tools/demo.sh, tools/test.sh
# and bench/run.sh.
# ONNXC_EXTRA_PACKAGES adds Debian packages to the list (bench/run.sh: python3-matplotlib);
# ONNXC_REQUIREMENTS adds requirements files (bench/run.sh: bench/requirements.txt, OpenVINO);
# ONNXC_VENV puts the environment elsewhere (default: .venv in the checkout);
# ONNXC_SKIP_APT=1 / ONNXC_SKIP_PIP=1 skip step 1 / step 2;
# ONNXC_BUILD_TARGETS builds only those targets (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
VENV=${ONNXC_VENV:-$PWD/.venv}
PACKAGES="cmake make g++ gcc clang clang-14 libclang-rt-14-dev libonnx-dev libprotobuf-dev protobuf-compiler llvm-dev libomp-dev
  libfmt-dev libcli11-dev libgtest-dev python3 python3-venv python3-numpy python3-onnx python3-torch python3-torchvision
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
if [ "${ONNXC_SKIP_PIP:-0}" != 1 ]; then
  reqs=(requirements.txt ${ONNXC_REQUIREMENTS:-})
  if [ ! -x "$VENV/bin/python" ]; then
    echo "== making the Python environment $VENV (Debian's /usr/bin/python3, --system-site-packages)"
    /usr/bin/python3 -m venv --system-site-packages "$VENV"
  fi
  # Each line of a requirements file is NAME==VERSION (comments aside); the installed
  # packages' metadata says which are missing or at another version.
  unmet=$("$VENV/bin/python" -c '
import re, sys
from importlib import metadata
for path in sys.argv[1:]:
    for line in open(path):
        line = line.split("#")[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line)
        if not m:
            sys.exit(f"setup.sh: {path}: {line!r} is not NAME==VERSION")
        try:
            have = metadata.version(m.group(1))
        except metadata.PackageNotFoundError:
            have = None
        if have != m.group(2):
            print(line + (f" (have {have})" if have else ""))
' "${reqs[@]}")
  if [ -z "$unmet" ]; then
    echo "== Python packages (${reqs[*]}): all installed in $VENV"
  else
    echo "== installing Python packages into $VENV:" $unmet
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q "${reqs[@]/#/-r}"
  fi
fi
echo "== building onnxc in $BUILD_DIR"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DONNXC_PYTHON="$VENV/bin/python" ${CMAKE_ARGS:-}
targets=()
for t in ${ONNXC_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}"
