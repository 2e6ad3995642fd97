#!/usr/bin/env python3
"""PaddleOCR-style detector and recogniser (PP-OCRv6-like architectures, random weights) exported
with paddle2onnx, for scripts/make_symbolic_models.py.

Runs in its own venv (paddlepaddle and paddle2onnx pin another onnx than the project's):
    python3 -m venv ~/.cache/burn-onnx/paddle-venv
    ~/.cache/burn-onnx/paddle-venv/bin/pip install -r scripts/paddle-requirements.txt
    ~/.cache/burn-onnx/paddle-venv/bin/python scripts/export_paddle_ocr.py OUT_DIR

Writes OUT_DIR/ppocr_det.onnx and OUT_DIR/ppocr_rec.onnx. Both have PaddleOCR's input names and
named dynamic dims (`x: [DynamicDimension.0, 3, DynamicDimension.1, DynamicDimension.2]` as
paddle2onnx names a `[None, 3, None, None]` input spec), convolutions with `padding="SAME"`
and a max pool with `padding="SAME"` (exported as auto_pad SAME_UPPER), depthwise convolutions, HardSwish/HardSigmoid (the
MobileNetV3 / PP-LCNet blocks with squeeze-and-excitation), and:
  * detector: a MobileNetV3-like backbone (strides 2, 4, 8, 16, 32), an FPN neck of upsampled
    sums, a DB head (3x3 conv, two ConvTranspose 2x2 stride 2, sigmoid): `[N, 1, H, W]`;
  * recogniser: a PP-LCNet-like backbone with (2, 1) strides, an SVTR-like neck (global mixing
    by multi-head self-attention over the width, LayerNorm), CTC head with softmax: `[N, T, C]`.
Seeded: reruns write the same graphs (weights scaled so that activations stay of order one).
"""

import sys

import numpy as np
import paddle
import paddle.nn as nn
import paddle.nn.functional as F

paddle.seed(0)
np.random.seed(0)


class ConvBNAct(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, groups=1, act="hardswish", same=True):
        super().__init__()
        padding = "SAME" if same else (k - 1) // 2
        self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=padding, groups=groups, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)
        self.act = act

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.act == "hardswish":
            x = F.hardswish(x)
        elif self.act == "relu":
            x = F.relu(x)
        return x


class SE(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(c, c // 4, 1)
        self.fc2 = nn.Conv2D(c // 4, c, 1)

    def forward(self, x):
        s = F.relu(self.fc1(self.pool(x)))
        return x * F.hardsigmoid(self.fc2(s))


class DepthwiseSeparable(nn.Layer):
    """PP-LCNet's block: depthwise k x k (SAME), optional SE, pointwise 1x1."""

    def __init__(self, cin, cout, k, stride, se=False):
        super().__init__()
        self.dw = ConvBNAct(cin, cin, k, stride=stride, groups=cin)
        self.se = SE(cin) if se else None
        self.pw = ConvBNAct(cin, cout, 1)

    def forward(self, x):
        x = self.dw(x)
        if self.se is not None:
            x = self.se(x)
        return self.pw(x)


class Detector(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = ConvBNAct(3, 8, 3, stride=2)
        self.stem_pool = nn.MaxPool2D(kernel_size=3, stride=1, padding="SAME")
        specs = [(8, 16, 3, 2, False), (16, 24, 5, 2, True), (24, 32, 3, 2, False), (32, 48, 5, 2, True)]
        self.stages = nn.LayerList([DepthwiseSeparable(*s) for s in specs])
        self.lateral = nn.LayerList([nn.Conv2D(c, 16, 1) for c in (16, 24, 32, 48)])
        self.smooth = ConvBNAct(16, 16, 3, act="relu")
        self.head1 = ConvBNAct(16, 8, 3, act="relu")
        self.up1 = nn.Conv2DTranspose(8, 8, 2, stride=2)
        self.up2 = nn.Conv2DTranspose(8, 1, 2, stride=2)

    def forward(self, x):
        x = self.stem_pool(self.stem(x))
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        # Top-down FPN: nearest upsampling to the finer level's size (odd sizes keep working).
        y = self.lateral[3](feats[3])
        for i in (2, 1, 0):
            lateral = self.lateral[i](feats[i])
            y = lateral + F.interpolate(y, size=paddle.shape(lateral)[2:], mode="nearest")
        y = self.smooth(y)
        y = self.head1(y)
        y = F.relu(self.up1(y))
        return F.sigmoid(self.up2(y))


class Recogniser(nn.Layer):
    def __init__(self, classes=40):
        super().__init__()
        self.stem = ConvBNAct(3, 8, 3, stride=2)
        specs = [(8, 16, 3, (2, 1), False), (16, 24, 3, (2, 1), True), (24, 32, 5, (2, 1), True)]
        self.stages = nn.LayerList([DepthwiseSeparable(*s) for s in specs])
        self.pool = nn.AvgPool2D(kernel_size=(2, 2), stride=(2, 2))
        self.norm1 = nn.LayerNorm(32)
        self.attn = nn.MultiHeadAttention(32, 4)
        self.norm2 = nn.LayerNorm(32)
        self.mlp = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
        self.ctc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        x = self.pool(x)  # [N, 32, 1, W/16] for a 32-high input
        x = x.mean(axis=2).transpose([0, 2, 1])  # [N, T, 32]
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return F.softmax(self.ctc(x), axis=-1)


def scale_weights(layer):
    # Random init with BN statistics that keep activations of order one.
    for sub in layer.sublayers():
        if isinstance(sub, nn.BatchNorm2D):
            c = sub.weight.shape[0]
            sub.weight.set_value(np.random.uniform(0.5, 1.5, c).astype("float32"))
            sub.bias.set_value(np.random.uniform(-0.2, 0.2, c).astype("float32"))
            sub._mean.set_value(np.random.uniform(-0.2, 0.2, c).astype("float32"))
            sub._variance.set_value(np.random.uniform(0.5, 2.0, c).astype("float32"))


def export(layer, spec, path):
    import paddle2onnx

    layer.eval()
    scale_weights(layer)
    prefix = path[: -len(".onnx")]
    paddle.jit.save(layer, prefix, input_spec=[spec])
    model_file = prefix + (".json" if __import__("os").path.exists(prefix + ".json") else ".pdmodel")
    paddle2onnx.export(model_file, prefix + ".pdiparams", path, opset_version=14, enable_onnx_checker=True)


def main():
    out = sys.argv[1]
    export(Detector(), paddle.static.InputSpec([None, 3, None, None], "float32", "x"), f"{out}/ppocr_det.onnx")
    export(Recogniser(), paddle.static.InputSpec([None, 3, 32, None], "float32", "x"), f"{out}/ppocr_rec.onnx")


if __name__ == "__main__":
    main()
