#!/usr/bin/env bash
# bench/gpu_run.sh — everything of the CUDA backend and the split runtime that needs a GPU, in one
# run, for a GPU machine that has nvcc, gcc and a Python with numpy, onnx and onnxruntime but not
# necessarily onnxc's build dependencies.
#
# Usage: bash bench/gpu_run.sh PKG OUT
#   PKG  a folder made by `bash bench/gpu_pack.sh PKG` on a machine with onnxc built: bin/compile-model,
#        libs.tar.xz (the shared libraries it needs), models/ (bench/gpu_models.py pack: the zoo's
#        graphs without their weights, batch 1 and batch 32), nodecases.tar.xz (the ONNX node test
#        cases the CUDA backend runs)
#   OUT  where the logs and the results go (node_cuda.json, cuda.md/json, split_cuda.md/json/png, gpu.log)
# Steps, each logged and timed, a failure reported and the next step still run (exit 1 at the end):
#   1. the GPU, nvcc and the host compiler
#   2. bench/gpu_models.py unpack --ref: weights refilled, inputs, ONNX Runtime references
#   2b. node_cuda: tests/node/run_node_tests.py on the packed node test cases with --device cuda,
#      each binary's outputs against ONNX's (node_cuda.json); a failed case fails the step
#   3. bench/cuda_bench.py: generated kernels and cuDNN/cuBLAS, batch 1 and 32, at fp32, tf32 and
#      fp16 (--gpu-precision), output checks; cuda_baseline: the same at fp32 with the package's
#      older compile-model (bin/compile-model.base) when it has one, into OUT/baseline/
#   4. tests/cuda/run_split_cuda.sh run: the split executor's CUDA device on mobilenet_v2 and
#      googlenet (gpu-only with and without graphs, cpu-tail, eft; every output checked)
#   4b. gpu_profiles: --device cuda --profile builds of $ONNXC_GPU_PROFILES (MODEL:PRECISION,
#      default googlenet:fp32): per-node GPU times, profile_MODEL_PRECISION.txt and .tsv
#   5. bench/split.py --device cuda: loadgen with the three policies on googlenet and resnet50;
#      split_profiled: googlenet again, cut with the measured GPU times (--gpu-profile)
#   6. cpu_scaling, only when ONNXC_GPU_STEPS names it: bench/parallel.py on the host's cores at
#      1-16 threads against the Python onnxruntime (ONNXC_GPU_CPU_MODELS, default googlenet resnet50),
#      with the loop build's fork/join per loop nest (--omp-region op) next to the one region, and
#      the task build's regions on thread groups and as OpenMP tasks (--task-form omp-tasks);
#      ONNXC_GPU_CPU_THREADS (default 1 2 4 8 16), ONNXC_GPU_CPU_ROUNDS (2) and ONNXC_GPU_CPU_RUNS
#      (10) set the thread counts, the rounds and the timed runs per process, ONNXC_GPU_CPU_TIMEOUT
#      (400 s) the step's limit; ONNXC_GPU_CPU_TUNE=1 adds what compile-model --parallel tune picks
#      at each thread count (parallel.py --tune: three more builds of each model per count; on a
#      16-core Xeon host googlenet's builds took 7.5 minutes with tune at 1-16 threads, about 2
#      without: raise ONNXC_GPU_CPU_TIMEOUT or give fewer ONNXC_GPU_CPU_THREADS). parallel.py
#      writes its results after every round, so a step cut short keeps the rounds it finished
# Environment: ONNXC_GPU_STEPS (step names to run, e.g. "models split_bench"; default all: info
# models node_cuda cuda_bench cuda_baseline gpu_profiles split_check loadgen_build split_bench split_profiled), ONNXC_GPU_PROFILES, ONNXC_GPU_UNPACK (models to rebuild),
# ONNXC_GPU_MODELS, ONNXC_GPU_BATCHES, ONNXC_GPU_PRECISIONS and ONNXC_GPU_PRECISION_MODELS
# (cuda_bench.py's --models, --batches, --precisions, --precision-models; default all, 1,32,
# fp32,tf32,fp16 and all),
# ONNXC_GPU_SPLIT_MODELS, ONNXC_GPU_RATES, ONNXC_GPU_WORKERS (12), ONNXC_GPU_WINDOW (2 s) and
# ONNXC_GPU_SPLIT_TIMEOUT (300 s) for split.py; ONNXC_NVCC and PYTHON.
set -uo pipefail
if [ $# != 2 ] || [ ! -f "$1/libs.tar.xz" ]; then
  echo "usage: bash bench/gpu_run.sh PKG OUT   (PKG from bench/gpu_pack.sh)" >&2
  exit 2
fi
pkg=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# compile-model's shared libraries: only those this machine lacks, so that nothing else here
# loads the packer's copies.
rm -rf /tmp/onnxc-gpu && mkdir -p /tmp/onnxc-gpu/packed /tmp/onnxc-gpu/lib
tar -xJf "$pkg/libs.tar.xz" -C /tmp/onnxc-gpu/packed
for so in /tmp/onnxc-gpu/packed/*; do
  ldconfig -p | grep -q "^[[:space:]]*$(basename "$so") " || cp "$so" /tmp/onnxc-gpu/lib/
done
echo "gpu_run.sh: libraries from the package: $(ls /tmp/onnxc-gpu/lib | tr '\n' ' ')"
export LD_LIBRARY_PATH="/tmp/onnxc-gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ONNXC_NVCC=${ONNXC_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
export PYTHON=${PYTHON:-$(command -v python3)}
cm="$pkg/bin/compile-model"
# cuDNN and cuBLAS where the toolkit lacks them: the Python wheels' copies (nvidia/cudnn,
# nvidia/cublas), linked into the same folder, each also under its unversioned name so that
# -lcudnn/-lcublas link.
cuda_home=$(dirname "$(dirname "$ONNXC_NVCC")")
for lib in cudnn cublas; do
  hdr=$lib.h
  [ $lib = cublas ] && hdr=cublas_v2.h
  [ -f "$cuda_home/include/$hdr" ] && continue
  d=$("$PYTHON" -c "import nvidia.$lib as m; print(list(m.__path__)[0])" 2>/dev/null || true)
  [ -n "$d" ] && [ -d "$d/include" ] || continue
  for so in "$d"/lib/lib*.so.*; do
    base=$(basename "$so")
    ln -sf "$so" "/tmp/onnxc-gpu/lib/$base"
    ln -sf "$so" "/tmp/onnxc-gpu/lib/${base%%.so.*}.so"
  done
  export CPATH="$d/include${CPATH:+:$CPATH}"
  echo "gpu_run.sh: $lib from $d"
done
export LIBRARY_PATH="/tmp/onnxc-gpu/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" in
  *H200*) gpu=h200 ;;
  *) gpu=h100 ;;
esac
work=/tmp/onnxc-gpu
status=0
step() {  # step NAME TIMEOUT CMD...; $ONNXC_GPU_STEPS (words) runs only the steps named there
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  if [ -n "${ONNXC_GPU_STEPS:-}" ]; then
    local w run=0
    for w in $ONNXC_GPU_STEPS; do [[ $name == "$w" || $name == "$w"_* ]] && run=1; done
    [ $run = 1 ] || return 0
  fi
  echo "== $name"
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$out/$name.log"
  echo "== $name: exit $rc, $((SECONDS - t0)) s"
  [ $rc = 0 ] || status=1
}
info() {
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  "$ONNXC_NVCC" --version | tail -n 2
  gcc --version | head -n 1
  "$PYTHON" -c "import numpy, onnx, onnxruntime; print('numpy', numpy.__version__, 'onnx', onnx.__version__, 'onnxruntime', onnxruntime.__version__)"
  nproc
  "$cm" --help | head -n 3
}
step info 60 bash -c "$(declare -f info); cm='$cm' info"
step models 300 "$PYTHON" bench/gpu_models.py unpack "$pkg/models" ${ONNXC_GPU_UNPACK:-} --ref
# ONNX's node test cases that gpu_pack.sh packed (every node a CUDA op, accepted by --device cuda),
# each built with --device cuda --emit exe (nvcc -O3 -arch=sm_90: run_node_tests.py's --cc and
# --cflags do not apply) and run on the GPU, its outputs compared with ONNX's (rtol 1e-3, atol
# 1e-5); builds kept in $work/node_cuda. The last line says `N passed, M failed, K unsupported`.
node_cuda() {
  [ -f "$pkg/nodecases.tar.xz" ] || { echo "node_cuda: $pkg/nodecases.tar.xz is missing (bench/gpu_pack.sh packs it)"; return 1; }
  rm -rf "$work/nodecases" && mkdir -p "$work/nodecases" && tar -xJf "$pkg/nodecases.tar.xz" -C "$work/nodecases" || return 1
  "$PYTHON" tests/node/run_node_tests.py --compiler "$cm" --cases "$work/nodecases" --extra-args "--device cuda" \
    --jobs "$(nproc)" --work "$work/node_cuda" --json "$out/node_cuda.json"
}
step node_cuda 150 bash -c "$(declare -f node_cuda); cm='$cm' pkg='$pkg' work='$work' out='$out' node_cuda"
step cuda_bench 420 "$PYTHON" bench/cuda_bench.py --zoo "$pkg/models" --compiler "$cm" --work "$work/bench" \
  --results "$out" --batches "${ONNXC_GPU_BATCHES:-1,32}" ${ONNXC_GPU_MODELS:+--models $ONNXC_GPU_MODELS} \
  --precisions "${ONNXC_GPU_PRECISIONS:-fp32,tf32,fp16}" ${ONNXC_GPU_PRECISION_MODELS:+--precision-models $ONNXC_GPU_PRECISION_MODELS}
# The same at fp32 with the package's baseline compiler (bin/compile-model.base, gpu_pack.sh's
# ONNXC_GPU_BASELINE), when there is one: its kernels' times next to this compiler's in the same
# run, in OUT/baseline/cuda.md (models: ONNXC_GPU_BASELINE_MODELS, default vgg19 resnet50
# densenet201 googlenet; batches as cuda_bench).
if [ -x "$pkg/bin/compile-model.base" ]; then
  step cuda_baseline 300 "$PYTHON" bench/cuda_bench.py --zoo "$pkg/models" --compiler "$pkg/bin/compile-model.base" \
    --work "$work/bench_base" --results "$out/baseline" --batches "${ONNXC_GPU_BATCHES:-1,32}" \
    --models ${ONNXC_GPU_BASELINE_MODELS:-vgg19 resnet50 densenet201 googlenet} --precisions fp32
fi
# --device cuda --profile: per-node GPU times (NAME --profile table and --profile-out file) of
# $ONNXC_GPU_PROFILES (MODEL:PRECISION words; default googlenet:fp32, whose file split_bench can use).
gpu_profiles() {
  local spec m p d
  for spec in ${ONNXC_GPU_PROFILES:-googlenet:fp32}; do
    m=${spec%%:*} p=${spec##*:} d="$work/profile/${m}_$p"
    "$cm" "$pkg/models/$m.onnx" -o "$d" --name "${m%_b32}" --device cuda --gpu-precision "$p" --profile --emit exe --quiet &
  done
  wait
  for spec in ${ONNXC_GPU_PROFILES:-googlenet:fp32}; do
    m=${spec%%:*} p=${spec##*:} d="$work/profile/${m}_$p"
    echo "== profile $m $p"
    "$d/${m%_b32}" --input "input=$pkg/models/$m.input.npy" --bench 20 --quiet --profile --profile-out "$out/profile_${m}_$p.tsv" \
      > "$out/profile_${m}_$p.txt" 2>&1 || echo "profile $m $p: failed"
    head -n 14 "$out/profile_${m}_$p.txt"
  done
}
step gpu_profiles 240 bash -c "$(declare -f gpu_profiles); cm='$cm' pkg='$pkg' work='$work' out='$out' gpu_profiles"
for m in mobilenet_v2 googlenet; do
  step "split_check_$m" 180 bash tests/cuda/run_split_cuda.sh run "$cm" "$pkg/models" "$m" "$work/split"
done
step loadgen_build 120 gcc -std=c11 -O2 -Iruntime -I"$cuda_home/include" -DONNXC_HAVE_CUDA_DEVICE bench/loadgen.c runtime/onnxc_split.c \
  runtime/onnxc_split_cuda.c -L"$cuda_home/lib64" -Wl,-rpath,"$cuda_home/lib64" -lcudart -lpthread -ldl -lm -o "$work/loadgen"
step split_bench "${ONNXC_GPU_SPLIT_TIMEOUT:-300}" "$PYTHON" bench/split.py --device cuda --cuda-graphs --gpu $gpu \
  --zoo "$pkg/models" ${ONNXC_GPU_SPLIT_MODELS:+--models $ONNXC_GPU_SPLIT_MODELS} --compiler "$cm" --loadgen "$work/loadgen" --work "$work/splitbench" --results "$out" \
  --workers "${ONNXC_GPU_WORKERS:-12}" --rates "${ONNXC_GPU_RATES:-200,400,800,1600,2400,3200,4800}" \
  --window "${ONNXC_GPU_WINDOW:-2}" --warmup 0.5
# The same with the partitioner given the measured GPU times (gpu_profiles' googlenet:fp32 file).
if [ -f "$out/profile_googlenet_fp32.tsv" ]; then
  step split_profiled "${ONNXC_GPU_SPLIT_TIMEOUT:-300}" "$PYTHON" bench/split.py --device cuda --cuda-graphs --gpu $gpu \
    --zoo "$pkg/models" --models googlenet --compiler "$cm" --loadgen "$work/loadgen" --work "$work/splitprof" --results "$out" \
    --out-name split_cuda_profiled --gpu-profile "$out/profile_{model}_fp32.tsv" \
    --workers "${ONNXC_GPU_WORKERS:-12}" --rates "${ONNXC_GPU_RATES:-200,400,800,1600,2400,3200,4800}" \
    --window "${ONNXC_GPU_WINDOW:-2}" --warmup 0.5
fi
# Opt-in (named in ONNXC_GPU_STEPS only): the host's CPU cores, loop against task parallelism and
# ONNX Runtime (its Python package) at 1-16 threads, bench/parallel.py -> parallel_16core.md/json.
if [[ " ${ONNXC_GPU_STEPS:-} " == *" cpu_scaling "* ]]; then
  step cpu_scaling "${ONNXC_GPU_CPU_TIMEOUT:-400}" "$PYTHON" bench/parallel.py --ort-python "$PYTHON" --compiler "$cm" \
    --zoo "$pkg/models" --models ${ONNXC_GPU_CPU_MODELS:-googlenet resnet50} --threads ${ONNXC_GPU_CPU_THREADS:-1 2 4 8 16} --rounds "${ONNXC_GPU_CPU_ROUNDS:-2}" --runs "${ONNXC_GPU_CPU_RUNS:-10}" --omp-region-op \
    $([ "${ONNXC_GPU_CPU_TUNE:-0}" = 1 ] && echo --tune) --work "$work/parallel" --out "$out" --out-name parallel_16core
fi
echo "== gpu_run.sh: exit $status"
exit $status
