//! The simplification passes on models built in code: what they rewrite, with values computed
//! by hand, and what they must leave alone. (Outputs with and without them are compared on
//! every suite and real model by the test command.)

mod common;
use common::*;
use onnx_ir::ops::{
    ConstantOfShapeConfig, MatMulConfig, ReshapeConfig, ScaledDotProductAttentionConfig, TransposeConfig, UnaryOp,
};
use onnx_ir::proto::{NodeProto, TensorProto, ValueInfoProto};
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

#[test]
fn a_residual_sum_after_a_conv_and_its_activation_are_fused_into_it() {
    use onnx_ir::ops::ConvConfig;
    let w = || floats_init("w", &[2, 2, 1, 1], &[1.0, -1.0, 0.5, 2.0]);
    // ResNet's block end: Conv, Add of the shortcut, Relu.
    let nodes = vec![
        node("Conv", &["x", "w"], &["y"], vec![]),
        node("Add", &["x", "y"], &["s"], vec![]),
        node("Relu", &["s"], &["out"], vec![]),
    ];
    let graph = simplified(&model(13, nodes, vec![input("x", &[1, 2, 3, 3])], vec![w()]));
    assert_eq!(op_names(&graph), ["Conv"]);
    let conv = &graph.nodes[0];
    assert!(matches!(&conv.op, Op::Conv(ConvConfig { residual: true, activation: Some(UnaryOp::Relu), .. })));
    assert_eq!(conv.inputs, vec![Some(graph.inputs[0]), conv.inputs[1], None, Some(graph.inputs[0])]);
    assert_eq!(graph.outputs, conv.outputs);
    // A Sum whose other operand (a shortcut Conv) comes after the first Conv: the fused node
    // takes the Sum's place, after both.
    let nodes = vec![
        node("Conv", &["x", "w"], &["y"], vec![]),
        node("Conv", &["x", "w"], &["shortcut"], vec![attr_ints("dilations", &[2, 2])]),
        node("Sum", &["y", "shortcut"], &["out"], vec![]),
    ];
    let graph = simplified(&model(13, nodes, vec![input("x", &[1, 2, 3, 3])], vec![w()]));
    assert_eq!(op_names(&graph), ["Conv", "Conv"]);
    assert!(matches!(&graph.nodes[0].op, Op::Conv(ConvConfig { residual: false, .. })));
    assert!(matches!(&graph.nodes[1].op, Op::Conv(ConvConfig { residual: true, .. })));
    assert_eq!(graph.nodes[1].inputs[3], Some(graph.nodes[0].outputs[0]));
}

#[test]
fn per_channel_mul_and_add_after_a_batch_norm_and_its_relu_join_it() {
    use onnx_ir::ops::BatchNormConfig;
    // DenseNet after a Concat: BatchNormalization, Mul and Add by [C, 1, 1] constants, Relu.
    let nodes = vec![
        node("BatchNormalization", &["x", "scale", "shift", "mean", "var"], &["y"], vec![]),
        node("Mul", &["y", "s"], &["m"], vec![]),
        node("Add", &["m", "t"], &["a"], vec![]),
        node("Relu", &["a"], &["out"], vec![]),
    ];
    let inits = vec![
        floats_init("scale", &[2], &[0.5, 2.0]),
        floats_init("shift", &[2], &[10.0, 20.0]),
        floats_init("mean", &[2], &[3.0, 1.0]),
        floats_init("var", &[2], &[4.0, 16.0]),
        floats_init("s", &[2, 1, 1], &[2.0, -1.0]),
        floats_init("t", &[2, 1, 1], &[1.0, 0.5]),
    ];
    let graph = simplified(&model(15, nodes, vec![input("x", &[1, 2, 2, 2])], inits));
    assert_eq!(op_names(&graph), ["BatchNorm"]);
    let bn = &graph.nodes[0];
    assert!(matches!(&bn.op, Op::BatchNorm(BatchNormConfig { activation: Some(UnaryOp::Relu), .. })));
    // γ' = γ s, β' = β s + t; the statistics stay.
    assert_eq!(floats(&graph, bn.inputs[1]), [1.0, -2.0]);
    assert_eq!(floats(&graph, bn.inputs[2]), [21.0, -19.5]);
    assert_eq!(floats(&graph, bn.inputs[3]), [3.0, 1.0]);
    assert_eq!(graph.outputs, bn.outputs);
}

/// Conv, then ReLU6 as PyTorch exports it: `Clip(y, 0, 6)`, the bounds constants, or the upper
/// bound a graph input.
fn conv_relu6(runtime_bound: bool) -> Vec<u8> {
    let nodes = vec![node("Conv", &["x", "w"], &["y"], vec![]), node("Clip", &["y", "zero", "six"], &["out"], vec![])];
    let mut inits = vec![floats_init("w", &[2, 1, 1, 1], &[1.0, -1.0]), floats_init("zero", &[], &[0.0])];
    let mut inputs = vec![input("x", &[1, 1, 3, 3])];
    match runtime_bound {
        true => inputs.push(input("six", &[])),
        false => inits.push(floats_init("six", &[], &[6.0])),
    }
    model(13, nodes, inputs, inits)
}

#[test]
fn a_clip_of_constant_bounds_is_fused_into_the_conv() {
    use onnx_ir::ops::ConvConfig;
    let graph = simplified(&conv_relu6(false));
    assert_eq!(op_names(&graph), ["Conv"]);
    let relu6 = Some(UnaryOp::Clamp { min: 0.0, max: 6.0 });
    assert!(matches!(&graph.nodes[0].op, Op::Conv(ConvConfig { activation, .. }) if *activation == relu6));
    assert_eq!(graph.outputs, graph.nodes[0].outputs);
    // A bound read at run time: left as it is.
    assert_eq!(op_names(&simplified(&conv_relu6(true))), ["Conv", "Clip"]);
}

/// Conv, then hard-swish as PaddlePaddle writes it: `Div(Mul(y, Clip(Add(y, 3), 0, 6)), 6)`.
fn conv_hard_swish(three: f32, extra_use: bool) -> Vec<u8> {
    let mut nodes = vec![
        node("Conv", &["x", "w"], &["y"], vec![]),
        node("Add", &["y", "three"], &["shifted"], vec![]),
        node("Clip", &["shifted", "zero", "six"], &["clipped"], vec![]),
        node("Mul", &["clipped", "y"], &["product"], vec![]),
        node("Div", &["product", "six"], &["out"], vec![]),
    ];
    if extra_use {
        nodes.push(node("Add", &["out", "clipped"], &["z"], vec![]));
    }
    let inits = vec![
        floats_init("w", &[2, 1, 1, 1], &[1.0, -1.0]),
        floats_init("three", &[], &[three]),
        floats_init("zero", &[], &[0.0]),
        floats_init("six", &[], &[6.0]),
    ];
    model(13, nodes, vec![input("x", &[1, 1, 3, 3])], inits)
}

#[test]
fn decomposed_hard_swish_is_one_node_fused_into_the_conv() {
    use onnx_ir::ops::ConvConfig;
    let graph = simplified(&conv_hard_swish(3.0, false));
    assert_eq!(op_names(&graph), ["Conv"]);
    assert!(matches!(&graph.nodes[0].op, Op::Conv(ConvConfig { activation: Some(UnaryOp::HardSwish), .. })));
    assert_eq!(graph.outputs, graph.nodes[0].outputs);
    // Another constant, or an intermediate read elsewhere: left as it is.
    assert_eq!(op_names(&simplified(&conv_hard_swish(2.0, false))), ["Conv", "Binary", "Clip", "Binary", "Binary"]);
    assert_eq!(op_names(&simplified(&conv_hard_swish(3.0, true))).len(), 6);
}

#[test]
fn a_sum_after_an_activation_or_of_another_shape_is_not_fused_into_the_conv() {
    use onnx_ir::ops::ConvConfig;
    let w = floats_init("w", &[2, 2, 1, 1], &[1.0, -1.0, 0.5, 2.0]);
    // The activation comes first: it is fused, the sum stays.
    let nodes = vec![
        node("Conv", &["x", "w"], &["y"], vec![]),
        node("Relu", &["y"], &["r"], vec![]),
        node("Add", &["r", "x"], &["out"], vec![]),
    ];
    let graph = simplified(&model(13, nodes, vec![input("x", &[1, 2, 3, 3])], vec![w.clone()]));
    assert_eq!(op_names(&graph), ["Conv", "Binary"]);
    assert!(matches!(&graph.nodes[0].op, Op::Conv(ConvConfig { residual: false, .. })));
    // The other operand broadcasts: the sum has another shape than the Conv's result.
    let nodes = vec![node("Conv", &["x", "w"], &["y"], vec![]), node("Add", &["y", "z"], &["out"], vec![])];
    let inputs = vec![input("x", &[1, 2, 3, 3]), input("z", &[1, 2, 1, 3])];
    let graph = simplified(&model(13, nodes, inputs, vec![w]));
    assert_eq!(op_names(&graph), ["Conv", "Binary"]);
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
    assert!(matches!(graph.nodes[0].op, Op::ConstantOfShape(ConstantOfShapeConfig { value, .. }) if value == 1.0));
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
    assert_eq!(graph.nodes[0].op, Op::ScaledDotProductAttention(ScaledDotProductAttentionConfig { scale: 0.125 }));
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

/// `MatMul(Softmax(MatMul(q, kt), axis), v)`: attention without scale or mask.
fn unscaled_attention(softmax_axis: i64) -> Vec<u8> {
    let nodes = vec![
        node("MatMul", &["q", "kt"], &["scores"], vec![]),
        node("Softmax", &["scores"], &["probs"], vec![attr_int("axis", softmax_axis)]),
        node("MatMul", &["probs", "v"], &["context"], vec![]),
    ];
    let inputs = vec![input("q", &[1, 2, 3, 4]), input("kt", &[1, 2, 4, 3]), input("v", &[1, 2, 3, 6])];
    model(13, nodes, inputs, vec![])
}

#[test]
fn attention_without_scale_or_mask_is_fused() {
    let graph = simplified(&unscaled_attention(3));
    assert_eq!(graph.nodes.len(), 1);
    assert_eq!(graph.nodes[0].op, Op::ScaledDotProductAttention(ScaledDotProductAttentionConfig { scale: 1.0 }));
    assert_eq!(graph.nodes[0].inputs[3], None);
    assert_eq!(graph.values[graph.outputs[0]].ty.to_string(), "f32[1, 2, 3, 6]");
}

#[test]
fn softmax_over_another_axis_is_not_attention() {
    let graph = simplified(&unscaled_attention(2));
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

fn not_simplified(bytes: &[u8]) -> Graph {
    import(bytes, ImportOptions { simplify: false, ..Default::default() }).expect("imports")
}

// remove_dead_nodes

#[test]
fn nodes_nothing_reads_are_removed_to_the_last() {
    let nodes = vec![
        node("Relu", &["x"], &["a"], vec![]),
        node("Neg", &["a"], &["b"], vec![]),
        node("Split", &["x"], &["s0", "s1"], vec![attr_int("axis", 0)]),
        node("Sigmoid", &["s0"], &["y"], vec![]),
    ];
    let bytes = model(13, nodes, vec![input("x", &[2, 3])], vec![]);
    // The Split stays for its one read output.
    assert_eq!(op_names(&simplified(&bytes)), ["Split", "Unary"]);
    assert_eq!(not_simplified(&bytes).nodes.len(), 4);
}

#[test]
fn nodes_read_by_a_subgraph_or_as_graph_outputs_stay() {
    let nodes = vec![
        node("Relu", &["x"], &["a"], vec![]),
        node("Neg", &["x"], &["n"], vec![]),
        if_with("cond", node("Abs", &["a"], &["out"], vec![]), node("Sigmoid", &["x"], &["out"], vec![])),
    ];
    let graph =
        simplified(&model_with_outputs(13, nodes, vec![input("x", &[2]), bool_input("cond")], vec![], &["y", "n"]));
    assert_eq!(op_names(&graph), ["Unary", "Unary", "If"]);
}

#[test]
fn dead_nodes_inside_a_branch_are_removed() {
    use onnx_ir::proto::GraphProto;
    let branch = |nodes| GraphProto {
        node: nodes,
        output: vec![ValueInfoProto { name: Some("out".into()), ..Default::default() }],
        ..Default::default()
    };
    let then_branch = branch(vec![node("Relu", &["x"], &["dead"], vec![]), node("Neg", &["x"], &["out"], vec![])]);
    let else_branch = branch(vec![node("Abs", &["x"], &["out"], vec![])]);
    let attrs = vec![attr_graph("then_branch", then_branch), attr_graph("else_branch", else_branch)];
    let nodes = vec![node("If", &["cond"], &["y"], attrs)];
    let graph = simplified(&model(13, nodes, vec![input("x", &[2]), bool_input("cond")], vec![]));
    let Op::If(config) = &graph.nodes[0].op else { panic!("an If") };
    assert_eq!(config.then_branch.nodes.len(), 1);
    assert_eq!(config.then_branch.nodes[0].op, Op::Unary(UnaryOp::Neg));
}

#[test]
fn nodes_that_call_a_hook_stay_unread() {
    let nodes = vec![node("Relu", &["x"], &["unread"], vec![]), node("Sigmoid", &["x"], &["y"], vec![])];
    let bytes = model(13, nodes, vec![input("x", &[2])], vec![]);
    let hooks = [(String::new(), "Relu".to_string())];
    let graph = onnx_ir::import_with_custom_ops(&bytes, ImportOptions::default(), &hooks).expect("imports");
    assert_eq!(op_names(&graph), ["Custom", "Unary"]);
}

// collapse_layout_chains

fn transpose(perm: &[i64], x: &str, out: &str) -> NodeProto {
    node("Transpose", &[x], &[out], vec![attr_ints("perm", perm)])
}

#[test]
fn transposes_of_transposes_compose() {
    let nodes = vec![transpose(&[1, 2, 0], "x", "t"), transpose(&[0, 2, 1], "t", "y")];
    let graph = simplified(&model(13, nodes, vec![input("x", &[2, 3, 4])], vec![]));
    assert_eq!(op_names(&graph), ["Transpose"]);
    assert_eq!(graph.nodes[0].op, Op::Transpose(TransposeConfig { perm: vec![1, 0, 2] }));
    assert_eq!(graph.nodes[0].inputs, vec![Some(graph.inputs[0])]);
    assert_eq!(graph.value(graph.outputs[0]).ty.static_shape(), Some(vec![3, 2, 4]));
}

#[test]
fn transposes_that_cancel_out_go() {
    let nodes = vec![transpose(&[1, 0], "x", "t"), transpose(&[1, 0], "t", "u"), node("Relu", &["u"], &["y"], vec![])];
    let graph = simplified(&model(13, nodes, vec![input("x", &[2, 3])], vec![]));
    assert_eq!(op_names(&graph), ["Unary"]);
    assert_eq!(graph.nodes[0].inputs, vec![Some(graph.inputs[0])]);
    // A graph output that would be the graph input itself stays a node of its own.
    let nodes = vec![transpose(&[1, 0], "x", "t"), transpose(&[1, 0], "t", "y")];
    assert_eq!(op_names(&simplified(&model(13, nodes, vec![input("x", &[2, 3])], vec![]))), ["Identity"]);
}

#[test]
fn a_chain_of_reshaping_ops_is_one_reshape() {
    // [2, 3, 4] -> [2, 12] -> [1, 2, 12] -> [1, 4, 6]: the last target copies a dim, so the
    // static result is the target.
    let nodes = vec![
        node("Flatten", &["x"], &["f"], vec![attr_int("axis", 1)]),
        node("Unsqueeze", &["f", "zero"], &["u"], vec![]),
        node("Reshape", &["u", "shape"], &["y"], vec![]),
    ];
    let inits = vec![ints_init("zero", &[0]), ints_init("shape", &[0, 4, -1])];
    let bytes = model(13, nodes, vec![input("x", &[2, 3, 4])], inits);
    let graph = simplified(&bytes);
    assert_eq!(op_names(&graph), ["Reshape"]);
    assert_eq!(graph.nodes[0].op, Op::Reshape(ReshapeConfig { shape: vec![1, 4, 6] }));
    assert_eq!(graph.nodes[0].inputs, vec![Some(graph.inputs[0])]);
    assert_eq!(op_names(&not_simplified(&bytes)), ["Flatten", "Unsqueeze", "Reshape"]);
    // A dynamic batch: the last Reshape's own target, which copies nothing, serves.
    let nodes = vec![
        node("Unsqueeze", &["x", "one"], &["u"], vec![]),
        node("Squeeze", &["u", "one"], &["s"], vec![]),
        node("Reshape", &["s", "shape"], &["y"], vec![]),
    ];
    let inits = vec![ints_init("one", &[1]), ints_init("shape", &[-1, 12])];
    let graph = simplified(&model(13, nodes, vec![input("x", &[-1, 3, 4])], inits));
    assert_eq!(op_names(&graph), ["Reshape"]);
    assert_eq!(graph.nodes[0].op, Op::Reshape(ReshapeConfig { shape: vec![-1, 12] }));
    assert_eq!(graph.nodes[0].inputs, vec![Some(graph.inputs[0])]);
}

#[test]
fn layout_chains_are_left_alone_when_read_elsewhere_or_not_static() {
    let flatten = || node("Flatten", &["x"], &["f"], vec![attr_int("axis", 1)]);
    let reshape = || node("Reshape", &["f", "shape"], &["y"], vec![]);
    let collapsed = |nodes, outputs: &[&str], x_dims: &[i64], shape: &[i64]| {
        let inputs = vec![input("x", x_dims), bool_input("cond")];
        let graph = simplified(&model_with_outputs(13, nodes, inputs, vec![ints_init("shape", shape)], outputs));
        op_names(&graph)
    };
    assert_eq!(collapsed(vec![flatten(), reshape()], &["y"], &[2, 3, 4], &[4, 6]), ["Reshape"]);
    // Read by another node, as a graph output, inside a subgraph.
    let relu = node("Relu", &["f"], &["r"], vec![]);
    assert_eq!(
        collapsed(vec![flatten(), reshape(), relu], &["y", "r"], &[2, 3, 4], &[4, 6]),
        ["Flatten", "Reshape", "Unary"]
    );
    assert_eq!(collapsed(vec![flatten(), reshape()], &["y", "f"], &[2, 3, 4], &[4, 6]), ["Flatten", "Reshape"]);
    let branch = NodeProto {
        output: vec!["b".into()],
        ..if_with("cond", node("Relu", &["f"], &["out"], vec![]), node("Neg", &["f"], &["out"], vec![]))
    };
    assert_eq!(
        collapsed(vec![flatten(), reshape(), branch], &["y", "b"], &[2, 3, 4], &[4, 6]),
        ["Flatten", "Reshape", "If"]
    );
    // A target that copies a dynamic dim: the result is not static either.
    assert_eq!(collapsed(vec![flatten(), reshape()], &["y"], &[-1, 3, 4], &[0, 3, 4]), ["Flatten", "Reshape"]);
    // A Transpose between reshapes reorders the elements.
    let nodes = vec![flatten(), transpose(&[1, 0], "f", "t"), node("Reshape", &["t", "shape"], &["y"], vec![])];
    assert_eq!(collapsed(nodes, &["y"], &[2, 3, 4], &[4, 6]), ["Flatten", "Transpose", "Reshape"]);
}

fn value_name(graph: &Graph, id: Option<usize>) -> &str {
    &graph.value(id.expect("an input")).name
}

fn add(a: &str, b: &str, out: &str) -> NodeProto {
    node("Add", &[a, b], &[out], vec![])
}

// fuse_matmul_bias

/// `x` times the constant `[4, 2]` weight `w` (as `p`), then `nodes`, with `bias` among the
/// initializers.
fn matmul_then(x: ValueInfoProto, bias: TensorProto, nodes: Vec<NodeProto>, outputs: &[&str]) -> Vec<u8> {
    let mut all = vec![node("MatMul", &["x", "w"], &["p"], vec![])];
    all.extend(nodes);
    let weight = floats_init("w", &[4, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    model_with_outputs(13, all, vec![x, bool_input("cond")], vec![weight, bias], outputs)
}

#[test]
fn a_bias_added_to_a_product_by_a_constant_matrix_joins_the_matmul() {
    let bytes =
        matmul_then(input("x", &[2, 3, 4]), floats_init("b", &[2], &[0.5, -1.0]), vec![add("p", "b", "y")], &["y"]);
    let graph = simplified(&bytes);
    assert_eq!(op_names(&graph), ["MatMul"]);
    let matmul = &graph.nodes[0];
    assert_eq!(value_name(&graph, matmul.inputs[2]), "b");
    assert_eq!(graph.outputs, matmul.outputs);
    assert_eq!(op_names(&not_simplified(&bytes)), ["MatMul", "Binary"]);
}

#[test]
fn a_bias_of_leading_ones_or_one_element_becomes_a_vector() {
    // Bias first, of shape [1, 1, 2]: the same elements as an [2] vector.
    let bytes = matmul_then(
        input("x", &[2, 3, 4]),
        floats_init("b", &[1, 1, 2], &[0.5, -1.0]),
        vec![add("b", "p", "y")],
        &["y"],
    );
    let graph = simplified(&bytes);
    assert_eq!(op_names(&graph), ["MatMul"]);
    assert_eq!(floats(&graph, graph.nodes[0].inputs[2]), [0.5, -1.0]);
    assert_eq!(graph.constant(graph.nodes[0].inputs[2]).map(|d| d.shape.clone()), Some(vec![2]));
    // One element, repeated for each column.
    for dims in [&[][..], &[1][..], &[1, 1][..]] {
        let graph = simplified(&matmul_then(
            input("x", &[3, 4]),
            floats_init("b", dims, &[3.0]),
            vec![add("p", "b", "y")],
            &["y"],
        ));
        assert_eq!(op_names(&graph), ["MatMul"], "bias of shape {dims:?}");
        assert_eq!(floats(&graph, graph.nodes[0].inputs[2]), [3.0, 3.0]);
    }
}

#[test]
fn a_bias_add_is_left_alone_when_the_product_is_read_elsewhere() {
    let bias = || floats_init("b", &[2], &[0.5, -1.0]);
    let x = || input("x", &[3, 4]);
    // Read by another node, as a graph output, and inside a subgraph.
    let graph = simplified(&matmul_then(
        x(),
        bias(),
        vec![add("p", "b", "z"), node("Relu", &["p"], &["r"], vec![])],
        &["z", "r"],
    ));
    assert_eq!(op_names(&graph), ["MatMul", "Binary", "Unary"]);
    let graph = simplified(&matmul_then(x(), bias(), vec![add("p", "b", "z")], &["z", "p"]));
    assert_eq!(op_names(&graph), ["MatMul", "Binary"]);
    let branch = if_with("cond", node("Relu", &["p"], &["out"], vec![]), node("Neg", &["p"], &["out"], vec![]));
    let graph = simplified(&matmul_then(x(), bias(), vec![add("p", "b", "z"), branch], &["z", "y"]));
    assert_eq!(op_names(&graph), ["MatMul", "Binary", "If"]);
}

#[test]
fn a_bias_add_is_left_alone_when_the_shapes_or_types_do_not_fit() {
    let fused = |x, bias| op_names(&simplified(&matmul_then(x, bias, vec![add("p", "b", "y")], &["y"]))) == ["MatMul"];
    // A bias along the rows, not the columns; one of more axes than the product (the Add
    // would add a leading axis).
    assert!(!fused(input("x", &[3, 4]), floats_init("b", &[3, 1], &[1.0, 2.0, 3.0])));
    assert!(!fused(input("x", &[3, 4]), floats_init("b", &[1, 1, 2], &[1.0, 2.0])));
    // A vector times the matrix is no Linear.
    assert!(!fused(input("x", &[4]), floats_init("b", &[2], &[1.0, 2.0])));
    // The weight computed, not a constant.
    let nodes = vec![node("MatMul", &["x", "w"], &["p"], vec![]), add("p", "b", "y")];
    let bytes =
        model(13, nodes, vec![input("x", &[3, 4]), input("w", &[4, 2])], vec![floats_init("b", &[2], &[1.0, 2.0])]);
    assert_eq!(op_names(&simplified(&bytes)), ["MatMul", "Binary"]);
    // Integers.
    let ints =
        |name: &str, dims: &[i64], values: &[i64]| TensorProto { dims: dims.to_vec(), ..ints_init(name, values) };
    let nodes = vec![node("MatMul", &["x", "w"], &["p"], vec![]), add("p", "b", "y")];
    let inits = vec![ints("w", &[4, 2], &[1, 2, 3, 4, 5, 6, 7, 8]), ints("b", &[2], &[1, 2])];
    let bytes = model(13, nodes, vec![typed_input("x", 7, &[3, 4])], inits);
    assert_eq!(op_names(&simplified(&bytes)), ["MatMul", "Binary"]);
}

#[test]
fn only_a_fused_matmul_has_a_bias() {
    // A model's MatMul of three inputs is refused before any parser runs.
    let nodes = vec![node("MatMul", &["x", "w", "b"], &["y"], vec![])];
    let inits = vec![floats_init("w", &[4, 2], &[0.0; 8]), floats_init("b", &[2], &[1.0, 2.0])];
    let error = import(&model(13, nodes, vec![input("x", &[3, 4])], inits), ImportOptions::default()).unwrap_err();
    assert!(error.to_string().contains("MatMul-13 takes 2 input(s), the node has 3"), "{error}");
    // Inference takes a bias of the weight's columns only.
    let t = |dims: &[usize]| onnx_ir::TensorType::from_static(onnx_ir::DType::F32, dims);
    let (x, w) = (t(&[3, 4]), t(&[4, 2]));
    assert_eq!(Op::MatMul(MatMulConfig).infer(&[&x, &w, &t(&[2])]), Ok(vec![t(&[3, 2])]));
    assert!(Op::MatMul(MatMulConfig).infer(&[&x, &w, &t(&[4])]).is_err());
    assert!(Op::MatMul(MatMulConfig).infer(&[&x, &w, &t(&[1, 2])]).is_err());
}

fn scalar(name: &str, value: f32) -> TensorProto {
    floats_init(name, &[], &[value])
}

fn mul(a: &str, b: &str, out: &str) -> NodeProto {
    node("Mul", &[a, b], &[out], vec![])
}

// fuse_gelu

fn is_gelu(graph: &Graph, tanh: bool) -> bool {
    graph.nodes.len() == 1
        && graph.nodes[0].op == Op::Unary(UnaryOp::Gelu { tanh })
        && graph.nodes[0].inputs == vec![Some(graph.inputs[0])]
        && graph.outputs == graph.nodes[0].outputs
}

/// The GELU constants as exporters store them (f32).
fn gelu_constants() -> Vec<TensorProto> {
    vec![
        scalar("half", 0.5),
        scalar("one", 1.0),
        scalar("sqrt2", std::f32::consts::SQRT_2),
        scalar("rsqrt2", std::f32::consts::FRAC_1_SQRT_2),
        scalar("three", 3.0),
        scalar("cubic", 0.044715),
        scalar("scale", 0.797_884_6),
    ]
}

fn gelu_model(nodes: Vec<NodeProto>, outputs: &[&str]) -> Vec<u8> {
    model_with_outputs(13, nodes, vec![input("x", &[2, 3]), bool_input("cond")], gelu_constants(), outputs)
}

/// `x * 0.5 * (1 + erf(x / sqrt 2))` as Hugging Face BERT exports it.
fn bert_gelu() -> Vec<NodeProto> {
    vec![
        node("Div", &["x", "sqrt2"], &["d"], vec![]),
        node("Erf", &["d"], &["e"], vec![]),
        add("e", "one", "g"),
        mul("x", "half", "h"),
        mul("h", "g", "y"),
    ]
}

#[test]
fn the_erf_gelu_of_exporters_is_one_gelu() {
    assert!(is_gelu(&simplified(&gelu_model(bert_gelu(), &["y"])), false));
    assert_eq!(not_simplified(&gelu_model(bert_gelu(), &["y"])).nodes.len(), 5);
    // torch.onnx's F.gelu before opset 20: `(x * (erf(x / sqrt 2) + 1)) * 0.5`.
    let torch = vec![
        node("Div", &["x", "sqrt2"], &["d"], vec![]),
        node("Erf", &["d"], &["e"], vec![]),
        add("one", "e", "g"),
        mul("x", "g", "h"),
        mul("h", "half", "y"),
    ];
    assert!(is_gelu(&simplified(&gelu_model(torch, &["y"])), false));
    // A product by 1 / sqrt 2, and `x * ((1 + erf) * 0.5)`, operands swapped throughout.
    let swapped = vec![
        mul("rsqrt2", "x", "d"),
        node("Erf", &["d"], &["e"], vec![]),
        add("e", "one", "g"),
        mul("g", "half", "h"),
        mul("x", "h", "y"),
    ];
    assert!(is_gelu(&simplified(&gelu_model(swapped, &["y"])), false));
    // ONNX's expansion of its Gelu function, whose Add is a Sum.
    let mut expansion = bert_gelu();
    expansion[2] = node("Sum", &["one", "e"], &["g"], vec![]);
    assert!(is_gelu(&simplified(&gelu_model(expansion, &["y"])), false));
    // onnx's `gelu_*_expanded` tests compute sqrt 2 at run time: folded, it is the constant.
    let mut computed = bert_gelu();
    computed.insert(0, node("Add", &["one", "one"], &["two"], vec![]));
    computed.insert(1, node("Sqrt", &["two"], &["root2"], vec![]));
    computed[2] = node("Div", &["x", "root2"], &["d"], vec![]);
    assert!(is_gelu(&simplified(&gelu_model(computed, &["y"])), false));
}

/// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * cube)))`, the cube computed by
/// `cube_nodes` as `c`.
fn tanh_gelu(cube_nodes: Vec<NodeProto>) -> Vec<NodeProto> {
    let mut nodes = cube_nodes;
    nodes.extend([
        mul("cubic", "c", "k"),
        add("x", "k", "s"),
        mul("s", "scale", "t"),
        node("Tanh", &["t"], &["th"], vec![]),
        add("one", "th", "g"),
        mul("half", "x", "h"),
        mul("h", "g", "y"),
    ]);
    nodes
}

#[test]
fn the_tanh_gelu_is_one_approximate_gelu() {
    let pow = vec![node("Pow", &["x", "three"], &["c"], vec![])];
    assert!(is_gelu(&simplified(&gelu_model(tanh_gelu(pow), &["y"])), true));
    for cube in [mul("x", "sq", "c"), mul("sq", "x", "c")] {
        let nodes = tanh_gelu(vec![mul("x", "x", "sq"), cube]);
        assert!(is_gelu(&simplified(&gelu_model(nodes, &["y"])), true));
    }
}

#[test]
fn a_gelu_pattern_is_left_alone_when_an_intermediate_is_read_elsewhere() {
    let unfused = |nodes: Vec<_>, outputs: &[&str]| {
        let graph = simplified(&gelu_model(nodes, outputs));
        graph.nodes.len() > 1 && graph.nodes.iter().all(|n| !matches!(n.op, Op::Unary(UnaryOp::Gelu { .. })))
    };
    let mut extra_reader = bert_gelu();
    extra_reader.push(add("y", "e", "z"));
    assert!(unfused(extra_reader, &["z"]));
    assert!(unfused(bert_gelu(), &["y", "g"]));
    let mut branch_reader = bert_gelu();
    branch_reader.push(node(
        "If",
        &["cond"],
        &["b"],
        if_with("cond", node("Relu", &["d"], &["out"], vec![]), node("Neg", &["d"], &["out"], vec![])).attribute,
    ));
    assert!(unfused(branch_reader, &["y", "b"]));
}

#[test]
fn a_gelu_pattern_is_left_alone_when_a_constant_or_shape_differs() {
    let with = |name: &str, dims: &[i64], value: f32| {
        let mut inits: Vec<_> = gelu_constants().into_iter().filter(|t| t.name() != name).collect();
        inits.push(floats_init(name, dims, &[value]));
        let bytes = model(13, bert_gelu(), vec![input("x", &[2, 3])], inits);
        op_names(&simplified(&bytes)).len()
    };
    // sqrt 2 a few f32 steps off (relative 2e-7) matches; 1e-5 off it does not, nor 0.6 for 0.5.
    let sqrt2 = std::f32::consts::SQRT_2;
    assert_eq!(with("sqrt2", &[], sqrt2 * (1.0 + 2e-7)), 1);
    assert_eq!(with("sqrt2", &[], sqrt2 * (1.0 + 1e-5)), 5);
    assert_eq!(with("half", &[], 0.6), 5);
    // A [1, 1, 1] constant makes the result rank 3, not x's 2.
    assert_eq!(with("half", &[1, 1, 1], 0.5), 5);
}

// merge_common_subexpressions

#[test]
fn nodes_of_one_op_on_the_same_inputs_are_merged() {
    let nodes = vec![
        node("Relu", &["x"], &["a1"], vec![]),
        node("Neg", &["a1"], &["n1"], vec![]),
        node("Relu", &["x"], &["a2"], vec![]),
        node("Neg", &["a2"], &["n2"], vec![]),
        add("n1", "n2", "y"),
    ];
    let graph = simplified(&model(13, nodes, vec![input("x", &[2])], vec![]));
    assert_eq!(op_names(&graph), ["Unary", "Unary", "Binary"]);
    assert_eq!(graph.nodes[2].inputs, vec![Some(graph.nodes[1].outputs[0]); 2]);
}

#[test]
fn copies_of_a_small_constant_are_merged_and_so_their_readers() {
    let nodes = vec![mul("x", "c1", "m1"), mul("x", "c2", "m2"), add("m1", "m2", "y")];
    let graph = simplified(&model(13, nodes, vec![input("x", &[2])], vec![scalar("c1", 0.5), scalar("c2", 0.5)]));
    assert_eq!(op_names(&graph), ["Binary", "Binary"]);
    assert_eq!(value_name(&graph, graph.nodes[0].inputs[1]), "c1");
}

#[test]
fn nodes_of_other_configurations_inputs_or_constants_are_not_merged() {
    let leaky = |alpha, out: &str| node("LeakyRelu", &["x"], &[out], vec![attr_float("alpha", alpha)]);
    let pairs = [
        (leaky(0.1, "a"), leaky(0.2, "b")),
        (node("Relu", &["x"], &["a"], vec![]), node("Relu", &["z"], &["b"], vec![])),
        // 0.0 and -0.0 compare equal, but are not the same constant.
        (mul("x", "zero", "a"), mul("x", "negative_zero", "b")),
    ];
    for (first, second) in pairs {
        let inputs = vec![input("x", &[2]), input("z", &[2])];
        let inits = vec![scalar("zero", 0.0), scalar("negative_zero", -0.0)];
        let graph = simplified(&model(13, vec![first, second, add("a", "b", "y")], inputs, inits));
        assert_eq!(graph.nodes.len(), 3);
    }
}

#[test]
fn readers_of_a_merged_node_in_subgraphs_and_graph_outputs_are_rewired() {
    let nodes = vec![
        node("Relu", &["x"], &["a"], vec![]),
        node("Relu", &["x"], &["b"], vec![]),
        if_with("cond", node("Neg", &["b"], &["out"], vec![]), node("Abs", &["a"], &["out"], vec![])),
    ];
    let graph = simplified(&model_with_outputs(
        13,
        nodes,
        vec![input("x", &[2]), bool_input("cond")],
        vec![],
        &["y", "b", "a"],
    ));
    assert_eq!(op_names(&graph), ["Unary", "If"]);
    let kept = graph.nodes[0].outputs[0];
    assert_eq!(graph.outputs[1..], [kept, kept]);
    let Op::If(config) = &graph.nodes[1].op else { panic!("an If") };
    assert_eq!(config.then_branch.nodes[0].inputs, vec![Some(kept)]);
}

#[test]
fn nodes_with_subgraphs_are_not_merged() {
    let if_node = |out: &str| NodeProto {
        output: vec![out.into()],
        ..if_with("cond", node("Neg", &["x"], &["out"], vec![]), node("Abs", &["x"], &["out"], vec![]))
    };
    let nodes = vec![if_node("y1"), if_node("y2"), add("y1", "y2", "y")];
    let graph = simplified(&model(13, nodes, vec![input("x", &[2]), bool_input("cond")], vec![]));
    assert_eq!(op_names(&graph), ["If", "If", "Binary"]);
}

#[test]
fn the_same_model_gives_the_same_graph_whatever_the_hash_order() {
    // Many copies of constants and nodes, merged through maps of a fresh seed each import.
    let mut nodes = vec![];
    let mut inits = vec![];
    for i in 0..20 {
        inits.push(scalar(&format!("c{i}"), (i % 3) as f32));
        nodes.push(mul("x", &format!("c{i}"), &format!("m{i}")));
        let previous = if i == 0 { "x".to_string() } else { format!("s{}", i - 1) };
        nodes.push(add(&previous, &format!("m{i}"), &format!("s{i}")));
    }
    let bytes = model(13, nodes, vec![input("x", &[2])], inits);
    let first = simplified(&bytes).to_string();
    for _ in 0..5 {
        assert_eq!(simplified(&bytes).to_string(), first);
    }
}

// fuse_integer_scale

/// ConvInteger of a uint8 `x` `[1, 2, 4, 4]` by an int8 `w` `[3, 2, 1, 1]`, its int32 sums
/// (plus the int32 `bias` `[1, 3, 1, 1]` where `with_bias`) cast to `to` and times `scale`
/// (`scale_dims`, of type `to`), then `extra` nodes; every operand a graph input.
fn conv_integer_scaled(
    with_bias: bool,
    to: i64,
    scale_dims: &[i64],
    extra: Vec<NodeProto>,
    outputs: &[&str],
) -> Vec<u8> {
    let mut nodes = vec![node("ConvInteger", &["x", "w"], &["acc"], vec![])];
    let mut sums = "acc";
    if with_bias {
        nodes.push(add("acc", "bias", "biased"));
        sums = "biased";
    }
    nodes.push(node("Cast", &[sums], &["sums"], vec![attr_int("to", to)]));
    nodes.push(mul("sums", "scale", "y"));
    nodes.extend(extra);
    let inputs = vec![
        typed_input("x", 2, &[1, 2, 4, 4]),
        typed_input("w", 3, &[3, 2, 1, 1]),
        typed_input("bias", 6, &[1, 3, 1, 1]),
        typed_input("scale", to as i32, scale_dims),
    ];
    model_with_outputs(13, nodes, inputs, vec![], outputs)
}

#[test]
fn an_integer_products_bias_cast_and_scale_join_it() {
    for with_bias in [true, false] {
        let graph = simplified(&conv_integer_scaled(with_bias, 1, &[1], vec![], &["y"]));
        assert_eq!(op_names(&graph), ["QuantizedLinear"], "bias: {with_bias}");
        let fused = &graph.nodes[0];
        let Op::QuantizedLinear(config) = &fused.op else { unreachable!() };
        assert!(config.scaled);
        assert_eq!(fused.inputs.len(), 6);
        assert_eq!(fused.inputs[4].map(|b| value_name(&graph, Some(b))), with_bias.then_some("bias"));
        assert_eq!(value_name(&graph, fused.inputs[5]), "scale");
        assert_eq!(graph.values[fused.outputs[0]].ty.dtype, onnx_ir::DType::F32);
        assert_eq!(graph.outputs, fused.outputs);
    }
    let unfused = not_simplified(&conv_integer_scaled(true, 1, &[1], vec![], &["y"]));
    assert_eq!(op_names(&unfused), ["QuantizedLinear", "Binary", "Cast", "Binary"]);
}

#[test]
fn an_integer_scale_is_left_alone_when_a_value_is_read_elsewhere_or_the_types_do_not_fit() {
    let names = |bytes: Vec<u8>| op_names(&simplified(&bytes));
    // The sums read by another node, or as a graph output.
    let relu = vec![node("Relu", &["sums"], &["r"], vec![])];
    assert_eq!(
        names(conv_integer_scaled(false, 1, &[1], relu, &["y", "r"])),
        ["QuantizedLinear", "Cast", "Binary", "Unary"]
    );
    assert_eq!(
        names(conv_integer_scaled(true, 1, &[1], vec![], &["y", "acc"])),
        ["QuantizedLinear", "Binary", "Cast", "Binary"]
    );
    // A cast to f64, and a scale that makes the output larger than the sums.
    assert_eq!(names(conv_integer_scaled(false, 11, &[1], vec![], &["y"])), ["QuantizedLinear", "Cast", "Binary"]);
    assert_eq!(
        names(conv_integer_scaled(false, 1, &[2, 1, 1, 1, 1], vec![], &["y"])),
        ["QuantizedLinear", "Cast", "Binary"]
    );
}

// fuse_fake_quantize

/// `x` `[1, 2, 3]` through QuantizeLinear (scale `s`, uint8 zero point `z`) and DequantizeLinear
/// (scale `dq_scale`, zero point `z`), then Relu; `extra` nodes after; the scales and the zero
/// point initializers.
fn qdq(dq_scale: &str, extra: Vec<NodeProto>, outputs: &[&str]) -> Vec<u8> {
    let uint8 = TensorProto { name: Some("z".into()), data_type: Some(2), int32_data: vec![128], ..Default::default() };
    let inits = vec![floats_init("s", &[], &[0.02]), floats_init("s2", &[], &[0.04]), uint8];
    let mut nodes = vec![
        node("QuantizeLinear", &["x", "s", "z"], &["q"], vec![]),
        node("DequantizeLinear", &["q", dq_scale, "z"], &["dq"], vec![]),
        node("Relu", &["dq"], &["y"], vec![]),
    ];
    nodes.extend(extra);
    model_with_outputs(13, nodes, vec![input("x", &[1, 2, 3])], inits, outputs)
}

#[test]
fn a_quantize_dequantize_pair_of_one_scale_and_zero_point_is_one_round_trip() {
    let graph = simplified(&qdq("s", vec![], &["y"]));
    assert_eq!(op_names(&graph), ["Quantize", "Unary"]);
    let fused = &graph.nodes[0];
    let Op::Quantize(config) = &fused.op else { unreachable!() };
    assert!(config.round_trip && config.quantize);
    let names: Vec<&str> = fused.inputs.iter().map(|&i| value_name(&graph, i)).collect();
    assert_eq!(names, ["x", "s", "z"]);
    assert_eq!(graph.values[fused.outputs[0]].ty.dtype, onnx_ir::DType::F32);
    assert_eq!(op_names(&not_simplified(&qdq("s", vec![], &["y"]))), ["Quantize", "Quantize", "Unary"]);
}

#[test]
fn a_quantize_dequantize_pair_is_kept_when_the_scales_differ_or_the_integers_are_read_elsewhere() {
    let names = |bytes: Vec<u8>| op_names(&simplified(&bytes));
    assert_eq!(names(qdq("s2", vec![], &["y"])), ["Quantize", "Quantize", "Unary"]);
    assert_eq!(names(qdq("s", vec![], &["y", "q"])), ["Quantize", "Quantize", "Unary"]);
    let again = vec![node("DequantizeLinear", &["q", "s2", "z"], &["dq2"], vec![])];
    assert_eq!(names(qdq("s", again, &["y", "dq2"])), ["Quantize", "Quantize", "Unary", "Quantize"]);
}
