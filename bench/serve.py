#!/usr/bin/env python3
"""bench/serve.py — compile-model --emit ray under load: what Ray Serve costs and what it buys.

A model (default mobilenet_v2 exported with a symbolic batch) built with --emit ray --dynamic
batch=8, and a trivial one (Relu of f32[b,16], written here) that measures Ray Serve's own cost
per request. Open-loop Poisson arrivals (asyncio; arrival times fixed in advance, each request
sent at its time whatever the others do) for a window per rate, against:
  direct    the library through NAME.py in this process: T worker threads, one instance each
            (num_threads 1), requests queued in arrival order: no HTTP, no batching
  executor  the built-in C executor (bench/loadgen on --split auto --dynamic parts, the CPU
            device: 1 slot of T threads, a batch of requests as one call)
  ray xR    the Ray Serve app (HTTP POST, .npy bodies) with R replicas of T/R threads each on a
            one-node cluster of this machine, batches of up to 8 requests (2 ms wait); the load
            generator, the HTTP proxy and the replicas share the machine
Per set-up and rate: achieved throughput and p50/p99 latency; the latency-bounded throughput is
the highest achieved rate whose p99 stays within 50, 100 and 200 ms. For the trivial model the
p50 at a low rate is the per-request cost of each path. Where that cost goes: with one replica,
each Ray process's CPU time (/proc) over a window of requests at 20/s, less its CPU over an idle
window as long, per request, grouped (replica, HTTP proxy, controller, GCS, raylet, agents,
the load generator). Writes RESULTS/serve.json and serve.md.

Usage (after cmake --build build --target compile-model loadgen; Ray from requirements-serve.txt):
  .venv/bin/python bench/serve.py                       # ~10 min on 2 cores
  .venv/bin/python bench/serve.py --rates 20,60,100 --window 3
"""
import argparse
import asyncio
import concurrent.futures
import io
import json
import os
import queue
import subprocess
import sys
import threading
import time

import numpy as np

from split_batches import cpu_name

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BOUNDS_MS = (50, 100, 200)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def arrivals(rate, window, seed):
    rng = np.random.default_rng(seed)
    t, out = 0.0, []
    while True:
        t += rng.exponential(1.0 / rate)
        if t >= window:
            return out
        out.append(t)


def summary(rate, window, lat, done, errors):
    """lat: seconds from arrival to answer; done: answer times from the start (achieved counts
    the answers inside the window, not the backlog served after it)."""
    lat = np.array(lat) * 1e3 if lat else np.array([np.inf])
    return {"rate": rate, "completed": int(np.isfinite(lat).sum()), "errors": errors,
            "achieved_per_s": float(sum(1 for t in done if t <= window) / window), "p50_ms": float(np.percentile(lat, 50)),
            "p99_ms": float(np.percentile(lat, 99))}


def direct(wrapper, x, rate, window, workers, seed):
    """Requests into a FIFO served by `workers` threads, one instance each."""
    q = queue.Queue()
    lat, done, lock = [], [], threading.Lock()

    def serve_loop(m):
        while True:
            t_sub = q.get()
            if t_sub is None:
                return
            m.run(x)
            t_end = time.perf_counter()
            with lock:
                lat.append(t_end - t_sub)
                done.append(t_end - t0)

    models = [wrapper.Model(num_threads=1) for _ in range(workers)]
    threads = [threading.Thread(target=serve_loop, args=(m,)) for m in models]
    t0 = time.perf_counter() + 0.05
    for t in threads:
        t.start()
    for a in arrivals(rate, window, seed):
        d = t0 + a - time.perf_counter()
        if d > 0:
            time.sleep(d)
        q.put(time.perf_counter())
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()
    for m in models:
        m.close()
    return summary(rate, window, lat, done, 0)


async def http_load(url, body, rate, window, seed):
    import aiohttp
    lat, done, errors = [], [], 0
    conn = aiohttp.TCPConnector(limit=256)
    async with aiohttp.ClientSession(connector=conn) as s:
        async def one(t_at):
            nonlocal errors
            d = t_at - time.perf_counter()
            if d > 0:
                await asyncio.sleep(d)
            t_sub = time.perf_counter()
            try:
                async with s.post(url, data=body, timeout=aiohttp.ClientTimeout(total=60)) as r:
                    await r.read()
                    if r.status != 200:
                        errors += 1
                        return
            except Exception:
                errors += 1
                return
            t_end = time.perf_counter()
            lat.append(t_end - t_sub)
            done.append(t_end - t0)

        t0 = time.perf_counter() + 0.2
        await asyncio.gather(*[one(t0 + a) for a in arrivals(rate, window, seed)])
    return summary(rate, window, lat, done, errors)


# Ray's processes by their titles (setproctitle: "ray::ServeReplica:...", "ray::ProxyActor"...)
# or command lines; this process is the load generator.
CPU_GROUPS = (("ServeReplica", "replica"), ("ProxyActor", "HTTP proxy"), ("ServeController", "controller"),
              ("gcs_server", "GCS"), ("raylet", "raylet"), ("dashboard", "agents and monitors"),
              ("log_monitor", "agents and monitors"), ("monitor.py", "agents and monitors"),
              ("runtime_env", "agents and monitors"), ("ray::", "other Ray workers"), ("default_worker", "other Ray workers"))


def cpu_by_process():
    """{pid: (group, CPU seconds used so far, user + system)} of this machine's processes."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()  # from the state on: utime, stime are the 12th and 13th
        group = "load generator" if int(pid) == os.getpid() else next((g for key, g in CPU_GROUPS if key in cmd), None)
        if group:
            out[int(pid)] = (group, (int(fields[11]) + int(fields[12])) / tick)
    return out


def cpu_delta(before, after):
    """CPU seconds per group between two cpu_by_process() snapshots (processes present in both)."""
    out = {}
    for pid, (group, t) in after.items():
        if pid in before:
            out[group] = out.get(group, 0.0) + t - before[pid][1]
    return out


def cpu_per_request(url, body, rate, window, seed):
    """CPU ms per request of each of Ray's processes and the load generator: the CPU used over a
    window of requests at `rate`, less that of an idle window as long (Ray's own background work)."""
    snap = cpu_by_process()
    time.sleep(window)
    idle = cpu_delta(snap, cpu_by_process())
    snap = cpu_by_process()
    r = asyncio.run(http_load(url, body, rate, window, seed))
    busy = cpu_delta(snap, cpu_by_process())
    n = max(1, r["completed"])
    groups = sorted(set(idle) | set(busy))
    return {"requests": r["completed"], "p50_ms": r["p50_ms"], "idle_cpu_ms_per_s": {g: 1e3 * idle.get(g, 0.0) / window for g in groups},
            "cpu_ms_per_request": {g: 1e3 * (busy.get(g, 0.0) - idle.get(g, 0.0)) / n for g in groups}}


def sustained(rates, bound):
    ok = [r["achieved_per_s"] for r in rates if r["completed"] and not r["errors"] and r["p99_ms"] <= bound]
    return max(ok) if ok else 0.0


def trivial_model(path):
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 16])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "trivial", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="mobilenet_v2")
    ap.add_argument("--rates", default="20,50,80,110,140")
    ap.add_argument("--window", type=float, default=3.0)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--loadgen", default=os.path.join(ROOT, "build", "tests", "runtime", "loadgen"))
    ap.add_argument("--zoo", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_serve"))
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    import ray
    from ray import serve
    T = a.threads
    rates = [float(r) for r in a.rates.split(",")]
    name = f"{a.model}_b8_dyn"
    src = os.path.join(a.zoo, name + ".onnx")
    if not os.path.exists(src):
        run([sys.executable, os.path.join(ROOT, "models", "export_zoo.py"), "--out", a.zoo, "--batch", "8", "--dynamic-batch", a.model])
    os.makedirs(a.work, exist_ok=True)
    triv = os.path.join(a.work, "trivial.onnx")
    trivial_model(triv)
    builds = {}
    for nm, path in ((a.model, src), ("trivial", triv)):
        d = os.path.join(a.work, nm)
        run([a.compiler, path, "-o", d, "--name", nm, "--emit", "ray", "--dynamic", "batch=8", "--threads", "1", "-q"])
        sys.path.insert(0, d)
        builds[nm] = d
    split_dir = os.path.join(a.work, a.model + "_split")
    run([a.compiler, src, "-o", split_dir, "--name", a.model, "--split", "auto", "--dynamic", "batch=8", "--emit", "so", "-q"])
    x_model = np.load(os.path.join(a.zoo, name + ".input.npy"))[:1]
    inputs = {a.model: x_model, "trivial": np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)}
    out = {"cpu": cpu_name(), "threads": T,
           "window_s": a.window, "rates": rates, "command": "bench/serve.py " + " ".join(sys.argv[1:]), "results": {}}
    res = out["results"]
    cpu = out["cpu_per_request"] = {}

    def record(key, r):
        res.setdefault(key, []).append(r)
        print(f"{key:28s} rate {r['rate']:6.1f}  achieved {r['achieved_per_s']:7.1f}/s  p50 {r['p50_ms']:8.2f} ms  "
              f"p99 {r['p99_ms']:8.2f} ms  errors {r['errors']}", flush=True)

    # direct library
    for nm in (a.model, "trivial"):
        w = __import__(nm)
        for i, rate in enumerate(rates if nm == a.model else [20.0]):
            record(f"{nm} direct {T}x1", direct(w, inputs[nm], rate, a.window, T, i))
    # the C executor
    js = os.path.join(split_dir, "loadgen.json")
    run([a.loadgen, "--head", os.path.join(split_dir, f"lib{a.model}_head.so"), "--tail", os.path.join(split_dir, f"lib{a.model}_tail.so"),
         "--policy", "gpu-only", "--workers", "0", "--slots", "1", "--threads", str(T), "--max-batch", "8", "--rates", a.rates,
         "--warmup", "0.5", "--window", str(a.window), "--json", js], stdout=subprocess.DEVNULL)
    for x in json.load(open(js))["rates"]:
        record(f"{a.model} executor 1x{T}", {"rate": x["rate"], "completed": x["completed"], "errors": x["failed"] + x["rejected"],
                                              "achieved_per_s": x["achieved_per_s"], "p50_ms": x["latency_ms"]["p50"],
                                              "p99_ms": x["latency_ms"]["p99"]})
    # Ray Serve, one node
    ray.init(num_cpus=T, include_dashboard=False, log_to_driver=False)
    port = 8123
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    try:
        for nm in (a.model, "trivial"):
            mod = __import__(nm + "_serve")
            for reps in (1, 2):
                mod.run(num_replicas=reps, num_threads=max(1, T // reps), num_cpus=T / reps)
                buf = io.BytesIO()
                np.save(buf, inputs[nm])
                url = f"http://127.0.0.1:{port}/{nm}"
                asyncio.run(http_load(url, buf.getvalue(), 5.0, 1.0, 99))  # warm-up
                for i, rate in enumerate(rates if nm == a.model else [20.0]):
                    record(f"{nm} ray x{reps}", asyncio.run(http_load(url, buf.getvalue(), rate, a.window, i)))
                if reps == 1:
                    c = cpu_per_request(url, buf.getvalue(), 20.0, a.window, 50)
                    cpu[nm] = c
                    print(f"{nm} ray x1: CPU ms per request " +
                          ", ".join(f"{g} {v:.2f}" for g, v in c["cpu_ms_per_request"].items()), flush=True)
                serve.delete(nm)
    finally:
        serve.shutdown()
        ray.shutdown()
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "serve.json"), "w") as f:
        json.dump(out, f, indent=1)
    lines = ["# compile-model --emit ray: Ray Serve against the library and the C executor", "",
             f"CPU: {out['cpu']}, {T} threads, one machine (a one-node Ray cluster); open-loop Poisson arrivals, "
             f"{a.window:g} s per rate; {a.model} built with --dynamic batch=8. Command: `.venv/bin/python {out['command'].strip()}`.", "",
             "Latency-bounded throughput (requests/s whose p99 stays within the bound):", "",
             "| set-up | " + " | ".join(f"p99 <= {b} ms" for b in BOUNDS_MS) + " |", "|---|" + "---|" * len(BOUNDS_MS)]
    for key, rs in res.items():
        if key.startswith(a.model):
            lines.append(f"| {key} | " + " | ".join(f"{sustained(rs, b):.1f}" for b in BOUNDS_MS) + " |")
    lines += ["", "Per-request cost (the trivial model, Relu of f32[1,16], at 20 requests/s):", "",
              "| path | p50 ms | p99 ms |", "|---|---|---|"]
    for key, rs in res.items():
        if key.startswith("trivial"):
            lines.append(f"| {key} | {rs[0]['p50_ms']:.2f} | {rs[0]['p99_ms']:.2f} |")
    if cpu:
        groups = sorted({g for c in cpu.values() for g in c["cpu_ms_per_request"]})
        tick_ms = 1e3 / os.sysconf("SC_CLK_TCK")
        n_min = min(c["requests"] for c in cpu.values())
        idle = next(iter(cpu.values()))["idle_cpu_ms_per_s"]  # the first model's idle window
        lines += ["", f"Where a request's CPU goes (ray x1 at 20 requests/s over {a.window:g} s; per process group, user + "
                  "system CPU ms per request, less the same group's CPU in an idle window as long; the idle column is "
                  f"Ray's background CPU, ms per second; /proc counts in ticks of {tick_ms:g} ms, so each figure is within "
                  f"about {tick_ms / max(1, n_min):.2f} ms):", "",
                  "| process | " + " | ".join(f"{nm} ms/request" for nm in cpu) + " | idle ms/s |",
                  "|---|" + "---|" * (len(cpu) + 1)]
        for g in groups:
            lines.append(f"| {g} | " + " | ".join(f"{c['cpu_ms_per_request'].get(g, 0.0):.2f}" for c in cpu.values()) +
                         f" | {idle.get(g, 0.0):.1f} |")
        lines.append("| all | " + " | ".join(f"{sum(c['cpu_ms_per_request'].values()):.2f}" for c in cpu.values()) +
                     f" | {sum(idle.values()):.1f} |")
    lines += ["", "| set-up | rate/s | achieved/s | p50 ms | p99 ms | errors |", "|---|---|---|---|---|---|"]
    for key, rs in res.items():
        for r in rs:
            lines.append(f"| {key} | {r['rate']:g} | {r['achieved_per_s']:.1f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['errors']} |")
    with open(os.path.join(a.results, "serve.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
