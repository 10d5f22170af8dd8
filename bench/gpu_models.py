#!/usr/bin/env python3
"""bench/gpu_models.py — zoo models that travel to a GPU machine as structure plus a weights recipe.

A GPU machine may have neither Debian's torch 1.13 (models/export_zoo.py) nor room to receive
hundreds of megabytes of weights. So the zoo's graphs travel without their weights:

  pack SRC OUT NAME...   for each SRC/NAME.onnx (models/export_zoo.py's), writes OUT/NAME.skel.onnx:
                         the same graph with every float initializer of rank 2 or more and 64 or
                         more elements (conv filters, matrices) emptied, and OUT/NAME.skel.npz:
                         per emptied initializer and output channel (row) its mean, std, min
                         and max (folded BatchNormalization scales whole rows). Vectors (biases and
                         BatchNormalization's calibrated statistics, a few hundred KB), small and
                         non-float initializers stay as they are.
  unpack DIR [--ref] [NAME...]  for each (or each named) DIR/NAME.skel.onnx writes DIR/NAME.onnx with each emptied
                         initializer refilled deterministically: each row uniform with the
                         original row's mean and standard deviation, clipped to its [min, max], drawn from a counter-based
                         generator (splitmix64 of seed + index, in numpy's uint64 arithmetic), so
                         every machine and numpy version writes the same bytes; DIR/NAME.input.npy:
                         an ImageNet-normalised random image batch from the same generator; with
                         --ref, DIR/NAME.ref.npy: ONNX Runtime's CPU output on that input (the
                         Python package onnxruntime), an independent reference, and
                         DIR/NAME.sensitivity: how far that output moves (max |change| / max |y|)
                         when the input is scaled by 1 + 1e-6 — a reference that moves by more
                         than a comparison's tolerance cannot check anything at that tolerance.

The rebuilt weights are not PyTorch's, so the outputs are not export_zoo.py's references; the
numerics are checked against ONNX Runtime on the same rebuilt model. Gaps: float32 models with
one input; the per-row moments keep activation scales about right, not exact (bench/gpu_run.sh's
models step prints how far a 1e-6 change of the input moves each reference: a model that
amplifies it past the comparison's tolerance cannot be checked this way).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

MIN_ELEMENTS = 64
MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])


def splitmix_uniform(seed, n):
    """n float64 values in [0, 1), from splitmix64(seed + i); identical on every machine."""
    with np.errstate(over="ignore"):
        z = np.arange(n, dtype=np.uint64) + np.uint64(seed)
        z = z * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def name_seed(name):
    h = 1469598103934665603
    for c in name.encode():
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h & 0x7FFFFFFFFFFFFFFF


def pack(src, out, names):
    os.makedirs(out, exist_ok=True)
    for name in names:
        m = onnx.load(os.path.join(src, name + ".onnx"))
        stats = {}
        for t in m.graph.initializer:
            if t.data_type != onnx.TensorProto.FLOAT:
                continue
            a = numpy_helper.to_array(t).astype(np.float64)
            if a.size < MIN_ELEMENTS or a.ndim < 2:
                continue
            rows = a.reshape(a.shape[0], -1)  # per output channel / row: folded BatchNormalization scales rows
            stats[t.name] = np.stack([rows.mean(1), rows.std(1), rows.min(1), rows.max(1)], 1).astype(np.float32)
            t.ClearField("raw_data")
            t.ClearField("float_data")
        onnx.save(m, os.path.join(out, name + ".skel.onnx"))
        np.savez(os.path.join(out, name + ".skel.npz"), **stats)
        print(f"{name}: {len(stats)} initializers emptied")


def unpack(d, ref, names):
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".skel.onnx"):
            continue
        name = fn[: -len(".skel.onnx")]
        if names and name not in names:
            continue
        m = onnx.load(os.path.join(d, fn))
        stats = np.load(os.path.join(d, name + ".skel.npz"))
        for t in m.graph.initializer:
            if t.name not in stats:
                continue
            st = stats[t.name].astype(np.float64)
            mean, std, lo, hi = (st[:, i:i + 1] for i in range(4))
            n = int(np.prod(t.dims))
            u = splitmix_uniform(name_seed(name + "/" + t.name), n).reshape(st.shape[0], -1)
            half = std * np.sqrt(3.0)
            v = np.clip(mean - half + 2.0 * half * u, lo, hi).astype(np.float32)
            t.raw_data = v.reshape(tuple(t.dims)).tobytes()
        onnx.save(m, os.path.join(d, name + ".onnx"))
        inp = m.graph.input[0]
        shape = tuple(x.dim_value for x in inp.type.tensor_type.shape.dim)
        u = splitmix_uniform(name_seed(name + "/input"), int(np.prod(shape))).reshape(shape)
        x = ((u - MEAN.reshape(1, 3, 1, 1)) / STD.reshape(1, 3, 1, 1)).astype(np.float32)
        np.save(os.path.join(d, name + ".input.npy"), x)
        msg = f"{name}: rebuilt, input {shape}"
        if ref:
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            s = ort.InferenceSession(os.path.join(d, name + ".onnx"), so, providers=["CPUExecutionProvider"])
            y = s.run(None, {inp.name: x})[0].astype(np.float32)
            if not np.all(np.isfinite(y)):
                sys.exit(f"gpu_models.py: {name}: ONNX Runtime's output is not finite")
            np.save(os.path.join(d, name + ".ref.npy"), y)
            y2 = s.run(None, {inp.name: (x * np.float32(1 + 1e-6)).astype(np.float32)})[0]
            sens = float(np.abs(y2 - y).max() / np.abs(y).max())
            with open(os.path.join(d, name + ".sensitivity"), "w") as f:
                f.write(f"{sens:.3e}\n")
            msg += f", ONNX Runtime reference max |y| {np.abs(y).max():.3g}, std {y.std():.3g}; input x (1 + 1e-6) moves it {sens:.1e}"
        print(msg, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("names", nargs="+")
    u = sub.add_parser("unpack")
    u.add_argument("dir")
    u.add_argument("--ref", action="store_true", help="write NAME.ref.npy with ONNX Runtime (CPU)")
    u.add_argument("names", nargs="*", help="only these models (default: every NAME.skel.onnx)")
    a = ap.parse_args()
    if a.cmd == "pack":
        pack(a.src, a.out, a.names)
    else:
        unpack(a.dir, a.ref, a.names)


if __name__ == "__main__":
    main()
