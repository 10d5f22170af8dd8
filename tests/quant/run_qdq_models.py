"""tests/quant/run_qdq_models.py — quantized (QDQ) models made by ONNX Runtime's quantizer,
compiled by onnxc both ways (--quantized float and integer), against ONNX Runtime's outputs.

Each case is a small float CNN written with onnx.helper (seeded random weights: convolutions
3x3 with padding, strided, grouped, 1x1, with and without Relu; residual adds in one, max pools
and a Concat in another), quantized by
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
A third model adds two residual blocks (Add then Relu, and a plain Add, between DequantizeLinear
and QuantizeLinear): --quantized integer must make both onnxc.qdq_add and stay within 1 step of
ONNX Runtime's integer kernels (its QLinearAdd rescales in fixed point, onnxc.qdq_add with the
float arithmetic of the ops it replaces). A fourth, inception-like, has max pools and a Concat of
three branches between DequantizeLinear and QuantizeLinear nodes: --quantized integer must run
both pools and the Concat on bytes (branches at another scale requantized to the Concat's by
onnxc.lookup tables) and equal ONNX Runtime's integer kernels exactly. A fifth ends in a classifier
head (global pool, Flatten, Gemm with transB = 1): --quantized integer must make the Gemm a 1x1
QLinearConv (no float Gemm left) and equal ONNX Runtime's integer kernels (its QGemm) exactly. ADD_CASES check
onnxc.qdq_add alone (uint8 with a Relu; int8 and uint8 inputs to an int8 output, alike and
broadcast), against ONNX Runtime running DequantizeLinear, Add and QuantizeLinear as written and
against its QLinearAdd: within 1 step of each (an FMA in the C may move a value next to a
rounding boundary); MUL_CASES onnxc.qdq_mul the same way (squeeze-and-excitation gates too);
LOOKUP_CASES check onnxc.lookup (a SiLU as quantize_static writes it, HardSwish on int8, an erf
GELU spelled out, over every value of the input's type) the same way; quantize_cases check a
per-tensor QuantizeLinear to uint8 and int8 exactly (ties, saturation, infinities, -0). These
compile for the host with -march=native (its AVX2 paths) and, on x86-64, for x86-64-sse4 (plain C).
Exits 1 on any failure; prints one line per case and check.

Usage: .venv/bin/python tests/quant/run_qdq_models.py --compiler COMPILE_MODEL --work DIR [--cflags=...]
"""
import os
import platform
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                      quantize_static)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quant_common import script_args, vnni  # noqa: E402

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


def float_model(path, seed, kind="conv_chain"):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    x = conv(nodes, inits, rng, "input", 8, 16, 3, "c1")
    if kind == "inception":  # a max pool, then three branches (one through a max pool) joined by a Concat
        nodes.append(helper.make_node("MaxPool", [x], ["p1"], name="pool1", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
        a = conv(nodes, inits, rng, "p1", 16, 4, 1, "b1")
        b = conv(nodes, inits, rng, "p1", 16, 8, 3, "b2")
        nodes.append(helper.make_node("MaxPool", ["p1"], ["p2"], name="pool2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        c = conv(nodes, inits, rng, "p2", 16, 4, 1, "b3")
        nodes.append(helper.make_node("Concat", [a, b, c], ["cat"], name="concat", axis=1))
        x = "cat"
    elif kind == "residual":  # two residual blocks: Add + Relu, and a plain Add
        y = conv(nodes, inits, rng, x, 16, 16, 3, "c2", relu=False)
        nodes.append(helper.make_node("Add", [x, y], ["add1"], name="add1"))
        nodes.append(helper.make_node("Relu", ["add1"], ["r1"], name="add1_relu"))
        y = conv(nodes, inits, rng, "r1", 16, 16, 1, "c3", relu=False)
        nodes.append(helper.make_node("Add", ["r1", y], ["add2"], name="add2"))
        x = "add2"
    elif kind == "fc":  # a classifier head: global pool, Flatten, Gemm (transB = 1, as PyTorch writes a Linear)
        x = conv(nodes, inits, rng, x, 16, 32, 3, "c2", stride=2)
        nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
        nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
        inits += [numpy_helper.from_array((rng.standard_normal((10, 32)) / np.sqrt(32)).astype(np.float32), "fc_w"),
                  numpy_helper.from_array((rng.standard_normal(10) * 0.1).astype(np.float32), "fc_b")]
        nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["output"], name="fc", transB=1))
    else:
        x = conv(nodes, inits, rng, x, 16, 16, 3, "c2", stride=2)
        x = conv(nodes, inits, rng, x, 16, 16, 3, "c3", group=4)
    if kind != "fc":
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
    """The quantized model with its int8 weights (DequantizeLinear of an int8 initializer;
    MatMulInteger's B, as quantize_dynamic writes it; QLinearConv's and QGemm's W, in the
    QOperator format) and their zero points shifted by 128 into uint8: the same dequantized
    values and integer products, so the same model; ONNX Runtime's uint8 x uint8 kernels are
    exact on every x86 CPU."""
    m = onnx.load(src)
    inits = {t.name: t for t in m.graph.initializer}
    done = set()
    for n in m.graph.node:
        w, zp = {"DequantizeLinear": (0, 2), "MatMulInteger": (1, 3), "QLinearConv": (3, 5), "QGemm": (3, 5)}.get(n.op_type, (None, None))
        if w is None or len(n.input) <= zp or n.input[w] not in inits or inits[n.input[w]].data_type != TensorProto.INT8:
            continue
        for name in (n.input[w], n.input[zp]):
            if name not in done:
                done.add(name)
                a = numpy_helper.to_array(inits[name]).astype(np.int16) + 128
                inits[name].CopyFrom(numpy_helper.from_array(a.astype(np.uint8), name))
    onnx.save(m, dst)


# DequantizeLinear(a), DequantizeLinear(b) → Add [→ Relu] → QuantizeLinear, a and b graph
# inputs: name: (a shape and type, b shape and type, y type, Relu).
ADD_CASES = {
    "qdq_add_u8": (((2, 16, 9, 13), "u8"), ((2, 16, 9, 13), "u8"), "u8", True),
    "qdq_add_s8": (((2, 16, 9, 13), "s8"), ((2, 16, 9, 13), "u8"), "s8", False),
    "qdq_add_s8_broadcast": (((2, 16, 9, 13), "s8"), ((16, 1, 13), "u8"), "s8", False),
}
# The same with Mul: alike, a squeeze-and-excitation's gate (one b per row of 117 and of 128
# elements: the kernel's rows with a tail and without) and another broadcast.
MUL_CASES = {
    "qdq_mul_u8": (((2, 16, 9, 13), "u8"), ((2, 16, 9, 13), "u8"), "u8", False, "Mul"),
    "qdq_mul_gate_u8": (((2, 16, 9, 13), "u8"), ((2, 16, 1, 1), "u8"), "u8", False, "Mul"),
    "qdq_mul_gate_s8": (((1, 8, 1, 1), "u8"), ((1, 8, 8, 16), "s8"), "s8", False, "Mul"),
    "qdq_mul_s8_broadcast": (((2, 16, 9, 13), "s8"), ((16, 1, 13), "u8"), "s8", False, "Mul"),
}


def add_model(path, spec, rng):
    (ash, at), (bsh, bt), yt, relu = spec[:4]
    op = spec[4] if len(spec) > 4 else "Add"
    tp = {"u8": (TensorProto.UINT8, np.uint8), "s8": (TensorProto.INT8, np.int8)}
    inits = [numpy_helper.from_array(np.array(0.031, np.float32), "sa"), numpy_helper.from_array(np.array(0.017, np.float32), "sb"),
             numpy_helper.from_array(np.array(0.043, np.float32), "sy"),
             numpy_helper.from_array(np.array(121 if at == "u8" else -7, tp[at][1]), "za"),
             numpy_helper.from_array(np.array(133 if bt == "u8" else 5, tp[bt][1]), "zb"),
             numpy_helper.from_array(np.array(0 if relu and yt == "u8" else 3, tp[yt][1]), "zy")]
    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["da"], name="dqa"),
             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["db"], name="dqb"),
             helper.make_node(op, ["da", "db"], ["s"], name=op.lower())]
    if relu:
        nodes.append(helper.make_node("Relu", ["s"], ["r"], name="relu"))
    nodes.append(helper.make_node("QuantizeLinear", ["r" if relu else "s", "sy", "zy"], ["y"], name="q"))
    g = helper.make_graph(nodes, "qdq_add", [helper.make_tensor_value_info("a", tp[at][0], ash), helper.make_tensor_value_info("b", tp[bt][0], bsh)],
                          [helper.make_tensor_value_info("y", tp[yt][0], None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    lo = {"u8": (0, 256), "s8": (-128, 128)}
    return {"a": rng.integers(*lo[at], size=ash).astype(tp[at][1]), "b": rng.integers(*lo[bt], size=bsh).astype(tp[bt][1])}


def add_cases(args, failures):
    """onnxc.qdq_add (--quantized integer) against ONNX Runtime running DQ, Add and Q as written,
    and against its QLinearAdd (its QDQ fusion): within 1 step of each (an FMA in the C, and
    QLinearAdd's fixed-point rescaling, may move a value next to a rounding boundary)."""
    one_op_cases(args, failures, "onnxc.qdq_add", ADD_CASES, add_model, np.random.default_rng(31))
    one_op_cases(args, failures, "onnxc.qdq_mul", MUL_CASES, add_model, np.random.default_rng(33))


# DequantizeLinear(a) → elementwise float ops → QuantizeLinear, a graph input holding every value
# of its type: name: (a shape and type, y type, the function). The shapes' element counts are a
# multiple of 32 (the AVX2 loop does all) and not (a tail).
LOOKUP_CASES = {
    "lookup_silu_u8": (((2, 16, 9, 13), "u8"), "u8", "silu"),
    "lookup_hardswish_s8": (((3, 16, 9, 11), "s8"), "s8", "hardswish"),
    "lookup_gelu_u8_to_s8": (((1, 7, 5, 11), "u8"), "s8", "gelu"),
}


def lookup_model(path, spec, rng):
    """The function as quantize_static writes it: SiLU as x * DQ(Q(Sigmoid(x))) (its Sigmoid
    output quantized too), HardSwish as one op, GELU (erf form) spelled out with constants."""
    (ash, at), yt, fn = spec
    tp = {"u8": (TensorProto.UINT8, np.uint8), "s8": (TensorProto.INT8, np.int8)}
    inits = [numpy_helper.from_array(np.array(0.047, np.float32), "sa"), numpy_helper.from_array(np.array(0.029, np.float32), "sy"),
             numpy_helper.from_array(np.array(131 if at == "u8" else -3, tp[at][1]), "za"),
             numpy_helper.from_array(np.array(17 if yt == "u8" else -60, tp[yt][1]), "zy")]
    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["x"], name="dqa")]
    if fn == "silu":
        inits += [numpy_helper.from_array(np.array(1 / 255, np.float32), "ss"), numpy_helper.from_array(np.array(0, np.uint8), "zs")]
        nodes += [helper.make_node("Sigmoid", ["x"], ["sg"], name="sigmoid"), helper.make_node("QuantizeLinear", ["sg", "ss", "zs"], ["sq"], name="qs"),
                  helper.make_node("DequantizeLinear", ["sq", "ss", "zs"], ["sd"], name="dqs"), helper.make_node("Mul", ["x", "sd"], ["f"], name="mul")]
    elif fn == "hardswish":
        nodes.append(helper.make_node("HardSwish", ["x"], ["f"], name="hardswish"))
    else:
        inits += [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in (("sqrt2", np.sqrt(2)), ("one", 1), ("half", 0.5))]
        nodes += [helper.make_node("Div", ["x", "sqrt2"], ["g0"], name="div"), helper.make_node("Erf", ["g0"], ["g1"], name="erf"),
                  helper.make_node("Add", ["g1", "one"], ["g2"], name="add"), helper.make_node("Mul", ["x", "g2"], ["g3"], name="mul"),
                  helper.make_node("Mul", ["g3", "half"], ["f"], name="mul_half")]
    nodes.append(helper.make_node("QuantizeLinear", ["f", "sy", "zy"], ["y"], name="q"))
    g = helper.make_graph(nodes, fn, [helper.make_tensor_value_info("a", tp[at][0], ash)], [helper.make_tensor_value_info("y", tp[yt][0], None)],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.save(m, path)
    lo = {"u8": 0, "s8": -128}[at]
    a = (np.arange(int(np.prod(ash))) % 256 + lo).astype(tp[at][1])
    return {"a": rng.permutation(a).reshape(ash)}


def lookup_cases(args, failures):
    """onnxc.lookup (--quantized integer) against ONNX Runtime running the function as written, and
    with its optimizations (which may make it a QLinearSigmoid or the like): within 1 step of each
    (the table holds what onnxc's reference ops compute; ONNX Runtime's Sigmoid, Erf and HardSwish
    round differently)."""
    one_op_cases(args, failures, "onnxc.lookup", LOOKUP_CASES, lookup_model, np.random.default_rng(41))


def one_op_cases(args, failures, op, cases, build, rng):
    """Each case's model (made by `build`) compiled with --quantized integer must hold one `op`
    (--dump-ir) and give outputs within 1 step of ONNX Runtime's, as written and optimized."""
    for case, spec in cases.items():
        d = os.path.join(args.work, case)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        feeds = build(path, spec, rng)
        refs = {}
        for kind, level in (("as written", ort.GraphOptimizationLevel.ORT_DISABLE_ALL), ("optimized", ort.GraphOptimizationLevel.ORT_ENABLE_ALL)):
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.graph_optimization_level = level
            refs[kind] = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        ins = []
        for k, v in feeds.items():
            np.save(os.path.join(d, k + ".npy"), v)
            ins += ["--input", f"{k}={os.path.join(d, k + '.npy')}"]
        for form, flags in forms(args):
            what = f"{case} ({form})"
            out_dir = os.path.join(d, form.split()[0])
            c = run([args.compiler, path, "-o", out_dir, "--name", "m", "--quantized", "integer", "--dump-ir", "--quiet", "--verify-passes",
                     "--threads", "2", "--parallel-min-work", "1"] + flags)
            if c.returncode != 0:
                failures.append(f"{what}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
                continue
            said = [line.strip() for line in c.stdout.splitlines() if f"= {op}(" in line]
            if len(said) != 1:
                failures.append(f"{what}: --dump-ir shows {len(said)} {op} lines, expected 1")
            out = os.path.join(out_dir, "y.npy")
            r = run([os.path.join(out_dir, "m")] + ins + ["--output", f"y={out}", "--quiet", "--threads", "2"])
            if r.returncode != 0:
                failures.append(f"{what}: the binary exited {r.returncode}: {r.stderr.strip()}")
                continue
            y = np.load(out)
            for kind, ref in refs.items():
                if y.shape != ref.shape or y.dtype != ref.dtype:
                    failures.append(f"{what}: output {y.dtype}{list(y.shape)}, ONNX Runtime's {ref.dtype}{list(ref.shape)}")
                    break
                steps = np.abs(y.astype(np.int64) - ref.astype(np.int64))
                ok = int(steps.max()) <= 1
                print(f"{what} vs ONNX Runtime {ort.__version__} {kind}: {'PASS' if ok else 'FAIL'}: at most {int(steps.max())} steps "
                      f"(limit 1), {100 * float(np.mean(steps == 0)):.2f}% of {y.size} elements equal; {said[0][:100] if said else '?'}")
                if not ok:
                    failures.append(f"{what} vs {kind}: {int(steps.max())} steps off (limit 1)")


def forms(args):
    """(form, compile-model flags): the host's vector code (on x86-64 with AVX2 the intrinsics
    paths), and on x86-64 also the plain C of --target x86-64-sse4."""
    out = [("host", ["--cflags=" + (args.cflags + " -march=native").strip()])]
    if platform.machine() in ("x86_64", "AMD64"):
        out.append(("x86-64-sse4 (plain C)", ["--target", "x86-64-sse4", "--cflags=" + (args.cflags + " -march=x86-64-v2").strip()]))
    return out


def quantize_cases(args, failures):
    """QuantizeLinear per tensor of 1007 float32 elements (32 at a time in AVX2 vectors on the host,
    then a tail of 15), to uint8 and int8, against ONNX Runtime exactly: ties of both parities,
    values that saturate, +-inf, -0."""
    rng = np.random.default_rng(37)
    s = np.float32(0.0625)
    x = (rng.integers(-2400, 2400, 1007).astype(np.float32) * np.float32(0.5) * s).astype(np.float32)
    x[[3, 40, 700, 1000]] = [np.inf, -np.inf, 1e30, -1e30]
    x[[5, 1001]] = -0.0
    x[[6, 1002]] = 0.5 * s
    for case, zt, z in (("quantize_u8", TensorProto.UINT8, np.uint8(100)), ("quantize_s8", TensorProto.INT8, np.int8(-7))):
        d = os.path.join(args.work, case)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        g = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")], case,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1007])], [helper.make_tensor_value_info("y", zt, None)],
                              [numpy_helper.from_array(np.array(s), "s"), numpy_helper.from_array(np.array(z), "z")])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, path)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        ref = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)
        for form, flags in forms(args):
            what = f"{case} ({form})"
            out_dir = os.path.join(d, form.split()[0])
            c = run([args.compiler, path, "-o", out_dir, "--name", "m", "--quiet", "--threads", "2", "--parallel-min-work", "1"] + flags)
            if c.returncode != 0:
                failures.append(f"{what}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
                continue
            out = os.path.join(out_dir, "y.npy")
            r = run([os.path.join(out_dir, "m"), "--input", f"x={xin}", "--output", f"y={out}", "--quiet", "--threads", "2"])
            if r.returncode != 0:
                failures.append(f"{what}: the binary exited {r.returncode}: {r.stderr.strip()}")
                continue
            y = np.load(out)
            diff = int(np.count_nonzero(y != ref)) if y.shape == ref.shape and y.dtype == ref.dtype else -1
            print(f"{what} vs ONNX Runtime {ort.__version__}: {'PASS' if diff == 0 else 'FAIL'}: {diff} of {x.size} elements differ")
            if diff:
                failures.append(f"{what}: {diff} elements differ from ONNX Runtime (-1: another shape or type)")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    args = script_args()
    failures = []
    for wname, wtype, kind in (("u8", QuantType.QUInt8, "conv_chain"), ("s8", QuantType.QInt8, "conv_chain"), ("s8", QuantType.QInt8, "residual"),
                               ("s8", QuantType.QInt8, "inception"), ("s8", QuantType.QInt8, "fc")):
        residual = kind == "residual"
        case = f"{kind}_w{wname}"
        d = os.path.join(args.work, case)
        os.makedirs(d, exist_ok=True)
        fp, qp = os.path.join(d, "float.onnx"), os.path.join(d, "model.onnx")
        float_model(fp, 11, kind)
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
            adds = sum(1 for line in c.stdout.splitlines() if "onnxc.qdq_add" in line and "=" in line)
            if adds != (2 if residual and form == "integer" else 0):
                failures.append(f"{case} {form}: --dump-ir shows {adds} onnxc.qdq_add lines")
            if kind == "fc" and form == "integer":
                # The Gemm as a 1x1 QLinearConv between Reshapes.
                gemms = sum(1 for line in c.stdout.splitlines() if "= Gemm(" in line)
                fcs = sum(1 for line in c.stdout.splitlines() if "= QLinearConv(" in line and "# " in line and " fc" in line.split("# ")[-1])
                if gemms or fcs != 1:
                    failures.append(f"{case} {form}: --dump-ir shows {gemms} Gemm and {fcs} QLinearConv lines for the fc, expected 0 and 1")
            if kind == "inception" and form == "integer":
                # Both pools on bytes; the Concat of bytes, its inputs requantized by tables.
                pools = sum(1 for line in c.stdout.splitlines() if "= MaxPool(" in line and ": u8[" in line)
                cats = sum(1 for line in c.stdout.splitlines() if "= Concat(" in line and ": u8[" in line)
                if pools != 2 or cats != 1:
                    failures.append(f"{case} {form}: --dump-ir shows {pools} uint8 MaxPool and {cats} uint8 Concat lines, expected 2 and 1")
            out = os.path.join(out_dir, "out.npy")
            r = run([os.path.join(out_dir, "qdq"), "--input", f"input={xin}", "--output", f"output={out}", "--quiet"])
            if r.returncode != 0:
                failures.append(f"{case} {form}: the binary exited {r.returncode}: {r.stderr.strip()}")
                continue
            y = np.load(out).astype(np.float64)
            # integer: exactly ONNX Runtime's integer kernels, within 2 steps of the float graph;
            # float: within 1 step of ONNX Runtime running the same float graph. With residual
            # adds, 1 step of the integer kernels: ONNX Runtime's QLinearAdd rescales in fixed
            # point (MLAS's qladd), onnxc.qdq_add with the float arithmetic of DQ, Add and Q.
            checks = [("integer", 1 if residual else 0), ("as written", 2)] if form == "integer" else [("as written", 1)]
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
    add_cases(args, failures)
    lookup_cases(args, failures)
    quantize_cases(args, failures)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
