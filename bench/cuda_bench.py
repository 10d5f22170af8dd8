#!/usr/bin/env python3
"""bench/cuda_bench.py — the CUDA backend on a GPU: generated kernels against cuDNN/cuBLAS.

For each model and batch: compile-model --device cuda --emit exe twice, once with the generated
kernels and once with --gpu-libs cudnn,cublas (every Conv through cuDNN, every Gemm/MatMul
through cuBLAS; bias and epilogues stay generated), builds run in parallel; then, one at a time
on the GPU, each binary runs its model's input (NAME.input.npy), its output is compared with
NAME.ref.npy (1e-3 of the reference's max magnitude, as the zoo tests), and --bench N times N
more runs (NAME_run: input copy in, the kernels, output copy back, synchronise; the median and
the minimum). Writes RESULTS/cuda.json and RESULTS/cuda.md: per model and batch the two
latencies, generated / library, throughput, and whether each output matched.

Models: ZOO/NAME.onnx with NAME.input.npy and NAME.ref.npy, batch-32 variants as NAME_b32.*
(models/export_zoo.py [--batch 32]; on a GPU machine without Debian's torch,
bench/gpu_models.py unpack --ref rebuilds them with ONNX Runtime references).

--precisions fp32,tf32,fp16 also builds both paths with --gpu-precision tf32 and fp16 (tensor
cores: Conv's generated implicit GEMM, cuDNN's and cuBLAS's math modes), for the models of
--precision-models (default: all), checked at 1e-2 instead of 1e-3, with the share of images
whose top-1 class matches the reference's; cuda.md gets a second table for them.

Usage: python3 bench/cuda_bench.py --zoo DIR [--models ...] [--batches 1,32] [--results DIR]
       [--compiler build/compile-model] [--runs 50] [--jobs 12] [--precisions fp32,tf32,fp16]
       [--precision-models resnet50 vgg19]
A model or batch that fails to compile, run or match is reported in the table as such, and
the exit status is 1; nothing is left out silently.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = ["resnet50", "googlenet", "mobilenet_v2", "efficientnet_b0", "densenet201", "vgg19"]
PATHS = {"generated": [], "cudnn+cublas": ["--gpu-libs", "cudnn,cublas"]}
TOL = 1e-3
# --gpu-precision tf32 / fp16: operands rounded to 10 mantissa bits.
TOL_REDUCED = 1e-2
PRECISIONS = ["fp32", "tf32", "fp16"]


def tol(precision):
    return TOL if precision == "fp32" else TOL_REDUCED
# A reference that moves by more than this under a 1e-6 change of the input (NAME.sensitivity,
# bench/gpu_models.py) checks nothing at TOL: its model's mismatches are reported as unchecked.
ILL_CONDITIONED = TOL / 10


def sensitivity(a, s):
    try:
        return float(open(os.path.join(a.zoo, s + ".sensitivity")).read())
    except (OSError, ValueError):
        return None


def unchecked(r):
    """Whether r's reference is too ill-conditioned to check it (ILL_CONDITIONED)."""
    return (r.get("ref_sensitivity") or 0) > ILL_CONDITIONED


def stem(model, batch):
    return model if batch == 1 else f"{model}_b{batch}"


def build(a, model, batch, path, precision):
    s = stem(model, batch)
    d = os.path.join(a.work, f"{s}.{path.replace('+', '_')}.{precision}")
    t0 = time.time()
    extra = [] if precision == "fp32" else ["--gpu-precision", precision]
    p = subprocess.run([a.compiler, os.path.join(a.zoo, s + ".onnx"), "-o", d, "--name", model, "--device", "cuda",
                        "--emit", "exe", "--quiet"] + PATHS[path] + extra, capture_output=True, text=True)
    return {"dir": d, "rc": p.returncode, "log": (p.stdout + p.stderr)[-3000:], "build_s": time.time() - t0}


def run(a, model, batch, b, precision):
    s = stem(model, batch)
    out = os.path.join(b["dir"], "output.npy")
    runs = a.runs if batch == 1 else max(5, a.runs // 5)
    p = subprocess.run([os.path.join(b["dir"], model), "--input", f"input={os.path.join(a.zoo, s + '.input.npy')}",
                        "--output", f"output={out}", "--bench", str(runs)], capture_output=True, text=True, timeout=600)
    r = {"rc": p.returncode, "log": (p.stdout + p.stderr)[-3000:]}
    m = re.search(r"latency: median ([0-9.]+) ms, min ([0-9.]+) ms over (\d+) runs", p.stdout)
    if p.returncode == 0 and m:
        r["median_ms"], r["min_ms"], r["runs"] = float(m.group(1)), float(m.group(2)), int(m.group(3))
        ref = np.load(os.path.join(a.zoo, s + ".ref.npy")).astype(np.float64).ravel()
        y = np.load(out).astype(np.float64).ravel()
        if ref.size != y.size or not np.all(np.isfinite(y)):
            r["error"] = float("inf")
        else:
            r["error"] = float(np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30))
            rows_ref, rows_y = ref.reshape(batch, -1), y.reshape(batch, -1)
            r["top1"] = float(np.mean(rows_ref.argmax(axis=1) == rows_y.argmax(axis=1)))
        r["match"] = r["error"] <= tol(precision)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zoo", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--work", default="/tmp/onnxc-cuda-bench")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--runs", type=int, default=50, help="timed runs at batch 1 (a fifth, at least 5, above)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compile-model + nvcc builds")
    ap.add_argument("--precisions", default="fp32", help="comma-separated: fp32, tf32, fp16 (--gpu-precision)")
    ap.add_argument("--precision-models", nargs="+", default=None, help="the models built at the precisions other than fp32 (default: all)")
    ap.add_argument("--from-json", default="", metavar="FILE", help="no runs: write FILE's .md again from FILE (a cuda.json)")
    ap.add_argument("--note", action="append", default=[], help="a line for the notes under the tables (with --from-json: added to FILE)")
    a = ap.parse_args()
    if a.from_json:
        R = json.load(open(a.from_json))
        if a.note:
            R["notes"] = R.get("notes", []) + a.note
            with open(a.from_json, "w") as f:
                json.dump(R, f, indent=1)
        write_md(R, os.path.splitext(a.from_json)[0] + ".md", a)
        return
    batches = [int(x) for x in a.batches.split(",")]
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    if not gpu:
        sys.exit("cuda_bench.py: no GPU (nvidia-smi lists none)")
    precisions = a.precisions.split(",")
    for q in precisions:
        if q not in PRECISIONS:
            sys.exit(f"cuda_bench.py: unknown precision '{q}' (known: {', '.join(PRECISIONS)})")
    cases = [(m, b, p, q) for q in precisions for m in a.models for b in batches for p in PATHS
             if os.path.exists(os.path.join(a.zoo, stem(m, b) + ".onnx"))
             and (q == "fp32" or a.precision_models is None or m in a.precision_models)]
    t0 = time.time()
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        builds = dict(zip(cases, ex.map(lambda c: build(a, *c), cases)))
    print(f"cuda_bench.py: {len(cases)} builds in {time.time() - t0:.0f} s", flush=True)
    R = {"gpu": gpu, "date": time.strftime("%Y-%m-%d %H:%M"), "host_cpus": os.cpu_count(), "zoo": a.zoo, "cases": [], "notes": a.note}
    ok = True
    for c in cases:
        b = builds[c]
        r = {"model": c[0], "batch": c[1], "path": c[2], "precision": c[3], "build_s": round(b["build_s"], 1),
             "ref_sensitivity": sensitivity(a, stem(c[0], c[1]))}
        if b["rc"] != 0:
            r["failed"] = "build: " + b["log"]
        else:
            x = run(a, *c[:2], b, c[3])
            if x["rc"] != 0 or "median_ms" not in x:
                r["failed"] = "run: " + x["log"]
            else:
                r.update({k: x[k] for k in ("median_ms", "min_ms", "runs", "error", "match", "top1") if k in x})
        ok = ok and "failed" not in r and (r.get("match", False) or unchecked(r))
        print(json.dumps({k: v for k, v in r.items() if k != "failed"}), r.get("failed", "")[-600:], flush=True)
        R["cases"].append(r)
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "cuda.json"), "w") as f:
        json.dump(R, f, indent=1)
    write_md(R, os.path.join(a.results, "cuda.md"), a)
    sys.exit(0 if ok else 1)


def write_md(R, path, a):
    L = ["# The CUDA backend on a GPU: generated kernels against cuDNN/cuBLAS", "",
         f"GPU: {R['gpu']}; host {R['host_cpus']} CPUs; {R['date']}. `bench/cuda_bench.py` "
         f"(float32; latency of `NAME_run`: input copy to the GPU, the kernels, output copy back, synchronise; "
         f"median of the timed runs after a first run). Errors are max |out − ref| / max |ref| against the "
         f"model's reference output (NAME.ref.npy), which must be at most {TOL:g}. \"moves\" is how far that reference "
         f"itself moves when the input is scaled by 1 + 1e-6 (bench/gpu_models.py): above {ILL_CONDITIONED:g} the "
         f"reference cannot check a result at {TOL:g}, and a larger error is reported as unchecked, not as a pass.", "",
         "| model | batch | generated ms | cuDNN/cuBLAS ms | generated / libraries | images/s generated | images/s libraries | error generated | error libraries | reference moves |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    by = {(c["model"], c["batch"], c["path"]): c for c in R["cases"] if c.get("precision", "fp32") == "fp32"}
    for m, b in sorted({(c["model"], c["batch"]) for c in R["cases"]}, key=lambda k: (k[1], MODELS.index(k[0]) if k[0] in MODELS else 99)):
        g, l = by.get((m, b, "generated"), {}), by.get((m, b, "cudnn+cublas"), {})

        def ms(c):
            return f"{c['median_ms']:.3f}" if "median_ms" in c else ("failed" if c else "—")

        def ips(c):
            return f"{1e3 * b / c['median_ms']:.0f}" if "median_ms" in c else "—"

        def err(c):
            if "error" not in c:
                return "—"
            if c["match"]:
                return f"{c['error']:.1e}"
            return f"{c['error']:.1e} " + ("unchecked" if unchecked(c) else "MISMATCH")
        sens = g.get("ref_sensitivity", l.get("ref_sensitivity"))
        ratio = f"{g['median_ms'] / l['median_ms']:.2f}" if "median_ms" in g and "median_ms" in l else "—"
        L.append(f"| {m} | {b} | {ms(g)} | {ms(l)} | {ratio} | {ips(g)} | {ips(l)} | {err(g)} | {err(l)} | "
                 f"{'—' if sens is None else f'{sens:.1e}'} |")
    reduced = [c for c in R["cases"] if c.get("precision", "fp32") != "fp32"]
    if reduced:
        L += ["", "## --gpu-precision tf32 and fp16 (tensor cores)", "",
              f"Convolutions (the generated implicit GEMM, cuDNN) and cuBLAS's products with operands rounded to TF32 or half "
              f"precision, float32 sums and tensors; the generated Gemm/MatMul and the other kernels stay float32. Checked at "
              f"{TOL_REDUCED:g} of the reference's max magnitude; top-1: the share of images whose highest-scoring class is the "
              f"reference's. Speed-up: the fp32 latency of the same path (table above) / this one.", "",
              "| model | batch | path | precision | ms | speed-up over fp32 | error | top-1 |", "|---|---|---|---|---|---|---|---|"]
        for c in sorted(reduced, key=lambda c: (c["batch"], MODELS.index(c["model"]) if c["model"] in MODELS else 99, c["path"], c["precision"])):
            base = by.get((c["model"], c["batch"], c["path"]), {})
            ms = f"{c['median_ms']:.3f}" if "median_ms" in c else "failed"
            up = f"{base['median_ms'] / c['median_ms']:.2f}" if "median_ms" in c and "median_ms" in base else "—"
            e = "—" if "error" not in c else f"{c['error']:.1e}" + ("" if c["match"] else (" unchecked" if unchecked(c) else " MISMATCH"))
            t1 = f"{100 * c['top1']:.0f}%" if "top1" in c else "—"
            L.append(f"| {c['model']} | {c['batch']} | {c['path']} | {c['precision']} | {ms} | {up} | {e} | {t1} |")
    if R.get("notes"):
        L += ["", "Notes:", ""] + [f"- {n}" for n in R["notes"]]
    fails = [c for c in R["cases"] if "failed" in c]
    if fails:
        L += ["", "Failures:", ""] + [f"- {c['model']} batch {c['batch']} {c['path']} {c.get('precision', 'fp32')}: `{c['failed'][-300:].strip()}`"
                                      for c in fails]
    L += ["", "Rerun: `python3 bench/cuda_bench.py --zoo DIR` on a machine with a GPU (see bench/README.md).", ""]
    with open(path, "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
