//! The malformed-model corpus (tests/malformed/, written by scripts/make_malformed_models.py):
//! every model goes through `generate`, the call the CLI, the macro and ModelGen make, and must
//! give the error class and message its manifest line pins, or import when the line says
//! `ok`. A panic, or an import that does not finish in time, fails the test; an abort (an
//! allocation of terabytes) kills it, which fails it too.

use onnx_codegen::error::CodegenError;
use onnx_codegen::generate::{generate, BpkLocation, GenerateOptions, GeneratedModel, LoadStrategy};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Far above what any corpus model needs (the slowest, a 20,000-input Sum, takes well under a
/// second): only an import that grows quadratically or hangs gets here.
const TIME_LIMIT: Duration = Duration::from_secs(20);

/// No corpus model has weights worth a megabyte: more means a huge constant was materialised.
const MAX_WEIGHTS: usize = 1 << 20;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/malformed")
}

struct Case {
    file: String,
    expected: String,
    substring: String,
}

fn manifest() -> Vec<Case> {
    let text = std::fs::read_to_string(corpus().join("manifest.txt")).expect("tests/malformed/manifest.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.splitn(3, '\t');
            let mut next = || parts.next().unwrap_or_default().to_string();
            Case { file: next(), expected: next(), substring: next() }
        })
        .collect()
}

/// The error's class: the `onnx_ir::Error` variant (`Node`, `Decode`, ...), or
/// `Codegen::<variant>` for failures after the IR.
fn class(e: &CodegenError) -> String {
    let debug = format!("{e:?}");
    let variant = |s: &str| s.chars().take_while(char::is_ascii_alphanumeric).collect::<String>();
    match debug.strip_prefix("Ir(") {
        Some(rest) => variant(rest),
        None => format!("Codegen::{}", variant(&debug)),
    }
}

/// Imports in a thread of its own, so that a panic is caught and a hang is noticed.
fn import(bytes: Vec<u8>) -> Result<Result<GeneratedModel, CodegenError>, String> {
    let (tx, rx) = mpsc::channel();
    // The stack rustc gives the thread that expands proc macros: the macro runs on one this size.
    let thread = std::thread::Builder::new().stack_size(8 << 20);
    let _ = thread.spawn(move || {
        let out = PathBuf::from("out");
        let opts = GenerateOptions {
            name: "Malformed",
            strategy: LoadStrategy::Embedded,
            simplify: true,
            partition: true,
            location: BpkLocation::Beside,
            out_dir: &out,
            hooks: &[],
        };
        let result = std::panic::catch_unwind(|| generate(&bytes, &opts));
        let _ = tx.send(result.map_err(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        }));
    });
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(panic)) => Err(format!("panicked: {panic}")),
        Err(_) => Err(format!("did not finish in {TIME_LIMIT:?}")),
    }
}

/// What is wrong with one case's outcome, if anything.
fn check(case: &Case) -> Option<String> {
    let bytes = std::fs::read(corpus().join(&case.file)).expect("corpus model");
    let started = Instant::now();
    let outcome = match import(bytes) {
        Err(failure) => return Some(failure),
        Ok(outcome) => outcome,
    };
    let elapsed = started.elapsed();
    if elapsed > Duration::from_secs(2) {
        eprintln!("{}: {elapsed:.1?}", case.file);
    }
    match (outcome, case.expected.as_str()) {
        (Ok(model), "ok") => {
            let weights = model.bpk.as_ref().map_or(0, Vec::len);
            (weights > MAX_WEIGHTS).then(|| format!("imported with {weights} bytes of weights"))
        }
        (Ok(_), expected) => Some(format!("imported; expected a {expected} error")),
        (Err(e), "ok") => Some(format!("failed: {e}")),
        (Err(e), expected) => {
            let (got, message) = (class(&e), e.to_string());
            (got != expected || !message.contains(&case.substring))
                .then(|| format!("gave {got} error `{message}`; expected {expected} containing `{}`", case.substring))
        }
    }
}

#[test]
fn every_corpus_model_gives_its_pinned_outcome() {
    let cases = manifest();
    assert!(cases.len() > 50, "the corpus is missing (run scripts/make_malformed_models.py)");
    let failures: Vec<String> =
        cases.iter().filter_map(|case| check(case).map(|why| format!("{}: {why}", case.file))).collect();
    assert!(failures.is_empty(), "{} of {} corpus models:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn every_corpus_file_is_in_the_manifest() {
    let listed: std::collections::BTreeSet<String> = manifest().into_iter().map(|c| c.file).collect();
    for entry in std::fs::read_dir(corpus()).expect("corpus folder") {
        let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
        assert!(name == "manifest.txt" || listed.contains(&name), "{name} is not in the manifest");
    }
}
