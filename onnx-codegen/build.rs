//! A fingerprint of the code generator's sources (this crate's and onnx-ir's), part of the
//! macro's expansion-cache key: an expansion cached by a different generator is never reused,
//! even when the crate version did not change (path or git dependencies, development).

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut sources = vec![];
    for dir in [manifest.join("src"), manifest.join("../onnx-ir/src")] {
        println!("cargo:rerun-if-changed={}", dir.display());
        files(&dir, &mut sources);
    }
    // Sorted by path relative to the manifest, so the fingerprint does not depend on where
    // the checkout is.
    sources.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for path in &sources {
        let relative = path.strip_prefix(&manifest).unwrap_or(path);
        let bytes = [relative.to_string_lossy().as_bytes(), &std::fs::read(path).unwrap_or_default()].concat();
        for byte in bytes {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=BURN_ONNX_GENERATOR_FINGERPRINT={hash:016x}");
}
