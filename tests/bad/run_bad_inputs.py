#!/usr/bin/env python3
"""Bad-input tests: malformed or unsupported models and wrong input files.

Each case builds a bad model (with onnx.helper, or raw bytes) in a scratch folder, runs
compile-model on it (or a generated binary on a bad input file) and checks that it exits
non-zero with the expected exit code, prints a message containing the expected words (the
node's name for graph errors), and did not crash: no signal, no sanitizer report.
A case may return (model path, extra compile-model arguments), e.g. a small --max-memory.
Then an oversized intermediate behind a Concat, a BatchNormalization, a Split and a fork-join
region must be refused before any C is written, at every --parallel mode. Last, two
100,000-node chains (Relu; Add/Relu) must compile without stack overflow or quadratic passes,
and the Add/Relu one must build and match numpy.
Run with the project's .venv/bin/python (numpy + onnx; tools/setup.sh). Usage:
  run_bad_inputs.py --compiler build/compile-model [--cflags "-O1 -fsanitize=address,undefined"]
Ends with the line "N passed, M failed"; exit status 0 iff M == 0.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

INVALID, UNSUPPORTED, USAGE = 2, 3, 1


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def external_tensor():
    w = TensorProto()
    w.name, w.data_type = "w", TensorProto.FLOAT
    w.dims.extend([4])
    return w


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", [2, 3])], [vi("y", [2, 3])])


def conv_model(**attrs):
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    n = helper.make_node("Conv", ["x", "w"], ["y"], name="conv_3", **attrs)
    return model([n], [vi("x", [1, 3, 8, 8])], [vi("y", None)], [w])


CASES = []


def case(name, code, *needles):
    def deco(fn):
        CASES.append((name, code, needles, fn))
        return fn
    return deco


@case("missing file", USAGE, "cannot open model", "No such file")
def _(d):
    return os.path.join(d, "does_not_exist.onnx")


@case("empty file", INVALID, "empty")
def _(d):
    p = os.path.join(d, "empty.onnx")
    open(p, "wb").close()
    return p


@case("random bytes", None, "")
def _(d):
    rng = random.Random(7)
    p = os.path.join(d, "random.onnx")
    with open(p, "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(4096)))
    return p


@case("truncated protobuf", INVALID, "not a valid ONNX model")
def _(d):
    b = conv_model().SerializeToString()
    p = os.path.join(d, "truncated.onnx")
    with open(p, "wb") as f:
        f.write(b[: len(b) // 2])
    return p


@case("directory instead of file", USAGE, "directory")
def _(d):
    return d


@case("--device cuda: an op the CUDA backend does not run", UNSUPPORTED, "node 'floor_1'", "(Floor", "not supported by the CUDA backend")
def _(d):
    m = model([helper.make_node("Floor", ["x"], ["y"], name="floor_1")], [vi("x", [2, 3])], [vi("y", [2, 3])])
    return save(m, os.path.join(d, "cuda_floor.onnx")), ["--device", "cuda", "--emit", "c"]


@case("--device cuda: a fused step the CUDA backend does not run", UNSUPPORTED, "softplus_1", "Softplus", "not supported by the CUDA backend")
def _(d):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv_1"), helper.make_node("Softplus", ["c"], ["y"], name="softplus_1")]
    w = numpy_helper.from_array(np.ones((4, 3, 1, 1), np.float32), "w")
    m = model(nodes, [vi("x", [1, 3, 4, 4])], [vi("y", [1, 4, 4, 4])], [w])
    return save(m, os.path.join(d, "cuda_softplus.onnx")), ["--device", "cuda", "--emit", "c"]


def attention_model(q, k, v, mask=None, **attrs):
    ins = [vi("q", q), vi("k", k), vi("v", v)] + ([vi("m", mask)] if mask else [])
    n = helper.make_node("Attention", [i.name for i in ins], ["y"], name="attn_1", **attrs)
    return model([n], ins, [vi("y", None)], opset=23)


@case("Attention: K's head size differs from Q's", INVALID, "node 'attn_1'", "(Attention", "head size")
def _(d):
    return save(attention_model([1, 6, 16], [1, 6, 12], [1, 6, 16], q_num_heads=2, kv_num_heads=2), os.path.join(d, "attn_heads.onnx"))


@case("Attention: a mask that does not broadcast", INVALID, "node 'attn_1'", "attn_mask [3,6]")
def _(d):
    return save(attention_model([1, 2, 4, 8], [1, 2, 6, 8], [1, 2, 6, 8], [3, 6]), os.path.join(d, "attn_mask.onnx"))


@case("Attention: a head size above the C kernel's stack tile", UNSUPPORTED, "node 'attn_1'", "(Attention", "4096")
def _(d):
    return save(attention_model([1, 1, 2, 5000], [1, 1, 2, 5000], [1, 1, 2, 8]), os.path.join(d, "attn_big_head.onnx"))


@case("Attention: no keys", UNSUPPORTED, "node 'attn_1'", "empty dim")
def _(d):
    return save(attention_model([1, 2, 4, 8], [1, 2, 0, 8], [1, 2, 0, 8]), os.path.join(d, "attn_empty.onnx"))


@case("unsupported op", UNSUPPORTED, "node 'frob_1'", "FrobnicateX", "not supported")
def _(d):
    m = model([helper.make_node("FrobnicateX", ["x"], ["y"], name="frob_1")], [vi("x", [2])], [vi("y", [2])])
    return save(m, os.path.join(d, "unsupported.onnx"))


@case("unsupported domain", UNSUPPORTED, "node 'ms_1'", "com.microsoft")
def _(d):
    n = helper.make_node("FusedConv", ["x"], ["y"], name="ms_1", domain="com.microsoft")
    m = model([n], [vi("x", [2])], [vi("y", [2])])
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return save(m, os.path.join(d, "domain.onnx"))


@case("QOperator QLinearAdd without its output's zero point", UNSUPPORTED, "node 'qadd_1'", "QLinearAdd", "zero point")
def _(d):
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "s"), numpy_helper.from_array(np.array(3, np.uint8), "z")]
    n = helper.make_node("QLinearAdd", ["a", "s", "z", "b", "s", "z", "s"], ["y"], name="qadd_1", domain="com.microsoft")
    m = model([n], [vi("a", [2], TensorProto.UINT8), vi("b", [2], TensorProto.UINT8)], [vi("y", [2], TensorProto.UINT8)], inits)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return save(m, os.path.join(d, "qlinearadd_no_zp.onnx"))


@case("unknown attribute", INVALID, "node 'relu_1'", "unknown attribute 'bogus'")
def _(d):
    m = relu_model()
    m.graph.node[0].attribute.append(helper.make_attribute("bogus", 3))
    return save(m, os.path.join(d, "unknown_attr.onnx"))


@case("attribute value outside the spec (Conv strides 0)", INVALID, "node 'conv_3'", "strides")
def _(d):
    return save(conv_model(strides=[0, 1]), os.path.join(d, "conv_strides.onnx"))


@case("attribute value outside the spec (Conv auto_pad)", INVALID, "node 'conv_3'", "auto_pad")
def _(d):
    return save(conv_model(auto_pad="SIDEWAYS"), os.path.join(d, "conv_autopad.onnx"))


@case("attribute of the wrong type", INVALID, "node 'conv_3'", "strides")
def _(d):
    return save(conv_model(strides=2.5), os.path.join(d, "conv_strides_type.onnx"))


@case("inconsistent shapes (Add)", INVALID, "node 'add_7'", "[2,3]", "[4,5]")
def _(d):
    n = helper.make_node("Add", ["a", "b"], ["y"], name="add_7")
    m = model([n], [vi("a", [2, 3]), vi("b", [4, 5])], [vi("y", None)])
    return save(m, os.path.join(d, "shapes.onnx"))


@case("inconsistent shapes (Conv channels)", INVALID, "node 'conv_3'", "channel")
def _(d):
    w = numpy_helper.from_array(np.ones((4, 5, 3, 3), np.float32), "w")
    n = helper.make_node("Conv", ["x", "w"], ["y"], name="conv_3")
    m = model([n], [vi("x", [1, 3, 8, 8])], [vi("y", None)], [w])
    return save(m, os.path.join(d, "conv_channels.onnx"))


@case("symbolic dimension without override", INVALID, "'x'", "'batch'", "--input-shape", "--dynamic batch=MAX")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", ["batch", 3])], [vi("y", ["batch", 3])])
    return save(m, os.path.join(d, "symbolic.onnx"))


def seq_model():  # x [batch, seq, 4] -> Softmax over the tokens: items apart, the sequence mixed
    n = helper.make_node("Softmax", ["x"], ["y"], name="softmax_seq", axis=1)
    return model([n], [vi("x", ["batch", "seq", 4])], [vi("y", ["batch", "seq", 4])])


@case("--dynamic without MAX", USAGE, "--dynamic 'batch' must look like SYMBOL=MAX")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_spec.onnx")), ["--emit", "c", "--dynamic", "batch"]


@case("--dynamic with MAX 1", USAGE, "MAX must be from 2", "--input-shape")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_one.onnx")), ["--emit", "c", "--dynamic", "batch=1"]


@case("--dynamic with --device cuda", USAGE, "--dynamic is not for --device cuda")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_cuda.onnx")), ["--emit", "c", "--device", "cuda", "--dynamic", "batch=4"]


@case("--dynamic naming a symbol the model lacks", INVALID, "--dynamic tokens=8 names no symbolic dimension",
      "'batch' (x:0)", "'seq' (x:1)")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_unknown.onnx")), ["--emit", "c", "--dynamic", "tokens=8"]


@case("two run-time sizes, the tokens mixed", UNSUPPORTED, "--dynamic seq=16 --dynamic batch=4", "'softmax_seq' (Softmax",
      "normalises along dimension 1 of 'x', which is seq")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_two.onnx")), ["--emit", "c", "--dynamic", "seq=16", "--dynamic", "batch=4"]


@case("two run-time sizes, neither the batch", UNSUPPORTED, "--dynamic a=4 --dynamic b=4", "one is the batch", "--fix-dim")
def _(d):
    n = helper.make_node("Add", ["x", "z"], ["y"], name="add_ab")
    m = model([n], [vi("x", ["a", "b"]), vi("z", ["b", "a"])], [vi("y", ["a", "b"])])
    return save(m, os.path.join(d, "dyn_ab.onnx")), ["--emit", "c", "--dynamic", "a=4", "--dynamic", "b=4"]


@case("two run-time sizes with --split", UNSUPPORTED, "--dynamic batch=4 --dynamic seq=16", "not for --split")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_two_split.onnx")), ["--split", "auto", "--dynamic", "batch=4", "--dynamic", "seq=16"]


@case("--fix-dim naming a symbol the model lacks", INVALID, "--fix-dim tokens=2 names no symbolic dimension", "'batch' (x:0)")
def _(d):
    return save(seq_model(), os.path.join(d, "fix_unknown.onnx")), ["--emit", "c", "--fix-dim", "tokens=2", "--fix-dim", "batch=1"]


@case("--fix-dim with N 0", USAGE, "--fix-dim 'batch=0': N must be from 1")
def _(d):
    return save(seq_model(), os.path.join(d, "fix_zero.onnx")), ["--emit", "c", "--fix-dim", "batch=0"]


@case("--fix-dim and --dynamic on one dimension", USAGE, "--fix-dim batch=2 and --dynamic batch=4 name the same dimension")
def _(d):
    return save(seq_model(), os.path.join(d, "fix_dyn.onnx")), ["--emit", "c", "--fix-dim", "batch=2", "--dynamic", "batch=4"]


@case("--dynamic naming a fixed dimension", INVALID, "--dynamic x:2=8", "dimension 2 is fixed to 4")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_fixed.onnx")), ["--emit", "c", "--dynamic", "x:2=8", "--input-shape", "x=1,5,4"]


@case("--dynamic on tokens a softmax mixes", UNSUPPORTED, "--dynamic seq=16", "'softmax_seq' (Softmax",
      "normalises along dimension 1 of 'x', which is seq")
def _(d):
    n = helper.make_node("Softmax", ["x"], ["y"], name="softmax_seq", axis=1)
    m = model([n], [vi("x", [2, "seq", 4])], [vi("y", [2, "seq", 4])])
    return save(m, os.path.join(d, "dyn_seq.onnx")), ["--emit", "c", "--dynamic", "seq=16"]


@case("--dynamic on tokens after a batch of 2", UNSUPPORTED, "--dynamic seq=16", "input 'x' is [2,16,4]",
      "after dimensions of 1 only")
def _(d):
    n = helper.make_node("Relu", ["x"], ["y"], name="relu_seq")
    m = model([n], [vi("x", [2, "seq", 4])], [vi("y", [2, "seq", 4])])
    return save(m, os.path.join(d, "dyn_seq_apart.onnx")), ["--emit", "c", "--dynamic", "seq=16"]


@case("--dynamic on tokens with --split", UNSUPPORTED, "--dynamic seq=16", "not for --split")
def _(d):
    n = helper.make_node("Relu", ["x"], ["y"], name="relu_seq")
    m = model([n], [vi("x", [1, "seq", 4])], [vi("y", [1, "seq", 4])])
    return save(m, os.path.join(d, "dyn_seq_split.onnx")), ["--split", "auto", "--dynamic", "seq=16"]


@case("--dynamic on tokens up to 2", UNSUPPORTED, "--dynamic seq=2", "from 3 up")
def _(d):
    n = helper.make_node("Relu", ["x"], ["y"], name="relu_seq")
    m = model([n], [vi("x", [2, "seq", 4])], [vi("y", [2, "seq", 4])])
    return save(m, os.path.join(d, "dyn_seq_two.onnx")), ["--emit", "c", "--dynamic", "seq=2"]


@case("--dynamic and --input-shape on one input", INVALID, "--dynamic batch=8", "--input-shape")
def _(d):
    return save(seq_model(), os.path.join(d, "dyn_both.onnx")), ["--emit", "c", "--dynamic", "batch=8", "--input-shape", "x=2,16,4"]


@case("--dynamic batch whose items do not run apart", UNSUPPORTED, "--dynamic batch=8", "'softmax_batch' (Softmax",
      "along the batch axis", "whose items run apart")
def _(d):
    n = helper.make_node("Softmax", ["x"], ["y"], name="softmax_batch", axis=0)
    m = model([n], [vi("x", ["batch", 4])], [vi("y", ["batch", 4])])
    return save(m, os.path.join(d, "dyn_mixed.onnx")), ["--emit", "c", "--dynamic", "batch=8"]


@case("external data outside the model folder", INVALID, "outside the model's folder")
def _(d):
    sub = os.path.join(d, "ext")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(d, "secret.bin"), "wb") as f:
        f.write(b"\0" * 64)
    w = external_tensor()
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "../secret.bin"), ("offset", "0"), ("length", "16")):
        e = w.external_data.add()
        e.key, e.value = k, v
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])], [w])
    return save(m, os.path.join(sub, "ext.onnx"))


@case("external data range outside the file", INVALID, "outside")
def _(d):
    sub = os.path.join(d, "ext2")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "w.bin"), "wb") as f:
        f.write(b"\0" * 8)
    w = external_tensor()
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", "4")):
        e = w.external_data.add()
        e.key, e.value = k, v
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])], [w])
    return save(m, os.path.join(sub, "ext2.onnx"))


@case("initializer data size does not match its dims", INVALID, "initializer 'w'", "raw_data")
def _(d):
    w = numpy_helper.from_array(np.ones((4,), np.float32), "w")
    w.dims[0] = 5
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [5])], [vi("y", [5])], [w])
    return save(m, os.path.join(d, "init_size.onnx"))


@case("dangling input", INVALID, "'nowhere'", "not produced")
def _(d):
    n = helper.make_node("Add", ["x", "nowhere"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])])
    return save(m, os.path.join(d, "dangling.onnx"))


@case("cycle", INVALID, "cycle")
def _(d):
    n1 = helper.make_node("Add", ["x", "b"], ["a"], name="add_a")
    n2 = helper.make_node("Relu", ["a"], ["b"], name="relu_b")
    m = model([n1, n2], [vi("x", [4])], [vi("a", [4])])
    return save(m, os.path.join(d, "cycle.onnx"))


@case("opset newer than onnxc knows", UNSUPPORTED, "opset 29", "1 to 28")
def _(d):
    return save(model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", [2])], [vi("y", [2])], opset=29),
                os.path.join(d, "opset.onnx"))


@case("attribute value no opset defines (Resize mode)", INVALID, "node 'resize_1'", "Resize, opset 19", "'lanczos'")
def _(d):
    n = helper.make_node("Resize", ["x", "", "s"], ["y"], name="resize_1", mode="lanczos")
    s = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "s")
    return save(model([n], [vi("x", [1, 1, 2, 2])], [vi("y", None)], [s], opset=19), os.path.join(d, "resize_mode.onnx"))


@case("attribute value onnxc does not implement (LayerNormalization stash_type 0)", UNSUPPORTED, "node 'ln_1'",
      "LayerNormalization, opset 17", "stash_type 0")
def _(d):
    s = numpy_helper.from_array(np.ones(4, np.float32), "s")
    n = helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln_1", stash_type=0)
    return save(model([n], [vi("x", [2, 4])], [vi("y", None)], [s], opset=17), os.path.join(d, "ln_stash.onnx"))


@case("attribute value no opset defines (NegativeLogLikelihoodLoss reduction 'avg')", INVALID, "node 'nll_1'",
      "NegativeLogLikelihoodLoss, opset 13", "'avg'")
def _(d):
    n = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], name="nll_1", reduction="avg")
    return save(model([n], [vi("x", [3, 4]), vi("t", [3], TensorProto.INT64)], [vi("y", None)]), os.path.join(d, "nll_reduction.onnx"))


@case("inconsistent shapes (SoftmaxCrossEntropyLoss labels)", INVALID, "node 'sce_1'", "SoftmaxCrossEntropyLoss", "[3,2]", "[3,5]")
def _(d):
    n = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"], name="sce_1", reduction="none")
    return save(model([n], [vi("x", [3, 4, 5]), vi("t", [3, 2], TensorProto.INT32)], [vi("y", None)]), os.path.join(d, "sce_labels.onnx"))
@case("attribute value onnxc does not implement (HannWindow output_datatype float16)", UNSUPPORTED, "node 'hann_1'",
      "HannWindow, opset 17", "output_datatype 10", "float16")
def _(d):
    size = numpy_helper.from_array(np.array(8, np.int64), "size")
    n = helper.make_node("HannWindow", ["size"], ["y"], name="hann_1", output_datatype=TensorProto.FLOAT16)
    return save(model([n], [], [vi("y", None, TensorProto.FLOAT16)], [size], opset=17), os.path.join(d, "hann_f16.onnx"))


@case("attribute value no opset defines (DFT onesided 2)", INVALID, "node 'dft_1'", "DFT, opset 17", "'onesided'", "0 or 1")
def _(d):
    n = helper.make_node("DFT", ["x"], ["y"], name="dft_1", onesided=2)
    return save(model([n], [vi("x", [1, 8, 1])], [vi("y", None)], opset=17), os.path.join(d, "dft_onesided.onnx"))


@case("a window's size given at run time", UNSUPPORTED, "node 'hann_1'", "HannWindow, opset 17", "size", "compile-time constant")
def _(d):
    n = helper.make_node("HannWindow", ["size"], ["y"], name="hann_1")
    return save(model([n], [vi("size", [], TensorProto.INT64)], [vi("y", None)], opset=17), os.path.join(d, "hann_runtime.onnx"))


@case("STFT frame_length that differs from the window's length", UNSUPPORTED, "node 'stft_1'", "STFT, opset 17",
      "frame_length 12", "window's length 16")
def _(d):
    step = numpy_helper.from_array(np.array(4, np.int64), "step")
    fl = numpy_helper.from_array(np.array(12, np.int64), "fl")
    n = helper.make_node("STFT", ["x", "step", "w", "fl"], ["y"], name="stft_1")
    return save(model([n], [vi("x", [1, 64, 1]), vi("w", [16])], [vi("y", None)], [step, fl], opset=17), os.path.join(d, "stft_fl.onnx"))


@case("MelWeightMatrix upper edge past the spectrum", INVALID, "node 'mel_1'", "MelWeightMatrix, opset 17", "upper_edge_hertz 20000",
      "outside the 9 bins")
def _(d):
    vals = {"m": np.array(4, np.int64), "n": np.array(16, np.int64), "r": np.array(8000, np.int64),
            "lo": np.array(0, np.float32), "hi": np.array(20000, np.float32)}
    n = helper.make_node("MelWeightMatrix", list(vals), ["y"], name="mel_1")
    return save(model([n], [], [vi("y", None)], [numpy_helper.from_array(v, k) for k, v in vals.items()], opset=17),
                os.path.join(d, "mel_edges.onnx"))


def huge_dims_initializer(name, dims, dtype=TensorProto.FLOAT):
    """An initializer with the given dims and no data at all (it must be refused before any allocation)."""
    t = TensorProto()
    t.name, t.data_type = name, dtype
    t.dims.extend(dims)
    return t


@case("overflow: graph input dims [2^31, 2^31, 2^31]", INVALID, "graph input 'x'", "too many elements")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", [2**31] * 3)], [vi("y", None)])
    return save(m, os.path.join(d, "overflow_input.onnx"))


@case("overflow: initializer dims [2^31, 2^31, 2^31]", INVALID, "initializer 'w'", "too many elements")
def _(d):
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [1])], [vi("y", None)], [huge_dims_initializer("w", [2**31] * 3)])
    return save(m, os.path.join(d, "overflow_init.onnx"))


@case("overflow: empty graph input [0, 2^40, 2^40] (its strides pass 2^63)", INVALID, "graph input 'x'",
      "nonzero dimensions multiply past 2^62")
def _(d):
    n = helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul_1")
    m = model([n], [vi("x", [0, 2**40, 2**40]), vi("w", [2**40, 1])], [vi("y", None)])
    return save(m, os.path.join(d, "overflow_empty_input.onnx"))


@case("overflow: empty initializer [2^32, 0, 2^32]", INVALID, "initializer 'w'", "nonzero dimensions multiply past 2^62")
def _(d):
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [1])], [vi("y", None)], [huge_dims_initializer("w", [2**32, 0, 2**32])])
    return save(m, os.path.join(d, "overflow_empty_init.onnx"))


@case("overflow: initializer of 2^61 f64 elements (2^64 bytes)", INVALID, "initializer 'w'", "2^63 bytes")
def _(d):
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [1], TensorProto.DOUBLE)], [vi("y", None, TensorProto.DOUBLE)],
              [huge_dims_initializer("w", [2**40, 2**21], TensorProto.DOUBLE)])
    return save(m, os.path.join(d, "overflow_bytes.onnx"))


@case("huge initializer without data (4 TiB declared, nothing allocated)", INVALID, "initializer 'w'", "raw_data", "4398046511104")
def _(d):
    w = huge_dims_initializer("w", [2**20, 2**20])
    w.raw_data = b"\0" * 16
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [1])], [vi("y", None)], [w])
    return save(m, os.path.join(d, "huge_init.onnx"))


@case("graph input over the default --max-memory (4 TiB)", UNSUPPORTED, "graph input 'x'", "--max-memory")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", [2**20, 2**20])], [vi("y", None)])
    return save(m, os.path.join(d, "input_cap.onnx"))


@case("--max-memory 1K: weights over the cap", UNSUPPORTED, "initializer 'w'", "needs 4 KiB", "cap of 1 KiB", "--max-memory")
def _(d):
    w = numpy_helper.from_array(np.ones((1024,), np.float32), "w")
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [1024])], [vi("y", [1024])], [w])
    return save(m, os.path.join(d, "weights_cap.onnx")), ["--max-memory", "1K"]


@case("--max-memory 2K: the sum of the weights over the cap", UNSUPPORTED, "initializer 'w2'", "constants held", "--max-memory")
def _(d):
    w1 = numpy_helper.from_array(np.ones((300,), np.float32), "w1")
    w2 = numpy_helper.from_array(np.full((300,), 2, np.float32), "w2")
    n1 = helper.make_node("Add", ["x", "w1"], ["a"], name="add_1")
    n2 = helper.make_node("Add", ["a", "w2"], ["y"], name="add_2")
    m = model([n1, n2], [vi("x", [300])], [vi("y", [300])], [w1, w2])
    return save(m, os.path.join(d, "weights_sum_cap.onnx")), ["--max-memory", "2K"]


@case("--max-memory 4K: arena over the cap", UNSUPPORTED, "intermediate tensor", "'p'", "--max-memory")
def _(d):
    pads = numpy_helper.from_array(np.array([0, 0, 32, 32, 0, 0, 32, 32], np.int64), "pads")
    n1 = helper.make_node("Pad", ["x", "pads"], ["p"], name="pad_1")
    n2 = helper.make_node("ReduceMax", ["p"], ["y"], name="max_1", axes=[2, 3], keepdims=1)
    m = model([n1, n2], [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 1, 1])], [pads])
    return save(m, os.path.join(d, "arena_cap.onnx")), ["--max-memory", "4K"]


def split_chain_model():
    """x -> conv_a -> relu_a -> conv_b -> y: cuts after conv_a and relu_a."""
    w = numpy_helper.from_array(np.ones((3, 3, 1, 1), np.float32), "w")
    ns = [helper.make_node("Conv", ["x", "w"], ["a"], name="conv_a"), helper.make_node("Relu", ["a"], ["r"], name="relu_a"),
          helper.make_node("Conv", ["r", "w"], ["y"], name="conv_b")]
    return model(ns, [vi("x", [1, 3, 8, 8])], [vi("y", None)], [w])


@case("--target aarch64-sve:2048 with --cflags fixing SVE at 512 bits", USAGE, "--target aarch64-sve:2048",
      "fixes SVE's vector length at 512 bits", "-msve-vector-bits=2048")
def _(d):
    return save(conv_model(), os.path.join(d, "sve_bits.onnx")), [
        "--target", "aarch64-sve:2048", "--cc", "aarch64-linux-gnu-gcc", "--cflags", "-O2 -march=armv8.2-a+sve -msve-vector-bits=512"]


@case("--target aarch64-sve:512 with --cflags without SVE", USAGE, "--target aarch64-sve:512", "does not enable SVE")
def _(d):
    return save(conv_model(), os.path.join(d, "sve_off.onnx")), [
        "--target", "aarch64-sve:512", "--cc", "aarch64-linux-gnu-gcc", "--cflags", "-O2"]


@case("--target x86-64-avx2 built by an AArch64 compiler", USAGE, "--target x86-64-avx2 is for x86-64",
      "compiles for aarch64")
def _(d):
    return save(conv_model(), os.path.join(d, "x86_on_arm.onnx")), [
        "--target", "x86-64-avx2", "--cc", "aarch64-linux-gnu-gcc", "--cflags", "-O2"]


@case("--target aarch64-sve:2048 with the host's C compiler", USAGE, "--target aarch64-sve:2048 is for aarch64",
      "compiles for x86-64", "aarch64-linux-gnu-gcc")
def _(d):
    return save(conv_model(), os.path.join(d, "sve_host_cc.onnx")), ["--target", "aarch64-sve:2048", "--cflags", "-O1"]


@case("--target aarch64-sve:2048's flags given to the host's C compiler", 5, "refuses the flags",
      "pass --cc with a compiler for it", "aarch64-linux-gnu-gcc")
def _(d):
    return save(conv_model(), os.path.join(d, "sve_host_cc_flags.onnx")), [
        "--target", "aarch64-sve:2048", "--cflags", "-O2 -march=armv8.2-a+sve -msve-vector-bits=2048"]


@case("--gpu-libs with an unknown library", USAGE, "unknown --gpu-libs name 'mkl'", "cudnn, cublas")
def _(d):
    return save(conv_model(), os.path.join(d, "gpu_libs_mkl.onnx")), ["--device", "cuda", "--emit", "c", "--gpu-libs", "cudnn,mkl"]


@case("--gpu-libs without --device cuda", USAGE, "--gpu-libs is for --device cuda")
def _(d):
    return save(conv_model(), os.path.join(d, "gpu_libs_cpu.onnx")), ["--emit", "c", "--gpu-libs", "cudnn"]


@case("--gpu-precision without --device cuda", USAGE, "--gpu-precision is for --device cuda")
def _(d):
    return save(conv_model(), os.path.join(d, "gpu_precision_cpu.onnx")), ["--emit", "c", "--gpu-precision", "tf32"]


@case("--task-form with --omp-region op", USAGE, "--task-form is for the one parallel region", "--omp-region op")
def _(d):
    return save(conv_model(), os.path.join(d, "task_form_op.onnx")), ["--emit", "c", "--task-form", "omp-tasks", "--omp-region", "op"]


@case("--task-form with an unknown form", USAGE, "--task-form", "dynamic")
def _(d):
    return save(conv_model(), os.path.join(d, "task_form_bad.onnx")), ["--emit", "c", "--task-form", "dynamic"]


@case("--gpu-precision with an unknown precision", USAGE, "--gpu-precision", "bf16")
def _(d):
    return save(conv_model(), os.path.join(d, "gpu_precision_bf16.onnx")), ["--device", "cuda", "--emit", "c", "--gpu-precision", "bf16"]


@case("--gpu-precision fp16 with --split", USAGE, "--gpu-precision fp16 is not for --split", "tf32")
def _(d):
    return save(split_chain_model(), os.path.join(d, "split_fp16.onnx")), ["--split", "after=relu_a", "--device", "cuda",
                                                                             "--emit", "c", "--gpu-precision", "fp16"]


@case("--split after a node the model does not have", USAGE, "--split", "after=conv_z", "no node 'conv_z'")
def _(d):
    return save(split_chain_model(), os.path.join(d, "split_node.onnx")), ["--split", "after=conv_z"]


@case("--split after the last node", UNSUPPORTED, "--split", "node 'conv_b' (Conv", "cannot end the head")
def _(d):
    return save(split_chain_model(), os.path.join(d, "split_last.onnx")), ["--split", "after=conv_b"]


@case("--split that is no spec", USAGE, "--split", "'half'", "auto, after=NODE or gpu-share=F")
def _(d):
    return save(split_chain_model(), os.path.join(d, "split_spec.onnx")), ["--split", "half"]


@case("--split of a model with no cut", UNSUPPORTED, "--split", "no place to cut")
def _(d):
    return save(relu_model(), os.path.join(d, "split_none.onnx")), ["--split", "auto"]


@case("--cpu-profile that is not a profile", USAGE, "profile", "line 1", "seconds TAB ops")
def _(d):
    prof = os.path.join(d, "not_a_profile.txt")
    with open(prof, "w") as f:
        f.write("conv_a took 3 ms\n")
    return save(split_chain_model(), os.path.join(d, "split_prof.onnx")), ["--split", "auto", "--cpu-profile", prof]


@case("--parallel batch: a Softmax along the batch axis", UNSUPPORTED, "--parallel batch", "node 'softmax_1' (Softmax",
      "normalises along the batch axis")
def _(d):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu_1"), helper.make_node("Softmax", ["r"], ["y"], name="softmax_1", axis=0)]
    m = model(nodes, [vi("x", [4, 3])], [vi("y", [4, 3])])
    return save(m, os.path.join(d, "batch_softmax0.onnx")), ["--parallel", "batch", "--emit", "c"]


@case("--parallel batch: a reduction over the batch", UNSUPPORTED, "--parallel batch", "node 'sum_1' (ReduceSum",
      "no one axis holds the batch")
def _(d):
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="sum_1", axes=[0], keepdims=1),
             helper.make_node("Sub", ["x", "s"], ["y"], name="sub_1")]
    m = model(nodes, [vi("x", [4, 3])], [vi("y", [4, 3])], opset=11)
    return save(m, os.path.join(d, "batch_reduce0.onnx")), ["--parallel", "batch", "--emit", "c"]


@case("--parallel batch: a model at batch 1", UNSUPPORTED, "--parallel batch", "first (batch) dimension of 2 or more")
def _(d):
    return save(conv_model(), os.path.join(d, "batch_one.onnx")), ["--parallel", "batch", "--emit", "c"]


@case("--emit ray with --split", USAGE, "--emit ray serves one model: not with --split")
def _(d):
    return save(split_chain_model(), os.path.join(d, "split_ray.onnx")), ["--split", "auto", "--emit", "ray"]


@case("--emit ray with --device cuda", USAGE, "--device cuda does not support --emit ray")
def _(d):
    return save(conv_model(), os.path.join(d, "cuda_ray.onnx")), ["--device", "cuda", "--emit", "ray"]


@case("--parallel batch with --split", USAGE, "--parallel batch is not for --split", "max_batch")
def _(d):
    return save(split_chain_model(), os.path.join(d, "split_batch.onnx")), ["--split", "auto", "--parallel", "batch", "--emit", "c"]


@case("--max-memory that is not a size", USAGE, "--max-memory '12X'", "not a size")
def _(d):
    return save(relu_model(), os.path.join(d, "bad_size.onnx")), ["--max-memory", "12X"]


@case("raw_data and float_data both set", INVALID, "initializer 'w'", "both raw_data", "float_data")
def _(d):
    w = numpy_helper.from_array(np.ones((4,), np.float32), "w")
    w.float_data.extend([1, 2, 3, 4])
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])], [w])
    return save(m, os.path.join(d, "raw_and_typed.onnx"))


@case("typed data in the wrong field (f32 values in int64_data)", INVALID, "initializer 'w'", "int64_data", "float_data")
def _(d):
    w = huge_dims_initializer("w", [4])
    w.int64_data.extend([1, 2, 3, 4])
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])], [w])
    return save(m, os.path.join(d, "wrong_field.onnx"))


@case("typed data count does not match dims", INVALID, "initializer 'w'", "needs 4 elements", "float_data holds 3")
def _(d):
    w = huge_dims_initializer("w", [4])
    w.float_data.extend([1, 2, 3])
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])], [w])
    return save(m, os.path.join(d, "typed_count.onnx"))


@case("Constant node with raw_data and float_data", INVALID, "node 'const_1'", "attribute 'value'", "both raw_data")
def _(d):
    t = numpy_helper.from_array(np.ones((2,), np.float32), "c")
    t.float_data.extend([1, 2])
    n1 = helper.make_node("Constant", [], ["c"], name="const_1", value=t)
    n2 = helper.make_node("Add", ["x", "c"], ["y"], name="add_1")
    m = model([n1, n2], [vi("x", [2])], [vi("y", [2])])
    return save(m, os.path.join(d, "const_raw_typed.onnx"))


@case("duplicate name: two nodes produce one value", INVALID, "'a'", "more than one node")
def _(d):
    n1 = helper.make_node("Relu", ["x"], ["a"], name="relu_1")
    n2 = helper.make_node("Neg", ["x"], ["a"], name="neg_1")
    n3 = helper.make_node("Relu", ["a"], ["y"], name="relu_2")
    m = model([n1, n2, n3], [vi("x", [4])], [vi("y", [4])])
    return save(m, os.path.join(d, "dup_producer.onnx"))


@case("duplicate name: a node output named like an initializer", INVALID, "'w'", "node 'relu_1'", "initializer")
def _(d):
    w = numpy_helper.from_array(np.ones((4,), np.float32), "w")
    n1 = helper.make_node("Relu", ["x"], ["w"], name="relu_1")
    n2 = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n1, n2], [vi("x", [4])], [vi("y", [4])], [w])
    return save(m, os.path.join(d, "dup_init_output.onnx"))


@case("duplicate name: a node output named like a graph input", INVALID, "'x'", "node 'relu_1'", "graph input")
def _(d):
    n1 = helper.make_node("Relu", ["x"], ["x"], name="relu_1")
    n2 = helper.make_node("Relu", ["x"], ["y"], name="relu_2")
    m = model([n1, n2], [vi("x", [4])], [vi("y", [4])])
    return save(m, os.path.join(d, "dup_input_output.onnx"))


@case("duplicate name: a graph input listed twice", INVALID, "graph input 'x'", "listed twice")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", [4]), vi("x", [4])], [vi("y", [4])])
    return save(m, os.path.join(d, "dup_graph_input.onnx"))


@case("duplicate name: an initializer defined twice", INVALID, "initializer 'w'", "defined twice")
def _(d):
    w = numpy_helper.from_array(np.ones((4,), np.float32), "w")
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])], [w, w])
    return save(m, os.path.join(d, "dup_init.onnx"))


@case("rank: graph input with 40 dimensions", UNSUPPORTED, "graph input 'x'", "40 dimensions", "up to 32")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", [1] * 40)], [vi("y", None)])
    return save(m, os.path.join(d, "rank_input.onnx"))


@case("rank: Reshape to 33 dimensions", UNSUPPORTED, "node 'reshape_1'", "33 dimensions", "up to 32")
def _(d):
    s = numpy_helper.from_array(np.ones(33, np.int64), "s")
    n = helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_1")
    m = model([n], [vi("x", [1])], [vi("y", None)], [s])
    return save(m, os.path.join(d, "rank_reshape.onnx"))


@case("node without outputs", INVALID, "node 'shape_1'", "no first output")
def _(d):
    nodes = [helper.make_node("Shape", ["x"], [], name="shape_1"), helper.make_node("Relu", ["x"], ["y"], name="relu_1")]
    m = model(nodes, [vi("x", [4])], [vi("y", [4])])
    return save(m, os.path.join(d, "no_outputs.onnx"))


@case("graph output never produced", INVALID, "graph output 'z'", "not produced")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [vi("x", [4])], [vi("y", [4]), vi("z", [4])])
    return save(m, os.path.join(d, "output_missing.onnx"))


def external_model(d, sub, kv, file_bytes=16):
    """A model whose initializer w (f32[4], 16 bytes) is external data described by kv."""
    sub = os.path.join(d, sub)
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "w.bin"), "wb") as f:
        f.write(b"\0" * file_bytes)
    w = external_tensor()
    w.data_location = TensorProto.EXTERNAL
    for k, v in kv:
        e = w.external_data.add()
        e.key, e.value = k, v
    n = helper.make_node("Add", ["x", "w"], ["y"], name="add_1")
    m = model([n], [vi("x", [4])], [vi("y", [4])], [w])
    return save(m, os.path.join(sub, "m.onnx"))


@case("external data: negative offset", INVALID, "initializer 'w'", "offset -8", "negative")
def _(d):
    return external_model(d, "ext_neg", [("location", "w.bin"), ("offset", "-8")])


@case("external data: offset that is not a number", INVALID, "initializer 'w'", "offset '12abc'", "not a number")
def _(d):
    return external_model(d, "ext_nan", [("location", "w.bin"), ("offset", "12abc")])


@case("external data: offset past the end of the file", INVALID, "initializer 'w'", "outside 'w.bin'")
def _(d):
    return external_model(d, "ext_past", [("location", "w.bin"), ("offset", str(2**62))])


@case("external data: length does not match the tensor", INVALID, "initializer 'w'", "length 12", "16 bytes")
def _(d):
    return external_model(d, "ext_len", [("location", "w.bin"), ("length", "12")])


@case("external data: huge tensor (4 TiB) in a small file, nothing allocated", INVALID, "initializer 'w'", "outside 'w.bin'")
def _(d):
    p = external_model(d, "ext_huge", [("location", "w.bin")])
    m = onnx.load(p, load_external_data=False)
    del m.graph.initializer[0].dims[:]
    m.graph.initializer[0].dims.extend([2**20, 2**20])
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    m.graph.output[0].type.tensor_type.ClearField("shape")
    return save(m, p)


@case("user C flags that break a node's code", 5, "emitted C does not compile with the given --cc/--cflags", "node 'conv_3' (Conv)", "conv_3.onnx")
def _(d):
    # The Conv's function name (n0_conv_3) defined away: the compiler's first error is on
    # that function's line, so compile-model names the node.
    return save(conv_model(pads=[1, 1, 1, 1]), os.path.join(d, "conv_3.onnx")), ("--cflags", "-O0 -Dn0_conv_3=")


@case("bfloat16 graph input", UNSUPPORTED, "graph input 'x'", "bfloat16", "not support")
def _(d):
    n = helper.make_node("Relu", ["x"], ["y"], name="relu_0")
    return save(model([n], [vi("x", [1, 3], TensorProto.BFLOAT16)], [vi("y", [1, 3], TensorProto.BFLOAT16)]), os.path.join(d, "bf16_input.onnx"))


@case("Cast to bfloat16", UNSUPPORTED, "cast_0", "Cast", "bfloat16")
def _(d):
    n = helper.make_node("Cast", ["x"], ["y"], name="cast_0", to=TensorProto.BFLOAT16)
    return save(model([n], [vi("x", [1, 3])], [vi("y", [1, 3], TensorProto.BFLOAT16)]), os.path.join(d, "bf16_cast.onnx"))


@case("GridSample-16 with an opset-20 mode name", INVALID, "node 'gs_1'", "GridSample, opset 16", "'linear'", "opset 20")
def _(d):
    n = helper.make_node("GridSample", ["x", "g"], ["y"], name="gs_1", mode="linear")
    m = model([n], [vi("x", [1, 1, 4, 4]), vi("g", [1, 2, 2, 2])], [vi("y", None)], opset=16)
    return save(m, os.path.join(d, "gs_mode.onnx"))


@case("GridSample-20 3-D sampling (5-D X)", UNSUPPORTED, "node 'gs_1'", "GridSample, opset 20", "3-D sampling", "only 2-D")
def _(d):
    n = helper.make_node("GridSample", ["x", "g"], ["y"], name="gs_1")
    m = model([n], [vi("x", [1, 1, 2, 4, 4]), vi("g", [1, 2, 2, 2, 3])], [vi("y", None)], opset=20)
    return save(m, os.path.join(d, "gs_3d.onnx"))


@case("GridSample on an int64 X", UNSUPPORTED, "node 'gs_1'", "dtype i64", "only float32 and float64")
def _(d):
    n = helper.make_node("GridSample", ["x", "g"], ["y"], name="gs_1")
    m = model([n], [vi("x", [1, 1, 4, 4], TensorProto.INT64), vi("g", [1, 2, 2, 2])], [vi("y", None, TensorProto.INT64)], opset=16)
    return save(m, os.path.join(d, "gs_int.onnx"))


@case("RoiAlign mode 'min'", INVALID, "node 'roi_1'", "RoiAlign, opset 16", "'min'")
def _(d):
    n = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], name="roi_1", mode="min")
    m = model([n], [vi("x", [1, 1, 4, 4]), vi("r", [2, 4]), vi("b", [2], TensorProto.INT64)], [vi("y", None)], opset=16)
    return save(m, os.path.join(d, "roi_mode.onnx"))


@case("RoiAlign constant batch index out of range", INVALID, "node 'roi_1'", "batch_indices[1] = 3", "[0, 2)")
def _(d):
    b = numpy_helper.from_array(np.array([0, 3], np.int64), "b")
    n = helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], name="roi_1")
    m = model([n], [vi("x", [2, 1, 4, 4]), vi("r", [2, 4])], [vi("y", None)], [b], opset=16)
    return save(m, os.path.join(d, "roi_index.onnx"))


@case("MaxUnpool output_shape not a constant", UNSUPPORTED, "node 'unpool_1'", "output_shape", "compile-time constant")
def _(d):
    n = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], name="unpool_1", kernel_shape=[2, 2], strides=[2, 2])
    m = model([n], [vi("x", [1, 1, 2, 2]), vi("i", [1, 1, 2, 2], TensorProto.INT64), vi("s", [4], TensorProto.INT64)], [vi("y", None)],
              opset=11)
    return save(m, os.path.join(d, "unpool_shape.onnx"))


@case("MaxUnpool output_shape smaller than the unpooled shape", UNSUPPORTED, "node 'unpool_1'", "[1,1,3,4]", "[1,1,4,4]")
def _(d):
    s = numpy_helper.from_array(np.array([1, 1, 3, 4], np.int64), "s")
    n = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], name="unpool_1", kernel_shape=[2, 2], strides=[2, 2])
    m = model([n], [vi("x", [1, 1, 2, 2]), vi("i", [1, 1, 2, 2], TensorProto.INT64)], [vi("y", None)], [s], opset=11)
    return save(m, os.path.join(d, "unpool_small.onnx"))


@case("Det of 200 x 200 matrices", UNSUPPORTED, "node 'det_1'", "200 x 200", "at most 128 x 128")
def _(d):
    n = helper.make_node("Det", ["x"], ["y"], name="det_1")
    m = model([n], [vi("x", [2, 200, 200])], [vi("y", None)], opset=11)
    return save(m, os.path.join(d, "det_big.onnx"))
@case("QuantizeLinear to float8", UNSUPPORTED, "quantize_0", "QuantizeLinear", "float8e4m3fn")
def _(d):
    s = numpy_helper.from_array(np.array(0.5, np.float32), "s")
    n = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="quantize_0", output_dtype=17)
    return save(model([n], [vi("x", [2, 3])], [vi("y", [2, 3], 17)], [s], opset=21), os.path.join(d, "quantize_f8.onnx"))


@case("DequantizeLinear per-axis scale of the wrong length", INVALID, "dequantize_0", "x_scale", "[5]", "axis 1")
def _(d):
    s = numpy_helper.from_array(np.ones(5, np.float32), "s")
    n = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dequantize_0")
    return save(model([n], [vi("x", [2, 3], TensorProto.UINT8)], [vi("y", [2, 3])], [s]), os.path.join(d, "dequantize_axis.onnx"))


@case("QLinearConv w_scale neither one value nor one per output channel", INVALID, "qconv_0", "w_scale", "[3]", "[4]")
def _(d):
    c = lambda name, a: numpy_helper.from_array(np.asarray(a), name)
    inits = [c("xs", np.array(0.1, np.float32)), c("xz", np.array(0, np.uint8)), c("w", np.ones((4, 2, 3, 3), np.uint8)),
             c("ws", np.ones(3, np.float32)), c("wz", np.array(0, np.uint8)), c("ys", np.array(0.2, np.float32)),
             c("yz", np.array(0, np.uint8))]
    n = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], name="qconv_0")
    return save(model([n], [vi("x", [1, 2, 5, 5], TensorProto.UINT8)], [vi("y", None, TensorProto.UINT8)], inits),
                os.path.join(d, "qconv_scale.onnx"))
def lstm_model(name, op="LSTM", outputs=("y",), inits=(), **attrs):
    """One recurrent node: X [3, 2, 4] (seq, batch, input), hidden 5, W and R as graph inputs."""
    g = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    names = ["x", "w", "r"] + [t.name if t.name else "" for t in inits]
    n = helper.make_node(op, names, list(outputs), name=name, hidden_size=5, **attrs)
    ins = [vi("x", [3, 2, 4]), vi("w", [1, g * 5, 4]), vi("r", [1, g * 5, 5])]
    return model([n], ins, [vi(o, None) for o in outputs if o], [t for t in inits if t.name], opset=14)


@case("LSTM activation ONNX does not define", INVALID, "node 'lstm_1'", "LSTM", "activation 'Swish'")
def _(d):
    m = lstm_model("lstm_1", activations=["Sigmoid", "Swish", "Tanh"])
    return save(m, os.path.join(d, "lstm_swish.onnx"))


@case("GRU direction that is not forward, reverse or bidirectional", INVALID, "node 'gru_1'", "GRU", "direction 'sideways'")
def _(d):
    return save(lstm_model("gru_1", "GRU", direction="sideways"), os.path.join(d, "gru_direction.onnx"))


@case("RNN layout 2", INVALID, "node 'rnn_1'", "RNN", "layout 2")
def _(d):
    return save(lstm_model("rnn_1", "RNN", layout=2), os.path.join(d, "rnn_layout.onnx"))


@case("LSTM constant sequence_lens longer than the sequence", INVALID, "node 'lstm_2'", "sequence_lens[1] = 4", "[0, 3]")
def _(d):
    b = numpy_helper.from_array(np.zeros((1, 40), np.float32), "b")
    lens = numpy_helper.from_array(np.array([3, 4], np.int32), "lens")
    return save(lstm_model("lstm_2", inits=[b, lens]), os.path.join(d, "lstm_lens.onnx"))


@case("LSTM with no outputs at all", INVALID, "node 'lstm_3'", "no first output")
def _(d):
    return save(lstm_model("lstm_3", outputs=()), os.path.join(d, "lstm_no_outputs.onnx"))


@case("ReverseSequence with batch_axis equal to time_axis", INVALID, "node 'rev_1'", "ReverseSequence", "both 0")
def _(d):
    n = helper.make_node("ReverseSequence", ["x", "l"], ["y"], name="rev_1", batch_axis=0, time_axis=0)
    m = model([n], [vi("x", [3, 3]), vi("l", [3], TensorProto.INT64)], [vi("y", [3, 3])], opset=10)
    return save(m, os.path.join(d, "revseq_axes.onnx"))


def run_compile(args, compiler, d, src, cflags, extra=(), timeout=300):
    out = os.path.join(d, "out_" + re.sub(r"\W", "_", os.path.basename(src)))
    cmd = [compiler, src, "-o", out, "--name", "m", "--quiet"] + list(extra)
    if cflags and "--cflags" not in extra:
        cmd += ["--cflags", cflags]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout), out


def check(name, p, code, needles):
    msg = (p.stdout or "") + (p.stderr or "")
    problems = []
    if p.returncode < 0:
        problems.append(f"killed by signal {-p.returncode}")
    elif p.returncode == 0:
        problems.append("exited 0")
    elif code is not None and p.returncode != code:
        problems.append(f"exit code {p.returncode}, expected {code}")
    if "Sanitizer" in msg or "runtime error:" in msg or "internal compiler error" in msg:
        problems.append("crash report in output")
    for n in needles:
        if n not in msg:
            problems.append(f"message lacks {n!r}")
    if not msg.strip():
        problems.append("no message")
    first = msg.strip().splitlines()[0] if msg.strip() else ""
    status = "ok  " if not problems else "FAIL"
    print(f"{status} {name}: exit {p.returncode}: {first}")
    for pr in problems:
        print(f"     {pr}")
    if problems and msg.strip():
        print("     output: " + msg.strip()[:2000].replace("\n", "\n             "))
    return not problems


def binary_cases(compiler, d, cflags):
    """The generated binary given bad input files."""
    results = []
    src = save(relu_model(), os.path.join(d, "good.onnx"))
    p, out = run_compile(None, compiler, d, src, cflags)
    if p.returncode != 0:
        print(f"FAIL could not build the good model: {p.stderr}")
        return [False]
    exe = os.path.join(out, "m")
    bad_raw = os.path.join(d, "short.bin")
    with open(bad_raw, "wb") as f:
        f.write(b"\0" * 10)
    bad_npy = os.path.join(d, "wrong_dtype.npy")
    np.save(bad_npy, np.zeros((2, 3), np.float64))
    int64_npy = os.path.join(d, "int64_for_float.npy")
    np.save(int64_npy, np.zeros((2, 3), np.int64))
    f16_npy = os.path.join(d, "float16_for_float.npy")
    np.save(f16_npy, np.zeros((2, 3), np.float16))
    wrong_shape = os.path.join(d, "wrong_shape.npy")
    np.save(wrong_shape, np.zeros((5, 7), np.float32))
    garbage = os.path.join(d, "garbage.npy")
    with open(garbage, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'")
    runs = [
        ("binary: raw input file of the wrong size", ["--input", f"x={bad_raw}"], ["10 bytes", "24"]),
        ("binary: .npy of the wrong dtype", ["--input", f"x={bad_npy}"], ["float32"]),
        ("binary: int64 .npy where float32 is expected", ["--input", f"x={int64_npy}"], ["int64_for_float.npy", "int64", "float32"]),
        ("binary: float16 .npy where float32 is expected", ["--input", f"x={f16_npy}"], ["float16_for_float.npy", "float16", "float32"]),
        ("binary: .npy of the wrong shape", ["--input", f"x={wrong_shape}"], ["wrong_shape.npy"]),
        ("binary: truncated .npy header", ["--input", f"x={garbage}"], ["garbage.npy"]),
        ("binary: missing input file", ["--input", f"x={d}/nope.npy"], ["nope.npy"]),
        ("binary: unknown input name", ["--input", f"zz={bad_raw}"], ["zz"]),
        ("binary: missing weights file", ["--weights", f"{d}/none.weights"], ["none.weights"]),
        ("binary: truncated weights file", ["--weights", bad_raw], ["short.bin"]),
    ]
    for name, args, needles in runs:
        p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=60)
        results.append(check(name, p, None, needles))
    return results


def chain_model(n, add_relu):
    """n nodes: Relu chain, or Add(+0.5, its own initializer)/Relu alternating."""
    nodes, inits, prev = [], [], "x"
    for k in range(n):
        out = "y" if k == n - 1 else f"v{k}"
        if add_relu and k % 2 == 0:
            inits.append(numpy_helper.from_array(np.array([0.5], np.float32), f"c{k}"))
            nodes.append(helper.make_node("Add", [prev, f"c{k}"], [out], name=f"add_{k}"))
        else:
            nodes.append(helper.make_node("Relu", [prev], [out], name=f"relu_{k}"))
        prev = out
    return model(nodes, [vi("x", [1, 4, 2, 2])], [vi("y", [1, 4, 2, 2])], inits)


# An oversized intermediate behind the ops that once let it through to a pass that works in
# proportion to it (tests/fuzz/regressions/pipeline-conv-pad-2147483647-hang.onnx: a Conv with
# pads of 2^31 - 1 followed by a DenseNet block had the schedule pass emit C for a 10^9-row
# tensor): the Conv's output, f32[2,4,2^31+6,10] (640 GiB; 320 GiB an item for --parallel
# batch), feeds a Concat, a
# BatchNormalization, a Split or two branches of a fork-join region, and the graph ends in
# a small pooled output. At every --parallel mode compile-model must refuse it with exit 3
# naming the node and the tensor, before it writes any C, and at once (a hang is a failure).
def oversized_model(kind):
    big = 2**31 - 1
    w = numpy_helper.from_array(np.ones((4, 4, 3, 3), np.float32), "w")
    w1 = numpy_helper.from_array(np.ones((4, 4, 1, 1), np.float32), "w1")
    inits = [w, w1]
    ns = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv_big", pads=[1, 1, big, 1])]
    if kind == "Concat":
        ns += [helper.make_node("Relu", ["c"], ["r"], name="relu_1"),
               helper.make_node("Concat", ["c", "r"], ["t"], name="concat_1", axis=1)]
    elif kind == "BatchNormalization":
        for k, v in (("scale", 2.0), ("bias", 0.5), ("mean", 0.1), ("var", 1.5)):
            inits.append(numpy_helper.from_array(np.full((4,), v, np.float32), k))
        ns += [helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["t"], name="bn_1")]
    elif kind == "Split":
        inits.append(numpy_helper.from_array(np.array([2, 2], np.int64), "parts"))
        ns += [helper.make_node("Split", ["c", "parts"], ["s1", "s2"], name="split_1", axis=1),
               helper.make_node("Add", ["s1", "s2"], ["t"], name="add_1")]
    else:  # fork-join: two independent branches off the big tensor, joined by an Add
        ns += [helper.make_node("Conv", ["c", "w1"], ["b1"], name="branch_1"),
               helper.make_node("Conv", ["c", "w1"], ["b2"], name="branch_2"),
               helper.make_node("Relu", ["b2"], ["b3"], name="branch_2_relu"),
               helper.make_node("Add", ["b1", "b3"], ["t"], name="join_1")]
    ns.append(helper.make_node("GlobalMaxPool", ["t"], ["y"], name="pool_1"))
    return model(ns, [vi("x", [2, 4, 8, 10])], [vi("y", None)], inits)


def oversized_cases(compiler, d, cflags):
    results = []
    for kind in ("Concat", "BatchNormalization", "Split", "fork-join"):
        src = save(oversized_model(kind), os.path.join(d, f"oversized_{kind.replace('-', '_')}.onnx"))
        for mode in ("loop", "task", "batch", "auto", "tune"):
            name = f"oversized intermediate behind {kind}, --parallel {mode}"
            t0 = time.monotonic()
            try:
                p, out = run_compile(None, compiler, d, src, cflags, ["--parallel", mode], timeout=60)
            except subprocess.TimeoutExpired:
                print(f"FAIL {name}: compile-model still running after 60 s")
                results.append(False)
                continue
            ok = check(name, p, UNSUPPORTED, ["node 'conv_big' (Conv", "intermediate tensor 'c' f32[", ",4,2147483654,10]", "--max-memory"])
            written = [f for f in os.listdir(out) if f.endswith((".c", ".h"))] if os.path.isdir(out) else []
            if written:
                print(f"     C written before the refusal: {' '.join(sorted(written))}")
                ok = False
            print(f"     refused in {time.monotonic() - t0:.2f} s")
            results.append(ok)
    return results


# Constant folding bounded by work, not only by output size (a fuzz_pipeline slow unit,
# tests/fuzz/regressions/pipeline-fold-conv-of-constants-pad-1000-work.onnx: Conv(W, W) with a
# pad of 1000 took 35 s to fold in the sanitized build). Here a Conv of two constants has a
# 2 MB output but its reference loops would visit 16·16·32·2002·961 ≈ 1.6e10 (output, tap)
# pairs: compile-model must leave it as code and finish at once, the binary computing it.
def heavy_fold_cases(compiler, d, cflags):
    rng = np.random.default_rng(3)
    xc = numpy_helper.from_array(rng.uniform(-1, 1, (1, 16, 32, 32)).astype(np.float32), "xc")
    w = numpy_helper.from_array(rng.uniform(-1, 1, (16, 16, 31, 31)).astype(np.float32), "w")
    ns = [helper.make_node("Conv", ["xc", "w"], ["c"], name="conv_const", pads=[15, 0, 15, 2000]),
          helper.make_node("Add", ["c", "x"], ["y"], name="add_1")]
    m = model(ns, [vi("x", [1, 16, 1, 1])], [vi("y", [1, 16, 32, 2002])], [xc, w])
    src = save(m, os.path.join(d, "heavy_fold.onnx"))
    name = "Conv of two constants with 1.6e10 tap visits: left as code"
    t0 = time.monotonic()
    try:
        p, out = run_compile(None, compiler, d, src, cflags, ["--emit", "c", "--dump-ir"], timeout=60)
    except subprocess.TimeoutExpired:
        print(f"FAIL {name}: compile-model still running after 60 s")
        return [False]
    problems = []
    if p.returncode != 0:
        problems.append(f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[:2000]}")
    elif not re.search(r"= Conv[+(]", p.stdout):
        problems.append("the Conv was folded (no Conv node in the final IR)")
    print(f"{'ok  ' if not problems else 'FAIL'} {name} ({time.monotonic() - t0:.1f} s)")
    for pr in problems:
        print(f"     {pr}")
    return [not problems]


def long_chain_cases(compiler, d, cflags, n=100_000):
    """Deep graphs: no recursion may overflow the stack, no pass may be quadratic."""
    results = []
    for add_relu in (False, True):
        name = f"{n}-node {'Add/Relu' if add_relu else 'Relu'} chain"
        src = save(chain_model(n, add_relu), os.path.join(d, f"chain_{int(add_relu)}.onnx"))
        t0 = time.monotonic()
        p, out = run_compile(None, compiler, d, src, cflags, ["--emit", "c"] if not add_relu else [], timeout=600)
        secs = time.monotonic() - t0
        problems = []
        if p.returncode != 0:
            problems.append(f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[:2000]}")
        if not add_relu and secs > 60:  # a few seconds when linear; minutes when a pass is quadratic
            problems.append(f"compile-model took {secs:.0f} s")
        if add_relu and not problems:
            # y = relu(... relu(x + 0.5) + 0.5 ...), checked against numpy in float32
            x = np.linspace(-3, 3, 16, dtype=np.float32).reshape(1, 4, 2, 2)
            ref = x.copy()
            for k in range(n):
                ref = ref + np.float32(0.5) if k % 2 == 0 else np.maximum(ref, np.float32(0))
            np.save(os.path.join(d, "chain_x.npy"), x)
            yp = os.path.join(d, "chain_y.npy")
            r = subprocess.run([os.path.join(out, "m"), "--quiet", "--input", f"x={d}/chain_x.npy", "--output", f"y={yp}"],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                problems.append(f"binary exit {r.returncode}: {(r.stdout + r.stderr).strip()[:2000]}")
            else:
                got = np.load(yp)
                err = float(np.max(np.abs(got - ref)))
                if err > 1e-3 * max(1.0, float(np.max(np.abs(ref)))):
                    problems.append(f"output differs from numpy by {err}")
        print(f"{'ok  ' if not problems else 'FAIL'} {name}: compiled{' and ran' if add_relu else ' (--emit c)'} in {secs:.1f} s")
        for pr in problems:
            print(f"     {pr}")
        results.append(not problems)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--cflags", default="-O1")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="onnxc-bad-") as d:
        for name, code, needles, fn in CASES:
            try:
                src = fn(d)
                src, extra = src if isinstance(src, tuple) else (src, ())
                p, _ = run_compile(args, args.compiler, d, src, args.cflags, extra)
                results.append(check(name, p, code, needles))
            except Exception as e:  # a broken case is a failure, not a crash of the runner
                print(f"FAIL {name}: runner error {e!r}")
                results.append(False)
        results += binary_cases(args.compiler, d, args.cflags)
        results += oversized_cases(args.compiler, d, args.cflags)
        results += heavy_fold_cases(args.compiler, d, args.cflags)
        results += long_chain_cases(args.compiler, d, args.cflags)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
