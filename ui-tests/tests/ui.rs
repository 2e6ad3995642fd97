//! Each file in tests/ui must fail to compile with exactly the message in its `.stderr`.
//!
//! Model paths in `#[onnx_model]` are relative to `CARGO_MANIFEST_DIR`, which under trybuild is
//! its generated project folder (`<target>/tests/trybuild/ui-tests`), so the models are copied
//! there first.

use std::path::{Path, PathBuf};

fn trybuild_project_dir() -> PathBuf {
    // The test binary runs from `<target>/<profile>/deps/`.
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe.ancestors().nth(3).expect("target folder");
    target.join("tests").join("trybuild").join("ui-tests")
}

#[test]
fn compile_errors() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let dest = trybuild_project_dir().join("models");
    std::fs::create_dir_all(&dest).expect("create trybuild models folder");
    for entry in std::fs::read_dir(&models).expect("ui-tests/models") {
        let path = entry.expect("model entry").path();
        std::fs::copy(&path, dest.join(path.file_name().expect("file name"))).expect("copy model");
    }
    // The malformed-model corpus (tests/malformed), for the cases that pin its messages as
    // the macro reports them.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/malformed");
    let dest = dest.join("malformed");
    std::fs::create_dir_all(&dest).expect("create trybuild corpus folder");
    for entry in std::fs::read_dir(&corpus).expect("tests/malformed") {
        let path = entry.expect("corpus entry").path();
        if path.extension().is_some_and(|e| e == "onnx") {
            std::fs::copy(&path, dest.join(path.file_name().expect("file name"))).expect("copy corpus model");
        }
    }
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
