#!/usr/bin/env python3
"""bench/dynamic.py — what a batch given at run time costs: onnxc's one build for 1 to MAX items
(compile-model --dynamic batch=MAX) against its builds for one batch (--input-shape), with ONNX
Runtime and OpenVINO on the same model in the same run.

Usage: .venv/bin/python bench/dynamic.py [--models resnet50 mobilenet_v2] [--max 16] [--threads 2]
                                         [--rounds 5] [--work DIR] [--out bench/results/dynamic_batch]

Per model: models/export_zoo.py --batch MAX --dynamic-batch exports it with a symbolic batch and
MAX images (the first of which is the batch-1 image); compile-model builds it once with --dynamic
batch=MAX and twice for one batch (1 and MAX). In each of --rounds rounds, each onnxc build runs
its own --bench (about half a second of runs) at --threads, the dynamic build at batch 1 (input:
the first image) and at MAX, alternating with the static builds, and the ratio dynamic/static of
each round's medians is taken; the report gives the median of the rounds' ratios (the builds of
one round see about the same load) and each build's median latency. ONNX Runtime and OpenVINO
(bench/ort_bench.py, ov_bench.py: f32, the same --threads) run the dynamic .onnx once per batch
after the rounds, for scale. The outputs of the dynamic build at both batches are checked bit for
bit against the static builds' before any timing. Writes OUT.json and OUT.md.
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"dynamic.py: {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout


def cpu_name(shown):
    """The CPU's model name and which of the `shown` /proc/cpuinfo flags it has."""
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    flags = next((line.split(":", 1)[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")), [])
    return cpu + f" ({', '.join(f for f in shown if f in flags) or 'none of ' + ', '.join(shown)})"


def bench_ms(binary, args, threads, runs):
    out = run([binary, "--quiet", "--bench", str(runs), "--threads", str(threads)] + args)
    m = re.search(r"latency: median ([0-9.]+) ms", out)
    if not m:
        sys.exit(f"dynamic.py: no latency from {binary}: {out}")
    return float(m.group(1))


def engine_ms(script, model, inp, threads, runs):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script), model, "--threads", str(threads), "--runs", str(runs),
                        "--input", f"input={inp}"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stdout + r.stderr).strip().splitlines()[-1:]
    return json.loads(r.stdout.strip().splitlines()[-1])["median_ms"], None


def report_args(ap, work, out):
    """The options of a benchmark that writes OUT.json, .md and .png (bench/int8.py,
    int8_dynamic.py): --work, --out, --compiler, --no-chart, --from-json."""
    ap.add_argument("--work", default=os.path.join(ROOT, "build", work))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", out))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--no-chart", action="store_true", help="no OUT.png (no matplotlib needed)")
    ap.add_argument("--from-json", default="", metavar="FILE", help="no runs: write FILE's .md and .png again from FILE")


def report_first(args, script, write_md, write_chart):
    """--from-json: writes FILE's .md (and .png) again and says True (nothing to run). Otherwise
    exits with a message when the chart needs matplotlib and it is missing, and says False."""
    if args.from_json:
        with open(args.from_json) as f:
            report = json.load(f)
        out = os.path.splitext(args.from_json)[0]
        write_md(report, out + ".md")
        if not args.no_chart:
            write_chart(report, out + ".png")
        print(f"wrote {out}.md" + ("" if args.no_chart else f" and {out}.png"))
        return True
    if not args.no_chart:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            sys.exit(f"bench/{script}: matplotlib is missing (Debian's python3-matplotlib; bench/run.sh installs it): "
                     "install it, or pass --no-chart")
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["resnet50", "mobilenet_v2"])
    ap.add_argument("--max", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_dynamic"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "dynamic_batch"))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cpu = cpu_name(("avx512f", "avx512_vnni", "amx_tile"))
    results = []
    for name in args.models:
        t0 = time.time()
        stem = f"{name}_b{args.max}_dyn"
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"), "--out", args.work, "--batch", str(args.max),
             "--dynamic-batch", name])
        model, full = os.path.join(args.work, stem + ".onnx"), os.path.join(args.work, stem + ".input.npy")
        one = os.path.join(args.work, stem + ".input1.npy")
        np.save(one, np.load(full)[:1])
        builds = {}
        for key, flags in (("dynamic", ["--dynamic", f"batch={args.max}"]), ("static_1", ["--input-shape", "input=1,3,224,224"]),
                           (f"static_{args.max}", ["--input-shape", f"input={args.max},3,224,224"])):
            d = os.path.join(args.work, f"{name}_{key}")
            run([args.compiler, model, "-o", d, "--name", name, "-q", "--threads", str(args.threads)] + flags)
            builds[key] = os.path.join(d, name)
        # the same outputs before any timing
        for b, inp in ((1, one), (args.max, full)):
            outs = []
            for binary in (builds["dynamic"], builds[f"static_{b}"]):
                o = binary + f".out{b}.npy"
                run([binary, "--quiet", "--input", inp, "--output", f"output={o}"])
                outs.append(np.load(o))
            if not np.array_equal(outs[0], outs[1]):
                sys.exit(f"dynamic.py: {name} at batch {b}: the dynamic build's output differs from the static build's")
        row = {"model": name, "max": args.max, "threads": args.threads, "rounds": args.rounds, "batches": {}}
        for b, inp in ((1, one), (args.max, full)):
            probe = bench_ms(builds[f"static_{b}"], ["--input", inp], args.threads, 3)
            runs = max(3, min(200, int(500 / max(probe, 1e-3))))
            dyn, sta, ratios = [], [], []
            for _ in range(args.rounds):
                dyn.append(bench_ms(builds["dynamic"], ["--input", inp], args.threads, runs))
                sta.append(bench_ms(builds[f"static_{b}"], ["--input", inp], args.threads, runs))
                ratios.append(dyn[-1] / sta[-1])
            ort, ort_err = engine_ms("ort_bench.py", model, inp, args.threads, runs)
            ov, ov_err = engine_ms("ov_bench.py", model, inp, args.threads, runs)
            row["batches"][str(b)] = {"dynamic_ms": statistics.median(dyn), "static_ms": statistics.median(sta),
                                      "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
                                      "ort_ms": ort, "ov_ms": ov, "ort_error": ort_err, "ov_error": ov_err, "runs": runs}
            r = row["batches"][str(b)]
            print(f"{name} batch {b:>3}: dynamic {r['dynamic_ms']:.3f} ms, static {r['static_ms']:.3f} ms, dynamic/static "
                  f"{r['ratio']:.3f} (rounds {r['ratio_min']:.3f}-{r['ratio_max']:.3f}); ONNX Runtime "
                  f"{'-' if ort is None else f'{ort:.3f} ms'}, OpenVINO {'-' if ov is None else f'{ov:.3f} ms'}", flush=True)
        row["seconds"] = time.time() - t0
        results.append(row)
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "results": results}
    with open(args.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(f"# A batch given at run time (`--dynamic batch={args.max}`) against builds for one batch\n\n"
                f"{cpu}, {args.threads} threads, {report['date']}; `bench/dynamic.py`. Medians of {args.rounds} alternating "
                "rounds of each build's `--bench`; ratio = the median of the rounds' dynamic/static ratios (their range in "
                "brackets). ONNX Runtime and OpenVINO (f32) run the same dynamic .onnx once per batch after the rounds. The "
                "dynamic build's outputs equal the static builds' bit for bit at both batches.\n\n"
                "| model | batch | dynamic ms | static ms | dynamic/static | ONNX Runtime ms | OpenVINO ms |\n"
                "|---|---:|---:|---:|---:|---:|---:|\n")
        for row in results:
            for b, r in row["batches"].items():
                fmt = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
                f.write(f"| {row['model']} | {b} | {r['dynamic_ms']:.3f} | {r['static_ms']:.3f} | {r['ratio']:.3f} "
                        f"({r['ratio_min']:.3f}–{r['ratio_max']:.3f}) | {fmt(r['ort_ms'])} | {fmt(r['ov_ms'])} |\n")
    print(f"wrote {args.out}.json and {args.out}.md")


if __name__ == "__main__":
    main()
