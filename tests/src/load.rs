//! Each load strategy of the generated code, on the digits model: embedded weights, a `.bpk`
//! file, bytes, none; and the error paths (missing, truncated, corrupt, mismatched weights).

use burn::tensor::{Device, Tensor};
use burn_onnx::{onnx_model, LoadError};

#[onnx_model("../examples/digits/model/digits.onnx")]
pub struct Embedded;

#[onnx_model("../examples/digits/model/digits.onnx", weights = "file")]
pub struct FromFile;

#[onnx_model("../examples/digits/model/digits.onnx", weights = "none")]
pub struct NoWeights;

fn images(device: &Device) -> Tensor<4> {
    Tensor::<4>::ones([2, 1, 8, 8], device).mul_scalar(0.5)
}

fn logits(t: Tensor<2>) -> Vec<f32> {
    t.into_data().iter::<f32>().collect()
}

#[test]
fn file_strategy_matches_embedded() {
    let device = crate::device();
    let embedded = logits(Embedded::from_embedded(&device).forward(images(&device)));
    let from_default = logits(FromFile::default().forward(images(&device)));
    let from_file =
        logits(FromFile::from_file(FromFile::WEIGHTS_FILE, &device).expect("loads").forward(images(&device)));
    assert_eq!(embedded, from_default);
    assert_eq!(embedded, from_file);
}

#[test]
fn bytes_strategy_matches_embedded() {
    let device = crate::device();
    let bytes = std::fs::read(FromFile::WEIGHTS_FILE).expect("weights file");
    let from_bytes = logits(Embedded::from_bytes(bytes, &device).expect("loads").forward(images(&device)));
    assert_eq!(from_bytes, logits(Embedded::default().forward(images(&device))));
}

#[test]
fn no_weights_builds_the_structure() {
    let device = crate::device();
    let model = NoWeights::new(&device);
    assert_eq!(model.forward(images(&device)).dims(), [2, 10]);
}

#[test]
fn missing_file_names_the_path_and_from_file() {
    let err = FromFile::from_file("/nonexistent/digits.bpk", &crate::device()).expect_err("must fail");
    assert!(matches!(err, LoadError::Missing { .. }), "{err}");
    assert!(err.to_string().contains("`/nonexistent/digits.bpk`") && err.to_string().contains("from_file"), "{err}");
}

#[test]
fn truncated_and_corrupt_weights_are_errors() {
    let device = crate::device();
    let bytes = std::fs::read(FromFile::WEIGHTS_FILE).expect("weights file");
    let truncated = bytes[..bytes.len() / 2].to_vec();
    assert!(Embedded::from_bytes(truncated, &device).is_err());
    let corrupt: Vec<u8> = bytes.iter().map(|b| b ^ 0x5a).collect();
    assert!(Embedded::from_bytes(corrupt, &device).is_err());
    let dir = std::env::temp_dir().join(format!("burn-onnx-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("corrupt.bpk");
    std::fs::write(&path, b"not a burnpack file").expect("write");
    assert!(FromFile::from_file(&path, &device).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn weights_of_another_model_do_not_load() {
    let err = Embedded::from_bytes(conv_weights(), &crate::device()).expect_err("mismatched weights must fail");
    assert!(matches!(err, LoadError::Format(_) | LoadError::Mismatch(_)), "{err}");
}

/// The Burnpack weights of a different model (the conv_v11 case), as the generator packs them.
fn conv_weights() -> Vec<u8> {
    let path = crate::case_dir("models/conv_v11/model.onnx").join("model.onnx");
    let graph =
        onnx_ir::import(&std::fs::read(path).expect("model"), onnx_ir::ImportOptions::default()).expect("imports");
    let lowered = onnx_codegen::model::lower(&graph).expect("lowers");
    onnx_codegen::weights::pack(&lowered.weights).expect("packs")
}
