//! The simplification passes on models built in code: what they rewrite, with values computed
//! by hand, and what they must leave alone. (Outputs with and without them are compared on
//! every suite and real model by the test command.)

mod common;
use common::*;
use onnx_ir::ops::UnaryOp;
use onnx_ir::{import, Graph, ImportOptions, Op};

fn simplified(bytes: &[u8]) -> Graph {
    import(bytes, ImportOptions { simplify: true, ..Default::default() }).expect("imports")
}

fn op_names(graph: &Graph) -> Vec<String> {
    graph.nodes.iter().map(|n| format!("{:?}", n.op).split(['(', ' ', '{']).next().unwrap_or("").to_string()).collect()
}

fn floats(graph: &Graph, id: Option<usize>) -> Vec<f32> {
    graph
        .constant(id)
        .expect("a constant")
        .to_f64s()
        .expect("decoded data is in memory")
        .into_iter()
        .map(|v| v as f32)
        .collect()
}

/// Conv (2 output channels, 1x1 kernel) then BatchNormalization, as exporters write them.
fn conv_bn(extra_use: bool) -> Vec<u8> {
    let mut nodes = vec![
        node("Conv", &["x", "w", "b"], &["y"], vec![]),
        node("BatchNormalization", &["y", "scale", "shift", "mean", "var"], &["z"], vec![attr_float("epsilon", 0.0)]),
    ];
    if extra_use {
        nodes.push(node("Add", &["z", "y"], &["out"], vec![]));
    }
    let inits = vec![
        floats_init("w", &[2, 1, 1, 1], &[2.0, 3.0]),
        floats_init("b", &[2], &[1.0, -1.0]),
        floats_init("scale", &[2], &[0.5, 2.0]),
        floats_init("shift", &[2], &[10.0, 20.0]),
        floats_init("mean", &[2], &[3.0, 1.0]),
        floats_init("var", &[2], &[4.0, 16.0]),
    ];
    model(15, nodes, vec![input("x", &[1, 1, 2, 2])], inits)
}

#[test]
fn batch_norm_after_conv_is_folded_into_its_weights() {
    let graph = simplified(&conv_bn(false));
    assert_eq!(op_names(&graph), ["Conv"]);
    let conv = &graph.nodes[0];
    // s = scale / sqrt(var) = [0.25, 0.5]; w' = w * s; b' = (b - mean) * s + shift.
    assert_eq!(floats(&graph, conv.inputs[1]), [0.5, 1.5]);
    assert_eq!(floats(&graph, conv.inputs[2]), [9.5, 19.0]);
    assert_eq!(graph.outputs, conv.outputs);
}

#[test]
fn batch_norm_is_kept_when_the_conv_output_is_read_elsewhere_or_simplify_is_off() {
    let graph = simplified(&conv_bn(true));
    assert_eq!(op_names(&graph), ["Conv", "BatchNorm", "Binary"]);
    let graph = import(&conv_bn(false), ImportOptions { simplify: false, ..Default::default() }).expect("imports");
    assert_eq!(op_names(&graph), ["Conv", "BatchNorm"]);
}

fn sigmoid_mul(sigmoid_read_twice: bool) -> Vec<u8> {
    let mut nodes = vec![node("Sigmoid", &["x"], &["s"], vec![]), node("Mul", &["s", "x"], &["y"], vec![])];
    if sigmoid_read_twice {
        nodes.push(node("Add", &["y", "s"], &["z"], vec![]));
    }
    model(13, nodes, vec![input("x", &[2, 3])], vec![])
}

#[test]
fn sigmoid_times_its_input_is_one_silu() {
    let graph = simplified(&sigmoid_mul(false));
    assert_eq!(graph.nodes.len(), 1);
    assert_eq!(graph.nodes[0].op, Op::Unary(UnaryOp::Silu));
    assert_eq!(graph.nodes[0].inputs, vec![Some(graph.inputs[0])]);
    assert_eq!(graph.outputs, graph.nodes[0].outputs);
}

#[test]
fn a_sigmoid_read_elsewhere_is_not_fused() {
    let graph = simplified(&sigmoid_mul(true));
    assert!(graph.nodes.iter().all(|n| n.op != Op::Unary(UnaryOp::Silu)));
    assert_eq!(graph.nodes.len(), 3);
}

#[test]
fn the_activation_after_a_conv_is_fused_into_it() {
    use onnx_ir::ops::ConvConfig;
    let conv_relu = |extra_use: bool| {
        let mut nodes = vec![node("Conv", &["x", "w"], &["y"], vec![]), node("Relu", &["y"], &["z"], vec![])];
        if extra_use {
            nodes.push(node("Add", &["z", "y"], &["out"], vec![]));
        }
        model(13, nodes, vec![input("x", &[1, 1, 3, 3])], vec![floats_init("w", &[2, 1, 1, 1], &[1.0, -1.0])])
    };
    let graph = simplified(&conv_relu(false));
    assert_eq!(op_names(&graph), ["Conv"]);
    assert!(matches!(&graph.nodes[0].op, Op::Conv(ConvConfig { activation: Some(UnaryOp::Relu), .. })));
    assert_eq!(graph.outputs, graph.nodes[0].outputs);
    let graph = simplified(&conv_relu(true));
    assert_eq!(op_names(&graph), ["Conv", "Unary", "Binary"]);
    assert!(matches!(&graph.nodes[0].op, Op::Conv(ConvConfig { activation: None, .. })));
}

/// Conv (2 output channels, 1x1 kernel, bias) then a Mul and an Add by per-channel constants
/// of the given shapes.
fn conv_mul_add(mul_dims: &[i64], mul: &[f32], add_dims: &[i64], add: &[f32]) -> Vec<u8> {
    let nodes = vec![
        node("Conv", &["x", "w", "b"], &["y"], vec![]),
        node("Mul", &["m", "y"], &["z"], vec![]),
        node("Add", &["z", "a"], &["out"], vec![]),
    ];
    let inits = vec![
        floats_init("w", &[2, 1, 1, 1], &[2.0, 3.0]),
        floats_init("b", &[2], &[1.0, -1.0]),
        floats_init("m", mul_dims, mul),
        floats_init("a", add_dims, add),
    ];
    model(15, nodes, vec![input("x", &[1, 1, 2, 2])], inits)
}

#[test]
fn per_channel_mul_and_add_after_a_conv_are_folded_into_it() {
    let graph = simplified(&conv_mul_add(&[2, 1, 1], &[0.5, 2.0], &[1, 2, 1, 1], &[10.0, 20.0]));
    assert_eq!(op_names(&graph), ["Conv"]);
    let conv = &graph.nodes[0];
    // w' = w * m; b' = b * m + a.
    assert_eq!(floats(&graph, conv.inputs[1]), [1.0, 6.0]);
    assert_eq!(floats(&graph, conv.inputs[2]), [10.5, 18.0]);
    assert_eq!(graph.outputs, conv.outputs);
    // A scalar factor applies to every channel.
    let graph = simplified(&conv_mul_add(&[], &[3.0], &[1], &[1.0]));
    assert_eq!(op_names(&graph), ["Conv"]);
    assert_eq!(floats(&graph, graph.nodes[0].inputs[2]), [4.0, -2.0]);
}

#[test]
fn constants_that_vary_along_spatial_axes_are_not_folded() {
    // [2] broadcasts along the width, [1, 2] along height and width: not per channel.
    let graph = simplified(&conv_mul_add(&[2], &[0.5, 2.0], &[2, 1, 1], &[10.0, 20.0]));
    assert_eq!(op_names(&graph), ["Conv", "Binary", "Binary"]);
    let graph = simplified(&conv_mul_add(&[2, 1, 1], &[0.5, 2.0], &[1, 2], &[10.0, 20.0]));
    assert_eq!(op_names(&graph), ["Conv", "Binary"]);
}

#[test]
fn a_constant_of_shape_weight_stays_a_fill_when_the_channel_factors_are_equal() {
    use onnx_ir::proto::{attribute_type, AttributeProto};
    // A weight too large to fold into a constant (2 x 1 x 256 x 256), filled with 0.5, then a
    // BatchNormalization whose statistics are the same for both channels.
    let value = AttributeProto {
        name: Some("value".into()),
        r#type: Some(attribute_type::TENSOR),
        t: Some(floats_init("", &[1], &[0.5])),
        ..Default::default()
    };
    let nodes = vec![
        node("ConstantOfShape", &["shape"], &["w"], vec![value]),
        node("Conv", &["x", "w"], &["y"], vec![]),
        node("BatchNormalization", &["y", "scale", "shift", "mean", "var"], &["z"], vec![attr_float("epsilon", 0.0)]),
    ];
    let inits = vec![
        ints_init("shape", &[2, 1, 256, 256]),
        floats_init("scale", &[2], &[4.0, 4.0]),
        floats_init("shift", &[2], &[1.0, 3.0]),
        floats_init("mean", &[2], &[0.0, 1.0]),
        floats_init("var", &[2], &[4.0, 4.0]),
    ];
    let graph = simplified(&model(15, nodes, vec![input("x", &[1, 1, 256, 256])], inits));
    assert_eq!(op_names(&graph), ["ConstantOfShape", "Conv"]);
    // s = 4 / sqrt(4) = 2 for both channels: the fill becomes 1.0; b' = shift - mean * s.
    assert!(matches!(graph.nodes[0].op, Op::ConstantOfShape { value, .. } if value == 1.0));
    assert_eq!(floats(&graph, graph.nodes[1].inputs[2]), [1.0, 1.0]);
}

/// Attention as BERT exports write it: `MatMul(Softmax(MatMul(q, kt) / 8 + mask), v)`, with
/// optionally one intermediate read again.
fn bert_attention(extra_use: Option<&str>) -> Vec<u8> {
    let mut nodes = vec![
        node("MatMul", &["q", "kt"], &["scores"], vec![]),
        node("Div", &["scores", "eight"], &["scaled"], vec![]),
        node("Add", &["scaled", "mask"], &["masked"], vec![]),
        node("Softmax", &["masked"], &["probs"], vec![attr_int("axis", -1)]),
        node("MatMul", &["probs", "v"], &["context"], vec![]),
    ];
    if let Some(reused) = extra_use {
        nodes.push(node("Add", &["context", reused], &["out"], vec![]));
    }
    let inputs = vec![
        input("q", &[1, 2, 3, 4]),
        input("kt", &[1, 2, 4, 3]),
        input("v", &[1, 2, 3, 3]),
        input("mask", &[1, 1, 1, 3]),
    ];
    model(13, nodes, inputs, vec![floats_init("eight", &[], &[8.0])])
}

#[test]
fn attention_subgraph_is_one_fused_node() {
    let graph = simplified(&bert_attention(None));
    assert_eq!(op_names(&graph), ["ScaledDotProductAttention"]);
    assert_eq!(graph.nodes[0].op, Op::ScaledDotProductAttention { scale: 0.125 });
    let [q, kt, v, mask] = [0, 1, 2, 3].map(|i| Some(graph.inputs[i]));
    assert_eq!(graph.nodes[0].inputs, vec![q, kt, v, mask]);
    assert_eq!(graph.outputs, graph.nodes[0].outputs);
    assert_eq!(graph.values[graph.outputs[0]].ty.to_string(), "f32[1, 2, 3, 3]");
}

#[test]
fn attention_with_an_intermediate_read_elsewhere_is_left_alone() {
    // `probs` read again: its Softmax and the final MatMul must stay separate ops.
    let graph = simplified(&bert_attention(Some("probs")));
    assert!(!op_names(&graph).contains(&"ScaledDotProductAttention".to_string()));
    assert_eq!(graph.nodes.len(), 6);
}

#[test]
fn attention_without_scale_or_mask_is_fused() {
    let nodes = vec![
        node("MatMul", &["q", "kt"], &["scores"], vec![]),
        node("Softmax", &["scores"], &["probs"], vec![attr_int("axis", 3)]),
        node("MatMul", &["probs", "v"], &["context"], vec![]),
    ];
    let inputs = vec![input("q", &[1, 2, 3, 4]), input("kt", &[1, 2, 4, 5]), input("v", &[1, 2, 5, 6])];
    let graph = simplified(&model(13, nodes, inputs, vec![]));
    assert_eq!(graph.nodes.len(), 1);
    assert_eq!(graph.nodes[0].op, Op::ScaledDotProductAttention { scale: 1.0 });
    assert_eq!(graph.nodes[0].inputs[3], None);
    assert_eq!(graph.values[graph.outputs[0]].ty.to_string(), "f32[1, 2, 3, 6]");
}

#[test]
fn softmax_over_another_axis_is_not_attention() {
    let nodes = vec![
        node("MatMul", &["q", "kt"], &["scores"], vec![]),
        node("Softmax", &["scores"], &["probs"], vec![attr_int("axis", 2)]),
        node("MatMul", &["probs", "v"], &["context"], vec![]),
    ];
    let inputs = vec![input("q", &[1, 2, 3, 4]), input("kt", &[1, 2, 4, 3]), input("v", &[1, 2, 3, 6])];
    let graph = simplified(&model(13, nodes, inputs, vec![]));
    assert_eq!(op_names(&graph), ["MatMul", "Softmax", "MatMul"]);
}

/// Layer norm over the last axis as exporters decompose it; `square` is `Pow` or `Mul`, and
/// `affine` adds the scale and bias.
fn decomposed_layer_norm(square: &str, affine: bool, extra_use: bool) -> Vec<u8> {
    let mean =
        |x: &str, y: &str| node("ReduceMean", &[x], &[y], vec![attr_ints("axes", &[-1]), attr_int("keepdims", 1)]);
    let mut nodes = vec![mean("x", "mean"), node("Sub", &["x", "mean"], &["d"], vec![])];
    nodes.push(match square {
        "Pow" => node("Pow", &["d", "two"], &["sq"], vec![]),
        _ => node("Mul", &["d", "d"], &["sq"], vec![]),
    });
    nodes.extend([
        mean("sq", "var"),
        node("Add", &["var", "eps"], &["var_eps"], vec![]),
        node("Sqrt", &["var_eps"], &["std"], vec![]),
        node("Div", &["d", "std"], &["normalized"], vec![]),
    ]);
    if affine {
        nodes.push(node("Mul", &["normalized", "gamma"], &["scaled"], vec![]));
        nodes.push(node("Add", &["scaled", "beta"], &["y"], vec![]));
    }
    if extra_use {
        nodes.push(node("Add", &["d", "d"], &["out"], vec![]));
    }
    let inits = vec![
        floats_init("two", &[], &[2.0]),
        floats_init("eps", &[], &[1e-5]),
        floats_init("gamma", &[3], &[1.0, 2.0, 3.0]),
        floats_init("beta", &[3], &[0.5, 0.0, -0.5]),
    ];
    model(13, nodes, vec![input("x", &[-1, 2, 3])], inits)
}

#[test]
fn decomposed_layer_norm_with_scale_and_bias_is_one_layer_norm() {
    use onnx_ir::ops::LayerNormConfig;
    let graph = simplified(&decomposed_layer_norm("Pow", true, false));
    assert_eq!(op_names(&graph), ["LayerNorm"]);
    let Op::LayerNorm(LayerNormConfig { axis: 2, epsilon, rms: false }) = graph.nodes[0].op else {
        panic!("{:?}", graph.nodes[0].op)
    };
    assert!((epsilon - 1e-5).abs() < 1e-12);
    assert_eq!(floats(&graph, graph.nodes[0].inputs[1]), [1.0, 2.0, 3.0]);
    assert_eq!(floats(&graph, graph.nodes[0].inputs[2]), [0.5, 0.0, -0.5]);
    assert_eq!(graph.outputs, graph.nodes[0].outputs);
}

#[test]
fn decomposed_layer_norm_without_affine_and_squared_by_mul_is_fused() {
    let graph = simplified(&decomposed_layer_norm("Mul", false, false));
    assert_eq!(op_names(&graph), ["LayerNorm"]);
    assert_eq!(graph.nodes[0].inputs, vec![Some(graph.inputs[0]), None, None]);
}

#[test]
fn decomposed_layer_norm_whose_centred_value_is_read_elsewhere_is_left_alone() {
    let graph = simplified(&decomposed_layer_norm("Pow", true, true));
    assert!(!op_names(&graph).contains(&"LayerNorm".to_string()));
}
