#!/usr/bin/env python3
"""bench/parallel.py — loop parallelism against fork-join task regions, next to ONNX Runtime.

For each model (default: googlenet, densenet201, efficientnet_b0, resnet50 at batch 1 and
resnet50 at batch 8, from the zoo of models/export_zoo.py) it builds the binary four ways with
compile-model: --parallel loop (every node in turn, its loops split across the threads), --parallel
task (every fork-join region the schedule pass finds: independent branches side by side) with
--task-form groups (each list on a group of the threads) and with --task-form omp-tasks (the
default: each node of a region an OpenMP task with depend clauses, its loops taskloops) and the
default --parallel auto (regions only where the cost model predicts a gain;
when it picks none its C is the loop build's, and the loop timings stand for it); a model at
batch N >= 2 also --parallel batch (its items side by side, one thread and one arena each, the
model compiled at batch 1), which auto picks when it can (its C then is the batch build's). It then times,
at each --threads count, in alternating order over --rounds rounds (median of --runs runs per
process, median of the rounds): the onnxc binaries, and ONNX Runtime (bench/ort_bench.py, CPU
provider, graph optimisation "all") with sequential execution and with parallel execution
(inter-op threads = the thread count). Next to the measurements: the predicted
time of the regions in each form against the tasks in turn (compile-model --dump-ir --task-form
groups|omp-tasks) and the list schedule's speed-up at 1-16 threads. The task build's output is checked
against PyTorch's (NAME.ref.npy) within --tol of its max magnitude. --omp-region-op adds the
loop build compiled with --omp-region op (a fork/join per parallel loop nest; every other build
runs its nodes in one OpenMP parallel region per run), for the cost of those fork/joins. --tune
adds, at each thread count, what `compile-model --parallel tune --threads N` picks on this machine
and the lowest ratio to loop's time it measured itself for another build (its own builds, timed
before the rounds).

Writes OUT/NAME.md and OUT/NAME.json (default bench/results/parallel.md, --out-name NAME), again
after every round: a run stopped by a time limit keeps the rounds it finished (the header then
says "K of N rounds").

    .venv/bin/python bench/parallel.py                 # the committed bench/results/parallel.md
    .venv/bin/python bench/parallel.py --models googlenet --rounds 3
    .venv/bin/python bench/parallel.py --models resnet50_b8 googlenet_b8 densenet201_b8 --out-name parallel_batch8

Needs what bench/run.sh installs (build/compile-model; onnxruntime in the project's .venv, which
runs this script) and the zoo exports in models/out (bench/run.sh --export-missing writes them;
batch 8: NAME_b8.*). ort_bench.py runs under this script's Python, or under --ort-python PYTHON
(any Python with numpy and onnxruntime, e.g. a GPU machine's host, where bench/gpu_run.sh's
cpu_scaling step passes its own):

    python3 bench/parallel.py --ort-python python3 --threads 1 2 4 8 16 --models googlenet resnet50 \
        --out-name parallel_16core
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run_bench as rb  # noqa: E402  (the benchmark's process, build and model helpers)

DEFAULT = ["googlenet", "densenet201", "efficientnet_b0", "resnet50", "resnet50_b8"]
MODES = ["loop", "task", "auto"]  # and "batch" for a model at batch N >= 2


def model_of(a, spec):
    m = re.fullmatch(r"(.+)_b(\d+)", spec)
    return rb.Model(a, m.group(1), int(m.group(2))) if m else rb.Model(a, spec, 1)


def ort_time(a, model, threads, inter_op):
    """bench/ort_bench.py under --ort-python (default: this Python): median ms of a.runs runs."""
    cmd = [a.ort_python, os.path.join(HERE, "ort_bench.py"), model.onnx, "--threads", str(threads), "--runs", str(a.runs),
           "--input", f"{model.input_name}={model.input}"]
    if inter_op:
        cmd += ["--inter-op", str(inter_op)]
    out, _ = rb.check_proc(cmd, f"ONNX Runtime on {model.stem}")
    return json.loads(out.strip().splitlines()[-1])["median_ms"]


def predictions(a, model, threads, form):
    """compile-model --dump-ir --parallel task --task-form FORM at `threads`: regions, predicted
    time with and without them (in that form), and the list schedule's predicted speed-ups."""
    with tempfile.TemporaryDirectory() as tmp:
        out, _ = rb.check_proc([a.compiler, model.onnx, "-o", tmp, "--name", "m", "--emit", "c", "--parallel", "task",
                                "--task-form", form, "--threads", str(threads), "--dump-ir", "--quiet"],
                               f"compile-model --dump-ir {model.stem}")
    m = re.search(r"^fork-join regions at \d+ threads?: (\d+); predicted ([0-9.]+) ms with them, ([0-9.]+) ms", out, re.M)
    lst = re.search(r"^predicted speed-up of the list schedule[^:]*:(.*)$", out, re.M)
    sched = {int(t): float(x) for t, x in re.findall(r"(\d+) thr ([0-9.]+)", lst.group(1))} if lst else {}
    return {"regions": int(m.group(1)), "with_ms": float(m.group(2)), "loop_ms": float(m.group(3)), "list_schedule": sched}


def regions_in(build_out):
    m = re.search(r"^schedule: (\d+) fork-join regions? \((\d+) lists", build_out, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def check_output(a, model, binary):
    import numpy as np
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.npy")
        rb.check_proc([binary, "--input", f"{model.input_name}={model.input}", "--output", f"{model.output_name}={path}",
                       "--quiet"], f"{binary} (output check)")
        ours = np.load(path).astype(np.float64).ravel()
    ref = np.load(model.ref).astype(np.float64).ravel()
    err = float(np.abs(ours - ref).max() / np.abs(ref).max())
    if not err <= a.tol:
        rb.die(f"{model.stem}: the --parallel task build differs from PyTorch: {err:.3g} x max |ref| > --tol {a.tol}")
    return err


def build(a, model, mode, extra=(), tag=None):
    out_dir = os.path.join(a.work, f"{model.stem}_{tag or mode}")
    # --parallel task on thread groups here; the task_omp build passes --task-form omp-tasks.
    extra = list(extra) or (["--task-form", "groups"] if mode == "task" else [])
    cmd = [a.compiler, model.onnx, "-o", out_dir, "--name", model.stem, "--parallel", mode, *extra]
    out, wall = rb.check_proc(cmd, f"compile-model {model.stem} --parallel {mode} {' '.join(extra)}")
    with open(os.path.join(out_dir, f"{model.stem}.c")) as f:
        c = f.read()
    return {"binary": os.path.join(out_dir, model.stem), "regions": regions_in(out), "c": c, "wall_s": wall}


def tune_pick(a, model, threads):
    """compile-model --parallel tune --threads N --emit c: the build it picks, the times it measured (ms) and each
    build's time against loop's (the median of the rounds' ratios)."""
    out_dir = os.path.join(a.work, f"{model.stem}_tune{threads}")
    out, _ = rb.check_proc([a.compiler, model.onnx, "-o", out_dir, "--name", model.stem, "--parallel", "tune",
                            "--threads", str(threads), "--emit", "c"], f"compile-model {model.stem} --parallel tune --threads {threads}")
    times = {k: float(v) for k, v in re.findall(r"^tune: --parallel (\w+) +([0-9.]+) ms", out, re.M)}
    ratios = {k: float(v) for k, v in re.findall(r"^tune: --parallel (\w+) +[0-9.]+ ms +\(([0-9.]+) of loop\)", out, re.M)}
    pick = re.search(r"^tune: (?:one candidate: )?--parallel (\w+)(?: \(|$)", out, re.M)
    if not pick:
        rb.die(f"{model.stem}: no pick in compile-model --parallel tune's output:\n{out}")
    return {"pick": pick.group(1), "times": times, "ratios": ratios}


def fmt_tune(x):
    """The pick, and in brackets the ratio to loop's time tune measured for the best other build."""
    if not x:
        return "–"
    r = x.get("ratios", {})
    return x["pick"] + (f" ({min(r.values()):.2f})" if r else "")


def med(xs):
    return statistics.median(xs) if xs else None


def fmt_ms(x):
    return "–" if x is None else (f"{x:.1f}" if x >= 10 else f"{x:.2f}")


def write_md(a, R, path):
    done = R.get("rounds_done", a.rounds)
    rounds = f"{a.rounds}" if done >= a.rounds else f"{done} of {a.rounds}"
    L = ["# Loop parallelism against fork-join task regions, next to ONNX Runtime", "",
         f"Machine: {R['machine'].get('Model name', '?')}, {R['machine'].get('CPU(s)', '?')} cores; {R['date']}; "
         f"load average at the start {R['load'][0]:.2f}, at the end {R['load'][1]:.2f}.  ",
         f"Command: `{R['command']}` ({rounds} rounds × {a.runs} runs, medians of the per-round medians, "
         f"ms per inference).  ",
         "onnxc: `--parallel loop` (each node in turn, loops split across the threads), `--parallel task` (every "
         "fork-join region: independent branches side by side) with `--task-form groups` (each list on a group of the "
         "threads: one thread each where there are no more threads than lists) and with `--task-form omp-tasks` (the "
         "default: each node of a region an OpenMP task with depend clauses, its loops taskloops that idle threads "
         "share), `--parallel batch` (models at batch "
         "N >= 2: the items side by side, one thread and one arena each), `--parallel auto` (the default: batch where it "
         "applies, else regions only where the cost model predicts a gain; its C is then the batch or the loop "
         f"build's). ONNX Runtime {R.get('ort', '1.30 (JavaScript package)')}, graph optimisation \"all\": sequential "
         "execution, and parallel execution with as many inter-op threads as intra-op threads.  ",
         "Predicted: compile-model `--dump-ir --parallel task` at that thread count — the time with every region, in "
         "the form of the column before (`--task-form`), against the tasks in turn (the cost model of "
         "`passes/schedule.cc`), and the list schedule's speed-up over one thread.", ""]
    # --omp-region-op: the loop build with a fork/join per parallel loop nest, next to the default
    # (one parallel region per run).
    op = any(T.get("loop_op") for M in R["models"].values() for T in M["threads"].values())
    if op:
        L[-2] += ("  \nloop, --omp-region op: the loop build with a fork/join per parallel loop nest instead of one OpenMP "
                  "parallel region per run (the default, which every other onnxc column uses).")
    tune = any(M.get("tune") for M in R["models"].values())
    if tune:
        L[-2] += ("  \ntune: what `compile-model --parallel tune --threads N` picked (its own builds at N threads, timed by it "
                  "before the rounds), and in brackets the lowest ratio to loop's time it measured for another build (the median "
                  "of its rounds' ratios).")

    def ratio(p):  # predicted time with every region / one task after another
        return "–" if not p or not p["loop_ms"] or p["regions"] == 0 else f"{p['with_ms'] / p['loop_ms']:.2f}"

    for stem, M in R["models"].items():
        batch_err = "" if M.get("batch_error") is None else f"; batch build: {M['batch_error']:.1e}"
        L += [f"## {stem}", "",
              f"Regions with `--parallel task`: {M['regions_task'][0]} ({M['regions_task'][1]} lists); with the "
              f"default `auto`: {M['regions_auto'][0]}. Task build vs PyTorch: max error {M['task_error']:.1e} of the "
              f"output's max magnitude{batch_err}"
              + (f"; with OpenMP tasks: {M['task_omp_error']:.1e}" if M.get("task_omp_error") is not None else "") + ".", "",
              "| threads | loop | task, thread groups | that / loop | predicted | task, OpenMP tasks | that / loop | predicted | batch | batch / loop | auto | ORT sequential "
              "| ORT parallel | auto / best ORT | list schedule: predicted speed-up |" + (" loop, --omp-region op | loop / that |" if op else "")
              + (" tune |" if tune else ""),
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if op else "") + ("---|" if tune else "")]
        for t in a.threads:
            T = M["threads"][str(t)]
            loop, task, auto, batch = med(T["loop"]), med(T["task"]), med(T["auto"]), med(T.get("batch", []))
            ors, orp = med(T["ort_seq"]), med(T["ort_par"])
            pred = M["predicted"][str(t)]
            best = min(x for x in (ors, orp) if x is not None)
            sched = pred["list_schedule"].get(t, pred["list_schedule"].get(str(t)))  # str keys after a json round trip (--render)
            tomp = med(T.get("task_omp", []))
            L.append(f"| {t} | {fmt_ms(loop)} | {fmt_ms(task)} | {task / loop:.2f} | {ratio(pred)} | "
                     f"{fmt_ms(tomp)}{' (= task)' if M.get('task_omp_is_task') else ''} | {'–' if tomp is None else f'{tomp / loop:.2f}'} | "
                     f"{ratio(M.get('predicted_omp', {}).get(str(t)))} | "
                     f"{fmt_ms(batch)} | {'–' if batch is None else f'{batch / loop:.2f}'} | "
                     f"{fmt_ms(auto)}{' (= loop)' if M['auto_is_loop'] else ''}"
                     f"{' (= batch)' if M.get('auto_is_batch') else ''} | {fmt_ms(ors)} | {fmt_ms(orp)} | "
                     f"{auto / best:.2f} | {'–' if sched is None else f'{sched:.2f}'} |"
                     + (f" {fmt_ms(med(T.get('loop_op', [])))} | {loop / med(T['loop_op']):.2f} |" if op and T.get("loop_op") else
                        (" – | – |" if op else ""))
                     + (f" {fmt_tune(M.get('tune', {}).get(str(t)))} |" if tune else ""))
        L.append("")
    L += ["## Reading", ""] + [f"- {x}" for x in R.get("reading", [])] + [""]
    with open(path, "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=DEFAULT, metavar="NAME", help="zoo stems, NAME_b8 for batch 8")
    ap.add_argument("--zoo", default=os.path.join(ROOT, "models", "out"))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per process (default 20)")
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "onnxc-parallel"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--out-name", default="parallel", help="OUT/NAME.md and OUT/NAME.json (default parallel)")
    ap.add_argument("--omp-region-op", action="store_true",
                    help="also time the loop build with --omp-region op (a fork/join per parallel loop nest) next to the "
                         "default one parallel region per run")
    ap.add_argument("--tune", action="store_true",
                    help="also record what compile-model --parallel tune picks at each thread count (3 more builds each)")
    ap.add_argument("--reading", action="append", default=[], help="a line for the closing section (repeatable)")
    ap.add_argument("--render", metavar="PARALLEL.json",
                    help="measure nothing: write parallel.md into --out again from an earlier run's json, with this "
                         "call's --reading lines")
    ap.add_argument("--ort-python", default=sys.executable, metavar="PYTHON",
                    help="the Python that runs bench/ort_bench.py: one with numpy and onnxruntime (default: this one, "
                         "e.g. .venv/bin/python; python3 on a GPU machine's host)")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as f:
            R = json.load(f)
        R["reading"] = a.reading
        out, name = a.out, a.out_name
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(R, f, indent=1)
        a = argparse.Namespace(**R["args"])
        write_md(a, R, os.path.join(out, name + ".md"))
        return
    a.threads = sorted(set(a.threads))
    if a.rounds < 1 or a.runs < 1 or min(a.threads) < 1:
        ap.error("rounds, runs and threads must be >= 1")
    p = subprocess.run([a.ort_python, "-c", "import onnxruntime, numpy; print(onnxruntime.__version__)"], capture_output=True, text=True)
    if p.returncode != 0:
        rb.die(f"--ort-python {a.ort_python}: cannot import onnxruntime and numpy: {p.stderr.strip()[-300:]} "
               "(bash tools/setup.sh installs them into .venv)")
    ort_name = f"{p.stdout.strip()} (Python onnxruntime)"
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    py = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(ROOT + os.sep) else sys.executable
    command = f"{py} bench/parallel.py" + "".join(" " + x for x in sys.argv[1:])
    R = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "command": command, "load": [os.getloadavg()[0], None],
         "args": {"threads": a.threads, "rounds": a.rounds, "runs": a.runs},
         "machine": rb.machine_info(a), "models": {}, "reading": a.reading}
    R["ort"] = ort_name
    models = [model_of(a, s) for s in a.models]
    binaries = {}
    for m in models:
        modes = MODES + (["batch"] if m.batch > 1 else [])
        rb.log(f"building {m.stem} ({', '.join(modes)})")
        B = {mode: build(a, m, mode) for mode in modes}
        # The fork-join regions as OpenMP tasks (--task-form omp-tasks) instead of thread groups;
        # with no region its C is the task build's, whose timings stand for it.
        B["task_omp"] = build(a, m, "task", ["--task-form", "omp-tasks"], "task_omp")
        task_omp_is_task = B["task_omp"]["c"] == B["task"]["c"]
        modes = modes + ["task_omp"]
        if a.omp_region_op:
            B["loop_op"] = build(a, m, "loop", ["--omp-region", "op"], "loop_op")
            modes = modes + ["loop_op"]
        auto_is_loop = B["auto"]["c"] == B["loop"]["c"]
        auto_is_batch = "batch" in B and B["auto"]["c"] == B["batch"]["c"]
        binaries[m.stem] = {mode: B[mode]["binary"] for mode in modes}
        R["models"][m.stem] = {
            "regions_task": B["task"]["regions"], "regions_auto": B["auto"]["regions"], "auto_is_loop": auto_is_loop,
            "auto_is_batch": auto_is_batch, "batch_error": check_output(a, m, B["batch"]["binary"]) if "batch" in B else None,
            "task_error": check_output(a, m, B["task"]["binary"]),
            "task_omp_error": check_output(a, m, B["task_omp"]["binary"]), "task_omp_is_task": task_omp_is_task,
            "predicted": {str(t): predictions(a, m, t, "groups") for t in a.threads},
            "predicted_omp": {str(t): predictions(a, m, t, "omp-tasks") for t in a.threads},
            "threads": {str(t): {k: [] for k in ["loop", "task", "task_omp", "auto", "batch", "loop_op", "ort_seq", "ort_par"]} for t in a.threads}}
        if a.tune:
            R["models"][m.stem]["tune"] = {str(t): tune_pick(a, m, t) for t in a.threads}
            rb.log("  tune picks: " + ", ".join(f"{t} thr {fmt_tune(x)}" for t, x in R["models"][m.stem]["tune"].items()))
        rb.log(f"  regions: task {B['task']['regions']}, auto {B['auto']['regions']}"
               f"{' (auto = loop)' if auto_is_loop else ''}; task vs PyTorch {R['models'][m.stem]['task_error']:.1e}")
    engines = ["loop", "task", "task_omp", "auto", "batch"] + (["loop_op"] if a.omp_region_op else []) + ["ort_seq", "ort_par"]
    for rnd in range(a.rounds):
        rb.log(f"round {rnd + 1}/{a.rounds}")
        for m in models:
            M = R["models"][m.stem]
            for t in a.threads:
                order = engines[rnd % len(engines):] + engines[:rnd % len(engines)]
                for e in order:
                    if ((e == "auto" and (M["auto_is_loop"] or M["auto_is_batch"])) or (e == "batch" and e not in binaries[m.stem])
                            or (e == "task_omp" and M["task_omp_is_task"])):
                        continue
                    if e.startswith("ort"):
                        x = ort_time(a, m, t, t if e == "ort_par" else 0)
                    else:
                        x = rb.ours_bench(binaries[m.stem][e], m, t, a.runs)
                    M["threads"][str(t)][e].append(x)
                if M["auto_is_loop"] or M["auto_is_batch"]:
                    M["threads"][str(t)]["auto"] = M["threads"][str(t)]["loop" if M["auto_is_loop"] else "batch"]
                if M["task_omp_is_task"]:
                    M["threads"][str(t)]["task_omp"] = M["threads"][str(t)]["task"]
                T = M["threads"][str(t)]
                rb.log(f"  {m.stem} {t} thr: " + ", ".join(f"{e} {T[e][-1]:.2f}" for e in engines if T[e]))
        # The results so far, after every round: a run cut short keeps the rounds it finished.
        R["rounds_done"] = rnd + 1
        R["load"][1] = os.getloadavg()[0]
        with open(os.path.join(a.out, a.out_name + ".json"), "w") as f:
            json.dump(R, f, indent=1)
        write_md(a, R, os.path.join(a.out, a.out_name + ".md"))
        rb.log(f"wrote {a.out}/{a.out_name}.md and {a.out_name}.json ({rnd + 1} of {a.rounds} rounds)")


if __name__ == "__main__":
    main()
