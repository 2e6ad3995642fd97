//! The digits classifier of examples/digits, imported by `#[onnx_model]` with its weights
//! embedded, in a `#![no_std]` library: everything it and the generated code use comes from
//! `core` and `alloc`. It runs on Burn's flex backend (pure Rust, no_std).

#![no_std]

extern crate alloc;

use alloc::vec::Vec;
use burn_onnx::burn::tensor::{Device, Tensor, TensorData};
use burn_onnx::onnx_model;

/// Conv → Relu → MaxPool → Flatten → Gemm over 8x8 images (see examples/digits).
#[onnx_model("../../digits/model/digits.onnx")]
pub struct Digits;

/// Pixels per image (8x8, one channel).
pub const PIXELS: usize = 64;

/// The model on Burn's flex device, its weights read from the binary.
pub fn model() -> Digits {
    Digits::from_embedded(&Device::flex())
}

/// The logits of `pixels.len() / PIXELS` images (pixels in [0, 1], row-major), row-major
/// `[images, 10]`.
pub fn logits(model: &Digits, pixels: &[f32]) -> Vec<f32> {
    let images = pixels.len() / PIXELS;
    let data = TensorData::new(pixels[..images * PIXELS].to_vec(), [images, 1, 8, 8]);
    let logits = model.forward(Tensor::from_data(data, &Device::flex()));
    logits.into_data().try_into_vec::<f32>().expect("the model's logits are f32")
}

/// The most likely digit of each image (the first of equal logits).
pub fn classify(model: &Digits, pixels: &[f32]) -> Vec<u8> {
    let logits = logits(model, pixels);
    logits.chunks(10).map(|row| (0..10).fold(0, |best, i| if row[i] > row[best] { i } else { best }) as u8).collect()
}
