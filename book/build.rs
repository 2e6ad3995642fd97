//! The build-script chapter's example (src/cli-and-modelgen.md): the digits model generated
//! into `OUT_DIR`, which the chapter's next example includes.

fn main() {
    onnx_codegen::ModelGen::new()
        .input("model/digits.onnx")
        .out_dir("model")
        .load_strategy(onnx_codegen::LoadStrategy::Embedded)
        .run_from_script();
}
