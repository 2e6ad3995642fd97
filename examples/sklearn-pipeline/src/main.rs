//! Scores the held-out rows with the imported pipeline and prints the accuracy beside
//! scikit-learn's.
#![forbid(unsafe_code)]

use burn::tensor::Device;
use sklearn_pipeline::{accuracy, score, sklearn_accuracy, test_labels};

fn main() {
    let (predicted, probabilities) = score(&Device::flex());
    let truth = test_labels();
    println!(
        "sklearn-pipeline: {} held-out rows, accuracy {:.4} (scikit-learn: {:.4}); first row's probabilities {:?}",
        truth.len(),
        accuracy(&predicted, &truth),
        sklearn_accuracy(),
        probabilities[0]
    );
}
