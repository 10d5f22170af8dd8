#!/usr/bin/env python3
"""Quantized zoo: zoo models (models/export_zoo.py) quantized by ONNX Runtime, with ONNX Runtime's outputs.

For each NAME this reads ZOO/NAME.onnx and ZOO/NAME.input.npy and writes
  NAME_qdq.onnx       onnxruntime.quantization.quantize_static, QDQ format, per-channel
                      symmetric int8 weights, uint8 activations (per tensor, MinMax over the
                      calibration inputs), as a user of ONNX Runtime's tools would make it;
  NAME_qdq.input.npy  the zoo input (the same image as NAME.input.npy);
  NAME_qdq.ref.npy    ONNX Runtime's output for it (CPU execution provider, its default graph
                      optimizations, so its QDQ-to-integer-kernel fusions: the int8 path a user
                      of ONNX Runtime gets);
  NAME_qdq.step.txt   the output's quantization step: the scale of the DequantizeLinear that
                      makes the model's output (one element differing by one step is a rounding
                      boundary crossed; a test compares in these steps).
With --format qoperator the files are NAME_qop.* (QLinearConv, QLinearAdd... nodes).
Calibration: --calibration N (default 4) seeded random images made like the zoo input
(uniform [0,1) pixels, ImageNet-normalized), none of them the test input, so the test input's
activations may exceed a calibrated range and saturate, as they would for a user.
The ONNX Runtime version is pinned in requirements.txt; the model and reference depend on it.
Files are written to temporary names and renamed, .onnx last, so a model counts as done only
when all files exist.

Usage: .venv/bin/python models/quantize_zoo.py [--zoo DIR] [--out DIR] [--force]
       [--format qdq|qoperator] [--calibration N] NAME...
"""

import argparse
import logging
import os
import sys
import time
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                      QuantType, quantize_static)

BASE_SEED = 20261129
IMAGENET_MEAN = np.array((0.485, 0.456, 0.406), np.float32).reshape(1, 3, 1, 1)
IMAGENET_STD = np.array((0.229, 0.224, 0.225), np.float32).reshape(1, 3, 1, 1)


class Images(CalibrationDataReader):
    """n seeded random ImageNet-normalized images of the input's shape."""

    def __init__(self, name, shape, n):
        rng = np.random.default_rng((BASE_SEED + zlib.crc32(name.encode())) % (2**31))
        self.items = [{"input": ((rng.random(shape, dtype=np.float32) - IMAGENET_MEAN) / IMAGENET_STD)
                       .astype(np.float32)} for _ in range(n)]

    def get_next(self):
        return self.items.pop(0) if self.items else None


def output_step(path):
    """The scale of the DequantizeLinear whose output is the graph's output, or None."""
    m = onnx.load(path, load_external_data=False)
    out = m.graph.output[0].name
    inits = {t.name: t for t in m.graph.initializer}
    for n in m.graph.node:
        if n.output[0] == out and n.op_type == "DequantizeLinear" and n.input[1] in inits:
            s = onnx.numpy_helper.to_array(inits[n.input[1]])
            if s.size == 1:
                return float(s.reshape(-1)[0])
    return None


def quantize_one(name, zoo, out_dir, fmt, n_calib, force):
    stem = f"{name}_{'qdq' if fmt == 'qdq' else 'qop'}"
    paths = {k: os.path.join(out_dir, f"{stem}.{k}") for k in ("onnx", "input.npy", "ref.npy", "step.txt")}
    if not force and all(os.path.exists(p) for p in paths.values()):
        print(f"{stem}: skipped (all files exist in {out_dir}; --force to redo)", flush=True)
        return True
    src, src_in = os.path.join(zoo, f"{name}.onnx"), os.path.join(zoo, f"{name}.input.npy")
    for p in (src, src_in):
        if not os.path.exists(p):
            print(f"{stem}: ERROR: {p} does not exist (models/export_zoo.py {name} makes it)", flush=True)
            return False
    t0 = time.time()
    x = np.load(src_in, allow_pickle=False)
    ort.set_default_logger_severity(3)  # not the quantizer's notes on initializers it drops
    tmp = {k: p + ".tmp" for k, p in paths.items()}
    quantize_static(src, tmp["onnx"], Images(name, x.shape, n_calib),
                    quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax)
    t1 = time.time()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(tmp["onnx"], so, providers=["CPUExecutionProvider"])
    ref = sess.run(None, {"input": x})[0].astype(np.float32)
    step = output_step(tmp["onnx"])
    if step is None:
        print(f"{stem}: ERROR: the output is not made by a per-tensor DequantizeLinear", flush=True)
        return False
    with open(tmp["input.npy"], "wb") as f:
        np.save(f, x)
    with open(tmp["ref.npy"], "wb") as f:
        np.save(f, ref)
    with open(tmp["step.txt"], "w") as f:
        f.write(f"{step!r}\n")
    for k in ("input.npy", "ref.npy", "step.txt", "onnx"):
        os.replace(tmp[k], paths[k])
    m = onnx.load(paths["onnx"], load_external_data=False)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print(f"{stem}: onnxruntime {ort.__version__}, {n_calib} calibration images, output step {step:.4g}, "
          f"max|output| {np.abs(ref).max():.4g}; ops {' '.join(f'{k}:{v}' for k, v in sorted(ops.items()))}; "
          f"quantize {t1 - t0:.1f}s, total {time.time() - t0:.1f}s", flush=True)
    return True


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Quantize zoo models with ONNX Runtime's quantize_static "
                                 "and record ONNX Runtime's outputs as references.")
    ap.add_argument("--zoo", default=os.path.join(here, "out"),
                    help="folder with NAME.onnx and NAME.input.npy (default: models/out)")
    ap.add_argument("--out", help="output folder (default: the --zoo folder)")
    ap.add_argument("--format", choices=("qdq", "qoperator"), default="qdq",
                    help="QDQ (Q/DQ pairs around float ops, default) or QOperator (QLinear* nodes)")
    ap.add_argument("--calibration", type=int, default=4, metavar="N",
                    help="calibration images (default 4)")
    ap.add_argument("--force", action="store_true", help="redo even if the files exist")
    ap.add_argument("names", nargs="+", metavar="NAME", help="zoo models (e.g. mobilenet_v2 resnet50)")
    args = ap.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice to pre-process
    if args.calibration < 1:
        ap.error("--calibration must be at least 1")
    out = args.out or args.zoo
    os.makedirs(out, exist_ok=True)
    failed = []
    for name in args.names:
        try:
            ok = quantize_one(name, args.zoo, out, args.format, args.calibration, args.force)
        except Exception as e:  # report and carry on with the other models
            print(f"{name}: ERROR: {type(e).__name__}: {e}", flush=True)
            ok = False
        if not ok:
            failed.append(name)
    if failed:
        print(f"quantize_zoo.py: failed: {' '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
