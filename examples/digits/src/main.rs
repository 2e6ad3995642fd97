//! Classifies the held-out digits with the imported model and prints the accuracy.
#![forbid(unsafe_code)]

use burn::tensor::Device;
use digits::{predict, test_images, test_labels, Digits};

fn main() {
    let device = Device::flex();
    let model = Digits::from_embedded(&device);
    let images = test_images(&device);
    let labels = test_labels();
    let predictions = predict(model.forward(images));
    let correct = predictions.iter().zip(&labels).filter(|(p, l)| p == l).count();
    println!(
        "digits: {correct}/{} test images classified correctly, accuracy {:.2}%",
        labels.len(),
        100.0 * correct as f64 / labels.len() as f64
    );
}
