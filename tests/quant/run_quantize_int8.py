"""tests/quant/run_quantize_int8.py — compile-model --quantize int8 --calibration DIR (a float model
quantized by onnxc) against ONNX Runtime's quantizer on the same model and calibration inputs.

Each case is a small float CNN written with onnx.helper (seeded random weights): 3x3 convolutions
with padding and Relu, a strided one, a grouped one, a depthwise one, a 1x1 one without bias, a
residual Add, and a last convolution that is the graph output; in a third, Clip(0, 1) (active:
the range ends at its bound) and Clip(0, 6) (Relu6) instead of the first two Relus. Six seeded calibration inputs go
into DIR as .npy files. The independent reference is onnxruntime.quantization.quantize_static on
the same float model and inputs with the settings --quantize int8 follows (QDQ format, MinMax,
per-channel symmetric int8 weights, uint8 activations, op types Conv, Relu and Clip), run by ONNX
Runtime (its QDQ fusions into QLinearConv; without VNNI on the model's uint8 twin, whose kernels
are exact there, see run_qdq_models.py) on another seeded input. Checks:
  - every Conv of the model becomes a QLinearConv in onnxc's IR (--dump-ir);
  - onnxc's output within 1 step of the output scale of ONNX Runtime's (onnxc's calibration
    reads the ranges from its reference evaluator, ONNX Runtime's from its float kernels: a range
    that differs in the last bit can move a value across a rounding boundary), with the share of
    elements that are equal printed;
  - against the float model: the quantization error, printed, at most 5% of the output's range;
  - bad uses: --quantize int8 without --calibration, --calibration without --quantize, an empty
    folder, a float64 file, a wrong shape, a file that is not .npy and --quantize int8-dynamic with
    --calibration each exit 1 with a message naming the problem; --quantize int8-dynamic on this
    model of convolutions only exits 3 (nothing it quantizes: run_dynamic_quant.py tests what it does).
Exits 1 on any failure; prints one line per check.

Usage: .venv/bin/python tests/quant/run_quantize_int8.py --compiler COMPILE_MODEL --work DIR [--cflags=...]
"""
import os
import shutil
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                      quantize_static)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quant_common import script_args, vnni  # noqa: E402
from run_qdq_models import output_step, run, u8_twin  # noqa: E402

SHAPE = (1, 8, 20, 20)
CALIBRATION = 6


def conv(nodes, inits, rng, x, cin, cout, k, name, stride=1, group=1, relu=True, bias=True, clip=None):
    w = (rng.standard_normal((cout, cin // group, k, k)) / np.sqrt(cin // group * k * k)).astype(np.float32)
    inits.append(numpy_helper.from_array(w, name + "_w"))
    ins = [x, name + "_w"]
    if bias:
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.1).astype(np.float32), name + "_b"))
        ins.append(name + "_b")
    y = name + ("_conv" if relu else "")
    nodes.append(helper.make_node("Conv", ins, [y], name=name, kernel_shape=[k, k], pads=[k // 2] * 4,
                                  strides=[stride, stride], group=group))
    if relu and clip is not None:  # Clip(0, clip) with constant bounds (opset 13: inputs)
        inits += [numpy_helper.from_array(np.array(0, np.float32), name + "_lo"),
                  numpy_helper.from_array(np.array(clip, np.float32), name + "_hi")]
        nodes.append(helper.make_node("Clip", [y, name + "_lo", name + "_hi"], [name], name=name + "_clip"))
    elif relu:
        nodes.append(helper.make_node("Relu", [y], [name], name=name + "_relu"))
    return name


def float_model(path, seed, residual, clip=None):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = conv(nodes, inits, rng, "input", 8, 16, 3, "c1", clip=clip)
    x = conv(nodes, inits, rng, x, 16, 16, 3, "c2", stride=2, clip=clip and 6.0)
    x = conv(nodes, inits, rng, x, 16, 16, 3, "c3", group=4)
    if residual:
        y = conv(nodes, inits, rng, x, 16, 16, 3, "c4", group=16)            # depthwise
        y = conv(nodes, inits, rng, y, 16, 16, 1, "c5", relu=False, bias=False)
        nodes.append(helper.make_node("Add", [x, y], ["sum"], name="add"))
        nodes.append(helper.make_node("Relu", ["sum"], ["sum_relu"], name="add_relu"))
        x = "sum_relu"
    conv(nodes, inits, rng, x, 16, 12, 1, "out", relu=False)
    nodes[-1].output[0] = "output"
    g = helper.make_graph(nodes, "quantize_int8", [helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE)],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return sum(1 for n in nodes if n.op_type == "Conv")


class Inputs(CalibrationDataReader):
    def __init__(self, arrays):
        self.items = [{"input": a} for a in arrays]

    def get_next(self):
        return self.items.pop(0) if self.items else None


def main():
    args = script_args()
    cflags = [f"--cflags={args.cflags}"] if args.cflags else []
    failures = []

    def check(ok, what):
        print(f"{what}: {'PASS' if ok else 'FAIL'}")
        if not ok:
            failures.append(what)

    for case, residual, clip, seed in (("chain", False, None, 21), ("residual", True, None, 31), ("clip", False, 1.0, 51)):
        d = os.path.join(args.work, case)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "calibration"))
        fp, qp = os.path.join(d, "float.onnx"), os.path.join(d, "ort_qdq.onnx")
        convs = float_model(fp, seed, residual, clip)
        rng = np.random.default_rng(seed + 1)
        calib = [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(CALIBRATION)]
        for k, a in enumerate(calib):
            np.save(os.path.join(d, "calibration", f"sample{k}.npy"), a)
        quantize_static(fp, qp, Inputs(calib), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax, op_types_to_quantize=["Conv", "Relu", "Clip"])
        twin = not vnni()
        ref_path = qp
        if twin:
            ref_path = os.path.join(d, "ort_qdq_u8_twin.onnx")
            u8_twin(qp, ref_path)
        x = np.random.default_rng(seed + 2).standard_normal(SHAPE).astype(np.float32)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        ref = ort.InferenceSession(ref_path, so, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        y_float = ort.InferenceSession(fp, so, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        step = output_step(qp)
        xin = os.path.join(d, "input.npy")
        np.save(xin, x)
        out_dir = os.path.join(d, "onnxc")
        c = run([args.compiler, fp, "-o", out_dir, "--name", "q", "--quantize", "int8", "--calibration",
                 os.path.join(d, "calibration"), "--dump-ir", "--verify-passes"] + cflags)
        if c.returncode != 0:
            check(False, f"{case}: compile-model --quantize int8 exit {c.returncode}: {c.stderr.strip()[-2000:]}")
            continue
        said = [line for line in c.stdout.splitlines() if line.startswith("quantize:")]
        print(f"{case}: {said[0] if said else 'compile-model printed no quantize: line'}")
        qconvs = sum(1 for line in c.stdout.splitlines() if "= QLinearConv" in line)
        check(qconvs == convs, f"{case}: {qconvs} of the model's {convs} Convs are QLinearConv in onnxc's IR")
        out = os.path.join(out_dir, "out.npy")
        r = run([os.path.join(out_dir, "q"), "--input", f"input={xin}", "--output", f"output={out}", "--quiet"])
        if r.returncode != 0:
            check(False, f"{case}: the binary exited {r.returncode}: {r.stderr.strip()}")
            continue
        y = np.load(out).astype(np.float64)
        steps = np.abs(y - ref.astype(np.float64)) / step
        worst, exact = float(steps.max()), float((np.rint(steps) == 0).mean())
        check(worst <= 1 + 1e-3,
              f"{case}: onnxc --quantize int8 vs ONNX Runtime {ort.__version__}'s quantize_static model"
              f"{' (its uint8 twin: no VNNI here)' if twin else ''}: at most {worst:.3g} steps of {step:.4g} (limit 1), "
              f"{100 * exact:.1f}% of {steps.size} elements equal")
        span = float(y_float.max() - y_float.min())
        err = float(np.abs(y - y_float).max())
        check(err <= 0.05 * span, f"{case}: against the float model: max error {err:.4g}, {100 * err / span:.2f}% of the "
                                  f"output's range {span:.4g} (limit 5%)")

    # Bad uses: exit 1 (or the case's code) with a message.
    d = os.path.join(args.work, "bad")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    fp = os.path.join(d, "float.onnx")
    float_model(fp, 41, False)
    cases = []
    os.makedirs(os.path.join(d, "empty"))
    cases.append(("no --calibration", ["--quantize", "int8"], "needs --calibration"))
    cases.append(("--calibration without --quantize", ["--calibration", os.path.join(d, "empty")], "is for --quantize int8"))
    cases.append(("an empty folder", ["--quantize", "int8", "--calibration", os.path.join(d, "empty")], "no .npy file"))
    for name, arr in (("f64", np.zeros(SHAPE, np.float64)), ("shape", np.zeros((1, 8, 20, 21), np.float32))):
        os.makedirs(os.path.join(d, name))
        np.save(os.path.join(d, name, "a.npy"), arr)
    cases.append(("a float64 file", ["--quantize", "int8", "--calibration", os.path.join(d, "f64")], "not float32"))
    cases.append(("a wrong shape", ["--quantize", "int8", "--calibration", os.path.join(d, "shape")], "shape [1,8,20,21]"))
    os.makedirs(os.path.join(d, "junk"))
    with open(os.path.join(d, "junk", "a.npy"), "wb") as f:
        f.write(b"not an array")
    cases.append(("a file that is not .npy", ["--quantize", "int8", "--calibration", os.path.join(d, "junk")], "not a .npy file"))
    cases.append(("int8-dynamic with --calibration", ["--quantize", "int8-dynamic", "--calibration", os.path.join(d, "empty")],
                  "takes no --calibration"))
    # A model of convolutions only: nothing --quantize int8-dynamic quantizes (exit 3: unsupported).
    cases.append(("int8-dynamic without a matrix product", ["--quantize", "int8-dynamic"], "has no MatMul", 3))
    for what, flags, words, *code in cases:
        rc = code[0] if code else 1
        r = run([args.compiler, fp, "-o", os.path.join(d, "out"), "--emit", "c", "--quiet"] + flags)
        msg = (r.stderr + r.stdout).strip().splitlines()
        check(r.returncode == rc and any(words in line for line in msg),
              f"bad use, {what}: exit {r.returncode}, '{msg[-1] if msg else ''}' (expected exit {rc} saying '{words}')")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
