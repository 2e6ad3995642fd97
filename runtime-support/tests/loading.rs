//! Loading weights: a missing file (a `weights = "file"` program moved away from its build) is
//! a `LoadError` that names the path and `from_file`; Burnpack bytes load into a module of their
//! shape and are refused by another.

use burn::nn::LinearConfig;
use burn::tensor::Device;

#[test]
fn a_missing_weights_file_names_the_path_and_from_file() {
    let linear = LinearConfig::new(2, 3).init(&Device::flex());
    let path = std::env::temp_dir().join("burn-onnx-no-such-dir").join("model-0123456789abcdef.bpk");
    let err = burn_onnx::load_file(linear, &path).expect_err("the file does not exist");
    assert!(matches!(err, burn_onnx::LoadError::Missing { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("from_file(path, device)"), "{message}");
}

#[test]
fn burnpack_bytes_load_into_a_module_of_their_shape_only() {
    use burn_store::{BurnpackStore, ModuleSnapshot};
    let device = Device::flex();
    let saved = LinearConfig::new(2, 3).init(&device);
    let mut store = BurnpackStore::from_bytes(None);
    saved.save_into(&mut store).expect("saved");
    let bytes = store.get_bytes().expect("written bytes").to_vec();
    let loaded = burn_onnx::load_bytes(LinearConfig::new(2, 3).init(&device), bytes.clone()).expect("loaded");
    assert_eq!(loaded.weight.val().into_data(), saved.weight.val().into_data());
    let bias = |l: &burn::nn::Linear| l.bias.as_ref().expect("a bias").val().into_data();
    assert_eq!(bias(&loaded), bias(&saved));
    let err = burn_onnx::load_bytes(LinearConfig::new(3, 3).init(&device), bytes).expect_err("another shape");
    // Burnpack's validation refuses it before loading, naming the tensor and both shapes.
    assert!(matches!(&err, burn_onnx::LoadError::Format(m) if m.contains("ShapeMismatch")), "{err:?}");
}
