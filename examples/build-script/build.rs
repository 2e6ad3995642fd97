//! Generates the digits model into OUT_DIR at build time.

use onnx_codegen::{LoadStrategy, ModelGen};

fn main() {
    ModelGen::new()
        .input("../digits/model/digits.onnx")
        .out_dir("model")
        .load_strategy(LoadStrategy::Embedded)
        .run_from_script();
}
