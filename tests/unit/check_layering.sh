#!/usr/bin/env bash
# What an op means (ir/) never depends on how a backend runs it (codegen/): fails, listing
# the lines, if any file under ir/ includes a header from codegen/ or names it at all.
# Usage: check_layering.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: check_layering.sh SOURCE_DIR}
[ -d "$src/ir" ] || { echo "check_layering: $src/ir is not a folder" >&2; exit 2; }
if grep -rn "codegen" "$src/ir"; then
  echo "check_layering: files under ir/ refer to codegen/ (above)" >&2
  exit 1
fi
echo "check_layering: ir/ does not refer to codegen/ ($(find "$src/ir" -name '*.cc' -o -name '*.h' | wc -l) files)"
