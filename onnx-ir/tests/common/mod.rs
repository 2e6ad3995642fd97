//! Builders of small ONNX models in code, shared by the integration tests.
#![allow(dead_code)]

use onnx_ir::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
use onnx_ir::proto::*;
use prost::Message;

pub fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto { name: Some(name.into()), r#type: Some(attribute_type::INT), i: Some(v), ..Default::default() }
}
pub fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_type::INTS),
        ints: v.to_vec(),
        ..Default::default()
    }
}
pub fn attr_float(name: &str, v: f32) -> AttributeProto {
    AttributeProto { name: Some(name.into()), r#type: Some(attribute_type::FLOAT), f: Some(v), ..Default::default() }
}
pub fn attr_floats(name: &str, v: &[f32]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_type::FLOATS),
        floats: v.to_vec(),
        ..Default::default()
    }
}
pub fn attr_string(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attribute_type::STRING),
        s: Some(v.into()),
        ..Default::default()
    }
}
pub fn attr_strings(name: &str, v: &[&str]) -> AttributeProto {
    let strings = v.iter().map(|s| s.as_bytes().to_vec()).collect();
    AttributeProto { name: Some(name.into()), r#type: Some(attribute_type::STRINGS), strings, ..Default::default() }
}
pub fn attr_graph(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto { name: Some(name.into()), r#type: Some(attribute_type::GRAPH), g: Some(g), ..Default::default() }
}

pub fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(format!("{op}_node")),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

pub fn input(name: &str, dims: &[i64]) -> ValueInfoProto {
    typed_input(name, 1, dims)
}

/// A graph input of ONNX element type `elem_type` (1 float, 7 int64, ...).
pub fn typed_input(name: &str, elem_type: i32, dims: &[i64]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|&d| {
            if d < 0 {
                Dimension { value: Some(DimValue::DimParam("batch".into())), ..Default::default() }
            } else {
                Dimension { value: Some(DimValue::DimValue(d)), ..Default::default() }
            }
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem_type),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub fn bool_input(name: &str) -> ValueInfoProto {
    let mut c = input(name, &[]);
    if let Some(type_proto::Value::TensorType(t)) = c.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(9);
    }
    c
}

pub fn ints_init(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(7),
        dims: vec![values.len() as i64],
        int64_data: values.to_vec(),
        ..Default::default()
    }
}

pub fn floats_init(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        data_type: Some(1),
        dims: dims.to_vec(),
        float_data: values.to_vec(),
        ..Default::default()
    }
}

/// A model whose one output is the last node's first.
pub fn model(opset: i64, nodes: Vec<NodeProto>, inputs: Vec<ValueInfoProto>, inits: Vec<TensorProto>) -> Vec<u8> {
    let output = nodes.last().map(|n| n.output[0].clone()).unwrap_or_default();
    model_with_outputs(opset, nodes, inputs, inits, &[&output])
}

pub fn model_with_outputs(
    opset: i64,
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    inits: Vec<TensorProto>,
    outputs: &[&str],
) -> Vec<u8> {
    let graph = GraphProto {
        node: nodes,
        input: inputs,
        initializer: inits,
        output: outputs.iter().map(|&o| ValueInfoProto { name: Some(o.into()), ..Default::default() }).collect(),
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(opset) }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

/// An If whose branches each run one node from `x` to `out`.
pub fn if_with(cond: &str, then_node: NodeProto, else_node: NodeProto) -> NodeProto {
    let branch = |n: NodeProto| GraphProto {
        node: vec![n],
        output: vec![ValueInfoProto { name: Some("out".into()), ..Default::default() }],
        ..Default::default()
    };
    node(
        "If",
        &[cond],
        &["y"],
        vec![attr_graph("then_branch", branch(then_node)), attr_graph("else_branch", branch(else_node))],
    )
}

/// An initializer whose data is in a side file, described by `entries` (`location`, ...).
pub fn external_init(name: &str, data_type: i32, dims: &[i64], entries: &[(&str, &str)]) -> TensorProto {
    let entry = |(key, value): &(&str, &str)| StringStringEntryProto {
        key: Some(key.to_string()),
        value: Some(value.to_string()),
    };
    TensorProto {
        name: Some(name.into()),
        data_type: Some(data_type),
        dims: dims.to_vec(),
        external_data: entries.iter().map(entry).collect(),
        data_location: Some(tensor_proto::DataLocation::External as i32),
        ..Default::default()
    }
}
