#!/usr/bin/env python3
"""Train a tiny convolutional digit classifier in plain numpy and export it to ONNX.

Run (after scripts/setup-python.sh), from the repository root:

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" examples/digits/train.py

Data: scikit-learn's bundled 8x8 digits (no download), split 75/25 with a
fixed seed, pixels scaled to [0, 1].

Model (opset 17), input `images` float32 [batch, 1, 8, 8], output `logits`
float32 [batch, 10] (raw logits, no softmax):

    Conv(1->8, 3x3, pad 1) -> Relu -> MaxPool(2x2, stride 2) -> Flatten -> Gemm(128->10)

Writes
    examples/digits/model/digits.onnx
    examples/digits/data/train_images.pb  TensorProto float32 [M, 1, 8, 8] (for the fine-tuning test)
    examples/digits/data/train_labels.pb  TensorProto int64 [M]
    examples/digits/data/test_images.pb   TensorProto float32 [N, 1, 8, 8]
    examples/digits/data/test_labels.pb   TensorProto int64 [N]
    examples/digits/data/ort_logits.pb    TensorProto float32 [N, 10], from onnxruntime
and prints the test accuracy computed from onnxruntime's logits.
Deterministic: seeded initialisation and shuffling.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
CHANNELS = 8
EPOCHS = 40
BATCH = 32
LR = 0.01



def write_if_changed(path: Path, data: bytes) -> None:
    """Leaves identical files untouched, so cargo does not rebuild the crates that embed them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)

def patches(x: np.ndarray) -> np.ndarray:
    """[N, 1, 8, 8] -> [N, 8, 8, 9]: the 3x3 window (zero padded) at each pixel."""
    xp = np.pad(x[:, 0], ((0, 0), (1, 1), (1, 1)))
    cols = [xp[:, i : i + 8, j : j + 8] for i in range(3) for j in range(3)]
    return np.stack(cols, axis=-1)


def forward(params, x):
    w1, b1, w2, b2 = params
    p = patches(x)  # [N, 8, 8, 9]
    conv = p @ w1.reshape(CHANNELS, 9).T + b1  # [N, 8, 8, C]
    conv = conv.transpose(0, 3, 1, 2)  # [N, C, 8, 8]
    relu = np.maximum(conv, 0.0)
    n = x.shape[0]
    win = relu.reshape(n, CHANNELS, 4, 2, 4, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, CHANNELS, 4, 4, 4)
    arg = win.argmax(axis=-1)  # [N, C, 4, 4]
    pooled = np.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    flat = pooled.reshape(n, CHANNELS * 16)  # ONNX Flatten order (c, h, w)
    logits = flat @ w2.T + b2
    return logits, (p, conv, arg, flat)


def backward(params, cache, dlogits):
    w1, b1, w2, b2 = params
    p, conv, arg, flat = cache
    n = dlogits.shape[0]
    dw2 = dlogits.T @ flat
    db2 = dlogits.sum(axis=0)
    dpooled = (dlogits @ w2).reshape(n, CHANNELS, 4, 4)
    dwin = np.zeros((n, CHANNELS, 4, 4, 4))
    np.put_along_axis(dwin, arg[..., None], dpooled[..., None], axis=-1)
    drelu = dwin.reshape(n, CHANNELS, 4, 4, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, CHANNELS, 8, 8)
    dconv = (drelu * (conv > 0)).transpose(0, 2, 3, 1).reshape(-1, CHANNELS)  # [N*64, C]
    dw1 = (dconv.T @ p.reshape(-1, 9)).reshape(CHANNELS, 1, 3, 3)
    db1 = dconv.sum(axis=0)
    return [dw1, db1, dw2, db2]


def train(x, y, rng):
    params = [
        rng.normal(0, np.sqrt(2 / 9), (CHANNELS, 1, 3, 3)),
        np.zeros(CHANNELS),
        rng.normal(0, np.sqrt(1 / (CHANNELS * 16)), (10, CHANNELS * 16)),
        np.zeros(10),
    ]
    m = [np.zeros_like(t) for t in params]
    v = [np.zeros_like(t) for t in params]
    b1, b2, eps, step = 0.9, 0.999, 1e-8, 0
    onehot = np.eye(10)[y]
    for _epoch in range(EPOCHS):
        order = rng.permutation(len(x))
        for start in range(0, len(x), BATCH):
            idx = order[start : start + BATCH]
            logits, cache = forward(params, x[idx])
            z = logits - logits.max(axis=1, keepdims=True)
            prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            grads = backward(params, cache, (prob - onehot[idx]) / len(idx))
            step += 1
            for i, g in enumerate(grads):
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                mh = m[i] / (1 - b1**step)
                vh = v[i] / (1 - b2**step)
                params[i] = params[i] - LR * mh / (np.sqrt(vh) + eps)
    return params


def export(params) -> onnx.ModelProto:
    w1, b1, w2, b2 = (numpy_helper.from_array(np.asarray(t, dtype=np.float32), n)
                      for t, n in zip(params, ["conv_w", "conv_b", "fc_w", "fc_b"]))
    nodes = [
        helper.make_node("Conv", ["images", "conv_w", "conv_b"], ["conv"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "digits",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        initializer=[w1, b1, w2, b2],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    # The test command recomputes only ONNX Runtime's references for the committed model
    # (`--reference-only`), so floating-point details of another machine cannot change the
    # model that the checked-in generated code (examples/generated) was produced from.
    reference_only = "--reference-only" in sys.argv and (HERE / "model" / "digits.onnx").exists()
    if reference_only:
        model = onnx.load(HERE / "model" / "digits.onnx")
    else:
        params = train(x_train.astype(np.float64), y_train, np.random.default_rng(0))
        model = export(params)

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    (logits,) = sess.run(None, {"images": x_test})
    accuracy = float((logits.argmax(axis=1) == y_test).mean())

    (HERE / "model").mkdir(exist_ok=True)
    (HERE / "data").mkdir(exist_ok=True)
    write_if_changed(HERE / "model" / "digits.onnx", model.SerializeToString())
    splits = [("train_images", x_train), ("train_labels", y_train), ("test_images", x_test), ("test_labels", y_test)]
    for name, arr in splits + [("ort_logits", logits)]:
        write_if_changed(HERE / "data" / f"{name}.pb", numpy_helper.from_array(arr, name).SerializeToString())

    if not reference_only:
        train_logits, _ = forward(params, x_train.astype(np.float64))
        print(f"train accuracy {float((train_logits.argmax(axis=1) == y_train).mean()):.4f}")
    print(f"test accuracy (onnxruntime) {accuracy:.4f} on {len(y_test)} images")


if __name__ == "__main__":
    main()
