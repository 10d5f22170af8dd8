"""tests/quant/run_qmatmul_kernels.py — onnxc's integer matrix products (MatMulInteger and
QLinearMatMul of uint8 A and a constant int8 or uint8 B) against ONNX Runtime, exactly.

Each case is one node written with onnx.helper, A (uint8) the graph input and B an initializer,
over the shapes the byte-quads kernel (codegen/c/kernels/quantize.cc, emit_qmatmul_quads) treats
apart: rows past a multiple of its tile (6 or 12), columns past a multiple of its panel (64, or
32 where K is long), K not a multiple of 4 (the last quad read under a mask), a K long enough
for the narrower panel, batches of A with one B and with a B per batch, zero points per tensor
and per column (zero and not), uint8 B (its bytes less 128 as they are loaded), and
QLinearMatMul's requantization; a 2-D B is packed at compile time (--dump-ir: %b_KN64n4k), a B per
batch by each task. Every case is compiled at 2 threads with every loop nest that can go parallel made
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

# name: (A shape, B shape, B type, B zero point: "none", "zero", "tensor" or "column", op)
CASES = {
    "k768_rows40_cols100": ((1, 40, 768), (768, 100), "s8", "zero", "MatMulInteger"),
    "batch3_k37_u8_zp": ((3, 7, 37), (37, 70), "u8", "tensor", "MatMulInteger"),
    "k1030_column_zp": ((13, 1030), (1030, 16), "s8", "column", "MatMulInteger"),
    "k3203_narrow_panel": ((1, 29, 3203), (3203, 50), "s8", "none", "MatMulInteger"),
    "b_per_batch": ((2, 9, 64), (2, 64, 24), "u8", "none", "MatMulInteger"),
    "qlinear_k150": ((20, 150), (150, 33), "s8", "tensor", "QLinearMatMul"),
}


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
    ashape, bshape, bt, bzp, op = spec
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
    if op == "MatMulInteger":
        node = helper.make_node("MatMulInteger", ["a", "b", "a_zp"] + (["b_zp"] if bzp != "none" else []), ["y"], name=name)
        out = helper.make_tensor_value_info("y", TensorProto.INT32, oshape)
    else:
        K = ashape[-1]
        y_scale = np.float32(0.02 * 0.01 * 60 * 60 * np.sqrt(K) / 40)
        inits += [numpy_helper.from_array(np.array(np.float32(0.02)), "a_scale"), numpy_helper.from_array(np.array(np.float32(0.01)), "b_scale"),
                  numpy_helper.from_array(np.array(y_scale), "y_scale"), numpy_helper.from_array(np.array(128, np.uint8), "y_zp")]
        node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"], ["y"], name=name)
        out = helper.make_tensor_value_info("y", TensorProto.UINT8, oshape)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("a", TensorProto.UINT8, ashape)], [out], inits)
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
        a = rng.integers(0, 256, size=spec[0]).astype(np.uint8)
        ain = os.path.join(d, "a.npy")
        np.save(ain, a)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        ref_model = u8_twin(m) if spec[2] == "s8" else m
        ref = ort.InferenceSession(ref_model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {"a": a})[0]
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
            kernel = [ln for ln in c.stdout.splitlines() if ln.strip().startswith("%y: ") and spec[4] in ln]
            said = kernel[0] if kernel else ""
            got = "quads" if "byte quads" in said else "loop"
            if not kernel or got != expected:
                failures.append(f"{what}: --dump-ir says {said.strip() or 'nothing'}, expected the {expected} kernel")
            # A 2-D B of the quads kernel is packed at compile time (%b_KN64n4k), one per batch per task.
            packed = "n4k(const)" in c.stdout
            if packed != (expected == "quads" and len(spec[1]) == 2):
                failures.append(f"{what}: B {'packed' if packed else 'not packed'} at compile time, expected the other")
            out = os.path.join(out_dir, "y.npy")
            r = subprocess.run([os.path.join(out_dir, "m"), "--input", f"a={ain}", "--output", f"y={out}", "--quiet", "--threads", "2"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{what}: the binary exited {r.returncode}: {r.stderr.strip()[-2000:]}")
                continue
            y = np.load(out)
            bad = int(np.count_nonzero(y != ref)) if y.shape == ref.shape else -1
            print(f"{what}: {'PASS' if bad == 0 else 'FAIL'}: {bad} of {ref.size} outputs differ from ONNX Runtime's"
                  f"{' (uint8 twin)' if spec[2] == 's8' else ''}")
            if bad != 0:
                failures.append(f"{what}: {bad} outputs differ (shape {list(y.shape)}, ONNX Runtime's {list(ref.shape)})")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
