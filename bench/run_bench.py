#!/usr/bin/python3
"""bench/run_bench.py — latency of onnxc-generated binaries against ONNX Runtime, same run.

For each model: compile with compile-model (once per --layout), run the binary's --bench,
run ONNX Runtime (bench/ort_bench.js, CPU, same thread count) on the same model, and print
medians and ratios (onnxc / ORT: below 1 is faster than ONNX Runtime). Runs alternate
between the contenders, ROUNDS times, and the table shows the median of the per-round
medians, because the machine is shared and noisy.

    /usr/bin/python3 bench/run_bench.py --compiler build/compile-model \\
        --models models/out/resnet50.onnx models/out/mobilenet_v2.onnx --threads 2
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def input_specs(model):
    import onnx
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    specs = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        specs.append(f"{i.name}={','.join(str(d) for d in dims)}")
    return specs


def onnxc_latency(binary, runs, threads):
    out = subprocess.run([binary, "--bench", str(runs), "--threads", str(threads), "--quiet"],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        sys.exit(f"bench: no latency in the output of {binary}:\n{out}")
    return float(m.group(1))


def ort_latency(model, runs, threads, specs, ort_path):
    env = dict(os.environ, ORT_NODE_PATH=ort_path)
    out = subprocess.run(["node", os.path.join(HERE, "ort_bench.js"), model, str(runs), str(threads)] + specs,
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])["median_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--layouts", nargs="+", default=["nchw", "nchwc"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10, help="runs per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="/tmp/onnxc-bench")
    ap.add_argument("--ort", default=os.path.join(HERE, "node_modules", "onnxruntime-node"),
                    help="path of the onnxruntime-node package (npm install --ignore-scripts onnxruntime-node@1.30.0)")
    ap.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime (no ratios)")
    a = ap.parse_args()
    rows = []
    for model in a.models:
        name = os.path.splitext(os.path.basename(model))[0]
        binaries = {}
        for lay in a.layouts:
            out = os.path.join(a.work, f"{name}_{lay}")
            subprocess.run([a.compiler, model, "-o", out, "--name", name, "--layout", lay, "--quiet"], check=True)
            binaries[lay] = os.path.join(out, name)
        specs = input_specs(model)
        times = {lay: [] for lay in a.layouts}
        times["ort"] = []
        for _ in range(a.rounds):
            for lay in a.layouts:
                times[lay].append(onnxc_latency(binaries[lay], a.runs, a.threads))
            if not a.no_ort:
                times["ort"].append(ort_latency(model, a.runs, a.threads, specs, a.ort))
        med = {k: statistics.median(v) for k, v in times.items() if v}
        rows.append((name, med))
    cols = a.layouts + ([] if a.no_ort else ["ort"])
    print(f"threads {a.threads}, {a.rounds} rounds x {a.runs} runs, median of round medians (ms)")
    head = "| model | " + " | ".join(f"onnxc {c}" if c != "ort" else "ONNX Runtime" for c in cols)
    if not a.no_ort:
        head += " | " + " | ".join(f"{c} / ORT" for c in a.layouts)
    print(head + " |")
    print("|" + "---|" * (1 + len(cols) + (0 if a.no_ort else len(a.layouts))))
    for name, med in rows:
        line = f"| {name} | " + " | ".join(f"{med[c]:.1f}" for c in cols)
        if not a.no_ort:
            line += " | " + " | ".join(f"{med[c] / med['ort']:.2f}" for c in a.layouts)
        print(line + " |")


if __name__ == "__main__":
    main()
