#!/usr/bin/env python3
"""bench/quantize_int8.py — zoo models quantized by onnxc itself (compile-model --quantize int8
--calibration DIR): what quantization costs in accuracy, and what it gains in speed, against the
float build of the same model.

Per model: models/export_zoo.py exports the float model (random weights, fixed seed); --calibration
N seeded ImageNet-normalised random images (uniform pixels, then (x - mean) / std, as the zoo's own
input) go into a folder; --tests M other seeded images are the calibration-independent test inputs.
onnxc builds the float model and the model with --quantize int8 on that folder; both run on each
test image. The report: top-1 agreement (the share of test images whose highest-scoring class is
the float build's), top-5 overlap, the output's error relative to its largest magnitude (median
and worst over the images), the calibration's time, and each build's latency (median of its
--bench at each --threads count). Reference point: ONNX Runtime's quantize_static on the same
model and calibration images with the settings --quantize int8 follows (QDQ, MinMax, per-channel
int8 weights, uint8 activations, op types Conv, Relu and Clip), run by ONNX Runtime (on the model's
uint8 twin without VNNI, where its uint8 x int8 kernels saturate): its top-1 agreement with the
float build, how often onnxc's int8 top-1 is its top-1, and how far onnxc's int8 output is from its output.
Writes OUT.json and OUT.md.

Usage: .venv/bin/python bench/quantize_int8.py [--models resnet50 mobilenet_v2 googlenet] [--calibration 8]
                                               [--tests 16] [--threads 1 2] [--work DIR] [--out bench/results/quantize_int8]
"""
import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dynamic import ROOT, bench_ms, cpu_name, run  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "quant"))
from quant_common import vnni  # noqa: E402

MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)


def images(seed, n, shape):
    rng = np.random.default_rng(seed)
    return [((rng.random(shape, dtype=np.float32) - MEAN) / STD).astype(np.float32) for _ in range(n)]


def run_binary(binary, x, work):
    xin, out = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(xin, x)
    run([binary, "--quiet", "--threads", "2", "--input", f"input={xin}", "--output", f"output={out}"])
    return np.load(out).astype(np.float64)


def top(y, k):
    return set(np.argsort(-y.ravel())[:k].tolist())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["resnet50", "mobilenet_v2", "googlenet"])
    ap.add_argument("--calibration", type=int, default=8)
    ap.add_argument("--tests", type=int, default=16)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_quantize_int8"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "quantize_int8"))
    ap.add_argument("--compiler", default=os.path.join(ROOT, "build", "compile-model"))
    args = ap.parse_args()
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from run_qdq_models import u8_twin  # tests/quant

    logging.getLogger().setLevel(logging.ERROR)
    ort.set_default_logger_severity(3)
    os.makedirs(args.work, exist_ok=True)
    cpu = cpu_name(("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8"))
    results = []
    for name in args.models:
        t0 = time.time()
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"), "--out", args.work, name])
        fp = os.path.join(args.work, name + ".onnx")
        shape = tuple(np.load(os.path.join(args.work, name + ".input.npy")).shape)
        cal_dir = os.path.join(args.work, name + "_calibration")
        os.makedirs(cal_dir, exist_ok=True)
        cal = images(101, args.calibration, shape)
        for k, a in enumerate(cal):
            np.save(os.path.join(cal_dir, f"sample{k:03d}.npy"), a)
        tests = images(202, args.tests, shape)
        builds = {}
        for key, flags in (("float", []), ("int8", ["--quantize", "int8", "--calibration", cal_dir])):
            d = os.path.join(args.work, f"{name}_{key}")
            out = run([args.compiler, fp, "-o", d, "--name", name] + flags)
            if key == "int8":
                said = next((line for line in out.splitlines() if line.startswith("quantize: int8")), "")
                calib_s = float(said.rsplit("(", 1)[1].split(" s")[0]) if "(" in said else None
                print(f"{name}: {said}", flush=True)
            builds[key] = os.path.join(d, name)
        # ONNX Runtime's quantize_static with the same settings and images.
        qp = os.path.join(args.work, name + "_ort_qdq.onnx")

        class Inputs(CalibrationDataReader):
            def __init__(self):
                self.items = [{"input": a} for a in cal]

            def get_next(self):
                return self.items.pop(0) if self.items else None

        quantize_static(fp, qp, Inputs(), quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                        op_types_to_quantize=["Conv", "Relu", "Clip"])
        ref_path = qp
        if not vnni():
            ref_path = os.path.join(args.work, name + "_ort_qdq_u8_twin.onnx")
            u8_twin(qp, ref_path)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        sess = ort.InferenceSession(ref_path, so, providers=["CPUExecutionProvider"])
        agree = agree_ort = same_ort = 0
        top5, errs, steps = [], [], []
        work = os.path.join(args.work, name + "_runs")
        os.makedirs(work, exist_ok=True)
        for x in tests:
            yf = run_binary(builds["float"], x, work)
            yq = run_binary(builds["int8"], x, work)
            yo = sess.run(None, {"input": x})[0].astype(np.float64)
            agree += int(yf.argmax() == yq.argmax())
            agree_ort += int(yf.argmax() == yo.argmax())
            same_ort += int(yq.argmax() == yo.argmax())
            top5.append(len(top(yf, 5) & top(yq, 5)))
            errs.append(float(np.abs(yq - yf).max() / np.abs(yf).max()))
            steps.append(float(np.abs(yq - yo).max() / np.abs(yo).max()))
        row = {"model": name, "calibration": args.calibration, "tests": args.tests, "calibration_s": calib_s,
               "top1_agreement": agree / len(tests), "top5_overlap": statistics.mean(top5) / 5,
               "error_median": statistics.median(errs), "error_max": max(errs),
               "ort_top1_agreement": agree_ort / len(tests), "ort_top1_same": same_ort / len(tests), "from_ort_max": max(steps),
               "latency": {}}
        inp = os.path.join(work, "x.npy")
        for t in args.threads:
            row["latency"][str(t)] = {k: statistics.median([bench_ms(b, ["--input", f"input={inp}"], t, 10) for _ in range(3)])
                                      for k, b in builds.items()}
        row["seconds"] = time.time() - t0
        print(f"{name}: top-1 agreement {100 * row['top1_agreement']:.0f}% (ONNX Runtime's int8 model "
              f"{100 * row['ort_top1_agreement']:.0f}%), top-5 overlap {100 * row['top5_overlap']:.0f}%, error median "
              f"{row['error_median']:.3g} max {row['error_max']:.3g}; against ONNX Runtime's int8 output: same top-1 "
              f"{100 * row['ort_top1_same']:.0f}%, max distance {row['from_ort_max']:.3g} of its largest magnitude; "
              + "; ".join(f"{t} thread(s) float {v['float']:.2f} ms, int8 {v['int8']:.2f} ms" for t, v in row["latency"].items()),
              flush=True)
        results.append(row)
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "results": results}
    with open(args.out + ".json", "w") as f:
        json.dump(report, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write("# Zoo models quantized by onnxc (--quantize int8): accuracy and speed against the float build\n\n"
                f"{cpu}, {report['date']}; `.venv/bin/python bench/quantize_int8.py`. Calibration on "
                f"{args.calibration} seeded random ImageNet-normalised images, tests on {args.tests} others (random-weight "
                "models: agreement with the float build is the measure, not accuracy on labels). Error: max |int8 − float| / "
                "max |float| per image. ONNX Runtime: its quantize_static on the same model and images with the same "
                "settings (QDQ, MinMax, per-channel int8 weights, uint8 activations, Conv, Relu and Clip), its top-1 agreement "
                "with the float build, how often onnxc's int8 top-1 is its top-1, and onnxc's largest distance from its output "
                "relative to its largest magnitude (its classifier and pools stay float, as onnxc's). "
                "Latency: median of three `--bench 10` runs.\n\n"
                "| model | top-1 agreement | top-5 overlap | error median / max | ONNX Runtime int8 top-1 | same top-1 as ONNX Runtime int8 | from ONNX Runtime int8 "
                "| calibration s | threads | float ms | int8 ms | speed |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        for r in results:
            for t, v in r["latency"].items():
                f.write(f"| {r['model']} | {100 * r['top1_agreement']:.0f}% | {100 * r['top5_overlap']:.0f}% | "
                        f"{r['error_median']:.3g} / {r['error_max']:.3g} | {100 * r['ort_top1_agreement']:.0f}% | "
                        f"{100 * r['ort_top1_same']:.0f}% | {r['from_ort_max']:.3g} | {r['calibration_s']} | {t} | {v['float']:.2f} | {v['int8']:.2f} | "
                        f"{v['float'] / v['int8']:.2f} |\n")
    print(f"wrote {args.out}.json and {args.out}.md")


if __name__ == "__main__":
    main()
