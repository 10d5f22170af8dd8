#!/usr/bin/env python3
"""CUDA backend op tests without a GPU: small one- or two-node models covering the CUDA
kernels' variants that the zoo CNNs do not reach (batched and broadcast MatMul, tiled and
dot-product (a thread or a block per element), Gemm's transposes and C, Softmax on a middle axis, LRN, Transpose, cropping Pad, Concat on other
axes, pools with padding, ceil_mode and dilations, 1-D/3-D, grouped and dilated Conv, fused
activations, broadcasting elementwise ops, runtime Clip bounds, Attention and the LayerNorm and
attention chains the recognize pass turns into LayerNormalization and Attention...). Each model is compiled
twice by compile-model: to C (the reference: the C backend, itself checked against ONNX's
node tests) and with --device cuda, whose .cu is built as C++ against tests/cuda/emu/
cuda_runtime.h (a CPU stand-in for the CUDA runtime, see run_emulated.sh). Both binaries run
on the same pseudo-random inputs (the driver's --seed) and their outputs must agree within
1e-4 of max(1, max |reference|) (NaN where the reference has NaN). Last, a C program checks
the C API of an emulated CUDA model (API_TEST): create, create_from_memory and create_sharing,
run and run_v, refused sizes and handles, NAME_info; and --profile: the emulated binary's per-node
table and --profile-out file (one line per node, in launch order, with its .cu kernel).
With --gpu-libs cudnn,cublas the CUDA side is compiled with it: Conv runs through cuDNN, Gemm
and MatMul through cuBLAS, emulated by tests/cuda/emu/cudnn.h and cublas_v2.h (naive CPU
references of exactly those calls); the API check then covers instances owning the handles. A
case whose .cu is the same with and without the libraries (no Conv, Gemm or MatMul that they
take) is not built again: it is counted as "same", never as passed.
With --gpu-precision tf32 or fp16, only the implicit-GEMM Conv cases (PRECISION_CASES), compiled
with it: their .cu must run tensor cores (wmma, emulated by tests/cuda/emu/mma.h with operands
rounded as on the GPU), and each output must be within 1e-2 of max(1, max |reference|) of the
C backend's float32 one but differ from it by more than 1e-6 (the operands were rounded); at fp16
also half's range: a weight past 65504 is refused, an activation past it fails the run.
Run with Debian's /usr/bin/python3 (numpy + onnx). Usage:
  run_emulated_ops.py --compiler build/compile-model [--only NAME] [--gpu-libs LIBS] [--gpu-precision P]
Ends with the line "N passed, M failed"; exit status 0 iff M == 0.
"""
import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(5)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, shape):
    return numpy_helper.from_array(RNG.uniform(-1, 1, shape).astype(np.float32), name)


def model(nodes, inputs, out_shape, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", [vi(n, s) for n, s in inputs], [vi("y", out_shape)], list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def node(op, ins, out="y", **attrs):
    return helper.make_node(op, ins, [out], name=op.lower() + "_1" if out == "y" else out + "_n", **attrs)


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def matmul_batched_broadcast_tiled():
    return model([node("MatMul", ["a", "b"])], [("a", [3, 1, 20, 21]), ("b", [2, 21, 19])], [3, 2, 20, 19])


@case
def matmul_batched_broadcast_dot():
    return model([node("MatMul", ["a", "b"])], [("a", [3, 1, 4, 21]), ("b", [2, 21, 19])], [3, 2, 4, 19])


@case
def matmul_const_rhs():
    return model([node("MatMul", ["a", "w"])], [("a", [2, 5, 33])], [2, 5, 17], [const("w", [33, 17])])


@case
def matmul_vector():
    return model([node("MatMul", ["a", "b"])], [("a", [18]), ("b", [2, 18, 7])], [2, 7])


@case
def matmul_batched_full():  # --gpu-libs cublas: strided batches, both operands
    return model([node("MatMul", ["a", "b"])], [("a", [2, 3, 20, 21]), ("b", [2, 3, 21, 19])], [2, 3, 20, 19])


@case
def matmul_batched_shared_lhs():  # --gpu-libs cublas: stride 0 for A
    return model([node("MatMul", ["a", "b"])], [("a", [9, 21]), ("b", [4, 21, 19])], [4, 9, 19])


@case
def gemm_scalar_c_alpha_beta():
    return model([node("Gemm", ["a", "b", "c"], alpha=-1.5, beta=0.25)], [("a", [10, 12]), ("b", [12, 7]), ("c", [])], [10, 7])


@case
def gemm_transposes_and_c():
    return model([node("Gemm", ["a", "b", "c"], transA=1, transB=1, alpha=0.5, beta=2.0)],
                 [("a", [20, 9]), ("b", [11, 20]), ("c", [1, 11])], [9, 11])


@case
def gemm_tiled_k_slices_transb():
    # At least 8 rows: the tiled product, K over three 64-wide slices (the last partial), B read
    # along K (transB = 1), M and N not multiples of 16.
    return model([node("Gemm", ["a", "w", "c"], transB=1)], [("a", [37, 150])], [37, 45], [const("w", [45, 150]), const("c", [45])])


@case
def gemm_tiled_k_slices_transa_relu():
    # A read across K (transA = 1), B along its rows, K over three slices, then Relu.
    return model([node("Gemm", ["a", "b"], out="g", transA=1), node("Relu", ["g"])], [("a", [150, 21]), ("b", [150, 30])], [21, 30])


@case
def matmul_tiled_k_slices_batched():
    return model([node("MatMul", ["a", "w"])], [("a", [2, 19, 130])], [2, 19, 35], [const("w", [130, 35])])


def scalar(name, v):
    return numpy_helper.from_array(np.array(v, np.float32), name)


@case
def matmul_bias_gelu_chains():
    # PyTorch's opset-14 GELU chains (erf form after MatMul + bias, tanh form on its result):
    # the recognize pass makes them Gelu steps of the MatMul's epilogue and a Gelu kernel.
    x3 = [node("Mul", ["g", "g"], out="g2"), node("Mul", ["g", "g2"], out="g3"), node("Mul", ["c", "g3"], out="cg"),
          node("Add", ["g", "cg"], out="u"), node("Mul", ["k", "u"], out="ku"), node("Tanh", ["ku"], out="t"),
          node("Add", ["one", "t"], out="t1"), node("Mul", ["g", "t1"], out="gt"), node("Mul", ["half", "gt"])]
    erf = [node("MatMul", ["a", "w"], out="m"), node("Add", ["b", "m"], out="h"), node("Div", ["h", "sqrt2"], out="q"),
           node("Erf", ["q"], out="e"), node("Add", ["e", "one"], out="e1"), node("Mul", ["h", "e1"], out="he"),
           node("Mul", ["he", "half"], out="g")]
    return model(erf + x3, [("a", [2, 9, 33])], [2, 9, 20],
                 [const("w", [33, 20]), const("b", [20]), scalar("sqrt2", 1.4142135), scalar("one", 1.0), scalar("half", 0.5),
                  scalar("c", 0.044715), scalar("k", 0.7978845608)], opset=14)


@case
def attention_heads_chain():
    # PyTorch's opset-14 attention between head splits and the join (the recognize pass makes
    # it one Attention node, 3-D form) followed by its LayerNorm chain (LayerNormalization).
    heads = lambda x, p: [node("Reshape", [x, "hs"], out=x + "r"), node("Transpose", [x + "r"], out=x + "t", perm=p)]
    att = heads("q", [0, 2, 1, 3]) + heads("k", [0, 2, 3, 1]) + heads("v", [0, 2, 1, 3]) + [
        node("MatMul", ["qt", "kt"], out="s"), node("Div", ["s", "sd"], out="sc"), node("Add", ["sc", "mask"], out="sm"),
        node("Softmax", ["sm"], out="p", axis=-1), node("MatMul", ["p", "vt"], out="o"),
        node("Transpose", ["o"], out="ot", perm=[0, 2, 1, 3]), node("Reshape", ["ot", "js"], out="a")]
    ln = [node("ReduceMean", ["a"], out="mu", axes=[-1]), node("Sub", ["a", "mu"], out="dd"), node("Pow", ["dd", "two"], out="d2"),
          node("ReduceMean", ["d2"], out="var", axes=[-1]), node("Add", ["var", "eps"], out="ve"), node("Sqrt", ["ve"], out="sd2"),
          node("Div", ["dd", "sd2"], out="n"), node("Mul", ["n", "gamma"], out="ng"), node("Add", ["ng", "beta"])]
    shape = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    return model(att + ln, [("q", [2, 5, 24]), ("k", [2, 5, 24]), ("v", [2, 5, 24])], [2, 5, 24],
                 [shape("hs", [2, 5, 3, 8]), shape("js", [2, 5, 24]), scalar("sd", 2.828427), const("mask", [2, 1, 1, 5]),
                  scalar("two", 2.0), scalar("eps", 1e-5), const("gamma", [24]), const("beta", [24])], opset=14)


@case
def attention_gqa_past_causal_softcap():
    # The Attention op itself: 4-D grouped-query heads (6 query, 2 key/value), a past of 3 rows,
    # is_causal (offset by the past), softcap, a float mask shorter than the keys.
    n = helper.make_node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y"], name="attention_1", is_causal=1, softcap=2.0)
    return model([n], [("q", [1, 6, 4, 8]), ("k", [1, 2, 4, 8]), ("v", [1, 2, 4, 5]), ("pk", [1, 2, 3, 8]), ("pv", [1, 2, 3, 5])],
                 [1, 6, 4, 5], [const("m", [4, 6])], opset=23)


@case
def rms_norm():
    return model([node("RMSNormalization", ["x", "g"], epsilon=1e-3, axis=-2)], [("x", [3, 4, 6])], [3, 4, 6], [const("g", [4, 6])], opset=23)


@case
def gemm_relu_column_c():
    return model([node("Gemm", ["a", "w", "c"], out="g"), node("Relu", ["g"])], [("a", [3, 40])], [3, 18],
                 [const("w", [40, 18]), const("c", [3, 1])])


@case
def gemm_transb_vector_silu():
    return model([node("Gemm", ["a", "w", "c"], out="g", transB=1), node("Sigmoid", ["g"], out="s"), node("Mul", ["g", "s"])],
                 [("a", [1, 40])], [1, 18], [const("w", [18, 40]), const("c", [18])])


@case
def gemm_block_dot_rows_c_relu():
    # transB = 1 and K >= 512 with fewer than 8 rows: a block of 256 threads per output element,
    # K not a multiple of 256, alpha and a C broadcast along the rows, then Relu.
    return model([node("Gemm", ["a", "w", "c"], out="g", transB=1, alpha=0.75, beta=1.5), node("Relu", ["g"])],
                 [("a", [3, 700])], [3, 21], [const("w", [21, 700]), const("c", [3, 1])])


@case
def softmax_middle_axis():
    return model([node("Softmax", ["x"], axis=1)], [("x", [2, 7, 3])], [2, 7, 3])


@case
def logsoftmax_last_axis():
    return model([node("LogSoftmax", ["x"], axis=-1)], [("x", [4, 10])], [4, 10])


@case
def lrn():
    return model([node("LRN", ["x"], size=5, alpha=0.002, beta=0.75, bias=1.5)], [("x", [2, 9, 4, 3])], [2, 9, 4, 3])


@case
def transpose():
    return model([node("Transpose", ["x"], perm=[0, 2, 3, 1])], [("x", [2, 3, 4, 5])], [2, 4, 5, 3])


@case
def pad_crop_and_grow():
    pads = numpy_helper.from_array(np.array([0, 1, -1, 2, 0, -1, 2, 0], np.int64), "pads")
    value = numpy_helper.from_array(np.array(0.25, np.float32), "v")
    return model([node("Pad", ["x", "pads", "v"])], [("x", [1, 3, 5, 6])], [1, 5, 6, 8], [pads, value])


@case
def concat_axis2():
    return model([node("Concat", ["a", "b", "c"], axis=2)], [("a", [2, 3, 4]), ("b", [2, 3, 1]), ("c", [2, 3, 5])], [2, 3, 10])


@case
def concat_axis0():
    return model([node("Concat", ["a", "b"], axis=0)], [("a", [1, 3, 4]), ("b", [2, 3, 4])], [3, 3, 4])


@case
def averagepool_pads_count_include_pad():
    return model([node("AveragePool", ["x"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)],
                 [("x", [1, 3, 9, 8])], [1, 3, 5, 4])


@case
def averagepool_ceil_mode():
    return model([node("AveragePool", ["x"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 0, 0], ceil_mode=1)],
                 [("x", [1, 2, 8, 7])], [1, 2, 5, 4])


@case
def maxpool_dilated_ceil():
    return model([node("MaxPool", ["x"], kernel_shape=[2, 3], strides=[2, 1], dilations=[2, 2], ceil_mode=1)],
                 [("x", [2, 3, 9, 10])], [2, 3, 4, 6])


@case
def maxpool_1d():
    return model([node("MaxPool", ["x"], kernel_shape=[3], strides=[2], pads=[1, 1])], [("x", [1, 4, 11])], [1, 4, 6])


@case
def global_max_pool():
    return model([node("GlobalMaxPool", ["x"])], [("x", [2, 5, 3, 4])], [2, 5, 1, 1])


@case
def conv_grouped_dilated_asymmetric_pads():
    return model([node("Conv", ["x", "w", "b"], group=2, dilations=[2, 1], strides=[1, 2], pads=[2, 0, 1, 1])],
                 [("x", [2, 6, 9, 8])], [2, 4, 8, 4], [const("w", [4, 3, 3, 3]), const("b", [4])])


@case
def conv_grouped_strided_dilated():  # --gpu-libs cudnn: groups, strides and dilations with symmetric pads
    return model([node("Conv", ["x", "w", "b"], out="c", group=3, dilations=[2, 2], strides=[2, 1], pads=[2, 1, 2, 1]), node("Relu", ["c"])],
                 [("x", [2, 6, 11, 9])], [2, 9, 6, 7], [const("w", [9, 2, 3, 3]), const("b", [9])])


@case
def conv_depthwise_hardswish():
    return model([node("Conv", ["x", "w"], out="c", group=8, strides=[2, 2], pads=[1, 1, 1, 1]), node("HardSwish", ["c"])],
                 [("x", [1, 8, 7, 7])], [1, 8, 4, 4], [const("w", [8, 1, 3, 3])], opset=14)


@case
def conv_1d_leakyrelu():
    return model([node("Conv", ["x", "w", "b"], out="c", pads=[2, 2]), node("LeakyRelu", ["c"], alpha=0.2)],
                 [("x", [2, 5, 12])], [2, 6, 12], [const("w", [6, 5, 5]), const("b", [6])])


@case
def conv_3d_elu():
    return model([node("Conv", ["x", "w"], out="c", pads=[1, 0, 1, 1, 0, 1]), node("Elu", ["c"], alpha=0.7)],
                 [("x", [1, 3, 4, 5, 6])], [1, 4, 4, 4, 6], [const("w", [4, 3, 3, 2, 3])])


@case
def conv_silu_residual_add():
    return model([node("Conv", ["x", "w", "b"], out="c"), node("Sigmoid", ["c"], out="s"), node("Mul", ["c", "s"], out="m"),
                  node("Add", ["m", "r"])],
                 [("x", [1, 16, 6, 6]), ("r", [1, 12, 6, 6])], [1, 12, 6, 6], [const("w", [12, 16, 1, 1]), const("b", [12])])


@case
def conv_channels_not_multiple_of_2():
    return model([node("Conv", ["x", "w"], out="c", pads=[1, 1, 1, 1]), node("Tanh", ["c"])], [("x", [1, 5, 6, 5])], [1, 7, 6, 5],
                 [const("w", [7, 5, 3, 3])])


@case
def conv_implicit_gemm_chain():
    # Implicit-GEMM convolutions with 32-wide tiles: channels, positions and K = CG * taps not
    # multiples of 16; 3x3 padded + fused Relu, 1x1 with bias, 1x1 strided, grouped + dilated
    # with asymmetric pads + fused residual Add.
    return model([node("Conv", ["x", "w1"], out="c1", pads=[1, 1, 1, 1]), node("Relu", ["c1"], out="r1"),
                  node("Conv", ["r1", "w2", "b2"], out="c2"),
                  node("Conv", ["c2", "w3"], out="c3", strides=[2, 2]),
                  node("Conv", ["c3", "w4"], out="c4", group=2, dilations=[2, 2], pads=[2, 1, 2, 1]),
                  node("Add", ["c4", "r"])],
                 [("x", [2, 19, 11, 10]), ("r", [2, 36, 6, 3])], [2, 36, 6, 3],
                 [const("w1", [37, 19, 3, 3]), const("w2", [70, 37, 1, 1]), const("b2", [70]), const("w3", [34, 70, 1, 1]),
                  const("w4", [36, 17, 3, 3])])


@case
def conv_implicit_gemm_64_tiles():
    # Layers large enough for 64 x 64 tiles (4 x 4 per thread) and 64 x 32 (1x1), strided
    # 3x3 with bias and a fused Relu.
    return model([node("Conv", ["x", "w1", "b1"], out="c1", pads=[1, 1, 1, 1]),
                  node("Conv", ["c1", "w2"], out="c2"),
                  node("Conv", ["c2", "w3", "b3"], out="c3", strides=[2, 2], pads=[0, 1, 1, 0]), node("Relu", ["c3"])],
                 [("x", [4, 20, 23, 23])], [4, 17, 11, 11],
                 [const("w1", [260, 20, 3, 3]), const("b1", [260]), const("w2", [70, 260, 1, 1]), const("w3", [17, 70, 3, 3]),
                  const("b3", [17])])


@case
def conv_grouped_128_tiles():
    # Enough blocks for 128 x 128 tiles (8 x 8 per thread; on tensor cores 8 warps of 4 x 2
    # fragments): 8 groups of 128 output channels, 2116 positions, K = 4 * 9 = 36 (a partial
    # last slice), bias and a fused Relu.
    return model([node("Conv", ["x", "w", "b"], out="c", group=8, pads=[1, 1, 1, 1]), node("Relu", ["c"])],
                 [("x", [1, 32, 46, 46])], [1, 1024, 46, 46], [const("w", [1024, 4, 3, 3]), const("b", [1024])])


# --gpu-precision tf32 / fp16: the implicit-GEMM convolutions that run on tensor cores.
PRECISION_CASES = ["conv_implicit_gemm_chain", "conv_implicit_gemm_64_tiles", "conv_grouped_128_tiles"]
# Both round each operand to 10 mantissa bits (2^-11 relative); the sums stay float32.
PRECISION_TOL = 1e-2


@case
def elementwise_broadcast_chain():
    return model([node("Add", ["a", "b"], out="s"), node("Div", ["s", "c"], out="d"), node("Max", ["d", "a", "e"])],
                 [("a", [2, 3, 1, 5]), ("b", [4, 1]), ("c", [3, 4, 5]), ("e", [5])], [2, 3, 4, 5])


@case
def clip_runtime_bounds_and_pow():
    return model([node("Clip", ["x", "lo", "hi"], out="c"), node("Pow", ["c", "p"])],
                 [("x", [3, 4]), ("lo", []), ("hi", []), ("p", [4])], [3, 4])


@case
def unary_ops():
    return model([node("Abs", ["x"], out="a"), node("Sqrt", ["a"], out="s"), node("Neg", ["s"], out="n"), node("Exp", ["n"], out="e"),
                  node("Reciprocal", ["e"], out="r"), node("HardSigmoid", ["r"], out="h", alpha=0.3, beta=0.4), node("Sum", ["h", "x", "x"])],
                 [("x", [2, 3, 4])], [2, 3, 4])


@case
def reshape_flatten_squeeze():
    shape = numpy_helper.from_array(np.array([2, -1], np.int64), "shape")
    return model([node("Relu", ["x"], out="r"), node("Reshape", ["r", "shape"], out="s"), node("Flatten", ["s"], out="f", axis=0),
                  node("Sigmoid", ["f"])], [("x", [2, 3, 4])], [1, 24], [shape])


# The C API of a CUDA model, emulated: instances made by create, create_from_memory and
# create_sharing give the same outputs; wrong sizes, NULL handles, a double destroy and a
# truncated weights file are refused with their codes and details.
API_TEST = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "m.h"
#define CHECK(cond) do { if (!(cond)) { printf("FAIL line %d: %s (%s)\n", __LINE__, #cond, m_last_error()); return 1; } } while (0)
int main(void) {
  FILE* f = fopen("m.weights", "rb");
  CHECK(f != NULL);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* blob = malloc((size_t)n);
  CHECK(fread(blob, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  m_ctx *a = NULL, *b = NULL, *c = NULL;
  CHECK(m_create("m.weights", NULL, &a) == ONNXC_OK);
  CHECK(m_create_from_memory(blob, (size_t)n, NULL, &b) == ONNXC_OK);
  free(blob);
  CHECK(m_create_sharing(a, NULL, &c) == ONNXC_OK);
  float x[m_INPUT0_SIZE], y[3][m_OUTPUT0_SIZE];
  for (int i = 0; i < m_INPUT0_SIZE; ++i) x[i] = (float)((i * 37) % 11) / 5.0f - 1.0f;
  m_ctx* inst[3] = {a, b, c};
  for (int k = 0; k < 3; ++k) CHECK(m_run(inst[k], x, y[k]) == ONNXC_OK);
  CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0 && memcmp(y[0], y[2], sizeof y[0]) == 0);
  const void* ins[] = {x};
  void* outs[] = {y[0]};
  size_t ib[] = {sizeof x - 4}, ob[] = {sizeof y[0]};
  CHECK(m_run_v(a, ins, ib, outs, ob) == ONNXC_ERR_SIZE && strstr(m_last_error(), "expected"));
  CHECK(m_run(NULL, x, y[0]) == ONNXC_ERR_ARG);
  CHECK(m_info.run_v(a, ins, (size_t[]){sizeof x}, outs, ob) == ONNXC_OK);
  CHECK(strcmp(m_info.model_name, "m") == 0 && m_info.num_inputs == 1 && m_info.num_outputs == 1);
  CHECK(strcmp(m_status_string(ONNXC_ERR_DEVICE), "GPU error") == 0);
  CHECK(m_destroy(&a) == ONNXC_OK && a == NULL);
  CHECK(m_run(c, x, y[2]) == ONNXC_OK && memcmp(y[1], y[2], sizeof y[1]) == 0); /* c still holds the shared weights */
  CHECK(m_destroy(&a) == ONNXC_ERR_ARG && strstr(m_last_error(), "already destroyed"));
  CHECK(m_destroy(&b) == ONNXC_OK && m_destroy(&c) == ONNXC_OK);
  f = fopen("short.weights", "wb");
  CHECK(f != NULL && fwrite("ONNXCWTS", 1, 8, f) == 8);
  fclose(f);
  CHECK(m_create("short.weights", NULL, &a) != ONNXC_OK && a == NULL && strstr(m_last_error(), "m_create"));
  printf("api ok\n");
  return 0;
}
"""


GPU_LIBS = []  # ["--gpu-libs", LIBS] and/or ["--gpu-precision", P] for the CUDA compiles (main)
PRECISION = []  # [P] with --gpu-precision
# fmaf as one instruction, not a libm call, where the CPU has FMA (as tests/cuda/emu_build.sh).
EMU_FLAGS = ["-mfma"] if platform.machine() == "x86_64" and " fma " in open("/proc/cpuinfo").read() else []


def api_check(compiler, work):
    d = os.path.join(work, "api")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    m = model([node("Conv", ["x", "w", "b"], out="c", pads=[1, 1, 1, 1]), node("Relu", ["c"])], [("x", [1, 3, 5, 5])], [1, 4, 5, 5],
              [const("w", [4, 3, 3, 3]), const("b", [4])])
    onnx.save(m, src)
    cu = os.path.join(d, "cu")
    run([compiler, src, "-o", cu, "--name", "m", "--quiet", "--device", "cuda", "--emit", "c"] + GPU_LIBS)
    text = re.sub(r"^(\s*)(\w+)<<<(.*)>>>\(", r"\1ONNXC_EMU_LAUNCH(\2, \3)(", open(os.path.join(cu, "m.cu")).read(), flags=re.M)
    open(os.path.join(cu, "m.emu.cc"), "w").write(text)
    open(os.path.join(cu, "api.c"), "w").write(API_TEST)
    run(["g++", "-std=c++20", "-O1"] + EMU_FLAGS + ["-I" + os.path.join(HERE, "emu"), "-I.", "-c", "m.emu.cc", "-o", "m.emu.o"], cwd=cu)
    run(["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-c", "api.c", "-o", "api.o"], cwd=cu)
    run(["g++", "-o", "api", "api.o", "m.emu.o", "-lpthread"], cwd=cu)
    p = subprocess.run([os.path.join(cu, "api")], cwd=cu, capture_output=True, text=True, timeout=60)
    return None if p.returncode == 0 and "api ok" in p.stdout else f"exit {p.returncode}: {p.stdout}{p.stderr}"


def profile_check(compiler, work):
    """--device cuda --profile: the emulated binary's --profile table and --profile-out file (what
    compile-model --gpu-profile reads): one line per node, in launch order, each with a positive
    time and the kernel its .cu launch comment names."""
    d = os.path.join(work, "profile")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    onnx.save(CASES["conv_implicit_gemm_chain"](), src)
    cu = os.path.join(d, "cu")
    run([compiler, src, "-o", cu, "--name", "m", "--quiet", "--device", "cuda", "--emit", "c", "--profile"])
    run(["bash", os.path.join(HERE, "emu_build.sh"), cu, "m"])
    tsv = os.path.join(d, "p.tsv")
    p = run([os.path.join(cu, "m.emu"), "--quiet", "--bench", "2", "--profile", "--profile-out", tsv])
    if "runs on the GPU" not in p.stdout:
        return f"no GPU profile table: {p.stdout[-500:]}"
    lines = [l.split("\t") for l in open(tsv).read().splitlines() if not l.startswith("#")]
    text = open(os.path.join(cu, "m.cu")).read()
    launched = re.findall(r"^/\* (.+?): \S+\(.*?; (.+?), grid ", text, flags=re.M)  # nodes, kernel of each kernel
    if len(lines) != 4 or [l[3] for l in lines] != [n for n, _ in launched]:
        return f"profile lines {[l[3] for l in lines]}, expected the launched nodes {[n for n, _ in launched]}"
    for l, (_, kernel) in zip(lines, launched):
        if len(l) != 4 or not float(l[0]) > 0 or l[2] != kernel:
            return f"profile line {l}: expected a positive time and kernel '{kernel}'"
    return None


def fp16_range_check(compiler, work):
    """--gpu-precision fp16 and half's range (65504): a weight past it is refused at compile time
    (exit 3, naming the node), and an activation past it makes the emulated run fail with
    ONNXC_ERR_RANGE naming the node whose tensor-core kernel read it, not return a wrong output."""
    d = os.path.join(work, "fp16_range")
    os.makedirs(d, exist_ok=True)

    def conv_pair(w1_value):
        w1 = numpy_helper.from_array(np.full([32, 16, 3, 3], w1_value, np.float32), "w1")
        return model([node("Conv", ["x", "w1"], out="c1", pads=[1, 1, 1, 1]), node("Relu", ["c1"], out="r1"),
                      node("Conv", ["r1", "w2"], pads=[1, 1, 1, 1])],
                     [("x", [1, 16, 8, 8])], [1, 32, 8, 8], [w1, const("w2", [32, 32, 3, 3])])
    src = os.path.join(d, "weights.onnx")
    onnx.save(conv_pair(1e5), src)
    p = subprocess.run([compiler, src, "-o", os.path.join(d, "w"), "--quiet", "--device", "cuda", "--emit", "c", "--gpu-precision", "fp16"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 3 or "c1_n" not in p.stderr or "65504" not in p.stderr:
        return f"a weight of 1e5 at fp16: exit {p.returncode}, expected 3 naming node c1_n and 65504: {p.stderr[-400:]}"
    # Inputs in [-1, 1) times 144 weights of 1e4: c1's outputs reach well past 65504, and conv_1 reads them.
    src = os.path.join(d, "acts.onnx")
    onnx.save(conv_pair(1e4), src)
    cu = os.path.join(d, "cu")
    run([compiler, src, "-o", cu, "--name", "m", "--quiet", "--device", "cuda", "--emit", "c", "--gpu-precision", "fp16"])
    run(["bash", os.path.join(HERE, "emu_build.sh"), cu, "m"])
    p = subprocess.run([os.path.join(cu, "m.emu"), "--quiet", "--seed", "7", "--output", "y=" + os.path.join(d, "y.npy")],
                       capture_output=True, text=True, timeout=120)
    if p.returncode == 0 or "conv_1" not in p.stderr or "65504" not in p.stderr or "c1_n" in p.stderr:
        return f"activations past 65504 at fp16: exit {p.returncode}, expected a failure naming node conv_1: {p.stderr[-400:]}"
    return None


def run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p


SAME = "same"  # check()'s answer for a case whose .cu --gpu-libs does not change


def check(name, fn, compiler, work):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "model.onnx")
    m = fn()
    onnx.checker.check_model(m)
    onnx.save(m, src)
    cu = os.path.join(d, "cu")
    run([compiler, src, "-o", cu, "--name", "m", "--quiet", "--device", "cuda", "--emit", "c"] + GPU_LIBS)
    text = open(os.path.join(cu, "m.cu")).read()
    if "--gpu-libs" in GPU_LIBS and not PRECISION:
        plain = os.path.join(d, "cu_plain")
        run([compiler, src, "-o", plain, "--name", "m", "--quiet", "--device", "cuda", "--emit", "c"])
        if open(os.path.join(plain, "m.cu")).read() == text:
            return SAME
    # The reference links the generic driver compiled once per run (compile-model builds it the first time).
    run([compiler, src, "-o", os.path.join(d, "c"), "--name", "m", "--quiet", "--cflags", "-O1 -ffp-contract=off",
         "--driver-object", os.path.join(work, "ref_main.o")])
    text = re.sub(r"^(\s*)(\w+)<<<(.*)>>>\(", r"\1ONNXC_EMU_LAUNCH(\2, \3)(", text, flags=re.M)
    if "<<<" in text:
        raise RuntimeError("a kernel launch was not rewritten")
    open(os.path.join(cu, "m.emu.cc"), "w").write(text)
    run(["g++", "-std=c++20", "-O1"] + EMU_FLAGS + ["-I" + os.path.join(HERE, "emu"), "-I.", "-DONNXC_MAIN_MODEL", "-c", "m.emu.cc", "-o", "m.emu.o"], cwd=cu)
    main_o = os.path.join(work, "onnxc_main.o")  # the generic driver: the same for every model, built once
    if not os.path.exists(main_o):
        run(["gcc", "-std=c11", "-O1", "-c", "onnxc_main.c", "-o", main_o], cwd=cu)
    run(["g++", "-o", "m.emu", "m.emu.o", main_o, "-lpthread"], cwd=cu)
    ref_path, got_path = os.path.join(d, "ref.npy"), os.path.join(d, "got.npy")
    run([os.path.join(d, "c", "m"), "--quiet", "--seed", "7", "--output", "y=" + ref_path])
    run([os.path.join(cu, "m.emu"), "--quiet", "--seed", "7", "--output", "y=" + got_path])
    ref, got = np.load(ref_path), np.load(got_path)
    if ref.shape != got.shape:
        return f"shape {got.shape}, expected {ref.shape}"
    nan = np.isnan(ref)
    if (np.isnan(got) != nan).any():
        return "NaN where the C backend has none, or the other way round"
    err = float(np.max(np.abs(got[~nan] - ref[~nan]), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(ref[~nan]), initial=0.0)))
    if PRECISION:
        # Tensor cores: within PRECISION_TOL, and not float32's result: the operands were rounded.
        if "wmma::mma_sync" not in text:
            return "no tensor-core kernel in the .cu"
        if err <= 1e-6 * scale:
            return f"max abs error {err:.3g}: float32's result, operands not rounded to {PRECISION[0]}"
        return None if err <= PRECISION_TOL * scale else f"max abs error {err:.3g} > {PRECISION_TOL * scale:.3g}"
    tol = 1e-4 * scale
    return None if err <= tol else f"max abs error {err:.3g} > {tol:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default="")
    ap.add_argument("--gpu-libs", default="")
    ap.add_argument("--gpu-precision", default="", choices=["", "tf32", "fp16"],
                    help="only the tensor-core convolution cases, at this precision (no API check)")
    args = ap.parse_args()
    if args.gpu_libs:
        GPU_LIBS.extend(["--gpu-libs", args.gpu_libs])
    if args.gpu_precision:
        GPU_LIBS.extend(["--gpu-precision", args.gpu_precision])
        PRECISION.append(args.gpu_precision)
    passed = failed = same = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        for o in ("onnxc_main.o", "ref_main.o"):  # from an earlier run with --work
            if os.path.exists(os.path.join(work, o)):
                os.remove(os.path.join(work, o))
        for name, fn in CASES.items():
            if args.only and args.only != name or PRECISION and name not in PRECISION_CASES:
                continue
            try:
                problem = check(name, fn, os.path.abspath(args.compiler), work)
            except Exception as e:  # a failed compile or run is a failed case
                problem = str(e)
            if problem == SAME:
                same += 1
                print(f"same {name}: the .cu without the libraries (built in the run without --gpu-libs)")
            elif problem:
                failed += 1
                print(f"FAIL {name}: {problem}")
            else:
                passed += 1
                print(f"ok   {name}")
        # The checks beyond the cases, each counted like a case.
        extra = [("fp16_range", fp16_range_check, PRECISION == ["fp16"] and not args.only),
                 ("profile", profile_check, not GPU_LIBS and (not args.only or args.only == "profile")),
                 ("api", api_check, not PRECISION and (not args.only or args.only == "api"))]
        for name, fn, wanted in extra:
            if not wanted:
                continue
            try:
                problem = fn(os.path.abspath(args.compiler), work)
            except Exception as e:  # a failed compile or run is a failed check
                problem = str(e)
            passed, failed = (passed, failed + 1) if problem else (passed + 1, failed)
            print(f"FAIL {name}: {problem}" if problem else f"ok   {name}")
    print(f"{passed} passed, {failed} failed" + (f", {same} same (not built: no library call)" if same else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
