#!/usr/bin/python3
"""bench/split.py — split models under load: the StarONNX figure for onnxc.

For each model: compile-model --split auto --emit so (with --device cuda: the head and the
tail's GPU version in CUDA, the CPU tail in C; without: both parts C, the CPU-only mode, where
the "device" is CPU threads and only the pipeline is exercised), then bench/loadgen under the
three tail placements (gpu-only, cpu-tail, eft) over a grid of Poisson arrival rates. Writes
RESULTS/split_MODE.json (every loadgen run and the compile's NAME.split.json), split_MODE.md
(per policy and rate: achieved throughput, p50/p99/max latency, CPU-tail share, batch size;
per model: the highest throughput each policy sustains with its max latency within the bound,
and eft's over gpu-only) and split_MODE.png (max latency against achieved throughput, one
curve per policy: the StarONNX figure). The bound is --bound-ms, default three times gpu-only's
max latency at the lowest rate.

Usage (after cmake --build build --target compile-model loadgen):
  /usr/bin/python3 bench/split.py                                  # CPU-only mode, googlenet and resnet50
  /usr/bin/python3 bench/split.py --device cuda --gpu h100 --rates 200,400,800,1200,1600,2000 --workers 16
Models come from models/out (models/export_zoo.py writes them).
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
POLICIES = ("gpu-only", "cpu-tail", "eft")


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def sustained(runs, bound_ms):
    """The highest achieved throughput among the rates whose max latency is within the bound."""
    ok = [r["achieved_per_s"] for r in runs if r["completed"] and r["latency_ms"]["max"] <= bound_ms and not r["rejected"]]
    return max(ok) if ok else 0.0


BOUNDS_MS = (25, 50, 75, 100, 150, 200, 300)


def sustained_at(res):
    """Sustained throughput per policy at each bound of BOUNDS_MS: the comparison does not hang
    on one chosen bound."""
    return {str(b): {p: sustained(res["policies"][p], b) for p in POLICIES} for b in BOUNDS_MS}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["googlenet", "resnet50"])
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="cuda: the head on the GPU (needs one)")
    ap.add_argument("--cuda-device", choices=["stream", "copy"], default="stream",
                    help="with --device cuda: loadgen's CUDA device (stream: the cut stays on the GPU) or the model "
                         "device (copy: each part copies through the host)")
    ap.add_argument("--cuda-graphs", action="store_true", help="with --cuda-device stream: replay the head from CUDA graphs")
    ap.add_argument("--gpu", default="h100", help="compile-model --gpu (the partitioner's roofline)")
    ap.add_argument("--rates", default="", help="requests/s, comma-separated (default: cpu 2,4,6,8,10,12; cuda 100..2000)")
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--workers", type=int, default=1, help="CPU tail workers (one thread each)")
    ap.add_argument("--max-batch", type=int, default=8)
    ap.add_argument("--window", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--bound-ms", type=float, default=0, help="max-latency bound for the sustained throughput")
    ap.add_argument("--gpu-profile", default="", metavar="FILE",
                    help="compile-model --gpu-profile: measured GPU times for the partitioner ({model} is replaced by the "
                         "model's name), e.g. from `NAME --profile-out FILE` of the model compiled with --device cuda --profile")
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--loadgen", default=os.path.join(ROOT, "build", "tests", "runtime", "loadgen"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "models", "out"), help="folder of NAME.onnx (default models/out)")
    ap.add_argument("--work", default="/tmp/onnxc-split-bench")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--out-name", default="", help="file stem of the results (default split_cpu_only or split_cuda)")
    ap.add_argument("--from-json", default="", metavar="FILE",
                    help="no runs: write FILE's .md and .png again from FILE (a split_MODE.json of an earlier run)")
    a = ap.parse_args()
    if a.from_json:
        out = json.load(open(a.from_json))
        base = a.from_json[:-len(".json")] if a.from_json.endswith(".json") else a.from_json
        write_md(out, base + ".md", a)
        plot(out, base + ".png")
        print(f"split.py: wrote {base}.md, .png")
        return
    rates = a.rates or ("2,4,6,8,10,12" if a.device == "cpu" else "100,200,400,800,1200,1600,2000")
    mode = "cuda" if a.device == "cuda" else "cpu_only"
    for f in (a.compiler, a.loadgen):
        if not os.access(f, os.X_OK):
            sys.exit(f"split.py: {f} is missing: cmake --build build --target compile-model loadgen")
    out = {"mode": mode, "machine": platform.node(), "cpus": os.cpu_count(), "rates": rates, "slots": a.slots,
           "workers": a.workers, "max_batch": a.max_batch, "window_s": a.window, "warmup_s": a.warmup,
           "cuda_graphs": a.cuda_graphs, "gpu": a.gpu, "date": time.strftime("%Y-%m-%d %H:%M"), "models": {},
           "gpu_profile": bool(a.gpu_profile)}
    if a.device == "cuda":
        try:
            out["gpu_name"] = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                             text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            sys.exit("split.py: --device cuda needs a GPU (nvidia-smi found none)")
    for m in a.models:
        src = os.path.join(a.zoo, m + ".onnx")
        if not os.path.exists(src):
            sys.exit(f"split.py: {src} is missing (python3 models/export_zoo.py --out models/out {m})")
        d = os.path.join(a.work, mode, m)
        run([a.compiler, src, "-o", d, "--quiet", "--split", "auto", "--emit", "so", "--device", a.device, "--gpu", a.gpu,
             "--cpu-workers", str(a.workers)] + (["--gpu-profile", a.gpu_profile.replace("{model}", m)] if a.gpu_profile else []))
        plan = json.load(open(os.path.join(d, m + ".split.json")))
        tail_dev = os.path.join(d, f"lib{m}_tail_gpu.so" if a.device == "cuda" else f"lib{m}_tail.so")
        res = {"split": plan, "policies": {}}
        for p in POLICIES:
            js = os.path.join(d, p + ".json")
            run([a.loadgen, "--head", os.path.join(d, f"lib{m}_head.so"), "--tail", os.path.join(d, f"lib{m}_tail.so"),
                 "--tail-device", tail_dev, "--policy", p, "--slots", str(a.slots), "--workers", str(a.workers),
                 "--max-batch", str(a.max_batch), "--rates", rates, "--window", str(a.window), "--warmup", str(a.warmup),
                 "--json", js] + (["--device", "cuda"] + (["--cuda-graphs"] if a.cuda_graphs else [])
                                  if a.device == "cuda" and a.cuda_device == "stream" else []))
            res["policies"][p] = json.load(open(js))["rates"]
        gpu_runs = res["policies"]["gpu-only"]
        bound = a.bound_ms or 3 * gpu_runs[0]["latency_ms"]["max"]
        res["bound_ms"] = bound
        res["sustained"] = {p: sustained(res["policies"][p], bound) for p in POLICIES}
        out["models"][m] = res
    os.makedirs(a.results, exist_ok=True)
    base = os.path.join(a.results, a.out_name or "split_" + mode)
    with open(base + ".json", "w") as f:
        json.dump(out, f, indent=1)
    write_md(out, base + ".md", a)
    plot(out, base + ".png")
    print(f"split.py: wrote {base}.md, .json, .png")


def write_md(out, path, a):
    what = ("GPU " + out.get("gpu_name", "")) if out["mode"] == "cuda" else \
        "CPU-only mode: head, device tail and CPU tails all on this machine's CPU cores (no GPU); the figures show the pipeline, not a GPU"
    L = [f"# Split models under load ({out['mode']})", "",
         f"{what}. Machine {out['machine']}, {out['cpus']} CPUs, {out['date']}. `bench/split.py` with {out['slots']} device slots, "
         f"{out['workers']} CPU tail worker(s), max batch {out['max_batch']}, a {out['window_s']} s window per rate.", ""]
    for m, r in out["models"].items():
        c = r["split"]["cut"]
        L += [f"## {m}", "",
              f"Cut after `{c['after']}` ({len(c['tensors'])} tensor(s), {c['cut_bytes'] / 1e3:.1f} KB); predicted G {c['G_ms']:.3f} ms, "
              f"Tg {c['Tg_ms']:.3f} ms, C {c['C_ms']:.3f} ms, gain x{c['gain']:.3f}" +
              (" (GPU times measured: --gpu-profile)." if out.get("gpu_profile") else " (GPU times from the roofline)."), "",
              "| policy | rate/s | achieved/s | p50 ms | p99 ms | max ms | CPU tails | mean batch |", "|---|---|---|---|---|---|---|---|"]
        for p in POLICIES:
            for x in r["policies"][p]:
                n = sum(x["batch_hist"].values())
                mean_b = sum(int(k) * v for k, v in x["batch_hist"].items()) / n if n else 0
                L.append(f"| {p} | {x['rate']:g} | {x['achieved_per_s']:.1f} | {x['latency_ms']['p50']:.2f} | {x['latency_ms']['p99']:.2f} | "
                         f"{x['latency_ms']['max']:.2f} | {100 * x['cpu_tail_share']:.0f}% | {mean_b:.2f} |")
        s = r["sustained"]
        ratio = s["eft"] / s["gpu-only"] if s["gpu-only"] else float("nan")
        L += ["", f"Sustained within a max latency of {r['bound_ms']:.1f} ms: " +
              ", ".join(f"{p} {s[p]:.1f}/s" for p in POLICIES) + f"; eft / gpu-only = {ratio:.2f}.", "",
              "Sustained throughput (requests/s: the highest achieved rate whose max latency stays within the bound, "
              "no request rejected) at other bounds:", "",
              "| max latency bound | " + " | ".join(POLICIES) + " | eft / gpu-only | cpu-tail / gpu-only |",
              "|---" * (len(POLICIES) + 3) + "|"]
        for b, v in sustained_at(r).items():
            def rel(p):
                return f"{v[p] / v['gpu-only']:.2f}" if v["gpu-only"] else "—"
            L.append(f"| {b} ms | " + " | ".join(f"{v[p]:.0f}" for p in POLICIES) + f" | {rel('eft')} | {rel('cpu-tail')} |")
        L.append("")
    cmd = "python3 bench/split.py " + (f"--device cuda --gpu {out.get('gpu', 'h100')} " if out["mode"] == "cuda" else "")
    cmd += "--cuda-graphs " if out.get("cuda_graphs") else ""
    cmd += "--gpu-profile FILE " if out.get("gpu_profile") else ""
    cmd += (f"--models {' '.join(out['models'])} --rates {out['rates']} --slots {out['slots']} --workers {out['workers']} "
            f"--max-batch {out['max_batch']} --window {out['window_s']:g}" + (f" --warmup {out['warmup_s']:g}" if "warmup_s" in out else ""))
    L += [f"Rerun: `{cmd}`" + (" (bench/gpu_run.sh runs it on a GPU machine; bench/README.md)." if out["mode"] == "cuda" else "."), ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


def plot(out, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("split.py: no matplotlib (Debian python3-matplotlib): no PNG")
        return
    ms = list(out["models"])
    fig, axes = plt.subplots(1, len(ms), figsize=(5.5 * len(ms), 4), squeeze=False)
    for ax, m in zip(axes[0], ms):
        r = out["models"][m]
        for p in POLICIES:
            xs = [x["achieved_per_s"] for x in r["policies"][p]]
            ys = [x["latency_ms"]["max"] for x in r["policies"][p]]
            ax.plot(xs, ys, marker="o", label=p)
        ax.axhline(r["bound_ms"], color="grey", linestyle=":", label="bound")
        ax.set_title(m)
        ax.set_xlabel("achieved throughput (requests/s)")
        ax.set_ylabel("max latency (ms)")
        ax.set_yscale("log")
        ax.legend()
    fig.suptitle("onnxc split models: max latency against throughput (" + out["mode"] + ")")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
