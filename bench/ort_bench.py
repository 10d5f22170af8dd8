#!/usr/bin/env python3
"""bench/ort_bench.py — ONNX Runtime (CPU provider) side of bench/run_bench.py and bench/parallel.py:
one model, one process, the same input file as the onnxc binary.

Usage: PYTHON bench/ort_bench.py MODEL.onnx --threads N [--runs R] [--input NAME=FILE.npy]...
                                 [--output FILE.bin] [--inter-op M]

PYTHON is the project's .venv/bin/python (the onnxruntime of requirements.txt) or any Python with
numpy and onnxruntime (bench/parallel.py --ort-python, e.g. a GPU machine's host). The session
uses the CPU provider, N intra-op threads, one inter-op thread, sequential execution and graph
optimisation level "all"; --inter-op M: parallel execution (independent nodes side by side) with M
inter-op threads (bench/parallel.py). Inputs are float32 .npy files, one per named graph input.
The first run's first output is written to --output as raw little-endian float32 (run_bench.py
compares it with onnxc's), then R more runs are timed (R = 0: only the first result). Prints one
JSON line:
  {"load_ms", "create_ms", "first_ms", "first_result_ms", "median_ms", "min_ms", "runs", "version"}
load_ms: `import onnxruntime` (numpy is imported before it); create_ms: InferenceSession();
first_ms: the first run; first_result_ms: from the process's start (the kernel's start time in
/proc/self/stat, in clock ticks: 10 ms on most kernels; where that is unreadable, from this
script's first line, which leaves out the interpreter's start) to the end of the first run.
Errors (a missing or malformed input file, a model ONNX Runtime rejects) print one line and exit 1.
Gaps: float32 inputs and outputs only.

ov_bench.py (OpenVINO) shares the command line, the input reading and the JSON line with this
file (it imports it), so both engines are fed and timed the same way.
"""
import time

T_SCRIPT = time.monotonic()  # as early as possible: the fallback origin of first_result_ms

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402


def process_start():
    """The process's start on the time.monotonic() clock: /proc/self/stat's start time (clock
    ticks since boot) against CLOCK_BOOTTIME, or this script's first line where that fails."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start_since_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - start_since_boot
        return time.monotonic() - age if 0 <= age < 3600 else T_SCRIPT
    except (OSError, ValueError, IndexError, AttributeError):
        return T_SCRIPT


def parse_args(prog, extra=None):
    """The command line both engines share; `extra(ap)` adds an engine's own options."""
    ap = argparse.ArgumentParser(prog=prog, description=f"{prog}: one model, .npy inputs, first output as raw "
                                 "float32, JSON timings (see the opening comment)")
    ap.add_argument("model", help="MODEL.onnx")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads (default 1)")
    ap.add_argument("--runs", type=int, default=10, help="timed runs after the first (default 10; 0: first result only)")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="a graph input (repeatable)")
    ap.add_argument("--output", metavar="FILE.bin", help="the first run's first output, raw little-endian float32")
    if extra:
        extra(ap)
    a = ap.parse_args()
    if a.threads < 1 or a.runs < 0:
        ap.error("--threads must be >= 1 and --runs >= 0")
    for spec in a.input:
        if "=" not in spec or spec.startswith("="):
            ap.error(f"--input {spec!r}: NAME=FILE.npy expected")
    return a


def read_inputs(specs):
    """{name: float32 C-contiguous array} from NAME=FILE.npy specs; ValueError on a bad file."""
    import numpy as np
    feeds = {}
    for spec in specs:
        name, path = spec.split("=", 1)
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise ValueError(f"{path}: not a readable .npy file ({e})") from None
        if not isinstance(arr, np.ndarray) or arr.dtype != np.float32:
            raise ValueError(f"{path}: dtype {getattr(arr, 'dtype', type(arr).__name__)}, float32 expected")
        feeds[name] = np.ascontiguousarray(arr)
    return feeds


def check_inputs(feeds, names):
    for name in names:
        if name not in feeds:
            raise ValueError(f"no --input for graph input '{name}'")
    for name in feeds:
        if name not in names:
            raise ValueError(f"--input {name}: the model has no input of that name (it has {', '.join(names)})")


def write_output(path, arr):
    import numpy as np
    if arr.dtype != np.float32:
        raise ValueError(f"the first output is {arr.dtype}, float32 expected")
    np.ascontiguousarray(arr, dtype="<f4").tofile(path)


def timed(run, runs):
    """(median ms, min ms) of `runs` calls of run(); (None, None) for none."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        run()
        times.append(1e3 * (time.perf_counter() - t))
    if not times:
        return None, None
    times.sort()
    n = len(times)
    return (times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])), times[0]


def report(t0, t1, t2, t3, t4, median_ms, min_ms, runs, **extra):
    """The JSON line: t0/t1 around the engine's import, t1/t2 model loading, t3/t4 the first run."""
    rec = {"load_ms": 1e3 * (t1 - t0), "create_ms": 1e3 * (t2 - t1), "first_ms": 1e3 * (t4 - t3),
           "first_result_ms": 1e3 * (t4 - process_start()), "median_ms": median_ms, "min_ms": min_ms, "runs": runs}
    rec.update(extra)
    print(json.dumps(rec), flush=True)


def fail(prog, e):
    """One line on stderr (engines' messages can span several) and exit status 1."""
    msg = " ".join(line.strip() for line in str(e).splitlines() if line.strip()) or type(e).__name__
    print(f"{prog}: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def main():
    prog = "ort_bench.py"
    a = parse_args(prog, lambda ap: ap.add_argument(
        "--inter-op", type=int, default=0, metavar="M",
        help="parallel execution with M inter-op threads (default: sequential, one inter-op thread)"))
    try:
        if a.inter_op < 0:
            raise ValueError("--inter-op must be >= 0")
        if not os.path.isfile(a.model):
            raise ValueError(f"{a.model}: no such file")
        importlib.import_module("numpy")  # before the timed import: onnxruntime's own load only
        t0 = time.monotonic()
        import onnxruntime as ort
        t1 = time.monotonic()
        o = ort.SessionOptions()
        o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        o.intra_op_num_threads = a.threads
        o.execution_mode = ort.ExecutionMode.ORT_PARALLEL if a.inter_op else ort.ExecutionMode.ORT_SEQUENTIAL
        o.inter_op_num_threads = a.inter_op or 1
        session = ort.InferenceSession(a.model, o, providers=["CPUExecutionProvider"])
        t2 = time.monotonic()
        feeds = read_inputs(a.input)
        check_inputs(feeds, [i.name for i in session.get_inputs()])
        t3 = time.monotonic()
        first = session.run(None, feeds)[0]  # every output, as onnxc's binary computes them
        t4 = time.monotonic()
        if a.output:
            write_output(a.output, first)
        med, best = timed(lambda: session.run(None, feeds), a.runs)
    except Exception as e:  # one line for the caller's log: bad files, ONNX Runtime's own errors
        fail(prog, e)
    report(t0, t1, t2, t3, t4, med, best, a.runs, version=ort.__version__,
           intra_op_threads=a.threads, inter_op_threads=a.inter_op or 1,
           execution_mode="parallel" if a.inter_op else "sequential")


if __name__ == "__main__":
    main()
