//! The whole import as the macro, the CLI and ModelGen run it: bytes → IR → Burn code (and the
//! `.bpk`). Any error is fine; a panic, an abort (a huge allocation) or a timeout is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_codegen::generate::{generate, GenerateOptions, LoadStrategy};
use std::path::Path;

fuzz_target!(|bytes: &[u8]| {
    let opts = GenerateOptions {
        strategy: LoadStrategy::Embedded,
        ..GenerateOptions::new("Fuzzed", Path::new("out"))
    };
    let _ = generate(bytes, &opts);
});
