//! The imported pipeline scores the held-out rows as scikit-learn and ONNX Runtime do.

use burn::tensor::Device;
use sklearn_pipeline::{accuracy, read_data, score, sklearn_accuracy, test_labels};

#[test]
fn accuracy_is_the_one_scikit_learn_reports() {
    let (predicted, _) = score(&Device::flex());
    let ours = accuracy(&predicted, &test_labels());
    // make_model.py writes scikit-learn's accuracy with six decimals.
    assert!((ours - sklearn_accuracy()).abs() < 1e-6, "accuracy {ours}, scikit-learn {}", sklearn_accuracy());
}

#[test]
fn labels_and_probabilities_match_onnx_runtime() {
    let (predicted, probabilities) = score(&Device::flex());
    assert_eq!(predicted, read_data("ort_labels.pb").to_i64s().unwrap_or_default(), "labels differ from ONNX Runtime");
    let expected = read_data("ort_probabilities.pb").to_f64s().expect("decoded data is in memory");
    assert_eq!(probabilities.len() * 2, expected.len());
    for (row, (map, want)) in probabilities.iter().zip(expected.chunks(2)).enumerate() {
        assert_eq!(map.keys().copied().collect::<Vec<_>>(), [0, 1], "row {row}'s classes");
        for (class, &want) in want.iter().enumerate() {
            let got = f64::from(map[&(class as i64)]);
            assert!((got - want).abs() <= 1e-5, "row {row}, class {class}: {got}, ONNX Runtime {want}");
        }
    }
}
