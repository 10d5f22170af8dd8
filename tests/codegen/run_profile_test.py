#!/usr/bin/python3
"""tests/codegen/run_profile_test.py — compile-model --profile end to end.

Builds a small model (Conv+Relu, MaxPool, Flatten, Gemm) with onnx.helper, compiles it with
--profile, runs `NAME --profile --bench 5` and checks the table: one row per emitted function
(the header's NAME_PROFILE_OPS), the Conv row's operation count equals 2·MACs + the bias adds
+ the fused Relu computed here from the shapes (read back as GFLOP/s × ms), the Gemm row's
2·M·N·K + bias, times that add up to the printed total, and a measured peak. A binary built
without --profile must refuse --profile with exit 2 and a message saying how to get one.
--profile-out FILE writes one tab-separated line per function, which compile-model --split
--cpu-profile reads back.

Usage: run_profile_test.py --compiler build/compile-model --work DIR [--cflags FLAGS]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_model(path):
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((16, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((16,)).astype(np.float32), "b")
    fw = numpy_helper.from_array(rng.standard_normal((10, 16 * 8 * 8)).astype(np.float32), "fw")
    fb = numpy_helper.from_array(rng.standard_normal((10,)).astype(np.float32), "fb")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], name="fc", transB=1),
    ]
    g = helper.make_graph(nodes, "prof", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], [w, b, fw, fb])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cflags", default="")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    model = os.path.join(a.work, "prof.onnx")
    build_model(model)
    flags = ["--cflags=" + a.cflags] if a.cflags.strip() else []
    fails = []

    out = os.path.join(a.work, "p")
    subprocess.run([a.compiler, model, "-o", out, "--profile", "--quiet"] + flags, check=True)
    header = open(os.path.join(out, "prof.h")).read()
    nops = int(re.search(r"#define prof_PROFILE_OPS (\d+)", header).group(1))
    run = subprocess.run([os.path.join(out, "prof"), "--profile", "--bench", "5", "--threads", "1", "--quiet"],
                         capture_output=True, text=True)
    print(run.stdout + run.stderr)
    if run.returncode != 0:
        fails.append("prof --profile exited %d" % run.returncode)
    rows = [l for l in run.stdout.splitlines() if re.match(r"\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+", l)]
    if len(rows) != nops:
        fails.append("%d table rows for %d functions" % (len(rows), nops))
    m = re.search(r"(\d+) functions, ([0-9.]+) ms per run in them", run.stdout)
    if not m or int(m.group(1)) != nops:
        fails.append("no summary line naming %d functions" % nops)
    elif rows:
        total = sum(float(r.split()[0]) for r in rows)
        if abs(total - float(m.group(2))) > 1e-3 * max(1, len(rows)) + 0.01 * float(m.group(2)):
            fails.append("rows add up to %.4f ms, the summary says %s" % (total, m.group(2)))
    if not re.search(r"peak: [0-9.]+ GFLOP/s \(FMA probe", run.stdout):
        fails.append("no measured peak")

    def flops_of(pattern):
        for r in rows:
            if re.search(pattern, r):
                ms, gf = float(r.split()[0]), float(r.split()[2])
                return gf * 1e9 * ms * 1e-3, ms
        fails.append("no row for %s" % pattern)
        return None, None

    # MACs x2 (3x3 taps with pads 1 on 16 positions: 46 of the 48 (position, tap) pairs per
    # dimension read inside the input; taps on the padding are not counted), bias, Relu.
    conv = 2 * 16 * 3 * 46 * 46 + 16 * 16 * 16 + 16 * 16 * 16
    gemm = 2 * 10 * 1024 + 10
    for pat, want in ((r"\| Conv\+Relu \|", conv), (r"\| Gemm \|", gemm)):
        got, ms = flops_of(pat)
        # The table prints ms with 4 decimals and GFLOP/s with 2: allow their rounding.
        if got is not None and ms > 0 and abs(got - want) > 0.02 * want + 0.006e9 * ms * 1e-3 + 1e-4 * 1e-3 * got / ms * 1e3:
            fails.append("%s: %.0f operations read back, %d expected" % (pat, got, want))

    # --profile-out: one tab-separated line per function, the times the table shows; compile-model
    # --split --cpu-profile reads it back.
    tsv = os.path.join(a.work, "prof.tsv")
    run = subprocess.run([os.path.join(out, "prof"), "--profile-out", tsv, "--bench", "5", "--threads", "1", "--quiet"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fails.append("prof --profile-out exited %d: %s" % (run.returncode, run.stderr))
    else:
        lines = [l.split("\t") for l in open(tsv).read().splitlines() if not l.startswith("#")]
        if len(lines) != nops or any(len(f) != 4 or float(f[0]) < 0 for f in lines):
            fails.append("--profile-out wrote %d lines for %d functions: %r" % (len(lines), nops, lines[:3]))
        elif not any(f[1] == "Conv+Relu" and f[3].count(", ") == 1 for f in lines):
            fails.append("--profile-out: no Conv+Relu function of two nodes: %r" % lines)
        sp = subprocess.run([a.compiler, model, "-o", os.path.join(a.work, "split"), "--split", "auto", "--cpu-profile", tsv,
                             "--emit", "c"], capture_output=True, text=True)
        if sp.returncode != 0 or "measured for %d CPU" % nops not in sp.stdout:
            fails.append("--split --cpu-profile: exit %d, %s%s" % (sp.returncode, sp.stdout, sp.stderr))

    plain = os.path.join(a.work, "plain")
    subprocess.run([a.compiler, model, "-o", plain, "--quiet"] + flags, check=True)
    r = subprocess.run([os.path.join(plain, "prof"), "--profile"], capture_output=True, text=True)
    if r.returncode != 2 or "compile-model --profile" not in r.stderr:
        fails.append("a binary without timers: exit %d, %r" % (r.returncode, r.stderr.strip()))

    for f in fails:
        print("FAIL:", f)
    print("profile test: %s" % ("ok" if not fails else "%d failures" % len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
