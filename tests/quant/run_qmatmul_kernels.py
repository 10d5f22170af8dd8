"""tests/quant/run_qmatmul_kernels.py — onnxc's integer matrix products (MatMulInteger and
QLinearMatMul of uint8 A and a constant int8 or uint8 B) against ONNX Runtime, exactly.

Each case is one node written with onnx.helper, A (uint8) the graph input and B an initializer,
over the shapes the byte-quads kernel (codegen/c/kernels/quantize.cc, emit_qmatmul_quads) treats
apart: rows past a multiple of its tile (6 or 12), columns past a multiple of its panel (64, or
32 where K is long), K not a multiple of 4 (the last quad read under a mask), a K long enough
for the narrower panel, batches of A with one B and with a B per batch, zero points per tensor
and per column (zero and not), uint8 B (its bytes less 128 as they are loaded),
QLinearMatMul's requantization, and quantize_dynamic's float steps after MatMulInteger (Cast, the
scale, the bias, then GELU or a residual add: in the kernel's tiles on its byte-quads forms,
within 2e-6 relative of ONNX Runtime's). A batched A with one 2-D B is one product of all the
batches' rows (ViT's [197, 1, 768] projections; --dump-ir: "A's batch as rows"); a 2-D B is packed
at compile time (--dump-ir: %b_KN64n4k), a B per batch by each task. Every case is compiled at 2 threads with every loop nest that can go parallel made
parallel (--parallel-min-work 1, so the row blocks run too):
  - for the host (on a CPU with AVX-512 VNNI the byte-quads kernel, elsewhere the plain loop),
  - on x86-64 for --target x86-64-sse4 (the plain loop), for --target x86-64-avx512vnni built for
    x86-64-v2 (the byte-quads kernel's plain-C form, on any x86-64 CPU) and for x86-64-avx512vnni
    (its vpdpbusd form: SKIPPED on a CPU without AVX-512 VNNI);
--dump-ir must name the kernel the form is meant to reach, and the output must equal ONNX
Runtime's (CPU provider, one thread) element for element. The reference runs the case's uint8
twin where B is int8 (B and its zero point plus 128: the same products; ONNX Runtime's uint8 x
int8 kernels saturate int16 pair sums on CPUs without VNNI).
Exits 1 on any failure; prints one line per case and form.

Usage: .venv/bin/python tests/quant/run_qmatmul_kernels.py --compiler COMPILE_MODEL --work DIR [--cflags=...]
"""
import os
import platform
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quant_common import cpu_flags, script_args  # noqa: E402

# name: (A shape, B shape, B type, B zero point: "none", "zero", "tensor" or "column", op[, tail])
# tail: the float steps quantize_dynamic writes after a MatMulInteger, which the byte-quads
# kernel applies to its tiles (passes/fuse.cc, grow_to_float): Cast, Mul by the scale, Add of
# the bias, then "gelu" (erf form) or "residual" (Add of a second graph input, r).
CASES = {
    "k768_rows40_cols100": ((1, 40, 768), (768, 100), "s8", "zero", "MatMulInteger"),
    "batch3_k37_u8_zp": ((3, 7, 37), (37, 70), "u8", "tensor", "MatMulInteger"),
    "k1030_column_zp": ((13, 1030), (1030, 16), "s8", "column", "MatMulInteger"),
    "k3203_narrow_panel": ((1, 29, 3203), (3203, 50), "s8", "none", "MatMulInteger"),
    "b_per_batch": ((2, 9, 64), (2, 64, 24), "u8", "none", "MatMulInteger"),
    "qlinear_k150": ((20, 150), (150, 33), "s8", "tensor", "QLinearMatMul"),
    "tail_bias_gelu": ((1, 20, 200), (200, 100), "s8", "none", "MatMulInteger", "gelu"),
    "tail_residual_batch2": ((2, 9, 66), (66, 70), "u8", "column", "MatMulInteger", "residual"),
    "vit_rows_of_batches": ((13, 1, 100), (100, 80), "s8", "none", "MatMulInteger", "gelu"),
}


def tail_nodes(name, tail, N, rng):
    """The float steps after the product y_int (Cast, Mul, Add bias, then the tail's own) ending in y,
    their initializers, and the extra graph inputs' shapes."""
    inits = [numpy_helper.from_array(np.array(np.float32(0.0123)), "scale"),
             numpy_helper.from_array(rng.uniform(-2, 2, size=N).astype(np.float32), "bias")]
    nodes = [helper.make_node("Cast", ["y_int"], ["y_f"], to=TensorProto.FLOAT, name=name + "_cast"),
             helper.make_node("Mul", ["y_f", "scale"], ["y_s"], name=name + "_scale"),
             helper.make_node("Add", ["bias", "y_s"], ["y_b"], name=name + "_bias")]
    if tail == "gelu":
        inits += [numpy_helper.from_array(np.array(np.float32(1.4142135)), "sqrt2"),
                  numpy_helper.from_array(np.array(np.float32(1.0)), "one"),
                  numpy_helper.from_array(np.array(np.float32(0.5)), "half")]
        nodes += [helper.make_node("Div", ["y_b", "sqrt2"], ["g_d"]), helper.make_node("Erf", ["g_d"], ["g_e"]),
                  helper.make_node("Add", ["g_e", "one"], ["g_a"]), helper.make_node("Mul", ["y_b", "g_a"], ["g_m"]),
                  helper.make_node("Mul", ["g_m", "half"], ["y"])]
    else:
        nodes.append(helper.make_node("Add", ["r", "y_b"], ["y"], name=name + "_residual"))
    return nodes, inits


def forms(args):
    """(form, compile-model flags, kernel expected, why it is skipped or None)."""
    x86 = platform.machine() in ("x86_64", "AMD64")
    vn = "avx512_vnni" in cpu_flags()
    out = [("host", ["--cflags=" + (args.cflags + " -march=native").strip()], "quads" if x86 and vn else "loop", None)]
    if x86:
        out.append(("x86-64-sse4", ["--target", "x86-64-sse4", "--cflags=" + (args.cflags + " -march=x86-64-v2").strip()], "loop", None))
        out.append(("x86-64-avx512vnni-as-v2 (plain C)",
                    ["--target", "x86-64-avx512vnni", "--cflags=" + (args.cflags + " -march=x86-64-v2").strip()], "quads", None))
        out.append(("x86-64-avx512vnni (vpdpbusd)",
                    ["--target", "x86-64-avx512vnni", "--cflags=" + (args.cflags + " -march=x86-64-v4 -mavx512vnni").strip()], "quads",
                    None if vn else "this CPU has no avx512_vnni"))
    return out


def make_case(name, spec, rng):
    ashape, bshape, bt, bzp, op = spec[:5]
    tail = spec[5] if len(spec) > 5 else None
    lo, hi, dt, npt = (0, 255, TensorProto.UINT8, np.uint8) if bt == "u8" else (-128, 127, TensorProto.INT8, np.int8)
    b = rng.integers(lo, hi + 1, size=bshape).astype(npt)
    N = bshape[-1]
    inits = [numpy_helper.from_array(b, "b"), numpy_helper.from_array(np.array(117, np.uint8), "a_zp")]
    if bzp == "zero":
        bz = np.array(0, npt)
    elif bzp == "tensor":
        bz = np.array(131 if bt == "u8" else -3, npt)
    elif bzp == "column":
        bz = rng.integers(lo // 2, hi // 2 + 1, size=N).astype(npt)
    if bzp != "none":
        inits.append(numpy_helper.from_array(bz, "b_zp"))
    oshape = list(ashape[:-1]) + [N] if len(bshape) == 2 else [bshape[0], ashape[-2], N]
    nodes, ins = [], [helper.make_tensor_value_info("a", TensorProto.UINT8, ashape)]
    if op == "MatMulInteger":
        node = helper.make_node("MatMulInteger", ["a", "b", "a_zp"] + (["b_zp"] if bzp != "none" else []), ["y_int" if tail else "y"],
                                name=name)
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT if tail else TensorProto.INT32, oshape)
        if tail:
            nodes, more = tail_nodes(name, tail, N, rng)
            inits += more
            if tail == "residual":
                ins.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, oshape))
    else:
        K = ashape[-1]
        y_scale = np.float32(0.02 * 0.01 * 60 * 60 * np.sqrt(K) / 40)
        inits += [numpy_helper.from_array(np.array(np.float32(0.02)), "a_scale"), numpy_helper.from_array(np.array(np.float32(0.01)), "b_scale"),
                  numpy_helper.from_array(np.array(y_scale), "y_scale"), numpy_helper.from_array(np.array(128, np.uint8), "y_zp")]
        node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"], ["y"], name=name)
        out = helper.make_tensor_value_info("y", TensorProto.UINT8, oshape)
    g = helper.make_graph([node] + nodes, name, ins, [out], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def u8_twin(m):
    """The model with its int8 B and B zero point plus 128 (uint8): the same products."""
    t = onnx.ModelProto()
    t.CopyFrom(m)
    was_s8 = any(i.name == "b" and i.data_type == TensorProto.INT8 for i in m.graph.initializer)
    for init in t.graph.initializer:
        if init.name in ("b", "b_zp") and init.data_type == TensorProto.INT8:
            a = numpy_helper.to_array(init).astype(np.int16) + 128
            init.CopyFrom(numpy_helper.from_array(a.astype(np.uint8), init.name))
    if was_s8 and not any(i.name == "b_zp" for i in t.graph.initializer):  # no zero point: the twin's is 128
        t.graph.initializer.append(numpy_helper.from_array(np.array(128, np.uint8), "b_zp"))
        t.graph.node[0].input.append("b_zp")
    return t


def case_inputs(m, rng):
    """Random values for the model's inputs: a's bytes, r's floats."""
    feeds = {}
    for i in m.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        if i.type.tensor_type.elem_type == TensorProto.UINT8:
            feeds[i.name] = rng.integers(0, 256, size=shape).astype(np.uint8)
        else:
            feeds[i.name] = rng.uniform(-4, 4, size=shape).astype(np.float32)
    return feeds


def main():
    args = script_args(with_filter=True)
    failures = []
    rng = np.random.default_rng(2026)
    for name, spec in CASES.items():
        if args.filter not in name:
            continue
        d = os.path.join(args.work, name)
        os.makedirs(d, exist_ok=True)
        m = make_case(name, spec, rng)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        tail = spec[5] if len(spec) > 5 else None
        feeds = case_inputs(m, rng)
        in_args = []
        for k, v in feeds.items():
            np.save(os.path.join(d, k + ".npy"), v)
            in_args += ["--input", f"{k}={os.path.join(d, k + '.npy')}"]
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        # The float steps as written (ONNX Runtime's MatMulIntegerToFloat fusion off): Cast, Mul, Add in that order.
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        ref_model = u8_twin(m) if spec[2] == "s8" else m
        ref = ort.InferenceSession(ref_model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        for form, flags, expected, skip in forms(args):
            what = f"{name} ({spec[4]}, {form})"
            if skip:
                print(f"{what}: SKIPPED: {skip}")
                continue
            out_dir = os.path.join(d, form.split()[0])
            c = subprocess.run([args.compiler, path, "-o", out_dir, "--name", "m", "--dump-ir", "--quiet", "--verify-passes",
                                "--threads", "2", "--parallel-min-work", "1"] + flags, capture_output=True, text=True)
            if c.returncode != 0:
                failures.append(f"{what}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
                continue
            name_of = "%y_int: " if tail and expected == "loop" else "%y: "
            kernel = [ln for ln in c.stdout.splitlines() if ln.strip().startswith(name_of) and spec[4] in ln]
            said = kernel[0] if kernel else ""
            got = "quads" if "byte quads" in said else "loop"
            if not kernel or got != expected:
                failures.append(f"{what}: --dump-ir says {said.strip() or 'nothing'}, expected the {expected} kernel")
            # One B for every batch of contiguous A: the batches' rows fill the tiles (the variant says so).
            as_rows = "A's batch as rows" in said
            if expected == "quads" and as_rows != (len(spec[1]) == 2 and int(np.prod(spec[0][:-2])) > 1):
                failures.append(f"{what}: --dump-ir says {said.strip()}: A's batch {'' if as_rows else 'not '}taken as rows")
            # The byte-quads kernel takes the float steps (one group ending in y); the plain loop stores its int32 sums.
            fused = "= MatMulInteger+Cast+Mul+Add" in c.stdout and "+ epilogue" in said
            if tail and fused != (expected == "quads"):
                failures.append(f"{what}: --dump-ir says {said.strip() or 'nothing'}: the float steps "
                                f"{'fused' if fused else 'not fused'}, expected the other")
            # A 2-D B of the quads kernel is packed at compile time (%b_KN64n4k), one per batch per task.
            packed = "n4k(const)" in c.stdout
            if packed != (expected == "quads" and len(spec[1]) == 2):
                failures.append(f"{what}: B {'packed' if packed else 'not packed'} at compile time, expected the other")
            out = os.path.join(out_dir, "y.npy")
            r = subprocess.run([os.path.join(out_dir, "m")] + in_args + ["--output", f"y={out}", "--quiet", "--threads", "2"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{what}: the binary exited {r.returncode}: {r.stderr.strip()[-2000:]}")
                continue
            y = np.load(out)
            if y.shape != ref.shape:
                bad = -1
            elif tail:
                # Exact sums, then the same float operations but GELU's erf (onnxc's within 1.3 ulp of glibc's).
                bad = int(np.count_nonzero(np.abs(y - ref) > 2e-6 * np.maximum(1.0, np.abs(ref))))
            else:
                bad = int(np.count_nonzero(y != ref))
            print(f"{what}: {'PASS' if bad == 0 else 'FAIL'}: {bad} of {ref.size} outputs differ from ONNX Runtime's"
                  f"{' (uint8 twin)' if spec[2] == 's8' else ''}")
            if bad != 0:
                failures.append(f"{what}: {bad} outputs differ (shape {list(y.shape)}, ONNX Runtime's {list(ref.shape)})")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
