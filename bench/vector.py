#!/usr/bin/python3
"""bench/vector.py — how much of the generated code is vector code, and how long its vectors are.

The seed paper measured, on a vector engine, the share of vector operations and the average
vector length of ResNet-50 and VGG-19 under TVM's NCHW code and under NCHWc with long channel
blocks (average vector length 15 -> 148). This script computes the same two figures for onnxc's
generated C, statically from the object code, for x86-64 AVX-512 and for SVE-2048, per layout:
plain NCHW and NCHWc with blocks of 16, 64 and 256 floats. Results: bench/results/vector.md.

For each model and layout it runs compile-model --emit c --profile for the target (the profile
table gives every node function's FLOPs from the compiler's cost model, ir/cost.h), compiles the
C to an object (gcc -O3 for x86-64-v4 with 512-bit vectors; aarch64-linux-gnu-gcc -O3
-march=armv8.2-a+sve -msve-vector-bits=2048; -fno-inline-functions-called-once so that each node
function keeps its own code), disassembles it (objdump) and attributes every function, and its
OpenMP outlined bodies (NAME._omp_fn.K), to the node function it belongs to. Per node function it
counts the floating-point arithmetic instructions (add, sub, mul, div, fused multiply-add, max,
min, sqrt, compare and their negated forms; moves, loads, conversions and integer ops are not
counted) and for each its number of float32 elements: 16 on a zmm register, 8 on ymm, 4 on xmm
or a NEON .4s, 64 on an SVE z register at 2048 bits, 1 for a scalar (ss / s register). Then:

  vector share   = vector FP instructions / all FP instructions        (per function)
  average length = mean elements per FP instruction, scalars counting 1 (per function)

and the model's figures are the functions' figures weighted by their share of the model's FLOPs.
These are static counts: an instruction in a hot loop counts as much as one in a remainder
path, so they describe the code the compiler produced, not a dynamic trace (the seed paper's
figures came from the machine's counters). On SVE an instruction governed by a predicate counts
the lanes of the `ptrue` that set it (`ptrue p0.s, vl7`: 7 lanes; unpredicated or all-true: 64);
one governed by a `whilelo` predicate has lanes known only at run time: those are reported as a
share and left out of the average length. Functions without FP arithmetic (copies, layout
transforms) carry no FLOPs and no weight.

    /usr/bin/python3 bench/vector.py                       # models/out, the default models
    /usr/bin/python3 bench/vector.py --models resnet50 --blocks 16 64
"""
import argparse
import collections
import datetime
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TARGETS = {
    "x86-64 AVX-512": {
        "target": "x86-64-avx512", "cc": "gcc", "objdump": "objdump",
        "cflags": "-O3 -march=x86-64-v4 -mprefer-vector-width=512 -ffp-contract=fast",
    },
    "SVE-2048": {
        "target": "aarch64-sve:2048", "cc": "aarch64-linux-gnu-gcc", "objdump": "aarch64-linux-gnu-objdump",
        "cflags": "-O3 -march=armv8.2-a+sve -msve-vector-bits=2048 -ffp-contract=fast",
    },
}
DEFAULT_MODELS = ["resnet50", "vgg19", "googlenet", "mobilenet_v2", "efficientnet_b0"]
DEFAULT_BLOCKS = [16, 64, 256]

# x86: FP arithmetic mnemonics (AVX/AVX-512, VEX/EVEX forms): packed (ps) and scalar (ss).
X86_FP = re.compile(r"^v(?:add|sub|mul|div|max|min|sqrt|cmp\w*|f[n]?m(?:add|sub)\d{3}|fmaddsub\d{3}|fmsubadd\d{3}|rcp14|rsqrt14)(ps|ss)$")
# AArch64: FP arithmetic (NEON / SVE / scalar).
A64_FP = re.compile(r"^(?:fadd|fsub|fmul|fdiv|fdivr|fmax|fmin|fmaxnm|fminnm|fsqrt|fmla|fmls|fnmla|fnmls|fmad|fmsb|fnmad|fnmsb|"
                    r"fmadd|fmsub|fnmadd|fnmsub|fcm\w+|fabd|fsubr|fmulx|fneg|fabs)$")


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, **kw)
    if p.returncode != 0:
        sys.exit(f"vector.py: {' '.join(cmd)} failed:\n{p.stdout[-3000:]}")
    return p.stdout


def elements_x86(mnemonic_kind, operands):
    if mnemonic_kind == "ss":
        return 1
    if "zmm" in operands:
        return 16
    if "ymm" in operands:
        return 8
    return 4


def elements_a64(operands, sve_floats):
    if re.search(r"\bz\d+\.s\b", operands):
        return sve_floats
    if re.search(r"\bv\d+\.4s\b", operands):
        return 4
    if re.search(r"\bv\d+\.2s\b", operands):
        return 2
    if re.search(r"\bs\d+\b", operands):
        return 1
    return None  # double or half precision: not counted


ELEM_BYTES = {"b": 1, "h": 2, "s": 4, "d": 8}


def ptrue_lanes(ops, sve_floats):
    """Float32 lanes a `ptrue pN.T[, PATTERN]` enables."""
    m = re.match(r"p\d+\.([bhsd])(?:,\s*(\w+))?", ops)
    if not m:
        return None
    per = ELEM_BYTES[m.group(1)] / 4.0
    pat = m.group(2) or "all"
    full = sve_floats / per  # elements of type T in the register
    if pat in ("all", "pow2", "mul4"):
        k = full
    elif pat == "mul3":
        k = full // 3 * 3
    elif pat.startswith("vl"):
        k = min(int(pat[2:]), full)
    else:
        return None
    return int(k * per)


def function_stats(objdump_text, arch, sve_floats=64):
    """{function: Counter(elements -> FP instruction count)} from `objdump -d --no-show-raw-insn`.
    AArch64: an SVE instruction governed by a predicate counts the lanes its `ptrue` enabled
    (`ptrue p0.s, vl7`: 7); one governed by a `whilelo` predicate, whose lanes are only known at
    run time, counts under the key 0 (reported apart)."""
    stats = collections.defaultdict(collections.Counter)
    fn = None
    preds = {}
    for line in objdump_text.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            fn = m.group(1)
            preds = {}
            continue
        if fn is None or "\t" not in line:
            continue
        parts = line.split("\t")
        if len(parts) < 2:
            continue
        # "  addr:\tmnemonic operands" (x86) or "  addr:\tmnemonic\toperands" (AArch64)
        ins = " ".join(p.strip() for p in parts[1:]).strip()
        if not ins:
            continue
        mn, _, ops = ins.partition(" ")
        mn = mn.strip()
        if arch == "x86":
            m = X86_FP.match(mn)
            if m:
                stats[fn][elements_x86(m.group(1), ops)] += 1
        else:
            pm = re.match(r"(p\d+)\.", ops)
            if mn == "ptrue" and pm:
                preds[pm.group(1)] = ptrue_lanes(ops, sve_floats)
            elif mn in ("whilelo", "whilelt", "whilele", "whilels") and pm:
                preds[pm.group(1)] = 0
            elif mn == "pfalse" and pm:
                preds[pm.group(1)] = None
            if A64_FP.match(mn):
                e = elements_a64(ops, sve_floats)
                if e == sve_floats:
                    g = re.search(r"\b(p\d+)/[mz]\b", ops)
                    if g:
                        e = preds.get(g.group(1), 0)
                        e = 0 if e is None else e
                if e is not None:
                    stats[fn][e] += 1
    return stats


def node_functions(c_text, name):
    """[(function name, FLOPs)] per call of NAME_run (a --profile build), from the ops table."""
    flops = [float(m.group(1)) for m in re.finditer(r"^  \{\".*\", ([0-9.e+]+), [0-9.e+]+\},$", c_text, re.M)]
    calls = re.findall(r"^  \{ const double t0 = onnxc_now_seconds\(\); (n\d+_\w+)\(", c_text, re.M)
    if len(flops) != len(calls):
        sys.exit(f"vector.py: {name}: {len(calls)} timed calls but {len(flops)} rows in the ops table")
    return list(zip(calls, flops))


def compile_object(a, spec, model, layout_flags, out, c_path, obj):
    run([a.compiler, os.path.join(a.zoo, model + ".onnx"), "-o", out, "--name", model, "--emit", "c", "--profile", "--quiet",
         "--target", spec["target"]] + layout_flags)
    run([spec["cc"], "-std=c11"] + spec["cflags"].split() + ["-fopenmp", "-fno-inline-functions-called-once", "-I", out,
                                                             "-c", c_path, "-o", obj])


def measure(a, model, target, layout_flags, work):
    spec = TARGETS[target]
    tag = re.sub(r"\W+", "_", f"{model}_{spec['target']}_{'_'.join(layout_flags)}")
    out = os.path.join(work, tag)
    obj = os.path.join(out, model + ".o")
    c_path = os.path.join(out, model + ".c")
    fresh = a.reuse and os.path.exists(obj) and os.path.getmtime(obj) > os.path.getmtime(a.compiler)
    if not fresh:
        compile_object(a, spec, model, layout_flags, out, c_path, obj)
    with open(c_path) as f:
        calls = node_functions(f.read(), model)
    dis = run([spec["objdump"], "-d", "--no-show-raw-insn", obj])
    stats = function_stats(dis, "x86" if spec["cc"] == "gcc" else "a64")
    per_fn = collections.defaultdict(collections.Counter)
    for fn, counts in stats.items():
        base = fn.split("._omp_fn.")[0].split(".part.")[0].split(".constprop.")[0]
        per_fn[base].update(counts)
    total_flops = sum(f for _, f in calls)
    share = vlen = weight = wlen = dyn = 0.0
    missing = 0.0
    for fn, f in calls:
        c = per_fn.get(fn)
        if not f:
            continue
        if not c or not sum(c.values()):
            missing += f
            continue
        n = sum(c.values())
        known = n - c.get(0, 0)
        vec = sum(v for e, v in c.items() if e != 1)
        share += f * vec / n
        dyn += f * c.get(0, 0) / n
        if known:
            vlen += f * sum(e * v for e, v in c.items() if e) / known
            wlen += f
        weight += f
    return {"share": share / weight if weight else 0.0, "vlen": vlen / wlen if wlen else 0.0,
            "dynamic": dyn / weight if weight else 0.0,
            "flops": total_flops, "unattributed": missing / total_flops if total_flops else 0.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "models", "out"), help="folder with NAME.onnx (models/export_zoo.py)")
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    ap.add_argument("--blocks", type=int, nargs="+", default=DEFAULT_BLOCKS)
    ap.add_argument("--targets", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    ap.add_argument("--out", default=os.path.join(HERE, "results", "vector.md"))
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "onnxc-vector"))
    ap.add_argument("--reuse", action="store_true", help="keep objects in --work newer than the compiler (re-read only)")
    a = ap.parse_args()
    for m in a.models:
        if not os.path.exists(os.path.join(a.zoo, m + ".onnx")):
            sys.exit(f"vector.py: no {m}.onnx in {a.zoo} (/usr/bin/python3 models/export_zoo.py --out {a.zoo} {m})")
    os.makedirs(a.work, exist_ok=True)
    layouts = [("NCHW", ["--layout", "nchw"])] + [(f"NCHW{b}c", ["--channel-block", str(b)]) for b in a.blocks]
    R = {}
    for m in a.models:
        for lname, flags in layouts:
            for t in a.targets:
                r = measure(a, m, t, flags, a.work)
                R[(m, lname, t)] = r
                print(f"{m:16s} {lname:10s} {t:15s} vector share {100 * r['share']:5.1f}%  average length {r['vlen']:6.1f}"
                      f"  run-time predicated {100 * r['dynamic']:4.1f}%  (FLOPs without FP instructions: "
                      f"{100 * r['unattributed']:.1f}%)", flush=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout.strip()
    L = ["# Vector code in the generated C", "",
         f"Written by `bench/vector.py` on {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} (onnxc {commit}). "
         "Static counts from the object code (see the script's opening comment): per node function, the share of "
         "floating-point arithmetic instructions that are vector instructions and their average length in float32 "
         "elements (scalars count 1), weighted by the function's share of the model's FLOPs. Compilers: gcc 12 -O3 "
         "-march=x86-64-v4 -mprefer-vector-width=512 (AVX-512: 16 floats per register) and aarch64-linux-gnu-gcc 12 -O3 "
         "-march=armv8.2-a+sve -msve-vector-bits=2048 (SVE-2048: 64 floats per register; a predicated instruction "
         "counts the lanes of its `ptrue`).", ""]
    for t in a.targets:
        L += [f"## {t}", "", "| model | " + " | ".join(l for l, _ in layouts) + " |", "|---|" + "---|" * len(layouts)]
        for m in a.models:
            cells = [f"{100 * R[(m, l, t)]['share']:.0f}% / {R[(m, l, t)]['vlen']:.1f}"
                     + (f" ({100 * R[(m, l, t)]['dynamic']:.0f}% run-time)" if R[(m, l, t)]['dynamic'] >= 0.005 else "")
                     for l, _ in layouts]
            L.append(f"| {m} | " + " | ".join(cells) + " |")
        L += ["", "Cells: vector share / average vector length (elements)" + (
            "; in brackets, the share of FP instructions under a `whilelo` predicate, whose active lanes are known only at "
            "run time and are left out of the average." if "SVE" in t else ".") + "", ""]
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(L))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
