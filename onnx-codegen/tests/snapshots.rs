//! Snapshots of the generated code: one small model per op family (the opset-compliance models)
//! and the digits model under each option (weights embedded, from a file, as bytes, none; no
//! simplification; split into parts; custom-op hooks). A change to an emitter shows here as a
//! diff to review, in seconds and without compiling Burn. After an intended change:
//! `INSTA_UPDATE=always cargo test -p onnx-codegen --test snapshots`, then review and commit
//! `tests/snapshots/`.

use onnx_codegen::generate::{generate, BpkLocation, GenerateOptions, LoadStrategy};
use onnx_codegen::model::{lower_with, StructSpec, WeightsSource};
use onnx_codegen::{format_file, Hook};

mod common;
/// The model builders of onnx-ir's tests.
#[path = "../../onnx-ir/tests/common/mod.rs"]
mod models;
use proc_macro2::{Ident, Span};
use quote::quote;
use std::path::{Path, PathBuf};

/// One model per op family, as `tests/opset-compliance/<name>.onnx`.
const FAMILIES: &[&str] = &[
    "Add_v14",
    "BitShift_v11",
    "Gelu_v20",
    "Clip_v13",
    "Cast_v21",
    "Where_v16",
    "Conv_v22",
    "MaxPool_v22",
    "BatchNormalization_v15",
    "LayerNormalization_v17",
    "Gemm_v13",
    "Einsum_v12",
    "Reshape_v21",
    "Split_v18",
    "Gather_v13",
    "Slice_v13",
    "Pad_v21",
    "ScatterElements_v18",
    "DepthToSpace_v13",
    "ReduceMean_v18",
    "ArgMax_v13",
    "TopK_v11",
    "CumSum_v14",
    "Range_v11",
    "Softmax_v13",
    "Attention_v23",
    "Resize_v19",
    "Upsample_v9",
    "GridSample_v22",
    "LSTM_v22",
    "GRU_v22",
    "QuantizeLinear_v21",
    "QLinearConv_v10",
    "NegativeLogLikelihoodLoss_v22",
    "If_v21",
    "Scan_v21",
];

fn read(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).expect(path)
}

fn code(bytes: &[u8], strategy: LoadStrategy, simplify: bool, hooks: &[Hook]) -> String {
    let out = PathBuf::from("out");
    let opts = GenerateOptions {
        name: "Model",
        strategy,
        simplify,
        partition: true,
        location: BpkLocation::Beside,
        out_dir: &out,
        hooks,
        external_data_dir: None,
    };
    generate(bytes, &opts).expect("generates").code
}

#[test]
fn op_families() {
    for family in FAMILIES {
        let bytes = read(&format!("tests/opset-compliance/{family}.onnx"));
        insta::assert_snapshot!(*family, code(&bytes, LoadStrategy::Embedded, true, &[]));
    }
}

#[test]
fn weights_and_simplify_options() {
    let digits = read("examples/digits/model/digits.onnx");
    for (name, strategy, simplify) in [
        ("digits_embedded", LoadStrategy::Embedded, true),
        ("digits_file", LoadStrategy::File, true),
        ("digits_bytes", LoadStrategy::Bytes, true),
        ("digits_no_weights", LoadStrategy::None, true),
        ("digits_no_simplify", LoadStrategy::Embedded, false),
    ] {
        insta::assert_snapshot!(name, code(&digits, strategy, simplify, &[]));
    }
}

/// Parts of two nodes, so that the digits model splits (the default is 256).
#[test]
fn partitioned() {
    let graph = onnx_ir::import(&read("examples/digits/model/digits.onnx"), onnx_ir::ImportOptions::default())
        .expect("imports");
    let lowered = lower_with(&graph, &[], Some(2)).expect("lowers");
    let name = Ident::new("Model", Span::call_site());
    let items = lowered.items(&StructSpec { name: &name, vis: quote! { pub }, attrs: quote! {} }, &WeightsSource::None);
    insta::assert_snapshot!("digits_partitioned", format_file(items));
}

#[test]
fn custom_op_hooks() {
    let hooks = common::example_hooks();
    let bytes = read("ui-tests/models/unsupported_ops.onnx");
    insta::assert_snapshot!("custom_op_hooks", code(&bytes, LoadStrategy::None, true, &hooks));
}

/// MatMul by a constant matrix, then Add of a bias, as transformer exports write a projection:
/// one `Linear` with the bias as its parameter.
#[test]
fn matmul_and_bias_add_are_one_linear() {
    use models::{floats_init, input, model, node};
    let nodes = vec![node("MatMul", &["x", "w"], &["p"], vec![]), node("Add", &["p", "b"], &["y"], vec![])];
    let weight = floats_init("w", &[4, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let bytes = model(13, nodes, vec![input("x", &[-1, 3, 4])], vec![weight, floats_init("b", &[2], &[0.5, -1.0])]);
    let graph = onnx_ir::import(&bytes, onnx_ir::ImportOptions::default()).expect("imports");
    let weights: Vec<String> =
        lower_with(&graph, &[], None).expect("lowers").weights.into_iter().map(|w| w.path).collect();
    assert_eq!(weights, ["linear1.weight", "linear1.bias"]);
    insta::assert_snapshot!("matmul_bias_linear", code(&bytes, LoadStrategy::None, true, &[]));
}

/// The model's producer, versions, descriptions and metadata reach the IR and the struct's doc
/// comment (after the user's own), inert and bounded: Markdown escaped, a text-direction
/// control and newlines made spaces, a long value cut with a note.
#[test]
fn model_metadata_in_the_doc_comment() {
    use onnx_ir::proto::{ModelProto, StringStringEntryProto};
    use prost::Message;
    let bytes =
        models::model(13, vec![models::node("Relu", &["x"], &["y"], vec![])], vec![models::input("x", &[2])], vec![]);
    let mut proto = ModelProto::decode(bytes.as_slice()).expect("decodes");
    let entry = |k: &str, v: &str| StringStringEntryProto { key: Some(k.into()), value: Some(v.into()) };
    proto.producer_name = Some("pytorch".into());
    proto.producer_version = Some("2.1.0".into());
    proto.model_version = Some(3);
    proto.doc_string = Some("A *tiny*\nmodel <b>here</b>.".into());
    proto.metadata_props = vec![entry("author", "me"), entry("onnx_version", "1.16"), entry("long", &"x".repeat(300))];
    let graph_proto = proto.graph.as_mut().expect("a graph");
    graph_proto.name = Some("main_graph".into());
    graph_proto.doc_string = Some("trojan\u{202e}source".into());
    graph_proto.metadata_props = vec![entry("stage", "`final`")];
    let graph = onnx_ir::import(&proto.encode_to_vec(), onnx_ir::ImportOptions::default()).expect("imports");
    assert_eq!(graph.info.producer_name, "pytorch");
    assert_eq!(graph.info.metadata[1], ("onnx_version".to_string(), "1.16".to_string()));
    assert_eq!(graph.info.graph_metadata.len(), 1);
    let lowered = lower_with(&graph, &[], None).expect("lowers");
    let name = Ident::new("Model", Span::call_site());
    let attrs = quote! { #[doc = " My own words."] };
    let items = lowered.items(&StructSpec { name: &name, vis: quote! { pub }, attrs }, &WeightsSource::None);
    insta::assert_snapshot!("model_metadata", format_file(items));
}
