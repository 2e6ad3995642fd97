//! Large graphs are split into submodules (see `onnx_codegen::partition`); the generated code
//! of each part is checked here, its behaviour by the backend suites (`--part-nodes 2`) and
//! the real models (several have more than 256 nodes).

use onnx_codegen::model::{lower_with, BpkPath, StructSpec, WeightsSource};
use onnx_codegen::partition::PART_NODES;
use onnx_codegen::{format_file, weights};
use onnx_ir::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
use onnx_ir::proto::*;
use onnx_ir::{import, ImportOptions};
use proc_macro2::{Ident, Span};
use prost::Message;
use quote::quote;

/// One node per name, alternating `Add(h, c)` and `Relu`, with the graph input `x` added back
/// every 100 nodes (so it is live across parts) and one constant `c` read by every part; node
/// `i` computes `h<i>`.
fn chain(names: &[String]) -> Vec<u8> {
    let mut graph_nodes = vec![];
    let mut h = "x".to_string();
    for (i, name) in names.iter().enumerate() {
        let out = format!("h{i}");
        let (op, inputs) = match i % 100 {
            99 => ("Add", vec![h.clone(), "x".to_string()]),
            k if k % 2 == 0 => ("Add", vec![h.clone(), "c".to_string()]),
            _ => ("Relu", vec![h.clone()]),
        };
        graph_nodes.push(NodeProto {
            op_type: Some(op.into()),
            name: Some(name.clone()),
            input: inputs,
            output: vec![out.clone()],
            ..Default::default()
        });
        h = out;
    }
    let dims = |d: &[i64]| {
        Some(TensorShapeProto {
            dim: d.iter().map(|&v| Dimension { value: Some(DimValue::DimValue(v)), ..Default::default() }).collect(),
        })
    };
    let value = |name: &str| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor { elem_type: Some(1), shape: dims(&[2, 3]) })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let c = TensorProto {
        name: Some("c".into()),
        data_type: Some(1),
        dims: vec![3],
        float_data: vec![0.5, -1.0, 0.25],
        ..Default::default()
    };
    let graph = GraphProto {
        node: graph_nodes,
        input: vec![value("x")],
        output: vec![value(&h)],
        initializer: vec![c],
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(17) }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Node names without scopes: `h0`, `h1`, ...
fn unscoped(nodes: usize) -> Vec<String> {
    (0..nodes).map(|i| format!("h{i}")).collect()
}

/// Names as a diffusion UNet's exporter writes them: `count` nodes in each scope, in order.
fn scoped(scopes: &[(&str, usize)]) -> Vec<String> {
    scopes.iter().flat_map(|&(scope, count)| (0..count).map(move |i| format!("{scope}/Op_{i}"))).collect()
}

/// The generated code (struct `Chain`) and the weights' paths.
fn generate(names: &[String], part_nodes: Option<usize>) -> (String, Vec<String>) {
    let graph = import(&chain(names), ImportOptions::default()).expect("imports");
    let lowered = lower_with(&graph, &[], part_nodes).expect("lowers");
    let name = Ident::new("Chain", Span::call_site());
    let spec = StructSpec { name: &name, vis: quote! { pub }, attrs: quote! {} };
    let code = format_file(lowered.items(&spec, &WeightsSource::Embedded(BpkPath::Literal("chain.bpk".into()))));
    weights::pack(&lowered.weights).expect("packs");
    (code, lowered.weights.iter().map(|w| w.path.clone()).collect())
}

/// The model's fields holding parts, in the order its forward calls them.
fn part_fields(code: &str) -> Vec<String> {
    // Without whitespace: the formatter puts long calls on several lines.
    let code: String = code.split_whitespace().collect();
    code.split("self.").filter_map(|s| Some(s.split_once(".forward(")?.0.to_string())).collect()
}

/// The nodes (`let h<i>`) in each part's forward, in order.
fn nodes_per_part(code: &str) -> Vec<usize> {
    // The model's items come first: its forward, then one struct and forward per part.
    code.split("pub fn forward(").skip(2).map(|part| part.matches("let h").count()).collect()
}

#[test]
fn a_large_graph_becomes_submodules_passing_live_values() {
    let (code, paths) = generate(&unscoped(600), Some(PART_NODES));
    assert_eq!(part_fields(&code), ["part1", "part2", "part3"], "600 nodes make 3 parts of at most {PART_NODES}");
    assert!(
        code.contains("pub part3: burn_onnx::Boxed<ChainPart3>") && code.contains("pub struct ChainPart3"),
        "{code}"
    );
    // `x` is read by every part, so forward passes a clone to all but the last.
    assert!(code.contains("self.part1.forward(x.clone())"), "{code}");
    assert!(code.contains("self.part3.forward(h511, x)"), "{code}");
    // Each part holds the constants it reads, under its own path.
    assert_eq!(paths.iter().filter(|p| p.starts_with("part1.")).count(), 1, "{paths:?}");
    assert_eq!(paths.iter().filter(|p| p.starts_with("part3.")).count(), 1, "{paths:?}");
}

#[test]
fn small_graphs_and_partition_false_keep_one_forward() {
    assert!(!generate(&unscoped(PART_NODES), Some(PART_NODES)).0.contains("ChainPart"));
    let (code, paths) = generate(&unscoped(600), None);
    assert!(!code.contains("ChainPart"), "{code}");
    assert_eq!(paths.len(), 1);
}

/// A UNet's top level: a block that fits is one part, named after it (`mid_block`); a larger
/// one is cut at its sub-scopes (`down_blocks.0`), and nodes directly in it by count
/// (`up_blocks.0`); small neighbours are packed into a part (`time_embedding`, `conv_in`).
const UNET: &[(&str, usize)] = &[
    ("", 3),
    ("/time_embedding/linear_1", 2),
    ("/conv_in", 1),
    ("/down_blocks.0/resnets.0/norm1", 100),
    ("/down_blocks.0/resnets.0", 100),
    ("/down_blocks.0/attentions.0/transformer_blocks.0", 200),
    ("/down_blocks.0/attentions.0/transformer_blocks.1", 200),
    ("/down_blocks.0/downsamplers.0/conv", 1),
    ("/mid_block/resnets.0", 250),
    ("/up_blocks.0/resnets.0", 150),
    ("/up_blocks.0/resnets.1", 150),
    ("/up_blocks.0", 300),
    ("/up_blocks.0/upsamplers.0", 20),
    ("/conv_out", 1),
];

#[test]
fn parts_follow_the_scopes_of_node_names() {
    let (code, paths) = generate(&scoped(UNET), Some(PART_NODES));
    let fields = part_fields(&code);
    let expected = [
        "down_blocks_0_resnets_0",
        "down_blocks_0_attentions_0_transformer_blocks_0",
        // `transformer_blocks.1` and `downsamplers.0`: named after the scope they share.
        "down_blocks_0",
        "mid_block",
        "up_blocks_0_resnets_0",
        "up_blocks_0_resnets_1",
        "up_blocks_0_part1",
        "up_blocks_0_part2",
    ];
    assert_eq!(fields, expected, "{code}");
    assert!(code.contains("pub mid_block: burn_onnx::Boxed<ChainMidBlock>,"), "{code}");
    assert!(code.contains("pub up_blocks_0_part2: burn_onnx::Boxed<ChainUpBlocks0Part2>,"), "{code}");
    let doc = "(field `down_blocks_0_resnets_0`): a slice of its graph, the nodes of `/`, `/time_embedding`, \
               `/conv_in`, `/down_blocks.0/resnets.0`.";
    assert!(code.contains(doc), "{code}");
    assert!(paths.iter().all(|p| expected.iter().any(|f| p.starts_with(&format!("{f}.")))), "{paths:?}");
}

#[test]
fn no_part_exceeds_the_bound() {
    let names = scoped(UNET);
    for bound in [5, 64, PART_NODES] {
        let counts = nodes_per_part(&generate(&names, Some(bound)).0);
        assert!(counts.iter().all(|&n| (1..=bound).contains(&n)), "parts of {bound}: {counts:?}");
        assert_eq!(counts.iter().sum::<usize>(), names.len());
    }
}

#[test]
fn partitioned_code_is_deterministic() {
    let first = generate(&scoped(UNET), Some(64));
    for _ in 0..3 {
        assert_eq!(generate(&scoped(UNET), Some(64)), first);
    }
}

/// The generated code of a small scoped graph in parts of 4: the boxed parts, their names and
/// documentation, the values passed between them.
#[test]
fn scoped_parts_snapshot() {
    let names = scoped(&[
        ("/time_embedding", 2),
        ("/down_blocks.0/resnets.0", 3),
        ("/down_blocks.0/resnets.1", 3),
        ("/mid_block", 2),
    ]);
    insta::assert_snapshot!("scoped_parts", generate(&names, Some(4)).0);
}
