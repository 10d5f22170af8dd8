#!/usr/bin/env python3
"""End-to-end tests of the recognize pass (passes/recognize.cc): LayerNormalization,
RMSNormalization, Gelu and Attention found again in the chains PyTorch exports them as.

Each case is a small torch.nn module (Debian's PyTorch, the project's exporter) exported at
opset 14 (nn.LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, nn.GELU as
Div/Erf/Add/Mul/Mul or the tanh form, attention as MatMul/Div/Add/Softmax/MatMul between
the heads' Reshape/Transpose; a small Whisper encoder also checks its 1-D convolutions run as
2-D ones, passes/simplify.cc) or 17 (LayerNormalization exported as such, GELU still
spelled out), or a graph written with onnx.helper at opset 18 (ReduceMean's axes as an
input). For each:
  - compile-model --dump-ir --emit exe: the final IR must hold exactly the expected count of
    each named op (fused groups count each step: "MatMul+Add+Gelu" holds one Gelu), so a
    chain that stops being recognised, or a chain that must not be (a non-trailing mean, an
    intermediate that is also a graph output, a constant that is not GELU's), fails;
  - the binary's outputs must match ONNX Runtime's (tests/ort/ort_run.py) and PyTorch's on
    the same random inputs (rtol 1e-4, atol 1e-5).
Usage: .venv/bin/python tests/passes/recognize_models.py --compiler build/compile-model
       [--cflags "-O1 -Werror"] [--filter RE] [--work DIR]
Ends with "N passed, M failed"; exit status 0 iff M == 0.
"""
import argparse
import collections
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "ort", "ort_run.py")
OPS = ["LayerNormalization", "RMSNormalization", "Gelu", "Attention", "ReduceMean", "Erf", "Tanh", "Sqrt", "Pow", "Softmax"]


def torch_cases():
    import torch
    from torch import nn

    class Encoder(nn.Module):  # pre-LN feed-forward block with a residual and a final LN
        def __init__(self, affine=True):
            super().__init__()
            self.ln1 = nn.LayerNorm(32)
            self.fc1 = nn.Linear(32, 64)
            self.act = nn.GELU()
            self.fc2 = nn.Linear(64, 32)
            self.ln2 = nn.LayerNorm(32, elementwise_affine=affine)

        def forward(self, x):
            return self.ln2(x + self.fc2(self.act(self.fc1(self.ln1(x)))))

    class EncoderNoAffine(Encoder):  # the last LN without Scale and B (PyTorch 1.13 exports
        def __init__(self):          # that form at opset 17 with an empty Scale input: opset 14 only)
            super().__init__(affine=False)

    class GeluTanh(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(32, 48)
            self.act = nn.GELU(approximate="tanh")

        def forward(self, x):
            return self.act(self.fc(x))

    class RMSNorm(nn.Module):  # T5 / LLaMA style
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.rand(32) + 0.5)

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    class TwoDims(nn.Module):  # normalised over the last two dims: axis 1, Scale [7, 32]
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm((7, 32))
            with torch.no_grad():
                self.ln.weight.uniform_(0.5, 1.5)
                self.ln.bias.uniform_(-0.5, 0.5)

        def forward(self, x):
            return self.ln(x)

    class Handwritten(nn.Module):  # other spellings: d*d, gamma * y + beta, x * (1/√2), 0.5 first
        def __init__(self):
            super().__init__()
            self.gamma = nn.Parameter(torch.rand(1, 1, 32) + 0.5)
            self.beta = nn.Parameter(torch.rand(32) - 0.5)

        def forward(self, x):
            d = x - x.mean(-1, keepdim=True)
            y = self.gamma * (d / torch.sqrt((d * d).mean(-1, keepdim=True) + 1e-5)) + self.beta
            return 0.5 * y * (1.0 + torch.erf(y * 0.7071067811865476))

    class NotPatterns(nn.Module):  # chains that must not be taken whole
        def forward(self, x):
            m = x.mean(1, keepdim=True)  # a mean over a dim that is not the last
            d = x - m
            a = d / torch.sqrt((d * d).mean(1, keepdim=True) + 1e-5)
            # The centred value is also an output: no LayerNormalization, but what follows it
            # is an RMSNormalization of that value.
            e = x - x.mean(-1, keepdim=True)
            b = e / torch.sqrt(e.pow(2).mean(-1, keepdim=True) + 1e-5)
            c = 0.5 * x * (1.0 + torch.erf(x / 1.5))  # not GELU's constant
            v = x.pow(2).mean(-1, keepdim=True)  # the mean square is also an output
            f = x / torch.sqrt(v + 1e-6)
            return a, b, c, e, v, f

    class SelfAttention(nn.Module):  # BERT-style: one QKV product split, heads joined back
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(32, 96)
            self.o = nn.Linear(32, 32)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, -1)
            heads = lambda t: t.reshape(B, T, 4, 8).transpose(1, 2)
            q, k, v = heads(q), heads(k), heads(v)
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(8), -1) @ v
            return self.o(a.transpose(1, 2).reshape(B, T, C))

    class MaskedAttention(nn.Module):  # separate Q/K/V, scale as a Mul, an additive padding mask
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(32, 32), nn.Linear(32, 32), nn.Linear(32, 48)
            mask = torch.zeros(2, 1, 1, 7)
            mask[1, :, :, 5:] = -10000.0  # the second sequence is 5 tokens long
            self.register_buffer("mask", mask)

        def forward(self, x):
            B, T, _ = x.shape
            q = self.q(x).reshape(B, T, 4, 8).transpose(1, 2)
            k = self.k(x).reshape(B, T, 4, 8).transpose(1, 2)
            v = self.v(x).reshape(B, T, 4, 12).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-1, -2) * 0.25 + self.mask, dim=-1) @ v
            return a.transpose(1, 2).reshape(B, T, 48)

    class CausalHeads(nn.Module):  # a -inf causal mask; the heads stay 4-D (no join): 4-D form
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(32, 96)
            self.register_buffer("causal", torch.full((7, 7), float("-inf")).triu(1))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).reshape(B, T, 3, 4, 8).permute(2, 0, 3, 1, 4).unbind(0)
            s = (q @ k.transpose(-1, -2)) / math.sqrt(8) + self.causal
            return torch.softmax(s, -1) @ v

    class TorchMHA(nn.Module):  # nn.MultiheadAttention as torchvision's ViT uses it, batch 1
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(32, 4, batch_first=True)

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    class WhisperAttention(nn.Module):  # OpenAI's Whisper: q and kᵀ each scaled by D^-1/4, k without bias
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(32, 32), nn.Linear(32, 32, bias=False), nn.Linear(32, 32)

        def forward(self, x):
            B, T, _ = x.shape
            s = 8 ** -0.25
            q = self.q(x).view(B, T, 4, -1).permute(0, 2, 1, 3) * s
            k = self.k(x).view(B, T, 4, -1).permute(0, 2, 3, 1) * s
            v = self.v(x).view(B, T, 4, -1).permute(0, 2, 1, 3)
            return (torch.softmax(q @ k, -1) @ v).permute(0, 2, 1, 3).flatten(start_dim=2)

    class ScaledProjection(nn.Module):  # Hugging Face's Whisper/BART: q's projection times D^-1/2, a mask
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(32, 32), nn.Linear(32, 32, bias=False), nn.Linear(32, 32)
            mask = torch.zeros(1, 1, 1, 7)
            mask[..., 6:] = -10000.0
            self.register_buffer("mask", mask)

        def forward(self, x):
            B, T, _ = x.shape
            heads = lambda t: t.view(B, T, 4, 8).transpose(1, 2)
            q, k, v = heads(self.q(x) * 8 ** -0.5), heads(self.k(x)), heads(self.v(x))
            a = torch.softmax(q @ k.transpose(-1, -2) + self.mask, -1) @ v
            return a.transpose(1, 2).reshape(B, T, 32)

    class WhisperEncoder(nn.Module):  # Whisper's audio encoder, small: 1-D conv front end, one pre-LN block
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv1d(10, 32, 3, padding=1), nn.Conv1d(32, 32, 3, stride=2, padding=1)
            self.ln1, self.ln2, self.ln_post = nn.LayerNorm(32), nn.LayerNorm(32), nn.LayerNorm(32)
            self.attn, self.o = WhisperAttention(), nn.Linear(32, 32)
            self.mlp = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))

        def forward(self, mel):
            x = nn.functional.gelu(self.conv2(nn.functional.gelu(self.conv1(mel)))).permute(0, 2, 1)
            x = x + self.o(self.attn(self.ln1(x)))
            return self.ln_post(x + self.mlp(self.ln2(x)))

    class WhereMasks(nn.Module):  # Hugging Face's GPT-2: Where(causal, scores, finfo.min), then a padding mask
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(32, 96)
            self.register_buffer("bias", torch.tril(torch.ones(7, 7, dtype=torch.bool)).view(1, 1, 7, 7))
            pad = torch.zeros(2, 1, 1, 7)
            pad[1, ..., 5:] = torch.finfo(torch.float32).min
            self.register_buffer("pad", pad)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, -1)
            heads = lambda t: t.reshape(B, T, 4, 8).transpose(1, 2)
            q, k, v = heads(q), heads(k), heads(v)
            s = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], 8 ** 0.5)
            s = torch.where(self.bias, s, torch.full([], torch.finfo(torch.float32).min))
            return (torch.softmax(s + self.pad, -1) @ v).transpose(1, 2).reshape(B, T, C)

    class WindowMask(nn.Module):  # a boolean band (each query sees itself and 2 keys either side) by Where
        def __init__(self):
            super().__init__()
            i = torch.arange(7)
            self.register_buffer("band", ((i[None, :] - i[:, None]).abs() <= 2).view(1, 1, 7, 7))

        def forward(self, x):
            B, T, C = x.shape
            q = x.reshape(B, T, 4, 8).transpose(1, 2)
            s = torch.where(self.band, q @ q.transpose(-1, -2) * 0.3, torch.full([], float("-inf")))
            return torch.softmax(s, -1) @ q

    class FirstKeyOnly(nn.Module):  # a [1, 1, 1, T] boolean mask showing key 0 only: not causal
        def __init__(self):
            super().__init__()
            first = torch.zeros(1, 1, 1, 7, dtype=torch.bool)
            first[..., 0] = True
            self.register_buffer("first", first)

        def forward(self, x):
            q = x.reshape(2, 7, 4, 8).transpose(1, 2)
            s = torch.where(self.first, q @ q.transpose(-1, -2), torch.full([], float("-inf")))
            return torch.softmax(s, -1) @ q

    class NotWhereMasks(nn.Module):  # a fill that does not hide (-100), a row hiding every key
        def __init__(self):
            super().__init__()
            self.register_buffer("causal", torch.tril(torch.ones(7, 7, dtype=torch.bool)))
            rows = torch.ones(7, 7, dtype=torch.bool)
            rows[3] = False
            self.register_buffer("rows", rows)

        def forward(self, x):
            q = x.reshape(2, 7, 4, 8).transpose(1, 2)
            a = torch.softmax(torch.where(self.causal, q @ q.transpose(-1, -2), torch.full([], -100.0)), -1) @ q
            b = torch.softmax(torch.where(self.rows, q @ q.transpose(-1, -2), torch.full([], -1e38)), -1) @ q
            return a, b

    class NotAttention(nn.Module):  # softmax over queries; scores also an output
        def forward(self, x):
            q = x.reshape(2, 7, 4, 8).transpose(1, 2)
            a = torch.softmax(q @ q.transpose(-1, -2), 2) @ q
            s = q @ q.transpose(-1, -2) * 0.5
            b = torch.softmax(s, -1) @ q
            return a, b, s

    x = lambda *s: np.random.default_rng(7).standard_normal(s).astype(np.float32)
    none = {"ReduceMean": 0, "Erf": 0, "Tanh": 0, "Sqrt": 0, "Pow": 0}
    att = {"Softmax": 0, "LayerNormalization": 0}
    return [
        ("encoder_opset14", EncoderNoAffine, 14, x(2, 7, 32), dict(none, LayerNormalization=2, Gelu=1)),
        ("encoder_opset17", Encoder, 17, x(2, 7, 32), dict(none, LayerNormalization=2, Gelu=1)),
        ("gelu_tanh_opset14", GeluTanh, 14, x(3, 32), dict(none, Gelu=1)),
        ("rmsnorm_opset14", RMSNorm, 14, x(2, 5, 32), dict(none, RMSNormalization=1, LayerNormalization=0)),
        ("layernorm_two_dims_opset14", TwoDims, 14, x(2, 7, 32), dict(none, LayerNormalization=1)),
        ("handwritten_opset14", Handwritten, 14, x(2, 5, 32), dict(none, LayerNormalization=1, Gelu=1)),
        ("not_patterns_opset14", NotPatterns, 14, x(2, 5, 32),
         {"LayerNormalization": 0, "RMSNormalization": 1, "Gelu": 0, "Erf": 1, "ReduceMean": 4, "Sqrt": 2}),
        ("attention_qkv_split_opset14", SelfAttention, 14, x(2, 7, 32), dict(att, Attention=1, Transpose=0, Reshape=0, causal=0)),
        ("attention_padding_mask_opset14", MaskedAttention, 14, x(2, 7, 32), dict(att, Attention=1, Transpose=0)),
        ("attention_causal_4d_opset14", CausalHeads, 14, x(2, 7, 32), dict(att, Attention=1, causal=1)),
        ("attention_where_masks_opset14", WhereMasks, 14, x(2, 7, 32), dict(att, Attention=1, causal=1, Where=0, Transpose=0)),
        ("attention_where_window_opset14", WindowMask, 14, x(2, 7, 32), dict(att, Attention=1, causal=0, Where=0)),
        ("attention_where_first_key_opset14", FirstKeyOnly, 14, x(2, 7, 32), dict(att, Attention=1, causal=0)),
        ("attention_where_not_patterns_opset14", NotWhereMasks, 14, x(2, 7, 32), {"Attention": 0, "Softmax": 2, "Where": 2}),
        ("attention_torch_mha_opset14", TorchMHA, 14, x(1, 9, 32), dict(att, Attention=1)),
        ("attention_whisper_opset14", WhisperAttention, 14, x(2, 7, 32), dict(att, Attention=1, Transpose=0, Reshape=0, Mul=0)),
        ("attention_scaled_projection_opset14", ScaledProjection, 14, x(2, 7, 32), dict(att, Attention=1, Transpose=0, Reshape=0, Mul=0)),
        ("whisper_encoder_opset14", WhisperEncoder, 14, x(1, 10, 18),
         dict(att, Attention=1, LayerNormalization=3, Gelu=3, Conv=2, Reshape=2, Erf=0)),
        ("attention_not_patterns_opset14", NotAttention, 14, x(2, 7, 32), {"Attention": 0, "Softmax": 2}),
    ]


def export(module_cls, opset, x, path):
    import torch
    torch.manual_seed(3)
    m = module_cls().eval()
    with torch.no_grad():
        r = m(torch.from_numpy(x))
    torch.onnx.export(m, torch.from_numpy(x), path, opset_version=opset, input_names=["x"])
    outs = r if isinstance(r, tuple) else (r,)
    return [o.numpy() for o in outs]


def opset18_layer_norm(path):
    """LayerNorm's chain at opset 18, where ReduceMean takes its axes as an input."""
    rng = np.random.default_rng(5)
    c = lambda name, a: numpy_helper.from_array(np.asarray(a), name)
    inits = [c("axes", np.array([-1], np.int64)), c("two", np.float32(2)), c("eps", np.float32(1e-5)),
             c("gamma", (rng.random(16) + 0.5).astype(np.float32)), c("beta", (rng.random(16) - 0.5).astype(np.float32))]
    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["m"]), helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Pow", ["d", "two"], ["p"]), helper.make_node("ReduceMean", ["p", "axes"], ["v"]),
             helper.make_node("Add", ["v", "eps"], ["e"]), helper.make_node("Sqrt", ["e"], ["s"]),
             helper.make_node("Div", ["d", "s"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["g"]),
             helper.make_node("Add", ["g", "beta"], ["y"])]
    g = helper.make_graph(nodes, "ln18", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])], inits)
    # IR version 8 (onnx 1.13, opset 18): ONNX Runtime 1.31 reads up to 13, onnx 1.23 writes 14.
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), path)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    gm, bt = (numpy_helper.to_array(i) for i in inits[3:])
    d = x.astype(np.float64) - x.mean(-1, keepdims=True)
    want = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * gm + bt
    return x, [want.astype(np.float32)]


def ir_op_counts(dump):
    counts = collections.Counter()
    for line in dump.splitlines():
        m = re.match(r"\s+%\S+ : \S+(?: [A-Z]\w*)?(?: @\d+)?(?: \(in %\S+\))? = ([\w.+]+)\(", line)  # [A-Z]\w*: a layout
        if m:
            counts.update(m.group(1).split("+"))
        elif re.match(r"\s+%\S+: Attention .*, causal[,;]", line):  # the kernel's plan: is_causal
            counts["causal"] += 1
    return counts


def compare(name, got, want, rtol, atol):
    if got.shape != want.shape:
        return f"{name}: shape {list(got.shape)}, expected {list(want.shape)}"
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    bad = err > atol + rtol * np.abs(want.astype(np.float64))
    if bad.any():
        i = np.unravel_index(np.argmax(err), err.shape)
        return f"{name}: {int(bad.sum())} of {err.size} elements differ, worst at {list(i)}: {got[i]} vs {want[i]}"
    return ""


def run(cmd, timeout=600):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def run_case(name, make, expect, args, work):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    x, ref = make(path)  # the model, its input and an independent reference (PyTorch or numpy)
    xf = os.path.join(d, "x.npy")
    np.save(xf, x)
    model = onnx.load(path)
    outs = [o.name for o in model.graph.output]
    p = run([sys.executable, ORT_RUN, path, os.path.join(d, "ort"), f"x={xf}"])
    if p.returncode != 0:
        return [f"ONNX Runtime failed: {(p.stderr or p.stdout).strip()[:1000]}"], ""
    ort = [np.load(os.path.join(d, "ort", f"{k}.npy")) for k in range(len(outs))]
    out = os.path.join(d, "out")
    p = run([args.compiler, path, "-o", out, "--name", "m", "--emit", "exe", "--dump-ir", "--cflags", args.cflags])
    if p.returncode != 0:
        return [f"compile-model exit {p.returncode}: {(p.stdout + p.stderr).strip()[-2000:]}"], ""
    counts = ir_op_counts(p.stdout)
    problems = [f"final IR has {counts[op]} {op}, expected {n}" for op, n in expect.items() if counts[op] != n]
    exe = [os.path.join(out, "m"), "--quiet", "--input", f"x={xf}"]
    got = []
    for k, o in enumerate(outs):
        got.append(os.path.join(d, f"out_{k}.npy"))
        exe += ["--output", f"{o}={got[-1]}"]
    p = run(exe, timeout=60)
    if p.returncode != 0 or "runtime error:" in p.stderr or "Sanitizer" in p.stderr:
        return problems + [f"binary exit {p.returncode}: {(p.stdout + p.stderr).strip()[:2000]}"], ""
    for k, o in enumerate(outs):
        g = np.load(got[k])
        for who, want in (("ONNX Runtime", ort[k]), ("reference", ref[k])):
            msg = compare(f"{o} vs {who}", g, want, args.rtol, args.atol)
            if msg:
                problems.append(msg)
    shown = ", ".join(f"{op} {counts[op]}" for op in OPS if counts[op])
    return problems, f"IR: {shown or 'none of ' + '/'.join(OPS)}; matches ONNX Runtime and the reference"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--cflags", default="-O1 -Werror")
    ap.add_argument("--filter", default=None)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    cases = [(n, (lambda c=cls, o=op, xx=x: lambda path: (xx, export(c, o, xx, path)))(), e)
             for n, cls, op, x, e in torch_cases()]
    cases.append(("layernorm_opset18_axes_input", opset18_layer_norm,
                  {"LayerNormalization": 1, "ReduceMean": 0, "Sqrt": 0, "Pow": 0}))
    cases = [c for c in cases if not args.filter or re.search(args.filter, c[0])]
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="onnxc-recognize-") as tmp:
        work = args.work or tmp
        for name, make, expect in cases:
            try:
                problems, info = run_case(name, make, expect, args, work)
            except Exception as e:  # a broken case is a failure, not a crash of the runner
                problems, info = [f"runner error {e!r}"], ""
            print(f"{'ok  ' if not problems else 'FAIL'} {name}: {info}")
            for pr in problems:
                print(f"     {pr}")
            passed += not problems
            failed += bool(problems)
            sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
