#![forbid(unsafe_code)]
use build_script_example::model::Digits;
use burn::tensor::Device;

fn main() {
    let device = Device::flex();
    let predictions = digits::predict(Digits::default().forward(digits::test_images(&device)));
    let labels = digits::test_labels();
    let correct = predictions.iter().zip(&labels).filter(|(p, l)| p == l).count();
    println!("build-script model: {correct}/{} correct", labels.len());
}
