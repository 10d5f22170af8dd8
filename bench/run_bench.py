#!/usr/bin/env python3
"""bench/run_bench.py — onnxc-generated binaries against ONNX Runtime and OpenVINO (CPU), same machine, same run.

For each model of the zoo (models/export_zoo.py: NAME.onnx, NAME.input.npy, NAME.ref.npy; batch
8: NAME_b8.*) it builds the binary with compile-model, then runs it, ONNX Runtime
(bench/ort_bench.py: CPU provider, same intra-op thread count, one inter-op thread, sequential,
graph optimisation "all") and OpenVINO (bench/ov_bench.py: CPU plugin reading the same .onnx,
LATENCY hint, INFERENCE_NUM_THREADS = the same count, f32 forced with INFERENCE_PRECISION_HINT and
the precision it used read back) on the same input file, and writes OUT/cpu.md (tables),
OUT/cpu.json (every measurement) and OUT/cpu.png (chart). Both engines run under this script's
Python (sys.executable: the project's .venv/bin/python, where requirements.txt and
bench/requirements.txt are installed); --engines leaves one out. In order:

  1. build: compile-model per model (default layout) and per ablation variant; the compile-model
     and C compiler wall times are measured separately (compile-model prints the C compiler's
     time); the FLOP count per model comes from compile-model's cost model (ir/cost.h, the table
     that --profile emits), summed over the functions of the batch-1 model;
  2. first result, memory and agreement: each engine's process runs the model once on NAME.input.npy
     and writes its output; time to first result = process start to exit (load + first
     inference), peak RSS from the kernel (bench/peak_rss.c). The outputs must agree: max |onnxc - E| <=
     --tol * max |E| for each engine E (also printed: ORT against OpenVINO, and each against
     PyTorch's NAME.ref.npy); otherwise the benchmark stops with exit status 1 and writes nothing;
  3. peak: bench/fma_probe.c (the FMA probe of --profile, run on all threads at once) at each
     thread count, before and after the timings; the larger value is the peak;
  4. batch-1 latency at each --threads count, 5. batch-8 throughput (images/s) at the largest
     thread count, for --batch-models (the six classification CNNs), 6. the ablation (resnet50 and vgg19: --layout nchw, channel blocks 8/16/32/64,
     a fork/join per parallel loop nest instead of one region per run (--omp-region op), at each thread count).
The machine is shared and noisy, so every timing is a median over --runs runs inside one process,
the process is repeated for --rounds rounds, the engines take turns (the order rotates each
round), and the tables show the median of the per-round medians with their spread.

    bash bench/run.sh                       # everything, the committed bench/results/cpu.md
    bash bench/run.sh --models resnet50 mobilenet_v2 --rounds 3 --skip-ablation   # a quick subset

bench/run.sh installs what is missing and builds build/compile-model first; this script can also
be run directly (.venv/bin/python bench/run_bench.py --help). --render rewrites cpu.md and cpu.png
from a cpu.json, also one written before OpenVINO was measured (its columns then show —).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The project's .venv/bin/python under bench/run.sh: PyPI's onnxruntime, onnx and openvino, and
# (--system-site-packages) Debian's numpy, torch and matplotlib. It runs the engines and the exporter.
PY = sys.executable

# The six CNNs of the first benchmark, then the newer opset-17 models of the zoo.
CNN_MODELS = ["resnet50", "vgg19", "googlenet", "densenet201", "mobilenet_v2", "efficientnet_b0"]
# The transformer models of models/export_transformers.py and vit_b_16: their own targets.
TRANSFORMER_MODELS = ["bert_base", "distilbert", "gpt2_small", "vit_b_16", "distilbert_t512", "whisper_tiny_enc",
                      "whisper_base_enc", "whisper_tiny_enc_t1500"]
DEFAULT_MODELS = CNN_MODELS + ["vit_b_16", "efficientnet_v2_s", "nfnet_f0", "gpunet_0", "deeplabv3_mobilenet_v3_large"]
# Batch-8 throughput: the classification CNNs (each batch-8 export is another PyTorch run).
BATCH_MODELS = CNN_MODELS
ABLATION_MODELS = ["resnet50", "vgg19"]
ABLATION_BLOCKS = [8, 16, 32, 64]
# The engines onnxc is compared with: key (--engines, cpu.json) -> (name, short name, script, Python module).
ENGINES = {"ort": ("ONNX Runtime", "ORT", "ort_bench.py", "onnxruntime"),
           "openvino": ("OpenVINO", "OV", "ov_bench.py", "openvino")}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def die(msg):
    print(f"run_bench.py: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def median(xs):
    return statistics.median(xs) if xs else None


def spread(xs):
    """(max - min) / median of the per-round medians: how noisy a measurement was."""
    return (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 and statistics.median(xs) > 0 else 0.0


# ---------------------------------------------------------------- processes

def check_proc(cmd, what, env=None):
    """Runs cmd to completion: (stdout+stderr text, wall seconds); stops the benchmark if it fails."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        die(f"{what} failed (exit {p.returncode}): {' '.join(shlex.quote(c) for c in cmd)}\n{p.stdout[-4000:]}")
    return p.stdout, wall


def measure_proc(a, cmd, what, env=None):
    """check_proc through bench/peak_rss.c: (output, wall seconds from fork to exit, peak RSS MiB)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        out, _ = check_proc([a.rss_bin, f.name] + cmd, what, env=env)
        rep = json.load(open(f.name))
    return out, rep["wall_s"], rep["maxrss_kib"] / 1024.0


def onnx_io(model):
    """(graph input names without initializers, graph output names)."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits], [o.name for o in m.graph.output]


# ---------------------------------------------------------------- building

def compile_model(a, onnx_path, out_dir, name, extra):
    """Builds OUT_DIR/NAME; returns its timings. With --reuse-builds an existing build made by
    the same compiler from the same model and flags is kept (its recorded timings are reused)."""
    binary = os.path.join(out_dir, name)
    record = os.path.join(out_dir, "bench_build.json")
    key = {"compiler": os.path.abspath(a.compiler), "compiler_mtime": os.path.getmtime(a.compiler),
           "model": os.path.abspath(onnx_path), "model_mtime": os.path.getmtime(onnx_path), "flags": extra}
    if a.reuse_builds and os.path.exists(record) and os.path.exists(binary):
        with open(record) as f:
            rec = json.load(f)
        if rec.get("key") == key:
            log(f"  {' '.join([name] + extra)}: reusing {out_dir}")
            return dict(rec["build"], binary=binary, reused=True)
    cmd = [a.compiler, onnx_path, "-o", out_dir, "--name", name] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out, wall = check_proc(cmd, f"compile-model {name}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    phase = {}
    for line in out.splitlines():
        m = re.match(r"(\w+): .*\(([0-9.]+) s\)\s*$", line)
        if m:
            phase[m.group(1)] = float(m.group(2))
    if "cc" not in phase:
        die(f"compile-model {name}: no C compiler time in its output:\n{out}")
    m = re.search(r"layout (\w+)(?: with (\d+)-channel blocks)?", out)
    build = {"wall_s": wall, "cc_s": phase["cc"], "compile_model_s": wall - phase["cc"], "cpu_s": cpu,
             "phases_s": phase, "layout": m.group(1) if m else None,
             "block": int(m.group(2)) if m and m.group(2) else None}
    log(f"  {' '.join([name] + extra)}: compile-model {build['compile_model_s']:.1f} s + cc {build['cc_s']:.1f} s")
    with open(record, "w") as f:
        json.dump({"key": key, "build": build}, f, indent=1)
    return dict(build, binary=binary, reused=False)


def flop_count(a, onnx_path, name):
    """FLOPs of one inference by compile-model's cost model: the per-function table that
    --profile emits into NAME.c (sources only, no C compiler)."""
    out_dir = os.path.join(a.work, f"{name}_cost")
    check_proc([a.compiler, onnx_path, "-o", out_dir, "--name", name, "--profile", "--emit", "c", "--quiet"],
               f"compile-model --profile {name}")
    with open(os.path.join(out_dir, f"{name}.c")) as f:
        src = f.read()
    m = re.search(r"static const onnxc_op_info \w+_ops\[[^\]]*\] = \{\n(.*?)\n\};", src, re.S)
    if not m:
        die(f"{name}: no per-function table in {out_dir}/{name}.c (compile-model --profile)")
    total = 0.0
    for line in m.group(1).splitlines():
        c = re.search(r",\s*([-+0-9.eE]+),\s*([-+0-9.eE]+)\},?\s*$", line)
        if c:
            total += float(c.group(1))
    return total


# ---------------------------------------------------------------- engines

class Model:
    def __init__(self, a, name, batch):
        self.name = name
        self.batch = batch
        stem = name if batch == 1 else f"{name}_b{batch}"
        self.stem = stem
        self.onnx = os.path.join(a.zoo, f"{stem}.onnx")
        self.input = os.path.join(a.zoo, f"{stem}.input.npy")
        self.ref = os.path.join(a.zoo, f"{stem}.ref.npy")
        inputs, outputs = onnx_io(self.onnx)
        if len(inputs) != 1:
            die(f"{self.onnx}: {len(inputs)} graph inputs; the benchmark feeds exactly one ({stem}.input.npy)")
        self.input_name = inputs[0]
        self.output_name = outputs[0]  # the one compared (ort_bench.py and ov_bench.py write their first output)


def ours_bench(binary, model, threads, runs):
    out, _ = check_proc([binary, "--input", f"{model.input_name}={model.input}", "--bench", str(runs),
                            "--threads", str(threads), "--quiet"], f"{binary} --bench")
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        die(f"no latency in the output of {binary}:\n{out}")
    return float(m.group(1))


def engine_run(a, eng, model, threads, runs, output=None, measure=False):
    """One process of bench/ort_bench.py or ov_bench.py: (its JSON line, wall s, peak RSS MiB or None)."""
    cmd = [PY, os.path.join(HERE, ENGINES[eng][2]), model.onnx, "--threads", str(threads), "--runs", str(runs),
           "--input", f"{model.input_name}={model.input}"]
    if output:
        cmd += ["--output", output]
    what = f"{ENGINES[eng][0]} on {model.stem}"
    if measure:
        out, wall, rss = measure_proc(a, cmd, what)
    else:
        (out, wall), rss = check_proc(cmd, what), None
    j = json.loads(out.strip().splitlines()[-1])
    if eng == "openvino":
        note_openvino(a, model, threads, j)
    return j, wall, rss


def note_openvino(a, model, threads, j):
    """What OpenVINO read back: its precision and thread count, per (model, threads), for the report;
    a precision other than f32 or another thread count is logged at once."""
    seen = a.openvino_seen.setdefault(f"{model.stem} {threads}", {"precision": j.get("precision"),
                                                                  "threads": j.get("threads"), "asked": threads})
    if j.get("precision") != "f32" or j.get("threads") != threads:
        if not seen.get("warned"):
            log(f"  WARNING: OpenVINO on {model.stem} at {threads} threads ran {j.get('precision')} with "
                f"{j.get('threads')} threads (f32 and {threads} asked)")
        seen["warned"] = True


def engine_bench(a, eng, model, threads, runs):
    return engine_run(a, eng, model, threads, runs)[0]["median_ms"]


def rel_err(x, ref):
    return float(abs(x - ref).max() / max(abs(ref).max(), 1e-30))


def first_results(a, model, binary, threads, tmp, rnd, check):
    """One cold process per engine (the order rotating with the round): wall from start to exit, peak
    RSS; on the checking round also the output agreement."""
    import numpy as np
    res = {}
    ours_out = os.path.join(tmp, f"{model.stem}.onnxc.npy")
    outs = {eng: os.path.join(tmp, f"{model.stem}.{eng}.bin") for eng in a.engines}
    for eng in rotate(["onnxc"] + a.engines, rnd):
        if eng == "onnxc":
            cmd = [binary, "--input", f"{model.input_name}={model.input}", "--output", f"{model.output_name}={ours_out}",
                   "--threads", str(threads), "--quiet"]
            _, wall, rss = measure_proc(a, cmd, f"{binary} (first result)")
            res["onnxc"] = {"first_result_ms": 1e3 * wall, "rss_mib": rss}
        else:
            j, wall, rss = engine_run(a, eng, model, threads, 0, output=outs[eng], measure=True)
            res[eng] = {"first_result_ms": 1e3 * wall, "rss_mib": rss, "internal": j}
    if not check:
        return res, None
    got = {"onnxc": np.load(ours_out).astype(np.float64).ravel()}
    for eng in a.engines:
        got[eng] = np.fromfile(outs[eng], dtype="<f4").astype(np.float64)
    ref = np.load(model.ref).astype(np.float64).ravel()
    sizes = {k: v.size for k, v in got.items()}
    if len(set(sizes.values()) | {ref.size}) != 1:
        return res, (f"{model.stem}: output sizes differ: " + ", ".join(f"{k} {v}" for k, v in sizes.items())
                     + f", PyTorch {ref.size}")
    c = {"finite": bool(np.all(np.isfinite(got["onnxc"]))), "onnxc_vs_torch": rel_err(got["onnxc"], ref)}
    for eng in a.engines:
        c[f"onnxc_vs_{eng}"] = rel_err(got["onnxc"], got[eng])
        c[f"{eng}_vs_torch"] = rel_err(got[eng], ref)
    if "ort" in a.engines and "openvino" in a.engines:
        c["openvino_vs_ort"] = rel_err(got["openvino"], got["ort"])
    res["check"] = c
    bad = [eng for eng in a.engines if not c[f"onnxc_vs_{eng}"] <= a.tol]
    log(f"  {model.stem}: " + ", ".join(f"max|onnxc-{ENGINES[e][1]}|/max|{ENGINES[e][1]}| = {c[f'onnxc_vs_{e}']:.2e}"
                                         for e in a.engines)
        + (f", OV vs ORT {c['openvino_vs_ort']:.2e}" if "openvino_vs_ort" in c else "")
        + " (vs PyTorch: " + ", ".join(f"{ENGINES[e][1] if e != 'onnxc' else e} {c[f'{e}_vs_torch']:.2e}"
                                       for e in ["onnxc"] + a.engines) + ")"
        + ("  MISMATCH" if bad or not c["finite"] else ""))
    if not c["finite"]:
        return res, f"{model.stem}: the onnxc output has NaN/inf"
    if bad:
        return res, "; ".join(f"{model.stem}: onnxc and {ENGINES[e][0]} disagree: max |onnxc - {ENGINES[e][1]}| = "
                              f"{c[f'onnxc_vs_{e}']:.3g} x max |{ENGINES[e][1]}| > --tol {a.tol}" for e in bad)
    return res, None


def rotate(xs, k):
    """xs with its first k % len(xs) items moved to the end: each engine leads in turn."""
    k %= len(xs)
    return xs[k:] + xs[:k]


def probe(a, threads):
    out, _ = check_proc([a.probe_bin] + [str(t) for t in threads], "fma_probe")
    return {int(k): v for k, v in json.loads(out.strip().splitlines()[-1]).items()}


# ---------------------------------------------------------------- machine

VERSIONS_PY = r"""
import json
v = {}
try:
    import onnxruntime
    v["onnxruntime"] = onnxruntime.__version__
except Exception:
    pass
try:
    import openvino
    v["openvino"] = openvino.get_version().split("-")[0]
    import openvino.properties.hint as hints
    t = openvino.Core().get_property("CPU", hints.inference_precision)
    s = getattr(t, "to_string", lambda: str(t))()
    v["openvino_default_precision"] = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}.get(s, s)
except Exception:
    pass
print(json.dumps(v))
"""


def engine_versions():
    """The engines' versions in this Python (a child process: the benchmark itself loads neither), and the
    precision OpenVINO's CPU plugin picks unasked on this machine (bf16 where the CPU has bf16)."""
    p = subprocess.run([PY, "-c", VERSIONS_PY], capture_output=True, text=True)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


def machine_info(a):
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, shell=True).stdout.strip()
        except OSError:
            return ""
    info = {}
    lscpu = sh("LC_ALL=C lscpu")
    for key in ("Model name", "Vendor ID", "CPU(s)", "Thread(s) per core", "Hypervisor vendor", "L2 cache", "L3 cache"):
        m = re.search(rf"^{re.escape(key)}:\s*(.*)$", lscpu, re.M)
        if m:
            info[key] = m.group(1).strip()
    flags = re.search(r"^Flags:\s*(.*)$", lscpu, re.M)
    wanted = ("sse4_2", "avx", "avx2", "fma", "f16c")
    info["flags"] = " ".join(f for f in (flags.group(1).split() if flags else [])
                             if f in wanted or f.startswith("avx512") or f.startswith("amx"))
    info["memory"] = sh("free -g | awk '/^Mem:/ {print $2 \" GiB\"}'")
    info["kernel"] = platform.release()
    info["cc"] = sh("cc --version | head -1")
    info["python"] = f"{PY} ({platform.python_version()})"
    info.update(engine_versions())
    rev = sh(f"git -C {shlex.quote(ROOT)} rev-parse --short HEAD")
    dirty = sh(f"git -C {shlex.quote(ROOT)} status --porcelain --untracked-files=no")
    info["onnxc"] = rev + (" (with uncommitted changes)" if dirty else "")
    info["compiler"] = a.compiler
    return info


# ---------------------------------------------------------------- report

def fmt(x, d=1):
    return "—" if x is None else f"{x:.{d}f}"


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def upgrade(R):
    """A copy of a cpu.json written before bench/ort_bench.py (ONNX Runtime's JavaScript package, no
    OpenVINO) in today's keys, for the report and the chart; the file itself stays as it was."""
    R = json.loads(json.dumps(R))
    info = R["machine"]
    old = "onnxruntime-node"
    if old in info:
        info["onnxruntime"] = info.pop(old)
        info["ort_package"] = f"{old} under node {info.pop('node', '?')}"
        info["ort_runner"] = "`node bench/ort_bench.js`"
        R["baseline_rss_mib"] = {"ort": R.pop("node_baseline_rss_mib")}
        R["baseline_what"] = {"ort": f"node with {old} loaded"}
    return R


def engines_of(a):
    """The engines a run measured (cpu.json written before --engines: ONNX Runtime only)."""
    return getattr(a, "engines", None) or ["ort"]


def ratio(x, y):
    return x / y if x is not None and y else None


def pct(flops, ms, pk):
    return None if ms is None else 100 * flops * 1e-9 / (ms * 1e-3) / pk


def engine_lines(a, R):
    """The header's lines on the engines, their versions and settings (also for a cpu.json of the
    days before OpenVINO, through upgrade())."""
    info, engs = R["machine"], engines_of(a)
    L = []
    if "ort" in engs:
        L.append(f"- ONNX Runtime {info.get('onnxruntime', '?')} ({info.get('ort_package', 'Python package')}, "
                 f"{info.get('ort_runner', '`bench/ort_bench.py`')}: CPU provider, graph optimisation all, intra-op "
                 "threads = ours, one inter-op thread, sequential)")
    else:
        L.append("- ONNX Runtime: not measured in this run (`--engines`)")
    if "openvino" in engs:
        seen = R.get("openvino_readback", {})
        precs = sorted({str(v.get("precision")) for v in seen.values()})
        off = sorted(k for k, v in seen.items() if v.get("threads") != v.get("asked"))
        L.append(f"- OpenVINO {info.get('openvino', '?')} (`bench/ov_bench.py`: CPU plugin reading the same .onnx, "
                 "LATENCY hint, one stream, INFERENCE_NUM_THREADS = ours, INFERENCE_PRECISION_HINT f32; read back from "
                 f"every compiled model: precision {', '.join(precs) or '?'}, threads "
                 + ("as asked" if not off else f"**other than asked** for {', '.join(off)}")
                 + f"; the CPU plugin's own default precision on this machine: "
                 f"{info.get('openvino_default_precision', '?')})")
        if precs and precs != ["f32"]:
            L.append("- **OpenVINO did not run f32 everywhere** (precision read back: " + ", ".join(
                f"{k} thr {v.get('precision')}" for k, v in sorted(seen.items()) if v.get("precision") != "f32")
                + "): its timings there are not those of an f32 engine.")
    else:
        L.append("- OpenVINO: not measured in this run" + (" (`--engines`)" if "engines" in R else ""))
    L.append(f"- engines' Python: {info['python']}" if "python" in info else "")
    return [x for x in L if x]


def write_report(a, R, path_md, path_png):
    info, peak = R["machine"], R["peak"]
    T = a.threads
    tmax = max(T)
    engs = engines_of(a)
    EK = list(ENGINES)  # every engine's columns, "—" where this run has none
    S = {e: ENGINES[e][1] for e in EK}
    L = []
    L.append("# onnxc against ONNX Runtime and OpenVINO — CPU")
    L.append("")
    L.append(f"Written by `bench/run_bench.py` on {R['date']}. Command: `{R['command']}`")
    L.append("")
    L.append(f"- machine: {info.get('Model name', '?')} ({info.get('Vendor ID', '?')}), {info.get('CPU(s)', '?')} cores"
             f" ({info.get('Thread(s) per core', '?')} thread per core), {info.get('memory', '?')}"
             + (f", virtualised ({info['Hypervisor vendor']})" if info.get("Hypervisor vendor") else "")
             + f"; L2 {info.get('L2 cache', '?')}, L3 {info.get('L3 cache', '?')}; Linux {info.get('kernel', '?')}")
    L.append(f"- vector flags: {info.get('flags', '?')}")
    L.append(f"- onnxc {info['onnxc']} (`{info['compiler']}`, default target: host); C compiler: {info['cc']}")
    L += engine_lines(a, R)
    L.append("- FMA probe peak (bench/fma_probe.c, all threads at once, best before/after the timings): "
             + ", ".join(f"{t} thread{'s' if t > 1 else ''} {peak[str(t)]:.1f} GFLOP/s" for t in T))
    L.append(f"- {plural(a.rounds, 'round')}, engines taking turns (the order rotates each round); each timing is the "
             f"median of {a.runs} runs in one process (batch 8: {a.runs_b8}) after one warm-up run; tables show the median "
             f"of the round medians. Load average (1 min) at the start {R['load'][0]:.2f}, during the batch-1 rounds "
             f"{min(R['load_rounds']):.2f}–{max(R['load_rounds']):.2f}, at the end {R['load'][1]:.2f}.")
    cores = int(info.get("CPU(s)", "0") or 0)
    if cores and max(R["load_rounds"] + R["load"]) > cores:
        L.append(f"- **The machine was busy** (load average above its {cores} cores): other processes took CPU time "
                 "during the timings, so absolute times are inflated and multi-threaded ones the least reliable "
                 "(a preempted thread stalls the others at every synchronisation).")
    if R["reduced"]:
        L.append(f"- **Reduced run**: {R['reduced']}.")
    if a.note:
        L.append(f"- Note: {a.note}")
    L.append("")

    # batch 1
    L.append("## Batch 1 latency")
    L.append("")
    L.append("GFLOP: compile-model's cost model (`ir/cost.h`: a multiply-add counts 2, conv taps that fall on the "
             "padding are not counted; the same count for every engine, as for a direct convolution: 3×3 convs run as "
             "Winograd F(2×2, 3×3) do 2.25× fewer multiply-adds, so a model made of them, vgg19, can show more than 100% "
             "of the FMA peak). onnxc / ORT and onnxc / OV below 1: onnxc is faster. Spread: (max − min) / median of "
             "the round medians, the largest of the engines'.")
    L.append("")
    L.append("| model | threads | GFLOP | onnxc ms | " + " | ".join(f"{S[e]} ms" for e in EK) + " | "
             + " | ".join(f"onnxc / {S[e]}" for e in EK) + " | onnxc GFLOP/s | onnxc % peak | "
             + " | ".join(f"{S[e]} % peak" for e in EK) + " | spread |")
    L.append("|---|---|---|---|" + "---|" * (3 * len(EK) + 3))
    ratios = {e: {t: [] for t in T} for e in EK}
    for name in a.models:
        r = R["models"][name]
        gf = r["flops"] * 1e-9
        for t in T:
            lat = r["latency"][str(t)]
            o = median(lat["onnxc"])
            x = {e: median(lat.get(e, [])) for e in EK}
            rt = {e: ratio(o, x[e]) for e in EK}
            for e in EK:
                if rt[e] is not None:
                    ratios[e][t].append((rt[e], name))
            pk = peak[str(t)]
            sp = max(spread(v) for v in lat.values())
            L.append(f"| {name} | {t} | {gf:.2f} | {o:.2f} | " + " | ".join(fmt(x[e], 2) for e in EK) + " | "
                     + " | ".join("—" if rt[e] is None else f"**{rt[e]:.2f}**" for e in EK)
                     + f" | {gf / o * 1e3:.1f} | {pct(r['flops'], o, pk):.0f}% | "
                     + " | ".join("—" if x[e] is None else f"{pct(r['flops'], x[e], pk):.0f}%" for e in EK)
                     + f" | {100 * sp:.0f}% |")
    L.append("")
    gm_all = {}
    for e in EK:
        if not any(ratios[e][t] for t in T):
            continue
        gm = {t: geomean([x for x, _ in ratios[e][t]]) for t in T}
        gm_all[e] = geomean([x for t in T for x, _ in ratios[e][t]])
        L.append(f"Geometric mean of onnxc / {S[e]}: "
                 + ", ".join(f"{t} thread{'s' if t > 1 else ''} **{fmt(gm[t], 2)}**" for t in T)
                 + f", all **{gm_all[e]:.2f}**.  ")
    L.append("")

    # batch 8
    if not a.skip_batch8:
        L.append(f"## Batch {a.batch} throughput ({tmax} threads)")
        L.append("")
        L.append(f"Images per second = {a.batch} / median latency of one batch-{a.batch} inference "
                 f"(models exported with `models/export_zoo.py --batch {a.batch}`). Throughput ratios: above 1, onnxc "
                 "is faster.")
        L.append("")
        L.append("| model | onnxc img/s | " + " | ".join(f"{S[e]} img/s" for e in EK) + " | "
                 + " | ".join(f"onnxc / {S[e]} throughput" for e in EK) + " | onnxc ms/batch | "
                 + " | ".join(f"{S[e]} ms/batch" for e in EK) + " | spread |")
        L.append("|---|---|" + "---|" * (3 * len(EK) + 2))
        for name in batch_models(a):
            b = R["models"][name]["batch8"]
            o = median(b["onnxc"])
            x = {e: median(b.get(e, [])) for e in EK}
            sp = max(spread(v) for v in b.values())
            L.append(f"| {name} | {a.batch * 1e3 / o:.1f} | "
                     + " | ".join("—" if x[e] is None else f"{a.batch * 1e3 / x[e]:.1f}" for e in EK) + " | "
                     + " | ".join("—" if x[e] is None else f"**{x[e] / o:.2f}**" for e in EK)
                     + f" | {o:.1f} | " + " | ".join(fmt(x[e]) for e in EK) + f" | {100 * sp:.0f}% |")
        L.append("")

    # first result and memory
    L.append(f"## Time to first result and peak memory (batch 1, {tmax} threads)")
    L.append("")
    bl, what = R.get("baseline_rss_mib", {}), R.get("baseline_what", {})
    base = ("The engines' processes include their interpreter: " + "; ".join(
        f"{what.get(e, f'Python with numpy and {ENGINES[e][3]} imported')}, no model, peaks at {bl[e]:.0f} MiB"
        for e in EK if e in bl) + ".") if bl else ""
    how = ", ".join(info.get("ort_runner", "`bench/ort_bench.py`") if e == "ort" else f"`bench/{ENGINES[e][2]}`"
                    for e in engs)
    L.append("First result: wall time from process start to exit of a process that loads the model, runs it once on "
             f"NAME.input.npy and writes the output (the onnxc binary; {how}), median over the rounds, weights in the "
             "page cache. Peak RSS: the largest over the rounds (the kernel's count for the process, "
             f"`bench/peak_rss.c`). {base}")
    L.append("")
    L.append("| model | onnxc first result ms | " + " | ".join(f"{S[e]} first result ms" for e in EK)
             + " | onnxc peak RSS MiB | " + " | ".join(f"{S[e]} peak RSS MiB" for e in EK) + " | "
             + " | ".join(f"RSS onnxc / {S[e]}" for e in EK) + " |")
    L.append("|---|---|" + "---|" * (3 * len(EK) + 1))
    rss_ratios = {}
    for name in a.models:
        f = R["models"][name]["first"]
        o_ms, o_rss = median(f["onnxc_ms"]), max(f["onnxc_rss"])
        x_ms = {e: median(f.get(f"{e}_ms", [])) for e in EK}
        x_rss = {e: max(f[f"{e}_rss"]) if f.get(f"{e}_rss") else None for e in EK}
        rss_ratios[name] = {e: ratio(o_rss, x_rss[e]) for e in EK}
        L.append(f"| {name} | {o_ms:.0f} | " + " | ".join(fmt(x_ms[e], 0) for e in EK) + f" | {o_rss:.0f} | "
                 + " | ".join(fmt(x_rss[e], 0) for e in EK) + " | "
                 + " | ".join(fmt(rss_ratios[name][e], 2) for e in EK) + " |")
    L.append("")

    # agreement
    L.append("## Agreement")
    L.append("")
    L.append(f"The outputs of the first-result processes (batch 1) and of one batch-{a.batch} process each: "
             f"max |difference| / max |reference| (tolerance {a.tol:g} between onnxc and each engine; PyTorch's output "
             "is `NAME.ref.npy`).")
    L.append("")
    pairs = [("onnxc", e) for e in EK] + [("openvino", "ort")] + [(e, "torch") for e in ["onnxc"] + EK]
    label = dict(S, onnxc="onnxc", torch="PyTorch")
    L.append("| model | batch | " + " | ".join(f"{label[x]} vs {label[y]}" for x, y in pairs) + " |")
    L.append("|---|---|" + "---|" * len(pairs))
    for name in a.models:
        for b, c in ((1, R["models"][name]["first"].get("check")), (a.batch, R["models"][name].get("batch8_check"))):
            if c:
                L.append(f"| {name} | {b} | " + " | ".join(
                    "—" if c.get(f"{x}_vs_{y}") is None else f"{c[f'{x}_vs_{y}']:.1e}" for x, y in pairs) + " |")
    L.append("")

    # compile time
    L.append("## Compile time")
    L.append("")
    L.append("Wall seconds of one build (default target and layout) on the shared machine: compile-model (import, "
             "passes, C and weights writing — its own timings in brackets) and the C compiler it runs "
             "(`-O3 -march=native`, the model's C and the command-line driver); CPU: user + system seconds of both.")
    L.append("")
    L.append("| model | compile-model s | (import / passes / codegen) | C compiler s | total s | CPU s |")
    L.append("|---|---|---|---|---|---|")
    for name in a.models:
        b = R["models"][name]["build"]
        ph = b["phases_s"]
        L.append(f"| {name} | {b['compile_model_s']:.1f} | ({ph.get('import', 0):.1f} / {ph.get('passes', 0):.1f} / "
                 f"{ph.get('codegen', 0):.1f}) | {b['cc_s']:.1f} | {b['wall_s']:.1f} | {b['cpu_s']:.1f} |")
    L.append("")

    # ablation
    if not a.skip_ablation:
        L.append("## Ablation")
        L.append("")
        L.append("onnxc only, batch 1, the same rounds; the engines for reference from the batch-1 table. "
                 "Default: the target's layout (NCHWc, block = vector length in floats).")
        L.append("")
        L.append("| model | variant | " + " | ".join(f"{t} thr ms" for t in T)
                 + (f" | speedup {min(T)}→{tmax} thr" if len(T) > 1 else "") + f" | vs default ({tmax} thr) | "
                 + " | ".join(f"{S[e]} {tmax} thr ms" for e in EK) + " |")
        L.append("|---|---|" + "---|" * len(T) + ("---|" if len(T) > 1 else "") + "---|" * (1 + len(EK)))
        for name in a.ablation_models:
            ab = R["ablation"][name]
            dflt = median(ab[R["ablation_default"][name]][str(tmax)])
            ref = {e: median(R["models"][name]["latency"][str(tmax)].get(e, [])) if name in R["models"] else None
                   for e in EK}
            for var, times in ab.items():
                ms = {t: median(times[str(t)]) for t in T}
                row = f"| {name} | {var} | " + " | ".join(f"{ms[t]:.1f}" for t in T)
                if len(T) > 1:
                    row += f" | {ms[min(T)] / ms[tmax]:.2f}"
                row += f" | {ms[tmax] / dflt:.2f} | " + " | ".join(fmt(ref[e]) for e in EK) + " |"
                L.append(row)
        L.append("")

    def row(target, measured, ok):
        L.append(f"| {target} | {measured} | {'yes' if ok else '**no**'} |")
    if set(a.models) <= set(TRANSFORMER_MODELS):
        # the transformers' targets: each model at most 0.80 x ONNX Runtime's latency and at most OpenVINO's
        L.append("## Targets (transformers, issue 40)")
        L.append("")
        L.append("| target | measured | met |")
        L.append("|---|---|---|")
        for e, bound in (("ort", 0.80), ("openvino", 1.0)):
            for t in T:
                if e in EK and ratios[e][t]:
                    worst = max(ratios[e][t])
                    row(f"every model ≤ {bound:.2f} × {S[e]}, {t} thread{'s' if t > 1 else ''}", f"worst {worst[1]} {worst[0]:.2f}",
                        worst[0] <= bound)
    else:
        # targets of the CNN zoo (ONNX Runtime's; OpenVINO's geometric mean for reference)
        L.append("## Targets (CNN zoo, issue 10)")
        L.append("")
        L.append("| target | measured | met |")
        L.append("|---|---|---|")
        if "ort" in gm_all:
            for t in T:
                worst = max(ratios["ort"][t])
                row(f"every model ≤ ORT, {t} thread{'s' if t > 1 else ''}", f"worst {worst[1]} {worst[0]:.2f}", worst[0] <= 1.0)
            row("geometric mean onnxc / ORT ≤ 0.85", f"{gm_all['ort']:.2f}", gm_all["ort"] <= 0.85)
        for name, want in (("resnet50", 85), ("vgg19", 90)):
            if name in R["models"]:
                o = median(R["models"][name]["latency"][str(tmax)]["onnxc"])
                share = pct(R["models"][name]["flops"], o, peak[str(tmax)])
                row(f"{name} ≥ {want}% of peak ({tmax} threads)", f"{share:.0f}%", share >= want)
        if not a.skip_batch8 and "ort" in engs:
            for name in ("resnet50", "mobilenet_v2"):
                if name in batch_models(a):
                    b = R["models"][name]["batch8"]
                    r8 = median(b["ort"]) / median(b["onnxc"])
                    row(f"{name} batch-{a.batch} throughput ≥ 1.1 × ORT", f"{r8:.2f} ×", r8 >= 1.1)
        worst = max(((v["ort"], k) for k, v in rss_ratios.items() if v["ort"] is not None), default=None)
        if worst:
            row("peak RSS ≤ 0.5 × ORT's", f"worst {worst[1]} {worst[0]:.2f}", worst[0] <= 0.5)
        if "resnet50" in R["models"]:
            b = R["models"]["resnet50"]["build"]
            row("resnet50 compile-model + C compiler ≤ 10 s", f"{b['compile_model_s']:.1f} + {b['cc_s']:.1f} = {b['wall_s']:.1f} s",
                b["wall_s"] <= 10)
        if "openvino" in gm_all:
            L.append("")
            L.append(f"Against OpenVINO (no target): geometric mean onnxc / OV {gm_all['openvino']:.2f}"
                     + (f", worst {max(ratios['openvino'][tmax])[1]} {max(ratios['openvino'][tmax])[0]:.2f} at {tmax} "
                        f"thread{'s' if tmax > 1 else ''}" if ratios["openvino"][tmax] else "") + ".")
    L.append("")
    if path_png:
        L.append(f"![chart]({os.path.basename(path_png)})")
        L.append("")
    with open(path_md, "w") as f:
        f.write("\n".join(L))


def batch_models(a):
    """The models of the batch throughput table (every model in runs written before --batch-models)."""
    return getattr(a, "batch_models", None) or a.models


def write_chart(a, R, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    T, tmax, names = a.threads, max(a.threads), a.models
    # the engines with measurements in this run, in ENGINES' order
    engs = [e for e in ENGINES if any(R["models"][n]["latency"][str(t)].get(e) for n in names for t in T)]
    label = {"onnxc": "onnxc", **{e: ENGINES[e][0] for e in ENGINES}}
    color = {"onnxc": "C0", "ort": "C1", "openvino": "C2"}
    # the latency ratios across the top (a bar per engine and thread count), the other panels two a row below
    panels = 1 + (not a.skip_batch8) + (not a.skip_ablation)
    rows = 1 + (panels + 1) // 2
    fig = plt.figure(figsize=(14, 4.4 * rows))
    gs = fig.add_gridspec(rows, 2)
    axes = [fig.add_subplot(gs[0, :])] + [fig.add_subplot(gs[1 + i // 2, i % 2]) for i in range(2 * (rows - 1))]
    x = list(range(len(names)))

    def bars(ax, xs, groups, fmt_, fs=7):
        """One bar per group (label, colour, hatch, values) side by side at each x."""
        w = 0.8 / max(1, len(groups))
        for i, (lab, col, hatch, ys) in enumerate(groups):
            b = ax.bar([xi + (i - (len(groups) - 1) / 2) * w for xi in xs], [y if y is not None else 0 for y in ys], w,
                       label=lab, color=col, hatch=hatch, edgecolor="white" if hatch else None, linewidth=0)
            ax.bar_label(b, labels=["" if y is None else fmt_ % y for y in ys], fontsize=fs, rotation=90 if len(groups) > 3 else 0)
    # 1: latency ratios, per engine and thread count
    ax = axes[0]
    groups = []
    for e in engs:
        for i, t in enumerate(T):
            ys = [ratio(median(R["models"][n]["latency"][str(t)]["onnxc"]), median(R["models"][n]["latency"][str(t)].get(e, [])))
                  for n in names]
            groups.append((f"vs {ENGINES[e][1]}, {t} thread{'s' if t > 1 else ''}", color[e], "//" if i else None, ys))
    bars(ax, x, groups, "%.2f")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.axhline(0.85, color="k", lw=0.8, ls=":")
    ax.set_ylim(0, 1.25 * max([y for g in groups for y in g[3] if y is not None] + [1.0]))
    ax.set_xticks(x, names, rotation=10, fontsize=8)
    ax.set_ylabel("latency onnxc / engine (lower is better)")
    ax.set_title("Batch 1 latency ratio (hatched: more threads; dotted: target 0.85 against ORT)", fontsize=10)
    ax.legend(fontsize=8, ncol=len(groups), loc="upper center")
    # 2: % of peak
    ax = axes[1]
    groups = [(label[e], color[e], None,
               [pct(R["models"][n]["flops"], median(R["models"][n]["latency"][str(tmax)].get(e, [])), R["peak"][str(tmax)])
                for n in names]) for e in ["onnxc"] + engs]
    bars(ax, x, groups, "%.0f")
    ax.set_xticks(x, names, rotation=20, fontsize=8)
    ax.set_ylabel("% of FMA probe peak")
    ax.set_title(f"Batch 1, {tmax} threads: share of peak ({R['peak'][str(tmax)]:.0f} GFLOP/s)", fontsize=10)
    ax.legend(fontsize=8)
    k = 2
    if not a.skip_batch8:
        ax = axes[k]
        k += 1
        bm = batch_models(a)
        groups = []
        for e in ["onnxc"] + engs:
            ys = [median(R["models"][n]["batch8"].get(e, [])) for n in bm]
            groups.append((label[e], color[e], None, [None if y is None else a.batch * 1e3 / y for y in ys]))
        bars(ax, list(range(len(bm))), groups, "%.1f")
        ax.set_xticks(list(range(len(bm))), bm, rotation=20, fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("images / s (log)")
        ax.set_title(f"Batch {a.batch} throughput, {tmax} threads", fontsize=10)
        ax.legend(fontsize=8)
    if not a.skip_ablation:
        ax = axes[k]
        k += 1
        labels, groups_ = [], []
        for n in a.ablation_models:
            for var, times in R["ablation"][n].items():
                labels.append(f"{n}\n{var.replace(' (default)', '*')}")
                groups_.append({t: median(times[str(t)]) for t in T})
        xa = list(range(len(labels)))
        bars(ax, xa, [(f"{t} thread{'s' if t > 1 else ''}", f"C{i}", None, [g[t] for g in groups_])
                      for i, t in enumerate(T)], "%.0f", fs=6)
        ax.set_xticks(xa, labels, fontsize=6, rotation=30)
        ax.set_yscale("log")
        ax.set_ylabel("ms (log)")
        ax.set_title("Ablation: layout, NCHWc block (onnxc, batch 1; * default)", fontsize=10)
        ax.legend(fontsize=8)
    for ax in axes[k:]:
        ax.axis("off")
    m = R["machine"]
    vs = [f"ONNX Runtime {m.get('onnxruntime', '?')}" if e == "ort" else
          f"OpenVINO {m.get('openvino', '?')} (f32)" for e in engs]
    fig.suptitle(f"onnxc vs {' and '.join(vs)} — {m.get('Model name', '?')}, {R['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS, metavar="NAME",
                    help=f"zoo models (default: {' '.join(DEFAULT_MODELS)})")
    ap.add_argument("--zoo", default=os.path.join(ROOT, "models", "out"),
                    help="folder with NAME.onnx, NAME.input.npy, NAME.ref.npy and NAME_b8.* (default models/out)")
    ap.add_argument("--export-missing", action="store_true",
                    help="export missing zoo files with models/export_zoo.py (PyTorch) first")
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts (default 1 2)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs per process, batch 1 (default 10)")
    ap.add_argument("--runs-b8", type=int, default=5, help="timed runs per process, batch 8 (default 5)")
    ap.add_argument("--first-rounds", type=int, default=3, help="rounds of first-result processes (default 3)")
    ap.add_argument("--batch", type=int, default=8, help="batch size of the throughput table (default 8)")
    ap.add_argument("--skip-batch8", action="store_true", help="no batch throughput")
    ap.add_argument("--batch-models", nargs="+", default=BATCH_MODELS, metavar="NAME",
                    help=f"models of the batch throughput table, among --models (default: {' '.join(BATCH_MODELS)})")
    ap.add_argument("--skip-ablation", action="store_true", help="no ablation")
    ap.add_argument("--ablation-models", nargs="+", default=ABLATION_MODELS, metavar="NAME")
    ap.add_argument("--blocks", type=int, nargs="+", default=ABLATION_BLOCKS, help="ablation channel blocks")
    ap.add_argument("--tol", type=float, default=1e-3,
                    help="agreement: max |onnxc - E| <= TOL * max |E| for each engine E (default 1e-3)")
    ap.add_argument("--engines", nargs="+", choices=list(ENGINES), default=list(ENGINES), metavar="ENGINE",
                    help=f"the engines onnxc is compared with, among {' '.join(ENGINES)} (default: both)")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "onnxc-bench"),
                    help="build folder (default /tmp/onnxc-bench)")
    ap.add_argument("--reuse-builds", action="store_true",
                    help="keep builds in --work made by the same compiler, model and flags (compile times as recorded then)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="where cpu.md, cpu.json, cpu.png go")
    ap.add_argument("--no-chart", action="store_true", help="no PNG (no matplotlib needed)")
    ap.add_argument("--note", default="", help="a line for the header of cpu.md")
    ap.add_argument("--render", metavar="CPU.json",
                    help="measure nothing: write cpu.md and cpu.png into --out again from a cpu.json of an earlier run "
                         "(its options; this call's --note and --no-chart)")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as f:
            R = json.load(f)
        out, note, no_chart = a.out, a.note, a.no_chart
        a = argparse.Namespace(**R["args"])
        a.out, a.note, a.no_chart = out, note, no_chart
        os.makedirs(a.out, exist_ok=True)
        write_outputs(a, R)
        return
    a.threads = sorted(set(a.threads))
    if not a.models or a.rounds < 1 or a.runs < 1 or a.runs_b8 < 1 or a.first_rounds < 1 or min(a.threads) < 1:
        ap.error("need models, and rounds, runs and threads >= 1")
    a.ablation_models = [m for m in a.ablation_models if m in a.models] if not a.skip_ablation else []
    a.batch_models = [m for m in a.batch_models if m in a.models] if not a.skip_batch8 else []
    if not a.batch_models:
        a.skip_batch8 = True
    if not a.skip_ablation and not a.ablation_models:
        a.skip_ablation = True
    a.engines = [e for e in ENGINES if e in a.engines]
    for e in a.engines:
        p = subprocess.run([PY, "-c", f"import numpy, {ENGINES[e][3]}"], capture_output=True, text=True)
        if p.returncode != 0:
            die(f"{ENGINES[e][0]}: `import {ENGINES[e][3]}` fails in {PY}: {p.stderr.strip().splitlines()[-1:]} "
                "(bash tools/setup.sh with ONNXC_REQUIREMENTS=bench/requirements.txt installs the engines into .venv, "
                "which bench/run.sh uses; or leave it out with --engines)")
    if not os.access(a.compiler, os.X_OK):
        die(f"no compile-model at {a.compiler} (cmake -B build && cmake --build build, or --compiler PATH)")
    command = os.environ.get("ONNXC_BENCH_COMMAND") or " ".join(
        [os.path.relpath(PY, ROOT) if PY.startswith(ROOT + os.sep) else PY, os.path.relpath(sys.argv[0], ROOT)] + [shlex.quote(x) for x in sys.argv[1:]])
    reduced = []
    if a.models != DEFAULT_MODELS:
        reduced.append(f"models {' '.join(a.models)}")
    if a.skip_batch8:
        reduced.append("no batch-8 throughput")
    if a.skip_ablation:
        reduced.append("no ablation")
    elif a.ablation_models != ABLATION_MODELS:
        reduced.append(f"ablation on {' '.join(a.ablation_models)} only")
    if not a.skip_batch8 and a.batch_models != [m for m in BATCH_MODELS if m in a.models]:
        reduced.append(f"batch {a.batch} on {' '.join(a.batch_models)} only")
    if a.rounds < 5 or a.runs < 10:
        reduced.append(f"{plural(a.rounds, 'round')} × {plural(a.runs, 'run')} (default 5 × 10)")
    if a.threads != [1, 2]:
        reduced.append(f"threads {' '.join(map(str, a.threads))}")
    if a.engines != list(ENGINES):
        reduced.append(f"engines {' '.join(a.engines)} only")

    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    t_start = time.time()
    R = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "command": command,
         "reduced": "; ".join(reduced), "load": [os.getloadavg()[0], None], "models": {}, "ablation": {},
         "ablation_default": {}, "engines": a.engines}
    a.openvino_seen = R["openvino_readback"] = {}  # (model, threads) -> what OpenVINO read back
    R["machine"] = machine_info(a)
    log(f"machine: {R['machine'].get('Model name', '?')}, {R['machine'].get('CPU(s)', '?')} cores, "
        f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")

    # zoo files
    batches = [(1, a.models)] + ([] if a.skip_batch8 else [(a.batch, a.batch_models)])
    for b, names in batches:
        need = [n for n in names if not all(os.path.exists(os.path.join(
            a.zoo, f"{n if b == 1 else f'{n}_b{b}'}.{ext}")) for ext in ("onnx", "input.npy", "ref.npy"))]
        if need and a.export_missing:
            log(f"exporting {' '.join(need)} at batch {b} into {a.zoo} (models/export_zoo.py)")
            subprocess.run([PY, os.path.join(ROOT, "models", "export_zoo.py"), "--out", a.zoo, "--batch", str(b)] + need,
                           check=True)
        elif need:
            die(f"missing in {a.zoo}: {' '.join(need)} at batch {b}; run "
                f"`.venv/bin/python models/export_zoo.py --out {a.zoo} --batch {b} {' '.join(need)}` or pass --export-missing")
    M1 = {n: Model(a, n, 1) for n in a.models}
    M8 = {n: Model(a, n, a.batch) for n in a.batch_models}

    # 1. builds
    a.probe_bin = os.path.join(a.work, "fma_probe")
    check_proc(["cc", "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "fma_probe.c"), "-o", a.probe_bin],
               "building bench/fma_probe.c")
    a.rss_bin = os.path.join(a.work, "peak_rss")
    check_proc(["cc", "-O2", os.path.join(HERE, "peak_rss.c"), "-o", a.rss_bin], "building bench/peak_rss.c")
    log("building (compile-model; the C compiler's time is what compile-model reports for it)")
    builds, builds8, ablation_builds = {}, {}, {}
    for n in a.models:
        builds[n] = compile_model(a, M1[n].onnx, os.path.join(a.work, f"{n}_b1"), n, [])
        R["models"][n] = {"build": {k: v for k, v in builds[n].items() if k != "binary"},
                          "flops": flop_count(a, M1[n].onnx, n)}
        log(f"  {n}: {R['models'][n]['flops'] * 1e-9:.2f} GFLOP (cost model)")
    for n in M8:
        builds8[n] = compile_model(a, M8[n].onnx, os.path.join(a.work, f"{n}_b{a.batch}"), n, [])
    for n in a.ablation_models:
        dflt_block = builds[n]["block"]
        R["ablation_default"][n] = f"nchwc {dflt_block} (default)"
        variants = {R["ablation_default"][n]: builds[n]["binary"]}
        variants["nchw"] = compile_model(a, M1[n].onnx, os.path.join(a.work, f"{n}_nchw"), n, ["--layout", "nchw"])["binary"]
        variants[f"nchwc {dflt_block}, --omp-region op"] = compile_model(a, M1[n].onnx, os.path.join(a.work, f"{n}_op_regions"), n,
                                                                         ["--omp-region", "op"])["binary"]
        for blk in a.blocks:
            if blk != dflt_block:
                variants[f"nchwc {blk}"] = compile_model(a, M1[n].onnx, os.path.join(a.work, f"{n}_cb{blk}"), n,
                                                         ["--channel-block", str(blk)])["binary"]
        ablation_builds[n] = dict(sorted(variants.items(), key=lambda kv: (kv[0] != "nchw", int(re.sub(r"\D", "", kv[0]) or 0))))

    # 2. first result, memory, agreement
    tmax = max(a.threads)
    log(f"first result, peak RSS and agreement (batch 1, {tmax} threads, {a.first_rounds} rounds)")
    # The interpreter's own share of the engines' peak RSS: Python with numpy and the engine imported.
    R["baseline_rss_mib"] = {e: measure_proc(a, [PY, "-c", f"import numpy, {ENGINES[e][3]}"], f"{PY} -c import")[2]
                             for e in a.engines}
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.models:
            R["models"][n]["first"] = {f"{e}_{k}": [] for e in ["onnxc"] + a.engines for k in ("ms", "rss")}
            R["models"][n]["first"].update({f"{e}_internal": [] for e in a.engines})
        for rnd in range(a.first_rounds):
            for n in a.models:
                res, err = first_results(a, M1[n], builds[n]["binary"], tmax, tmp, rnd, check=rnd == 0)
                if err:
                    errors.append(err)
                    continue
                f = R["models"][n]["first"]
                for e in ["onnxc"] + a.engines:
                    f[f"{e}_ms"].append(res[e]["first_result_ms"])
                    f[f"{e}_rss"].append(res[e]["rss_mib"])
                    if e != "onnxc":
                        f[f"{e}_internal"].append(res[e]["internal"])
                if "check" in res:
                    f["check"] = res["check"]
            if errors:
                break
            log(f"  round {rnd + 1}/{a.first_rounds}, first result {'/'.join(['onnxc'] + [ENGINES[e][1] for e in a.engines])}: "
                + ", ".join(f"{n} " + "/".join(f"{R['models'][n]['first'][f'{e}_ms'][-1]:.0f}" for e in ["onnxc"] + a.engines)
                            + " ms" for n in a.models))
        for n in M8:
            if errors:
                break
            res, err = first_results(a, M8[n], builds8[n]["binary"], tmax, tmp, 0, check=True)
            if err:
                errors.append(err)
            else:
                R["models"][n]["batch8_check"] = res["check"]
    if errors:
        for e in errors:
            print(f"run_bench.py: MISMATCH: {e}", file=sys.stderr)
        die("outputs disagree; no results written")

    # 3. peak
    log("FMA probe")
    peaks = [probe(a, a.threads)]
    log("  " + ", ".join(f"{t} thr {peaks[0][t]:.1f} GFLOP/s" for t in a.threads))

    # 4. batch-1 latency
    for n in a.models:
        R["models"][n]["latency"] = {str(t): {e: [] for e in ["onnxc"] + a.engines} for t in a.threads}
    R["load_rounds"] = []
    for rnd in range(a.rounds):
        R["load_rounds"].append(os.getloadavg()[0])
        log(f"batch-1 latency, round {rnd + 1}/{a.rounds} (load average {R['load_rounds'][-1]:.2f})")
        for n in a.models:
            msg = []
            for t in a.threads:
                lat = R["models"][n]["latency"][str(t)]
                for eng in rotate(["onnxc"] + a.engines, rnd):
                    if eng == "onnxc":
                        lat["onnxc"].append(ours_bench(builds[n]["binary"], M1[n], t, a.runs))
                    else:
                        lat[eng].append(engine_bench(a, eng, M1[n], t, a.runs))
                msg.append(f"{t} thr " + "/".join(f"{lat[e][-1]:.1f}" for e in ["onnxc"] + a.engines) + " ms")
            log(f"  {n}: {'/'.join(['onnxc'] + [ENGINES[e][1] for e in a.engines])} " + ", ".join(msg))

    # 5. batch-8 throughput
    if M8:
        for n in M8:
            R["models"][n]["batch8"] = {e: [] for e in ["onnxc"] + a.engines}
        for rnd in range(a.rounds):
            log(f"batch-{a.batch} latency ({tmax} threads), round {rnd + 1}/{a.rounds}")
            for n in M8:
                b = R["models"][n]["batch8"]
                for eng in rotate(["onnxc"] + a.engines, rnd):
                    if eng == "onnxc":
                        b["onnxc"].append(ours_bench(builds8[n]["binary"], M8[n], tmax, a.runs_b8))
                    else:
                        b[eng].append(engine_bench(a, eng, M8[n], tmax, a.runs_b8))
                log(f"  {n}: " + ", ".join(f"{'onnxc' if e == 'onnxc' else ENGINES[e][1]} {b[e][-1]:.1f} ms"
                                           for e in ["onnxc"] + a.engines) + " per batch")

    # 6. ablation
    for n in a.ablation_models:
        R["ablation"][n] = {var: {str(t): [] for t in a.threads} for var in ablation_builds[n]}
    for rnd in range(a.rounds if a.ablation_models else 0):
        log(f"ablation, round {rnd + 1}/{a.rounds}")
        for n in a.ablation_models:
            variants = list(ablation_builds[n].items())
            if rnd % 2:
                variants.reverse()
            for var, binary in variants:
                for t in a.threads:
                    R["ablation"][n][var][str(t)].append(ours_bench(binary, M1[n], t, a.runs))
                log(f"  {n} {var}: " + ", ".join(f"{t} thr {R['ablation'][n][var][str(t)][-1]:.1f} ms" for t in a.threads))

    log("FMA probe")
    peaks.append(probe(a, a.threads))
    log("  " + ", ".join(f"{t} thr {peaks[1][t]:.1f} GFLOP/s" for t in a.threads))
    R["peak"] = {str(t): max(p[t] for p in peaks) for t in a.threads}
    R["peak_probes"] = [{str(t): p[t] for t in a.threads} for p in peaks]
    R["load"][1] = os.getloadavg()[0]
    R["elapsed_s"] = time.time() - t_start
    R["args"] = {k: v for k, v in vars(a).items() if k != "openvino_seen"}

    log(f"measured in {R['elapsed_s'] / 60:.1f} min")
    write_outputs(a, R)


def write_outputs(a, R):
    path_md = os.path.join(a.out, "cpu.md")
    path_png = None if a.no_chart else os.path.join(a.out, "cpu.png")
    R["args"]["note"] = a.note
    with open(os.path.join(a.out, "cpu.json"), "w") as f:
        json.dump(R, f, indent=1)
    R = upgrade(R)
    if path_png:
        write_chart(a, R, path_png)
    write_report(a, R, path_md, path_png)
    log(f"wrote {path_md}" + (f", {path_png}" if path_png else "") + " and cpu.json")
    with open(path_md) as f:
        print(f.read())


if __name__ == "__main__":
    main()
