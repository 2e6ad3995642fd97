//! The imported model is a Burn module that trains: on an Autodiff device over flex, every
//! weight of the ONNX file gets a gradient, 50 Adam steps on the training split lower the
//! loss, the test accuracy stays at least 97%, and the fine-tuned weights saved with burn-store
//! load back into the generated struct with the same outputs.

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_onnx::burn_store::{BurnpackStore, ModuleSnapshot};
use digits::{predict, test_images, test_labels, train_images, train_labels, Digits};

fn labels(values: Vec<i64>, device: &Device) -> Tensor<1, Int> {
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

fn loss(model: &Digits, images: Tensor<4>, targets: Tensor<1, Int>) -> Tensor<1> {
    CrossEntropyLossConfig::new().init(&images.device()).forward(model.forward(images), targets)
}

/// The float initializers of the model file, counted from the file itself.
fn float_initializers() -> usize {
    use prost::Message;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("model/digits.onnx");
    let model = onnx_ir::proto::ModelProto::decode(std::fs::read(path).expect("model file").as_slice()).expect("model");
    let float = onnx_ir::proto::tensor_proto::DataType::Float as i32;
    model.graph.unwrap_or_default().initializer.iter().filter(|t| t.data_type == Some(float)).count()
}

fn accuracy(model: &Digits) -> f64 {
    let device = Device::flex();
    let predictions = predict(model.forward(test_images(&device)));
    let truth = test_labels();
    predictions.iter().zip(&truth).filter(|(p, t)| p == t).count() as f64 / truth.len() as f64
}

#[test]
fn fine_tunes_saves_and_reloads() {
    let device = Device::flex().autodiff();
    let (images, targets) = (train_images(&device), labels(train_labels(), &device));
    let mut model = Digits::from_embedded(&device);

    // Every float initializer of the ONNX file is a parameter that receives a gradient.
    let gradients = GradientsParams::from_grads(loss(&model, images.clone(), targets.clone()).backward(), &model);
    let initializers = float_initializers();
    println!("digits: {} of {initializers} float initializers of the ONNX file got a gradient", gradients.len());
    assert_eq!(gradients.len(), initializers);

    let before = loss(&model, images.clone(), targets.clone()).into_scalar::<f32>();
    let mut optimizer = AdamConfig::new().init();
    let batch = 64;
    let count = images.dims()[0];
    for step in 0..50 {
        let start = (step * batch) % (count - batch);
        let (x, y) = (images.clone().narrow(0, start, batch), targets.clone().narrow(0, start, batch));
        let grads = GradientsParams::from_grads(loss(&model, x, y).backward(), &model);
        model = optimizer.step(1e-3, model, grads);
    }
    let after = loss(&model, images, targets).into_scalar::<f32>();
    let tuned = model.valid();
    let accuracy = accuracy(&tuned);
    println!(
        "digits fine-tuning: training loss {before:.4} -> {after:.4} after 50 Adam steps, test accuracy {:.2}%",
        accuracy * 100.0
    );
    assert!(after < before, "loss did not decrease: {before} -> {after}");
    assert!(accuracy >= 0.97, "test accuracy {accuracy}");

    // Saved with burn-store, loaded into a fresh generated struct: the same outputs.
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("digits_fine_tuned.bpk");
    tuned.save_into(&mut BurnpackStore::from_file(&path).overwrite(true)).expect("save");
    let reloaded = Digits::from_file(&path, &Device::flex()).expect("load");
    let (x, y) = (test_images(&Device::flex()), test_images(&Device::flex()));
    let diff = (tuned.forward(x) - reloaded.forward(y)).abs().max().into_scalar::<f32>();
    assert!(diff == 0.0, "reloaded model differs by {diff}");
}
