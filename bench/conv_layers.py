#!/usr/bin/python3
"""bench/conv_layers.py — GFLOP/s of single conv layers against the one-core FMA peak, same run.

For each layer (a Conv + Relu ONNX model made here), compile-model writes the C; a small harness
includes the model's C and calls the conv's node function directly on its NCHWc buffers, so the
figure is the conv kernel alone (with its fused epilogue), without layout transforms. An FMA
probe (12 independent chains of vector FMAs on one core, GCC/Clang vector extensions) measures
the core's peak in the same run. Rounds alternate between the probe and the layers; the table
shows the median of the per-round medians.

    /usr/bin/python3 bench/conv_layers.py --compiler build/compile-model

Layers: name,C,M,H,W,K,stride,pad (default: three resnet50 layers).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

DEFAULT_LAYERS = [
    "3x3_64_56,64,64,56,56,3,1,1",      # resnet50 layer1 conv2
    "1x1_256_64_56,256,64,56,56,1,1,0",  # resnet50 layer1 conv1
    "3x3s2_128_56,128,128,56,56,3,2,1",  # resnet50 layer2.0 conv2 (stride 2)
    "3x3_256_14,256,256,14,14,3,1,1",    # resnet50 layer3 conv2
    "3x3_512_7,512,512,7,7,3,1,1",       # resnet50 layer4 conv2
]

HARNESS = r"""
#include "%(name)s.c"
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return x < y ? -1 : x > y; }
int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
%(alloc)s
  unsigned s = 12345;
  for (int k = 0; k < %(nbuf)d; ++k) for (size_t i = 0; i < sizes[k]; ++i) { s = s * 1103515245u + 12345u; bufs[k][i] = ((s >> 9) & 1023) / 1024.0f - 0.5f; }
  double t[1000];
  %(fn)s(%(args)s);
  for (int r = 0; r < reps; ++r) { double t0 = now(); %(fn)s(%(args)s); t[r] = now() - t0; }
  qsort(t, reps, sizeof t[0], cmp);
  printf("%%.6f\n", t[reps / 2]);
  return 0;
}
"""

PROBE = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
typedef float v16 __attribute__((vector_size(64)));
#define FMA(a, b, c) ((a) * (b) + (c)) /* fused by -ffp-contract=fast (the --cflags) */
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void) {
  v16 x = {0}, y = {0};
  for (int k = 0; k < 16; ++k) { x[k] = 0.999f; y[k] = 1e-4f; }
  v16 a0 = y, a1 = a0 + y, a2 = a1 + y, a3 = a2 + y, a4 = a3 + y, a5 = a4 + y;
  v16 a6 = a5 + y, a7 = a6 + y, a8 = a7 + y, a9 = a8 + y, a10 = a9 + y, a11 = a10 + y;
  const long n = 50000000;
  double t0 = now();
  for (long i = 0; i < n; ++i) {
    a0 = FMA(a0, x, y); a1 = FMA(a1, x, y); a2 = FMA(a2, x, y); a3 = FMA(a3, x, y);
    a4 = FMA(a4, x, y); a5 = FMA(a5, x, y); a6 = FMA(a6, x, y); a7 = FMA(a7, x, y);
    a8 = FMA(a8, x, y); a9 = FMA(a9, x, y); a10 = FMA(a10, x, y); a11 = FMA(a11, x, y);
  }
  double dt = now() - t0;
  v16 s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  printf("%.3f %g\n", 12.0 * 16 * 2 * n / dt * 1e-9, (double)s[0]);
  return 0;
}
"""


def make_model(path, C, M, H, W, K, S, P):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    OH, OW = (H + 2 * P - K) // S + 1, (W + 2 * P - K) // S + 1
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(((rng.random((M, C, K, K)) - 0.5) * 0.1).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.random(M).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[K, K], strides=[S, S], pads=[P] * 4),
             helper.make_node("Relu", ["c"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, M, OH, OW])], [w, b])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return 2.0 * M * OH * OW * C * K * K


def harness(cfile, name):
    """The harness C for the conv function of `cfile`: its buffers from the comment above it."""
    text = open(cfile).read()
    m = re.search(r"/\* ([^\n]*Conv[^\n]*) \*/\nstatic void (n\d+_\w+)\(([^)]*)\)", text)
    if not m:
        sys.exit(f"{cfile}: no conv function found")
    comment, fn, params = m.groups()
    ins, outs = comment.split(" -> ")
    shapes = [s for s in re.findall(r"f32\[([0-9,]+)\]", ins) if True]
    out_shapes = re.findall(r"f32\[([0-9,]+)\]", outs)
    extras = re.findall(r"f32\[([0-9,]+)\][^,)]*\(fused\)", ins)
    plain_ins = shapes[:len(shapes) - len(extras)]
    order = plain_ins + out_shapes + extras  # the parameter order: inputs, outputs, extras
    nparams = len([p for p in params.split(",") if p.strip()])
    if nparams != len(order):
        sys.exit(f"{cfile}: {nparams} parameters, {len(order)} shapes in '{comment}'")
    sizes = []
    for s in order:
        n = 1
        for d in s.split(","):
            n *= int(d)
        sizes.append(n)
    alloc = "  size_t sizes[] = {%s};\n  float* bufs[%d];\n" % (", ".join(map(str, sizes)), len(sizes))
    alloc += "  for (int k = 0; k < %d; ++k) bufs[k] = aligned_alloc(64, (sizes[k] * 4 + 63) / 64 * 64);\n" % len(sizes)
    args = ", ".join(f"bufs[{k}]" for k in range(len(sizes)))
    return HARNESS % {"name": name, "alloc": alloc, "nbuf": len(sizes), "fn": fn, "args": args}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--layers", nargs="+", default=DEFAULT_LAYERS)
    ap.add_argument("--work", default="/tmp/onnxc-conv-layers")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--cflags", default="-O3 -march=native -mprefer-vector-width=512 -ffp-contract=fast")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20, help="calls per round (the round's figure is their median)")
    ap.add_argument("--extra-args", default="", help="more compile-model arguments, e.g. '--channel-block 64'")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    probe_c = os.path.join(a.work, "probe.c")
    open(probe_c, "w").write(PROBE)
    probe = os.path.join(a.work, "probe")
    run([a.cc, "-std=c11", *a.cflags.split(), "-o", probe, probe_c])
    layers = []
    for spec in a.layers:
        name, *dims = spec.split(",")
        C, M, H, W, K, S, P = map(int, dims)
        d = os.path.join(a.work, name)
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, "layer.onnx")
        flops = make_model(model, C, M, H, W, K, S, P)
        run([a.compiler, model, "-o", d, "--name", "layer", "--emit", "c", "--quiet", *a.extra_args.split()])
        hc = os.path.join(d, "harness.c")
        open(hc, "w").write(harness(os.path.join(d, "layer.c"), "layer"))
        exe = os.path.join(d, "harness")
        run([a.cc, "-std=c11", *a.cflags.split(), "-fopenmp", "-I", d, "-o", exe, hc, "-lm"])
        layers.append((name, exe, flops))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    peak, per = [], {name: [] for name, _, _ in layers}
    for _ in range(a.rounds):
        peak.append(float(run([probe]).split()[0]))
        for name, exe, flops in layers:
            t = float(subprocess.run([exe, str(a.reps)], check=True, capture_output=True, text=True, env=env).stdout)
            per[name].append(flops / t * 1e-9)
    pk = statistics.median(peak)
    print(f"one-core FMA peak (probe): {pk:.1f} GFLOP/s (rounds: {', '.join(f'{p:.1f}' for p in peak)})")
    print("| layer | GFLOP | GFLOP/s (1 core) | of peak |")
    print("|---|---|---|---|")
    for name, _, flops in layers:
        g = statistics.median(per[name])
        print(f"| {name} | {flops * 1e-9:.3f} | {g:.1f} | {g / pk:.0%} |")


if __name__ == "__main__":
    main()
