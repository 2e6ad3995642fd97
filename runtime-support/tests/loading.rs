//! Loading weights from a file: a missing file (a `weights = "file"` program moved away from
//! its build) is a `LoadError` that names the path and `from_file`.

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
