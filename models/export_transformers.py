#!/usr/bin/python3
"""Transformer zoo exporter: BERT-base, DistilBERT, GPT-2 small and the Whisper tiny and base audio
encoders written in torch.nn -> ONNX files plus a fixed input and PyTorch's own output, in the
zoo's format (models/export_zoo.py), for the benchmark (bench/run.sh --models bert_base distilbert
gpt2_small whisper_tiny_enc whisper_base_enc).

The architectures are those of the published configurations, written here in torch.nn (Debian's
PyTorch 1.13 is the exporter; no hub access, random weights):
  bert_base   12 post-LN encoder layers, 768 wide, 12 heads, feed-forward 3072, GELU (erf), with
              BERT's extended attention mask: an additive [1, 1, 1, T] constant that masks the
              last 16 of the 128 tokens (a padded batch entry) with -10000;
  distilbert  the same with 6 layers;
  gpt2_small  12 pre-LN decoder layers, 768 wide, 12 heads, feed-forward 3072, GELU (tanh form),
              an additive causal mask (-inf above the diagonal), the final LayerNorm and the
              language-model head (768 x 50257, no bias);
  whisper_tiny_enc, whisper_base_enc
              Whisper's audio encoder (4 layers 384 wide, 6 heads; 6 layers 512 wide, 8 heads;
              feed-forward 4x, erf GELU): two 1-D convolutions over the log-mel frames (80 ->
              width, kernel 3; the second with stride 2), each with GELU, sinusoidal positions,
              pre-LN layers whose attention scales q and kᵀ each by head_size^-1/4 (k without
              bias), no mask, a final LayerNorm.
The text models take the token embeddings (positions added), float32 [1, 128, 768], as its one input
"input" (the benchmark's engines take one float32 input; an embedding lookup is a gather that
costs nothing next to the layers) and gives "output": the last hidden states, [1, 128, 768]
(bert_base, distilbert), or the logits, [1, 128, 50257] (gpt2_small). The Whisper encoders take
2 log-mel frames per token, [1, 80, 256], and give [1, 128, width]; Whisper itself always
encodes 30 seconds, 3000 frames: --tokens 1500. Exported at opset 14 (as
PyTorch spells LayerNorm, GELU and attention there: ReduceMean/Sub/Pow..., Erf or Tanh,
MatMul/Div/Add/Softmax/MatMul between head Reshape/Transposes), or at --opset 17 (LayerNormalization
as such).
Writes NAME.onnx, NAME.input.npy (standard normal, seeded) and NAME.ref.npy (PyTorch's output on
it) to --out (models/out), seeded per model from the name, torch on 2 threads; files go under
temporary names first, as export_zoo.py does. --tokens N (other than 128) writes NAME_tN.* at N
tokens, the same weights (the padding mask masks the last eighth of the tokens); --batch N (other
than 1) NAME_bN.* with N sequences, the same weights and masks for each. --dynamic-seq writes
NAME_dyn.* with the token axis as the symbol "seq" (for compile-model --dynamic seq=MAX; not the
Whisper encoders, whose input has 2 frames per token): the masks
are then sliced to the run's length (the first n of the T positions' mask, as GPT-2 slices its bias). Gaps: Hugging Face's own modules are not here
(their GPT-2 masks, Where(causal, scores, lowest float), are written in tests/passes/recognize_models.py).

Usage: /usr/bin/python3 models/export_transformers.py [--out DIR] [--force] [--opset N] [--tokens N] [--batch N] [--dynamic-seq] [NAME ...]
"""

import argparse
import math
import os
import sys
import time
import zlib

import numpy as np
import torch
from torch import nn

T, D, H, FF = 128, 768, 12, 3072  # T: the token count, --tokens
DYNAMIC = False  # --dynamic-seq: the token axis exported as the symbol "seq"
BATCH = 1  # --batch


class Block(nn.Module):
    def __init__(self, pre_ln, gelu):
        super().__init__()
        self.pre_ln = pre_ln
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.fc1, self.fc2, self.act = nn.Linear(D, FF), nn.Linear(FF, D), nn.GELU(approximate=gelu)

    def attention(self, x, mask):
        B, S, _ = x.shape
        q, k, v = self.qkv(x).split(D, -1)
        heads = lambda t: t.reshape(B, S, H, D // H).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D // H) + mask, -1) @ v
        return self.proj(a.transpose(1, 2).reshape(B, S, D))

    def forward(self, x, mask):
        if self.pre_ln:
            x = x + self.attention(self.ln1(x), mask)
            return x + self.fc2(self.act(self.fc1(self.ln2(x))))
        x = self.ln1(x + self.attention(x, mask))
        return self.ln2(x + self.fc2(self.act(self.fc1(x))))


class Encoder(nn.Module):  # BERT / DistilBERT
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList([Block(False, "none") for _ in range(layers)])
        mask = torch.zeros(1, 1, 1, T)
        mask[..., T - T // 8:] = -10000.0
        self.register_buffer("mask", mask)

    def forward(self, x):
        mask = self.mask[..., : x.shape[1]] if DYNAMIC else self.mask
        for layer in self.layers:
            x = layer(x, mask)
        return x


class Decoder(nn.Module):  # GPT-2
    def __init__(self, layers, vocab):
        super().__init__()
        self.layers = nn.ModuleList([Block(True, "tanh") for _ in range(layers)])
        self.ln_f, self.head = nn.LayerNorm(D), nn.Linear(D, vocab, bias=False)
        self.register_buffer("mask", torch.full((T, T), float("-inf")).triu(1))

    def forward(self, x):
        mask = self.mask[: x.shape[1], : x.shape[1]] if DYNAMIC else self.mask
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(self.ln_f(x))


class WhisperBlock(nn.Module):  # pre-LN; q, k, v apart (k without bias), q and kᵀ each scaled by d^-1/4
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.out = nn.Linear(d, d), nn.Linear(d, d, bias=False), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_ln, self.mlp_ln = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def attention(self, x):
        B, S, d = x.shape
        s = (d // self.heads) ** -0.25
        q = self.q(x).view(B, S, self.heads, -1).permute(0, 2, 1, 3) * s
        k = self.k(x).view(B, S, self.heads, -1).permute(0, 2, 3, 1) * s
        v = self.v(x).view(B, S, self.heads, -1).permute(0, 2, 1, 3)
        return self.out((torch.softmax(q @ k, -1) @ v).permute(0, 2, 1, 3).flatten(start_dim=2))

    def forward(self, x):
        x = x + self.attention(self.attn_ln(x))
        return x + self.mlp(self.mlp_ln(x))


class WhisperEncoder(nn.Module):  # the audio encoder: 2 convolutions, sinusoidal positions, blocks, a final LN
    def __init__(self, d, heads, layers):
        super().__init__()
        self.input_shape = (MELS, 2 * T)  # one item's
        self.conv1, self.conv2 = nn.Conv1d(MELS, d, 3, padding=1), nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.blocks = nn.ModuleList([WhisperBlock(d, heads) for _ in range(layers)])
        self.ln_post = nn.LayerNorm(d)
        step = math.log(10000) / (d // 2 - 1)
        t = torch.arange(T, dtype=torch.float32)[:, None] * torch.exp(-step * torch.arange(d // 2, dtype=torch.float32))[None, :]
        self.register_buffer("positions", torch.cat([torch.sin(t), torch.cos(t)], 1))

    def forward(self, mel):
        x = nn.functional.gelu(self.conv2(nn.functional.gelu(self.conv1(mel))))
        x = x.permute(0, 2, 1) + self.positions
        for b in self.blocks:
            x = b(x)
        return self.ln_post(x)


MELS = 80  # Whisper's log-mel bins
MODELS = {
    "bert_base": lambda: Encoder(12),
    "distilbert": lambda: Encoder(6),
    "gpt2_small": lambda: Decoder(12, 50257),
    "whisper_tiny_enc": lambda: WhisperEncoder(384, 6, 4),
    "whisper_base_enc": lambda: WhisperEncoder(512, 8, 6),
}


def export(name, out, opset, force):
    file = (name if T == 128 else f"{name}_t{T}") + (f"_b{BATCH}" if BATCH > 1 else "") + ("_dyn" if DYNAMIC else "")
    paths = [os.path.join(out, file + s) for s in (".onnx", ".input.npy", ".ref.npy")]
    if not force and all(os.path.exists(p) for p in paths):
        print(f"{file}: present")
        return
    t0 = time.time()
    torch.manual_seed(zlib.crc32(name.encode()))
    m = MODELS[name]().eval()
    with torch.no_grad():
        for p in m.parameters():  # LayerNorm weights away from 1 and 0, so that they matter
            if p.dim() == 1 and torch.all(p == 1):
                p.uniform_(0.5, 1.5)
    shape = (BATCH,) + getattr(m, "input_shape", (T, D))
    x = torch.from_numpy(np.random.default_rng(zlib.crc32(name.encode())).standard_normal(shape).astype(np.float32))
    with torch.no_grad():
        ref = m(x).numpy()
    tmp = [p + ".tmp" for p in paths]
    axes = {"input": {1: "seq"}, "output": {1: "seq"}} if DYNAMIC else None
    torch.onnx.export(m, x, tmp[0], opset_version=opset, input_names=["input"], output_names=["output"],
                      do_constant_folding=True, dynamic_axes=axes)
    with open(tmp[1], "wb") as f:
        np.save(f, x.numpy())
    with open(tmp[2], "wb") as f:
        np.save(f, ref)
    for t, p in zip(tmp, paths):
        os.replace(t, p)
    print(f"{file}: exported at opset {opset} in {time.time() - t0:.1f} s, output {list(ref.shape)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--tokens", type=int, default=128, help="sequence length (default 128)")
    ap.add_argument("--batch", type=int, default=1, help="batch size (default 1; other sizes write NAME_bN.*)")
    ap.add_argument("--dynamic-seq", action="store_true",
                    help="export the token axis as the symbol 'seq' (NAME_dyn.*; the masks are sliced to the run's length)")
    ap.add_argument("names", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    if args.dynamic_seq and any(n.startswith("whisper") for n in args.names):
        sys.exit("--dynamic-seq: the Whisper encoders take 2 frames per token, which one 'seq' symbol cannot say; export them at fixed --tokens")
    global T, DYNAMIC, BATCH
    if args.batch < 1 or args.tokens < 1:
        sys.exit("--batch and --tokens must be at least 1")
    T = args.tokens
    BATCH = args.batch
    DYNAMIC = args.dynamic_seq
    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    for n in args.names:
        export(n, args.out, args.opset, args.force)


if __name__ == "__main__":
    main()
