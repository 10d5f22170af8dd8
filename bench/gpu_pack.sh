#!/usr/bin/env bash
# bench/gpu_pack.sh — the folder bench/gpu_run.sh takes to a GPU machine: compile-model, the
# shared libraries it needs beyond the C and C++ runtimes (libprotobuf, libfmt, libLLVM...) as
# PKG/libs.tar.xz (gpu_run.sh unpacks those the machine lacks), and the zoo's graphs without
# their weights (bench/gpu_models.py pack), batch 1 and batch 32: about 45 MB in all, however
# large the weights.
# Usage: bash bench/gpu_pack.sh PKG [MODEL...]   (after tools/setup.sh, and models/export_zoo.py
# with and without --batch 32 into models/out)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ]; then
  echo "usage: bash bench/gpu_pack.sh PKG [MODEL...]" >&2
  exit 2
fi
[ -x "$root/build/compile-model" ] || { echo "gpu_pack.sh: $root/build/compile-model is missing (bash tools/setup.sh)" >&2; exit 1; }
pkg=$1
shift
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet50 googlenet mobilenet_v2 efficientnet_b0 densenet201 vgg19)
names=()
for m in "${models[@]}"; do
  for s in "$m" "${m}_b32"; do
    [ -f "$root/models/out/$s.onnx" ] && names+=("$s")
  done
done
[ ${#names[@]} -gt 0 ] || { echo "gpu_pack.sh: none of the models is in models/out (models/export_zoo.py)" >&2; exit 1; }
rm -rf "$pkg" && mkdir -p "$pkg/bin" "$pkg/libs" "$pkg/models"
cp "$root/build/compile-model" "$pkg/bin/"
ldd "$root/build/compile-model" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*) ;;
    *) cp -L "$lib" "$pkg/libs/" ;;
  esac
done
(cd "$pkg/libs" && tar -cf - -- * | xz -6 -T0 > ../libs.tar.xz)
rm -rf "$pkg/libs"
/usr/bin/python3 "$root/bench/gpu_models.py" pack "$root/models/out" "$pkg/models" "${names[@]}"
du -sh "$pkg"
