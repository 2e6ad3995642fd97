//! The whole import as the macro, the CLI and ModelGen run it: bytes → IR → Burn code (and the
//! `.bpk`). Any error is fine; a panic, an abort (a huge allocation) or a timeout is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onnx_codegen::generate::{generate, BpkLocation, GenerateOptions, LoadStrategy};
use std::path::Path;

fuzz_target!(|bytes: &[u8]| {
    let opts = GenerateOptions {
        name: "Fuzzed",
        strategy: LoadStrategy::Embedded,
        simplify: true,
        partition: true,
        location: BpkLocation::Beside,
        out_dir: Path::new("out"),
        hooks: &[],
        external_data_dir: None,
        ir_dumps: false,
        input_shapes: &[],
    };
    let _ = generate(bytes, &opts);
});
