#!/usr/bin/env python3
"""A zoo of real PyTorch exports (tests/onnx-backend/zoo/), for the onnx-backend runner's --dir mode.

Each architecture (Hugging Face transformers built from shrunk configs; torchvision classifiers,
video, segmentation and detection models at reduced width) is exported with random weights (fixed
seed, nothing downloaded) through both of PyTorch's ONNX exporters where they can (the dynamo
exporter cannot export the detectors' post-processing: those come from TorchScript only). The
whole zoo stays under 80 MB (book/src/pytorch.md):
  * `<case>_ts`:     the TorchScript exporter, `torch.onnx.export(..., dynamo=False, opset_version=17)`;
  * `<case>_dynamo`: the torch.export-based exporter, `dynamo=True, opset_version=18`, saved as one
                     file (no external data).
About half the cases have dynamic axes (batch and/or sequence: `dynamic_axes` for TorchScript,
`dynamic_shapes` for dynamo); every case is still fed concrete, seeded inputs. Decoders also come
as a KV-cache decode step (`*_decode_*`): past keys/values as plain tensor inputs, present
keys/values as plain tensor outputs.

Reference outputs are ONNX Runtime's (CPU, default options), written as ONNX backend test folders:
    <case>/model.onnx, <case>/test_data_set_0/input_N.pb, output_N.pb
(TensorProtos named after the graph's inputs/outputs, in graph order). A case whose export fails,
or that ONNX Runtime cannot run, is skipped with the reason printed. A summary table ends the run
(with each case's largest difference between ONNX Runtime and PyTorch's eager forward). Weights are
scaled so that outputs are of order one (see INIT_STD and vision()); the dynamo exporter's per-node
stack traces (this machine's paths) are dropped. Reruns write the same bytes.

Python: the pinned venv of scripts/zoo-requirements.txt (torch, torchvision, transformers,
onnxscript, onnx, onnxruntime). Usage:
    python scripts/make_pytorch_zoo.py [--out tests/onnx-backend/zoo] [--filter SUBSTRING] [--keep]
(--keep leaves the folders of cases not regenerated in this run; by default the output folder's
case folders that this run did not write are removed, so the zoo is exactly what the script makes).
"""

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
import traceback
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper
from torch import nn

warnings.filterwarnings("ignore")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "onnx-backend", "zoo")
SEED = 0
VOCAB = 256

# ---------------------------------------------------------------------------------------------
# Inputs


def ids(rng, shape, vocab=VOCAB, low=3):
    # Token ids in vocabulary, clear of the special ids 0..2 (pad/bos/eos of most configs).
    return torch.from_numpy(rng.randint(low, vocab, size=shape).astype(np.int64))


def mask(batch, seq, pad_row_from=None, left=False):
    """An int64 attention mask of ones; the last row padded (zeros) from `pad_row_from` on
    (right padding), or up to it (left padding), when the batch has more than one row."""
    m = torch.ones(batch, seq, dtype=torch.int64)
    if batch > 1 and pad_row_from is not None:
        if left:
            m[-1, :pad_row_from] = 0
        else:
            m[-1, pad_row_from:] = 0
    return m


def floats(rng, shape, scale=1.0):
    return torch.from_numpy((rng.standard_normal(shape) * scale).astype(np.float32))


# ---------------------------------------------------------------------------------------------
# Wrappers: keyword calls into Hugging Face models, plain tensors out.


class EncoderWrap(nn.Module):
    """input_ids, attention_mask -> last_hidden_state (and pooler_output where the model has it)."""

    def __init__(self, model, pooled):
        super().__init__()
        self.model, self.pooled = model, pooled

    def forward(self, input_ids, attention_mask):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask)
        if self.pooled:
            return out.last_hidden_state, out.pooler_output
        return out.last_hidden_state


class PixelWrap(nn.Module):
    def __init__(self, model, pooled):
        super().__init__()
        self.model, self.pooled = model, pooled

    def forward(self, pixel_values):
        out = self.model(pixel_values=pixel_values)
        if self.pooled:
            return out.last_hidden_state, out.pooler_output
        return out.last_hidden_state


class WhisperEncoderWrap(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_features):
        return self.encoder(input_features=input_features).last_hidden_state


class Seq2SeqWrap(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids)
        return out.last_hidden_state, out.encoder_last_hidden_state


class CausalLMWrap(nn.Module):
    """Prefill without a cache: input_ids, attention_mask -> logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


def _cache_tensors(cache):
    out = []
    if hasattr(cache, "layers"):
        for layer in cache.layers:
            out += [layer.keys, layer.values]
    else:  # older transformers: key_cache / value_cache lists
        for k, v in zip(cache.key_cache, cache.value_cache):
            out += [k, v]
    return out


class DecodeStepWrap(nn.Module):
    """One KV-cache decode step of a 2-layer decoder: the past keys/values come in as plain
    tensors (made into a DynamicCache inside), the present ones go out as plain tensors."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, past_key_0, past_value_0, past_key_1, past_value_1):
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        cache.update(past_key_0, past_value_0, 0)
        cache.update(past_key_1, past_value_1, 1)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
        return (out.logits, *_cache_tensors(out.past_key_values))


# ---------------------------------------------------------------------------------------------
# Architectures. Each builder returns (module, inputs: list of (name, tensor), output names,
# dynamic axes: {input name: {axis: dim name}}), the module's forward taking the inputs by these
# names in this order. The model is built after torch.manual_seed(SEED).

B, S = 2, 7  # batch and sequence of the recorded inputs


def enc_inputs(rng, vocab=VOCAB):
    return [("input_ids", ids(rng, (B, S), vocab)), ("attention_mask", mask(B, S, pad_row_from=5))]


ENC_DYN = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}


# Weight scale: Hugging Face's default initializer_range (0.02) is meant for hidden sizes in the
# hundreds; at hidden 32 it leaves attention nearly uniform and outputs near zero. 0.2 (about
# 1/sqrt(32)) gives peaked attention and outputs of order one, as in a trained model.
INIT_STD = 0.2


def scaled(cfg):
    for attr in ("initializer_range", "init_std"):
        if hasattr(cfg, attr):
            setattr(cfg, attr, INIT_STD)
    return cfg


def small(cfg_cls, **kw):
    base = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                max_position_embeddings=64)
    base.update(kw)
    return cfg_cls(**base)


def bert(rng):
    from transformers import BertConfig, BertModel

    m = BertModel(scaled(small(BertConfig)))
    return EncoderWrap(m, True), enc_inputs(rng), ["last_hidden_state", "pooler_output"], ENC_DYN


def distilbert(rng):
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64)
    return EncoderWrap(DistilBertModel(scaled(cfg)), False), enc_inputs(rng), ["last_hidden_state"], ENC_DYN


def roberta(rng):
    from transformers import RobertaConfig, RobertaModel

    m = RobertaModel(scaled(small(RobertaConfig, max_position_embeddings=66)))
    return EncoderWrap(m, True), enc_inputs(rng), ["last_hidden_state", "pooler_output"], ENC_DYN


def albert(rng):
    from transformers import AlbertConfig, AlbertModel

    m = AlbertModel(scaled(small(AlbertConfig, embedding_size=16)))
    return EncoderWrap(m, True), enc_inputs(rng), ["last_hidden_state", "pooler_output"], ENC_DYN


def electra(rng):
    from transformers import ElectraConfig, ElectraModel

    m = ElectraModel(scaled(small(ElectraConfig, embedding_size=16)))
    return EncoderWrap(m, False), enc_inputs(rng), ["last_hidden_state"], ENC_DYN


def deberta_v2(rng):
    from transformers import DebertaV2Config, DebertaV2Model

    cfg = small(DebertaV2Config, relative_attention=True, position_buckets=16, max_relative_positions=32,
                pos_att_type=["p2c", "c2p"], position_biased_input=False)
    return EncoderWrap(DebertaV2Model(scaled(cfg)), False), enc_inputs(rng), ["last_hidden_state"], ENC_DYN


def vit(rng):
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32,
                    patch_size=8, num_channels=3)
    inputs = [("pixel_values", floats(rng, (B, 3, 32, 32)))]
    return PixelWrap(ViTModel(scaled(cfg)), True), inputs, ["last_hidden_state", "pooler_output"], {"pixel_values": {0: "batch"}}


def clip_text(rng):
    from transformers import CLIPTextConfig, CLIPTextModel

    cfg = small(CLIPTextConfig, max_position_embeddings=16, eos_token_id=2)
    return EncoderWrap(CLIPTextModel(scaled(cfg)), True), enc_inputs(rng), ["last_hidden_state", "pooler_output"], ENC_DYN


def clip_vision(rng):
    from transformers import CLIPVisionConfig, CLIPVisionModel

    cfg = CLIPVisionConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                           image_size=32, patch_size=8, num_channels=3)
    inputs = [("pixel_values", floats(rng, (B, 3, 32, 32)))]
    return PixelWrap(CLIPVisionModel(scaled(cfg)), True), inputs, ["last_hidden_state", "pooler_output"], {"pixel_values": {0: "batch"}}


def t5_encoder(rng):
    from transformers import T5Config, T5EncoderModel

    cfg = T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                   relative_attention_num_buckets=8, relative_attention_max_distance=16)
    return EncoderWrap(T5EncoderModel(scaled(cfg)), False), enc_inputs(rng), ["last_hidden_state"], ENC_DYN


def bart(rng):
    from transformers import BartConfig, BartModel

    cfg = BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64)
    inputs = enc_inputs(rng) + [("decoder_input_ids", ids(rng, (B, 5)))]
    dyn = dict(ENC_DYN, decoder_input_ids={0: "batch", 1: "decoder_sequence"})
    return Seq2SeqWrap(BartModel(scaled(cfg))), inputs, ["last_hidden_state", "encoder_last_hidden_state"], dyn


def whisper_encoder(rng):
    from transformers import WhisperConfig, WhisperModel

    cfg = WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_source_positions=16, max_target_positions=16, pad_token_id=0, bos_token_id=1,
                        eos_token_id=2, decoder_start_token_id=1)
    encoder = WhisperModel(scaled(cfg)).get_encoder()
    # Whisper's encoder takes exactly 2 * max_source_positions frames: only the batch is dynamic.
    inputs = [("input_features", floats(rng, (B, 16, 32)))]
    return WhisperEncoderWrap(encoder), inputs, ["last_hidden_state"], {"input_features": {0: "batch"}}


# Decoders: (config class, model class, config arguments).
def _decoder_cfg(name):
    import transformers as T

    common = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                  max_position_embeddings=64)
    if name == "gpt2":
        return T.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_inner=64, n_positions=64), T.GPT2LMHeadModel
    if name == "gpt_neox":
        return T.GPTNeoXConfig(**common, rotary_pct=0.5), T.GPTNeoXForCausalLM
    if name == "llama_gqa":
        return T.LlamaConfig(**common, num_key_value_heads=2), T.LlamaForCausalLM
    if name == "mistral":
        return T.MistralConfig(**common, num_key_value_heads=2, sliding_window=4), T.MistralForCausalLM
    if name == "qwen2":
        return T.Qwen2Config(**common, num_key_value_heads=2), T.Qwen2ForCausalLM
    if name == "phi":
        return T.PhiConfig(**common, partial_rotary_factor=0.5), T.PhiForCausalLM
    if name == "gemma":
        return T.GemmaConfig(**common, num_key_value_heads=1, head_dim=8), T.GemmaForCausalLM
    raise KeyError(name)


def decoder(name):
    def build(rng):
        cfg, cls = _decoder_cfg(name)
        m = cls(scaled(cfg))
        inputs = enc_inputs(rng)
        return CausalLMWrap(m), inputs, ["logits"], ENC_DYN

    return build


def decoder_decode(name):
    def build(rng):
        cfg, cls = _decoder_cfg(name)
        m = cls(scaled(cfg))
        past = 6
        heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
        hidden = getattr(cfg, "hidden_size", None) or cfg.n_embd
        head_dim = getattr(cfg, "head_dim", None) or hidden // cfg.num_attention_heads
        inputs = [("input_ids", ids(rng, (B, 1))), ("attention_mask", mask(B, past + 1, pad_row_from=2, left=True))]
        names = []
        for layer in range(2):
            for kind in ("key", "value"):
                inputs.append((f"past_{kind}_{layer}", floats(rng, (B, heads, past, head_dim))))
                names.append(f"present_{kind}_{layer}")
        dyn = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch", 1: "total_sequence"}}
        for n, _ in inputs[2:]:
            dyn[n] = {0: "batch", 2: "past_sequence"}
        return DecodeStepWrap(m), inputs, ["logits"] + names, dyn

    return build


# torchvision at reduced width and depth (the zoo's size budget), random weights.


def narrow_resnet(block, layers, divisor, **kw):
    """torchvision's ResNet with every stage `divisor` times narrower (the stem keeps its 64
    channels; the first stage then gets a projection shortcut)."""
    from torchvision.models.resnet import ResNet

    class NarrowResNet(ResNet):
        def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
            return super()._make_layer(block, planes // divisor, blocks, stride, dilate)

    m = NarrowResNet(block, layers, **kw)
    m.fc = nn.Linear(512 // divisor * block.expansion, m.fc.out_features)
    return m


def narrow_r3d(divisor, num_classes):
    """torchvision's R3D-18 (3D convolutions over time and space), one block per stage, every
    stage `divisor` times narrower."""
    from torchvision.models.video.resnet import BasicBlock, BasicStem, Conv3DSimple, VideoResNet

    class NarrowVideoResNet(VideoResNet):
        def _make_layer(self, block, conv_builder, planes, blocks, stride=1):
            return super()._make_layer(block, conv_builder, planes // divisor, blocks, stride)

    m = NarrowVideoResNet(BasicBlock, [Conv3DSimple] * 4, [1, 1, 1, 1], BasicStem, num_classes=num_classes)
    m.fc = nn.Linear(512 // divisor, num_classes)
    return m


def tv_classifier(name):
    import torchvision.models as M

    if name == "regnet_y_tiny":
        # regnet_y_400mf's block (Y: SE, group conv) at a quarter of its width and depth.
        from torchvision.models.regnet import BlockParams, RegNet

        return RegNet(BlockParams.from_init_params(depth=6, w_0=16, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25),
                      num_classes=10)
    if name == "efficientnet_b0_w035":
        # efficientnet_b0 at 0.35 of its width and half its depth.
        from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

        setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.35, depth_mult=0.5)
        return EfficientNet(setting, 0.2, last_channel=last, num_classes=10)
    if name == "mobilenet_v3_small_half":
        return M.mobilenet_v3_small(num_classes=10, width_mult=0.5)
    if name == "resnet18_w025":
        from torchvision.models.resnet import BasicBlock

        return narrow_resnet(BasicBlock, [2, 2, 2, 2], 4, num_classes=10)
    if name == "mobilenet_v2_w035":
        return M.mobilenet_v2(num_classes=10, width_mult=0.35)
    if name == "convnext_slim":
        # convnext_tiny's blocks (depthwise 7x7, LayerNorm, layer scale) at 1/6 of its width, depths 1-1-2-1.
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt

        return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, 64, 1), CNBlockConfig(64, 128, 2),
                         CNBlockConfig(128, None, 1)], num_classes=10)
    if name == "densenet_slim":
        # densenet121's dense blocks and transitions, growth 8, two layers per block.
        from torchvision.models.densenet import DenseNet

        return DenseNet(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, num_classes=10)
    if name == "vit_tv":
        from torchvision.models.vision_transformer import VisionTransformer

        return VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=32, mlp_dim=64,
                                 num_classes=10)
    if name == "swin_slim":
        # swin_t's shifted windows (relative position bias, the shift's attention mask, patch
        # merging) in two stages at 16 channels; 64x64 images make 16x16 then 8x8 patches, windows 4x4.
        from torchvision.models.swin_transformer import SwinTransformer

        return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                               num_classes=10)
    if name == "r3d_slim":
        return narrow_r3d(8, num_classes=10)
    return getattr(M, name)(num_classes=10)


def batchnorm_statistics(m):
    # Non-trivial batch-norm statistics (fresh ones are mean 0 / var 1: an identity).
    g = torch.Generator().manual_seed(SEED)
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm2d, nn.BatchNorm3d)):
            mod.running_mean.copy_(torch.randn(mod.running_mean.shape, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=g) * 0.5 + 0.75)


def unit_std_output(m, x, select=lambda out: out):
    # The last layer (Linear or Conv, squeezenet's Conv2d before ReLU and pooling) scaled so that
    # the output's standard deviation is 1: differences are then judged against values of order
    # one, as in a trained model.
    m.eval()
    with torch.no_grad():
        std = float(select(m(x)).std())
        last = [mod for mod in m.modules() if isinstance(mod, (nn.Linear, nn.Conv2d, nn.Conv3d))][-1]
        last.weight.mul_(1.0 / std)
        if last.bias is not None:
            last.bias.mul_(1.0 / std)


# torchvision classifiers: 10 classes, 64x64 images (video: 4 frames of 32x32).
def vision(name):
    def build(rng):
        m = tv_classifier(name)
        # Linear layers at 1/sqrt(fan_in) (torchvision's normal(0, 0.01) heads give logits near 0).
        for mod in m.modules():
            if isinstance(mod, nn.Linear):
                nn.init.normal_(mod.weight, std=mod.in_features ** -0.5)
        batchnorm_statistics(m)
        shape = (B, 3, 4, 32, 32) if name == "r3d_slim" else (B, 3, 64, 64)
        inputs = [("input", floats(rng, shape))]
        unit_std_output(m, inputs[0][1])
        return m, inputs, ["logits"], {"input": {0: "batch"}}

    return build


class SegmentationWrap(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input):
        return self.model(input)["out"]


def seg_mobilenet_v3():
    import torchvision.models as M

    return M.mobilenet_v3_large(width_mult=0.25, dilated=True)


def segmentation(name):
    """torchvision segmentation models, 4 classes, 64x64 images: DeepLabV3 (ASPP at 32 channels
    instead of 256) and LRASPP on a dilated MobileNetV3-large at quarter width, FCN on a dilated
    ResNet-50-style backbone (bottlenecks, one per stage) at 1/8 width."""

    def build(rng):
        from torchvision.models.segmentation import deeplabv3, fcn, lraspp

        if name == "deeplabv3_slim":
            m = deeplabv3._deeplabv3_mobilenetv3(seg_mobilenet_v3(), num_classes=4, aux=False)
            in_channels = m.classifier[0].convs[0][0].in_channels
            m.classifier = nn.Sequential(deeplabv3.ASPP(in_channels, [12, 24, 36], out_channels=32),
                                         nn.Conv2d(32, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                         nn.Conv2d(32, 4, 1))
        elif name == "lraspp_slim":
            m = lraspp._lraspp_mobilenetv3(seg_mobilenet_v3(), num_classes=4)
        elif name == "fcn_slim":
            from torchvision.models._utils import IntermediateLayerGetter
            from torchvision.models.resnet import Bottleneck

            backbone = narrow_resnet(Bottleneck, [1, 1, 1, 1], 8, replace_stride_with_dilation=[False, True, True])
            m = fcn.FCN(IntermediateLayerGetter(backbone, {"layer4": "out"}), fcn.FCNHead(256, 4))
        else:
            raise KeyError(name)
        batchnorm_statistics(m)
        m = SegmentationWrap(m)
        inputs = [("input", floats(rng, (B, 3, 64, 64)))]
        unit_std_output(m, inputs[0][1])
        return m, inputs, ["out"], {"input": {0: "batch"}}

    return build


class DetectionWrap(nn.Module):
    """One image (a batch of one, as torchvision detectors take a list of images) -> its boxes,
    scores and labels: tensors whose length is the number of detections."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, image):
        out = self.model([image[0]])[0]
        return out["boxes"], out["scores"], out["labels"]


def fpn_resnet(divisor=4, channels=32):
    # A narrow ResNet-18 (quarter width) under a feature pyramid (P3-P7 at 32 channels), as
    # retinanet_resnet50_fpn and fcos_resnet50_fpn put a ResNet-50 under one at 256.
    from torchvision.models.detection.backbone_utils import BackboneWithFPN
    from torchvision.models.resnet import BasicBlock
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7

    body = narrow_resnet(BasicBlock, [1, 1, 1, 1], divisor)
    in_channels = [128 // divisor, 256 // divisor, 512 // divisor]
    return BackboneWithFPN(body, {"layer2": "0", "layer3": "1", "layer4": "2"}, in_channels, channels,
                           extra_blocks=LastLevelP6P7(channels, channels))


def detection(name):
    """torchvision detectors with their whole post-processing (score threshold, top-k, batched
    NonMaxSuppression, box decoding and clipping), 5 classes, one 64x64 image. Weights are drawn
    so that scores are well apart (random ones tie them: then the order of equal scores, not the
    model, would decide the output)."""

    def build(rng):
        from torchvision.models import detection as D

        if name == "ssdlite":
            # ssdlite320_mobilenet_v3_large at half width (images resized to 320x320 inside).
            m = D.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5, width_mult=0.5,
                                                detections_per_img=20, topk_candidates=50)
        elif name == "retinanet_slim":
            m = D.RetinaNet(fpn_resnet(), num_classes=5, min_size=64, max_size=64, detections_per_img=20,
                            topk_candidates=50)
        elif name == "fcos_slim":
            # Images resized to 256x256 inside: the head's GroupNorm needs P7 (stride 128) at 2x2.
            m = D.FCOS(fpn_resnet(), num_classes=5, min_size=256, max_size=256, detections_per_img=20,
                       topk_candidates=50)
        else:
            raise KeyError(name)
        batchnorm_statistics(m)
        # Convolutions drawn at `gain` / sqrt(fan_in), keeping activations of order one through
        # the depth; the classification logits then spread over a few units. SSDlite takes it
        # everywhere; RetinaNet and FCOS in the backbone and the classification head (logits' bias
        # 0 instead of the rare-foreground prior, which puts every score near 0.01), their box
        # regressions keeping torchvision's small init (boxes near their anchors). RetinaNet's
        # head has no normalisation: at 1.3 its four convolutions saturate every score at 1.
        if name == "ssdlite":
            drawn = [mod for mod in m.modules() if isinstance(mod, nn.Conv2d)]
        else:
            drawn = [mod for part in (m.backbone, m.head.classification_head) for mod in part.modules()
                     if isinstance(mod, nn.Conv2d)]
            nn.init.zeros_(m.head.classification_head.cls_logits.bias)
        gain = 1.0 if name == "retinanet_slim" else 1.3
        for mod in drawn:
            fan_in = mod.in_channels // mod.groups * mod.kernel_size[0] * mod.kernel_size[1]
            nn.init.normal_(mod.weight, std=gain * fan_in ** -0.5)
        inputs = [("image", torch.from_numpy(rng.uniform(size=(1, 3, 64, 64)).astype(np.float32)))]
        return DetectionWrap(m), inputs, ["boxes", "scores", "labels"], {"image": {2: "height", 3: "width"}}

    return build


# (name, builder). Architecture i gets its dynamic axes in the TorchScript export when i is even,
# in the dynamo export when odd: about half the cases are dynamic, each exporter both ways.
ARCHS = [
    ("bert", bert),
    ("distilbert", distilbert),
    ("roberta", roberta),
    ("albert", albert),
    ("electra", electra),
    ("deberta_v2", deberta_v2),
    ("vit", vit),
    ("clip_text", clip_text),
    ("t5_encoder", t5_encoder),
    ("bart", bart),
    ("whisper_encoder", whisper_encoder),
]
for _d in ["gpt2", "gpt_neox", "llama_gqa", "mistral", "qwen2", "phi", "gemma"]:
    ARCHS.append((_d, decoder(_d)))
    ARCHS.append((_d + "_decode", decoder_decode(_d)))
for _v in ["mobilenet_v3_small_half", "squeezenet1_1", "shufflenet_v2_x0_5", "mnasnet0_5", "regnet_y_tiny",
           "efficientnet_b0_w035"]:
    ARCHS.append((_v, vision(_v)))
# Added later, after the 31 above (an architecture's index decides which export is dynamic).
for _v in ["resnet18_w025", "mobilenet_v2_w035", "convnext_slim", "densenet_slim", "vit_tv", "swin_slim", "r3d_slim"]:
    ARCHS.append((_v, vision(_v)))
for _s in ["deeplabv3_slim", "lraspp_slim", "fcn_slim"]:
    ARCHS.append((_s, segmentation(_s)))
for _d in ["ssdlite", "retinanet_slim", "fcos_slim"]:
    ARCHS.append((_d, detection(_d)))
ARCHS.append(("clip_vision", clip_vision))


# ---------------------------------------------------------------------------------------------
# Export and references


def export_ts(module, inputs, output_names, dyn, path):
    torch.onnx.export(module, tuple(t for _, t in inputs), path, input_names=[n for n, _ in inputs],
                      output_names=output_names, opset_version=17, dynamo=False,
                      dynamic_axes=dyn if dyn else None, do_constant_folding=True)


def export_dynamo(module, inputs, output_names, dyn, path):
    dynamic_shapes = None
    if dyn:
        # A tuple in forward's argument order (a dict must use forward's own argument names).
        dynamic_shapes = tuple({axis: torch.export.Dim.DYNAMIC for axis in dyn.get(n, {})} or None for n, _ in inputs)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = os.path.join(tmp, "model.onnx")
        torch.onnx.export(module, tuple(t for _, t in inputs), tmp_path, input_names=[n for n, _ in inputs],
                          output_names=output_names, opset_version=18, dynamo=True, external_data=False,
                          dynamic_shapes=dynamic_shapes)
        model = onnx.load(tmp_path, load_external_data=True)
    # The exporter records each node's Python stack trace (absolute paths of this machine's
    # files): dropped, so that the files do not depend on where the venv and the checkout live.
    # Its other node metadata (namespace, class hierarchy, fx node, name scopes) is kept.
    for node in _all_nodes(model.graph):
        kept = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
    onnx.save(model, path, save_as_external_data=False)


def _all_nodes(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from _all_nodes(sub)


def dims(value_info):
    shape = value_info.type.tensor_type.shape
    return [d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else "?") for d in shape.dim]


def make_case(out_dir, name, arch, exporter, dynamic):
    torch.manual_seed(SEED)
    rng = np.random.RandomState(SEED)
    module, inputs, output_names, dyn = arch(rng)
    module = module.eval()
    dyn = dyn if dynamic else None
    tmp_dir = tempfile.mkdtemp(prefix=f"zoo-{name}-")
    try:
        model_path = os.path.join(tmp_dir, "model.onnx")
        log = io.StringIO()
        try:
            with torch.no_grad(), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                (export_ts if exporter == "ts" else export_dynamo)(module, inputs, output_names, dyn, model_path)
        except Exception as e:  # noqa: BLE001 - any exporter failure skips the case
            return None, "export failed: " + first_line(e)
        model = onnx.load(model_path)
        graph_inputs = [i.name for i in model.graph.input]
        feeds = dict((n, t.numpy()) for n, t in inputs)
        # An exporter may drop an input the graph does not use: feed only the graph's own.
        missing = [n for n in graph_inputs if n not in feeds]
        if missing:
            return None, f"graph inputs {missing} are not among the module's inputs"
        try:
            sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
            results = sess.run(None, {n: feeds[n] for n in graph_inputs})
        except Exception as e:  # noqa: BLE001
            return None, "onnxruntime failed: " + first_line(e)
        if any(r.dtype.kind == "f" and not np.isfinite(r).all() for r in results):
            return None, "onnxruntime gave non-finite outputs"
        # How far ONNX Runtime on the export is from PyTorch's eager forward (reported only).
        with torch.no_grad():
            eager = module(*(t for _, t in inputs))
        eager = eager if isinstance(eager, (tuple, list)) else (eager,)
        torch_diff = max(float(np.abs(np.asarray(r, np.float64) - e.numpy().astype(np.float64)).max())
                         for r, e in zip(results, eager))
        data = os.path.join(tmp_dir, "test_data_set_0")
        os.makedirs(data)
        for i, n in enumerate(graph_inputs):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(feeds[n], n).SerializeToString())
        for i, (o, r) in enumerate(zip(sess.get_outputs(), results)):
            with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(r), o.name).SerializeToString())
        final = os.path.join(out_dir, name)
        shutil.rmtree(final, ignore_errors=True)
        shutil.move(tmp_dir, final)
        tmp_dir = None
        info = dict(
            opset=next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), "?"),
            nodes=len(model.graph.node),
            dynamic=bool([d for i in model.graph.input for d in dims(i) if isinstance(d, str)]),
            inputs=", ".join(f"{i.name}{dims(i)}" for i in model.graph.input),
            size=os.path.getsize(os.path.join(final, "model.onnx")),
            torch_diff=torch_diff,
        )
        return info, None
    finally:
        if tmp_dir:
            shutil.rmtree(tmp_dir, ignore_errors=True)


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # torch.onnx's errors open with advice; the cause follows "## Exception summary".
    for i, line in enumerate(lines):
        if line.startswith("## Exception summary") and i + 1 < len(lines):
            return lines[i + 1][:300]
    return lines[0][:300] if lines else type(e).__name__


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--filter", default=None, help="only cases whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep case folders this run did not write")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    # nn.MultiheadAttention's fused inference path (torchvision's ViT) has no TorchScript export.
    torch.backends.mha.set_fastpath_enabled(False)
    rows, written = [], set()
    for index, (arch_name, arch) in enumerate(ARCHS):
        for exporter in ("ts", "dynamo"):
            name = f"{arch_name}_{exporter}"
            if args.filter and args.filter not in name:
                continue
            dynamic = (index % 2 == 0) == (exporter == "ts")
            print(f"-- {name} ({'dynamic' if dynamic else 'static'})", flush=True)
            try:
                info, why = make_case(args.out, name, arch, exporter, dynamic)
            except Exception as e:  # noqa: BLE001 - a bug in a builder skips its case, loudly
                traceback.print_exc()
                info, why = None, "generator error: " + first_line(e)
            if why:
                print(f"   skipped: {why}", flush=True)
            else:
                written.add(name)
            rows.append((name, exporter, dynamic, info, why))
    if not args.filter and not args.keep:
        for entry in sorted(os.listdir(args.out)):
            if os.path.isdir(os.path.join(args.out, entry)) and entry not in written:
                print(f"removing stale case folder {entry}")
                shutil.rmtree(os.path.join(args.out, entry))
    print()
    print(f"{'case':30} {'exporter':8} {'opset':5} {'axes':7} {'nodes':>5} {'size':>8} {'ORT-torch':>9}  inputs")
    total = 0
    for name, exporter, dynamic, info, why in rows:
        if info:
            total += info["size"]
            print(f"{name:30} {exporter:8} {info['opset']:<5} {'dynamic' if info['dynamic'] else 'static':7} "
                  f"{info['nodes']:>5} {info['size'] / 1024:>6.0f}KB {info['torch_diff']:>9.1e}  {info['inputs']}")
        else:
            print(f"{name:30} {exporter:8} {'-':5} {'-':7} {'-':>5} {'-':>8} {'-':>9}  SKIPPED: {why}")
    ok = sum(1 for r in rows if r[3])
    print(f"\n{ok} of {len(rows)} cases written to {args.out}; models {total / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
