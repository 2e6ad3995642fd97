//! Regenerating the checked-in code (as `onnx2burn --embed-states --no-development` does)
//! gives the identical text and weights.

use onnx_codegen::generate::{generate, GenerateOptions, LoadStrategy};
use std::path::Path;

#[test]
fn checked_in_code_is_what_the_cli_generates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("../digits/model/digits.onnx")).expect("digits model");
    let out_dir = root.join("src");
    let opts = GenerateOptions { strategy: LoadStrategy::Embedded, ..GenerateOptions::new("Digits", &out_dir) };
    let model = generate(&bytes, &opts).expect("generates");
    let code = std::fs::read_to_string(out_dir.join("digits.rs")).expect("checked-in code");
    assert!(
        code == model.code,
        "examples/generated/src/digits.rs differs from what onnx2burn generates now; regenerate it"
    );
    let bpk = model.bpk.map(|pack| pack.to_bytes().expect("packs"));
    assert_eq!(std::fs::read(out_dir.join("digits.bpk")).ok(), bpk, "digits.bpk differs");
}
