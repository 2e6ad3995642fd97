//! The malformed-model corpus (tests/malformed/, written by scripts/make_malformed_models.py):
//! every model goes through `generate`, the call the CLI, the macro and ModelGen make, and must
//! give the error class and message its manifest line pins, or import when the line says
//! `ok`. A panic, or an import that does not finish in time, fails the test; an abort (an
//! allocation of terabytes) kills it, which fails it too.

use onnx_codegen::error::CodegenError;
use onnx_codegen::generate::{generate, GenerateOptions, GeneratedModel, LoadStrategy};
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

/// The CLI's options (embedded weights, simplified, partitioned) for a model named `name`.
fn options<'a>(name: &'a str, out: &'a std::path::Path) -> GenerateOptions<'a> {
    GenerateOptions { strategy: LoadStrategy::Embedded, ..GenerateOptions::new(name, out) }
}

/// Imports in a thread of its own, so that a panic is caught and a hang is noticed.
fn import(bytes: Vec<u8>) -> Result<Result<GeneratedModel<'static>, CodegenError>, String> {
    let (tx, rx) = mpsc::channel();
    // The stack rustc gives the thread that expands proc macros: the macro runs on one this size.
    let thread = std::thread::Builder::new().stack_size(8 << 20);
    let _ = thread.spawn(move || {
        let out = PathBuf::from("out");
        let opts = options("Malformed", &out);
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
            let weights = model.bpk.as_ref().map_or(0, |pack| pack.to_bytes().map_or(0, |b| b.len()));
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

/// A small deterministic generator (xorshift64*), so that every run tries the same mutants.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutant of `bytes`: truncated, bit-flipped, overwritten or with bytes inserted.
fn mutate(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut m = bytes.to_vec();
    match rng.below(4) {
        0 => m.truncate(rng.below(m.len())),
        1 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(m.len());
                m[at] ^= 1 << rng.below(8);
            }
        }
        2 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(m.len());
                m[at] = rng.next() as u8;
            }
        }
        _ => {
            let at = rng.below(m.len());
            let extra: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
            m.splice(at..at, extra);
        }
    }
    m
}

/// Mutants of small models (every per-op test model of tests/models and every corpus model
/// whose file is under 4 KB) must import or fail cleanly, never panic. `MALFORMED_MUTANTS=N`
/// tries N per model instead of 8 and `MALFORMED_MAX_SEED=BYTES` takes larger models (the
/// fuzzing the issue asked for, in-process and deterministic); `MALFORMED_DUMP=DIR` writes
/// the mutants that panic there, `MALFORMED_DUMP_IMPORTED=DIR` those that import (for
/// `scripts/validation_parity.py`: which of them ONNX Runtime refuses).
#[test]
fn mutants_of_valid_models_never_panic() {
    let per_model = std::env::var("MALFORMED_MUTANTS").ok().and_then(|n| n.parse().ok()).unwrap_or(8);
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/models");
    let max_seed = std::env::var("MALFORMED_MAX_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(4096);
    let per_op =
        std::fs::read_dir(&models).expect("tests/models").filter_map(|e| Some(e.ok()?.path().join("model.onnx")));
    let corpus_models = std::fs::read_dir(corpus()).expect("tests/malformed").filter_map(|e| Some(e.ok()?.path()));
    let mut seeds: Vec<PathBuf> = per_op
        .chain(corpus_models.filter(|p| p.extension().is_some_and(|x| x == "onnx")))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| (1..max_seed).contains(&m.len())))
        .collect();
    seeds.sort();
    let out = PathBuf::from("out");
    let opts = options("Mutant", &out);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut panics = vec![];
    let (mut tried, mut imported) = (0, 0);
    let dump = std::env::var_os("MALFORMED_DUMP").map(PathBuf::from);
    let dump_imported = std::env::var_os("MALFORMED_DUMP_IMPORTED").map(PathBuf::from);
    let hook = std::panic::take_hook();
    // The panics are collected, with where they happened, and reported below.
    let site = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let seen = site.clone();
    std::panic::set_hook(Box::new(move |info| {
        *seen.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string();
    }));
    for seed in &seeds {
        let bytes = std::fs::read(seed).expect("seed model");
        for _ in 0..per_model {
            let mutant = mutate(&bytes, &mut rng);
            tried += 1;
            match std::panic::catch_unwind(|| generate(&mutant, &opts)) {
                Ok(result) => {
                    imported += result.is_ok() as usize;
                    if let (Ok(_), Some(dir)) = (result, &dump_imported) {
                        std::fs::write(dir.join(format!("mutant_{tried}.onnx")), &mutant).expect("dump the mutant");
                    }
                }
                Err(_) if panics.len() < 20 => {
                    let at = site.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    panics.push(format!("{} (mutant {tried}): {at}", seed.display()));
                    if let Some(dir) = &dump {
                        std::fs::write(dir.join(format!("mutant_{tried}.onnx")), &mutant).expect("dump the mutant");
                    }
                }
                Err(_) => {}
            }
        }
    }
    std::panic::set_hook(hook);
    println!("{tried} mutants of {} models: {imported} imported, {} panicked", seeds.len(), panics.len());
    assert!(panics.is_empty(), "mutants that panicked:\n{}", panics.join("\n"));
}

/// A graph input (or output) `name` of element type `elem_type` (ONNX code) and `dims`.
fn value_info(name: &str, elem_type: i32, dims: &[i64]) -> onnx_ir::proto::ValueInfoProto {
    use onnx_ir::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
    use onnx_ir::proto::{type_proto, TensorShapeProto, TypeProto, ValueInfoProto};
    let dim = dims.iter().map(|&d| Dimension { value: Some(DimValue::DimValue(d)), ..Default::default() }).collect();
    let tensor = type_proto::Tensor { elem_type: Some(elem_type), shape: Some(TensorShapeProto { dim }) };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto { value: Some(type_proto::Value::TensorType(tensor)), ..Default::default() }),
        ..Default::default()
    }
}

/// One node of `op_type` at `opset` reading `inputs` graph inputs of one type and writing
/// `outputs` values (the first a graph output), encoded.
fn single_node_model(op_type: &str, opset: i64, inputs: usize, outputs: usize, elem_type: i32) -> Vec<u8> {
    use onnx_ir::proto::{GraphProto, ModelProto, NodeProto, OperatorSetIdProto};
    use prost::Message;
    let dims: &[i64] = if elem_type == 7 { &[2] } else { &[2, 3] };
    let input_names: Vec<String> = (0..inputs).map(|i| format!("x{i}")).collect();
    let node = NodeProto {
        input: input_names.clone(),
        output: (0..outputs).map(|i| format!("y{i}")).collect(),
        name: Some("node".into()),
        op_type: Some(op_type.into()),
        ..Default::default()
    };
    let graph = GraphProto {
        node: vec![node],
        name: Some("arity".into()),
        input: input_names.iter().map(|n| value_info(n, elem_type, dims)).collect(),
        output: (outputs > 0).then(|| value_info("y0", elem_type, dims)).into_iter().collect(),
        ..Default::default()
    };
    let opset_import = vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(opset) }];
    ModelProto { ir_version: Some(8), opset_import, graph: Some(graph), ..Default::default() }.encode_to_vec()
}

/// Every supported op at every schema version, with every input count up to its maximum
/// (at most 6) and as few outputs as its schema allows, of f32 and i64 inputs: an import or an
/// error, never a panic (the 302 too-few-inputs models, and their opsets).
#[test]
fn every_op_at_every_opset_with_any_input_count_never_panics() {
    let out = PathBuf::from("out");
    let opts = options("Arity", &out);
    let mut panics = vec![];
    let mut tried = 0;
    let hook = std::panic::take_hook();
    let site = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let seen = site.clone();
    std::panic::set_hook(Box::new(move |info| *seen.lock().unwrap_or_else(|e| e.into_inner()) = info.to_string()));
    let supported = onnx_ir::ops::arity::schemas()
        .iter()
        .filter(|s| onnx_ir::ops::is_supported("", s.op) && s.since <= onnx_ir::ops::arity::NEWEST_OPSET);
    for schema in supported {
        for inputs in 0..=schema.max_inputs.min(6) {
            for elem_type in [1, 7] {
                let outputs = schema.min_outputs.max(1);
                let bytes = single_node_model(schema.op, schema.since, inputs, outputs, elem_type);
                tried += 1;
                if std::panic::catch_unwind(|| generate(&bytes, &opts)).is_err() {
                    let at = site.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    panics
                        .push(format!("{}-{} with {inputs} inputs of type {elem_type}: {at}", schema.op, schema.since));
                }
            }
        }
    }
    std::panic::set_hook(hook);
    println!("{tried} single-node models: {} panicked", panics.len());
    assert!(panics.is_empty(), "{}", panics.join("\n"));
}
