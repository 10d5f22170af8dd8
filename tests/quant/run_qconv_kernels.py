"""tests/quant/run_qconv_kernels.py — onnxc's integer convolution kernels (QLinearConv and
ConvInteger with constant weights) against ONNX Runtime, exactly.

Each case is one node written with onnx.helper: uint8 x as the graph input (int8 x and y in some
cases), seeded random weights as initializers, over the shapes the kernels treat apart: an odd
channel count (a pair half empty, a quad with 1, 2 or 3 channels), output channels past a multiple
of 8 or 16 (padding lanes), a block left over after the pairs of blocks, rows whose width is not a
multiple of the register tile, asymmetric pads, strides, dilations, groups, a reduction over 2304
products, per-tensor and per-channel weight zero points (zero and not), outputs that saturate,
depthwise convs (their own kernel: strided, dilated, 5x5 with unequal strides, in several bands of
rows, ConvInteger's too), a channel multiplier of 2 (the direct kernel), ConvInteger's int32
output, and residual adds after the conv (QDQ: DequantizeLinear, Add with a second input, Relu,
QuantizeLinear; compiled with --quantized integer), which the pointwise kernel on AVX-512 applies in
registers (--dump-ir: "+ epilogue"; ONNX Runtime runs those models unoptimized, so that its Add is
the float ops as written). Every case is compiled at 2 threads with every loop nest that can go parallel made
parallel (--parallel-min-work 1):
  - for the host (its vector code: on x86-64 with AVX2 the _mm256_madd_epi16 path, with VNNI the
    vpdpbusd one where the case's weights are int8 with a zero zero point, and the depthwise
    kernel's vector requantization), and
  - on x86-64 also for --target x86-64-sse4 (no AVX2: the plain-C form of the pairs kernel);
  - on x86-64, for the cases the byte-quads (VNNI) kernel takes, also for --target
    x86-64-avx512vnni built for x86-64-v2 (the quads' plain-C form, on any x86-64 CPU), for
    x86-64-avx512vnni (its AVX-512 VNNI form) and for x86-64-avxvnni (its 256-bit AVX-VNNI form,
    not in the sanitized build, whose --cflags name -fsanitize: it is the 512-bit form's code at
    half the width): the last two run where the CPU has that extension and say SKIPPED where it
    does not;
--dump-ir must name the kernel the case is meant to reach ("16-bit pairs", "byte quads", depthwise
or direct), and the binary's output must equal ONNX Runtime's (CPU provider, one thread) element
for element: both accumulate exactly in int32 and requantize with the same float32 multiplier and
rounding. ONNX Runtime's uint8 x int8 kernels saturate int16 pair sums where the CPU has no VNNI;
there the reference runs the case's uint8 twin (int8 weights and zero points plus 128: the same
products), as tests/quant/run_qdq_models.py explains.
Exits 1 on any failure; prints one line per case and form.

Usage: .venv/bin/python tests/quant/run_qconv_kernels.py --compiler COMPILE_MODEL --work DIR [--cflags=...]
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
from quant_common import cpu_flags, script_args, vnni  # noqa: E402
from run_qdq_models import forms  # noqa: E402

# name: (x shape, M, kernel, strides, pads, dilations, group, weight type, weight zero point
#        ("zero", "tensor" or "channel"), bias, y_scale factor, op, kernel expected where the
#        target has no VNNI[, activation type: "u8" (the default) or "s8", for x and y]); with
#        VNNI, a "pairs" case with int8 weights and a zero zero point runs on byte quads.
CASES = {
    "first_layer_c3": ((1, 3, 17, 19), 16, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "s8", "zero", True, 1.0, "QLinearConv", "pairs"),
    "m5_asym_pads": ((1, 7, 9, 10), 5, (3, 3), (1, 1), (0, 1, 1, 0), (1, 1), 1, "u8", "channel", True, 1.0, "QLinearConv", "pairs"),
    "pointwise_m24_batch2": ((2, 64, 6, 7), 24, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "u8", "tensor", False, 1.0, "QLinearConv",
                             "pairs"),
    "grouped_dilated": ((1, 16, 12, 12), 32, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 2, "s8", "channel", True, 1.0, "QLinearConv", "pairs"),
    "rect_strided_batch2": ((2, 5, 13, 11), 12, (5, 3), (2, 1), (2, 1, 1, 0), (1, 1), 1, "s8", "tensor", True, 1.0, "QLinearConv",
                            "pairs"),
    "saturating": ((1, 8, 10, 10), 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", "tensor", True, 0.05, "QLinearConv", "pairs"),
    "deep_k2304": ((1, 256, 7, 7), 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", "channel", True, 1.0, "QLinearConv", "pairs"),
    "m4_wide_rows": ((1, 4, 5, 70), 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", "channel", True, 1.0, "QLinearConv", "pairs"),
    "depthwise": ((1, 16, 9, 9), 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 16, "s8", "zero", True, 1.0, "QLinearConv", "depthwise"),
    "depthwise_s2_dilated": ((2, 12, 15, 14), 12, (3, 3), (2, 2), (2, 1, 1, 2), (2, 1), 12, "u8", "channel", True, 1.0, "QLinearConv",
                             "depthwise"),
    "depthwise_bands_saturating": ((1, 4, 75, 70), 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4, "s8", "channel", True, 0.05, "QLinearConv",
                                   "depthwise"),
    "depthwise_5x5_s3x2": ((1, 8, 23, 20), 8, (5, 5), (3, 2), (2, 1, 2, 3), (1, 1), 8, "u8", "tensor", True, 1.0, "QLinearConv",
                           "depthwise"),
    "depthwise_s8_activations": ((2, 6, 17, 40), 6, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 6, "s8", "channel", True, 0.5, "QLinearConv",
                                 "depthwise", "s8"),
    "depthwise_convinteger": ((1, 5, 12, 13), 5, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 5, "u8", "tensor", False, 1.0, "ConvInteger",
                              "depthwise"),
    "channel_multiplier_2": ((1, 6, 8, 8), 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 6, "s8", "channel", True, 1.0, "QLinearConv",
                             "direct"),
    "convinteger": ((1, 6, 8, 9), 10, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", "tensor", False, 1.0, "ConvInteger", "pairs"),
    # For the byte quads (int8 weights, zero zero points): a last quad of 3, 1 and 2 channels,
    # padding lanes (M = 8, 24, 40), a block left over, rows of 70 (tiles of 12 and of 10).
    "quads_c7_m24_asym": ((1, 7, 9, 10), 24, (3, 3), (1, 1), (0, 1, 1, 0), (1, 1), 1, "s8", "zero", True, 1.0, "QLinearConv", "pairs"),
    "quads_c5_m40_wide": ((1, 5, 6, 70), 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", "zero", True, 1.0, "QLinearConv", "pairs"),
    "quads_grouped_dilated": ((1, 64, 12, 12), 64, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 2, "s8", "zero", True, 1.0, "QLinearConv",
                              "pairs"),
    "quads_deep_k2304": ((1, 256, 7, 7), 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", "zero", True, 1.0, "QLinearConv", "pairs"),
    "quads_s8_strided_batch2": ((2, 6, 13, 11), 16, (5, 3), (2, 1), (2, 1, 1, 0), (1, 1), 1, "s8", "zero", True, 0.5, "QLinearConv",
                                "pairs", "s8"),
    "quads_saturating_m8": ((1, 8, 10, 10), 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", "zero", True, 0.05, "QLinearConv", "pairs"),
    "quads_pointwise_batch2": ((2, 64, 7, 9), 48, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", "zero", False, 1.0, "QLinearConv",
                               "pairs"),
    "quads_convinteger": ((1, 10, 8, 9), 20, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", "zero", False, 1.0, "ConvInteger", "pairs"),
    # A whole 7x7 map in one band, 3 blocks of channels a tile on AVX-512, the 14 blocks (the last
    # half padding) split over two tasks of 9 and 5 (3 + 3 + 3, then 3 + 2).
    "quads_7x7_m216_chunks": ((1, 20, 7, 7), 216, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "s8", "zero", True, 1.0, "QLinearConv", "pairs"),
    # Pointwise ones (with AVX-512 VNNI: the positions as the lanes): strided and padded, channels
    # past a multiple of 8, int8 activations over bands of 140 and 70 positions, ConvInteger's int32.
    "quads_pointwise_s2_pads": ((1, 7, 13, 11), 20, (1, 1), (2, 2), (1, 0, 0, 1), (1, 1), 1, "s8", "zero", True, 1.0, "QLinearConv",
                                "pairs"),
    "quads_pointwise_s8_wide": ((1, 12, 3, 70), 16, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", "zero", True, 0.5, "QLinearConv",
                                "pairs", "s8"),
    "quads_pointwise_convinteger": ((1, 9, 5, 5), 10, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", "zero", False, 1.0, "ConvInteger",
                                    "pairs"),
    # Residual adds (RESIDUAL): the pointwise kernel's output added to a second input between
    # quantize steps, which the AVX-512 forms do in registers (a fused group).
    "quads_pointwise_residual_relu": ((2, 64, 7, 9), 40, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", "zero", True, 1.0, "QLinearConv",
                                      "pairs"),
    "quads_pointwise_residual_s8": ((1, 12, 3, 70), 16, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, "s8", "zero", True, 0.5, "QLinearConv",
                                    "pairs", "s8"),
    "pairs_residual": ((1, 8, 10, 10), 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "u8", "tensor", True, 1.0, "QLinearConv", "pairs"),
}

# Cases whose QLinearConv output y goes on through DequantizeLinear, an Add with DequantizeLinear(r)
# (r a second graph input of y's shape and type) and QuantizeLinear, as a QDQ model's residual add:
# name: (whether y is the Add's first input, whether a Relu follows the Add). ONNX Runtime runs them
# with its graph optimizations off, so that the Add is its float ops (its fused QLinearAdd rounds
# an approximation: tests/quant/run_qdq_zoo.py).
RESIDUAL = {"quads_pointwise_residual_relu": (True, True), "quads_pointwise_residual_s8": (False, False), "pairs_residual": (True, False)}

# The VNNI targets: (name, lanes of int32 in a vector, the /proc/cpuinfo flag that runs its vector form,
# its vector form's flags).
VNNI_TARGETS = (("x86-64-avx512vnni", 16, "avx512_vnni", "-march=x86-64-v4 -mavx512vnni"),
                ("x86-64-avxvnni", 8, "avx_vnni", "-march=x86-64-v3 -mavxvnni"))


def quads(spec, lanes):
    """Whether a target whose int32 vectors have `lanes` lanes runs the case on byte quads."""
    M, group = spec[1], spec[6]
    return spec[12] == "pairs" and spec[7] == "s8" and spec[8] == "zero" and (group == 1 or (M // group) % lanes == 0)


def case_forms(args, spec):
    """(form, compile-model flags, kernel expected, why it is skipped or None) for one case: the
    host's and, on x86-64, the plain C of x86-64-sse4; for a case the quads kernel takes, also the
    quads' plain C and their two vector forms (skipped where the CPU lacks the extension)."""
    flags = cpu_flags()
    host_lanes = 16 if "avx512_vnni" in flags else 8 if "avx_vnni" in flags else 0
    out = []
    for form, fl in forms(args):
        vn = form == "host" and host_lanes and platform.machine() in ("x86_64", "AMD64") and quads(spec, host_lanes)
        out.append((form, fl, "quads" if vn else spec[12], None))
    if platform.machine() not in ("x86_64", "AMD64") or not quads(spec, 16):
        return out
    out.append(("x86-64-avx512vnni-as-v2 (quads, plain C)",
                ["--target", "x86-64-avx512vnni", "--cflags=" + (args.cflags + " -march=x86-64-v2").strip()], "quads", None))
    for name, lanes, flag, march in VNNI_TARGETS:
        if not quads(spec, lanes) or (lanes == 8 and "-fsanitize" in args.cflags):  # (sanitized: the 512-bit form only)
            continue
        skip = None if flag in flags else f"this CPU has no {flag}"
        out.append((f"{name} (quads, vector)", ["--target", name, "--cflags=" + (args.cflags + " " + march).strip()], "quads", skip))
    return out


def make_case(name, spec, rng):
    xs, M, k, strides, pads, dil, group, wt, wzp, bias, yfac, op = spec[:12]
    s8x = act(spec) == "s8"
    xdt, xnp = (TensorProto.INT8, np.int8) if s8x else (TensorProto.UINT8, np.uint8)
    C = xs[1]
    lo, hi, dt, npt = (0, 255, TensorProto.UINT8, np.uint8) if wt == "u8" else (-128, 127, TensorProto.INT8, np.int8)
    w = rng.integers(lo, hi + 1, size=(M, C // group) + k).astype(npt)
    if wzp == "zero":
        wz = np.zeros(M if wt == "s8" and op != "ConvInteger" else 1, npt)  # (ONNX Runtime's ConvInteger: per tensor only)
    elif wzp == "tensor":
        wz = np.array([131 if wt == "u8" else -3], npt)
    else:
        wz = rng.integers(lo // 2, hi // 2 + 1, size=M).astype(npt) if wt == "s8" else rng.integers(100, 160, size=M).astype(npt)
    wz = wz if wz.size > 1 else wz.reshape(())
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(-11 if s8x else 117, xnp), "x_zp"),
             numpy_helper.from_array(wz, "w_zp")]
    yshape = [xs[0], M] + [(xs[2 + i] + pads[i] + pads[i + 2] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1 for i in range(2)]
    attrs = dict(kernel_shape=list(k), strides=list(strides), pads=list(pads), dilations=list(dil), group=group)
    if op == "ConvInteger":
        node = helper.make_node("ConvInteger", ["x", "w", "x_zp", "w_zp"], ["y"], name=name, **attrs)
        out = helper.make_tensor_value_info("y", TensorProto.INT32, yshape)
    else:
        x_scale, ws = np.float32(0.02), (rng.uniform(0.5, 2.0, size=M) * 0.01).astype(np.float32)
        # y_scale: about the spread of the sums, times yfac (small: most outputs saturate).
        K = C // group * k[0] * k[1]
        y_scale = np.float32(x_scale * 0.01 * 60 * 60 * np.sqrt(K) / 40 * yfac)
        inits += [numpy_helper.from_array(np.array(x_scale), "x_scale"), numpy_helper.from_array(ws, "w_scale"),
                  numpy_helper.from_array(np.array(y_scale), "y_scale"), numpy_helper.from_array(np.array(3 if s8x else 128, xnp), "y_zp")]
        ins = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"]
        if bias:
            inits.append(numpy_helper.from_array(rng.integers(-3000, 3000, size=M).astype(np.int32), "b"))
            ins.append("b")
        node = helper.make_node("QLinearConv", ins, ["y"], name=name, **attrs)
        out = helper.make_tensor_value_info("y", xdt, yshape)
    nodes, ins = [node], [helper.make_tensor_value_info("x", xdt, xs)]
    if name in RESIDUAL:
        # y -> DQ -> Add(DQ(r)) [-> Relu] -> Q: the conv's output renamed c, the sum y.
        first, relu = RESIDUAL[name]
        node.output[0] = "c"
        zr, zs = (np.int8(-5), np.int8(2)) if s8x else (np.uint8(120), np.uint8(0 if relu else 100))
        inits += [numpy_helper.from_array(np.array(np.float32(0.03)), "r_scale"), numpy_helper.from_array(np.array(zr), "r_zp"),
                  numpy_helper.from_array(np.array(np.float32(y_scale * 1.7)), "s_scale"), numpy_helper.from_array(np.array(zs), "s_zp")]
        add_in = ["cf", "rf"] if first else ["rf", "cf"]
        nodes += [helper.make_node("DequantizeLinear", ["c", "y_scale", "y_zp"], ["cf"]),
                  helper.make_node("DequantizeLinear", ["r", "r_scale", "r_zp"], ["rf"]),
                  helper.make_node("Add", add_in, ["sf" if relu else "s"])]
        if relu:
            nodes.append(helper.make_node("Relu", ["sf"], ["s"]))
        nodes.append(helper.make_node("QuantizeLinear", ["s", "s_scale", "s_zp"], ["y"]))
        ins.append(helper.make_tensor_value_info("r", xdt, yshape))
    g = helper.make_graph(nodes, name, ins, [out], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def act(spec):
    """The case's activation type (x and y): "u8" or "s8"."""
    return spec[13] if len(spec) > 13 else "u8"


def u8_twin(m):
    """The model with its int8 weights and weight zero points plus 128 (uint8): the same products."""
    t = onnx.ModelProto()
    t.CopyFrom(m)
    for init in t.graph.initializer:
        if init.name in ("w", "w_zp") and init.data_type == TensorProto.INT8:
            a = numpy_helper.to_array(init).astype(np.int16) + 128
            init.CopyFrom(numpy_helper.from_array(a.astype(np.uint8), init.name))
    return t


def main():
    args = script_args(with_filter=True)
    failures = []
    rng = np.random.default_rng(2024)
    for name, spec in CASES.items():
        if args.filter not in name:
            continue
        d = os.path.join(args.work, name)
        os.makedirs(d, exist_ok=True)
        m = make_case(name, spec, rng)
        path = os.path.join(d, "model.onnx")
        onnx.save(m, path)
        x = rng.integers(-128, 128, size=spec[0]).astype(np.int8) if act(spec) == "s8" else rng.integers(0, 256, size=spec[0]).astype(np.uint8)
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)
        # (ONNX Runtime has no int8 x uint8 QLinearConv, and its ConvInteger takes uint8 weights only)
        twin = spec[7] == "s8" and act(spec) == "u8" and (not vnni() or spec[11] == "ConvInteger")
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        ref_model = u8_twin(m) if twin else m
        feeds, run_inputs = {"x": x}, ["--input", f"x={xin}"]
        if name in RESIDUAL:
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            yshape = m.graph.output[0].type.tensor_type.shape.dim
            r = rng.integers(-128, 128, size=[dd.dim_value for dd in yshape]).astype(x.dtype) if act(spec) == "s8" else \
                rng.integers(0, 256, size=[dd.dim_value for dd in yshape]).astype(np.uint8)
            rin = os.path.join(d, "r.npy")
            np.save(rin, r)
            feeds["r"] = r
            run_inputs += ["--input", f"r={rin}"]
        ref = ort.InferenceSession(ref_model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        for form, flags, expected, skip in case_forms(args, spec):
            what = f"{name} ({spec[11]}, {form})"
            if skip:
                print(f"{what}: SKIPPED: {skip}")
                continue
            out_dir = os.path.join(d, form.split()[0])
            c = subprocess.run([args.compiler, path, "-o", out_dir, "--name", "m", "--dump-ir", "--quiet", "--verify-passes",
                                "--threads", "2", "--parallel-min-work", "1"] + flags + (["--quantized", "integer"] if name in RESIDUAL else []),
                               capture_output=True, text=True)
            if c.returncode != 0:
                failures.append(f"{what}: compile-model exit {c.returncode}: {c.stderr.strip()[-2000:]}")
                continue
            # The conv's line: %y, or %c where the residual add is a node of its own.
            kernel = [l for l in c.stdout.splitlines() if l.strip().startswith(("%y: ", "%c: ")) and spec[11] in l]
            said = kernel[0] if kernel else ""
            got = ("pairs" if "16-bit pairs" in said else "quads" if "byte quads" in said else
                   "depthwise" if "depthwise, phase planes" in said else "direct")
            if not kernel or got != expected:
                failures.append(f"{what}: --dump-ir says {said.strip() or 'nothing'}, expected the {expected} kernel")
            # The residual add goes into the kernel where it is the pointwise one on 16 lanes (AVX-512).
            lanes16 = form.startswith("x86-64-avx512vnni") or (form == "host" and "avx512_vnni" in cpu_flags())
            fused = name in RESIDUAL and expected == "quads" and lanes16 and spec[2] == (1, 1) and spec[6] == 1
            if name in RESIDUAL and ("+ epilogue" in said) != fused:
                failures.append(f"{what}: --dump-ir says {said.strip()}; the residual add {'in' if fused else 'after'} the kernel expected")
            out = os.path.join(out_dir, "y.npy")
            r = subprocess.run([os.path.join(out_dir, "m")] + run_inputs + ["--output", f"y={out}", "--quiet", "--threads", "2"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{what}: the binary exited {r.returncode}: {r.stderr.strip()[-2000:]}")
                continue
            y = np.load(out)
            if y.shape != ref.shape or y.dtype != ref.dtype:
                failures.append(f"{what}: output {y.dtype}{list(y.shape)}, ONNX Runtime's {ref.dtype}{list(ref.shape)}")
                continue
            diff = int(np.count_nonzero(y != ref))
            share = ""
            if spec[11] == "QLinearConv":
                lo, hi = (-128, 127) if act(spec) == "s8" else (0, 255)
                share = f", {100 * float(np.mean((ref == lo) | (ref == hi))):.0f}% saturated"
            print(f"{what}: {'PASS' if diff == 0 else 'FAIL'}: {diff} of {y.size} elements differ from ONNX Runtime {ort.__version__}"
                  f"{' (on the uint8 twin)' if twin else ''}{share}; kernel: {kernel[0].split(':', 1)[1].strip() if kernel else '?'}")
            if diff:
                failures.append(f"{what}: {diff} elements differ, max |diff| {int(np.max(np.abs(y.astype(np.int64) - ref)))}")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
