#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan in BUILD (default
# build-fuzz/; ONNXC_FUZZ_BUILD_DIR sets it: tools/test.sh passes its sanitized build-san/,
# configured the same way, so nothing is built twice) and runs each for a bounded time from
# the committed corpus. Any finding (crash, sanitizer report, internal compiler error, leak,
# timeout, out-of-memory) fails the run; libFuzzer writes the input to BUILD/findings/. Make
# it a regression test by copying it (minimized with
# `BUILD/fuzz/TARGET -minimize_crash=1 -runs=10000 FILE`) into tests/fuzz/regressions/.
#
# Usage: tools/fuzz.sh [SECONDS_PER_TARGET]     (default 60; needs tools/setup.sh's packages)
#        tools/fuzz.sh --make-corpus NODE_CASES (rebuild tests/fuzz/corpus/ from the node test
#                                                models and the shrunk zoo models, minimized)
# The corpus grown while fuzzing stays in BUILD/corpus/ and is reused by the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${ONNXC_FUZZ_BUILD_DIR:-build-fuzz}
targets=(fuzz_import fuzz_pipeline fuzz_emit_c)
# fuzz_emit_c is fuzz_pipeline plus a C compiler run on what it emits: it shares that corpus.
corpus_of() { [ "$1" = fuzz_emit_c ] && echo fuzz_pipeline || echo "$1"; }
echo "== building the fuzz targets in $build/ (clang, -fsanitize=fuzzer,address,undefined)"
mkdir -p "$build"
blog=$build/fuzz-build.log
cmake -S . -B "$build" -DONNXC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 > "$blog" 2>&1 || { cat "$blog"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >> "$blog" 2>&1 || { tail -50 "$blog"; exit 1; }
# The harness caps what a model may allocate; libFuzzer's own caps catch anything beyond.
opts=(-timeout=20 -rss_limit_mb=2560 -malloc_limit_mb=1024 -print_final_stats=1 -max_len=65536)

if [ "${1:-}" = --make-corpus ]; then
  cases=${2:?usage: tools/fuzz.sh --make-corpus NODE_CASES}
  cand=$(mktemp -d)
  trap 'rm -rf "$cand"' EXIT
  /usr/bin/python3 tests/fuzz/make_corpus.py --node-cases "$cases" "$cand"
  for t in fuzz_import fuzz_pipeline; do
    rm -rf "tests/fuzz/corpus/$t" && mkdir -p "tests/fuzz/corpus/$t"
    "$build/fuzz/$t" -merge=1 "${opts[@]}" "tests/fuzz/corpus/$t" "$cand" 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true
    # Keep the zoo-shaped models whatever the merge chose: they are the realistic seeds.
    cp "$cand"/zoo_*.onnx "tests/fuzz/corpus/$t/"
    echo "corpus $t: $(ls "tests/fuzz/corpus/$t" | wc -l) files, $(du -sh "tests/fuzz/corpus/$t" | cut -f1)"
  done
  exit 0
fi

secs=${1:-60}
# ONNXC_FUZZ_SEED fixes libFuzzer's seed, and ONNXC_FUZZ_RUNS_<TARGET> caps the executions, so a
# run is repeatable: the same inputs on every machine, within SECONDS. tools/test.sh sets
# them, so CI fails on a regression, not on whatever a random seed happens to reach first;
# exploratory runs leave them unset.
seed_opts=()
[ -n "${ONNXC_FUZZ_SEED:-}" ] && seed_opts=(-seed="$ONNXC_FUZZ_SEED")
mkdir -p "$build/findings"
status=0
for t in "${targets[@]}"; do
  work=$build/corpus/$t
  mkdir -p "$work"
  log=$build/$t.log
  runs_var=ONNXC_FUZZ_RUNS_${t^^}
  run_opts=("${seed_opts[@]}")
  [ -n "${!runs_var:-}" ] && run_opts+=(-runs="${!runs_var}")
  corpus=tests/fuzz/corpus/$(corpus_of "$t")
  echo "== $t for ${secs} s (corpus: $corpus + tests/fuzz/regressions, grown in $work)"
  set +e
  (cd "$build" && "$root/$build/fuzz/$t" "${opts[@]}" "${run_opts[@]}" -max_total_time="$secs" -artifact_prefix="$root/$build/findings/$t-" \
     "$root/$work" "$root/$corpus" "$root/tests/fuzz/regressions") > "$log" 2>&1
  rc=$?
  set -e
  grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)" "$log" | tail -2 || true
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$log" || true
  if [ $rc != 0 ]; then
    echo "$t: FINDING (exit $rc); see $log and $build/findings/"
    grep -E "ERROR|internal compiler error|runtime error|bad_alloc|uncaught|Test unit written" "$log" | head -20
    status=1
  fi
done
exit $status
