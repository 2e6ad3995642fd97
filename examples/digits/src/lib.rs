//! The digits classifier imported at compile time, and the test split it is evaluated on.
#![forbid(unsafe_code)]

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_onnx::onnx_model;
use std::path::Path;

pub mod parallel;

/// Conv → Relu → MaxPool → Flatten → Gemm, trained by `train.py` (98.7% test accuracy in ONNX Runtime).
#[onnx_model("model/digits.onnx")]
pub struct Digits;

/// Reads one of the TensorProto files `train.py` wrote under `data/`.
pub fn read_data(name: &str) -> onnx_ir::TensorData {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    onnx_ir::TensorData::decode(&bytes).unwrap_or_else(|e| panic!("cannot decode {}: {e}", path.display()))
}

/// The test images, `[N, 1, 8, 8]` with pixels in [0, 1].
pub fn test_images(device: &Device) -> Tensor<4> {
    images("test_images.pb", device)
}

/// The test labels, `[N]`.
pub fn test_labels() -> Vec<i64> {
    read_data("test_labels.pb").to_i64s().unwrap_or_default()
}

/// The training images (the 75% split `train.py` trained on), `[M, 1, 8, 8]`.
pub fn train_images(device: &Device) -> Tensor<4> {
    images("train_images.pb", device)
}

/// The training labels, `[M]`.
pub fn train_labels() -> Vec<i64> {
    read_data("train_labels.pb").to_i64s().unwrap_or_default()
}

fn images(name: &str, device: &Device) -> Tensor<4> {
    let data = read_data(name);
    let values: Vec<f32> = data.to_f64s().expect("decoded data is in memory").into_iter().map(|v| v as f32).collect();
    Tensor::from_data(TensorData::new(values, data.shape.clone()), device)
}

/// Predicted class per image.
pub fn predict(logits: Tensor<2>) -> Vec<i64> {
    let classes: Tensor<2, Int> = logits.argmax(1);
    classes.into_data().iter::<i64>().collect()
}
