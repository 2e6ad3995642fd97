//! Loading weights: a missing file (a `weights = "file"` program moved away from its build) is
//! a `LoadError` that names the path and `from_file`; Burnpack bytes, owned or `'static` (the
//! embedded weights' zero-copy path), load into a module of their shape and are refused by
//! another; bytes that are not a Burnpack are a format error.

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

/// A seeded Linear(2, 3) with bias and its Burnpack bytes.
fn saved_linear(device: &Device) -> (burn::nn::Linear, Vec<u8>) {
    use burn_store::{BurnpackStore, ModuleSnapshot};
    let saved = LinearConfig::new(2, 3).init(device);
    let mut store = BurnpackStore::from_bytes(None);
    saved.save_into(&mut store).expect("saved");
    let bytes = store.get_bytes().expect("written bytes").to_vec();
    (saved, bytes)
}

#[test]
fn burnpack_bytes_load_into_a_module_of_their_shape_only() {
    let device = Device::flex();
    let (saved, bytes) = saved_linear(&device);
    let loaded = burn_onnx::load_bytes(LinearConfig::new(2, 3).init(&device), bytes.clone()).expect("loaded");
    assert_eq!(loaded.weight.val().into_data(), saved.weight.val().into_data());
    let bias = |l: &burn::nn::Linear| l.bias.as_ref().expect("a bias").val().into_data();
    assert_eq!(bias(&loaded), bias(&saved));
    let err = burn_onnx::load_bytes(LinearConfig::new(3, 3).init(&device), bytes).expect_err("another shape");
    // Burnpack's validation refuses it before loading, naming the tensor and both shapes.
    assert!(matches!(&err, burn_onnx::LoadError::Format(m) if m.contains("ShapeMismatch")), "{err:?}");
}

#[test]
fn static_burnpack_bytes_load_as_embedded_weights_do() {
    let device = Device::flex();
    let (saved, bytes) = saved_linear(&device);
    // Generated code passes `include_bytes_aligned!` data, which lives for the whole program.
    let embedded: &'static [u8] = Vec::leak(bytes);
    let loaded = burn_onnx::load_static(LinearConfig::new(2, 3).init(&device), embedded).expect("loaded");
    assert_eq!(loaded.weight.val().into_data(), saved.weight.val().into_data());
    let err = burn_onnx::load_static(LinearConfig::new(2, 4).init(&device), embedded).expect_err("another shape");
    assert!(matches!(&err, burn_onnx::LoadError::Format(m) if m.contains("ShapeMismatch")), "{err:?}");
    let not_a_pack: &'static [u8] = b"ONNX is not Burnpack";
    let err = burn_onnx::load_static(LinearConfig::new(2, 3).init(&device), not_a_pack).expect_err("not a pack");
    assert!(matches!(err, burn_onnx::LoadError::Format(_)), "{err:?}");
}
