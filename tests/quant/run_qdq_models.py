"""tests/quant/run_qdq_models.py — quantized (QDQ) models made by ONNX Runtime's quantizer,
compiled by onnxc both ways (--quantized float and integer), against ONNX Runtime's outputs.

Each case is a small float CNN written with onnx.helper (seeded random weights: convolutions
3x3 with padding, strided, grouped, 1x1, with and without Relu), quantized by
onnxruntime.quantization.quantize_static (QDQ format, per-channel weights, uint8 activations,
MinMax over 4 seeded calibration inputs) and run by ONNX Runtime (CPU provider, its default
optimizations: its QDQ fusions into QLinearConv) on another seeded input: the reference.
  - --quantized integer: every Conv must become a QLinearConv (--dump-ir), and the output must
    equal ONNX Runtime's exactly (0 steps of the output's scale): both accumulate in int32 and
    requantize with the same float32 multiplier; and be within 2 steps of ONNX Runtime running
    the graph as written (graph optimizations off: float convolutions between Q and DQ). ONNX
    Runtime's integer kernels are exact for uint8 weights on every x86 CPU, and for int8
    weights only where it has VNNI: its AVX2 kernels multiply uint8 by int8 with vpmaddubsw,
    whose int16 pair sums saturate (ONNX Runtime's documented reason for reduce_range). On a
    CPU without avx512_vnni or avx_vnni the int8-weight model's exact reference is therefore
    ONNX Runtime on its uint8 twin (u8_twin: weights and zero points plus 128, the same model).
  - --quantized float: within 1 step of ONNX Runtime running the graph as written (the float
    sums' order differs, which moves a value across a rounding boundary now and then).
Exits 1 on any failure; prints one line per case and check.

Usage: .venv/bin/python tests/quant/run_qdq_models.py --compiler COMPILE_MODEL --work DIR [--cflags=...]
"""
import argparse
import logging
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                      quantize_static)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quant_common import vnni  # noqa: E402

SHAPE = (1, 8, 20, 20)


def conv(nodes, inits, rng, x, cin, cout, k, name, stride=1, group=1, relu=True):
    w = (rng.standard_normal((cout, cin // group, k, k)) / np.sqrt(cin // group * k * k)).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
    y = name + ("_conv" if relu else "")
    nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [y], name=name, kernel_shape=[k, k],
                                  pads=[k // 2] * 4, strides=[stride, stride], group=group))
    if relu:
        nodes.append(helper.make_node("Relu", [y], [name], name=name + "_relu"))
    return name


def float_model(path, seed):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = conv(nodes, inits, rng, "input", 8, 16, 3, "c1")
    x = conv(nodes, inits, rng, x, 16, 16, 3, "c2", stride=2)
    x = conv(nodes, inits, rng, x, 16, 16, 3, "c3", group=4)
    x = conv(nodes, inits, rng, x, 16, 12, 1, "c4", relu=False)
    nodes[-1].output[0] = "output"
    g = helper.make_graph(nodes, "qdq_chain", [helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE)],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


class Inputs(CalibrationDataReader):
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.items = [{"input": rng.standard_normal(SHAPE).astype(np.float32)} for _ in range(4)]

    def get_next(self):
        return self.items.pop(0) if self.items else None


def output_step(path):
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.output[0] == "output" and n.op_type == "DequantizeLinear":
            return float(inits[n.input[1]])
    raise RuntimeError("the quantized model's output is not made by a DequantizeLinear")


def u8_twin(src, dst):
    """The QDQ model with its int8 weights (DequantizeLinear of an int8 initializer) and their
    zero points shifted by 128 into uint8: the same dequantized values, so the same model;
    ONNX Runtime's uint8 x uint8 kernels are exact on every x86 CPU."""
    m = onnx.load(src)
    inits = {t.name: t for t in m.graph.initializer}
    done = set()
    for n in m.graph.node:
        if n.op_type != "DequantizeLinear" or n.input[0] not in inits or inits[n.input[0]].data_type != TensorProto.INT8:
            continue
        for name in (n.input[0], n.input[2]):
            if name not in done:
                done.add(name)
                a = numpy_helper.to_array(inits[name]).astype(np.int16) + 128
                inits[name].CopyFrom(numpy_helper.from_array(a.astype(np.uint8), name))
    onnx.save(m, dst)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cflags", default="")
    args = ap.parse_args()
    logging.getLogger().setLevel(logging.ERROR)
    ort.set_default_logger_severity(3)
    os.makedirs(args.work, exist_ok=True)
    failures = []
    for wname, wtype in (("u8", QuantType.QUInt8), ("s8", QuantType.QInt8)):
        case = f"conv_chain_w{wname}"
        d = os.path.join(args.work, case)
        os.makedirs(d, exist_ok=True)
        fp, qp = os.path.join(d, "float.onnx"), os.path.join(d, "model.onnx")
        float_model(fp, 11)
        quantize_static(fp, qp, Inputs(12), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=wtype, calibrate_method=CalibrationMethod.MinMax)
        x = np.random.default_rng(13).standard_normal(SHAPE).astype(np.float32)
        refs = {}
        # Without VNNI ONNX Runtime's integer kernels run the uint8 twin (its uint8 x int8 ones saturate there).
        twin = wname == "s8" and not vnni()
        if twin:
            u8_twin(qp, os.path.join(d, "model_u8_twin.onnx"))
        for kind, level, path in (("integer", ort.GraphOptimizationLevel.ORT_ENABLE_ALL, os.path.join(d, "model_u8_twin.onnx") if twin else qp),
                                  ("as written", ort.GraphOptimizationLevel.ORT_DISABLE_ALL, qp)):
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.graph_optimization_level = level
            refs[kind] = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        step = output_step(qp)
        xin = os.path.join(d, "input.npy")
        np.save(xin, x)
        for form in ("integer", "float"):
            out_dir = os.path.join(d, form)
            c = run([args.compiler, qp, "-o", out_dir, "--name", "qdq", "--quantized", form, "--dump-ir", "--quiet",
                     "--verify-passes"] + ([f"--cflags={args.cflags}"] if args.cflags else []))
            if c.returncode != 0:
                failures.append(f"{case} {form}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
                continue
            qconvs = sum(1 for line in c.stdout.splitlines() if "QLinearConv" in line and "=" in line)
            if (qconvs > 0) != (form == "integer"):
                failures.append(f"{case} {form}: --dump-ir shows {qconvs} QLinearConv lines")
            out = os.path.join(out_dir, "out.npy")
            r = run([os.path.join(out_dir, "qdq"), "--input", f"input={xin}", "--output", f"output={out}", "--quiet"])
            if r.returncode != 0:
                failures.append(f"{case} {form}: the binary exited {r.returncode}: {r.stderr.strip()}")
                continue
            y = np.load(out).astype(np.float64)
            # integer: exactly ONNX Runtime's integer kernels, within 2 steps of the float graph;
            # float: within 1 step of ONNX Runtime running the same float graph.
            checks = [("integer", 0), ("as written", 2)] if form == "integer" else [("as written", 1)]
            for kind, limit in checks:
                steps = np.abs(y - refs[kind].astype(np.float64)) / step
                worst, exact = float(steps.max()), float((np.rint(steps) == 0).mean())
                what = f"{case} --quantized {form} vs ONNX Runtime {ort.__version__} {kind}" + (
                    " (on the model's uint8 twin: no VNNI here)" if kind == "integer" and twin else "")
                ok = worst <= limit + 1e-3
                print(f"{what}: {'PASS' if ok else 'FAIL'}: at most {worst:.3g} steps of {step:.4g} (limit {limit}), "
                      f"{100 * exact:.1f}% of {steps.size} elements equal")
                if not ok:
                    failures.append(f"{what}: {worst:.3g} steps off (limit {limit})")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
