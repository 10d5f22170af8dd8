#!/usr/bin/env python3
"""bench/int8_dynamic.py — transformers quantized as quantize_dynamic does: onnxc's
--quantize int8-dynamic build against its float build, ONNX Runtime and OpenVINO, in one run.

Usage: .venv/bin/python bench/int8_dynamic.py [--models distilbert vit_b_16] [--threads 1 2] [--rounds 5]
                                              [--work DIR] [--out bench/results/int8_dynamic] [--no-chart]
       .venv/bin/python bench/int8_dynamic.py --from-json bench/results/int8_dynamic.json   (no runs: OUT.md, OUT.png)

Per model: the float model from models/export_transformers.py (distilbert, bert_base,
gpt2_small, whisper_tiny_enc: 128 tokens) or models/export_zoo.py (vit_b_16: 197 tokens);
ONNX Runtime's quantize_dynamic of its MatMuls and Gemms (int8 weights per tensor: its defaults,
the model onnxc's --quantize int8-dynamic writes for itself, output for output). onnxc builds the
float model twice: as it is, and with --quantize int8-dynamic. Each of --rounds rounds runs, at
each --threads count and one after the other: both onnxc builds (their own --bench, about half a
second of runs), ONNX Runtime on the quantized and on the float model and OpenVINO on both
(bench/ort_bench.py, bench/ov_bench.py: the same number of runs as onnxc's float build; OpenVINO
with its f32 precision hint, so its DynamicQuantizeLinear graph runs as written). The report gives
each one's median over the rounds, onnxc int8's speed against its float build and its latency
against the engines'. Writes OUT.json, OUT.md and OUT.png. The outputs are compared in the tests
(tests/quant/run_dynamic_quant.py), not here.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dynamic import ROOT, bench_ms, cpu_name, engine_ms, report_args, report_first, run  # noqa: E402

TRANSFORMERS = ("distilbert", "bert_base", "gpt2_small", "whisper_tiny_enc")
KEYS = (("onnxc_int8", "onnxc --quantize int8-dynamic", "C3", None), ("onnxc_float", "onnxc float", "C0", None),
        ("ort_int8", "ONNX Runtime, quantize_dynamic model", "C1", None), ("ort_float", "ONNX Runtime float", "C1", "//"),
        ("ov_int8", "OpenVINO, quantize_dynamic model", "C2", None), ("ov_float", "OpenVINO float (f32)", "C2", "//"))


def export(name, work):
    if name in TRANSFORMERS:
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_transformers.py"), "--out", work, name])
    else:
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"), "--out", work, name])
    fp, qp = os.path.join(work, name + ".onnx"), os.path.join(work, name + "_int8_dynamic.onnx")
    if not os.path.exists(qp):
        from onnxruntime.quantization import QuantType, quantize_dynamic
        quantize_dynamic(fp, qp, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Gemm"])
    return fp, qp, os.path.join(work, name + ".input.npy")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["distilbert", "vit_b_16"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    report_args(ap, "bench_int8_dynamic", "int8_dynamic")
    args = ap.parse_args()
    if report_first(args, "int8_dynamic.py", write_md, write_chart):
        return
    os.makedirs(args.work, exist_ok=True)
    cpu = cpu_name(("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"))
    results = []
    for name in args.models:
        t0 = time.time()
        fp, qp, inp = export(name, args.work)
        builds = {}
        for key, flags in (("onnxc_float", []), ("onnxc_int8", ["--quantize", "int8-dynamic"])):
            d = os.path.join(args.work, f"{name}_{key}")
            run([args.compiler, fp, "-o", d, "--name", name, "-q"] + flags)
            builds[key] = os.path.join(d, name)
        row = {"model": name, "rounds": args.rounds, "threads": {}}
        for t in args.threads:
            runs = max(3, min(50, int(500 / max(bench_ms(builds["onnxc_float"], ["--input", inp], t, 2), 1e-3))))
            ms = {k: [] for k, *_ in KEYS}
            errors = {}
            for _ in range(args.rounds):
                for k, b in builds.items():
                    ms[k].append(bench_ms(b, ["--input", inp], t, runs))
                for k, script, model in (("ort_int8", "ort_bench.py", qp), ("ort_float", "ort_bench.py", fp),
                                         ("ov_int8", "ov_bench.py", qp), ("ov_float", "ov_bench.py", fp)):
                    v, err = engine_ms(script, model, inp, t, runs)
                    if v is None:
                        errors[k] = " ".join(err)  # e.g. OpenVINO missing: bench/requirements.txt, which bench/run.sh installs
                    else:
                        ms[k].append(v)
            r = {k + "_ms": (statistics.median(v) if v else None) for k, v in ms.items()}
            r.update({"runs": runs, "errors": errors, "spread": {k: [min(v), max(v)] for k, v in ms.items() if v}})
            row["threads"][str(t)] = r
            fmt = lambda v: "-" if v is None else f"{v:.2f} ms"  # noqa: E731
            print(f"{name} {t} thread(s): onnxc int8 {fmt(r['onnxc_int8_ms'])} ({r['onnxc_float_ms'] / r['onnxc_int8_ms']:.2f}x "
                  f"its float build's speed, float {fmt(r['onnxc_float_ms'])}); ONNX Runtime int8 {fmt(r['ort_int8_ms'])}, "
                  f"float {fmt(r['ort_float_ms'])}; OpenVINO int8 model {fmt(r['ov_int8_ms'])}, float {fmt(r['ov_float_ms'])}",
                  flush=True)
            for k, e in errors.items():
                print(f"  {k} did not run: {e}", flush=True)
        row["seconds"] = time.time() - t0
        results.append(row)
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": args.rounds, "results": results}
    with open(args.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    write_md(report, args.out + ".md")
    if not args.no_chart:
        write_chart(report, args.out + ".png")
    print(f"wrote {args.out}.json, {args.out}.md" + ("" if args.no_chart else f" and {args.out}.png"))


def write_md(report, path):
    results = report["results"]
    chart = os.path.basename(os.path.splitext(path)[0]) + ".png"
    fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
    ratio = lambda a, b: "–" if a is None or b is None else f"{a / b:.2f}"  # noqa: E731
    with open(path, "w") as f:
        f.write("# Transformers quantized as quantize_dynamic does: onnxc --quantize int8-dynamic against its float build, "
                "ONNX Runtime and OpenVINO\n\n"
                f"{report['cpu']}, {report['date']}; `.venv/bin/python bench/int8_dynamic.py`. Medians of {report['rounds']} "
                "rounds, each running every build and engine once in turn (onnxc's `--bench`, `bench/ort_bench.py`, "
                "`bench/ov_bench.py`, the same number of runs), ms. The int8 model is ONNX Runtime's quantize_dynamic of "
                "the float model's MatMuls and Gemms (int8 weights per tensor), the model onnxc's --quantize int8-dynamic "
                "writes for itself; OpenVINO runs it with its f32 precision hint.\n\n"
                "| model | threads | onnxc int8 | onnxc float | int8 speed vs own float | ONNX Runtime int8 | ONNX Runtime float "
                "| OpenVINO int8 model | OpenVINO float | onnxc int8 / ORT int8 | onnxc int8 / OV float |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        for row in results:
            for t, r in row["threads"].items():
                f.write(f"| {row['model']} | {t} | {fmt(r['onnxc_int8_ms'])} | {fmt(r['onnxc_float_ms'])} | "
                        f"{ratio(r['onnxc_float_ms'], r['onnxc_int8_ms'])}x | {fmt(r['ort_int8_ms'])} | {fmt(r['ort_float_ms'])} | "
                        f"{fmt(r['ov_int8_ms'])} | {fmt(r['ov_float_ms'])} | {ratio(r['onnxc_int8_ms'], r['ort_int8_ms'])} | "
                        f"{ratio(r['onnxc_int8_ms'], r['ov_float_ms'])} |\n")
        f.write("\nSpread (min–max of the rounds, ms):\n\n")
        for row in results:
            for t, r in row["threads"].items():
                parts = [f"{k} {lo:.1f}–{hi:.1f}" for k, (lo, hi) in r.get("spread", {}).items()]
                f.write(f"- {row['model']}, {t} thread{'s' if t != '1' else ''}: {'; '.join(parts)}\n")
        f.write(f"\n![latency per build and engine]({chart})\n")


def write_chart(report, path):
    """Each build's and engine's latency per model and thread count."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cols = [(row["model"], t, r) for row in report["results"] for t, r in row["threads"].items()]
    labels = [f"{m}\n{t} thread{'s' if t != '1' else ''}" for m, t, _ in cols]
    fig, ax = plt.subplots(figsize=(max(7, 2.2 * len(cols)), 4.8))
    w = 0.8 / len(KEYS)
    for i, (key, lab, col, hatch) in enumerate(KEYS):
        ys = [r.get(key + "_ms") for _, _, r in cols]
        xs = [k + (i - (len(KEYS) - 1) / 2) * w for k in range(len(cols))]
        b = ax.bar(xs, [0 if y is None else y for y in ys], w, label=lab, color=col, hatch=hatch,
                   edgecolor="white" if hatch else None, linewidth=0)
        ax.bar_label(b, labels=["" if y is None else "%.1f" % y for y in ys], fontsize=7, rotation=90)
    ax.set_xticks(range(len(cols)), labels, fontsize=8)
    ax.set_ylabel("latency, ms (median)")
    ax.margins(y=0.15)
    ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"quantize_dynamic transformers — {report['cpu']}, {report['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
