#!/usr/bin/env python3
"""bench/ov_bench.py — OpenVINO (CPU plugin) side of bench/run_bench.py: one model, one process, the
same .onnx and input file as the onnxc binary and bench/ort_bench.py.

Usage: .venv/bin/python bench/ov_bench.py MODEL.onnx --threads N [--runs R] [--input NAME=FILE.npy]...
                                          [--output FILE.bin] [--precision P] [--perf-count FILE.tsv]

OpenVINO (bench/requirements.txt) reads the .onnx itself (Core().read_model) and compiles it for
"CPU" with the LATENCY performance hint, one stream, INFERENCE_NUM_THREADS = N and
INFERENCE_PRECISION_HINT = f32: on a CPU with bf16 (AVX512_BF16, AMX) the plugin's default
precision is bf16, which would compare a bf16 engine with two f32 ones. --precision P sets another
hint (bf16, f16), --precision default sets none (the plugin's choice). What the compiled model
actually uses is read back with get_property and put in the JSON line: precision
(INFERENCE_PRECISION_HINT), threads (INFERENCE_NUM_THREADS), streams, hint, and default_precision
(what the plugin would choose unasked, Core().get_property("CPU", ...)). The input tensors are set
once on one infer request; each run is InferRequest.infer() (synchronous).

The command line, the inputs (float32 .npy), --output (the first run's first output, raw
little-endian float32) and the JSON line are ort_bench.py's, whose reading and timing code this
script imports: load_ms is `import openvino`, create_ms Core() + read_model + compile_model.
--perf-count FILE.tsv compiles with PERF_COUNT (OpenVINO's per-layer counters) and, after the timed
runs, writes the last run's counters as TSV: name, node type, exec type (the kernel that ran, e.g.
brgconv_avx512_amx_f32, jit_avx512_f32), status, real and CPU time in microseconds, in execution
order — the counterpart of onnxc's --profile. The counters add some overhead to the timed runs.
Errors print one line and exit 1. Gaps: float32 inputs and outputs only; static shapes.
"""
import importlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ort_bench as common  # noqa: E402  (command line, inputs, timing, the JSON line)

PRECISIONS = {"f32": "f32", "bf16": "bf16", "f16": "f16", "default": None}


def type_name(t):
    """ov.Type or its string as the short name OpenVINO's own tools print (f32, bf16)."""
    s = getattr(t, "to_string", lambda: str(t))()
    return {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}.get(s, s)


def write_perf_counts(path, infos):
    with open(path, "w") as f:
        f.write("name\tnode_type\texec_type\tstatus\treal_us\tcpu_us\n")
        for p in infos:
            status = str(p.status).rsplit(".", 1)[-1]
            f.write(f"{p.node_name}\t{p.node_type}\t{p.exec_type}\t{status}\t"
                    f"{p.real_time.total_seconds() * 1e6:.1f}\t{p.cpu_time.total_seconds() * 1e6:.1f}\n")


def main():
    prog = "ov_bench.py"

    def extra(ap):
        ap.add_argument("--precision", choices=list(PRECISIONS), default="f32",
                        help="INFERENCE_PRECISION_HINT (default f32; 'default': no hint, the plugin's choice)")
        ap.add_argument("--perf-count", metavar="FILE.tsv", help="write OpenVINO's per-layer counters of the last run")
    a = common.parse_args(prog, extra)
    try:
        if not os.path.isfile(a.model):
            raise ValueError(f"{a.model}: no such file")
        importlib.import_module("numpy")  # before the timed import: OpenVINO's own load only
        t0 = time.monotonic()
        import openvino as ov
        import openvino.properties as props
        import openvino.properties.hint as hints
        t1 = time.monotonic()
        core = ov.Core()
        model = core.read_model(a.model)
        config = {hints.performance_mode: hints.PerformanceMode.LATENCY, props.num_streams: 1,
                  props.inference_num_threads: a.threads}
        if PRECISIONS[a.precision]:
            config[hints.inference_precision] = getattr(ov.Type, PRECISIONS[a.precision])
        if a.perf_count:
            config[props.enable_profiling] = True
        compiled = core.compile_model(model, "CPU", config)
        t2 = time.monotonic()
        feeds = common.read_inputs(a.input)
        common.check_inputs(feeds, [p.any_name for p in compiled.inputs])
        req = compiled.create_infer_request()
        for name, arr in feeds.items():
            req.set_tensor(name, ov.Tensor(arr, shared_memory=True))
        t3 = time.monotonic()
        req.infer()
        t4 = time.monotonic()
        if a.output:
            common.write_output(a.output, req.get_output_tensor(0).data)
        med, best = common.timed(req.infer, a.runs)
        if a.perf_count:
            write_perf_counts(a.perf_count, req.profiling_info)
        readback = {
            "precision": type_name(compiled.get_property(hints.inference_precision)),
            "threads": int(compiled.get_property(props.inference_num_threads)),
            "streams": int(compiled.get_property(props.num_streams)),
            "hint": str(compiled.get_property(hints.performance_mode)).rsplit(".", 1)[-1],
            "default_precision": type_name(core.get_property("CPU", hints.inference_precision)),
            "requested_precision": PRECISIONS[a.precision] or "default"}
    except Exception as e:  # one line for the caller's log: bad files, OpenVINO's own errors
        common.fail(prog, e)
    common.report(t0, t1, t2, t3, t4, med, best, a.runs, version=ov.get_version().split("-")[0], **readback)


if __name__ == "__main__":
    main()
