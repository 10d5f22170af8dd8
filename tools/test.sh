#!/usr/bin/env bash
# The test suite on a fresh Debian 12 machine: install dependencies, build (build/, Release)
# and run every ctest test but the "long" label (set ONNXC_LONG=1 to include vgg19 and
# densenet201); then build again with AddressSanitizer + UndefinedBehaviorSanitizer
# (build-asan/, ONNXC_SANITIZE=ON) and run the same tests once more there: compile-model and the
# unit tests are sanitized, and so is the C they generate (ONNXC_TEST_SANITIZE_GENERATED, see
# tests/CMakeLists.txt), so a sanitizer report in the compiler or in any generated binary fails
# the run. There the zoo variants (64/256-channel blocks, NCHW) are "long" too. build-asan is
# RelWithDebInfo, not Debug: the instrumented compile-model at -O0 took 3x the CPU on resnet50
# (16.6 s against 5.3 s), and the one thing Debug adds, always-on --verify-passes, the zoo and
# layout tests pass explicitly. Last, tools/fuzz.sh builds the libFuzzer targets (build-fuzz/,
# clang) and runs each for at most ONNXC_FUZZ_SECONDS (default 60) from the committed corpus,
# with a fixed seed and execution count so the run is repeatable; a finding fails the run. Prints how long each part took.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
part() { echo "== $1: $(($SECONDS - part_start)) s"; part_start=$SECONDS; }
part_start=$SECONDS
bash tools/setup.sh
part "setup and build (build/)"
exclude=(-LE long)
[ "${ONNXC_LONG:-0}" = 1 ] && exclude=()
echo "== ctest (build/)"
(cd build && ctest --output-on-failure -j 2 "${exclude[@]}")
part "ctest (build/)"
echo "== build-asan/: ASan+UBSan build"
ONNXC_SKIP_APT=1 BUILD_DIR=build-asan CMAKE_ARGS="-DONNXC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo" bash tools/setup.sh
part "build (build-asan/)"
echo "== ctest under ASan+UBSan (build-asan/)"
(cd build-asan && ctest --output-on-failure -j 2 "${exclude[@]}")
part "ctest (build-asan/)"
echo "== fuzz targets from the committed corpus, ${ONNXC_FUZZ_SECONDS:-60} s each (build-fuzz/)"
ONNXC_FUZZ_SEED=${ONNXC_FUZZ_SEED:-1} ONNXC_FUZZ_RUNS_FUZZ_IMPORT=${ONNXC_FUZZ_RUNS_FUZZ_IMPORT:-200000} \
  ONNXC_FUZZ_RUNS_FUZZ_PIPELINE=${ONNXC_FUZZ_RUNS_FUZZ_PIPELINE:-20000} bash tools/fuzz.sh "${ONNXC_FUZZ_SECONDS:-60}"
part "fuzz (build-fuzz/)"
echo "== all tests passed in $(($SECONDS - start)) s"
