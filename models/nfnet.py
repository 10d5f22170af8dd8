"""NFNet-F0 in plain PyTorch, written from the paper's architecture description.

Brock, De, Smith, Simonyan: "High-Performance Large-Scale Image Recognition Without
Normalization" (ICML 2021), section 4 and appendix C (figures 5-7 of the arXiv version). What
this follows:
- no BatchNorm anywhere; every conv is a scaled weight-standardized conv (WSConv2d):
  W_hat = gain * (W - mean(W)) / (std(W) * sqrt(fan_in)), per output channel, with a learnable
  per-channel gain. The standardization is written as tensor ops in forward(), so the exported
  ONNX graph computes it from the raw weight initializer (ReduceMean, Sub, Mul, Sqrt, Div...)
  unless the exporter folds it: a compiler's constant folding has to remove it;
- activations are gamma-scaled so they preserve variance at init: GELU * 1.7015043497085693
  (F-series) and ReLU * 1.7139588594436646 (in SE, unscaled ReLU as in the paper's code);
- stem: 3x3 convs 3->16 stride 2, 16->32, 32->64, 64->128 stride 2 (GELU between, none after);
- stages of bottleneck residual blocks, F0 depths 1, 2, 6, 3, output widths 256, 512, 1536,
  1536, stride 1, 2, 2, 2, bottleneck ratio 0.5, grouped 3x3 convs with group width 128;
- block: h = act(x) / beta; main = conv1x1 -> act -> conv3x3 (grouped, stride) -> act ->
  conv3x3 (grouped) -> act -> conv1x1 -> SE (sigmoid gate times 2) -> * skip gain; out =
  main * alpha + shortcut, alpha = 0.2; beta = sqrt(expected variance) which grows by alpha^2
  per block and is reset to 1 + alpha^2 after each transition block. The first block of a stage
  (transition) takes its shortcut from h: 2x2 average pool if strided, then a 1x1 conv; other
  blocks use x itself;
- after the last stage a 1x1 conv to 2 x 1536 = 3072 channels, act, global average pool,
  dropout (identity in eval), linear to 1000 classes.
Stochastic depth and dropout are training-only and left out. Differences from the paper's code
(Haiku): symmetric padding (PyTorch padding=k//2) instead of TensorFlow 'SAME', plain
average-pool shortcut (2x2, stride 2, ceil mode, padding not counted) and the skip gain set to a
nonzero value (the paper initialises it to 0, which would make every residual branch dead with
random weights). Input 224x224 (F0 trains at 192 and tests at 256); about 71.5M parameters.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

GELU_GAMMA = 1.7015043497085693


class GammaGELU(nn.Module):
    def forward(self, x):
        return F.gelu(x) * GELU_GAMMA


class WSConv2d(nn.Conv2d):
    """Conv2d with scaled weight standardization (NF-ResNets, Brock et al. 2021a)."""

    def __init__(self, in_ch, out_ch, kernel_size, stride=1, groups=1, bias=True, eps=1e-4):
        super().__init__(in_ch, out_ch, kernel_size, stride=stride, padding=kernel_size // 2,
                         groups=groups, bias=bias)
        self.gain = nn.Parameter(torch.ones(out_ch, 1, 1, 1))
        self.eps = eps
        self.fan_in = self.weight[0].numel()
        nn.init.kaiming_normal_(self.weight, nonlinearity="linear")
        if bias:
            nn.init.zeros_(self.bias)

    def standardized_weight(self):
        mean = torch.mean(self.weight, dim=(1, 2, 3), keepdim=True)
        centered = self.weight - mean
        var = torch.mean(centered * centered, dim=(1, 2, 3), keepdim=True)
        scale = torch.rsqrt(torch.clamp(var * self.fan_in, min=self.eps))
        return centered * scale * self.gain

    def forward(self, x):
        return F.conv2d(x, self.standardized_weight(), self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class SqueezeExcite(nn.Module):
    """SE with ratio 0.5 of the block's output width; the gate is doubled (sigmoid * 2)."""

    def __init__(self, ch, ratio=0.5):
        super().__init__()
        hidden = max(1, int(ch * ratio))
        self.fc1 = nn.Conv2d(ch, hidden, 1)
        self.fc2 = nn.Conv2d(hidden, ch, 1)

    def forward(self, x):
        s = torch.mean(x, dim=(2, 3), keepdim=True)
        s = self.fc2(F.relu(self.fc1(s)))
        return x * (2.0 * torch.sigmoid(s))


class NFBlock(nn.Module):
    def __init__(self, in_ch, out_ch, stride, beta, alpha, group_width=128, ratio=0.5,
                 transition=False):
        super().__init__()
        mid = int(out_ch * ratio)
        groups = mid // group_width
        self.beta, self.alpha, self.transition = beta, alpha, transition
        self.act = GammaGELU()
        self.conv0 = WSConv2d(in_ch, mid, 1)
        self.conv1 = WSConv2d(mid, mid, 3, stride=stride, groups=groups)
        self.conv1b = WSConv2d(mid, mid, 3, groups=groups)
        self.conv2 = WSConv2d(mid, out_ch, 1)
        self.se = SqueezeExcite(out_ch)
        self.skip_gain = nn.Parameter(torch.zeros(()))
        self.pool = None
        self.shortcut = None
        if transition:
            if stride > 1:
                self.pool = nn.AvgPool2d(2, stride=2, ceil_mode=True, count_include_pad=False)
            self.shortcut = WSConv2d(in_ch, out_ch, 1)

    def forward(self, x):
        h = self.act(x) * (1.0 / self.beta)
        shortcut = x
        if self.transition:
            shortcut = self.shortcut(self.pool(h) if self.pool is not None else h)
        out = self.conv0(h)
        out = self.conv1(self.act(out))
        out = self.conv1b(self.act(out))
        out = self.conv2(self.act(out))
        out = self.se(out)
        return out * (self.skip_gain * self.alpha) + shortcut


class NFNet(nn.Module):
    def __init__(self, depths=(1, 2, 6, 3), widths=(256, 512, 1536, 1536), num_classes=1000,
                 alpha=0.2, final_width_mult=2):
        super().__init__()
        act = GammaGELU
        self.stem = nn.Sequential(
            WSConv2d(3, 16, 3, stride=2), act(),
            WSConv2d(16, 32, 3), act(),
            WSConv2d(32, 64, 3), act(),
            WSConv2d(64, 128, 3, stride=2))
        blocks = []
        in_ch = 128
        expected_var = 1.0
        for stage, (depth, width) in enumerate(zip(depths, widths)):
            for i in range(depth):
                transition = i == 0
                stride = (1 if stage == 0 else 2) if transition else 1
                beta = expected_var ** 0.5
                blocks.append(NFBlock(in_ch, width, stride, beta, alpha, transition=transition))
                in_ch = width
                expected_var = (1.0 if transition else expected_var) + alpha ** 2
        self.blocks = nn.Sequential(*blocks)
        self.final_conv = WSConv2d(in_ch, in_ch * final_width_mult, 1)
        self.final_act = act()
        self.fc = nn.Linear(in_ch * final_width_mult, num_classes)
        nn.init.normal_(self.fc.weight, std=0.01)
        nn.init.zeros_(self.fc.bias)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = self.final_act(self.final_conv(x))
        x = torch.mean(x, dim=(2, 3))
        return self.fc(x)


def nfnet_f0():
    return NFNet(depths=(1, 2, 6, 3), widths=(256, 512, 1536, 1536))
