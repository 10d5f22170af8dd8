"""tests/quant/run_dynamic_quant.py — models quantized by ONNX Runtime's quantize_dynamic, compiled
by onnxc, against ONNX Runtime on the same model.

quantize_dynamic (its defaults: int8 weights per tensor, activations quantized at run time) makes
each MatMul DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zp, W_zp) -> Cast -> Mul by the
two scales: the form transformers are deployed in on CPUs. Cases: a two-layer MLP written with
onnx.helper (uint8 and int8 weights), DistilBERT at 32 tokens from models/export_transformers.py
(6 encoder layers, 24 quantized matrix products between float LayerNorms, GELUs and softmaxes), and
torchvision's ViT at 2 layers, 192 wide (models/export_zoo.py vit_2layer_192: the patch embedding
a ConvInteger, the projections [50, 1, 192] x [192, N] products of one row per token, which onnxc
runs as one product of 50 rows). The three float models also compiled with --quantize int8-dynamic
(onnxc's own rewrite, which follows quantize_dynamic's defaults), against ONNX Runtime on
quantize_dynamic's model of their MatMuls and Gemms, within the same limit, with as many products
quantized.
Without VNNI ONNX Runtime's uint8 x int8 kernels saturate int16 pair sums (quant_common.py), so
there the int8-weight models' reference is ONNX Runtime on their uint8 twin (weights and zero
points plus 128: the same model, exact products); the line printed says how far ONNX Runtime's
own int8 path lands from it. onnxc (its default build) must stay within 1e-4 x max(1, max |ref|) of
the reference: both compute the same integer products exactly, so what remains is the float ops'
rounding. ONNX Runtime runs at ORT_ENABLE_EXTENDED (see main: its layout optimizations move a
float Conv's rounding, and DynamicQuantizeLinear turns that into a quantization step). A
DynamicQuantizeLinear alone (3 x 4099 values) must equal ONNX Runtime's outputs exactly, with
every nest parallel at 2 threads and at 1.

Usage: .venv/bin/python tests/quant/run_dynamic_quant.py --compiler COMPILE_MODEL --work DIR [--cflags=...]
Exits 1 on any failure.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from quant_common import script_args, vnni  # noqa: E402
from run_qdq_models import u8_twin  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
TOL = 1e-4


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def mlp(path):
    """x [1, 16, 64] -> MatMul 64x128 -> Add -> Relu -> MatMul 128x64 -> Add; seeded weights."""
    rng = np.random.default_rng(1)
    d, h = 64, 128
    inits = [numpy_helper.from_array((rng.standard_normal((d, h)) / 8).astype(np.float32), "w1"),
             numpy_helper.from_array((rng.standard_normal(h) * 0.1).astype(np.float32), "b1"),
             numpy_helper.from_array((rng.standard_normal((h, d)) / 11).astype(np.float32), "w2"),
             numpy_helper.from_array((rng.standard_normal(d) * 0.1).astype(np.float32), "b2")]
    nodes = [helper.make_node("MatMul", ["input", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]), helper.make_node("MatMul", ["h2", "w2"], ["h3"]),
             helper.make_node("Add", ["h3", "b2"], ["output"])]
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 16, d])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return rng.standard_normal((1, 16, d)).astype(np.float32)


def dql_alone(args, failures):
    """DynamicQuantizeLinear alone on 12297 values (3 x 4099: chunks of 4096 and a tail of 9, not
    whole vectors), compiled with every nest parallel at 2 threads (the chunks' ranges combined
    through the output) and at 1 thread (one serial statement): all three outputs equal ONNX
    Runtime's."""
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "y_scale", "y_zp"])
    g = helper.make_graph([node], "dql", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4099])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [3, 4099]),
                           helper.make_tensor_value_info("y_scale", TensorProto.FLOAT, []),
                           helper.make_tensor_value_info("y_zp", TensorProto.UINT8, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(args.work, "dql.onnx")
    onnx.save(m, path)
    x = (np.random.default_rng(7).standard_normal((3, 4099)) * 3 + 0.5).astype(np.float32)
    x[2, 4098] = -30.0  # the minimum, in the last chunk (its tail)
    xin = os.path.join(args.work, "dql.x.npy")
    np.save(xin, x)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for threads, extra in (("2", ["--parallel-min-work", "1"]), ("1", [])):
        what = f"DynamicQuantizeLinear alone, {threads} thread{'s' if threads != '1' else ''}"
        out_dir = os.path.join(args.work, "dql_t" + threads)
        c = run([args.compiler, path, "-o", out_dir, "--name", "m", "-q", "--threads", threads] + extra +
                ([f"--cflags={args.cflags}"] if args.cflags else []))
        if c.returncode != 0:
            failures.append(f"{what}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
            continue
        outs = [os.path.join(out_dir, k + ".npy") for k in ("y", "y_scale", "y_zp")]
        r = run([os.path.join(out_dir, "m"), "--input", f"x={xin}", "--quiet"] + sum((["--output", f"{k}={o}"] for k, o in
                                                                                     zip(("y", "y_scale", "y_zp"), outs)), []))
        if r.returncode != 0:
            failures.append(f"{what}: the binary exited {r.returncode}: {r.stderr.strip()}")
            continue
        got = [np.load(o) for o in outs]
        bad = [k for k, a, b in zip(("y", "y_scale", "y_zp"), got, ref) if a.shape != b.shape or not np.array_equal(a, b)]
        print(f"{what}: " + (f"FAIL: {', '.join(bad)} differ from ONNX Runtime's" if bad else "PASS: the three outputs equal ONNX Runtime's"))
        if bad:
            failures.append(f"{what}: {', '.join(bad)} differ from ONNX Runtime's")


def main():
    args = script_args()
    failures = []
    dql_alone(args, failures)
    e = run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_transformers.py"), "--out", args.work, "--tokens", "32", "distilbert"])
    if e.returncode != 0:
        failures.append(f"distilbert: models/export_transformers.py exit {e.returncode}: {(e.stdout + e.stderr).strip()[-2000:]}")
    v = run(["/usr/bin/python3", os.path.join(ROOT, "models", "export_zoo.py"), "--out", args.work, "vit_2layer_192"])
    if v.returncode != 0:
        failures.append(f"vit_2layer_192: models/export_zoo.py exit {v.returncode}: {(v.stdout + v.stderr).strip()[-2000:]}")
    # (case, float model, weight type, who quantizes): "ort" compiles ONNX Runtime's quantized model;
    # "onnxc" compiles the float model with --quantize int8-dynamic, against ONNX Runtime's
    # quantize_dynamic of its MatMuls and Gemms (the same rewrite).
    cases = [("mlp_u8", "mlp", QuantType.QUInt8, "ort"), ("mlp_s8", "mlp", QuantType.QInt8, "ort"),
             ("mlp_onnxc", "mlp", QuantType.QInt8, "onnxc")]
    if e.returncode == 0:
        cases += [("distilbert_s8", "distilbert_t32", QuantType.QInt8, "ort"), ("distilbert_onnxc", "distilbert_t32", QuantType.QInt8, "onnxc")]
    if v.returncode == 0:
        cases += [("vit_s8", "vit_2layer_192", QuantType.QInt8, "ort"), ("vit_onnxc", "vit_2layer_192", QuantType.QInt8, "onnxc")]
    for case, model, wtype, by in cases:
        fp, qp = os.path.join(args.work, model + ".onnx"), os.path.join(args.work, case + ".onnx")
        x = mlp(fp) if model == "mlp" else np.load(os.path.join(args.work, model + ".input.npy"))
        quantize_dynamic(fp, qp, weight_type=wtype, **({"op_types_to_quantize": ["MatMul", "Gemm"]} if by == "onnxc" else {}))
        ops = [n.op_type for n in onnx.load(qp).graph.node]
        products = ops.count("MatMulInteger") + ops.count("ConvInteger")
        if ops.count("MatMulInteger") == 0 or products != ops.count("DynamicQuantizeLinear"):
            failures.append(f"{case}: quantize_dynamic wrote {ops.count('MatMulInteger')} MatMulInteger, {ops.count('ConvInteger')} "
                            f"ConvInteger and {ops.count('DynamicQuantizeLinear')} DynamicQuantizeLinear nodes")
            continue
        twin = wtype == QuantType.QInt8 and not vnni()
        refs = {}
        for kind, path in (("as is", qp), ("uint8 twin", os.path.join(args.work, case + "_u8_twin.onnx"))):
            if kind == "uint8 twin":
                if not twin:
                    break
                u8_twin(qp, path)
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            # Its graph optimizations but the layout ones (ORT_ENABLE_ALL), which run a float Conv in
            # NCHWc with another summation order: on vit_onnxc (the patch embedding left float) that
            # moves a DynamicQuantizeLinear value across a rounding tie, 0.066 at a magnitude of 3.9,
            # as far as ONNX Runtime's two levels are from each other.
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            refs[kind] = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        ref = refs["uint8 twin" if twin else "as is"]
        xin = os.path.join(args.work, case + ".input.npy")
        np.save(xin, x)
        out_dir = os.path.join(args.work, case)
        c = run([args.compiler, fp if by == "onnxc" else qp, "-o", out_dir, "--name", "m"] +
                (["--quantize", "int8-dynamic"] if by == "onnxc" else ["-q"]) + ([f"--cflags={args.cflags}"] if args.cflags else []))
        if c.returncode != 0:
            failures.append(f"{case}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
            continue
        if by == "onnxc":  # as many products quantized as ONNX Runtime's
            said = [ln for ln in c.stdout.splitlines() if ln.startswith("quantize: int8-dynamic, ")]
            n = int(said[0].split(", ")[1].split()[0]) if said else -1
            if n != ops.count("MatMulInteger"):
                failures.append(f"{case}: --quantize int8-dynamic quantized {n} products, ONNX Runtime {ops.count('MatMulInteger')}")
        out = os.path.join(out_dir, "out.npy")
        r = run([os.path.join(out_dir, "m"), "--input", f"input={xin}", "--output", f"output={out}", "--quiet"])
        if r.returncode != 0:
            failures.append(f"{case}: the binary exited {r.returncode}: {r.stderr.strip()}")
            continue
        y = np.load(out)
        if y.shape != ref.shape:
            failures.append(f"{case}: output {list(y.shape)}, ONNX Runtime's {list(ref.shape)}")
            continue
        err = float(np.abs(y - ref).max())
        limit = TOL * max(1.0, float(np.abs(ref).max()))
        extra = f"; ONNX Runtime's own int8 path is {float(np.abs(refs['as is'] - ref).max()):.3g} from it" if twin else ""
        print(f"{case} ({ops.count('MatMulInteger')} MatMulInteger{', %d ConvInteger' % ops.count('ConvInteger') if 'ConvInteger' in ops else ''}"
              f"{'; onnxc --quantize int8-dynamic on the float model' if by == 'onnxc' else ''}) vs ONNX Runtime {ort.__version__}"
              f"{' on its uint8 twin (no VNNI here)' if twin else ''}: {'PASS' if err <= limit else 'FAIL'}: max |diff| {err:.3g} "
              f"(limit {limit:.3g}){extra}")
        if err > limit:
            failures.append(f"{case}: {err:.3g} from ONNX Runtime (limit {limit:.3g})")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
