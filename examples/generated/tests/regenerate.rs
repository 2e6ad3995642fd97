//! Regenerating the checked-in code (as `onnx2burn --embed-states --no-development` does)
//! gives the identical text and weights.

use onnx_codegen::generate::{generate, BpkLocation, GenerateOptions, LoadStrategy};
use std::path::Path;

#[test]
fn checked_in_code_is_what_the_cli_generates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("../digits/model/digits.onnx")).expect("digits model");
    let out_dir = root.join("src");
    let opts = GenerateOptions {
        name: "Digits",
        strategy: LoadStrategy::Embedded,
        simplify: true,
        partition: true,
        location: BpkLocation::Beside,
        out_dir: &out_dir,
        hooks: &[],
        external_data_dir: None,
        ir_dumps: false,
        input_shapes: &[],
    };
    let model = generate(&bytes, &opts).expect("generates");
    let code = std::fs::read_to_string(out_dir.join("digits.rs")).expect("checked-in code");
    assert!(
        code == model.code,
        "examples/generated/src/digits.rs differs from what onnx2burn generates now; regenerate it"
    );
    let bpk = model.bpk.map(|pack| pack.to_bytes().expect("packs"));
    assert_eq!(std::fs::read(out_dir.join("digits.bpk")).ok(), bpk, "digits.bpk differs");
}
