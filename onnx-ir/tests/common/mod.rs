//! Builders of small ONNX models in code, shared by the integration tests.
#![allow(dead_code)]

use onnx_ir::proto::*;
use prost::Message;

pub fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto { name: name.into(), r#type: attribute_type::INT, i: v, ..Default::default() }
}
pub fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto { name: name.into(), r#type: attribute_type::INTS, ints: v.to_vec(), ..Default::default() }
}
pub fn attr_float(name: &str, v: f32) -> AttributeProto {
    AttributeProto { name: name.into(), r#type: attribute_type::FLOAT, f: v, ..Default::default() }
}
pub fn attr_string(name: &str, v: &str) -> AttributeProto {
    AttributeProto { name: name.into(), r#type: attribute_type::STRING, s: v.into(), ..Default::default() }
}
pub fn attr_strings(name: &str, v: &[&str]) -> AttributeProto {
    let strings = v.iter().map(|s| s.as_bytes().to_vec()).collect();
    AttributeProto { name: name.into(), r#type: attribute_type::STRINGS, strings, ..Default::default() }
}
pub fn attr_graph(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto { name: name.into(), r#type: attribute_type::GRAPH, g: Some(Box::new(g)), ..Default::default() }
}

pub fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: op.into(),
        name: format!("{op}_node"),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

pub fn input(name: &str, dims: &[i64]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|&d| {
            if d < 0 {
                Dimension { dim_param: Some("batch".into()), dim_value: None }
            } else {
                Dimension { dim_value: Some(d), dim_param: None }
            }
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeProtoTensor { elem_type: 1, shape: Some(TensorShapeProto { dim }) }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub fn bool_input(name: &str) -> ValueInfoProto {
    let mut c = input(name, &[]);
    if let Some(t) = c.r#type.as_mut().and_then(|t| t.tensor_type.as_mut()) {
        t.elem_type = 9;
    }
    c
}

pub fn ints_init(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        data_type: 7,
        dims: vec![values.len() as i64],
        int64_data: values.to_vec(),
        ..Default::default()
    }
}

pub fn floats_init(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: name.into(),
        data_type: 1,
        dims: dims.to_vec(),
        float_data: values.to_vec(),
        ..Default::default()
    }
}

pub fn model(opset: i64, nodes: Vec<NodeProto>, inputs: Vec<ValueInfoProto>, inits: Vec<TensorProto>) -> Vec<u8> {
    let output = nodes.last().map(|n| n.output[0].clone()).unwrap_or_default();
    let graph = GraphProto {
        node: nodes,
        input: inputs,
        initializer: inits,
        output: vec![ValueInfoProto { name: output, ..Default::default() }],
        ..Default::default()
    };
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: opset }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}
