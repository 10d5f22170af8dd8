#!/usr/bin/env python3
"""Seed corpus for the fuzz targets (fuzz/): writes candidate models into OUT_DIR.

Two sources:
  - the ONNX backend node tests' models (from a folder made by tests/node/generate.py);
  - the zoo architectures shrunk: each zoo model's characteristic block, built from
    torchvision's own block classes (ResNet Bottleneck, MobileNetV2 InvertedResidual,
    GoogLeNet Inception, EfficientNet MBConv with squeeze-excitation, DenseNet dense block,
    VGG conv stack) at a few channels and a 16x16 input, behind a small stem and followed
    by pooling and a classifier, exported with torch.onnx.export (opset 13, folded
    BatchNorm) like models/export_zoo.py does. A few kilobytes each;
  - the transformer pieces of tests/passes/recognize_models.py (LayerNorm, RMSNorm, GELU and
    attention as PyTorch exports them at opsets 14 and 17, and chains that must not be recognised), which
    lead the fuzzer into the recognize pass.
tools/fuzz.sh --make-corpus then keeps the subset that covers everything (libFuzzer's
-merge=1) in tests/fuzz/corpus/<target>/, which is committed.
Usage: /usr/bin/python3 tests/fuzz/make_corpus.py --node-cases build/nodecases/node OUT_DIR
"""
import argparse
import glob
import os
import shutil
import sys

import torch
from torch import nn
from torchvision.models.densenet import _DenseBlock, _Transition
from torchvision.models.efficientnet import MBConv, MBConvConfig
from torchvision.models.googlenet import Inception
from torchvision.models.mobilenetv2 import InvertedResidual
from torchvision.models.resnet import Bottleneck


def stem(c):
    return nn.Sequential(nn.Conv2d(3, c, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))


def head(c, classes=5):
    return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, classes))


def tiny_resnet():
    down = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16))
    return nn.Sequential(stem(8), nn.MaxPool2d(3, 2, 1), Bottleneck(8, 4, downsample=down),
                         Bottleneck(16, 4), head(16))


def tiny_mobilenet_v2():
    return nn.Sequential(stem(8), InvertedResidual(8, 8, 1, 2), InvertedResidual(8, 12, 2, 3),
                         head(12))


def tiny_googlenet():
    return nn.Sequential(stem(8), Inception(8, 4, 2, 4, 2, 4, 4), nn.MaxPool2d(3, 2, ceil_mode=True),
                         head(16))


def tiny_efficientnet():
    cfg = MBConvConfig(expand_ratio=4, kernel=3, stride=1, input_channels=8, out_channels=8, num_layers=1)
    cfg2 = MBConvConfig(expand_ratio=2, kernel=5, stride=2, input_channels=8, out_channels=16, num_layers=1)
    norm = nn.BatchNorm2d
    return nn.Sequential(stem(8), MBConv(cfg, 0.0, norm), MBConv(cfg2, 0.0, norm), head(16))


def tiny_densenet():
    block = _DenseBlock(num_layers=2, num_input_features=8, bn_size=2, growth_rate=4, drop_rate=0)
    return nn.Sequential(stem(8), block, _Transition(16, 8), nn.BatchNorm2d(8), nn.ReLU(), head(8))


def tiny_vgg():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 6), nn.ReLU(), nn.Dropout(), nn.Linear(6, 5))


ZOO = {"resnet": tiny_resnet, "mobilenet_v2": tiny_mobilenet_v2, "googlenet": tiny_googlenet,
       "efficientnet": tiny_efficientnet, "densenet": tiny_densenet, "vgg": tiny_vgg}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--node-cases", required=True, help="folder of node test cases (tests/node/generate.sh)")
    ap.add_argument("out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    n = 0
    for f in sorted(glob.glob(os.path.join(a.node_cases, "*", "model.onnx"))):
        shutil.copy(f, os.path.join(a.out, "node_" + os.path.basename(os.path.dirname(f))[5:] + ".onnx"))
        n += 1
    torch.manual_seed(0)
    for name, make in ZOO.items():
        model = make().eval()
        path = os.path.join(a.out, f"zoo_{name}.onnx")
        torch.onnx.export(model, torch.randn(1, 3, 16, 16), path, opset_version=13, do_constant_folding=True,
                          input_names=["input"], output_names=["output"])
        print(f"{path}: {os.path.getsize(path)} bytes")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "passes"))
    import recognize_models
    blocks = recognize_models.torch_cases()
    for name, cls, opset, x, _ in blocks:
        path = os.path.join(a.out, f"block_{name}.onnx")
        recognize_models.export(cls, opset, x, path)
        print(f"{path}: {os.path.getsize(path)} bytes")
    print(f"{n} node models, {len(ZOO)} shrunk zoo models, {len(blocks)} transformer blocks in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
