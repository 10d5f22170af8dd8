#!/usr/bin/env python3
"""Opset tests: small models at the newer opsets (19 to 26; ONNX Runtime 1.31 loads up to 26;
ONNX's node tests check 27 and 28) and at the legacy opsets (1 to 6), compiled with onnxc and
compared with an independent reference.

Each case builds one model with onnx.helper (the opset_import set by hand: the helper does
not need the newer schemas) and its inputs, then:
  - ORT cases: ONNX Runtime 1.31 (PyPI's onnxruntime in the project's .venv, one process per
    model: tests/ort/ort_run.py) runs the model; onnxc compiles it (--emit exe), the binary runs
    on the same .npy inputs, and each output must match ONNX Runtime's (same dtype kind and
    shape; floats within rtol/atol, everything else equal).
    Integer products of uint8 by int8 (MatMulInteger, ConvInteger, QLinearConv, QLinearMatMul
    with uint8 A or X and int8 B or W) are exact in ONNX Runtime only on a CPU with VNNI: its AVX2 kernels use
    vpmaddubsw, whose int16 pair sums saturate. Without VNNI, ONNX Runtime runs the model's
    uint8 twin instead (u8_twin: each int8 B or W and its zero point plus 128, as uint8, the
    same differences and so the same products), whose kernels are exact there.
  - numpy cases: for legacy forms ONNX Runtime no longer loads, a numpy expression is the
    reference.
  - refusal cases: compile-model must exit with the given code and print the given words
    (node name, op, opset, the refused value), without a crash.
ONNX Runtime missing is a failure (tools/setup.sh installs it), not a skip.
Usage: .venv/bin/python tests/opset/run_opset_tests.py --compiler build/compile-model [--cflags "-O1 -Werror"] [--filter RE]
Ends with the line "N passed, M failed"; exit status 0 iff M == 0.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "ort", "ort_run.py")
NP_TO_ONNX = {np.float16: T.FLOAT16, np.float32: T.FLOAT, np.float64: T.DOUBLE, np.int64: T.INT64, np.int32: T.INT32, np.int8: T.INT8,
              np.uint8: T.UINT8, np.int16: T.INT16, np.uint16: T.UINT16, np.bool_: T.BOOL}

CASES = []


def case(name, kind="ort", **kw):
    def deco(fn):
        CASES.append(dict(name=name, kind=kind, fn=fn, **kw))
        return fn
    return deco


def vi(name, arr_or_type, shape=None):
    if isinstance(arr_or_type, np.ndarray):
        return helper.make_tensor_value_info(name, NP_TO_ONNX[arr_or_type.dtype.type], list(arr_or_type.shape))
    return helper.make_tensor_value_info(name, arr_or_type, shape)


def model(nodes, inputs, outputs, opset, inits=()):
    """inputs: {name: array}; outputs: [(name, onnx type)] (shapes left to inference)."""
    g = helper.make_graph(nodes, "g", [vi(k, v) for k, v in inputs.items()],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset <= 18 else 9 if opset <= 20 else 10 if opset <= 23 else 11
    return m


def one(op, opset, inputs, out_type=T.FLOAT, inits=(), n_out=1, **attrs):
    names = list(inputs) + [t.name for t in inits]
    outs = [f"y{k}" for k in range(n_out)]
    node = helper.make_node(op, names if not attrs.get("_inputs") else attrs.pop("_inputs"), outs, name=f"{op.lower()}_node",
                            **{k: v for k, v in attrs.items() if not k.startswith("_")})
    types = out_type if isinstance(out_type, (list, tuple)) else [out_type] * n_out
    return model([node], inputs, list(zip(outs, types)), opset, inits)


rng = np.random.default_rng(19)


def randf(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


# --------------------------------------------------------------------------- float16
# onnxc computes float16 models in float32 and rounds at the float16 outputs (and at each Cast
# to float16); ONNX Runtime's CPU provider runs most ops in float32 too, so results agree to
# within a unit or two in the last place of float16 (relative 2^-10 ~ 1e-3).


@case("float16 model: Conv + Relu with float16 input, weights and output", rtol=2e-3, atol=2e-3)
def _():
    x = randf(1, 3, 8, 8).astype(np.float16)
    w = const("w", randf(4, 3, 3, 3, lo=-0.5, hi=0.5).astype(np.float16))
    b = const("b", randf(4).astype(np.float16))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return model(nodes, {"x": x}, [("y", T.FLOAT16)], 17, [w, b]), {"x": x}


@case("float16 edges of a float32 model: Cast to float16 and back, float16 output", rtol=2e-3, atol=1e-4)
def _():
    x = randf(2, 5)
    nodes = [helper.make_node("Cast", ["x"], ["h"], name="to_half", to=T.FLOAT16),
             helper.make_node("Cast", ["h"], ["f"], name="to_float", to=T.FLOAT),
             helper.make_node("Mul", ["f", "f"], ["y"], name="square"),
             helper.make_node("Cast", ["y"], ["yh"], name="y_half", to=T.FLOAT16)]
    return model(nodes, {"x": x}, [("f", T.FLOAT), ("yh", T.FLOAT16)], 13), {"x": x}


@case("Cast float32 to float16: ties to even, overflow, subnormals, NaN, signed zero", rtol=0, atol=0)
def _():
    # 1 + 2^-11 is halfway between 1 and the next half (ties to even: 1); 1 + 3 * 2^-11 rounds up;
    # 65519 stays 65504, 65520 overflows; 2^-24 is the smallest subnormal, 2^-25 rounds to 0,
    # 1.5 * 2^-25 rounds up to 2^-24.
    vals = [1 + 2.0**-11, 1 + 3 * 2.0**-11, 65519.0, 65520.0, -1e6, 2.0**-24, 2.0**-25, 1.5 * 2.0**-25, 6.1e-5,
            -0.0, float("inf"), float("nan"), 3.14159, -2.5e-3, 1e-8, 0.1]
    x = np.array(vals, np.float32)
    return one("Cast", 13, {"x": x}, out_type=T.FLOAT16, to=T.FLOAT16), {"x": x}


@case("float16 input to ArgMax, Cast to int32: integer outputs of a float16 model")
def _():
    x = randf(3, 7).astype(np.float16)
    nodes = [helper.make_node("ArgMax", ["x"], ["i"], name="argmax", axis=1, keepdims=0),
             helper.make_node("Cast", ["x"], ["n"], name="to_int", to=T.INT32)]
    return model(nodes, {"x": x}, [("i", T.INT64), ("n", T.INT32)], 13), {"x": x}


# --------------------------------------------------------------------------- opset 19

@case("AveragePool-19 dilations")
def _():
    x = {"x": randf(1, 2, 7, 7)}
    return one("AveragePool", 19, x, kernel_shape=[2, 2], dilations=[2, 2], strides=[1, 1]), x


@case("AveragePool-19 dilations, pads, ceil_mode, count_include_pad")
def _():
    x = {"x": randf(1, 3, 9, 8)}
    return one("AveragePool", 19, x, kernel_shape=[3, 2], dilations=[2, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
               count_include_pad=1), x


# ONNX Runtime refuses `saturate` on casts to other types than float8; the spec says it has
# no effect there, which is what onnxc does.
@case("Cast-19 saturate=0 (no effect outside float8)", kind="numpy", ref=lambda x: x.astype(np.int32))
def _():
    x = {"x": np.array([[-1e6, -2.5, 0.0, 3.7, 1e6, 300.0]], np.float32)}
    return one("Cast", 19, x, out_type=T.INT32, to=T.INT32, saturate=0), x


@case("Cast-19 to uint8, saturate default")
def _():
    x = {"x": np.array([[1.0, 2.9, 250.0, 17.5]], np.float32)}
    return one("Cast", 19, x, out_type=T.UINT8, to=T.UINT8), x


@case("Constant-19 value_floats")
def _():
    x = {"x": randf(3)}
    c = helper.make_node("Constant", [], ["c"], name="constant_node", value_floats=[1.0, -2.0, 0.5])
    a = helper.make_node("Add", ["x", "c"], ["y0"], name="add_node")
    return model([c, a], x, [("y0", T.FLOAT)], 19), x


@case("Identity-19 int64")
def _():
    x = {"x": np.arange(-3, 9, dtype=np.int64).reshape(3, 4)}
    return one("Identity", 19, x, out_type=T.INT64), x


@case("Pad-19 wrap")
def _():
    x = {"x": randf(1, 2, 3, 4)}
    pads = const("pads", np.array([0, 0, 2, 3, 0, 0, 1, 5], np.int64))
    return one("Pad", 19, x, inits=[pads], mode="wrap"), x


@case("Pad-19 wrap with axes and cropping")
def _():
    x = {"x": randf(2, 5, 6)}
    pads = const("pads", np.array([4, -1, 2, 7], np.int64))
    axes = const("axes", np.array([1, 2], np.int64))
    return one("Pad", 19, x, inits=[pads, const("cv", np.array(0, np.float32)), axes], mode="wrap",
               _inputs=["x", "pads", "cv", "axes"]), x


@case("Pad-19 reflect int64")
def _():
    x = {"x": np.arange(24, dtype=np.int64).reshape(2, 3, 4)}
    pads = const("pads", np.array([0, 1, 2, 0, 2, 3], np.int64))
    return one("Pad", 19, x, out_type=T.INT64, inits=[pads], mode="reflect"), x


@case("Resize-19 half_pixel_symmetric linear")
def _():
    x = {"x": randf(1, 2, 4, 5)}
    scales = const("scales", np.array([1, 1, 1.7, 0.6], np.float32))
    return one("Resize", 19, x, inits=[const("roi", np.zeros(0, np.float32)), scales], mode="linear",
               coordinate_transformation_mode="half_pixel_symmetric", _inputs=["x", "roi", "scales"]), x


@case("Resize-19 half_pixel_symmetric nearest, sizes")
def _():
    x = {"x": randf(1, 1, 5, 4)}
    sizes = const("sizes", np.array([1, 1, 7, 9], np.int64))
    return one("Resize", 19, x, inits=[sizes], mode="nearest", coordinate_transformation_mode="half_pixel_symmetric",
               _inputs=["x", "", "", "sizes"]), x


@case("Reshape-19 allowzero")
def _():
    x = {"x": randf(2, 3, 4)}
    return one("Reshape", 19, x, inits=[const("s", np.array([0, -1, 2], np.int64))]), x


@case("Shape-19 start/end")
def _():
    x = {"x": randf(2, 3, 4, 5)}
    return one("Shape", 19, x, out_type=T.INT64, start=1, end=-1), x


# --------------------------------------------------------------------------- opset 20

@case("ConstantOfShape-20 int32")
def _():
    x = {"x": np.arange(6, dtype=np.int32).reshape(2, 3)}
    c = helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos_node", value=helper.make_tensor("v", T.INT32, [1], [7]))
    a = helper.make_node("Add", ["x", "c"], ["y0"], name="add_node")
    return model([c, a], x, [("y0", T.INT32)], 20, [const("s", np.array([2, 3], np.int64))]), x


# --------------------------------------------------------------------------- opset 21

@case("Flatten-21")
def _():
    x = {"x": randf(2, 3, 4)}
    return one("Flatten", 21, x, axis=-1), x


@case("Squeeze-21, Unsqueeze-21, Transpose-21")
def _():
    x = {"x": randf(3, 1, 4)}
    n1 = helper.make_node("Squeeze", ["x", "a1"], ["s"], name="squeeze_node")
    n2 = helper.make_node("Transpose", ["s"], ["t"], name="transpose_node", perm=[1, 0])
    n3 = helper.make_node("Unsqueeze", ["t", "a2"], ["y0"], name="unsqueeze_node")
    return model([n1, n2, n3], x, [("y0", T.FLOAT)], 21, [const("a1", np.array([1], np.int64)),
                                                         const("a2", np.array([0, 3], np.int64))]), x


@case("Cast-21 int64 to bool to float")
def _():
    x = {"x": np.array([[0, 3, -1, 0]], np.int64)}
    n1 = helper.make_node("Cast", ["x"], ["b"], name="cast_b", to=T.BOOL)
    n2 = helper.make_node("Cast", ["b"], ["y0"], name="cast_f", to=T.FLOAT)
    return model([n1, n2], x, [("y0", T.FLOAT)], 21), x


# --------------------------------------------------------------------------- opset 22

@case("Conv-22, MaxPool-22, GlobalAveragePool-22")
def _():
    x = {"x": randf(1, 3, 8, 8)}
    w = const("w", randf(4, 3, 3, 3))
    n1 = helper.make_node("Conv", ["x", "w"], ["c"], name="conv_node", pads=[1, 1, 1, 1])
    n2 = helper.make_node("MaxPool", ["c"], ["p"], name="maxpool_node", kernel_shape=[2, 2], strides=[2, 2])
    n3 = helper.make_node("GlobalAveragePool", ["p"], ["y0"], name="gap_node")
    return model([n1, n2, n3], x, [("y0", T.FLOAT)], 22, [w]), x


@case("ConvTranspose-22, GlobalMaxPool-22")
def _():
    x = {"x": randf(1, 2, 4, 4)}
    w = const("w", randf(2, 3, 3, 3))
    n1 = helper.make_node("ConvTranspose", ["x", "w"], ["c"], name="convt_node", strides=[2, 2])
    n2 = helper.make_node("GlobalMaxPool", ["c"], ["y0"], name="gmp_node")
    return model([n1, n2], x, [("y0", T.FLOAT)], 22, [w]), x


@case("Elu-22, HardSigmoid-22, HardSwish-22")
def _():
    x = {"x": randf(2, 9, lo=-5, hi=5)}
    n1 = helper.make_node("Elu", ["x"], ["a"], name="elu_node", alpha=0.7)
    n2 = helper.make_node("HardSigmoid", ["a"], ["b"], name="hs_node", alpha=0.3, beta=0.4)
    n3 = helper.make_node("HardSwish", ["x"], ["c"], name="hsw_node")
    n4 = helper.make_node("Add", ["b", "c"], ["y0"], name="add_node")
    return model([n1, n2, n3, n4], x, [("y0", T.FLOAT)], 22), x


@case("AveragePool-22")
def _():
    x = {"x": randf(1, 2, 6, 6)}
    return one("AveragePool", 22, x, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]), x


@case("Dropout-22 (inference)")
def _():
    x = {"x": randf(3, 4)}
    return one("Dropout", 22, x), x


# --------------------------------------------------------------------------- opset 23

@case("Reshape-23, Flatten-23, Identity-23")
def _():
    x = {"x": randf(2, 3, 4)}
    n1 = helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape_node")
    n2 = helper.make_node("Flatten", ["r"], ["f"], name="flatten_node", axis=2)
    n3 = helper.make_node("Identity", ["f"], ["y0"], name="identity_node")
    return model([n1, n2, n3], x, [("y0", T.FLOAT)], 23, [const("s", np.array([4, 3, 2], np.int64))]), x


@case("Pad-23 edge, Cast-23, Squeeze/Unsqueeze/Transpose-23, Shape-23")
def _():
    x = {"x": randf(1, 3, 4)}
    n1 = helper.make_node("Pad", ["x", "p"], ["a"], name="pad_node", mode="edge")
    n2 = helper.make_node("Squeeze", ["a", "ax"], ["b"], name="squeeze_node")
    n3 = helper.make_node("Transpose", ["b"], ["c"], name="transpose_node")
    n4 = helper.make_node("Unsqueeze", ["c", "ax"], ["d"], name="unsqueeze_node")
    n5 = helper.make_node("Cast", ["d"], ["y0"], name="cast_node", to=T.DOUBLE)
    n6 = helper.make_node("Shape", ["d"], ["y1"], name="shape_node")
    return model([n1, n2, n3, n4, n5, n6], x, [("y0", T.DOUBLE), ("y1", T.INT64)], 23,
                 [const("p", np.array([0, 1, 2, 0, 1, 0], np.int64)), const("ax", np.array([0], np.int64))]), x


@case("ConstantOfShape-23")
def _():
    x = {"x": randf(2, 2)}
    c = helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos_node", value=helper.make_tensor("v", T.FLOAT, [1], [1.5]))
    a = helper.make_node("Mul", ["x", "c"], ["y0"], name="mul_node")
    return model([c, a], x, [("y0", T.FLOAT)], 23, [const("s", np.array([2, 2], np.int64))]), x


# --------------------------------------------------------------------------- opsets 24 to 26
# The versions of 24 and 25 only add types onnxc refuses (float8e8m0, 2-bit integers) and Cast's
# round_mode for float8e8m0; ONNX Runtime 1.31 loads opsets up to 26. The versions of 27 and 28
# (Range stash_type, SpaceToDepth CRD, float Mod with fmod=0, signed BitShift...) are checked
# by ONNX's node tests (tests/node), whose references are ONNX's own.

@case("Reshape-25, Flatten-25, Identity-25, Pad-25 reflect, Transpose-25 at opset 25")
def _():
    x = {"x": randf(2, 3, 4)}
    nodes = [helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape_node"),
             helper.make_node("Flatten", ["r"], ["f"], name="flatten_node", axis=2),
             helper.make_node("Pad", ["f", "p"], ["q"], name="pad_node", mode="reflect"),
             helper.make_node("Transpose", ["q"], ["t"], name="transpose_node"),
             helper.make_node("Identity", ["t"], ["y0"], name="identity_node")]
    return model(nodes, x, [("y0", T.FLOAT)], 25, [const("s", np.array([4, 3, 2], np.int64)),
                                                    const("p", np.array([1, 1, 1, 1], np.int64))]), x


@case("Cast-25, CastLike-25, Squeeze/Unsqueeze-25, Shape-25, Size-25, ConstantOfShape-25")
def _():
    x = {"x": randf(1, 3, 4)}
    nodes = [helper.make_node("Cast", ["x"], ["a"], name="cast_node", to=T.INT32),
             helper.make_node("CastLike", ["x", "like"], ["b"], name="castlike_node"),
             helper.make_node("Squeeze", ["b", "ax"], ["c"], name="squeeze_node"),
             helper.make_node("Unsqueeze", ["c", "ax"], ["y1"], name="unsqueeze_node"),
             helper.make_node("Shape", ["c"], ["y2"], name="shape_node"),
             helper.make_node("Size", ["c"], ["y3"], name="size_node"),
             helper.make_node("ConstantOfShape", ["y2"], ["y4"], name="cos_node", value=helper.make_tensor("v", T.INT64, [1], [7])),
             helper.make_node("Identity", ["a"], ["y0"], name="identity_node")]
    outs = [("y0", T.INT32), ("y1", T.DOUBLE), ("y2", T.INT64), ("y3", T.INT64), ("y4", T.INT64)]
    return model(nodes, x, outs, 25, [const("like", np.array([0.0])), const("ax", np.array([0], np.int64))]), x


@case("TopK-24 smallest at opset 26, int64 data")
def _():
    x = {"x": rng.integers(-50, 50, (3, 7)).astype(np.int64)}
    return one("TopK", 26, x, out_type=[T.INT64, T.INT64], n_out=2, inits=[const("k", np.array([3], np.int64))], largest=0), x


# --------------------------------------------------------------------------- ops added or changed at 19-23

@case("Equal-19 int64 inputs, bool output")
def _():
    x = {"a": np.array([[1, 5, -3], [7, 7, 0]], np.int64), "b": np.array([1, 7, 0], np.int64)}
    return one("Equal", 19, x, out_type=T.BOOL), x


@case("MatMul and Gemm in the register-tiled form, K of 400 to 700: weights with a fused bias, Gelu and residual Add, "
      "short tiles of rows and columns, transA, activation operands packed per task (batched, transB)", rtol=2e-5, atol=2e-5)
def _():
    x = {"a": randf(1, 27, 700, lo=-1, hi=1), "r": randf(1, 27, 50), "t": randf(600, 13, lo=-1, hi=1),
         "p": randf(2, 3, 9, 500, lo=-1, hi=1), "q": randf(2, 3, 500, 20, lo=-1, hi=1), "u": randf(10, 400, lo=-1, hi=1),
         "v": randf(30, 400, lo=-1, hi=1)}
    inits = [const("w", randf(700, 50, lo=-0.1, hi=0.1)), const("bias", randf(50)), const("w2", randf(600, 40, lo=-0.1, hi=0.1)),
             const("c2", randf(40))]
    nodes = [helper.make_node("MatMul", ["a", "w"], ["m"], name="matmul_weights"),
             helper.make_node("Add", ["m", "bias"], ["mb"], name="bias_add"),
             helper.make_node("Gelu", ["mb"], ["g"], name="gelu"),
             helper.make_node("Add", ["g", "r"], ["y0"], name="residual_add"),
             helper.make_node("Gemm", ["t", "w2", "c2"], ["y1"], name="gemm_trans_a", transA=1),
             helper.make_node("MatMul", ["p", "q"], ["y2"], name="matmul_batched"),
             helper.make_node("Gemm", ["u", "v"], ["y3"], name="gemm_trans_b", transB=1, alpha=0.5)]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT), ("y3", T.FLOAT)], 20, inits), x


@case("Gelu-20 exact")
def _():
    x = {"x": randf(3, 7, lo=-5, hi=5)}
    return one("Gelu", 20, x), x


@case("Gelu-20 tanh approximation")
def _():
    x = {"x": randf(3, 7, lo=-5, hi=5)}
    return one("Gelu", 20, x, approximate="tanh"), x


@case("IsNaN-20, IsInf-20 (detect_negative=0)")
def _():
    x = {"x": np.array([[1.0, np.nan, np.inf, -np.inf, -0.0, 3e38]], np.float32)}
    n1 = helper.make_node("IsNaN", ["x"], ["y0"], name="isnan_node")
    n2 = helper.make_node("IsInf", ["x"], ["y1"], name="isinf_node", detect_negative=0)
    return model([n1, n2], x, [("y0", T.BOOL), ("y1", T.BOOL)], 20), x


@case("Selu-22, Softplus-22, Softsign-22, Mish-22, ThresholdedRelu-22")
def _():
    x = {"x": randf(4, 6, lo=-6, hi=6)}
    nodes = [helper.make_node("Selu", ["x"], ["a"], name="selu_node", alpha=1.5),
             helper.make_node("Softplus", ["x"], ["b"], name="softplus_node"),
             helper.make_node("Softsign", ["x"], ["c"], name="softsign_node"),
             helper.make_node("Mish", ["x"], ["d"], name="mish_node"),
             helper.make_node("ThresholdedRelu", ["x"], ["e"], name="trelu_node", alpha=0.5),
             helper.make_node("Concat", ["a", "b", "c", "d", "e"], ["y0"], name="concat_node", axis=0)]
    return model(nodes, x, [("y0", T.FLOAT)], 22), x


@case("Sin..Atanh-22, Round-22")
def _():
    x = {"x": randf(2, 8, lo=-0.9, hi=0.9), "h": np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6, -2.5], np.float32)}
    ops = ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh"]
    nodes = [helper.make_node(o, ["x"], [o.lower()], name=o.lower() + "_node") for o in ops]
    nodes.append(helper.make_node("Concat", [o.lower() for o in ops], ["y0"], name="concat_node", axis=0))
    nodes.append(helper.make_node("Round", ["h"], ["y1"], name="round_node"))
    nodes.append(helper.make_node("Acosh", ["p"], ["y2"], name="acosh_node"))
    nodes.append(helper.make_node("Add", ["x", "one"], ["p0"], name="add_node"))
    nodes.append(helper.make_node("Abs", ["p0"], ["p1"], name="abs_node"))
    nodes.append(helper.make_node("Add", ["p1", "one"], ["p"], name="add2_node"))
    nodes = nodes[-3:] + nodes[:-3]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT)], 22, [const("one", np.array(1, np.float32))]), x


@case("Where-16 at opset 23: bool condition from Greater, int32 branches")
def _():
    x = {"a": randf(3, 4), "b": randf(4), "i": np.arange(12, dtype=np.int32).reshape(3, 4), "j": np.array([-1], np.int32)}
    n1 = helper.make_node("Greater", ["a", "b"], ["c"], name="greater_node")
    n2 = helper.make_node("Where", ["c", "i", "j"], ["y0"], name="where_node")
    n3 = helper.make_node("Not", ["c"], ["y1"], name="not_node")
    return model([n1, n2, n3], x, [("y0", T.INT32), ("y1", T.BOOL)], 23), x


@case("bool runtime inputs: And, Or, Xor, Not, Cast to float")
def _():
    x = {"p": rng.integers(0, 2, (3, 5)).astype(np.bool_), "q": rng.integers(0, 2, (5,)).astype(np.bool_)}
    nodes = [helper.make_node("And", ["p", "q"], ["a"], name="and_node"),
             helper.make_node("Or", ["p", "q"], ["o"], name="or_node"),
             helper.make_node("Xor", ["a", "o"], ["y0"], name="xor_node"),
             helper.make_node("Not", ["y0"], ["n"], name="not_node"),
             helper.make_node("Cast", ["n"], ["y1"], name="cast_node", to=T.FLOAT)]
    return model(nodes, x, [("y0", T.BOOL), ("y1", T.FLOAT)], 21), x


@case("Mod-13 fmod 0 and 1 on int64, fmod 1 on float")
def _():
    x = {"a": np.array([[-7, 7, -8, 9, 0, 5]], np.int64), "b": np.array([3, -3, 4, -2, 5, 7], np.int64),
         "f": randf(6, lo=-10, hi=10), "g": randf(6, lo=1, hi=3)}
    nodes = [helper.make_node("Mod", ["a", "b"], ["y0"], name="mod0_node"),
             helper.make_node("Mod", ["a", "b"], ["y1"], name="mod1_node", fmod=1),
             helper.make_node("Mod", ["f", "g"], ["y2"], name="modf_node", fmod=1)]
    return model(nodes, x, [("y0", T.INT64), ("y1", T.INT64), ("y2", T.FLOAT)], 21), x


@case("Expand, Tile, Range at opset 23, int64 runtime data")
def _():
    x = {"x": np.arange(6, dtype=np.int64).reshape(2, 1, 3)}
    nodes = [helper.make_node("Expand", ["x", "s"], ["y0"], name="expand_node"),
             helper.make_node("Tile", ["x", "r"], ["y1"], name="tile_node"),
             helper.make_node("Range", ["st", "li", "de"], ["y2"], name="range_node")]
    inits = [const("s", np.array([2, 4, 3], np.int64)), const("r", np.array([2, 3, 1], np.int64)),
             const("st", np.array(10, np.int64)), const("li", np.array(-3, np.int64)), const("de", np.array(-4, np.int64))]
    return model(nodes, x, [("y0", T.INT64), ("y1", T.INT64), ("y2", T.INT64)], 23, inits), x


@case("ReduceMax-20, ReduceMin-20 on bool (any / all)")
def _():
    x = {"b": rng.integers(0, 2, (3, 4, 2)).astype(np.bool_)}
    ax = const("ax", np.array([1], np.int64))
    n1 = helper.make_node("ReduceMax", ["b", "ax"], ["y0"], name="rmax_node", keepdims=0)
    n2 = helper.make_node("ReduceMin", ["b", "ax"], ["y1"], name="rmin_node")
    return model([n1, n2], x, [("y0", T.BOOL), ("y1", T.BOOL)], 20, [ax]), x


@case("ReduceMin-20, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (axes input)")
def _():
    x = {"x": randf(2, 3, 4, lo=0.1, hi=2.0), "i": rng.integers(-5, 5, (2, 3, 4)).astype(np.int64)}
    ax = const("ax", np.array([0, -1], np.int64))
    ops = ["ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
    nodes = [helper.make_node(o, ["x", "ax"], [f"y{k}"], name=o.lower() + "_node") for k, o in enumerate(ops)]
    nodes += [helper.make_node(o, ["i", "ax"], [f"z{k}"], name=o.lower() + "_int_node", keepdims=0)
              for k, o in enumerate(["ReduceMin", "ReduceProd", "ReduceL1", "ReduceSumSquare"])]
    outs = [(f"y{k}", T.FLOAT) for k in range(len(ops))] + [(f"z{k}", T.INT64) for k in range(4)]
    return model(nodes, x, outs, 20, [ax]), x


@case("transformer block at opset 20: LayerNormalization (Mean, InvStdDev), MatMul, Gelu, ArgMax")
def _():
    x = {"x": randf(2, 5, 8)}
    nodes = [helper.make_node("LayerNormalization", ["x", "s", "b"], ["n", "y1", "y2"], name="ln_node", epsilon=1e-6),
             helper.make_node("MatMul", ["n", "w"], ["m"], name="matmul_node"),
             helper.make_node("Gelu", ["m"], ["y0"], name="gelu_node"),
             helper.make_node("ArgMax", ["y0"], ["y3"], name="argmax_node", axis=-1, keepdims=0, select_last_index=1)]
    inits = [const("s", randf(8)), const("b", randf(8)), const("w", randf(8, 6))]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT), ("y3", T.INT64)], 20, inits), x


# --------------------------------------------------------------------------- index, scan and normalisation ops

@case("ScatterElements-18 reduction max and min, negative axis")
def _():
    x = {"data": randf(3, 5), "upd": randf(3, 4)}
    ix = const("ix", np.array([[0, 4, 4, -1], [1, 1, 2, 3], [-5, 0, 0, 2]], np.int64))
    nodes = [helper.make_node("ScatterElements", ["data", "ix", "upd"], ["y0"], name="scatter_max", axis=-1, reduction="max"),
             helper.make_node("ScatterElements", ["data", "ix", "upd"], ["y1"], name="scatter_min", axis=1, reduction="min")]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT)], 18, [ix]), x


@case("ScatterElements-18 reduction add and mul on int64, runtime indices")
def _():
    x = {"data": rng.integers(-9, 9, (4, 3)).astype(np.int64), "ix": np.array([[0, 3, 3], [3, 3, 1]], np.int64),
         "upd": rng.integers(-5, 5, (2, 3)).astype(np.int64)}
    nodes = [helper.make_node("ScatterElements", ["data", "ix", "upd"], ["y0"], name="scatter_add", axis=0, reduction="add"),
             helper.make_node("ScatterElements", ["data", "ix", "upd"], ["y1"], name="scatter_mul", axis=0, reduction="mul")]
    return model(nodes, x, [("y0", T.INT64), ("y1", T.INT64)], 18), x


@case("ScatterND-18 reduction max and min, duplicate indices")
def _():
    x = {"data": randf(4, 3, 2), "upd": randf(3, 3, 2)}
    ix = const("ix", np.array([[1], [3], [1]], np.int64))
    nodes = [helper.make_node("ScatterND", ["data", "ix", "upd"], ["y0"], name="scatternd_max", reduction="max"),
             helper.make_node("ScatterND", ["data", "ix", "upd"], ["y1"], name="scatternd_min", reduction="min")]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT)], 18, [ix]), x


@case("GatherElements-13, GatherND-13 batch_dims=1 at opset 23 (runtime indices)")
def _():
    x = {"data": randf(2, 4, 3), "gi": np.array([[[0, 3, 1], [2, 2, 0]], [[3, 1, -1], [0, 0, 2]]], np.int64),
         "ni": np.array([[[1, 2], [3, 0]], [[0, 1], [2, 2]]], np.int64)}
    nodes = [helper.make_node("GatherElements", ["data", "gi"], ["y0"], name="gather_elements", axis=1),
             helper.make_node("GatherND", ["data", "ni"], ["y1"], name="gathernd", batch_dims=1)]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT)], 23), x


@case("Trilu-14 at opset 23: upper k=1 and lower k=-1 on int64, batched")
def _():
    x = {"x": rng.integers(-50, 50, (2, 3, 4, 5)).astype(np.int64)}
    nodes = [helper.make_node("Trilu", ["x", "k1"], ["y0"], name="triu_node", upper=1),
             helper.make_node("Trilu", ["x", "km1"], ["y1"], name="tril_node", upper=0)]
    return model(nodes, x, [("y0", T.INT64), ("y1", T.INT64)], 23,
                 [const("k1", np.array(1, np.int64)), const("km1", np.array(-1, np.int64))]), x


@case("CumSum-14 at opset 23: exclusive+reverse on int32, float along axis 1")
def _():
    x = {"a": rng.integers(-100, 100, (3, 6)).astype(np.int32), "b": randf(2, 5, 3)}
    nodes = [helper.make_node("CumSum", ["a", "ax0"], ["y0"], name="cumsum_int", exclusive=1, reverse=1),
             helper.make_node("CumSum", ["b", "ax1"], ["y1"], name="cumsum_float")]
    return model(nodes, x, [("y0", T.INT32), ("y1", T.FLOAT)], 23,
                 [const("ax0", np.array(-1, np.int64)), const("ax1", np.array([1], np.int32))]), x


@case("OneHot-11 at opset 23: int64 indices (negative, out of range), axis 1, runtime values")
def _():
    x = {"ix": np.array([[0, 3, -1], [5, -6, 2]], np.int64), "vals": np.array([-1.5, 2.5], np.float32)}
    n = helper.make_node("OneHot", ["ix", "depth", "vals"], ["y0"], name="onehot_node", axis=1)
    return model([n], x, [("y0", T.FLOAT)], 23, [const("depth", np.array(5, np.int64))]), x


@case("DepthToSpace-13 CRD and DCR, SpaceToDepth-13 at opset 23")
def _():
    x = {"x": randf(2, 8, 3, 2), "z": randf(1, 3, 4, 6)}
    nodes = [helper.make_node("DepthToSpace", ["x"], ["y0"], name="d2s_crd", blocksize=2, mode="CRD"),
             helper.make_node("DepthToSpace", ["x"], ["y1"], name="d2s_dcr", blocksize=2),
             helper.make_node("SpaceToDepth", ["z"], ["y2"], name="s2d", blocksize=2)]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT)], 23), x


@case("TopK-11 at opset 23: smallest with ties, largest on int64, axis 0")
def _():
    x = {"a": np.array([[3, 1, 2, 1, 3, 0], [5, 5, 5, 1, 5, 2]], np.float32),
         "b": rng.integers(-20, 20, (7, 3)).astype(np.int64)}
    nodes = [helper.make_node("TopK", ["a", "k3"], ["y0", "y1"], name="topk_small", largest=0),
             helper.make_node("TopK", ["b", "k3"], ["y2", "y3"], name="topk_large", axis=0)]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.INT64), ("y2", T.INT64), ("y3", T.INT64)], 23,
                 [const("k3", np.array([3], np.int64))]), x


@case("Mean-13 three inputs broadcast, at opset 23")
def _():
    x = {"a": randf(2, 3, 4), "b": randf(3, 1), "c": randf(4)}
    return one("Mean", 23, x), x


@case("CastLike-21 float to int64, CastLike-19 int32 to float (runtime target inputs)")
def _():
    x = {"a": np.array([[-2.7, 0.4, 3.9, 100.2]], np.float32), "ta": np.array([0], np.int64),
         "b": np.array([7, -3, 12], np.int32), "tb": np.array([1.0], np.float32)}
    nodes = [helper.make_node("CastLike", ["a", "ta"], ["y0"], name="castlike_a"),
             helper.make_node("CastLike", ["b", "tb"], ["y1"], name="castlike_b")]
    return model(nodes, x, [("y0", T.INT64), ("y1", T.FLOAT)], 21), x


@case("GroupNormalization-21 (scale and bias per channel)")
def _():
    x = {"x": randf(2, 6, 3, 4), "s": randf(6), "b": randf(6)}
    n = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y0"], name="groupnorm_node", num_groups=3, epsilon=1e-3)
    return model([n], x, [("y0", T.FLOAT)], 21), x


@case("GroupNormalization-18 (scale and bias per group)")
def _():
    x = {"x": randf(2, 6, 5), "s": randf(2), "b": randf(2)}
    n = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y0"], name="groupnorm_node", num_groups=2)
    return model([n], x, [("y0", T.FLOAT)], 18), x


@case("InstanceNormalization-22, LpNormalization-22 (p=1, p=2; a zero row), MeanVarianceNormalization-13 axes")
def _():
    x = {"x": randf(2, 3, 4, 5), "s": randf(3), "b": randf(3)}
    x["x"][1, 2, 3, :] = 0  # ONNX Runtime's LpNormalization gives 0 for a zero norm
    nodes = [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y0"], name="instnorm", epsilon=1e-4),
             helper.make_node("LpNormalization", ["x"], ["y1"], name="lp1", p=1, axis=2),
             helper.make_node("LpNormalization", ["x"], ["y2"], name="lp2"),
             helper.make_node("MeanVarianceNormalization", ["x"], ["y3"], name="mvn", axes=[1, -1])]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT), ("y3", T.FLOAT)], 22), x


@case("Einsum-12 at opset 23: attention scores, batched matmul, transpose, row sums, ellipsis")
def _():
    x = {"q": randf(2, 3, 4, 8), "k": randf(2, 3, 5, 8), "a": randf(2, 4, 6), "b": randf(2, 6, 3), "m": randf(5, 7),
         "e1": randf(2, 3, 4, 5), "e2": randf(5, 2)}
    nodes = [helper.make_node("Einsum", ["q", "k"], ["y0"], name="einsum_attn", equation="bhid,bhjd->bhij"),
             helper.make_node("Einsum", ["a", "b"], ["y1"], name="einsum_bmm", equation="bij,bjk->bik"),
             helper.make_node("Einsum", ["m"], ["y2"], name="einsum_t", equation="ij->ji"),
             helper.make_node("Einsum", ["m"], ["y3"], name="einsum_rows", equation="ij->i"),
             helper.make_node("Einsum", ["e1", "e2"], ["y4"], name="einsum_ell", equation="...ij,jk->...ik")]
    return model(nodes, x, [(f"y{k}", T.FLOAT) for k in range(5)], 23), x


@case("NegativeLogLikelihoodLoss-22, SoftmaxCrossEntropyLoss-13 at opset 22: every reduction, ignore_index, weights, "
      "int32 and int64 labels, log_prob, [N, C] and [N, C, d1, d2], float64")
def _():
    t = rng.integers(0, 5, (3, 4, 2)).astype(np.int32)
    t[0, 1, 0] = t[2, 3, 1] = -1  # ignored
    x = {"x": randf(3, 5, 4, 2), "t": t, "w": rng.uniform(0.2, 2.0, 5).astype(np.float32), "s": randf(6, 5),
         "u": rng.integers(0, 5, 6).astype(np.int64), "d": randf(2, 3, 4).astype(np.float64), "v": rng.integers(0, 3, (2, 4))}
    nodes = [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y0"], name="nll_none", reduction="none", ignore_index=-1),
             helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y1"], name="nll_mean", ignore_index=-1),
             helper.make_node("NegativeLogLikelihoodLoss", ["s", "u", "w"], ["y2"], name="nll_sum", reduction="sum"),
             helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y3", "y4"], name="sce_mean", ignore_index=-1),
             helper.make_node("SoftmaxCrossEntropyLoss", ["s", "u"], ["y5", "y6"], name="sce_none", reduction="none"),
             helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y7"], name="sce_sum", reduction="sum", ignore_index=-1),
             helper.make_node("SoftmaxCrossEntropyLoss", ["d", "v"], ["y8", "y9"], name="sce_f64")]
    return model(nodes, x, [(f"y{k}", T.FLOAT) for k in range(8)] + [("y8", T.DOUBLE), ("y9", T.DOUBLE)], 22), x


# --------------------------------------------------------------------------- sampling ops, MaxUnpool, Det

def grid_nodes(mode, x, g, out_prefix="y"):
    """One GridSample node per padding mode and align_corners: outputs y0..y5."""
    nodes, k = [], 0
    for pad in ("zeros", "border", "reflection"):
        for ac in (0, 1):
            nodes.append(helper.make_node("GridSample", [x, g], [f"{out_prefix}{k}"], name=f"gs_{mode}_{pad}_{ac}", mode=mode,
                                          padding_mode=pad, align_corners=ac))
            k += 1
    return nodes


def grid_case(mode, opset, dtype=np.float32):
    # locations inside, on and beyond the borders (several reflections away), and a border row
    x = {"x": randf(2, 3, 5, 4).astype(dtype), "g": randf(2, 3, 6, 2, lo=-3.2, hi=3.2).astype(dtype)}
    x["g"][0, 0, :, :] = np.array([[-1, -1], [1, 1], [-1, 1], [0, 0], [1.0000001, -0.9999], [0.5, -1.25]], dtype)
    t = T.DOUBLE if dtype == np.float64 else T.FLOAT
    return model(grid_nodes(mode, "x", "g"), x, [(f"y{k}", t) for k in range(6)], opset), x


@case("GridSample-20 linear: zeros, border, reflection padding, align_corners 0 and 1")
def _():
    return grid_case("linear", 20)


@case("GridSample-20 nearest: zeros, border, reflection padding, align_corners 0 and 1")
def _():
    return grid_case("nearest", 20)


@case("GridSample-20 cubic: zeros, border, reflection padding, align_corners 0 and 1")
def _():
    return grid_case("cubic", 20)


@case("GridSample-22 cubic on float64")
def _():
    return grid_case("cubic", 22, np.float64)


@case("GridSample-16 bicubic and bilinear (the opset-16 names): all padding modes")
def _():
    x = {"x": randf(1, 2, 4, 6), "g": randf(1, 5, 3, 2, lo=-2.5, hi=2.5)}
    nodes = grid_nodes("bicubic", "x", "g", "a") + grid_nodes("bilinear", "x", "g", "b")
    return model(nodes, x, [(f"a{k}", T.FLOAT) for k in range(6)] + [(f"b{k}", T.FLOAT) for k in range(6)], 16), x


@case("GridSample-20 on a 1-pixel-wide image (reflection with align_corners 1 reads pixel 0)")
def _():
    x = {"x": randf(1, 2, 3, 1), "g": randf(1, 4, 4, 2, lo=-2, hi=2)}
    return model(grid_nodes("cubic", "x", "g"), x, [(f"y{k}", T.FLOAT) for k in range(6)], 20), x


@case("RoiAlign-16 avg and max, half_pixel and output_half_pixel, runtime batch indices")
def _():
    x = {"x": randf(2, 3, 9, 11), "rois": np.array([[0, 0, 10, 8], [1.5, 2.25, 6.5, 7.75], [-3, -2, 4, 3], [5, 5, 5.2, 5.1],
                                                        [9, 7, 14, 12], [6, 1, 2, 4]], np.float32),
         "bi": np.array([1, 0, 1, 0, 1, 0], np.int64)}
    nodes = []
    for k, (mode, ctm, sr) in enumerate([("avg", "half_pixel", 0), ("avg", "output_half_pixel", 2), ("max", "half_pixel", 2),
                                         ("max", "output_half_pixel", 0)]):
        nodes.append(helper.make_node("RoiAlign", ["x", "rois", "bi"], [f"y{k}"], name=f"roialign_{k}", mode=mode,
                                      coordinate_transformation_mode=ctm, sampling_ratio=sr, output_height=3, output_width=4,
                                      spatial_scale=0.75))
    return model(nodes, x, [(f"y{k}", T.FLOAT) for k in range(4)], 16), x


@case("RoiAlign-10 (output_half_pixel behaviour)")
def _():
    x = {"x": randf(1, 2, 6, 5), "rois": np.array([[0.5, 1, 4, 5.5], [2, 0, 2.5, 0.5]], np.float32), "bi": np.array([0, 0], np.int64)}
    n = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y0"], name="roialign_node", output_height=2, output_width=3)
    return model([n], x, [("y0", T.FLOAT)], 10), x


@case("RoiAlign-16 float64, max, sampling_ratio 3")
def _():
    x = {"x": randf(1, 2, 6, 5).astype(np.float64), "rois": np.array([[0.5, 1, 4, 5.5], [2, 0, 2.5, 0.5]], np.float64),
         "bi": np.array([0, 0], np.int64)}
    n = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["y0"], name="roialign_node", output_height=2, output_width=3, mode="max",
                         sampling_ratio=3)
    return model([n], x, [("y0", T.DOUBLE)], 16), x


@case("MaxPool-12 Indices into MaxUnpool-11, runtime indices, 2-D and 1-D")
def _():
    x = {"x": randf(2, 3, 6, 8), "z": randf(1, 2, 9)}
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], name="maxpool_node", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("MaxUnpool", ["p", "i"], ["y0"], name="maxunpool_node", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("MaxPool", ["z"], ["q", "j"], name="maxpool_1d", kernel_shape=[3], strides=[3]),
             helper.make_node("MaxUnpool", ["q", "j"], ["y1"], name="maxunpool_1d", kernel_shape=[3], strides=[3])]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT)], 12), x


def unpool_ref(x, i, out_shape, inferred):
    """ONNX's reference MaxUnpool: indices into the unpooled shape, placed at the start of output_shape."""
    y = np.zeros(int(np.prod(inferred)), x.dtype)
    y[i.ravel()] = x.ravel()
    out = np.zeros(out_shape, x.dtype)
    out[tuple(slice(0, d) for d in inferred)] = y.reshape(inferred)
    return out


# ONNX Runtime reads the indices as flat positions of output_shape itself; ONNX's reference
# and node tests (test_maxunpool_export_with_output_shape) place the unpooled tensor at the
# start of output_shape, which is what onnxc does.
@case("MaxUnpool-22 with output_shape larger than the unpooled shape, pads", kind="numpy",
      ref=lambda x, i: unpool_ref(x, i, (1, 2, 7, 6), (1, 2, 5, 4)))
def _():
    x = {"x": randf(1, 2, 2, 3), "i": np.array([[[[0, 3, 7], [12, 14, 19]], [[20, 22, 27], [33, 35, 39]]]], np.int64)}
    n = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y0"], name="maxunpool_node", kernel_shape=[3, 2], strides=[2, 2],
                         pads=[0, 1, 0, 1])
    return model([n], x, [("y0", T.FLOAT)], 22, [const("s", np.array([1, 2, 7, 6], np.int64))]), x


@case("Det-11 batched, singular, permuted, 1x1 and 5x5")
def _():
    a = randf(2, 3, 4, 4)
    a[0, 1] = [[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [5, 1, 2, 2]]  # singular
    a[1, 2] = [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0]]  # a permutation
    x = {"a": a, "b": randf(3, 1, 1), "c": randf(5, 5)}
    nodes = [helper.make_node("Det", ["a"], ["y0"], name="det_a"), helper.make_node("Det", ["b"], ["y1"], name="det_b"),
             helper.make_node("Det", ["c"], ["y2"], name="det_c")]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT)], 11), x


@case("Det-22")
def _():
    x = {"d": randf(2, 6, 6)}
    return one("Det", 22, x), x


# ONNX Runtime's Det takes float32 only.
@case("Det-11 float64", kind="numpy", ref=lambda d: np.linalg.det(d), rtol=1e-12, atol=1e-12)
def _():
    x = {"d": rng.uniform(-2, 2, (2, 7, 7))}
    return one("Det", 11, x, out_type=T.DOUBLE), x
# --------------------------------------------------------------------------- quantization
# QuantizeLinear and DequantizeLinear changed at 19 (float16 scales), 21 (block_size,
# output_dtype, int16/uint16) and 23 (precision, output_dtype of DequantizeLinear); the
# integer products are checked at opset 23 against ONNX Runtime too. Values divide into
# halves exactly (scales are powers of two, or x is k/2 times the scale) so that rounding
# half to even is exercised, and some saturate.

def halves(shape, scale, lo=-300, hi=300):
    """x with x / scale = k / 2 exactly (k integer): ties of every parity."""
    return (rng.integers(lo, hi, shape).astype(np.float32) * np.float32(0.5) * scale).astype(np.float32)


@case("QuantizeLinear-19, DequantizeLinear-19 per axis (axis -1), int8: ties to even, saturation", rtol=0, atol=0)
def _():
    s = np.array([0.5, 0.25, 2.0, 1.0], np.float32)
    x = halves((2, 3, 4), s)
    x[0, 0, :] = [1e6, -1e6, 300.0, -300.0]
    zp = np.array([0, -3, 5, 127], np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y0"], name="quantize_node", axis=-1),
             helper.make_node("DequantizeLinear", ["y0", "s", "zp"], ["y1"], name="dequantize_node", axis=-1)]
    return model(nodes, {"x": x}, [("y0", T.INT8), ("y1", T.FLOAT)], 19, [const("s", s), const("zp", zp)]), {"x": x}


@case("QuantizeLinear-21 blocked (axis 1, block_size 2, a short last block): int16 zero point; uint16 by output_dtype",
      rtol=0, atol=0)
def _():
    s = np.array([0.5, 2.0, 0.25], np.float32)[rng.integers(0, 3, (2, 3, 3))]
    x = halves((2, 5, 3), np.repeat(s, 2, axis=1)[:, :5], lo=-200000, hi=200000)
    zp = rng.integers(-1000, 1000, (2, 3, 3)).astype(np.int16)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y0"], name="quantize_i16", axis=1, block_size=2),
             helper.make_node("QuantizeLinear", ["x", "s"], ["y1"], name="quantize_u16", axis=1, block_size=2,
                              output_dtype=T.UINT16)]
    return model(nodes, {"x": x, "s": s, "zp": zp}, [("y0", T.INT16), ("y1", T.UINT16)], 21), {"x": x, "s": s, "zp": zp}


@case("DequantizeLinear-21: int16 blocked (axis -1), uint16 per tensor, int32 per axis without zero point")
def _():
    x = {"a": rng.integers(-32768, 32767, (3, 5)).astype(np.int16), "sa": randf(3, 3, lo=0.01, hi=1.0),
         "za": rng.integers(-500, 500, (3, 3)).astype(np.int16),
         "b": rng.integers(0, 65535, (6,)).astype(np.uint16),
         "c": rng.integers(-2**31, 2**31 - 1, (2, 3)).astype(np.int32), "sc": randf(3, lo=0.001, hi=1.0)}
    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["y0"], name="dq_blocked", axis=-1, block_size=2),
             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["y1"], name="dq_u16"),
             helper.make_node("DequantizeLinear", ["c", "sc"], ["y2"], name="dq_i32", axis=1)]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT)], 21,
                 [const("sb", np.array(0.125, np.float32)), const("zb", np.array(40000, np.uint16))]), x


@case("QuantizeLinear-23 precision float, DequantizeLinear-23 output_dtype float; float16 scale and output", rtol=1e-3, atol=0)
def _():
    s = np.array([0.5, 0.25, 4.0], np.float32)
    x = {"x": halves((3, 4), s[:, None]), "q": rng.integers(0, 255, (3, 4)).astype(np.uint8)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y0"], name="quantize_node", axis=0, precision=T.FLOAT),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y1"], name="dq_float", axis=0, output_dtype=T.FLOAT),
             helper.make_node("DequantizeLinear", ["q", "h", "z"], ["y2"], name="dq_half", axis=0)]
    return model(nodes, x, [("y0", T.UINT8), ("y1", T.FLOAT), ("y2", T.FLOAT16)], 23,
                 [const("s", s), const("h", s.astype(np.float16) * np.float16(1.5)),
                  const("z", np.array([0, 128, 255], np.uint8))]), x


@case("DynamicQuantizeLinear-11 at opset 23: a range extended to 0, and all zeros (scale 1)")
def _():
    x = {"x": randf(3, 37, lo=0.5, hi=3.0), "z": np.zeros((2, 5), np.float32)}
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y0", "y1", "y2"], name="dql_node"),
             helper.make_node("DynamicQuantizeLinear", ["z"], ["y3", "y4", "y5"], name="dql_zeros")]
    return model(nodes, x, [("y0", T.UINT8), ("y1", T.FLOAT), ("y2", T.UINT8), ("y3", T.UINT8), ("y4", T.FLOAT),
                            ("y5", T.UINT8)], 23), x


@case("QLinearMatMul-21 int8 batched, per-column b_scale and b_zero_point", rtol=0, atol=0)
def _():
    x = {"a": rng.integers(-128, 127, (2, 3, 40)).astype(np.int8), "b": rng.integers(-128, 127, (40, 300)).astype(np.int8)}
    inits = [const("as", np.array(0.02, np.float32)), const("az", np.array(3, np.int8)), const("bs", randf(300, lo=0.001, hi=0.01)),
             const("bz", rng.integers(-5, 5, (300,)).astype(np.int8)), const("ys", np.array(0.5, np.float32)),
             const("yz", np.array(-7, np.int8))]
    n = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y0"], name="qlinearmatmul_node")
    return model([n], x, [("y0", T.INT8)], 21, inits), x


@case("MatMulInteger-10 at opset 23: uint8 x int8, per-column b_zero_point ([N] and [batch, 1, N]), batch broadcast",
      rtol=0, atol=0)
def _():
    x = {"a": rng.integers(0, 255, (2, 1, 4, 70)).astype(np.uint8), "b": rng.integers(-128, 127, (3, 70, 5)).astype(np.int8),
         "bz": rng.integers(-10, 10, (3, 1, 5)).astype(np.int8), "c": rng.integers(0, 255, (70, 9)).astype(np.uint8),
         "cz": rng.integers(0, 255, (9,)).astype(np.uint8)}
    nodes = [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y0"], name="matmulinteger_nd"),
             helper.make_node("MatMulInteger", ["a", "c", "az", "cz"], ["y1"], name="matmulinteger_2d")]
    return model(nodes, x, [("y0", T.INT32), ("y1", T.INT32)], 23, [const("az", np.array(100, np.uint8))]), x


@case("MatMulInteger-10 at opset 23: int32 accumulation wrapping around (K = 40000 of -255 * 255)", rtol=0, atol=0)
def _():
    x = {"a": np.full((2, 40000), 255, np.uint8), "b": np.full((40000, 3), -128, np.int8)}
    x["a"][1, ::3] = 0
    n = helper.make_node("MatMulInteger", ["a", "b", "", "bz"], ["y0"], name="matmulinteger_node")
    return model([n], x, [("y0", T.INT32)], 23, [const("bz", np.array(127, np.int8))]), x


@case("ConvInteger-10 at opset 23: strides, dilations, pads, group 2", rtol=0, atol=0)
def _():
    x = {"x": rng.integers(0, 255, (2, 4, 9, 8)).astype(np.uint8), "w": rng.integers(0, 255, (6, 2, 3, 2)).astype(np.uint8)}
    n = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y0"], name="convinteger_node", strides=[2, 1], dilations=[1, 2],
                         pads=[1, 2, 0, 1], group=2)
    return model([n], x, [("y0", T.INT32)], 23, [const("xz", np.array(128, np.uint8)), const("wz", np.array(7, np.uint8))]), x


@case("QLinearConv-10 at opset 23: uint8 x, int8 w per output channel, bias, SAME_UPPER, 1-D and 2-D", rtol=0, atol=0)
def _():
    x = {"x": rng.integers(0, 255, (1, 3, 11, 10)).astype(np.uint8), "v": rng.integers(0, 255, (2, 2, 300)).astype(np.uint8)}
    inits = [const("xs", np.array(0.05, np.float32)), const("xz", np.array(120, np.uint8)),
             const("w", rng.integers(-128, 127, (4, 3, 3, 3)).astype(np.int8)), const("ws", randf(4, lo=0.001, hi=0.02)),
             const("wz", np.zeros(4, np.int8)), const("ys", np.array(0.7, np.float32)), const("yz", np.array(90, np.uint8)),
             const("b", rng.integers(-2000, 2000, (4,)).astype(np.int32)),
             const("w1", rng.integers(-128, 127, (5, 2, 7)).astype(np.int8)), const("ws1", np.array(0.01, np.float32)),
             const("wz1", np.array(0, np.int8))]
    n2 = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y0"], name="qlinearconv_2d",
                          auto_pad="SAME_UPPER", strides=[2, 2])
    n1 = helper.make_node("QLinearConv", ["v", "xs", "xz", "w1", "ws1", "wz1", "ys", "yz"], ["y1"], name="qlinearconv_1d",
                          pads=[3, 2], dilations=[2])
    return model([n2, n1], x, [("y0", T.UINT8), ("y1", T.UINT8)], 23, inits), x
# DFT-20 made the axis an input (default -2, the last signal axis). ONNX Runtime's radix-2
# path (power-of-two lengths) may truncate and pad; its Bluestein path (other lengths) reads
# the whole axis, so those cases only pad. Its float32 FFTs are off by ~1e-6 of the largest
# bin. onesided with inverse is the inverse of a one-sided spectrum (irfft), as ONNX's
# current shape inference and ONNX Runtime 1.30 define it at opsets 17 and 20.
@case("DFT-20: real input, default axis (-2), onesided, 12 points (Bluestein in ONNX Runtime)", rtol=1e-4, atol=1e-4)
def _():
    x = {"x": randf(2, 3, 12, 1)}
    return one("DFT", 20, x, onesided=1), x


@case("DFT-20: complex input, axis input 1, dft_length 16 (zero-padded from 10), inverse", rtol=1e-4, atol=1e-4)
def _():
    x = {"x": randf(2, 10, 3, 2)}
    inits = [const("dft_length", np.array(16, np.int64)), const("axis", np.array(1, np.int64))]
    return one("DFT", 20, x, inits=inits, inverse=1), x


@case("DFT-20: float64, axis -3 from the end, dft_length 8 truncating 12 samples; real input onesided", rtol=1e-9, atol=1e-9)
def _():
    x = {"x": rng.uniform(-2, 2, (4, 12, 5, 2)), "r": rng.uniform(-2, 2, (4, 12, 5, 1))}
    inits = [const("dft_length", np.array(8, np.int32)), const("axis", np.array(-3, np.int64))]
    n0 = helper.make_node("DFT", ["x", "dft_length", "axis"], ["y0"], name="dft_node")
    n1 = helper.make_node("DFT", ["r", "dft_length", "axis"], ["y1"], name="dft_onesided", onesided=1)
    return model([n0, n1], x, [("y0", T.DOUBLE), ("y1", T.DOUBLE)], 20, inits), x


@case("DFT-20 at opset 23: complex input, axis 2, 20 points padded from 5", rtol=1e-4, atol=1e-4)
def _():
    x = {"x": randf(3, 4, 5, 2)}
    inits = [const("dft_length", np.array(20, np.int64)), const("axis", np.array(2, np.int64))]
    return one("DFT", 23, x, inits=inits), x


# More bins than dft_length / 2 + 1: onnxc ignores the extra ones as numpy's irfft does;
# ONNX Runtime 1.30 gives other values there (not compared).
@case("DFT-20 onesided inverse (irfft): default length 2 * (bins - 1), dft_length 21 padding the spectrum", rtol=1e-4, atol=1e-4)
def _():
    x = {"x": randf(2, 9, 3, 2)}
    inits = [const("n21", np.array(21, np.int64)), const("axis", np.array(1, np.int64))]
    nodes = [helper.make_node("DFT", ["x", "", "axis"], ["y0"], name="irfft_default", inverse=1, onesided=1),
             helper.make_node("DFT", ["x", "n21", "axis"], ["y1"], name="irfft_pad", inverse=1, onesided=1)]
    return model(nodes, x, [(f"y{k}", T.FLOAT) for k in range(2)], 20, inits), x


@case("DFT-17 onesided inverse (irfft) at opset 17, odd length 7 from 4 bins", rtol=1e-4, atol=1e-4)
def _():
    x = {"x": randf(3, 4, 2)}
    return one("DFT", 17, x, inits=[const("dft_length", np.array(7, np.int64))], inverse=1, onesided=1, axis=1), x


@case("DFT-20 axis as a runtime input", kind="refuse", code=3,
      needles=["node 'dft_node'", "DFT, opset 20", "axis", "compile-time constant"])
def _():
    x = {"x": randf(2, 8, 1), "axis": np.array(1, np.int64)}
    return one("DFT", 20, x, _inputs=["x", "", "axis"]), x


@case("DFT-20 axis naming the complex dimension", kind="refuse", code=2, needles=["node 'dft_node'", "DFT, opset 20", "axis -1"])
def _():
    x = {"x": randf(2, 8, 1)}
    return one("DFT", 20, x, inits=[const("axis", np.array(-1, np.int64))], _inputs=["x", "", "axis"]), x


@case("DFT-17 'axis' attribute at opset 20", kind="refuse", code=2, needles=["node 'dft_node'", "DFT, opset 20", "axis"])
def _():
    x = {"x": randf(2, 8, 1)}
    return one("DFT", 20, x, axis=1), x


@case("DFT-20 onesided forward on a complex input", kind="refuse", code=2, needles=["node 'dft_node'", "DFT, opset 20", "onesided", "real input"])
def _():
    x = {"x": randf(2, 8, 2)}
    return one("DFT", 20, x, onesided=1), x


# ONNX Runtime reads a real window as complex values when the signal is complex (its STFT
# kernel casts the window's data to the signal's element type): complex signals go without one.
@case("STFT-17 at opset 23: complex signal two-sided and onesided; real signal with a runtime window", rtol=1e-4, atol=1e-4)
def _():
    x = {"sc": randf(2, 40, 2), "w": randf(16, lo=0, hi=1), "sr": randf(1, 64, 1)}
    inits = [const("step", np.array(6, np.int64)), const("fl", np.array(16, np.int64)), const("fl12", np.array(12, np.int64))]
    nodes = [helper.make_node("STFT", ["sc", "step", "", "fl"], ["y0"], name="stft_complex", onesided=0),
             helper.make_node("STFT", ["sc", "step", "", "fl12"], ["y1"], name="stft_complex_onesided"),
             helper.make_node("STFT", ["sr", "step", "w"], ["y2"], name="stft_real")]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.FLOAT)], 23, inits), x


@case("HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix (17) at opset 23, folded", rtol=1e-5, atol=1e-6)
def _():
    x = {"x": randf(1, 9)}
    inits = [const("n", np.array(9, np.int64)), const("mels", np.array(6, np.int64)), const("dft", np.array(32, np.int64)),
             const("rate", np.array(8000, np.int64)), const("lo", np.array(50.0, np.float32)), const("hi", np.array(3900.0, np.float32))]
    nodes = [helper.make_node("HannWindow", ["n"], ["hann"], name="hann"),
             helper.make_node("HammingWindow", ["n"], ["y1"], name="hamming", periodic=0),
             helper.make_node("BlackmanWindow", ["n"], ["y2"], name="blackman", output_datatype=T.DOUBLE),
             helper.make_node("Mul", ["x", "hann"], ["y0"], name="windowed"),
             helper.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lo", "hi"], ["y3"], name="mel")]
    return model(nodes, x, [("y0", T.FLOAT), ("y1", T.FLOAT), ("y2", T.DOUBLE), ("y3", T.FLOAT)], 23, inits), x
# --------------------------------------------------------------------------- recurrent ops
# RNN, GRU and LSTM (opsets 7, 14 with layout, 22) against ONNX Runtime where it runs them
# (layout 0), and against rnn_ref, a numpy transcription of the ONNX equations, where it does
# not (layout 1: ONNX Runtime's CPU provider refuses batch-major recurrences). Two conventions
# the spec leaves open follow ONNX Runtime: a sequence of length 0 gives Y_h = Y_c = 0, and
# clip bounds the gates' pre-activations, not the cell state h() takes. Run-time lengths
# outside [0, seq_length] are clamped (onnxc's convention; ONNX Runtime rejects them).

RNN_ACT_DEFAULTS = {"affine": (1.0, 0.0), "leakyrelu": (0.01, None), "thresholdedrelu": (1.0, None), "scaledtanh": (1.0, 1.0),
                    "hardsigmoid": (0.2, 0.5), "elu": (1.0, None)}


def rnn_act(name, alpha, beta):
    return {
        "relu": lambda x: np.maximum(x, 0),
        "tanh": np.tanh,
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: np.where(x >= 0, x, alpha * x),
        "thresholdedrelu": lambda x: np.where(x > alpha, x, 0),
        "scaledtanh": lambda x: alpha * np.tanh(beta * x),
        "hardsigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "elu": lambda x: np.where(x >= 0, x, alpha * (np.exp(x) - 1)),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softplus": lambda x: np.log1p(np.exp(x)),
    }[name.lower()]


def rnn_ref(op, X, W, R, B=None, lens=None, h0=None, c0=None, P=None, direction="forward", layout=0, clip=None,
            activations=None, activation_alpha=(), activation_beta=(), linear_before_reset=0, input_forget=0):
    """Y, Y_h (and Y_c for LSTM) of one RNN/GRU/LSTM node, in float64, from the ONNX equations."""
    f64 = lambda a: None if a is None else np.asarray(a, np.float64)
    X, W, R, B, h0, c0, P = map(f64, (X, W, R, B, h0, c0, P))
    if layout == 1:  # batch-major in and out: compute time-major
        X = X.transpose(1, 0, 2)
        h0, c0 = [None if a is None else a.transpose(1, 0, 2) for a in (h0, c0)]
    S, N, _ = X.shape
    D, H = W.shape[0], R.shape[-1]
    per = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    names = activations or [["Tanh"], ["Sigmoid", "Tanh"], ["Sigmoid", "Tanh", "Tanh"]][per - 1] * D
    alphas, betas, acts = list(activation_alpha), list(activation_beta), []
    for name in names:
        a0, b0 = RNN_ACT_DEFAULTS.get(name.lower(), (None, None))
        a = alphas.pop(0) if a0 is not None and alphas else a0
        b = betas.pop(0) if b0 is not None and betas else b0
        acts.append(rnn_act(name, a, b))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    Y, Yh, Yc = np.zeros((S, D, N, H)), np.zeros((D, N, H)), np.zeros((D, N, H))
    for d in range(D):
        f = acts[d * per:(d + 1) * per]
        G = W.shape[1] // H
        Wg, Rg = np.split(W[d], G), np.split(R[d], G)  # per gate [H, I], [H, H]
        bias = B[d] if B is not None else np.zeros(2 * G * H)
        Wb, Rb = np.split(bias[:G * H], G), np.split(bias[G * H:], G)
        Pg = np.split(P[d], 3) if P is not None else [np.zeros(H)] * 3
        backward = direction == "reverse" or d == 1
        for n in range(N):
            L = S if lens is None else int(min(max(int(lens[n]), 0), S))
            h = h0[d, n] if h0 is not None else np.zeros(H)
            c = c0[d, n] if c0 is not None else np.zeros(H)
            for t in (reversed(range(L)) if backward else range(L)):
                x = X[t, n]
                lin = lambda k, hv: Wg[k] @ x + Wb[k] + Rg[k] @ hv + Rb[k]
                if op == "RNN":
                    h = f[0](cl(lin(0, h)))
                elif op == "GRU":  # gates z, r, h
                    z, r = f[0](cl(lin(0, h))), f[0](cl(lin(1, h)))
                    if linear_before_reset:
                        hh = f[1](cl(Wg[2] @ x + Wb[2] + r * (Rg[2] @ h + Rb[2])))
                    else:
                        hh = f[1](cl(Wg[2] @ x + Wb[2] + Rg[2] @ (r * h) + Rb[2]))
                    h = (1 - z) * hh + z * h
                else:  # gates i, o, f, c; peepholes i, o, f
                    i = f[0](cl(lin(0, h) + Pg[0] * c))
                    fg = 1 - i if input_forget else f[0](cl(lin(2, h) + Pg[2] * c))
                    c = fg * c + i * f[1](cl(lin(3, h)))
                    o = f[0](cl(lin(1, h) + Pg[1] * c))
                    h = o * f[2](c)
                Y[t, d, n] = h
            if L > 0:
                Yh[d, n], Yc[d, n] = h, c
    if layout == 1:
        Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    outs = (Y, Yh, Yc) if op == "LSTM" else (Y, Yh)
    return tuple(o.astype(np.float32) for o in outs)


RNN_INPUTS = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]


def rnn_case(op, opset, S, N, I, H, direction="forward", layout=0, inputs=("B",), outputs=None, **attrs):
    """A model of one recurrent node with runtime inputs X, W, R and the optional ones named, and
    its inputs: random, lengths from attrs['_lens']."""
    D = 2 if direction == "bidirectional" else 1
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    state = (N, D, H) if layout else (D, N, H)
    vals = {"X": randf(*((N, S, I) if layout else (S, N, I)), lo=-1, hi=1), "W": randf(D, G * H, I, lo=-0.6, hi=0.6),
            "R": randf(D, G * H, H, lo=-0.6, hi=0.6), "B": randf(D, 2 * G * H, lo=-0.5, hi=0.5),
            "sequence_lens": np.array(attrs.pop("_lens", [S] * N), np.int32), "initial_h": randf(*state, lo=-1, hi=1),
            "initial_c": randf(*state, lo=-1, hi=1), "P": randf(D, 3 * H, lo=-0.5, hi=0.5)}
    present = {"X", "W", "R"} | set(inputs)
    last = max(k for k, n in enumerate(RNN_INPUTS) if n in present)
    names = [n if n in present else "" for n in RNN_INPUTS[:last + 1]]
    feeds = {n: vals[n] for n in names if n}
    outs = outputs or (["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"])
    if layout:
        attrs["layout"] = 1
    if direction != "forward":
        attrs["direction"] = direction
    node = helper.make_node(op, names, outs, name=f"{op.lower()}_node", hidden_size=H, **attrs)
    return model([node], feeds, [(o, T.FLOAT) for o in outs if o], opset), feeds


def rnn_numpy(op, **attrs):
    """The reference of rnn_case(op, ..., **attrs) from its feeds (in RNN_INPUTS order)."""
    keys = {"B": "B", "sequence_lens": "lens", "initial_h": "h0", "initial_c": "c0", "P": "P"}
    outs = attrs.pop("_outs", None)

    def ref(*vals):
        # rnn_case feeds X, W, R, then the optional inputs present, in RNN_INPUTS order
        present = [n for n in RNN_INPUTS if n in attrs.get("_present", ("X", "W", "R"))]
        kw = {keys[n]: v for n, v in zip(present[3:], vals[3:])}
        r = rnn_ref(op, *vals[:3], **kw, **{k: v for k, v in attrs.items() if not k.startswith("_")})
        return r if outs is None else tuple(r[k] for k in outs)
    return ref


@case("LSTM-22 bidirectional, sequence_lens shorter than the sequence (one 0), initial h and c, peepholes",
      rtol=1e-4, atol=2e-5)
def _():
    return rnn_case("LSTM", 22, 6, 4, 3, 5, "bidirectional", _lens=[6, 3, 0, 1],
                    inputs=("B", "sequence_lens", "initial_h", "initial_c", "P"))


@case("LSTM-14 layout 1, bidirectional, sequence_lens shorter than the sequence, peepholes (numpy)", kind="numpy",
      ref=rnn_numpy("LSTM", direction="bidirectional", layout=1, _present=RNN_INPUTS), atol=2e-5)
def _():
    return rnn_case("LSTM", 14, 6, 4, 3, 5, "bidirectional", layout=1, _lens=[6, 3, 0, 1],
                    inputs=("B", "sequence_lens", "initial_h", "initial_c", "P"))


@case("LSTM-7 reverse, input_forget, clip, activations with alpha/beta, only Y_h and Y_c", rtol=1e-4, atol=2e-5)
def _():
    return rnn_case("LSTM", 7, 5, 2, 4, 6, "reverse", inputs=("B", "sequence_lens", "initial_h"), outputs=["", "Y_h", "Y_c"],
                    _lens=[5, 2], input_forget=1, clip=0.8, activations=["HardSigmoid", "LeakyRelu", "ScaledTanh"],
                    activation_alpha=[0.3, 0.2, 0.9], activation_beta=[0.4, 1.5])


@case("GRU-22 bidirectional, linear_before_reset, sequence_lens, initial_h", rtol=1e-4, atol=2e-5)
def _():
    return rnn_case("GRU", 22, 5, 3, 4, 7, "bidirectional", _lens=[2, 5, 4], linear_before_reset=1,
                    inputs=("B", "sequence_lens", "initial_h"))


@case("GRU-14 reverse, clip, activations Softsign/Softplus, no bias", rtol=1e-4, atol=2e-5)
def _():
    return rnn_case("GRU", 14, 4, 2, 3, 5, "reverse", inputs=("initial_h",), clip=0.7, activations=["Softsign", "Softplus"])


@case("GRU-14 layout 1, reverse, sequence_lens (numpy)", kind="numpy",
      ref=rnn_numpy("GRU", direction="reverse", layout=1, _present=("X", "W", "R", "B", "sequence_lens")), atol=2e-5)
def _():
    return rnn_case("GRU", 14, 5, 3, 2, 4, "reverse", layout=1, _lens=[3, 5, 1], inputs=("B", "sequence_lens"))


# ONNX Runtime's RNN (not its GRU and LSTM) takes alpha/beta by direction, and 0 where absent:
# these cases give every function its values, which both readings then agree on.
@case("RNN-22 bidirectional, ScaledTanh and Affine, sequence_lens, only Y_h", rtol=1e-4, atol=2e-5)
def _():
    return rnn_case("RNN", 22, 5, 3, 4, 6, "bidirectional", inputs=("B", "sequence_lens", "initial_h"), outputs=["", "Y_h"],
                    _lens=[5, 1, 3], activations=["ScaledTanh", "Affine"], activation_alpha=[0.9, 0.7],
                    activation_beta=[1.3, 0.1])


@case("RNN-7 forward, Elu, clip", rtol=1e-4, atol=2e-5)
def _():
    return rnn_case("RNN", 7, 4, 2, 3, 8, activations=["Elu"], activation_alpha=[0.6], clip=1.5)


@case("RNN-14 layout 1, bidirectional, LeakyRelu and ThresholdedRelu with default alphas (numpy)", kind="numpy",
      ref=rnn_numpy("RNN", direction="bidirectional", layout=1, activations=["LeakyRelu", "ThresholdedRelu"],
                    _present=("X", "W", "R", "B")), atol=2e-5)
def _():
    return rnn_case("RNN", 14, 4, 3, 2, 5, "bidirectional", layout=1, activations=["LeakyRelu", "ThresholdedRelu"])


@case("LSTM-14 run-time sequence_lens outside [0, seq_length] are clamped (numpy)", kind="numpy",
      ref=rnn_numpy("LSTM", _present=("X", "W", "R", "B", "sequence_lens")), atol=2e-5)
def _():
    return rnn_case("LSTM", 14, 3, 4, 2, 4, _lens=[-7, 99, 3, 2147483647], inputs=("B", "sequence_lens"))


@case("LSTM-1 with output_sequence (legacy opset, numpy)", kind="numpy", ref=rnn_numpy("LSTM"), atol=2e-5)
def _():
    return rnn_case("LSTM", 1, 3, 2, 3, 4, inputs=(), output_sequence=1)


@case("ReverseSequence-10 batch_axis 0, time_axis 1, inner dims, int64 data")
def _():
    x = np.arange(4 * 5 * 2 * 3, dtype=np.int64).reshape(4, 5, 2, 3)
    feeds = {"x": x, "l": np.array([5, 1, 3, 0], np.int64)}
    return one("ReverseSequence", 10, feeds, out_type=T.INT64, batch_axis=0, time_axis=1), feeds


@case("ReverseSequence-10 time_axis 0 on float")
def _():
    feeds = {"x": randf(6, 3, 4), "l": np.array([6, 2, 4], np.int64)}
    return one("ReverseSequence", 10, feeds), feeds


# --------------------------------------------------------------------------- legacy opsets (1-6)

@case("Relu-1, Sigmoid-1 with consumed_inputs", kind="numpy", ref=lambda x: 1 / (1 + np.exp(-np.maximum(x, 0))))
def _():
    x = {"x": randf(3, 4)}
    n1 = helper.make_node("Relu", ["x"], ["r"], name="relu_node", consumed_inputs=[0])
    n2 = helper.make_node("Sigmoid", ["r"], ["y0"], name="sigmoid_node", consumed_inputs=[0])
    return model([n1, n2], x, [("y0", T.FLOAT)], 1), x


@case("Add-6 legacy broadcast, suffix", kind="numpy", ref=lambda x: x + np.array([1, 2, 3, 4], np.float32))
def _():
    x = {"x": randf(2, 3, 4)}
    return one("Add", 6, x, inits=[const("b", np.array([1, 2, 3, 4], np.float32))], broadcast=1), x


@case("Mul-1 legacy broadcast, explicit suffix axis", kind="numpy", ref=lambda x: x * np.float32(-3))
def _():
    x = {"x": randf(2, 3)}
    return one("Mul", 1, x, inits=[const("b", np.array([-3], np.float32))], broadcast=1, axis=1, consumed_inputs=[0]), x


@case("Reshape-1 shape attribute, Concat-1 default axis", kind="numpy",
      ref=lambda x: np.concatenate([x.reshape(3, 4), x.reshape(3, 4)], axis=1))
def _():
    x = {"x": randf(2, 6)}
    n1 = helper.make_node("Reshape", ["x"], ["r"], name="reshape_node", shape=[3, 4])
    n2 = helper.make_node("Concat", ["r", "r"], ["y0"], name="concat_node")
    return model([n1, n2], x, [("y0", T.FLOAT)], 3), x


@case("Cast-1 'to' as a type name", kind="numpy", ref=lambda x: x.astype(np.int32))
def _():
    x = {"x": np.array([[1.5, -2.5, 7.0]], np.float32)}
    return one("Cast", 1, x, out_type=T.INT32, to="INT32"), x


@case("Pad-1 paddings attribute", kind="numpy", ref=lambda x: np.pad(x, [(0, 0), (1, 2)], constant_values=0.5))
def _():
    x = {"x": randf(2, 3)}
    return one("Pad", 1, x, paddings=[0, 1, 0, 2], value=0.5), x


# --------------------------------------------------------------------------- refusals

@case("legacy broadcast along a middle axis", kind="refuse", code=3,
      needles=["node 'add_node'", "Add, opset 6", "axis 1", "[2,3,4,5]", "[3,4]"])
def _():
    x = {"x": randf(2, 3, 4, 5)}
    return one("Add", 6, x, inits=[const("b", randf(3, 4))], broadcast=1, axis=1), x


@case("opset 29", kind="refuse", code=3, needles=["opset 29", "1 to 28"])
def _():
    x = {"x": randf(2)}
    return one("Relu", 29, x), x


@case("Range-27 stash_type 10 (float16 accumulation)", kind="refuse", code=3,
      needles=["node 'range_node'", "Range, opset 27", "stash_type 10"])
def _():
    x = {"x": randf(2)}
    nodes = [helper.make_node("Range", ["s", "l", "d"], ["r"], name="range_node", stash_type=10),
             helper.make_node("Add", ["x", "r"], ["y0"], name="add_node")]
    inits = [const("s", np.array(0, np.float16)), const("l", np.array(2, np.float16)), const("d", np.array(1, np.float16))]
    return model(nodes, x, [("y0", T.FLOAT)], 27, inits), x


@case("BitCast-26 of a float16 input (computed as float32 by onnxc)", kind="refuse", code=3,
      needles=["node 'bitcast_node'", "BitCast, opset 26", "float16"])
def _():
    x = {"x": randf(4).astype(np.float16)}
    return one("BitCast", 26, x, out_type=T.INT16, to=T.INT16), x


@case("Cast-24 round_mode ONNX does not define", kind="refuse", code=2,
      needles=["node 'cast_node'", "Cast, opset 24", "'round_mode'", "sideways"])
def _():
    x = {"x": randf(2)}
    return one("Cast", 24, x, out_type=T.DOUBLE, to=T.DOUBLE, round_mode="sideways"), x


@case("an op before its first opset", kind="refuse", code=2, needles=["node 'hardswish_node'", "HardSwish", "before opset 14"])
def _():
    x = {"x": randf(2)}
    return one("HardSwish", 13, x), x


@case("Pad wrap before opset 19", kind="refuse", code=2, needles=["node 'pad_node'", "Pad, opset 18", "'wrap'"])
def _():
    x = {"x": randf(2, 3)}
    return one("Pad", 18, x, inits=[const("p", np.array([1, 1, 1, 1], np.int64))], mode="wrap"), x


@case("Upsample-1 (experimental)", kind="refuse", code=3, needles=["node 'upsample_node'", "Upsample, opset 6", "experimental"])
def _():
    x = {"x": randf(1, 1, 2, 2)}
    return one("Upsample", 6, x, height_scale=2.0, width_scale=2.0), x


@case("ScatterElements reduction max before opset 18", kind="refuse", code=2,
      needles=["node 'scatterelements_node'", "ScatterElements, opset 16", "'max'", "opset 18"])
def _():
    x = {"d": randf(3), "u": randf(2)}
    return one("ScatterElements", 16, {"d": x["d"]}, inits=[const("i", np.array([0, 2], np.int64)), const("u", x["u"])],
               reduction="max"), {"d": x["d"]}


@case("GroupNormalization-18 scale per channel", kind="refuse", code=2,
      needles=["node 'groupnormalization_node'", "GroupNormalization, opset 18", "one value per group"])
def _():
    x = {"x": randf(1, 4, 3)}
    return one("GroupNormalization", 18, x, inits=[const("s", randf(4)), const("b", randf(4))], num_groups=2), x


@case("Einsum on int64", kind="refuse", code=3, needles=["node 'einsum_node'", "Einsum, opset 12", "integer Einsum"])
def _():
    x = {"a": np.array([[1, 2], [3, 4]], np.int64)}
    return one("Einsum", 12, x, out_type=T.INT64, equation="ij->ji"), x


@case("GridSample-20 with the opset-16 mode name 'bilinear'", kind="refuse", code=2,
      needles=["node 'gridsample_node'", "GridSample, opset 20", "'bilinear'", "renamed 'linear'"])
def _():
    x = {"x": randf(1, 1, 3, 3), "g": randf(1, 2, 2, 2)}
    return one("GridSample", 20, x, mode="bilinear"), x


@case("GridSample-20 3-D sampling (5-D X)", kind="refuse", code=3,
      needles=["node 'gridsample_node'", "GridSample, opset 20", "3-D sampling", "only 2-D"])
def _():
    x = {"x": randf(1, 1, 2, 3, 3), "g": randf(1, 2, 2, 2, 3)}
    return one("GridSample", 20, x), x


@case("GridSample-20 1-D sampling (3-D X)", kind="refuse", code=3, needles=["node 'gridsample_node'", "1-D sampling"])
def _():
    x = {"x": randf(1, 2, 5), "g": randf(1, 4, 1)}
    return one("GridSample", 20, x, mode="cubic"), x
@case("QuantizeLinear-21 to float8e4m3fn", kind="refuse", code=3,
      needles=["node 'quantizelinear_node'", "QuantizeLinear, opset 21", "float8e4m3fn"])
def _():
    x = {"x": randf(2, 3)}
    return one("QuantizeLinear", 21, x, out_type=17, inits=[const("s", np.array(0.5, np.float32))], output_dtype=17), x


@case("QuantizeLinear-21 to int4 (an int4 zero point)", kind="refuse", code=3, needles=["'zp'", "int4"])
def _():
    x = {"x": randf(2, 3)}
    zp = onnx.TensorProto()
    zp.name, zp.data_type, zp.raw_data = "zp", 22, b"\x00"
    return one("QuantizeLinear", 21, x, out_type=22, inits=[const("s", np.array(0.5, np.float32)), zp]), x


@case("QuantizeLinear-23 precision bfloat16", kind="refuse", code=3,
      needles=["node 'quantizelinear_node'", "QuantizeLinear, opset 23", "precision 16", "bfloat16"])
def _():
    x = {"x": randf(2, 3)}
    return one("QuantizeLinear", 23, x, out_type=T.UINT8, inits=[const("s", np.array(0.5, np.float32))], precision=T.BFLOAT16), x


@case("DequantizeLinear-23 output_dtype bfloat16", kind="refuse", code=3,
      needles=["node 'dequantizelinear_node'", "DequantizeLinear, opset 23", "bfloat16"])
def _():
    x = {"x": np.array([1, 2, 3], np.uint8)}
    return one("DequantizeLinear", 23, x, out_type=T.BFLOAT16, inits=[const("s", np.array(0.5, np.float32))],
               output_dtype=T.BFLOAT16), x


@case("DequantizeLinear-19 of a float8 input", kind="refuse", code=3, needles=["graph input 'x'", "float8e5m2"])
def _():
    g = helper.make_graph([helper.make_node("DequantizeLinear", ["x", "s"], ["y0"], name="dequantize_node")], "g",
                          [helper.make_tensor_value_info("x", 19, [4])], [helper.make_tensor_value_info("y0", T.FLOAT, [4])],
                          [const("s", np.array(0.5, np.float32))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    return m, {}


@case("QuantizeLinear-21 block_size with a per-axis scale", kind="refuse", code=2,
      needles=["node 'quantizelinear_node'", "QuantizeLinear, opset 21", "block_size 2", "[3]"])
def _():
    x = {"x": randf(2, 6)}
    return one("QuantizeLinear", 21, x, out_type=T.UINT8, inits=[const("s", randf(3, lo=0.1, hi=1.0))], axis=1, block_size=2), x
@case("LSTM activation ONNX does not define", kind="refuse", code=2, needles=["node 'lstm_node'", "LSTM, opset 14", "'Swish'"])
def _():
    return rnn_case("LSTM", 14, 2, 1, 2, 3, activations=["Sigmoid", "Swish", "Tanh"])


@case("GRU with one activation per direction too few", kind="refuse", code=2,
      needles=["node 'gru_node'", "GRU, opset 22", "2 per direction, 4"])
def _():
    return rnn_case("GRU", 22, 2, 1, 2, 3, "bidirectional", activations=["Sigmoid", "Tanh"])


@case("RNN on float64", kind="refuse", code=3, needles=["node 'rnn_node'", "RNN, opset 14", "f64", "supported: f32"])
def _():
    m, feeds = rnn_case("RNN", 14, 2, 1, 2, 3)
    feeds = {k: v.astype(np.float64) for k, v in feeds.items()}
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.elem_type = T.DOUBLE
    return m, feeds


# --------------------------------------------------------------------------- runner

# --------------------------------------------------------------------------- fuzz findings
# tests/fuzz/regressions/emit-c-convtranspose-stride-17-unused-variable.onnx: no tap of the last
# kernel dim reaches the output, so the emitted C has no row loop (it once declared row pointers
# it never used: -Werror failed). Y must then be the bias alone.


@case("ConvTranspose whose strides put every input past the output: Y is the bias")
def _():
    x, w = randf(1, 1, 3, 4), const("w", randf(1, 2, 3, 3))
    b = const("b", randf(2))
    return one("ConvTranspose", 11, {"x": x}, inits=[w, b], strides=[3, 17], output_shape=[10, 8]), {"x": x}


def run(cmd, timeout=300, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def kind_of(dt):
    return {"f": "float", "i": "signed", "u": "unsigned", "b": "bool"}.get(dt.kind, dt.kind)


def compare(name, got, want, rtol, atol):
    if kind_of(got.dtype) != kind_of(want.dtype):
        return f"output {name}: dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output {name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind == "f":
        a, e = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf: equal infinities pass through a == e
            ok = (np.abs(a - e) <= atol + rtol * np.abs(e)) | (a == e) | (np.isnan(a) & np.isnan(e))
    else:
        ok = got == want
    if ok.all():
        return None
    i = np.unravel_index(int(np.argmin(ok)), want.shape)
    return f"output {name}: {int((~ok).sum())}/{want.size} differ; at {tuple(int(v) for v in i)}: got {got[i]!r} expected {want[i]!r}"


# Operands of the integer products whose int8 form ONNX Runtime computes exactly only with VNNI
# (the right-hand operand and its zero point), by op.
INT8_OPERANDS = {"MatMulInteger": (1, 3), "ConvInteger": (1, 3), "QLinearConv": (3, 5), "QLinearMatMul": (3, 5)}


def cpu_has_vnni():
    try:
        flags = open("/proc/cpuinfo").read().split()
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def u8_twin(m, inputs):
    """The model with every int8 right-hand operand of a uint8 x int8 integer product (and its zero point,
    0 when absent) shifted by 128 into uint8: the same x - zero point, so the same outputs.
    Returns (model, inputs), or None when the model has no such operand."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    inputs = dict(inputs)
    inits = {t.name: t for t in m.graph.initializer}
    gin = {v.name: v for v in m.graph.input}
    shifted = set()

    def shift(name):
        if name in shifted:
            return
        shifted.add(name)
        if name in inits:
            a = numpy_helper.to_array(inits[name]).astype(np.int16) + 128
            inits[name].CopyFrom(numpy_helper.from_array(a.astype(np.uint8), name))
        else:
            inputs[name] = (inputs[name].astype(np.int16) + 128).astype(np.uint8)
            gin[name].type.tensor_type.elem_type = T.UINT8

    def dtype_of(name):
        if name in inits:
            return inits[name].data_type
        return gin[name].type.tensor_type.elem_type if name in gin else None

    changed = False
    for k, n in enumerate(m.graph.node):
        if n.op_type not in INT8_OPERANDS:
            continue
        w, z = INT8_OPERANDS[n.op_type]
        if dtype_of(n.input[0]) != T.UINT8 or dtype_of(n.input[w]) != T.INT8:  # uint8 x int8 only
            continue
        if len(n.input) <= z or not n.input[z]:
            zname = f"u8_twin_zero_{k}"
            m.graph.initializer.append(numpy_helper.from_array(np.array(0, np.int8), zname))
            inits[zname] = m.graph.initializer[-1]
            while len(n.input) <= z:
                n.input.append("")
            n.input[z] = zname
        shift(n.input[w])
        shift(n.input[z])
        changed = True
    return (m, inputs) if changed else None


def run_case(c, args, work):
    d = os.path.join(work, re.sub(r"\W+", "_", c["name"]).strip("_"))
    os.makedirs(d, exist_ok=True)
    m, inputs = c["fn"]()
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    out = os.path.join(d, "out")
    cmd = [args.compiler, path, "-o", out, "--name", "m", "--quiet", "--cflags", args.cflags]
    if c["kind"] == "refuse":
        p = run(cmd)
        msg = p.stdout + p.stderr
        problems = []
        if p.returncode != c["code"]:
            problems.append(f"exit {p.returncode}, expected {c['code']}")
        if "Sanitizer" in msg or "runtime error:" in msg or "internal" in msg:
            problems.append("crash report in output")
        problems += [f"message lacks {n!r}" for n in c["needles"] if n not in msg]
        return problems, msg.strip().splitlines()[0] if msg.strip() else ""
    feeds = []
    for k, v in inputs.items():
        f = os.path.join(d, f"in_{k}.npy")
        np.save(f, v)
        feeds.append(f"{k}={f}")
    twin = u8_twin(m, inputs) if c["kind"] == "ort" and not cpu_has_vnni() else None
    if twin:
        tpath = os.path.join(d, "model_u8_twin.onnx")
        onnx.save(twin[0], tpath)
        tfeeds = []
        for k, v in twin[1].items():
            f = os.path.join(d, f"twin_{k}.npy")
            np.save(f, v)
            tfeeds.append(f"{k}={f}")
        p = run([sys.executable, ORT_RUN, tpath, os.path.join(d, "ort")] + tfeeds)
        if p.returncode != 0:
            return [f"ONNX Runtime failed on the uint8 twin: {(p.stderr or p.stdout).strip()[:1000]}"], ""
        want = [np.load(os.path.join(d, "ort", f"{k}.npy")) for k in range(len(m.graph.output))]
    elif c["kind"] == "ort":
        p = run([sys.executable, ORT_RUN, path, os.path.join(d, "ort")] + feeds)
        if p.returncode != 0:
            return [f"ONNX Runtime failed: {(p.stderr or p.stdout).strip()[:1000]}"], ""
        want = [np.load(os.path.join(d, "ort", f"{k}.npy")) for k in range(len(m.graph.output))]
    else:
        r = c["ref"](*inputs.values())  # one output, or a tuple of them
        want = [np.asarray(a) for a in (r if isinstance(r, tuple) else (r,))]
    # The generic driver is compiled once per run (compile-model builds it the first time) and linked into each case.
    p = run(cmd + ["--driver-object", os.path.join(work, "onnxc_main.o")])
    if p.returncode != 0:
        return [f"compile-model exit {p.returncode}: {(p.stdout + p.stderr).strip()[:2000]}"], ""
    exe = [os.path.join(out, "m"), "--quiet"] + sum((["--input", f] for f in feeds), [])
    outs = []
    for k, o in enumerate(m.graph.output):
        outs.append(os.path.join(d, f"out_{k}.npy"))
        exe += ["--output", f"{o.name}={outs[-1]}"]
    p = run(exe, timeout=60)
    if p.returncode != 0 or "runtime error:" in p.stderr or "Sanitizer" in p.stderr:
        return [f"binary exit {p.returncode}: {(p.stdout + p.stderr).strip()[:2000]}"], ""
    problems = []
    for k, o in enumerate(m.graph.output):
        msg = compare(o.name, np.load(outs[k]), want[k], c.get("rtol", args.rtol), c.get("atol", args.atol))
        if msg:
            problems.append(msg)
    ref = ("ONNX Runtime on the uint8 twin (no VNNI here)" if twin else "ONNX Runtime") if c["kind"] == "ort" else "numpy"
    return problems, f"matches {ref} (" + ", ".join(f"{o.name} {list(w.shape)} {w.dtype}" for o, w in zip(m.graph.output, want)) + ")"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--cflags", default="-O1 -Werror")
    ap.add_argument("--filter", default=None)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    cases = [c for c in CASES if not args.filter or re.search(args.filter, c["name"])]
    if any(c["kind"] == "ort" for c in cases):
        p = run([sys.executable, ORT_RUN, "--version"], timeout=120)
        if p.returncode != 0:
            print(f"FAIL ONNX Runtime is not installed in {sys.executable}: run tools/setup.sh (requirements.txt)"
                  f": {(p.stderr or p.stdout).strip()[-500:]}")
            print(f"0 passed, {len(cases)} failed")
            return 1
        print(f"reference: ONNX Runtime {p.stdout.strip()} ({sys.executable})")
    results = []
    with tempfile.TemporaryDirectory(prefix="onnxc-opset-") as tmp:
        work = args.work or tmp
        if os.path.exists(os.path.join(work, "onnxc_main.o")):  # from an earlier run with --work, maybe other flags
            os.remove(os.path.join(work, "onnxc_main.o"))
        for c in cases:
            try:
                problems, info = run_case(c, args, work)
            except Exception as e:  # a broken case is a failure, not a crash of the runner
                problems, info = [f"runner error {e!r}"], ""
            print(f"{'ok  ' if not problems else 'FAIL'} {c['name']}: {info}")
            for pr in problems:
                print(f"     {pr}")
            results.append(not problems)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
