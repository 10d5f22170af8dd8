#!/usr/bin/env bash
# What an op means (ir/) never depends on how a backend runs it (codegen/): fails, listing
# the lines, if any file under ir/ includes a header from codegen/ or names it at all, if a
# layer of the compiler includes the driver (driver/), if codegen/ or passes/ use regular
# expressions, if a C kernel writes a parallel construct as text, if a kernel printer with a
# plan of its own reads the target's facts itself, or if a kernel includes another kernel's
# files (below).
# Usage: check_layering.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: check_layering.sh SOURCE_DIR}
[ -d "$src/ir" ] || { echo "check_layering: $src/ir is not a folder" >&2; exit 2; }
if grep -rn "codegen" "$src/ir"; then
  echo "check_layering: files under ir/ refer to codegen/ (above)" >&2
  exit 1
fi
echo "check_layering: ir/ does not refer to codegen/ ($(find "$src/ir" -name '*.cc' -o -name '*.h' | wc -l) files)"
# The driver (driver/: one compile-model run) sits on top: the compiler's layers never include it.
if grep -rn '#include "driver/' "$src/frontend" "$src/ir" "$src/passes" "$src/codegen"; then
  echo "check_layering: the compiler's layers include driver/ (above); the driver calls them, not the other way" >&2
  exit 1
fi
echo "check_layering: frontend/, ir/, passes/ and codegen/ do not include driver/"
# A C kernel's parallel constructs are data (codegen/c/nest.h: CWriter::open_nest and the
# parallel block), which the one region's forms and the schedule's cost model read: no kernel
# writes one as text.
if grep -rnE 'ONNXC_PRAGMA\(omp (parallel|for|single|barrier|task)' "$src/codegen/c/kernels" "$src/codegen/c/loops.cc" "$src/codegen/c/fused.cc"; then
  echo "check_layering: C kernels write parallel constructs as text (above); use CWriter::open_nest (codegen/c/nest.h)" >&2
  exit 1
fi
echo "check_layering: the C kernels write their parallel constructs through codegen/c/nest.h"
# What reads a kernel's body reads its marks (codegen/c/nest.h), never its text: no regular
# expressions over generated code, nor anywhere else in codegen/ and passes/.
if grep -rnE 'std::regex|<regex>' "$src/codegen" "$src/passes"; then
  echo "check_layering: regular expressions in codegen/ or passes/ (above); describe the code as data (codegen/c/nest.h)" >&2
  exit 1
fi
echo "check_layering: no regular expressions in codegen/ and passes/"
# Printers do not decide plans: a kernel whose plan has a file of its own (NAME_plan.h beside
# NAME.cc, e.g. codegen/c/kernels/conv_nchwc_plan.h) hands the target to the plan and reads
# none of its facts (caches, registers, threads, the parallel threshold) itself.
planned=0
for plan in "$src"/codegen/c/kernels/*_plan.h; do
  [ -e "$plan" ] || continue
  printer=${plan%_plan.h}.cc
  [ -e "$printer" ] || continue
  planned=$((planned + 1))
  if grep -nE 'target\.|\.parallel\(|const Target&' "$printer"; then
    echo "check_layering: $(basename "$printer") reads the target itself (above); the choice belongs in $(basename "$plan")" >&2
    exit 1
  fi
done
echo "check_layering: $planned kernel printer(s) with a plan read no target facts themselves"
# Kernels do not reach into each other's files: a file under codegen/c/kernels/ includes, of
# that folder, the table (kernels.h), the elementwise loop helper (ew_loop.h), the conv family's
# header (conv.h, for conv*.cc) and its own plan (NAME_plan.h for NAME.cc and NAME_plan.cc).
for f in "$src"/codegen/c/kernels/*.cc; do
  base=$(basename "$f" .cc)
  own=${base%_plan}_plan.h
  while IFS= read -r inc; do
    case "$inc" in
      kernels.h | ew_loop.h | "$own") ;;
      conv.h) case "$base" in conv*) ;; *) echo "check_layering: $f includes the conv family's conv.h" >&2; exit 1 ;; esac ;;
      *) echo "check_layering: $f includes another kernel's file, codegen/c/kernels/$inc" >&2; exit 1 ;;
    esac
  done < <(sed -n 's|^#include "codegen/c/kernels/\([^"]*\)".*|\1|p' "$f")
done
echo "check_layering: the C kernels include of each other only the table, the shared loop helpers and their own plans"
