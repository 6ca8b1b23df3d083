#!/usr/bin/python3
"""Independent PyTorch reference for the fid package's Inception network.

The FID Inception network is pytorch-fid's port of TF's inception-2015-12-05
graph: torchvision's Inception v3 up to the pool3 average pool, with the FID
patches (average pools that do not count padding in Mixed_5b–d, 6b–e and 7b;
a max pool in Mixed_7c's pool branch), BasicConv2d = conv (no bias) + batch
norm (eps 0.001) + ReLU, inputs in [0, 1] resized bilinearly to 299×299
(align_corners=False) and mapped to [−1, 1]. This script writes that network
from the architecture's description (no torchvision needed), with every
channel count divided by a width divisor so that test fixtures stay small,
random weights and batch-norm statistics, and saves:

  fid/testdata/inception-d16.pth          the state dict, torch.save's zip format
  fid/testdata/inception-d16-legacy.pth   the same, the legacy (pre-1.6) format
  fid/testdata/inception-d16.json         uint8 test images (N, H, W, C) and
                                          their pool3 features from PyTorch
  fid/testdata/not-a-state-dict.pth       a tensor, for the loader's error
  fid/testdata/resize.json                F.interpolate cases (bilinear,
                                          align_corners=False), up and down
  fid/testdata/state-dict-shapes.json     every key and shape of the
                                          full-width network's state dict, the
                                          layout of pt_inception-2015-12-05

Run from the repository root: /usr/bin/python3 fid/testdata/make_fixtures.py
"""

import collections
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, **kw):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, bias=False, **kw)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def avg3(x):  # TF's average pool: padding not counted
    return F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)


class A(nn.Module):
    def __init__(self, cin, pool, d):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, 64 // d, kernel_size=1)
        self.branch5x5_1 = BasicConv2d(cin, 48 // d, kernel_size=1)
        self.branch5x5_2 = BasicConv2d(48 // d, 64 // d, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, 64 // d, kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(64 // d, 96 // d, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(96 // d, 96 // d, kernel_size=3, padding=1)
        self.branch_pool = BasicConv2d(cin, pool, kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool(avg3(x))
        return torch.cat([b1, b5, b3, bp], 1)


class B(nn.Module):
    def __init__(self, cin, d):
        super().__init__()
        self.branch3x3 = BasicConv2d(cin, 384 // d, kernel_size=3, stride=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, 64 // d, kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(64 // d, 96 // d, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(96 // d, 96 // d, kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3(x)
        bd = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return torch.cat([b3, bd, F.max_pool2d(x, 3, stride=2)], 1)


class C(nn.Module):
    def __init__(self, cin, c7, d):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, 192 // d, kernel_size=1)
        self.branch7x7_1 = BasicConv2d(cin, c7, kernel_size=1)
        self.branch7x7_2 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7_3 = BasicConv2d(c7, 192 // d, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = BasicConv2d(cin, c7, kernel_size=1)
        self.branch7x7dbl_2 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = BasicConv2d(c7, 192 // d, kernel_size=(1, 7), padding=(0, 3))
        self.branch_pool = BasicConv2d(cin, 192 // d, kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        bd = x
        for i in range(1, 6):
            bd = getattr(self, "branch7x7dbl_%d" % i)(bd)
        return torch.cat([b1, b7, bd, self.branch_pool(avg3(x))], 1)


class D(nn.Module):
    def __init__(self, cin, d):
        super().__init__()
        self.branch3x3_1 = BasicConv2d(cin, 192 // d, kernel_size=1)
        self.branch3x3_2 = BasicConv2d(192 // d, 320 // d, kernel_size=3, stride=2)
        self.branch7x7x3_1 = BasicConv2d(cin, 192 // d, kernel_size=1)
        self.branch7x7x3_2 = BasicConv2d(192 // d, 192 // d, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = BasicConv2d(192 // d, 192 // d, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = BasicConv2d(192 // d, 192 // d, kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = x
        for i in range(1, 5):
            b7 = getattr(self, "branch7x7x3_%d" % i)(b7)
        return torch.cat([b3, b7, F.max_pool2d(x, 3, stride=2)], 1)


class E(nn.Module):
    def __init__(self, cin, d, max_pool):
        super().__init__()
        self.max_pool = max_pool
        self.branch1x1 = BasicConv2d(cin, 320 // d, kernel_size=1)
        self.branch3x3_1 = BasicConv2d(cin, 384 // d, kernel_size=1)
        self.branch3x3_2a = BasicConv2d(384 // d, 384 // d, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3_2b = BasicConv2d(384 // d, 384 // d, kernel_size=(3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = BasicConv2d(cin, 448 // d, kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(448 // d, 384 // d, kernel_size=3, padding=1)
        self.branch3x3dbl_3a = BasicConv2d(384 // d, 384 // d, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = BasicConv2d(384 // d, 384 // d, kernel_size=(3, 1), padding=(1, 0))
        self.branch_pool = BasicConv2d(cin, 192 // d, kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b3 = self.branch3x3_1(x)
        b3 = torch.cat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)], 1)
        bd = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        bd = torch.cat([self.branch3x3dbl_3a(bd), self.branch3x3dbl_3b(bd)], 1)
        if self.max_pool:  # FID's Mixed_7c
            p = F.max_pool2d(x, 3, stride=1, padding=1)
        else:
            p = avg3(x)
        return torch.cat([b1, b3, bd, self.branch_pool(p)], 1)


class FIDInception(nn.Module):
    def __init__(self, d=1):
        super().__init__()
        self.Conv2d_1a_3x3 = BasicConv2d(3, 32 // d, kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = BasicConv2d(32 // d, 32 // d, kernel_size=3)
        self.Conv2d_2b_3x3 = BasicConv2d(32 // d, 64 // d, kernel_size=3, padding=1)
        self.Conv2d_3b_1x1 = BasicConv2d(64 // d, 80 // d, kernel_size=1)
        self.Conv2d_4a_3x3 = BasicConv2d(80 // d, 192 // d, kernel_size=3)
        self.Mixed_5b = A(192 // d, 32 // d, d)
        self.Mixed_5c = A(256 // d, 64 // d, d)
        self.Mixed_5d = A(288 // d, 64 // d, d)
        self.Mixed_6a = B(288 // d, d)
        self.Mixed_6b = C(768 // d, 128 // d, d)
        self.Mixed_6c = C(768 // d, 160 // d, d)
        self.Mixed_6d = C(768 // d, 160 // d, d)
        self.Mixed_6e = C(768 // d, 192 // d, d)
        self.Mixed_7a = D(768 // d, d)
        self.Mixed_7b = E(1280 // d, d, max_pool=False)
        self.Mixed_7c = E(2048 // d, d, max_pool=True)
        self.fc = nn.Linear(2048 // d, 1008)  # in the real file; unused by FID

    def forward(self, x):  # x: [N, 3, H, W] in [0, 1]
        x = F.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False)
        x = 2 * x - 1
        x = self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x)))
        x = F.max_pool2d(x, 3, stride=2)
        x = self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(x))
        x = F.max_pool2d(x, 3, stride=2)
        for name in ["5b", "5c", "5d", "6a", "6b", "6c", "6d", "6e", "7a", "7b", "7c"]:
            x = getattr(self, "Mixed_" + name)(x)
        return F.adaptive_avg_pool2d(x, (1, 1)).flatten(1)


def randomise(net, gen):
    """Weights that keep activations O(1) through 94 layers, and batch-norm
    statistics far from the identity so that their use is tested."""
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            fan_in = m.weight[0].numel()
            m.weight.data = torch.randn(m.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5
        elif isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.weight.data = 0.5 + torch.rand(c, generator=gen)
            m.bias.data = 0.2 * torch.randn(c, generator=gen)
            m.running_mean.data = 0.3 * torch.randn(c, generator=gen)
            m.running_var.data = 0.5 + torch.rand(c, generator=gen)
            m.num_batches_tracked.fill_(1000)


def as_list(t):
    return [float(v) for v in t.flatten().tolist()]


def main():
    out = "fid/testdata"
    os.makedirs(out, exist_ok=True)
    torch.set_default_dtype(torch.float64)  # the reference in float64
    gen = torch.Generator().manual_seed(2015)

    full = FIDInception(1)
    shapes = collections.OrderedDict((k, list(v.shape)) for k, v in full.state_dict().items())
    with open(os.path.join(out, "state-dict-shapes.json"), "w") as f:
        f.write("{\n" + ",\n".join("%s: %s" % (json.dumps(k), json.dumps(v)) for k, v in shapes.items()) + "\n}\n")

    d = 16
    net = FIDInception(d).eval()
    randomise(net, gen)
    state = collections.OrderedDict((k, v.float() if v.is_floating_point() else v)
                                    for k, v in net.state_dict().items())
    torch.save(state, os.path.join(out, "inception-d16.pth"))
    torch.save(state, os.path.join(out, "inception-d16-legacy.pth"), _use_new_zipfile_serialization=False)
    net.load_state_dict(collections.OrderedDict((k, v.double() if v.is_floating_point() else v)
                                                for k, v in state.items()))

    torch.save(torch.zeros(3), os.path.join(out, "not-a-state-dict.pth"))

    cases = []
    for (n, h, w, c) in [(2, 28, 28, 1), (2, 32, 32, 3)]:
        u8 = torch.randint(0, 256, (n, h, w, c), generator=gen)
        x = u8.double().permute(0, 3, 1, 2) / 255.0
        if c == 1:  # grayscale as three equal channels
            x = x.repeat(1, 3, 1, 1)
        with torch.no_grad():
            feats = net(x)
        cases.append({"dims": [n, h, w, c], "uint8": [int(v) for v in u8.flatten().tolist()],
                      "features": as_list(feats)})
    with open(os.path.join(out, "inception-d16.json"), "w") as f:
        json.dump({"width_divisor": d, "cases": cases}, f)

    resize = []
    for (h, w, oh, ow) in [(5, 7, 11, 4), (3, 4, 299, 7), (9, 3, 2, 8)]:
        x = torch.rand((2, 1, h, w), generator=gen)
        y = F.interpolate(x, size=(oh, ow), mode="bilinear", align_corners=False)
        resize.append({"in": [2, h, w], "out": [oh, ow], "x": as_list(x), "y": as_list(y)})
    with open(os.path.join(out, "resize.json"), "w") as f:
        json.dump(resize, f)


if __name__ == "__main__":
    main()
