//! The imported model agrees with ONNX Runtime (outputs saved by train.py) on the test split.

use burn::tensor::Device;
use digits::{predict, read_data, test_images, test_labels, Digits};

#[test]
fn logits_match_onnx_runtime() {
    let device = Device::flex();
    let logits = Digits::from_embedded(&device).forward(test_images(&device));
    let expected = read_data("ort_logits.pb");
    assert_eq!(logits.dims().to_vec(), expected.shape);
    let ours: Vec<f64> = logits.clone().into_data().iter::<f64>().collect();
    let max_diff = ours
        .iter()
        .zip(expected.to_f64s().expect("decoded data is in memory"))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(max_diff <= 1e-4, "max |ours - ORT| = {max_diff:e}, above 1e-4");

    let ort = expected.to_f64s().expect("decoded data is in memory");
    let classes = expected.shape[1];
    let ort_classes: Vec<i64> = ort
        .chunks(classes)
        .map(|row| row.iter().enumerate().fold(0, |best, (i, &v)| if v > row[best] { i } else { best }) as i64)
        .collect();
    assert_eq!(predict(logits), ort_classes, "top-1 classes differ from ONNX Runtime");
}

#[test]
fn accuracy_above_90_percent() {
    let device = Device::flex();
    let predictions = predict(Digits::default().forward(test_images(&device)));
    let labels = test_labels();
    let correct = predictions.iter().zip(&labels).filter(|(p, l)| p == l).count();
    assert!(correct * 10 > labels.len() * 9, "accuracy {correct}/{}", labels.len());
}
