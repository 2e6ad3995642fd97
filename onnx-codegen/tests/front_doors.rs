//! The macro, the CLI and ModelGen produce the same code for the digits model: compared as
//! formatted text, with only the weights path (which each front door names its own way) masked.

use onnx_codegen::generate::{generate, BpkLocation, GenerateOptions, LoadStrategy};
use onnx_codegen::{expand, Request, WeightsMode};
use std::path::{Path, PathBuf};

mod common;
use common::{request, weights_path};

/// The struct and impl items, formatted, with the `include_bytes_aligned!` argument masked.
fn items_text(file: syn::File) -> String {
    let items = file.items.into_iter().flat_map(|item| match item {
        syn::Item::Mod(m) => m.content.map(|(_, items)| items).unwrap_or_default(),
        other => vec![other],
    });
    let kept: Vec<syn::Item> = items.filter(|i| matches!(i, syn::Item::Struct(_) | syn::Item::Impl(_))).collect();
    let text = prettyplease::unparse(&syn::File { shebang: None, attrs: vec![], items: kept });
    let marker = "include_bytes_aligned!(";
    let Some(start) = text.find(marker) else { return text };
    // Up to the end of the statement: the argument may hold nested parentheses (concat!).
    let end = start + text[start..].find(';').unwrap_or(0);
    format!("{}{marker}<WEIGHTS>){}", &text[..start], &text[end..])
}

fn cli_or_modelgen(location: BpkLocation) -> String {
    let bytes = std::fs::read(model_path()).expect("digits model");
    let out = PathBuf::from("out");
    let opts = GenerateOptions { strategy: LoadStrategy::Embedded, location, ..GenerateOptions::new("Digits", &out) };
    let code = generate(&bytes, &opts).expect("generates").code;
    items_text(syn::parse_file(&code).expect("generated code parses"))
}

/// The macro's request for the digits model, embedded weights, no hooks.
fn digits_request(name: &str, simplify: bool) -> Request {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/digits");
    Request { simplify, ..request(&dir, "model/digits.onnx", name, Some(WeightsMode::Embed)) }
}

fn model_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/digits/model/digits.onnx")
}

#[test]
fn macro_cli_and_modelgen_generate_the_same_code() {
    let tokens = expand(&digits_request("Digits", true)).expect("expands");
    let from_macro = items_text(syn::parse2(tokens).expect("expansion parses"));
    let from_cli = cli_or_modelgen(BpkLocation::Beside);
    let from_modelgen = cli_or_modelgen(BpkLocation::OutDir(PathBuf::from("model")));
    assert!(from_macro.contains("pub fn forward(&self, images: Tensor<4>) -> Tensor<2>"), "{from_macro}");
    assert_eq!(from_macro, from_cli);
    assert_eq!(from_cli, from_modelgen);
}

#[test]
fn an_unchanged_request_reuses_the_cached_expansion() {
    let first = expand(&digits_request("DigitsCached", false)).expect("expands").to_string();
    let started = std::time::Instant::now();
    let second = expand(&digits_request("DigitsCached", false)).expect("expands from the cache").to_string();
    let cached_time = started.elapsed();
    assert_eq!(first, second, "a cached expansion must be identical");
    // Informational (not asserted: timing is for the benchmark, not the test).
    eprintln!("cached re-expansion took {cached_time:?}");
}

#[test]
fn a_changed_model_is_expanded_again() {
    use onnx_ir::proto::ModelProto;
    use prost::Message;
    let dir = std::env::temp_dir().join(format!("burn-onnx-changed-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let request = Request { manifest_dir: dir.clone(), model: "model.onnx".into(), ..digits_request("Changed", true) };
    let original = std::fs::read(model_path()).expect("digits model");
    std::fs::write(dir.join("model.onnx"), &original).expect("writes the model");
    let first = expand(&request).expect("expands").to_string();

    // One weight byte changed in place: same file size, new modification time.
    let model = ModelProto::decode(&original[..]).expect("decodes");
    let weight =
        model.graph.iter().flat_map(|g| &g.initializer).find(|t| t.raw_data().len() >= 16).expect("a raw weight");
    let at = original.windows(16).position(|w| w == &weight.raw_data()[..16]).expect("the weight's bytes in the file");
    let mut changed = original.clone();
    changed[at] ^= 0x40;
    std::fs::write(dir.join("model.onnx"), &changed).expect("rewrites the model");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(2);
    std::fs::File::options()
        .write(true)
        .open(dir.join("model.onnx"))
        .and_then(|f| f.set_modified(later))
        .expect("sets the mtime");
    let second = expand(&request).expect("expands").to_string();
    let (old_weights, new_weights) = (weights_path(&first), weights_path(&second));
    let cache = new_weights.parent().expect("the cache folder").to_path_buf();
    let stale_expansions: Vec<_> = std::fs::read_dir(&cache)
        .expect("the cache folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".expansion.rs"))
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(&*old_weights.to_string_lossy())))
        .collect();
    let (old_kept, new_kept) = (old_weights.exists(), new_weights.is_file());
    let _ = std::fs::remove_dir_all(&dir);
    assert_ne!(first, second, "the expansion must follow the model's new weights");
    // The cache keeps only the current expansion of a request: the old one and its weights go.
    assert!(!old_kept && new_kept, "{} is still there, or {} is not", old_weights.display(), new_weights.display());
    assert!(stale_expansions.is_empty(), "old expansions kept: {stale_expansions:?}");
}

/// The ui-tests model whose input `x` has no shape (a Relu).
fn no_shape_model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui-tests/models/graph_input_no_shape.onnx")
}

#[test]
fn modelgen_and_the_macro_take_declared_input_shapes() {
    let out = std::env::temp_dir().join(format!("modelgen-input-shape-{}", std::process::id()));
    let signature = "pub fn forward(&self, x: Tensor<2>) -> Tensor<2>";
    let mut gen = onnx_codegen::ModelGen::new();
    gen.input(no_shape_model()).out_dir(&out);
    let refused = gen.run_from_cli().expect_err("no shape").report(onnx_codegen::FrontDoor::ModelGen);
    assert!(refused.contains(".input_shape(\"x=[d0, d1, ...]\")"), "{refused}");
    let written = gen.clone().input_shape("x=[batch, 3]").run_from_cli().expect("generates");
    let code = std::fs::read_to_string(out.join("graph_input_no_shape.rs"));
    let _ = std::fs::remove_dir_all(&out);
    assert!(written.iter().any(|p| p.ends_with("graph_input_no_shape.rs")), "{written:?}");
    assert!(code.expect("written").contains(signature));
    let bad = gen.clone().input_shape("x=[3").run_from_cli().expect_err("does not parse").to_string();
    assert!(bad.starts_with("input shape `x=[3`: expected `name=[d0, d1, ...]`"), "{bad}");

    let dir = no_shape_model().parent().expect("models folder").to_path_buf();
    let request = |input_shapes| Request {
        input_shapes,
        ..request(&dir, "graph_input_no_shape.onnx", "NoShape", Some(WeightsMode::None))
    };
    let tokens = expand(&request(vec!["x=[batch, 3]".parse().expect("parses")])).expect("expands");
    assert!(items_text(syn::parse2(tokens).expect("parses")).contains(signature));
    let contradicting = expand(&request(vec!["x=[batch, 3]".parse().unwrap(), "x=[2, 3]".parse().unwrap()]));
    let message = contradicting.expect_err("contradicts").to_string();
    assert!(message.contains("declared shape x=[2, 3]: the model gives dim 0 as batch"), "{message}");
}

#[test]
fn the_macro_dump_writes_the_files_the_cli_writes() {
    let dir = std::env::temp_dir().join(format!("macro-dump-{}", std::process::id()));
    let request = Request { dump: Some(dir.display().to_string()), ..digits_request("Digits", true) };
    expand(&request).expect("expands and dumps");
    let bytes = std::fs::read(model_path()).expect("digits model");
    let opts =
        GenerateOptions { strategy: LoadStrategy::Embedded, ir_dumps: true, ..GenerateOptions::new("Digits", &dir) };
    let cli = generate(&bytes, &opts).expect("generates");
    let ir = cli.ir.as_ref().expect("IR dumps");
    let expected = [
        ("digits.rs", cli.code.as_bytes().to_vec()),
        ("digits.bpk", cli.bpk.as_ref().expect("weights").to_bytes().expect("packs")),
        ("digits.ir.txt", ir.imported.as_bytes().to_vec()),
        ("digits.simplified.ir.txt", ir.simplified.as_bytes().to_vec()),
    ];
    let dumped: Vec<_> = expected.iter().map(|(file, _)| std::fs::read(dir.join(file))).collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_ne!(ir.imported, ir.simplified, "the digits model simplifies");
    let unsimplified = onnx_ir::ImportOptions { simplify: false, ..Default::default() };
    assert_eq!(ir.imported, onnx_ir::import(&bytes, unsimplified).expect("imports").to_string());
    for ((file, bytes), dumped) in expected.iter().zip(dumped) {
        assert!(dumped.as_ref().is_ok_and(|d| d == bytes), "{file} differs from the CLI's");
    }
}

/// ModelGen's `dim_size` and the macro's `dims` give the same code: each fixed dim checked by
/// `forward`; a size that does not parse is refused.
#[test]
fn modelgen_and_the_macro_take_dim_sizes() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui-tests/models/named_dims.onnx");
    let out = std::env::temp_dir().join(format!("modelgen-dim-size-{}", std::process::id()));
    let mut gen = onnx_codegen::ModelGen::new();
    gen.input(&model).out_dir(&out).dim_size("DATA_BATCH=2").dim_size("W=4");
    gen.run_from_cli().expect("generates");
    let code = std::fs::read_to_string(out.join("named_dims.rs"));
    let _ = std::fs::remove_dir_all(&out);
    let code = code.expect("written");
    let check = r#"check_dim(&x.dims(), "x", 0, "DATA_BATCH", 2);"#;
    assert!(code.contains(check) && code.contains(r#"check_dim(&bias.dims(), "bias", 0, "W", 4);"#), "{code}");
    let bad = onnx_codegen::ModelGen::new().input(&model).dim_size("W").run_from_cli().expect_err("no size");
    assert!(bad.to_string().starts_with("dim size `W`: expected `name=size`"), "{bad}");

    let dir = model.parent().expect("models folder").to_path_buf();
    let dim_sizes = vec!["DATA_BATCH=2".parse().expect("parses"), "W=4".parse().expect("parses")];
    let request = Request { dim_sizes, ..request(&dir, "named_dims.onnx", "NamedDims", Some(WeightsMode::None)) };
    let tokens = expand(&request).expect("expands").to_string().replace(' ', "");
    assert!(tokens.contains(&check.replace(' ', "")), "{tokens}");
}
