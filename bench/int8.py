#!/usr/bin/env python3
"""bench/int8.py — quantized (QDQ) zoo models: onnxc's builds of the QDQ model against its float
build of the same network, and ONNX Runtime and OpenVINO on the same QDQ model, in one run.

Usage: .venv/bin/python bench/int8.py [--models resnet50 mobilenet_v2 googlenet efficientnet_b0] [--threads 1 2] [--rounds 5]
                                      [--work DIR] [--out bench/results/int8] [--no-chart]
       .venv/bin/python bench/int8.py --from-json bench/results/int8.json   (no runs: OUT.md and OUT.png again)

Per model: models/export_zoo.py exports the float model, models/quantize_zoo.py quantizes it
with ONNX Runtime's quantize_static (QDQ, per-channel int8 weights, uint8 activations). onnxc
builds: the float model; the QDQ model with --quantized float (each DQ -> Conv -> Q as a float
convolution of dequantized values, NCHWc); the QDQ model with --quantized integer (QLinearConv,
exact int32). In each of --rounds rounds each build runs its own --bench (about half a second of
runs) at each --threads count; the report gives each build's median over the rounds and the
ratios to the float build. ONNX Runtime (its QDQ fusions: int8 kernels) and OpenVINO (f32
inference precision hint; its low-precision transformations run the QDQ model's int8 parts in
int8 where the CPU allows) run the QDQ model after the rounds, the same threads; ONNX Runtime also
runs the model's uint8 twin (weights and zero points plus 128: the same model), whose uint8 x uint8
kernels are exact on every CPU, where its uint8 x int8 ones on CPUs without VNNI multiply with
vpmaddubsw, whose int16 pair sums saturate (tests/quant/run_qdq_models.py). Writes OUT.json,
OUT.md and OUT.png (latency per build and engine, and each one's speed against onnxc's float
build; matplotlib: Debian's python3-matplotlib, which bench/run.sh installs). The outputs are
compared in the tests (tests/quant), not here.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dynamic import ROOT, bench_ms, cpu_name, engine_ms, report_args, report_first, run  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "quant"))
from run_qdq_models import u8_twin  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["resnet50", "mobilenet_v2", "googlenet", "efficientnet_b0"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    report_args(ap, "bench_int8", "int8")
    args = ap.parse_args()
    if report_first(args, "int8.py", write_md, write_chart):
        return
    os.makedirs(args.work, exist_ok=True)
    cpu = cpu_name(("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"))
    results = []
    for name in args.models:
        t0 = time.time()
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"), "--out", args.work, name])
        run([sys.executable, os.path.join(ROOT, "models", "quantize_zoo.py"), "--zoo", args.work, name])
        twin = os.path.join(args.work, name + "_qdq_u8_twin.onnx")
        u8_twin(os.path.join(args.work, name + "_qdq.onnx"), twin)
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
            ort_twin, _ = engine_ms("ort_bench.py", twin, inp, t, runs["float"])
            ov, ov_err = engine_ms("ov_bench.py", qdq, inp, t, runs["float"])
            r = {"float_ms": med["float"], "qdq_float_ms": med["qdq_float"], "qdq_integer_ms": med["qdq_integer"],
                 "ort_qdq_ms": ort, "ort_twin_ms": ort_twin, "ov_qdq_ms": ov, "ort_error": ort_err, "ov_error": ov_err, "runs": runs}
            row["threads"][str(t)] = r
            fmt = lambda v: "-" if v is None else f"{v:.2f} ms"  # noqa: E731
            print(f"{name} {t} thread(s): float {med['float']:.2f} ms; QDQ --quantized float {med['qdq_float']:.2f} ms "
                  f"({med['float'] / med['qdq_float']:.2f}x float's speed), integer {med['qdq_integer']:.2f} ms "
                  f"({med['float'] / med['qdq_integer']:.2f}x); ONNX Runtime QDQ {fmt(ort)} (uint8 twin {fmt(ort_twin)}), "
                  f"OpenVINO QDQ {fmt(ov)}", flush=True)
            for engine, err in (("ONNX Runtime", ort_err), ("OpenVINO", ov_err)):
                if err:  # e.g. OpenVINO not installed: bench/requirements.txt, which bench/run.sh installs
                    print(f"  {engine} did not run: {' '.join(err)}", flush=True)
        row["seconds"] = time.time() - t0
        results.append(row)
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": args.rounds,
              "results": results}
    with open(args.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    write_md(report, args.out + ".md")
    if not args.no_chart:
        write_chart(report, args.out + ".png")
    print(f"wrote {args.out}.json, {args.out}.md" + ("" if args.no_chart else f" and {args.out}.png"))


BUILDS = (("float_ms", "onnxc float model", "C0", None), ("qdq_float_ms", "onnxc QDQ, --quantized float", "C0", "//"),
          ("qdq_integer_ms", "onnxc QDQ, --quantized integer", "C3", None), ("ort_qdq_ms", "ONNX Runtime QDQ", "C1", None),
          ("ort_twin_ms", "ONNX Runtime QDQ, uint8 twin (exact)", "C1", "//"), ("ov_qdq_ms", "OpenVINO QDQ", "C2", None))


def write_md(report, path):
    results = report["results"]
    rounds = report.get("rounds") or (results[0].get("rounds") if results else "?")
    chart = os.path.basename(os.path.splitext(path)[0]) + ".png"
    with open(path, "w") as f:
        f.write("# Quantized (QDQ) models: onnxc's builds against its float build, ONNX Runtime and OpenVINO\n\n"
                f"{report['cpu']}, {report['date']}; `.venv/bin/python bench/int8.py`. Medians of {rounds} rounds of each "
                "build's `--bench`; speed = float build's latency / this build's (above 1: faster than float). QDQ models "
                "from `models/quantize_zoo.py` (ONNX Runtime's quantize_static: per-channel int8 weights, uint8 "
                "activations). ONNX Runtime and OpenVINO run the same QDQ model; ONNX Runtime also its uint8 twin "
                "(weights and zero points plus 128: the same model), whose uint8 x uint8 kernels are exact, where on a "
                "CPU without VNNI its uint8 x int8 ones saturate int16 pair sums (onnxc's outputs equal the twin's).\n\n"
                "| model | threads | float ms | QDQ float path ms (speed) | QDQ integer path ms (speed) | ONNX Runtime QDQ ms "
                "| ONNX Runtime uint8 twin ms | OpenVINO QDQ ms |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
        for row in results:
            for t, r in row["threads"].items():
                fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
                f.write(f"| {row['model']} | {t} | {r['float_ms']:.2f} | {r['qdq_float_ms']:.2f} "
                        f"({r['float_ms'] / r['qdq_float_ms']:.2f}) | {r['qdq_integer_ms']:.2f} "
                        f"({r['float_ms'] / r['qdq_integer_ms']:.2f}) | {fmt(r['ort_qdq_ms'])} | {fmt(r.get('ort_twin_ms'))} "
                        f"| {fmt(r['ov_qdq_ms'])} |\n")
        f.write(f"\n![latency and speed against the float build]({chart})\n")


def write_chart(report, path):
    """Left: each build's and engine's latency per model and thread count; right: its speed against
    onnxc's float build of the same network (above 1: faster than float)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = [(row["model"], t, r) for row in report["results"] for t, r in row["threads"].items()]
    labels = [f"{m}\n{t} thread{'s' if t != '1' else ''}" for m, t, _ in cols]
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8))
    w = 0.8 / len(BUILDS)
    for ax, speed in ((axes[0], False), (axes[1], True)):
        for i, (key, lab, col, hatch) in enumerate(BUILDS):
            ys = [r.get(key) for _, _, r in cols]
            if speed:
                ys = [None if y is None else r["float_ms"] / y for y, (_, _, r) in zip(ys, cols)]
            xs = [k + (i - (len(BUILDS) - 1) / 2) * w for k in range(len(cols))]
            b = ax.bar(xs, [0 if y is None else y for y in ys], w, label=lab, color=col, hatch=hatch,
                       edgecolor="white" if hatch else None, linewidth=0)
            ax.bar_label(b, labels=["" if y is None else ("%.2f" if speed else "%.1f") % y for y in ys], fontsize=7,
                         rotation=90)
        ax.set_xticks(range(len(cols)), labels, fontsize=8)
        if speed:
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_ylabel("speed against onnxc's float build (×)")
        else:
            ax.set_ylabel("latency, ms (median)")
        ax.margins(y=0.15)
    axes[0].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"int8 (QDQ) models — {report['cpu']}, {report['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
