#!/usr/bin/python3
"""Fusion structure of zoo models: compile MODEL to C with --dump-ir and check which nodes
the final IR emits, by kind ("Conv+Add+Relu" for a fused group, "MaxPool" for a plain
node), against a table derived from each model's architecture (torchvision definitions,
BatchNorm folded into the convs by the exporter, Dropout gone in eval mode). The whole
histogram must match: a group kind that appears or disappears is a failure.

Usage: check_structure.py --compiler COMPILE_MODEL --zoo DIR [--work DIR] [--layout nchw]
                          [--channel-block N]... MODEL...
With --layout nchwc (16-channel blocks, or each --channel-block given) the same groups are
expected plus exactly one onnxc.layout_transform: each model's first conv reads the NCHW
input directly, every later op runs on blocked channels (googlenet's concats included, whose
branch widths are not whole blocks of 64 or 256), and the classifier's Flatten needs plain
NCHW again. A model without a table (--layout nchwc only) is checked for its transforms
alone: at most two (into the blocked layout, and back before a classifier or the output).

Every model is compiled for 4 threads. With --layout nchwc its C must open exactly one OpenMP
parallel region (compile-model --omp-region inference, the default): the run's, in which every
node's loops are shared among the threads; no node keeps a fork/join of its own. (In NCHW, the
ablation layout, strided convs of the plane kernel keep theirs: codegen/c/kernels/conv_nchw.cc.)
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile


def resnet50():
    # 53 convs: stem, 16 bottlenecks x 3, 4 downsample shortcuts. Each bottleneck's first two
    # convs and the stem take their ReLU; the third takes the residual Add and the ReLU after
    # it (its other operand comes from outside the group: the block input or the shortcut).
    return {"Conv+Relu": 1 + 16 * 2, "Conv+Add+Relu": 16, "Conv": 4,
            "MaxPool": 1, "GlobalAveragePool": 1, "Flatten": 1, "Gemm": 1}


def mobilenet_v2():
    # Stem conv + ReLU6 (Clip 0..6), 17 inverted residual blocks (the first without the
    # expansion conv), the 1x1 conv to 1280 + ReLU6. Every expand/depthwise conv takes its
    # Clip; the projection conv has no activation and takes the residual Add in the 10 blocks
    # with stride 1 and equal channels (24: 1, 32: 2, 64: 3, 96: 2, 160: 2).
    blocks, residual = 17, 10
    clipped = 1 + (1 + (blocks - 1) * 2) + 1  # stem, depthwise (+ expand), last 1x1
    return {"Conv+Clip": clipped, "Conv+Add": residual, "Conv": blocks - residual,
            "GlobalAveragePool": 1, "Flatten": 1, "Gemm": 1}


def efficientnet_b0():
    # SiLU is x * sigmoid(x): a conv's group takes Sigmoid and Mul reading its output twice.
    # 16 MBConv blocks (the first without expansion), each with a squeeze-excitation:
    # GlobalAveragePool -> conv + SiLU -> conv + Sigmoid -> Mul(x, s). The SE Mul broadcasts
    # [1,C,1,1] over x (x also feeds the pool) and its only user is the projection conv, so it
    # stays a plain node. 9 blocks add their input (stride 1, equal channels).
    blocks, residual = 16, 9
    silu = 1 + (blocks - 1) + blocks + blocks + 1  # stem, expand, depthwise, SE reduce, head
    return {"Conv+Sigmoid+Mul": silu, "Conv+Sigmoid": blocks, "Mul": blocks,
            "Conv+Add": residual, "Conv": blocks - residual,
            "GlobalAveragePool": blocks + 1, "Flatten": 1, "Gemm": 1}


def googlenet():
    # 57 BasicConv2d (conv + BN + ReLU): 3 in the stem, 6 in each of 9 inception modules;
    # 13 max pools (4 between stages, one per inception's pool branch), 9 concats.
    return {"Conv+Relu": 3 + 9 * 6, "MaxPool": 4 + 9, "Concat": 9,
            "GlobalAveragePool": 1, "Flatten": 1, "Gemm": 1}


EXPECTED = {"nchw": {"resnet50": resnet50(), "mobilenet_v2": mobilenet_v2(),
                     "efficientnet_b0": efficientnet_b0(), "googlenet": googlenet()}}
EXPECTED["nchwc"] = {m: dict(t, **{"onnxc.layout_transform": 1}) for m, t in EXPECTED["nchw"].items()}

# "  %y : f32[..] = Conv+Add+Relu(%x, ... | %skip)  # names"
NODE = re.compile(r"^  (\[folded\] )?%.* = ([A-Za-z0-9_.+]+)\(.*\)  # ")
HEADER = re.compile(r"^graph .* \(opset \d+, (\d+) nodes\)$")


def histogram(dump):
    kinds = collections.Counter()
    total = None
    for line in dump.splitlines():
        m = HEADER.match(line)
        if m:
            total = int(m.group(1))
            continue
        m = NODE.match(line)
        if m and not m.group(1):
            kinds[m.group(2)] += 1
    return total, kinds


MAX_TRANSFORMS = 2


def fork_joins(out):
    """The `omp parallel` constructs (regions, parallel loops, sections) in the model's C."""
    n = 0
    for f in os.listdir(out):
        if f.endswith(".c") and not f.startswith("onnxc_"):
            with open(os.path.join(out, f)) as fh:
                n += len(re.findall(r"ONNXC_PRAGMA\(omp parallel\b", fh.read()))
    return n


def check(args, model, block):
    expected = EXPECTED.get(args.layout, {}).get(model)
    if expected is None and args.layout != "nchwc":
        print(f"{model}: no expected structure for layout {args.layout}")
        return False
    out = os.path.join(args.work, model)
    cmd = [args.compiler, os.path.join(args.zoo, model + ".onnx"), "-o", out, "--emit", "c",
           "--dump-ir", "--verify-passes", "--layout", args.layout, "--threads", "4", "--quiet"]
    if block:
        cmd += ["--channel-block", str(block)]
        model = f"{model} (block {block})"
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        print(f"{model}: compile-model failed (exit {p.returncode}):\n{p.stdout}")
        return False
    regions = fork_joins(out) if args.layout == "nchwc" else 1
    if regions != 1:
        print(f"{model}: the C opens {regions} OpenMP parallel regions, expected exactly one (the run's)")
        return False
    total, got = histogram(p.stdout)
    if total is None or sum(got.values()) == 0:
        print(f"{model}: no IR dump found in the output of {' '.join(cmd)}")
        return False
    if expected is None:
        n = got["onnxc.layout_transform"]
        ok = n <= MAX_TRANSFORMS
        print(f"{model}: {total} nodes, {n} layout transforms (at most {MAX_TRANSFORMS}) — {'ok' if ok else 'TOO MANY'}")
        return ok
    want = collections.Counter(expected)
    ok = True
    if total != sum(want.values()):
        print(f"{model}: {total} nodes in the final IR, expected {sum(want.values())}")
        ok = False
    for kind in sorted(set(got) | set(want)):
        if got[kind] != want[kind]:
            print(f"{model}: {kind}: {got[kind]}, expected {want[kind]}")
            ok = False
    groups = sum(c for k, c in got.items() if "+" in k)
    print(f"{model}: {total} nodes, {groups} fused groups — {'ok' if ok else 'MISMATCH'}")
    if not ok or args.verbose:
        for kind, c in sorted(got.items()):
            print(f"  {c:4d} {kind}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--zoo", required=True, help="folder with MODEL.onnx")
    ap.add_argument("--work", help="output folder (default: a temporary one)")
    ap.add_argument("--layout", default="nchw", choices=["nchw", "nchwc"])
    ap.add_argument("--channel-block", type=int, action="append",
                    help="--layout nchwc: the channel block, repeatable (default: 16)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    tmp = None
    if not args.work:
        tmp = tempfile.TemporaryDirectory(prefix="onnxc_structure_")
        args.work = tmp.name
    blocks = (args.channel_block or [16]) if args.layout == "nchwc" else [None]
    ok = all([check(args, m, b) for m in args.models for b in blocks])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
