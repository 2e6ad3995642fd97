//! `src/proto/onnx.rs` is prost-build's output for the vendored `proto/onnx.proto`, checked in
//! so that building needs no protoc and no build script: this test regenerates it (protox
//! parses the schema, no protoc) and compares the two byte for byte.
//! `REGENERATE_PROTO=1 cargo test -p onnx-graph-ir --test proto_schema` rewrites the checked-in file.

use std::path::Path;

fn generate(out_dir: &Path) -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let descriptors = protox::compile(["onnx.proto"], [manifest.join("proto")]).expect("proto/onnx.proto parses");
    std::fs::create_dir_all(out_dir).expect("a temporary folder");
    prost_build::Config::new().out_dir(out_dir).compile_fds(descriptors).expect("prost-build generates");
    std::fs::read_to_string(out_dir.join("onnx.rs")).expect("prost-build writes onnx.rs")
}

#[test]
fn checked_in_messages_match_the_vendored_schema() {
    let generated = generate(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("onnx-proto"));
    let checked_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/proto/onnx.rs");
    if std::env::var_os("REGENERATE_PROTO").is_some() {
        std::fs::write(&checked_in, &generated).expect("writes src/proto/onnx.rs");
    }
    let current = std::fs::read_to_string(&checked_in).unwrap_or_default();
    assert!(
        current == generated,
        "src/proto/onnx.rs is not prost-build's output for proto/onnx.proto; regenerate it with \
         `REGENERATE_PROTO=1 cargo test -p onnx-graph-ir --test proto_schema`"
    );
}
