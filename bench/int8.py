#!/usr/bin/env python3
"""bench/int8.py — quantized (QDQ) zoo models: onnxc's builds of the QDQ model against its float
build of the same network, and ONNX Runtime and OpenVINO on the same QDQ model, in one run.

Usage: .venv/bin/python bench/int8.py [--models resnet50 mobilenet_v2] [--threads 1 2] [--rounds 5]
                                      [--work DIR] [--out bench/results/int8]

Per model: models/export_zoo.py exports the float model, models/quantize_zoo.py quantizes it
with ONNX Runtime's quantize_static (QDQ, per-channel int8 weights, uint8 activations). onnxc
builds: the float model; the QDQ model with --quantized float (each DQ -> Conv -> Q as a float
convolution of dequantized values, NCHWc); the QDQ model with --quantized integer (QLinearConv,
exact int32). In each of --rounds rounds each build runs its own --bench (about half a second of
runs) at each --threads count; the report gives each build's median over the rounds and the
ratios to the float build. ONNX Runtime (its QDQ fusions: int8 kernels) and OpenVINO (f32
inference precision hint; its low-precision transformations run the QDQ model's int8 parts in
int8 where the CPU allows) run the QDQ model after the rounds, the same threads. Writes OUT.json
and OUT.md. The outputs are compared in the tests (tests/quant), not here.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dynamic import ROOT, bench_ms, cpu_name, engine_ms, run  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["resnet50", "mobilenet_v2"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_int8"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "int8"))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cpu = cpu_name(("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"))
    results = []
    for name in args.models:
        t0 = time.time()
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"), "--out", args.work, name])
        run([sys.executable, os.path.join(ROOT, "models", "quantize_zoo.py"), "--zoo", args.work, name])
        inp = os.path.join(args.work, name + ".input.npy")
        builds = {}
        for key, model, flags in (("float", name, []), ("qdq_float", name + "_qdq", ["--quantized", "float"]),
                                  ("qdq_integer", name + "_qdq", ["--quantized", "integer"])):
            d = os.path.join(args.work, f"{name}_{key}")
            run([args.compiler, os.path.join(args.work, model + ".onnx"), "-o", d, "--name", name, "-q"] + flags)
            builds[key] = os.path.join(d, name)
        row = {"model": name, "rounds": args.rounds, "threads": {}}
        for t in args.threads:
            probe = bench_ms(builds["qdq_integer"], ["--input", inp], t, 2)
            runs = {k: max(3, min(200, int(500 / max(bench_ms(b, ["--input", inp], t, 2) if k != "qdq_integer" else probe, 1e-3))))
                    for k, b in builds.items()}
            ms = {k: [] for k in builds}
            for _ in range(args.rounds):
                for k, b in builds.items():
                    ms[k].append(bench_ms(b, ["--input", inp], t, runs[k]))
            med = {k: statistics.median(v) for k, v in ms.items()}
            qdq = os.path.join(args.work, name + "_qdq.onnx")
            ort, ort_err = engine_ms("ort_bench.py", qdq, inp, t, runs["float"])
            ov, ov_err = engine_ms("ov_bench.py", qdq, inp, t, runs["float"])
            r = {"float_ms": med["float"], "qdq_float_ms": med["qdq_float"], "qdq_integer_ms": med["qdq_integer"],
                 "ort_qdq_ms": ort, "ov_qdq_ms": ov, "ort_error": ort_err, "ov_error": ov_err, "runs": runs}
            row["threads"][str(t)] = r
            fmt = lambda v: "-" if v is None else f"{v:.2f} ms"  # noqa: E731
            print(f"{name} {t} thread(s): float {med['float']:.2f} ms; QDQ --quantized float {med['qdq_float']:.2f} ms "
                  f"({med['float'] / med['qdq_float']:.2f}x float's speed), integer {med['qdq_integer']:.2f} ms "
                  f"({med['float'] / med['qdq_integer']:.2f}x); ONNX Runtime QDQ {fmt(ort)}, OpenVINO QDQ {fmt(ov)}", flush=True)
        row["seconds"] = time.time() - t0
        results.append(row)
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "results": results}
    with open(args.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write("# Quantized (QDQ) models: onnxc's builds against its float build, ONNX Runtime and OpenVINO\n\n"
                f"{cpu}, {report['date']}; `.venv/bin/python bench/int8.py`. Medians of {args.rounds} rounds of each "
                "build's `--bench`; speed = float build's latency / this build's (above 1: faster than float). QDQ models "
                "from `models/quantize_zoo.py` (ONNX Runtime's quantize_static: per-channel int8 weights, uint8 "
                "activations). ONNX Runtime and OpenVINO run the same QDQ model.\n\n"
                "| model | threads | float ms | QDQ float path ms (speed) | QDQ integer path ms (speed) | ONNX Runtime QDQ ms "
                "| OpenVINO QDQ ms |\n|---|---:|---:|---:|---:|---:|---:|\n")
        for row in results:
            for t, r in row["threads"].items():
                fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
                f.write(f"| {row['model']} | {t} | {r['float_ms']:.2f} | {r['qdq_float_ms']:.2f} "
                        f"({r['float_ms'] / r['qdq_float_ms']:.2f}) | {r['qdq_integer_ms']:.2f} "
                        f"({r['float_ms'] / r['qdq_integer_ms']:.2f}) | {fmt(r['ort_qdq_ms'])} | {fmt(r['ov_qdq_ms'])} |\n")
    print(f"wrote {args.out}.json and {args.out}.md")


if __name__ == "__main__":
    main()
