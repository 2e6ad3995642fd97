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

/// `nodes` nodes alternating `Add(h, c)` and `Relu`, with the graph input `x` added back
/// every 100 nodes (so it is live across parts) and one constant `c` read by every part.
fn chain(nodes: usize) -> Vec<u8> {
    let mut graph_nodes = vec![];
    let mut h = "x".to_string();
    for i in 0..nodes {
        let out = format!("h{i}");
        let (op, inputs) = match i % 100 {
            99 => ("Add", vec![h.clone(), "x".to_string()]),
            k if k % 2 == 0 => ("Add", vec![h.clone(), "c".to_string()]),
            _ => ("Relu", vec![h.clone()]),
        };
        graph_nodes.push(NodeProto {
            op_type: Some(op.into()),
            name: Some(out.clone()),
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

fn generate(nodes: usize, part_nodes: Option<usize>) -> (String, Vec<String>) {
    let graph = import(&chain(nodes), ImportOptions::default()).expect("imports");
    let lowered = lower_with(&graph, &[], part_nodes).expect("lowers");
    let name = Ident::new("Chain", Span::call_site());
    let spec = StructSpec { name: &name, vis: quote! { pub }, attrs: quote! {} };
    let code = format_file(lowered.items(&spec, &WeightsSource::Embedded(BpkPath::Literal("chain.bpk".into()))));
    weights::pack(&lowered.weights).expect("packs");
    (code, lowered.weights.iter().map(|w| w.path.clone()).collect())
}

#[test]
fn a_large_graph_becomes_submodules_passing_live_values() {
    let (code, paths) = generate(600, Some(PART_NODES));
    for part in
        ["pub part1: burn_onnx::Boxed<ChainPart1>", "pub part3: burn_onnx::Boxed<ChainPart3>", "pub struct ChainPart3"]
    {
        assert!(code.contains(part), "missing `{part}` in:\n{code}");
    }
    assert!(!code.contains("ChainPart4"), "600 nodes make 3 parts of at most {PART_NODES}");
    // `x` is read by every part, so forward passes a clone to all but the last.
    assert!(code.contains("self.part1.forward(x.clone())"), "{code}");
    assert!(code.contains("self.part3.forward(h511, x)"), "{code}");
    // Each part holds the constants it reads, under its own path.
    assert_eq!(paths.iter().filter(|p| p.starts_with("part1.")).count(), 1, "{paths:?}");
    assert_eq!(paths.iter().filter(|p| p.starts_with("part3.")).count(), 1, "{paths:?}");
}

#[test]
fn small_graphs_and_partition_false_keep_one_forward() {
    assert!(!generate(PART_NODES, Some(PART_NODES)).0.contains("ChainPart"));
    let (code, paths) = generate(600, None);
    assert!(!code.contains("ChainPart"), "{code}");
    assert_eq!(paths.len(), 1);
}
