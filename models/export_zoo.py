#!/usr/bin/python3
"""Model zoo exporter: torchvision models -> ONNX files plus a fixed input and PyTorch's own output.

For each model NAME this writes NAME.onnx (torch.onnx.export at the model's opset -- 13 for the
first six, 17 for the newer ones, see MODELS --, do_constant_folding=True, one input "input" of
static shape 1x3x224x224, one output "output" of static shape (1x1000 for the classifiers,
1x21x224x224 for the segmentation model), no dynamic axes, eval mode so Dropout/aux
heads/stochastic depth are gone), NAME.input.npy (float32, an ImageNet-
normalized random image: uniform [0,1) pixels, then (x - mean) / std, so roughly [-2.1, 2.6]) and
NAME.ref.npy (float32, the output computed by torch on that input -- not by any ONNX runtime).
Conventions: weights are random (no network, torchvision cannot download pretrained weights);
everything is seeded per model from a fixed base seed and the model name, torch runs on 2 threads,
so two runs on the same torch/torchvision versions give identical files. --batch N (for the
batch throughput of bench/run_bench.py) writes NAME_bN.onnx, NAME_bN.input.npy and NAME_bN.ref.npy
instead: the same weights (the seeds do not depend on the batch), a static batch of N images
whose first is the batch-1 input, output batch N (N x 1000 for the classifiers). --dynamic-batch
writes NAME_dyn.* (NAME_bN_dyn.* with --batch N): the model exported with a symbolic first
dimension 'batch' on its input and output (dynamic_axes, for compile-model --dynamic), the input
and reference at the given batch. BatchNorm is made
non-trivial: its running statistics are first calibrated on a separate seeded random batch (so a
randomly initialised deep net neither explodes nor vanishes -- depthwise convs with PyTorch's
default init would otherwise shrink activations to almost nothing), then gamma, beta and the running
statistics are perturbed randomly (var stays positive), so BN is never an identity and its folding
is actually exercised. Files are written to a temporary name and renamed, so a model counts as done
only when all three files exist. Gaps: 224x224 only; one batch size per file; outputs of random nets are not
class-meaningful; references depend on the torch version (1.13 on Debian) and on its CPU kernels,
so compare with a tolerance (compare.py), not bit-exactly.

Usage: /usr/bin/python3 models/export_zoo.py [--out DIR] [--force] [--batch N] [--dynamic-batch] [NAME ...]
"""

import argparse
import os
import sys
import time
import zlib

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # nfnet.py, gpunet.py

BASE_SEED = 20240601
INPUT_SHAPE = (1, 3, 224, 224)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _googlenet():
    # aux_logits=False: no auxiliary heads at all; transform_input=False: no input re-normalization ops.
    return torchvision.models.googlenet(weights=None, aux_logits=False, transform_input=False,
                                        init_weights=True)


class SegmentationOutput(torch.nn.Module):
    """torchvision's segmentation models return {"out": ...}: export the tensor itself."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def _deeplabv3():
    # No auxiliary head, no pretrained backbone: output 1x21x224x224 (bilinear Resize of the
    # 28x28 ASPP head, whose backbone's last stages use dilated convs instead of strides).
    return SegmentationOutput(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False))


def _nfnet_f0():
    import nfnet
    return nfnet.nfnet_f0()


def _gpunet_0():
    import gpunet
    return gpunet.gpunet_0()


# name -> (builder, opset, output shape, randomize_zero_params). The first six stay at opset 13
# (their references predate the newer models); the newer ones are exported at opset 17, the newest
# that Debian's torch 1.13 writes. randomize_zero_params: parameters that init left all-zero or
# all-one besides conv/linear biases get random values too (ViT's zero head and class token,
# LayerNorm's affine, the attention's in-projection bias, NFNet's skip gains) -- an all-zero head
# would make the output constant. Not applied to the first six, whose files must stay the same.
MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), 13, (1, 1000), False),
    "vgg19": (lambda: torchvision.models.vgg19(weights=None), 13, (1, 1000), False),
    "googlenet": (_googlenet, 13, (1, 1000), False),
    "densenet201": (lambda: torchvision.models.densenet201(weights=None), 13, (1, 1000), False),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), 13, (1, 1000), False),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), 13, (1, 1000), False),
    "vit_b_16": (lambda: torchvision.models.vit_b_16(weights=None), 17, (1, 1000), True),
    "efficientnet_v2_s": (lambda: torchvision.models.efficientnet_v2_s(weights=None), 17, (1, 1000), True),
    "nfnet_f0": (_nfnet_f0, 17, (1, 1000), True),
    "gpunet_0": (_gpunet_0, 17, (1, 1000), True),
    "deeplabv3_mobilenet_v3_large": (_deeplabv3, 17, (1, 21, 224, 224), True),
    # ViT-B/16's architecture at 2 layers, 192 wide, 3 heads, patches of 32 (50 tokens): small
    # enough for tests (tests/quant/run_dynamic_quant.py), the same ONNX as vit_b_16's.
    "vit_2layer_192": (lambda: torchvision.models.vision_transformer.VisionTransformer(224, 32, 2, 3, 192, 768), 17, (1, 1000), True),
}


def model_seed(name):
    return (BASE_SEED + zlib.crc32(name.encode())) % (2**31)


def make_image(gen, batch):
    """ImageNet-style normalized random image batch (float32)."""
    x = torch.rand((batch,) + INPUT_SHAPE[1:], generator=gen, dtype=torch.float32)
    mean = torch.tensor(IMAGENET_MEAN, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD, dtype=torch.float32).view(1, 3, 1, 1)
    return (x - mean) / std


def randomize_batchnorm(model, gen):
    """Random BN affine params, then running stats calibrated on a random batch.

    Order matters: gamma/beta are drawn first, then the running statistics are measured with
    them in place (BN layers in training mode, momentum=None -> exactly this batch's statistics),
    so every layer's stats match what it really sees in eval mode and activations stay O(1)
    through 200 layers. Perturbing the stats afterwards would compound layer by layer (tried:
    +-50% var noise gave |output| ~1e5 on efficientnet_b0), so only a tiny jitter is added.
    """
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return 0
    u = lambda c, lo, hi: lo + (hi - lo) * torch.rand(c, generator=gen)
    saved = []
    with torch.no_grad():
        for m in bns:
            if m.affine:  # gamma in [0.5, 1.5], beta in [-0.2, 0.2]
                m.weight.copy_(u(m.num_features, 0.5, 1.5))
                m.bias.copy_(u(m.num_features, -0.2, 0.2))
            saved.append(m.momentum)
            m.reset_running_stats()
            m.momentum = None
            m.train()  # only the BN layers: Dropout, StochasticDepth stay in eval
        model(make_image(gen, 2))
        for m, mom in zip(bns, saved):
            m.momentum = mom
            m.eval()
            # jitter: mean shifted by up to +-0.02 std, var scaled by [0.98, 1.02] (stays positive)
            std = torch.sqrt(m.running_var + m.eps)
            m.running_mean += u(m.num_features, -0.02, 0.02) * std
            m.running_var *= u(m.num_features, 0.98, 1.02)
    return len(bns)


def randomize_zero_biases(model, gen):
    """Conv/Linear biases that init left at zero (vgg19, SE blocks) get U(-0.1, 0.1).

    Zero biases would not test bias handling at all, and identical all-zero initializers are
    deduplicated by torch.onnx.export into Identity nodes.
    """
    n = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)) and m.bias is not None \
                    and not torch.any(m.bias):
                m.bias.copy_(-0.1 + 0.2 * torch.rand(m.bias.shape, generator=gen))
                n += 1
    return n


def randomize_zero_params(model, gen):
    """Every other parameter left constant by init gets random values (see MODELS).

    All-zero ones (e.g. heads, class tokens, attention in-projection biases, LayerNorm betas,
    skip gains) get U(-0.1, 0.1) scaled to the layer's fan-in where they are matrices; all-one vectors
    (LayerNorm gammas) get U(0.5, 1.5). Conv/Linear biases are randomize_zero_biases' job.
    """
    n = 0
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 1 and torch.all(p == 1):
                p.copy_(0.5 + torch.rand(p.shape, generator=gen))
                n += 1
            elif not torch.any(p):
                r = -1 + 2 * torch.rand(p.shape, generator=gen)
                if p.dim() >= 2:  # a weight matrix: keep its outputs O(1), like kaiming init
                    r *= (3.0 / p[0].numel()) ** 0.5
                elif p.dim() == 0:  # a scalar gain
                    r = 1 + 0.5 * r
                else:
                    r *= 0.1
                p.copy_(r)
                n += 1
    return n


def op_types(path):
    import onnx
    onnx.checker.check_model(path)
    m = onnx.load(path, load_external_data=False)
    ops = sorted({n.op_type for n in m.graph.node})
    return ops, [(o.domain or "ai.onnx", o.version) for o in m.opset_import]


def export_one(name, out_dir, force, batch=1, dynamic=False):
    stem = (name if batch == 1 else f"{name}_b{batch}") + ("_dyn" if dynamic else "")
    paths = {k: os.path.join(out_dir, f"{stem}.{k}") for k in ("onnx", "input.npy", "ref.npy")}
    if not force and all(os.path.exists(p) for p in paths.values()):
        print(f"{stem}: skipped (all three files exist in {out_dir}; --force to redo)", flush=True)
        return True

    t0 = time.time()
    seed = model_seed(name)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    build, opset, out_shape, zero_params = MODELS[name]
    model = build()
    model.eval()
    n_bias = randomize_zero_biases(model, gen)
    n_zero = randomize_zero_params(model, gen) if zero_params else 0
    n_bn = randomize_batchnorm(model, gen)
    model.eval()
    x = make_image(torch.Generator().manual_seed(seed + 1), batch)
    t1 = time.time()

    with torch.no_grad():
        ref = model(x)
        other = model(make_image(torch.Generator().manual_seed(seed + 2), batch))
    # how much the output depends on the input: a weak reference would barely change
    sensitivity = float((other - ref).abs().max() / ref.abs().max())
    ref = ref.detach().numpy().astype(np.float32)
    if ref.shape != (batch,) + tuple(out_shape[1:]):
        print(f"{stem}: ERROR: output shape {ref.shape}, expected {(batch,) + tuple(out_shape[1:])}", flush=True)
        return False
    if not np.all(np.isfinite(ref)):
        print(f"{stem}: ERROR: reference output has NaN/inf", flush=True)
        return False
    t2 = time.time()

    tmp = {k: p + ".tmp" for k, p in paths.items()}
    # nn.MultiheadAttention in eval mode under no_grad takes torch's fused fast path
    # (aten::_native_multi_head_attention), which torch 1.13 cannot export: models that use it
    # are traced with autograd on, which keeps the composite path (same math; the reference
    # above is still the fast path's output). Tracing does not update any weight.
    mha = any(isinstance(m, torch.nn.MultiheadAttention) for m in model.modules())
    with torch.enable_grad() if mha else torch.no_grad():
        torch.onnx.export(model, x, tmp["onnx"], export_params=True, opset_version=opset,
                          do_constant_folding=True, input_names=["input"], output_names=["output"],
                          training=torch.onnx.TrainingMode.EVAL,
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None)
    t3 = time.time()
    ops, opsets = op_types(tmp["onnx"])
    # np.save appends ".npy" unless the name already ends in it, so save through file objects.
    with open(tmp["input.npy"], "wb") as f:
        np.save(f, x.numpy().astype(np.float32))
    with open(tmp["ref.npy"], "wb") as f:
        np.save(f, ref)
    for k in ("input.npy", "ref.npy", "onnx"):  # .onnx last: marks the set complete
        os.replace(tmp[k], paths[k])

    size_mb = os.path.getsize(paths["onnx"]) / 1e6
    print(f"{stem}: seed {seed}, {n_bias} zero biases, {n_zero} other constant parameters and {n_bn} BN layers randomized, output {tuple(ref.shape)}, "
          f"max|output| {np.abs(ref).max():.4g}, mean|output| {np.abs(ref).mean():.4g}, "
          f"max|f(x')-f(x)|/max|f(x)| for another input {sensitivity:.3g}; "
          f"{paths['onnx']} {size_mb:.1f} MB; opset {opsets}", flush=True)
    print(f"{stem}: ops ({len(ops)}): {' '.join(ops)}", flush=True)
    print(f"{stem}: time build+BN {t1 - t0:.1f}s, torch forward {t2 - t1:.1f}s, "
          f"export+check {t3 - t2 + (time.time() - t3):.1f}s, total {time.time() - t0:.1f}s",
          flush=True)
    return True


def main():
    ap = argparse.ArgumentParser(description="Export torchvision models (random weights) to ONNX "
                                 "with a fixed input and PyTorch reference output.")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"),
                    help="output folder (default: models/out next to this script)")
    ap.add_argument("--force", action="store_true", help="re-export even if the files exist")
    ap.add_argument("--batch", type=int, default=1,
                    help="static batch size; other than 1 the files are NAME_bN.* (default 1)")
    ap.add_argument("--dynamic-batch", action="store_true",
                    help="export with a symbolic batch dimension 'batch' (files NAME[_bN]_dyn.*)")
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help=f"models to export (default all: {' '.join(MODELS)})")
    args = ap.parse_args()
    names = args.names or list(MODELS)
    if args.batch < 1:
        ap.error("--batch must be at least 1")
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")

    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    failed = []
    t0 = time.time()
    for name in names:
        try:
            ok = export_one(name, args.out, args.force, args.batch, args.dynamic_batch)
        except Exception as e:  # report and carry on with the other models
            print(f"{name}: ERROR: {type(e).__name__}: {e}", flush=True)
            ok = False
        if not ok:
            failed.append(name)
    print(f"done in {time.time() - t0:.1f}s; "
          + (f"FAILED: {' '.join(failed)}" if failed else "all ok"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
