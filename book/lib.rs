//! The book's examples as doc-tests: each chapter of `src/`, the README and the macros'
//! reference (`onnx-macro/src/*.md`) is the documentation of a module here, so
//! `cargo test --workspace` compiles every Rust block in them and runs those not marked `no_run`
//! (each such block says why). They import the repository's example models through `model/`,
//! links to them, with the paths a user's crate would write.
#![forbid(unsafe_code)]

#[doc = include_str!("../README.md")]
mod readme {}

// The macros' reference (their rustdoc, rendered in burn_onnx's docs): tested here, where
// `burn_onnx` is a dependency, rather than in the proc-macro crate (see onnx-macro/src/lib.rs).
#[doc = include_str!("../onnx-macro/src/onnx_model.md")]
mod onnx_model_reference {}
#[doc = include_str!("../onnx-macro/src/onnx_custom_op.md")]
mod onnx_custom_op_reference {}

/// A module per chapter, and the list of their files for the test below.
macro_rules! chapters {
    ($($module:ident: $file:literal,)*) => {
        $(
            #[doc = include_str!(concat!("src/", $file))]
            mod $module {}
        )*
        #[cfg(test)]
        const CHAPTERS: &[&str] = &[$($file),*];
    };
}

chapters! {
    introduction: "introduction.md",
    using_the_macro: "macro.md",
    custom_ops: "custom-ops.md",
    cli_and_modelgen: "cli-and-modelgen.md",
    backends: "backends.md",
    fine_tuning: "fine-tuning.md",
    export: "export.md",
    pytorch: "pytorch.md",
    classic_ml: "classic-ml.md",
    symbolic_dims: "symbolic-dims.md",
    real_models: "real-models.md",
    beyond_one_machine: "beyond-one-machine.md",
    performance: "performance.md",
    operators: "operators.md",
    tests: "tests.md",
    contributing: "contributing.md",
}

#[cfg(test)]
mod chapter_list {
    use super::CHAPTERS;
    use std::collections::BTreeSet;
    use std::path::Path;

    /// A chapter that `SUMMARY.md` lists or that lies in `src/` has its examples tested here.
    #[test]
    fn every_chapter_is_a_doc_test_module() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("src/SUMMARY.md");
        let listed: BTreeSet<&str> = summary.split("](").skip(1).filter_map(|rest| rest.split(')').next()).collect();
        let files: BTreeSet<String> = std::fs::read_dir(&src)
            .expect("src/")
            .map(|entry| entry.expect("a folder entry").file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".md") && name != "SUMMARY.md")
            .collect();
        let tested: BTreeSet<&str> = CHAPTERS.iter().copied().collect();
        assert_eq!(listed, tested, "SUMMARY.md's chapters and the modules of lib.rs differ");
        assert_eq!(
            files.iter().map(String::as_str).collect::<BTreeSet<_>>(),
            tested,
            "src/ holds a chapter lib.rs lacks"
        );
    }
}
