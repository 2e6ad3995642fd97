//! A fingerprint of the code generator's sources (this crate's and onnx-ir's), part of the
//! macro's expansion-cache key: an expansion cached by a different generator is never reused,
//! even when the crate version did not change (path or git dependencies, development).
//! onnx-ir's build script names its source folder (`DEP_ONNX_IR_SRC`), so this works from a
//! packaged crate as from the workspace.

use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::Xxh3;

/// Hashes every `.rs` file under `dir`, in sorted order, with its path relative to `dir` under
/// `label`, so that the fingerprint does not depend on where the sources are.
fn hash_sources(hasher: &mut Xxh3, label: &str, dir: &Path, current: &Path) {
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(current).into_iter().flatten().flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            hash_sources(hasher, label, dir, &path);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(dir).unwrap_or(&path);
            hasher.update(format!("{label}/{}\0", relative.display()).as_bytes());
            hasher.update(&std::fs::read(&path).unwrap_or_default());
        }
    }
}

fn main() {
    let own = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default()).join("src");
    let ir = PathBuf::from(std::env::var_os("DEP_ONNX_IR_SRC").expect("onnx-ir's build script names its sources"));
    let mut hasher = Xxh3::new();
    for (label, dir) in [("onnx-codegen", &own), ("onnx-ir", &ir)] {
        println!("cargo:rerun-if-changed={}", dir.display());
        hash_sources(&mut hasher, label, dir, dir);
    }
    println!("cargo:rustc-env=BURN_ONNX_GENERATOR_FINGERPRINT={:016x}", hasher.digest());
}
