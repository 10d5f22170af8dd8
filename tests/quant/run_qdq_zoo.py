"""tests/quant/run_qdq_zoo.py — zoo models quantized by ONNX Runtime (QDQ, or QOperator with
--format qoperator), compiled by onnxc with --quantized integer, against ONNX Runtime's integer
kernels on the same model.

Per NAME: models/quantize_zoo.py quantizes ZOO/NAME.onnx (exported by models/export_zoo.py, the
zoo_export_NAME test) as a user of ONNX Runtime's tools would (quantize_static, QDQ, per-channel
int8 weights, uint8 activations, MinMax over seeded calibration images that are not the test
input) into WORK/NAME_qdq.onnx; ONNX Runtime (CPU provider, its default optimizations: its QDQ
fusions into QLinearConv and QLinearAdd, one thread) runs it on the zoo input. Without VNNI its
uint8 x int8 kernels saturate int16 pair sums (tests/quant/quant_common.py), so there it runs the
model's uint8 twin (weights and their zero points plus 128: the same model, exact products).
onnxc's build of the QDQ model (--quantized integer: QLinearConv, the depthwise, pair and quad
kernels, onnxc.qdq_add for the residual adds) must stay within 1 step of the output's scale of
that reference: both accumulate exactly in int32 and requantize alike. The residual adds and
gating products are computed as the QDQ graph spells them, round((sa (a - za) + sb (b - zb)) / sy)
(onnxc.qdq_add); ONNX Runtime's fused QLinearAdd rounds an approximation of it that depends on
the CPU (fixed-point multipliers on AVX2; (a - za) sa/sy + (b - zb) sb/sy on AVX-512), which moves
a few elements by one step (2 of 401408 at one of resnet50's adds on a Sapphire Rapids), and the
layers after it amplify such steps (3 steps at resnet50's output). So in the QDQ format the
reference keeps each Add and Mul between DequantizeLinear and QuantizeLinear unfused (its float
output is made a graph output too, which ONNX Runtime's QDQ fusion leaves alone): dequantize,
operate and quantize in float32 as written, while its convolutions stay its integer kernels.
The line printed gives the largest difference in steps, the share of
equal elements and whether the top class agrees. --format qoperator: the model in ONNX Runtime's
QOperator format (WORK/NAME_qop.onnx: QLinearConv, and its com.microsoft QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearGlobalAveragePool, QLinearConcat, QGemm, which onnxc's importer expands
into DequantizeLinear → op → QuantizeLinear), the same check.

Usage: .venv/bin/python tests/quant/run_qdq_zoo.py --compiler COMPILE_MODEL --zoo DIR --work DIR
       [--cflags=...] [--format qdq|qoperator] NAME...
Exits 1 on any failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from quant_common import vnni  # noqa: E402
from run_qdq_models import u8_twin  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def unfused_adds(src, dst):
    """The QDQ model with the float output of every Add and Mul of two DequantizeLinear outputs
    also a graph output, so that ONNX Runtime computes them as written instead of as its fused
    QLinearAdd / QLinearMul (the model's own outputs stay first). Returns how many."""
    import onnx
    m = onnx.load(src)
    dq = {n.output[0] for n in m.graph.node if n.op_type == "DequantizeLinear"}
    outs = {o.name for o in m.graph.output}
    k = 0
    for n in m.graph.node:
        if n.op_type in ("Add", "Mul") and len(n.input) == 2 and all(i in dq for i in n.input) and n.output[0] not in outs:
            m.graph.output.append(onnx.helper.make_tensor_value_info(n.output[0], onnx.TensorProto.FLOAT, None))
            k += 1
    onnx.save(m, dst)
    return k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--zoo", required=True, help="the zoo's folder (NAME.onnx, NAME.input.npy)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cflags", default="")
    ap.add_argument("--format", choices=("qdq", "qoperator"), default="qdq")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    ort.set_default_logger_severity(3)
    os.makedirs(args.work, exist_ok=True)
    failures = []
    for name in args.names:
        q = run([sys.executable, os.path.join(ROOT, "models", "quantize_zoo.py"), "--zoo", args.zoo, "--out", args.work, "--format",
                 args.format, name])
        print(q.stdout.strip())
        stem = f"{name}_{'qdq' if args.format == 'qdq' else 'qop'}"
        qp = os.path.join(args.work, f"{stem}.onnx")
        if q.returncode != 0 or not os.path.exists(qp):
            failures.append(f"{name}: models/quantize_zoo.py exit {q.returncode}: {(q.stdout + q.stderr).strip()[-2000:]}")
            continue
        x = np.load(os.path.join(args.work, f"{stem}.input.npy"))
        with open(os.path.join(args.work, f"{stem}.step.txt")) as f:
            step = float(f.read().split()[0])
        twin = not vnni()
        ref_model = qp
        if twin:
            ref_model = os.path.join(args.work, f"{stem}_u8_twin.onnx")
            u8_twin(qp, ref_model)
        unfused = 0
        if args.format == "qdq":
            src, ref_model = ref_model, os.path.join(args.work, f"{stem}_ref.onnx")
            unfused = unfused_adds(src, ref_model)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(ref_model, so, providers=["CPUExecutionProvider"])
        ref = sess.run(None, {sess.get_inputs()[0].name: x})[0].astype(np.float64)
        out_dir = os.path.join(args.work, f"{stem}_integer")
        c = run([args.compiler, qp, "-o", out_dir, "--name", name, "--quantized", "integer", "--quiet"] +
                ([f"--cflags={args.cflags}"] if args.cflags else []))
        if c.returncode != 0:
            failures.append(f"{name}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
            continue
        out = os.path.join(out_dir, "out.npy")
        r = run([os.path.join(out_dir, name), "--input", os.path.join(args.work, f"{stem}.input.npy"), "--output", out, "--quiet"])
        if r.returncode != 0:
            failures.append(f"{name}: the binary exited {r.returncode}: {r.stderr.strip()[-2000:]}")
            continue
        y = np.load(out).astype(np.float64)
        if y.shape != ref.shape:
            failures.append(f"{name}: output {list(y.shape)}, ONNX Runtime's {list(ref.shape)}")
            continue
        steps = np.abs(y - ref) / step
        worst = float(steps.max())
        ok = worst <= 1 + 1e-3
        print(f"{stem} --quantized integer vs ONNX Runtime {ort.__version__} integer"
              f"{' (on the uint8 twin: no VNNI here)' if twin else ''}{f', its {unfused} adds and products unfused' if unfused else ''}"
              f": {'PASS' if ok else 'FAIL'}: at most {worst:.3g} steps of "
              f"{step:.4g} (limit 1), {100 * float(np.mean(np.rint(steps) == 0)):.1f}% of {y.size} elements equal, top class "
              f"{'the same' if int(np.argmax(y)) == int(np.argmax(ref)) else 'DIFFERENT'}", flush=True)
        if not ok:
            failures.append(f"{name}: {worst:.3g} steps off (limit 1)")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
