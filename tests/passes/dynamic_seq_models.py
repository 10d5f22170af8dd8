#!/usr/bin/env python3
"""End-to-end tests of a run-time token count (compile-model --dynamic seq=MAX,
passes/dynamic_dims.h): one build for every sequence length from 1 to MAX.

Small transformers written in torch.nn (Debian's PyTorch, the project's exporter), exported at
opset 14 with the token axis dynamic ("seq"), so that the exports carry PyTorch's
Shape -> Gather -> Concat -> Reshape chains, a causal mask made from the run's length
(ConstantOfShape, Trilu) and position embeddings sliced to it:
  encoder  two post-LN layers, a padding mask given as a second input [1, seq] (BERT's
           additive form), 4 heads of 16;
  decoder  two pre-LN layers, causal, the final LayerNorm and a 100-token head;
  tokens   token ids (int64 [batch, seq]: exported with a dynamic batch too, as Hugging Face
           exports are, and built with --fix-dim batch=1) through an embedding, plus
           positions sliced from a table of MAX, one causal layer.
Each is compiled once with --dynamic seq=80 (MAX) and run by its executable at 1, 17, 77 and 80
tokens (the input files give the length); every output must match ONNX Runtime's on the same
model and inputs (tests/ort/ort_run.py; rtol 1e-4, atol 1e-5) and have the run's length. Then bad
runs: a file of 81 tokens, and two inputs of different lengths, must fail with a message. The
encoder is also built with --emit python and run through its wrapper (the length from the
arrays) at 5 tokens against ONNX Runtime, with the same two bad runs raising ValueError.
Then the token-id model again with a run-time batch too (--dynamic batch=4 --dynamic seq=80):
1x1, 3x17 and 4x80 through the executable, 2x5 through Python, bad files refused; and PyTorch's
nn.TransformerEncoderLayer (whose attention moves the batch to the second axis, merged with the
heads) with both at run time, at 1x1, 2x17 and 3x80.
Usage: .venv/bin/python tests/passes/dynamic_seq_models.py --compiler build/compile-model
       [--cflags "-O1 -Werror"] [--work DIR]
Ends with "N passed, M failed"; exit status 0 iff M == 0.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "ort", "ort_run.py")
MAX, D, H = 80, 64, 4


def export(name, path):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, pre_ln, causal):
            super().__init__()
            self.pre_ln, self.causal = pre_ln, causal
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.fc1, self.fc2, self.act = nn.Linear(D, 2 * D), nn.Linear(2 * D, D), nn.GELU()

        def attention(self, x, mask):
            B, S, _ = x.shape
            q, k, v = self.qkv(x).split(D, -1)
            heads = lambda t: t.reshape(B, S, H, D // H).transpose(1, 2)
            q, k, v = heads(q), heads(k), heads(v)
            s = q @ k.transpose(-1, -2) / math.sqrt(D // H)
            if self.causal:
                s = s + torch.full((S, S), float("-inf")).triu(1)
            if mask is not None:
                s = s + mask[:, None, None, :]
            a = torch.softmax(s, -1) @ v
            return self.proj(a.transpose(1, 2).reshape(B, S, D))

        def forward(self, x, mask=None):
            if self.pre_ln:
                x = x + self.attention(self.ln1(x), mask)
                return x + self.fc2(self.act(self.fc1(self.ln2(x))))
            x = self.ln1(x + self.attention(x, mask))
            return self.ln2(x + self.fc2(self.act(self.fc1(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Block(False, False) for _ in range(2)])

        def forward(self, x, mask):
            for layer in self.layers:
                x = layer(x, mask)
            return x

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Block(True, True) for _ in range(2)])
            self.ln_f, self.head = nn.LayerNorm(D), nn.Linear(D, 100, bias=False)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.head(self.ln_f(x))

    class Tokens(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.pos = nn.Embedding(100, D), nn.Parameter(torch.randn(MAX, D))
            self.block = Block(True, True)

        def forward(self, ids):
            return self.block(self.emb(ids) + self.pos[: ids.shape[1]])

    torch.manual_seed(len(name))
    if name == "mha":  # PyTorch's own layer: nn.MultiheadAttention moves the batch to axis 1
        m = nn.TransformerEncoderLayer(D, H, 2 * D, dropout=0.0, batch_first=True).eval()
        torch.onnx.export(m, (torch.randn(2, 5, D),), path, opset_version=14, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
        return ["x"]
    m = {"encoder": Encoder, "decoder": Decoder, "tokens": Tokens}[name]().eval()
    if name == "tokens":
        args, names = (torch.zeros(1, 5, dtype=torch.int64),), ["ids"]
    elif name == "encoder":
        args, names = (torch.randn(1, 5, D), torch.zeros(1, 5)), ["x", "mask"]
    else:
        args, names = (torch.randn(1, 5, D),), ["x"]
    axes = {n: {0: "batch", 1: "seq"} if name == "tokens" else {1: "seq"} for n in names + ["y"]}
    torch.onnx.export(m, args, path, opset_version=14, input_names=names, output_names=["y"], dynamic_axes=axes)
    return names


def inputs(name, names, n, rng, batch=1):
    if name == "tokens":
        return {"ids": rng.integers(0, 100, (batch, n)).astype(np.int64)}
    x = rng.standard_normal((1, n, D)).astype(np.float32)
    if name == "decoder":
        return {"x": x}
    mask = np.zeros((1, n), np.float32)
    mask[0, n - n // 4:] = -10000.0  # the last quarter is padding
    return {"x": x, "mask": mask}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compiler", required=True)
    ap.add_argument("--cflags", default="-O1")
    ap.add_argument("--work")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="onnxc-dynseq-")
    # The Python wrappers' libraries without the sanitizers' flags: an ASan library cannot be
    # loaded into Python (the executables ran the same generated C under them).
    py_cflags = " ".join(f for f in args.cflags.split() if not f.startswith(("-fsanitize", "-fno-sanitize")))
    os.makedirs(work, exist_ok=True)
    passed = failed = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail and not ok else ""), flush=True)
        passed, failed = passed + ok, failed + (not ok)

    def against_ort(exe, model, d, tag, arrays, what):
        """The executable and ONNX Runtime on the same inputs (saved as NAME_TAG.npy): output y."""
        files = []
        for k, v in arrays.items():
            f = os.path.join(d, f"{k}_{tag}.npy")
            np.save(f, v)
            files.append(f"{k}={f}")
        y = os.path.join(d, f"y_{tag}.npy")
        p = run([exe, "--quiet", "--output", f"y={y}"] + [a for f in files for a in ("--input", f)])
        q = run([sys.executable, ORT_RUN, model, os.path.join(d, f"ort_{tag}")] + files)
        if p.returncode or q.returncode:
            check(False, f"{what}: runs (and ONNX Runtime)", p.stdout + p.stderr + q.stderr)
            return
        got, ref = np.load(y), np.load(os.path.join(d, f"ort_{tag}", "0.npy"))
        ok = got.shape == ref.shape and np.allclose(got, ref, rtol=1e-4, atol=1e-5)
        err = float(np.abs(got - ref).max()) if got.shape == ref.shape else float("nan")
        check(ok, f"{what}: {list(got.shape)}, max |onnxc - ORT| {err:.2e}", f"shapes {got.shape} and {ref.shape}")

    rng = np.random.default_rng(7)
    for name in ("encoder", "decoder", "tokens"):
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, name + ".onnx")
        names = export(name, path)
        out = os.path.join(d, "build")
        fix = ["--fix-dim", "batch=1"] if name == "tokens" else []
        if fix:  # both symbolic: the batch must be fixed (or kept) too, and the message says how
            p = run([args.compiler, path, "-o", out, "--dynamic", f"seq={MAX}"])
            check(p.returncode != 0 and "fix it with --fix-dim batch=N" in p.stderr, f"{name}: the symbolic batch named",
                  f"exit {p.returncode}: {p.stderr}")
        p = run([args.compiler, path, "-o", out, "--emit", "exe", "--dynamic", f"seq={MAX}", f"--cflags={args.cflags}"] + fix)
        check(p.returncode == 0 and "dynamic: " in p.stdout, f"{name}: compiles once for seq 1..{MAX}", p.stdout[-2000:] + p.stderr[-2000:])
        if p.returncode:
            continue
        exe = os.path.join(out, name)
        for n in (1, 17, 77, MAX):
            against_ort(exe, path, d, str(n), inputs(name, names, n, rng), f"{name} at {n} tokens")
        # Bad runs: too many tokens; inputs of different lengths.
        long_inputs = inputs(name, names, MAX + 1, rng)
        files = []
        for k, v in long_inputs.items():
            f = os.path.join(d, f"{k}_long.npy")
            np.save(f, v)
            files.append(f"{k}={f}")
        p = run([exe, "--quiet"] + [a for f in files for a in ("--input", f)])
        check(p.returncode != 0 and f"expected 1 to {MAX} rows" in p.stderr, f"{name}: {MAX + 1} tokens refused",
              f"exit {p.returncode}: {p.stderr}")
        if len(names) > 1:
            a = inputs(name, names, 5, rng)
            b = inputs(name, names, 4, rng)
            fa, fb = os.path.join(d, "x_5.npy"), os.path.join(d, "mask_4.npy")
            np.save(fa, a["x"])
            np.save(fb, b["mask"])
            p = run([exe, "--quiet", "--input", f"x={fa}", "--input", f"mask={fb}"])
            check(p.returncode != 0 and "holds 4 rows along dimension 1" in p.stderr, f"{name}: inputs of 5 and 4 tokens refused",
                  f"exit {p.returncode}: {p.stderr}")
    # The Python wrapper of the encoder: the length from the arrays.
    d = os.path.join(work, "encoder")
    path = os.path.join(d, "encoder.onnx")
    if os.path.exists(path):
        out = os.path.join(d, "python")
        p = run([args.compiler, path, "-o", out, "--emit", "python", "--dynamic", f"seq={MAX}", "--name", "encoder_py",
                 f"--cflags={py_cflags}"])
        check(p.returncode == 0, "encoder: --emit python compiles", p.stdout[-2000:] + p.stderr[-2000:])
        if p.returncode == 0:
            sys.path.insert(0, out)
            import encoder_py
            ins = inputs("encoder", ["x", "mask"], 5, rng)
            files = []
            for k, v in ins.items():
                f = os.path.join(d, f"py_{k}.npy")
                np.save(f, v)
                files.append(f"{k}={f}")
            q = run([sys.executable, ORT_RUN, path, os.path.join(d, "ort_py")] + files)
            with encoder_py.Model() as m:
                y = m.run(ins["x"], ins["mask"])
                ref = np.load(os.path.join(d, "ort_py", "0.npy")) if q.returncode == 0 else None
                check(ref is not None and y.shape == ref.shape and np.allclose(y, ref, rtol=1e-4, atol=1e-5),
                      f"encoder through Python at 5 tokens: {list(y.shape)}", q.stderr)
                for what, a, b, expect in ((f"{MAX + 1} tokens", MAX + 1, MAX + 1, f"of 1 to {MAX} rows along dimension 1"),
                                           ("5 and 4 tokens", 5, 4, "a run's inputs have one run-time size")):
                    try:
                        m.run(inputs("encoder", [], a, rng)["x"], inputs("encoder", [], b, rng)["mask"])
                        check(False, f"encoder through Python: {what} refused", "no error")
                    except ValueError as e:
                        check(expect in str(e), f"encoder through Python: {what} refused", str(e))
    # Both at run time: the token-id model (batch and seq symbolic) built once with --dynamic
    # batch=4 --dynamic seq=MAX, through the executable and the Python wrapper.
    d = os.path.join(work, "tokens")
    path = os.path.join(d, "tokens.onnx")
    built = {}
    if os.path.exists(path):
        for emit, out in (("exe", os.path.join(d, "dims")), ("python", os.path.join(d, "dims_py"))):
            cflags = args.cflags if emit == "exe" else py_cflags
            p = run([args.compiler, path, "-o", out, "--emit", emit, "--dynamic", "batch=4", "--dynamic", f"seq={MAX}", "--name",
                     "tokens_dims", f"--cflags={cflags}"])
            check(p.returncode == 0 and "a batch of 1 to 4 items; in each" in p.stdout, f"tokens: --emit {emit} compiles for 1..4 items of "
                  f"1..{MAX} tokens", p.stdout[-2000:] + p.stderr[-2000:])
            built[emit] = p.returncode == 0
    if built.get("exe"):
        exe = os.path.join(d, "dims", "tokens_dims")
        for b, n in ((1, 1), (3, 17), (4, MAX)):
            against_ort(exe, path, d, f"{b}x{n}", inputs("tokens", [], n, rng, b), f"tokens at {b} items of {n}")
        for what, shape, expect in (("5 items", (5, 3), "expected 1 to 4 items (its first dimension, the batch) of 1 to"),
                                    (f"{MAX + 1} tokens", (2, MAX + 1), f"of 1 to {MAX} rows along dimension 1")):
            f = os.path.join(d, "ids_bad.npy")
            np.save(f, np.zeros(shape, np.int64))
            p = run([exe, "--quiet", "--input", f"ids={f}"])
            check(p.returncode != 0 and expect in p.stderr, f"tokens: {what} refused", f"exit {p.returncode}: {p.stderr}")
        raw = os.path.join(d, "ids.bin")
        np.zeros((2, 3), np.int64).tofile(raw)
        p = run([exe, "--quiet", "--input", f"ids={raw}"])
        check(p.returncode != 0 and "give a .npy file" in p.stderr, "tokens: a raw file refused (its size gives b * n only)",
              f"exit {p.returncode}: {p.stderr}")
    if built.get("python"):
        sys.path.insert(0, os.path.join(d, "dims_py"))
        import tokens_dims
        ids = inputs("tokens", [], 5, rng, 2)["ids"]
        f = os.path.join(d, "py_ids.npy")
        np.save(f, ids)
        q = run([sys.executable, ORT_RUN, path, os.path.join(d, "ort_py"), f"ids={f}"])
        with tokens_dims.Model() as m:
            y = m.run(ids)
            ref = np.load(os.path.join(d, "ort_py", "0.npy")) if q.returncode == 0 else None
            check(ref is not None and y.shape == ref.shape and np.allclose(y, ref, rtol=1e-4, atol=1e-5),
                  f"tokens through Python at 2 items of 5: {list(y.shape)}", q.stderr)
            try:
                m.run(np.zeros((5, 3), np.int64))
                check(False, "tokens through Python: 5 items refused", "no error")
            except ValueError as e:
                check("a batch b of 1 to 4 items" in str(e), "tokens through Python: 5 items refused", str(e))
    # PyTorch's nn.TransformerEncoderLayer (its attention holds the items along the second axis,
    # merged with the heads) with both sizes at run time, through the executable.
    d = os.path.join(work, "mha")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "mha.onnx")
    export("mha", path)
    out = os.path.join(d, "build")
    p = run([args.compiler, path, "-o", out, "--dynamic", "batch=3", "--dynamic", f"seq={MAX}", f"--cflags={args.cflags}"])
    check(p.returncode == 0, f"mha: compiles for 1..3 items of 1..{MAX} tokens", p.stdout[-2000:] + p.stderr[-2000:])
    for b, n in ((1, 1), (2, 17), (3, MAX)) if p.returncode == 0 else ():
        against_ort(os.path.join(out, "mha"), path, d, f"{b}x{n}", {"x": rng.standard_normal((b, n, D)).astype(np.float32)},
                    f"mha at {b} items of {n}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
