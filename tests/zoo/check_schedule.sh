#!/usr/bin/env bash
# Memory plan against the fork-join schedule: compiles ZOO/NAME.onnx with --parallel task for
# 1, 2, 4, 8 and 16 threads (C only) with --verify-passes, which recomputes every tensor's live
# range from the node order and the fork-join regions (a node in a region lives as long as
# the whole region) and fails the compile (exit 4) when two tensors live at the same time
# share arena bytes (passes/memory_plan.cc, check_memory_plan). Prints the regions found.
# Usage: check_schedule.sh COMPILE_MODEL ZOO_DIR NAME WORK_DIR
set -euo pipefail
cc_model=$1 zoo=$2 name=$3 work=$4
mkdir -p "$work"
for t in 1 2 4 8 16; do
  rm -rf "$work/$name.t$t"
  out=$("$cc_model" "$zoo/$name.onnx" -o "$work/$name.t$t" --name "$name" --emit c --parallel task --threads "$t" --verify-passes)
  echo "$name, $t thread(s): $(echo "$out" | grep -E '^schedule:' || echo 'no fork-join regions')"
  rm -rf "$work/$name.t$t"
done
