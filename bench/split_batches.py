#!/usr/bin/python3
"""bench/split_batches.py — the split executor's CPU device with real batches against request by request.

For each model, exported with a symbolic batch (models/export_zoo.py --dynamic-batch), two
builds of the same parts (compile-model --split auto --emit so): one of one request
(--input-shape NAME=1,...), which the CPU device runs request by request, and one with
--dynamic batch=MAX, which it runs as one call per batch (the batch's items side by side, one
thread each). bench/loadgen drives each under open-loop Poisson arrivals (gpu-only policy: the
device slots run the whole model) over a grid of rates, in three set-ups on the machine's
threads T:
  static  1 slot  x T threads  each request's layers split across the threads
  static  T slots x 1 thread   T requests at a time, one thread each
  dynamic 1 slot  x T threads  a batch as one call, its items side by side
--check makes loadgen compare every completed request's output with its input run alone.
Writes RESULTS/split_batches.json (every loadgen run) and split_batches.md: per set-up and rate
the achieved throughput, p50/p99 latency and mean batch, and the latency-bounded throughput: the
highest achieved rate whose p99 latency stays within 50, 100, 200 and 500 ms (no rejections).
--from-json RESULTS/split_batches.json writes the .md again without runs.

Usage (after cmake --build build --target compile-model loadgen):
  /usr/bin/python3 bench/split_batches.py                     # mobilenet_v2 and resnet50, max batch 8
  /usr/bin/python3 bench/split_batches.py --models mobilenet_v2 --rates 20,60,100,140
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BOUNDS_MS = (50, 100, 200, 500)
DEFAULT_RATES = {"mobilenet_v2": "20,60,90,110,130,150,170", "resnet50": "2,4,6,8,10,12,14"}


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def sustained(rates, bound_ms):
    ok = [r["achieved_per_s"] for r in rates if r["completed"] and not r["rejected"] and not r["client_drops"]
          and r["latency_ms"]["p99"] <= bound_ms]
    return max(ok) if ok else 0.0


def mean_batch(r):
    n = sum(r["batch_hist"].values())
    return sum(int(b) * c for b, c in r["batch_hist"].items()) / n if n else 0.0


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["mobilenet_v2", "resnet50"])
    ap.add_argument("--max-batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="T above (default: the machine's CPUs)")
    ap.add_argument("--rates", default=None, help="requests/s, comma-separated (default per model)")
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--loadgen", default=os.path.join(ROOT, "build", "tests", "runtime", "loadgen"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "models", "out"), help="where NAME_bN_dyn.onnx is or is exported to")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_split_batches"))
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--from-json", default=None, help="write the .md from this split_batches.json, without runs")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            out = json.load(f)
        write_md(out, a.results, out.get("command", ""))
        return
    for f in (a.compiler, a.loadgen):
        if not os.path.exists(f):
            sys.exit(f"split_batches.py: {f} is missing: cmake --build build --target compile-model loadgen")
    T = a.threads
    setups = [("static", 1, T), ("static", T, 1), ("dynamic", 1, T)]
    out = {"cpu": cpu_name(), "threads": T, "max_batch": a.max_batch, "window_s": a.window, "models": {},
           "command": "/usr/bin/python3 bench/split_batches.py " + " ".join(sys.argv[1:])}
    t0 = time.time()
    for m in a.models:
        name = f"{m}_b{a.max_batch}_dyn"
        src = os.path.join(a.zoo, name + ".onnx")
        if not os.path.exists(src):
            run([sys.executable, os.path.join(ROOT, "models", "export_zoo.py"), "--out", a.zoo, "--batch", str(a.max_batch),
                 "--dynamic-batch", m])
        builds = {}
        for kind in ("static", "dynamic"):
            d = os.path.join(a.work, m, kind)
            os.makedirs(d, exist_ok=True)
            size = ["--dynamic", f"batch={a.max_batch}"] if kind == "dynamic" else ["--input-shape", "input=1,3,224,224"]
            run([a.compiler, src, "-o", d, "--name", m, "--split", "auto", "--emit", "so", "-q"] + size)
            with open(os.path.join(d, f"{m}.split.json")) as f:
                builds[kind] = (d, json.load(f))
        res = {"cut": builds["dynamic"][1].get("chosen", {}), "setups": {}}
        rates = a.rates or DEFAULT_RATES.get(m, "10,20,40,80")
        for kind, slots, threads in setups:
            d = builds[kind][0]
            key = f"{kind} {slots}x{threads}"
            js = os.path.join(d, f"loadgen_{slots}x{threads}.json")
            run([a.loadgen, "--head", os.path.join(d, f"lib{m}_head.so"), "--tail", os.path.join(d, f"lib{m}_tail.so"),
                 "--policy", "gpu-only", "--workers", "0", "--slots", str(slots), "--threads", str(threads),
                 "--max-batch", str(a.max_batch), "--rates", rates, "--warmup", str(a.warmup), "--window", str(a.window),
                 "--check", "--json", js])
            with open(js) as f:
                res["setups"][key] = json.load(f)
        out["models"][m] = res
    out["seconds"] = time.time() - t0
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "split_batches.json"), "w") as f:
        json.dump(out, f, indent=1)
    write_md(out, a.results, out["command"])


def write_md(out, results, command):
    T = out["threads"]
    lines = [f"# The split executor's CPU device: real batches against request by request",
             "",
             f"CPU: {out['cpu']}, {T} threads; max batch {out['max_batch']}, max queue delay 1 ms; gpu-only policy "
             f"(the device slots run head and tail); open-loop Poisson arrivals, {out['window_s']:g} s per rate. "
             f"Every completed request's output equal to its input run alone (loadgen --check). "
             f"Command: `{command.strip()}`.",
             ""]
    for m, res in out["models"].items():
        lines += [f"## {m}", "", "Latency-bounded throughput (requests/s whose p99 latency stays within the bound; "
                  "in brackets against the first set-up):", "",
                  "| set-up | " + " | ".join(f"p99 <= {b} ms" for b in BOUNDS_MS) + " |",
                  "|---|" + "---|" * len(BOUNDS_MS)]
        base = None
        for key, r in res["setups"].items():
            vals = [sustained(r["rates"], b) for b in BOUNDS_MS]
            first = base is None
            if first:
                base = vals
            lines.append(f"| {key} | " + " | ".join(
                f"{v:.1f}" + (f" ({v / b0:.2f}x)" if b0 and not first else "") for v, b0 in zip(vals, base)) + " |")
        lines += ["", "| set-up | rate/s | achieved/s | p50 ms | p99 ms | mean batch |", "|---|---|---|---|---|---|"]
        for key, r in res["setups"].items():
            for x in r["rates"]:
                lines.append(f"| {key} | {x['rate']:g} | {x['achieved_per_s']:.1f} | {x['latency_ms']['p50']:.1f} | "
                             f"{x['latency_ms']['p99']:.1f} | {mean_batch(x):.2f} |")
        lines.append("")
    with open(os.path.join(results, "split_batches.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

if __name__ == "__main__":
    main()
