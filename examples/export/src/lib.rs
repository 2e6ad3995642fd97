//! Networks defined in Burn, to be exported to ONNX: a ResNet-18 and a small transformer
//! encoder. `tests/export.rs` exports them (and one small case per lowered operation) into ONNX
//! test folders; `scripts/check_export.py` checks the files with `onnx.checker` and ONNX Runtime,
//! and the test runner imports them back with `#[onnx_model]`.
#![forbid(unsafe_code)]

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn::nn::transformer::{TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput};
use burn::nn::{
    BatchNorm, BatchNormConfig, Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig,
    PaddingConfig2d, Relu,
};
use burn::tensor::{Bool, Device, Int, Tensor};

/// Conv, batch norm, ReLU: the unit ResNet is built from.
#[derive(Module, Debug)]
pub struct ConvBn {
    conv: Conv2d,
    bn: BatchNorm,
}

impl ConvBn {
    fn new(channels: [usize; 2], kernel: usize, stride: usize, device: &Device) -> Self {
        let pad = kernel / 2;
        let conv = Conv2dConfig::new(channels, [kernel, kernel])
            .with_stride([stride, stride])
            .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
            .with_bias(false)
            .init(device);
        Self { conv, bn: BatchNormConfig::new(channels[1]).init(device) }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        self.bn.forward(self.conv.forward(x))
    }
}

/// ResNet's basic block: two 3×3 convs and a shortcut (a strided 1×1 conv where the shape changes).
#[derive(Module, Debug)]
pub struct BasicBlock {
    first: ConvBn,
    second: ConvBn,
    shortcut: Option<ConvBn>,
    relu: Relu,
}

impl BasicBlock {
    fn new(channels: [usize; 2], stride: usize, device: &Device) -> Self {
        let shortcut = (stride != 1 || channels[0] != channels[1]).then(|| ConvBn::new(channels, 1, stride, device));
        Self {
            first: ConvBn::new(channels, 3, stride, device),
            second: ConvBn::new([channels[1], channels[1]], 3, 1, device),
            shortcut,
            relu: Relu::new(),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let identity = match &self.shortcut {
            Some(shortcut) => shortcut.forward(x.clone()),
            None => x.clone(),
        };
        let y = self.relu.forward(self.first.forward(x));
        self.relu.forward(self.second.forward(y) + identity)
    }
}

/// ResNet-18 (He et al. 2015): a 7×7 stem, max pooling, four stages of two basic blocks
/// (64, 128, 256, 512 channels), global average pooling and a linear classifier.
#[derive(Module, Debug)]
pub struct ResNet18 {
    stem: ConvBn,
    pool: MaxPool2d,
    stages: Vec<BasicBlock>,
    head_pool: AdaptiveAvgPool2d,
    fc: Linear,
    relu: Relu,
}

impl ResNet18 {
    pub fn new(classes: usize, device: &Device) -> Self {
        let mut stages = Vec::new();
        let mut channels = 64;
        for (i, width) in [64, 128, 256, 512].into_iter().enumerate() {
            let stride = if i == 0 { 1 } else { 2 };
            stages.push(BasicBlock::new([channels, width], stride, device));
            stages.push(BasicBlock::new([width, width], 1, device));
            channels = width;
        }
        Self {
            stem: ConvBn::new([3, 64], 7, 2, device),
            pool: MaxPool2dConfig::new([3, 3])
                .with_strides([2, 2])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(),
            stages,
            head_pool: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            fc: LinearConfig::new(512, classes).init(device),
            relu: Relu::new(),
        }
    }

    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let mut x = self.pool.forward(self.relu.forward(self.stem.forward(images)));
        for block in &self.stages {
            x = block.forward(x);
        }
        self.fc.forward(self.head_pool.forward(x).flatten(1, 3))
    }
}

/// A token classifier: embedding, learned positions, a two-layer transformer encoder (multi-head
/// attention with a padding mask, layer norm, GELU MLP) and a linear head per token.
#[derive(Module, Debug)]
pub struct Encoder {
    tokens: Embedding,
    positions: Embedding,
    encoder: TransformerEncoder,
    norm: LayerNorm,
    head: Linear,
}

impl Encoder {
    pub const VOCAB: usize = 100;
    pub const MAX_LEN: usize = 32;

    pub fn new(device: &Device) -> Self {
        let d_model = 64;
        Self {
            tokens: EmbeddingConfig::new(Self::VOCAB, d_model).init(device),
            positions: EmbeddingConfig::new(Self::MAX_LEN, d_model).init(device),
            encoder: TransformerEncoderConfig::new(d_model, 128, 4, 2).init(device),
            norm: LayerNormConfig::new(d_model).init(device),
            head: LinearConfig::new(d_model, 8).init(device),
        }
    }

    /// `tokens`: `[batch, seq]` ids; `padding`: true where a position is padding.
    pub fn forward(&self, tokens: Tensor<2, Int>, padding: Tensor<2, Bool>) -> Tensor<3> {
        let [batch, seq] = tokens.dims();
        let positions =
            Tensor::<1, Int>::arange(0..seq as i64, &tokens.device()).reshape([1, seq]).repeat_dim(0, batch);
        let x = self.tokens.forward(tokens) + self.positions.forward(positions);
        let x = self.encoder.forward(TransformerEncoderInput::new(x).mask_pad(padding));
        self.head.forward(self.norm.forward(x))
    }
}
