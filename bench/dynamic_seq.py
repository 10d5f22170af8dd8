#!/usr/bin/env python3
"""bench/dynamic_seq.py — what a token count given at run time costs: onnxc's one build for 1 to
MAX tokens (compile-model --dynamic seq=MAX) against its builds for one length (--input-shape),
with ONNX Runtime and OpenVINO on the same dynamic model in the same run.

Usage: .venv/bin/python bench/dynamic_seq.py [--models bert_base gpt2_small] [--max 128]
                                             [--lengths 16 128] [--threads 2] [--rounds 3]
                                             [--work DIR] [--out bench/results/dynamic_seq]

Per model: models/export_transformers.py --dynamic-seq exports it with the token axis as the
symbol "seq" (and its input at MAX tokens, whose first n rows are the input at n); compile-model
builds it once with --dynamic seq=MAX and once per length with --input-shape. The dynamic build's
output at each length is checked bit for bit against the static build's, and against ONNX
Runtime's (max abs difference reported) before any timing. In each of --rounds rounds each onnxc
build runs its own --bench (about half a second of runs) at --threads, the dynamic and the static
build alternating; the report gives the median of the rounds' dynamic/static ratios and each
build's median latency. ONNX Runtime and OpenVINO (bench/ort_bench.py, ov_bench.py: f32, the
same --threads) run the dynamic .onnx at each length after the rounds. Writes OUT.json and OUT.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from dynamic import bench_ms, cpu_name, engine_ms, run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["bert_base", "gpt2_small"])
    ap.add_argument("--max", type=int, default=128)
    ap.add_argument("--lengths", type=int, nargs="+", default=[16, 128])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_dynseq"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "dynamic_seq"))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cpu = cpu_name(("avx512f", "avx512_vnni", "amx_tile"))
    results = []
    for name in args.models:
        t0 = time.time()
        stem = f"{name}_dyn" if args.max == 128 else f"{name}_t{args.max}_dyn"
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_transformers.py"), "--out", args.work, "--tokens", str(args.max),
             "--dynamic-seq", name])
        model = os.path.join(args.work, stem + ".onnx")
        full = np.load(os.path.join(args.work, stem + ".input.npy"))
        inputs = {}
        for n in args.lengths:
            inputs[n] = os.path.join(args.work, f"{stem}.input{n}.npy")
            np.save(inputs[n], full[:, :n])
        builds = {}
        for key, flags in [("dynamic", ["--dynamic", f"seq={args.max}"])] + [
                (f"static_{n}", ["--input-shape", f"input=1,{n},{full.shape[2]}"]) for n in args.lengths]:
            d = os.path.join(args.work, f"{name}_{key}")
            run([args.compiler, model, "-o", d, "--name", name, "-q", "--threads", str(args.threads)] + flags)
            builds[key] = os.path.join(d, name)
        row = {"model": name, "max": args.max, "threads": args.threads, "rounds": args.rounds, "lengths": {}}
        for n in args.lengths:
            outs = []
            for binary in (builds["dynamic"], builds[f"static_{n}"]):
                o = binary + f".out{n}.npy"
                run([binary, "--quiet", "--input", inputs[n], "--output", f"output={o}"])
                outs.append(np.load(o))
            if not np.array_equal(outs[0], outs[1]):
                sys.exit(f"dynamic_seq.py: {name} at {n} tokens: the dynamic build's output differs from the static build's")
            ref_dir = os.path.join(args.work, f"{name}_ort{n}")
            run([sys.executable, os.path.join(ROOT, "tests", "ort", "ort_run.py"), model, ref_dir, f"input={inputs[n]}"])
            ref = np.load(os.path.join(ref_dir, "0.npy"))
            vs_ort = float(np.abs(outs[0] - ref).max())
            probe = bench_ms(builds[f"static_{n}"], ["--input", inputs[n]], args.threads, 3)
            runs = max(3, min(200, int(500 / max(probe, 1e-3))))
            dyn, sta, ratios = [], [], []
            for _ in range(args.rounds):
                dyn.append(bench_ms(builds["dynamic"], ["--input", inputs[n]], args.threads, runs))
                sta.append(bench_ms(builds[f"static_{n}"], ["--input", inputs[n]], args.threads, runs))
                ratios.append(dyn[-1] / sta[-1])
            ort, ort_err = engine_ms("ort_bench.py", model, inputs[n], args.threads, runs)
            ov, ov_err = engine_ms("ov_bench.py", model, inputs[n], args.threads, runs)
            row["lengths"][str(n)] = {"dynamic_ms": statistics.median(dyn), "static_ms": statistics.median(sta),
                                      "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
                                      "ort_ms": ort, "ov_ms": ov, "ort_error": ort_err, "ov_error": ov_err, "runs": runs,
                                      "max_abs_vs_ort": vs_ort}
            r = row["lengths"][str(n)]
            print(f"{name} {n:>4} tokens: dynamic {r['dynamic_ms']:.2f} ms, static {r['static_ms']:.2f} ms, dynamic/static "
                  f"{r['ratio']:.3f} (rounds {r['ratio_min']:.3f}-{r['ratio_max']:.3f}); ONNX Runtime "
                  f"{'-' if ort is None else f'{ort:.2f} ms'}, OpenVINO {'-' if ov is None else f'{ov:.2f} ms'}; "
                  f"max |onnxc - ORT| {vs_ort:.2e}", flush=True)
        row["seconds"] = time.time() - t0
        results.append(row)
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "results": results}
    with open(args.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
    with open(args.out + ".md", "w") as f:
        f.write(f"# A token count given at run time (`--dynamic seq={args.max}`) against builds for one length\n\n"
                f"{cpu}, {args.threads} threads, {report['date']}; `bench/dynamic_seq.py`. Models from "
                "`models/export_transformers.py --dynamic-seq` (random weights, opset 14, the token embeddings as input). "
                f"Medians of {args.rounds} alternating rounds of each build's `--bench`; ratio = the median of the rounds' "
                "dynamic/static ratios (their range in brackets). ONNX Runtime and OpenVINO (f32) run the same dynamic .onnx "
                "after the rounds. The dynamic build's outputs equal the static builds' bit for bit at every length; the "
                "last column is its largest distance from ONNX Runtime's output.\n\n"
                "| model | tokens | dynamic ms | static ms | dynamic/static | ONNX Runtime ms | OpenVINO ms | max abs vs ORT |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|\n")
        for row in results:
            for n, r in row["lengths"].items():
                f.write(f"| {row['model']} | {n} | {r['dynamic_ms']:.2f} | {r['static_ms']:.2f} | {r['ratio']:.3f} "
                        f"({r['ratio_min']:.3f}–{r['ratio_max']:.3f}) | {fmt(r['ort_ms'])} | {fmt(r['ov_ms'])} | "
                        f"{r['max_abs_vs_ort']:.1e} |\n")
    print(f"wrote {args.out}.json and {args.out}.md")


if __name__ == "__main__":
    main()
