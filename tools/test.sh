#!/usr/bin/env bash
# The test suite on a fresh Debian 12 machine: install dependencies, build, run every ctest
# test but the "long" label (set ONNXC_LONG=1 to include vgg19 and densenet201), then
# build again with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and run the
# bad-input tests there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
exclude=(-LE long)
[ "${ONNXC_LONG:-0}" = 1 ] && exclude=()
echo "== ctest (build/)"
(cd build && ctest --output-on-failure -j 2 "${exclude[@]}")
echo "== bad-input tests under ASan+UBSan (build-asan/)"
ONNXC_SKIP_APT=1 BUILD_DIR=build-asan CMAKE_ARGS="-DONNXC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug" bash tools/setup.sh
(cd build-asan && ctest --output-on-failure -L bad)
