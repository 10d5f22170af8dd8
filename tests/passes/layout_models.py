#!/usr/bin/python3
"""Generated-C tests of the NCHW -> NCHWc layout pass (passes/layout.cc).

What: writes small ONNX models shaped like the zoo's building blocks (conv chain
with per-channel Mul/Add, residual block, inception concat with aligned and
unaligned branches, DenseNet block of growing Concats, MobileNet-v2 block with depthwise conv and ReLU6,
squeeze-excitation, elementwise chains on the input, odd channel counts) and
runs `compile-model --verify --verify-passes --channel-block B` on each for
B in 4, 16, 64, 256, plus `--layout nchw`: the built binary must match the
reference evaluator run on the imported graph, and the generated C must
compile with -Wall -Wextra -Werror (--cflags; the sanitized build adds ASan+UBSan
flags there, and a sanitizer report in the output fails the run).

  layout_models.py --compiler build/compile-model [--work DIR] [--blocks 4,16]
      [--extra-args "--target aarch64-sve:2048 --cc aarch64-linux-gnu-gcc --run-with '...'"] [--no-nchw]

--extra-args passes more compile-model flags to every compile: tests/cross/run_sve_tests.sh
cross-compiles the models for SVE and verifies them under qemu-aarch64 (--run-with).

Conventions: weights are random with a fixed seed; channel counts are chosen so
that some are and some are not multiples of each block. The summary line of
each compile (layout transforms left) is printed. Exit status 0 iff every
compile and verification passed.
Gaps: which nodes end up in NCHWc depends on which of the C backend's kernels
support it (Backend::supports); the models are the same either way.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(1)


class Model:
    def __init__(self, name):
        self.name, self.nodes, self.inits, self.k = name, [], [], 0

    def fresh(self, base):
        self.k += 1
        return "%s_%d" % (base, self.k)

    def const(self, arr, base="c"):
        n = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float32), n))
        return n

    def op(self, op, ins, **attrs):
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, group=1, stride=1, pads=None, dilations=(1, 1)):
        w = rng.uniform(-1, 1, (cout, cin // group, k, k)) / np.sqrt(cin // group * k * k)
        b = rng.uniform(-0.1, 0.1, cout)
        return self.op("Conv", [x, self.const(w, "w"), self.const(b, "b")], kernel_shape=[k, k],
                       pads=pads if pads is not None else [k // 2] * 4, strides=[stride, stride], group=group,
                       dilations=list(dilations))

    def relu(self, x):
        return self.op("Relu", [x])

    def classifier(self, x, c, classes=10):
        f = self.op("Flatten", [self.op("GlobalAveragePool", [x])], axis=1)
        return self.op("Gemm", [f, self.const(rng.uniform(-1, 1, (classes, c)), "fc_w"),
                                self.const(rng.uniform(-1, 1, classes), "fc_b")], transB=1)

    def save(self, path, inputs, outputs):
        g = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
            initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        onnx.save(m, path)


def conv_chain(m):
    x = "x"
    c = m.relu(m.conv(x, 3, 20, 3))
    c = m.conv(c, 20, 24, 3, stride=2)
    c = m.op("Mul", [c, m.const(rng.uniform(0.5, 1.5, (24, 1, 1)))])
    c = m.op("Add", [c, m.const(rng.uniform(-1, 1, (1, 24, 1, 1)))])
    c = m.op("MaxPool", [m.relu(c)], kernel_shape=[2, 2], strides=[2, 2])
    return [("x", [1, 3, 16, 16])], [m.classifier(c, 24)]


def residual(m):
    s = m.relu(m.conv("x", 3, 32, 3))
    r = m.conv(m.relu(m.conv(s, 32, 32, 3)), 32, 32, 1)
    y = m.relu(m.op("Add", [r, s]))
    return [("x", [1, 3, 10, 10])], [y, m.classifier(y, 32)]


def inception(m):
    s = m.relu(m.conv("x", 3, 16, 3))
    b1 = m.relu(m.conv(s, 16, 16, 1))
    b2 = m.relu(m.conv(s, 16, 32, 3))
    b3 = m.relu(m.conv(m.op("MaxPool", [s], kernel_shape=[3, 3], pads=[1] * 4), 16, 8, 1))
    cat = m.op("Concat", [b1, b2, b3], axis=1)
    cat2 = m.op("Concat", [b3, b1], axis=1)  # unaligned first input for b > 8
    c = m.conv(m.relu(cat), 56, 16, 3)
    c2 = m.conv(cat2, 24, 16, 1)
    return [("x", [1, 3, 8, 8])], [m.classifier(m.op("Add", [c, c2]), 16)]


def dense_block(m):
    """DenseNet: layer k reads Concat(x0..xk); memory planning stores the features in the last
    Concat (views for the earlier ones) where they fill whole blocks, and that Concat inside a
    wider one (passes/memory_plan.cc)."""
    feats, c = [m.relu(m.conv("x", 3, 16, 3))], 16
    for g in (16, 8, 16):
        cat = m.op("Concat", list(feats), axis=1) if len(feats) > 1 else feats[0]
        feats.append(m.conv(m.relu(m.op("Mul", [cat, m.const(rng.uniform(0.5, 1.5, (c, 1, 1)))])), c, g, 3))
        c += g
    cat = m.op("Concat", feats, axis=1)
    wide = m.op("Concat", [cat, m.relu(m.conv(cat, c, 8, 1))], axis=1)
    return [("x", [1, 3, 8, 8])], [m.classifier(wide, c + 8)]


def mobilenet_block(m):
    lo, hi = m.const(0.0, "lo"), m.const(6.0, "hi")
    s = m.conv("x", 3, 24, 3, stride=2)
    e = m.op("Clip", [m.conv(s, 24, 72, 1), lo, hi])
    d = m.op("Clip", [m.conv(e, 72, 72, 3, group=72), lo, hi])
    p = m.conv(d, 72, 24, 1)
    r = m.op("Add", [p, s])
    # squeeze-excitation
    q = m.relu(m.conv(m.op("GlobalAveragePool", [r]), 24, 6, 1))
    sc = m.op("Sigmoid", [m.conv(q, 6, 24, 1)])
    y = m.op("Mul", [r, sc])
    g = m.conv(m.conv(y, 24, 32, 1), 32, 32, 3, group=2)
    return [("x", [1, 3, 12, 12])], [y, m.classifier(g, 32)]


def elementwise_on_input(m):
    a = m.op("Add", [m.relu("x"), m.const(rng.uniform(-1, 1, (21, 1, 1)))])
    b = m.op("Mul", [m.op("Sigmoid", [a]), "z"])
    c = m.op("Sum", [b, m.const(rng.uniform(-1, 1, (1, 1, 5, 5))), m.const(0.5)])
    return [("x", [2, 21, 5, 5]), ("z", [1, 21, 1, 1])], [c]


def odd_channels(m):
    c = m.relu(m.conv("x", 5, 7, 3, stride=2))
    c = m.conv(c, 7, 13, 3)
    c = m.op("Max", [c, m.op("AveragePool", [c], kernel_shape=[3, 3], pads=[1] * 4)])
    c = m.op("Div", [m.conv(c, 13, 3, 1), m.const(rng.uniform(1, 2, (3, 1, 1)))])
    return [("x", [2, 5, 9, 7])], [c]


def conv_edges(m):
    """Rows whose tiles reach the padding (codegen/c/kernels/conv_nchwc.cc): a 7-wide row in one
    tile with both edges, strides, dilations and one-sided pads, depthwise rows, and a dilation
    so wide that most tiles of a row would be masked (one-pixel run-time edges instead)."""
    a = m.relu(m.conv("x", 8, 40, 3))                                  # 7x7, pads 1
    a = m.conv(a, 40, 40, 3, pads=[1, 2, 0, 1])                        # one-sided, uneven pads
    d = m.relu(m.conv(a, 40, 40, 3, group=40))                         # depthwise 3x3 on 7 columns
    d = m.conv(d, 40, 24, 3, dilations=(2, 2), pads=[2, 2, 2, 2])      # dilated
    d = m.conv(d, 24, 24, 5, group=24, stride=2)                       # depthwise 5x5, stride 2
    e = m.conv(m.relu(m.conv("y", 8, 20, 5, stride=2)), 20, 20, 3, pads=[1, 0, 1, 3])  # 15 wide -> 8
    w = m.conv("z", 32, 32, 3, pads=[1, 90, 1, 90], dilations=(1, 90))  # 200 columns, dilation 90
    return [("x", [1, 8, 7, 7]), ("y", [1, 8, 9, 15]), ("z", [1, 32, 3, 200])], [d, e, w]


MODELS = [conv_chain, residual, inception, dense_block, mobilenet_block, elementwise_on_input, odd_channels, conv_edges]


def join_value_args(argv):
    """'--cflags -O1' as CMake passes it would read -O1 as an option: join such pairs."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in ("--cflags", "--extra-args") and i + 1 < len(argv):
            out.append(argv[i] + "=" + argv[i + 1])
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--work", default=None)
    ap.add_argument("--blocks", default="4,16,64,256")
    ap.add_argument("--cflags", default="-O1 -Wall -Wextra -Werror")
    ap.add_argument("--extra-args", default="", help="more compile-model flags, shell-quoted (a --target, --cc, --run-with)")
    ap.add_argument("--no-nchw", action="store_true", help="only the blocked runs, no --layout nchw")
    args = ap.parse_args(join_value_args(sys.argv[1:]))
    work = args.work or tempfile.mkdtemp(prefix="onnxc_layout_models_")
    os.makedirs(work, exist_ok=True)
    failed = 0
    runs = [["--channel-block", b] for b in args.blocks.split(",")] + ([] if args.no_nchw else [["--layout", "nchw"]])
    extra = shlex.split(args.extra_args)
    # The generic driver is compiled once per run, with this run's compiler and flags (a stale one
    # from an earlier run in the same --work may have others), and linked into every binary.
    driver = os.path.join(work, "onnxc_main.o")
    if os.path.exists(driver):
        os.remove(driver)
    for make in MODELS:
        m = Model(make.__name__)
        inputs, outputs = make(m)
        path = os.path.join(work, make.__name__ + ".onnx")
        m.save(path, inputs, outputs)
        for flags in runs:
            out = os.path.join(work, make.__name__ + "_" + "_".join(flags).lstrip("-").replace("-", ""))
            cmd = [args.compiler, path, "-o", out, "--verify", "--verify-passes", "--cflags=" + args.cflags,
                   "--driver-object", driver] + flags + extra
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            passes = re.search(r"^passes: .*$", p.stdout, re.M)
            report = "runtime error:" in p.stdout or "Sanitizer" in p.stdout
            ok = p.returncode == 0 and "MISMATCH" not in p.stdout and not report
            print("%-4s %-22s %-20s %s" % ("ok" if ok else "FAIL", make.__name__, " ".join(flags),
                                          passes.group(0) if passes else ""))
            if not ok:
                failed += 1
                print(p.stdout)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
