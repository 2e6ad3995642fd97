//! Tells the code generator's build script where these sources are, in a checkout and in a
//! packaged crate alike (cargo hands it on as `DEP_ONNX_IR_SRC`): they are part of the
//! fingerprint that keys the macro's expansion cache.

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    println!("cargo:src={manifest}/src");
    println!("cargo:rerun-if-changed=build.rs");
}
