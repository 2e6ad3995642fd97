//! A scikit-learn pipeline imported at compile time, and the held-out rows it is scored on.
#![forbid(unsafe_code)]

use burn::tensor::{Device, Tensor, TensorData};
use burn_onnx::{onnx_model, ScoreMap};
use std::path::Path;

/// Median imputation, standard scaling and one-hot encoding (a ColumnTransformer) feeding a
/// 32-tree random forest, converted by skl2onnx with its default options (`make_model.py`).
/// `forward` returns each row's label and, as ZipMap's maps, its class probabilities.
#[onnx_model("model/pipeline.onnx")]
pub struct Pipeline;

/// Reads one of the TensorProto files `make_model.py` wrote under `data/`.
pub fn read_data(name: &str) -> onnx_ir::TensorData {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    onnx_ir::TensorData::decode(&bytes).unwrap_or_else(|e| panic!("cannot decode {}: {e}", path.display()))
}

/// The held-out rows, `[N, 30]`, missing values as NaN.
pub fn test_features(device: &Device) -> Tensor<2> {
    let data = read_data("test_features.pb");
    let values: Vec<f32> = data.to_f64s().expect("decoded data is in memory").into_iter().map(|v| v as f32).collect();
    Tensor::from_data(TensorData::new(values, data.shape.clone()), device)
}

/// The held-out rows' true classes.
pub fn test_labels() -> Vec<i64> {
    read_data("test_labels.pb").to_i64s().unwrap_or_default()
}

/// The accuracy scikit-learn reported on the same rows.
pub fn sklearn_accuracy() -> f64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join("sklearn_accuracy.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.trim().parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Scores the held-out rows: the predicted labels and each row's probability of every class.
pub fn score(device: &Device) -> (Vec<i64>, Vec<ScoreMap<i64>>) {
    let (labels, probabilities) = Pipeline::from_embedded(device).forward(test_features(device));
    (labels.into_data().iter::<i64>().collect(), probabilities)
}

/// The share of `predicted` equal to `truth`.
pub fn accuracy(predicted: &[i64], truth: &[i64]) -> f64 {
    let correct = predicted.iter().zip(truth).filter(|(p, t)| p == t).count();
    correct as f64 / truth.len() as f64
}
