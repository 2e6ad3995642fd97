//! The digits classifier from code generated once by the CLI and checked in:
//! `onnx2burn examples/digits/model/digits.onnx examples/generated/src --embed-states --no-development`.

mod digits;

use burn::tensor::Device;

fn main() {
    let device = Device::flex();
    let model = digits::Digits::from_embedded(&device);
    let predictions = ::digits::predict(model.forward(::digits::test_images(&device)));
    let labels = ::digits::test_labels();
    let correct = predictions.iter().zip(&labels).filter(|(p, l)| p == l).count();
    println!("generated code: {correct}/{} correct", labels.len());
}
