"""GPUNet-0 in plain PyTorch, written from the paper's architecture table.

Wang et al. (NVIDIA): "GPUNet: Searching the Deployable Convolution Neural Networks for GPUs"
(arXiv 2205.00841, 2022), the table of searched networks, GPUNet-0 row (the 0.65 ms network on
a V100 with TensorRT, batch 1). Its layers, one tuple per layer below
(type, in, out, stride, expansion, kernel, activation, SE):
- head: 3x3 conv 3->32 stride 2, BN, SiLU (swish);
- stage 1: two plain 3x3 conv-BN-ReLU layers, 32->32;
- stages 2-3: fused inverted residual blocks (fused-IRB: a kxk conv expanding by e, BN, act,
  then a 1x1 projection conv, BN, no act; residual when stride 1 and in == out), ReLU, e = 5:
  32->32 (stride 2, then 1), 32->64 (stride 2, then 1, 1);
- stage 4: inverted residual blocks (IRB: 1x1 expansion, BN, act; depthwise kxk, BN, act;
  1x1 projection, BN; residual when stride 1 and in == out), SiLU, e = 5: 64->256 (stride 2,
  then 1, 1);
- stage 6: IRBs with squeeze-and-excitation, ReLU, e = 5: 256->704 (stride 2, then 1);
- tail: 1x1 conv 704->1280, BN, SiLU, global average pool, linear to 1000 classes.
All kernels are 3x3. What is not in the table and chosen here as in EfficientNet-style code:
the SE block squeezes to a quarter of the block's input width with ReLU and a sigmoid gate, BN
everywhere after convs, no bias on convs that BN follows. GPUNet-0 is evaluated at 320x320 in
the paper; the zoo uses 224x224 like the other models (all layers are resolution-independent).
No distillation head, no dropout/drop-path in eval. 11.9M parameters as built here.
"""

import torch.nn as nn

# (type, in, out, stride, expansion, kernel, act, se)
GPUNET_0 = [
    ("conv", 32, 32, 1, 1, 3, "relu", False),
    ("conv", 32, 32, 1, 1, 3, "relu", False),
    ("fused_irb", 32, 32, 2, 5, 3, "relu", False),
    ("fused_irb", 32, 32, 1, 5, 3, "relu", False),
    ("fused_irb", 32, 64, 2, 5, 3, "relu", False),
    ("fused_irb", 64, 64, 1, 5, 3, "relu", False),
    ("fused_irb", 64, 64, 1, 5, 3, "relu", False),
    ("irb", 64, 256, 2, 5, 3, "swish", False),
    ("irb", 256, 256, 1, 5, 3, "swish", False),
    ("irb", 256, 256, 1, 5, 3, "swish", False),
    ("irb", 256, 704, 2, 5, 3, "relu", True),
    ("irb", 704, 704, 1, 5, 3, "relu", True),
]


def _act(name):
    return nn.ReLU(inplace=True) if name == "relu" else nn.SiLU(inplace=True)


def conv_bn(in_ch, out_ch, kernel, stride=1, groups=1, act=None):
    layers = [nn.Conv2d(in_ch, out_ch, kernel, stride, kernel // 2, groups=groups, bias=False),
              nn.BatchNorm2d(out_ch)]
    if act is not None:
        layers.append(_act(act))
    return nn.Sequential(*layers)


class SqueezeExcite(nn.Module):
    def __init__(self, ch, squeeze_ch):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(ch, squeeze_ch, 1)
        self.act = nn.ReLU(inplace=True)
        self.expand = nn.Conv2d(squeeze_ch, ch, 1)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        return x * self.gate(self.expand(self.act(self.reduce(self.pool(x)))))


class FusedIRB(nn.Module):
    def __init__(self, in_ch, out_ch, stride, expansion, kernel, act, se):
        super().__init__()
        mid = in_ch * expansion
        self.expand = conv_bn(in_ch, mid, kernel, stride, act=act)
        self.se = SqueezeExcite(mid, max(1, in_ch // 4)) if se else nn.Identity()
        self.project = conv_bn(mid, out_ch, 1)
        self.residual = stride == 1 and in_ch == out_ch

    def forward(self, x):
        y = self.project(self.se(self.expand(x)))
        return x + y if self.residual else y


class IRB(nn.Module):
    def __init__(self, in_ch, out_ch, stride, expansion, kernel, act, se):
        super().__init__()
        mid = in_ch * expansion
        self.expand = conv_bn(in_ch, mid, 1, act=act)
        self.depthwise = conv_bn(mid, mid, kernel, stride, groups=mid, act=act)
        self.se = SqueezeExcite(mid, max(1, in_ch // 4)) if se else nn.Identity()
        self.project = conv_bn(mid, out_ch, 1)
        self.residual = stride == 1 and in_ch == out_ch

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.residual else y


class GPUNet(nn.Module):
    def __init__(self, layers=GPUNET_0, stem_ch=32, tail_ch=1280, num_classes=1000):
        super().__init__()
        self.head = conv_bn(3, stem_ch, 3, 2, act="swish")
        blocks = []
        for kind, in_ch, out_ch, stride, e, k, act, se in layers:
            if kind == "conv":
                blocks.append(conv_bn(in_ch, out_ch, k, stride, act=act))
            elif kind == "fused_irb":
                blocks.append(FusedIRB(in_ch, out_ch, stride, e, k, act, se))
            else:
                blocks.append(IRB(in_ch, out_ch, stride, e, k, act, se))
        self.blocks = nn.Sequential(*blocks)
        self.tail = conv_bn(layers[-1][2], tail_ch, 1, act="swish")
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(tail_ch, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.tail(self.blocks(self.head(x)))
        return self.fc(self.pool(x).flatten(1))


def gpunet_0():
    return GPUNet(GPUNET_0)
