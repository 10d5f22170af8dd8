#!/usr/bin/env bash
# The test suite on a fresh Debian 12 machine: install the missing dependencies, build
# (build/, Release, gcc) and run every ctest test but the "long" label (set ONNXC_LONG=1 to
# include vgg19 and densenet201); then build again with clang-14, AddressSanitizer +
# UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation (build-san/,
# ONNXC_FUZZ=ON) and run the same tests once more there: compile-model and the unit tests
# are sanitized, and so is the C they generate (ONNXC_TEST_SANITIZE_GENERATED, see
# tests/CMakeLists.txt), so a sanitizer report in the compiler or in any generated binary
# fails the run. There the zoo variants (64/256-channel blocks, NCHW) are "long" too.
# build-san is RelWithDebInfo, not Debug: an instrumented compile-model at -O0 took 3x the
# CPU on resnet50 (16.6 s against 5.3 s), and the one thing Debug adds, always-on
# --verify-passes, the zoo and layout tests pass explicitly. Last, tools/fuzz.sh runs the
# libFuzzer targets of that same build for at most ONNXC_FUZZ_SECONDS (default 60) each from
# the committed corpus, with a fixed seed and execution count so the run is repeatable; a
# finding fails the run. Prints how long each part took, and a summary at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
times=()
part() {
  local t=$(($SECONDS - part_start))
  echo "== $1: $t s"
  times+=("$(printf '%-28s %5d s' "$1" "$t")")
  part_start=$SECONDS
}
part_start=$SECONDS
# Ray Serve for the --emit ray test (serve_ray_mobilenet_v2) beside requirements.txt.
export ONNXC_REQUIREMENTS="${ONNXC_REQUIREMENTS:-} requirements-serve.txt"
bash tools/setup.sh
part "setup and build (build/)"
exclude=(-LE long)
[ "${ONNXC_LONG:-0}" = 1 ] && exclude=()
echo "== ctest (build/)"
(cd build && ctest --output-on-failure -j 2 "${exclude[@]}")
part "ctest (build/)"
echo "== build-san/: clang-14, ASan+UBSan and libFuzzer instrumentation"
ONNXC_SKIP_APT=1 BUILD_DIR=build-san CMAKE_ARGS="-DONNXC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14" \
  bash tools/setup.sh
part "build (build-san/)"
echo "== ctest under ASan+UBSan (build-san/)"
(cd build-san && ctest --output-on-failure -j 2 "${exclude[@]}")
part "ctest (build-san/)"
echo "== fuzz targets from the committed corpus, ${ONNXC_FUZZ_SECONDS:-60} s each (build-san/)"
ONNXC_FUZZ_BUILD_DIR=build-san ONNXC_FUZZ_SEED=${ONNXC_FUZZ_SEED:-1} ONNXC_FUZZ_RUNS_FUZZ_IMPORT=${ONNXC_FUZZ_RUNS_FUZZ_IMPORT:-200000} \
  ONNXC_FUZZ_RUNS_FUZZ_PIPELINE=${ONNXC_FUZZ_RUNS_FUZZ_PIPELINE:-20000} ONNXC_FUZZ_RUNS_FUZZ_EMIT_C=${ONNXC_FUZZ_RUNS_FUZZ_EMIT_C:-600} bash tools/fuzz.sh "${ONNXC_FUZZ_SECONDS:-60}"
part "fuzz (build-san/)"
echo "== time per part"
printf '   %s\n' "${times[@]}"
echo "== all tests passed in $(($SECONDS - start)) s"
