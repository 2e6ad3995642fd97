//! Attribute parsing per opset, type inference and error reporting, on models built in code.

use onnx_ir::ops::{
    BinaryConfig, BinaryOp, Bound, CastConfig, ClipConfig, DetConfig, DropoutConfig, IdentityConfig, ReshapeConfig,
    ReshapeRuntimeConfig, SoftmaxConfig, SqueezeConfig, UnsqueezeConfig,
};
use onnx_ir::proto::*;
use onnx_ir::{import, Dim, Error, ImportOptions, Op, TensorType};
use prost::Message;

mod common;
use common::*;

fn only_op(bytes: &[u8]) -> (Op, TensorType) {
    let graph = import(bytes, ImportOptions::default()).expect("imports");
    let node = graph.nodes.last().expect("a node");
    (node.op.clone(), graph.values[node.outputs[0]].ty.clone())
}

fn dims(t: &TensorType) -> Vec<Option<usize>> {
    t.shape.iter().map(Dim::as_static).collect()
}

#[test]
fn softmax_axis_default_and_semantics_change_at_opset_13() {
    let x = || vec![input("x", &[2, 3, 4])];
    let (op, _) = only_op(&model(11, vec![node("Softmax", &["x"], &["y"], vec![])], x(), vec![]));
    assert_eq!(op, Op::Softmax(SoftmaxConfig { axis: 1, log: false, coerce_2d: true }));
    let (op, _) = only_op(&model(13, vec![node("Softmax", &["x"], &["y"], vec![])], x(), vec![]));
    assert_eq!(op, Op::Softmax(SoftmaxConfig { axis: 2, log: false, coerce_2d: false }));
    // Before 13, the last axis needs no coercion.
    let (op, _) = only_op(&model(1, vec![node("LogSoftmax", &["x"], &["y"], vec![attr_int("axis", -1)])], x(), vec![]));
    assert_eq!(op, Op::Softmax(SoftmaxConfig { axis: 2, log: true, coerce_2d: false }));
}

#[test]
fn reshape_shape_moves_from_attribute_to_input_at_opset_5() {
    let (op, ty) = only_op(&model(
        1,
        vec![node("Reshape", &["x"], &["y"], vec![attr_ints("shape", &[0, -1])])],
        vec![input("x", &[2, 3, 4])],
        vec![],
    ));
    assert_eq!(op, Op::Reshape(ReshapeConfig { shape: vec![0, -1] }));
    assert_eq!(dims(&ty), vec![Some(2), Some(12)]);
    let (op, ty) = only_op(&model(
        14,
        vec![node("Reshape", &["x", "s"], &["y"], vec![])],
        vec![input("x", &[2, 3, 4])],
        vec![ints_init("s", &[-1, 4])],
    ));
    assert_eq!(op, Op::Reshape(ReshapeConfig { shape: vec![-1, 4] }));
    assert_eq!(dims(&ty), vec![Some(6), Some(4)]);
    // A shape computed at run time needs an integer vector of known length: that is the rank.
    let err = import(
        &model(14, vec![node("Reshape", &["x", "x"], &["y"], vec![])], vec![input("x", &[2, 3])], vec![]),
        ImportOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("shape must be an integer tensor"), "{err}");
    let mut shape = input("s", &[3]);
    if let Some(type_proto::Value::TensorType(t)) = shape.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(7);
    }
    let (op, ty) = only_op(&model(
        14,
        vec![node("Reshape", &["x", "s"], &["y"], vec![])],
        vec![input("x", &[2, 3, 4]), shape],
        vec![],
    ));
    assert_eq!(op, Op::ReshapeRuntime(ReshapeRuntimeConfig { rank: 3, allowzero: false }));
    assert_eq!(ty.rank(), 3);
}

#[test]
fn squeeze_and_unsqueeze_axes_from_attribute_then_input() {
    let x = || vec![input("x", &[2, 1, 3, 1])];
    let (op, ty) =
        only_op(&model(11, vec![node("Squeeze", &["x"], &["y"], vec![attr_ints("axes", &[-1, 1])])], x(), vec![]));
    assert_eq!(op, Op::Squeeze(SqueezeConfig { axes: vec![1, 3] }));
    assert_eq!(dims(&ty), vec![Some(2), Some(3)]);
    let (op, _) =
        only_op(&model(13, vec![node("Squeeze", &["x", "a"], &["y"], vec![])], x(), vec![ints_init("a", &[3])]));
    assert_eq!(op, Op::Squeeze(SqueezeConfig { axes: vec![3] }));
    let (op, _) = only_op(&model(13, vec![node("Squeeze", &["x"], &["y"], vec![])], x(), vec![]));
    assert_eq!(op, Op::Squeeze(SqueezeConfig { axes: vec![1, 3] }));
    let (op, ty) =
        only_op(&model(13, vec![node("Unsqueeze", &["x", "a"], &["y"], vec![])], x(), vec![ints_init("a", &[0, -1])]));
    assert_eq!(op, Op::Unsqueeze(UnsqueezeConfig { axes: vec![0, 5] }));
    assert_eq!(dims(&ty), vec![Some(1), Some(2), Some(1), Some(3), Some(1), Some(1)]);
}

#[test]
fn clip_bounds_from_attributes_then_inputs() {
    let x = || vec![input("x", &[4])];
    let (op, _) = only_op(&model(6, vec![node("Clip", &["x"], &["y"], vec![attr_float("min", -1.0)])], x(), vec![]));
    assert_eq!(op, Op::Clip(ClipConfig { min: Bound::Static(-1.0), max: Bound::None }));
    let (op, _) = only_op(&model(
        13,
        vec![node("Clip", &["x", "", "hi"], &["y"], vec![])],
        x(),
        vec![floats_init("hi", &[], &[2.5])],
    ));
    assert_eq!(op, Op::Clip(ClipConfig { min: Bound::None, max: Bound::Static(2.5) }));
    // A bound computed at run time stays an input.
    let (op, _) = only_op(&model(13, vec![node("Clip", &["x", "x"], &["y"], vec![])], x(), vec![]));
    assert_eq!(op, Op::Clip(ClipConfig { min: Bound::Runtime, max: Bound::None }));
}

#[test]
fn legacy_broadcast_axis_before_opset_7() {
    let ins = || vec![input("a", &[2, 3, 4, 5]), input("b", &[3])];
    let add = |attrs| vec![node("Add", &["a", "b"], &["y"], attrs)];
    let (op, ty) = only_op(&model(6, add(vec![attr_int("broadcast", 1), attr_int("axis", 1)]), ins(), vec![]));
    assert_eq!(op, Op::Binary(BinaryConfig { op: BinaryOp::Add, legacy_axis: Some(1) }));
    assert_eq!(dims(&ty), vec![Some(2), Some(3), Some(4), Some(5)]);
    // From opset 7 the same shapes follow numpy rules and do not broadcast.
    let err = import(&model(7, add(vec![]), ins(), vec![]), ImportOptions::default()).unwrap_err();
    assert!(err.to_string().contains("cannot be broadcast"), "{err}");
}

#[test]
fn conv_and_pool_output_shapes() {
    let w = floats_init("w", &[4, 3, 3, 3], &[0.0; 108]);
    let conv = node("Conv", &["x", "w"], &["y"], vec![attr_ints("strides", &[2, 2]), attr_ints("pads", &[1, 1, 1, 1])]);
    let (_, ty) = only_op(&model(11, vec![conv], vec![input("x", &[-1, 3, 9, 9])], vec![w]));
    assert_eq!(ty.shape, vec![Dim::Symbolic("batch".into()), Dim::Static(4), Dim::Static(5), Dim::Static(5)]);
    let pool = node(
        "MaxPool",
        &["x"],
        &["y"],
        vec![attr_ints("kernel_shape", &[3, 3]), attr_ints("strides", &[2, 2]), attr_int("ceil_mode", 1)],
    );
    let (_, ty) = only_op(&model(12, vec![pool], vec![input("x", &[1, 2, 8, 8])], vec![]));
    assert_eq!(dims(&ty), vec![Some(1), Some(2), Some(4), Some(4)]);
}

#[test]
fn gemm_and_matmul_shapes() {
    let b = floats_init("b", &[5, 4], &[0.0; 20]);
    let gemm = node("Gemm", &["x", "b"], &["y"], vec![attr_int("transB", 1)]);
    let (_, ty) = only_op(&model(13, vec![gemm], vec![input("x", &[2, 4])], vec![b]));
    assert_eq!(dims(&ty), vec![Some(2), Some(5)]);
    let mm = node("MatMul", &["v", "m"], &["y"], vec![]);
    let (_, ty) = only_op(&model(13, vec![mm], vec![input("v", &[4]), input("m", &[7, 4, 6])], vec![]));
    assert_eq!(dims(&ty), vec![Some(7), Some(6)]);
}

#[test]
fn wrong_attribute_type_names_node_and_op() {
    let bad = AttributeProto {
        name: Some("axis".into()),
        r#type: Some(attribute_type::FLOAT),
        f: Some(1.0),
        ..Default::default()
    };
    let err = import(
        &model(13, vec![node("Softmax", &["x"], &["y"], vec![bad])], vec![input("x", &[2, 3])], vec![]),
        ImportOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "node `Softmax_node` (Softmax): attribute `axis` has type FLOAT, expected INT");
}

#[test]
fn unsupported_ops_are_listed_once_with_counts() {
    let mut custom = node("ChannelScale", &["x"], &["a"], vec![]);
    custom.domain = Some("example.custom".into());
    let nodes = vec![custom, node("Foo", &["a"], &["b"], vec![]), node("Foo", &["b"], &["y"], vec![])];
    let err = import(&model(13, nodes, vec![input("x", &[2])], vec![]), ImportOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "model contains 2 op(s) with no implementation: ai.onnx::Foo (2 nodes), example.custom::ChannelScale (1 node)"
    );
}

#[test]
fn dangling_input_is_an_error() {
    let err =
        import(&model(13, vec![node("Relu", &["nope"], &["y"], vec![])], vec![], vec![]), ImportOptions::default())
            .unwrap_err();
    assert!(matches!(err, Error::DanglingInput { ref input, .. } if input == "nope"), "{err}");
}

#[test]
fn every_truncation_of_a_model_is_an_error_not_a_panic() {
    let w = floats_init("w", &[4, 3, 3, 3], &[0.5; 108]);
    let bytes = model(11, vec![node("Conv", &["x", "w"], &["y"], vec![])], vec![input("x", &[1, 3, 5, 5])], vec![w]);
    assert!(import(&bytes, ImportOptions::default()).is_ok());
    for len in 0..bytes.len() {
        let _ = import(&bytes[..len], ImportOptions::default());
    }
    // Flipped bytes too: any result is fine, a panic is not.
    for i in 0..bytes.len() {
        let mut corrupt = bytes.clone();
        corrupt[i] ^= 0xff;
        let _ = import(&corrupt, ImportOptions::default());
    }
}

#[test]
fn identity_and_dropout_are_removed_by_simplify_only() {
    let nodes = vec![node("Dropout", &["x"], &["a"], vec![]), node("Relu", &["a"], &["y"], vec![])];
    let bytes = model(13, nodes, vec![input("x", &[3])], vec![]);
    assert_eq!(import(&bytes, ImportOptions { simplify: true, ..Default::default() }).expect("imports").nodes.len(), 1);
    assert_eq!(
        import(&bytes, ImportOptions { simplify: false, ..Default::default() }).expect("imports").nodes.len(),
        2
    );
}

fn if_node(cond: &str) -> NodeProto {
    if_with(cond, node("Relu", &["x"], &["out"], vec![]), node("Sigmoid", &["x"], &["out"], vec![]))
}

/// Relu keeps `x` rank 2, Unsqueeze makes it rank 3: which one the rest of the graph takes
/// is decided by the declared output.
fn rank_changing_if(declared_output_rank: Option<usize>) -> Vec<u8> {
    let unsqueeze = node("Unsqueeze", &["x"], &["out"], vec![attr_ints("axes", &[0])]);
    let mut proto = ModelProto::decode(
        model(
            11,
            vec![if_with("c", node("Relu", &["x"], &["out"], vec![]), unsqueeze)],
            vec![input("x", &[2, 3]), bool_input("c")],
            vec![],
        )
        .as_slice(),
    )
    .expect("decodes");
    if let (Some(rank), Some(g)) = (declared_output_rank, proto.graph.as_mut()) {
        g.output = vec![input("y", &vec![-1; rank])];
    }
    proto.encode_to_vec()
}

#[test]
fn if_branches_of_different_rank_are_typed_for_the_one_the_graph_accepts() {
    let graph = import(&rank_changing_if(Some(2)), ImportOptions::default()).expect("imports");
    let Op::If(config) = &graph.nodes[0].op else { panic!("expected If, got {:?}", graph.nodes[0].op) };
    assert_eq!(graph.values[graph.outputs[0]].ty.rank(), 2);
    assert_eq!(config.then_branch.untyped, None);
    let reason = config.else_branch.untyped.as_deref().expect("the else branch is untyped");
    assert!(reason.contains("took its else branch, which yields f32[1, 2, 3]"), "{reason}");
    assert!(config.else_branch.nodes.is_empty());

    let graph = import(&rank_changing_if(Some(3)), ImportOptions::default()).expect("imports");
    let Op::If(config) = &graph.nodes[0].op else { panic!("expected If") };
    assert!(config.then_branch.untyped.is_some() && config.else_branch.untyped.is_none());
}

#[test]
fn if_branches_of_different_rank_with_nothing_to_choose_by_are_an_error() {
    let err = import(&rank_changing_if(None), ImportOptions::default()).expect_err("both typings fit");
    assert_eq!(err.to_string(), "node `If_node` (If): branch outputs differ: f32[2, 3] and f32[1, 2, 3]");
}

/// The then branch squeezes `x` (`[1]`) to a scalar, the else branch keeps it `[1]`; the If's
/// output is declared of `declared_output_rank`, or read with a `[2]` vector by `reader`
/// (Concat, which wants a vector, or Mul, which takes either).
fn scalar_or_single_if(declared_output_rank: Option<usize>, reader: Option<&str>) -> Vec<u8> {
    let mut nodes =
        vec![if_with("c", node("Squeeze", &["x"], &["out"], vec![]), node("Relu", &["x"], &["out"], vec![]))];
    match reader {
        Some("Concat") => nodes.push(node("Concat", &["y", "pair"], &["z"], vec![attr_int("axis", 0)])),
        Some(op) => nodes.push(node(op, &["y", "pair"], &["z"], vec![])),
        None => {}
    }
    let inputs = vec![input("x", &[1]), input("pair", &[2]), bool_input("c")];
    let mut proto = ModelProto::decode(model(11, nodes, inputs, vec![]).as_slice()).expect("decodes");
    if let (Some(rank), Some(g)) = (declared_output_rank, proto.graph.as_mut()) {
        g.output = vec![input("y", &vec![1; rank])];
    }
    proto.encode_to_vec()
}

/// The branch `converted` ends in a Reshape of its own value to the If's output type.
fn reshaped_branch_output(graph: &onnx_ir::Graph, branch: &onnx_ir::ops::Branch, rank: usize) {
    let last = branch.nodes.last().expect("a node");
    assert_eq!(last.op, Op::Reshape(ReshapeConfig { shape: vec![1; rank] }), "{last:?}");
    assert_eq!(branch.outputs, last.outputs);
    assert_eq!(graph.values[last.outputs[0]].ty.rank(), rank);
}

#[test]
fn if_branches_yielding_a_scalar_and_a_one_element_vector_take_the_declared_rank() {
    for rank in [0, 1] {
        let graph = import(&scalar_or_single_if(Some(rank), None), ImportOptions::default()).expect("imports");
        let Op::If(config) = &graph.nodes[0].op else { panic!("expected If, got {:?}", graph.nodes[0].op) };
        assert_eq!(graph.values[graph.outputs[0]].ty, TensorType::new(onnx_ir::DType::F32, vec![Dim::Static(1); rank]));
        assert!(config.then_branch.untyped.is_none() && config.else_branch.untyped.is_none());
        // The branch of the other rank is reshaped; the one of the declared rank is as it was.
        let (converted, kept) = if rank == 0 {
            (&config.else_branch, &config.then_branch)
        } else {
            (&config.then_branch, &config.else_branch)
        };
        reshaped_branch_output(&graph, converted, rank);
        assert_eq!(kept.nodes.len(), 1);
    }
}

#[test]
fn if_branches_yielding_a_scalar_and_a_one_element_vector_take_the_rank_later_nodes_accept() {
    let graph = import(&scalar_or_single_if(None, Some("Concat")), ImportOptions::default()).expect("imports");
    let Op::If(config) = &graph.nodes[0].op else { panic!("expected If, got {:?}", graph.nodes[0].op) };
    reshaped_branch_output(&graph, &config.then_branch, 1);
    assert_eq!(graph.values[graph.outputs[0]].ty.shape, [Dim::Static(3)]);
    // Either rank gives the graph's output the same type: the choice shows nowhere.
    let graph = import(&scalar_or_single_if(None, Some("Mul")), ImportOptions::default()).expect("imports");
    assert_eq!(graph.values[graph.outputs[0]].ty.shape, [Dim::Static(2)]);
    // Nothing settles it (issue 37): ONNX Runtime's output has no rank and each branch's value
    // comes out as it is; the higher rank holds both, the scalar is reshaped to `[1]`.
    let graph = import(&scalar_or_single_if(None, None), ImportOptions::default()).expect("imports");
    let Op::If(config) = &graph.nodes[0].op else { panic!("expected If, got {:?}", graph.nodes[0].op) };
    reshaped_branch_output(&graph, &config.then_branch, 1);
    assert!(config.else_branch.nodes.iter().all(|n| n.op_type != "Reshape"));
    assert_eq!(graph.values[graph.outputs[0]].ty.shape, [Dim::Static(1)]);
}

/// An If whose then branch yields `x` reshaped to `then_shape` and the else branch `x` reshaped
/// to `else_shape`, its output the graph's (no type declared).
fn reshaping_if(x: &[i64], then_shape: &[i64], else_shape: &[i64]) -> Vec<u8> {
    let reshape = |shape: &str| node("Reshape", &["x", shape], &["out"], vec![]);
    let nodes = vec![if_with("c", reshape("then_shape"), reshape("else_shape"))];
    let inits = vec![ints_init("then_shape", then_shape), ints_init("else_shape", else_shape)];
    model(14, nodes, vec![input("x", x), bool_input("c")], inits)
}

#[test]
fn if_branches_yielding_one_element_of_any_two_ranks_take_the_higher() {
    for (then_shape, else_shape) in [(&[][..], &[1, 1][..]), (&[1, 1, 1], &[1])] {
        let graph = import(&reshaping_if(&[1], then_shape, else_shape), ImportOptions::default()).expect("imports");
        let rank = then_shape.len().max(else_shape.len());
        assert_eq!(graph.values[graph.outputs[0]].ty.shape, vec![Dim::Static(1); rank]);
        let Op::If(config) = &graph.nodes[0].op else { panic!("expected If") };
        let narrower = if then_shape.len() < rank { &config.then_branch } else { &config.else_branch };
        reshaped_branch_output(&graph, narrower, rank);
    }
}

#[test]
fn if_branches_of_one_rank_merge_their_dims() {
    // As ONNX's If inference and ONNX Runtime: a dim the branches disagree on is unknown (a
    // static one and one computed at run time here).
    let graph = import(&reshaping_if(&[-1], &[2, 6], &[2, -1]), ImportOptions::default()).expect("imports");
    assert_eq!(graph.values[graph.outputs[0]].ty.shape, [Dim::Static(2), Dim::Unknown]);
    let graph = import(&reshaping_if(&[12], &[2, 6], &[3, 4]), ImportOptions::default()).expect("imports");
    assert_eq!(graph.values[graph.outputs[0]].ty.shape, [Dim::Unknown, Dim::Unknown]);
}

#[test]
fn if_branches_of_other_ranks_and_more_elements_are_an_error() {
    // ONNX Runtime accepts them and returns a `[2, 3]` or a `[6]`: no one typed value holds both.
    let err = import(&reshaping_if(&[6], &[2, 3], &[6]), ImportOptions::default()).expect_err("no merge");
    assert_eq!(err.to_string(), "node `If_node` (If): branch outputs differ: f32[2, 3] and f32[6]");
}

#[test]
fn if_on_a_run_time_condition_keeps_both_branches() {
    let graph = import(
        &model(13, vec![if_node("c")], vec![input("x", &[2, 3]), bool_input("c")], vec![]),
        ImportOptions::default(),
    )
    .expect("imports");
    let Op::If(config) = &graph.nodes[0].op else { panic!("expected If, got {:?}", graph.nodes[0].op) };
    assert_eq!(config.then_branch.nodes.len(), 1);
    assert_eq!(config.else_branch.nodes.len(), 1);
    assert_eq!(graph.values[graph.outputs[0]].ty.rank(), 2);
}

#[test]
fn if_on_a_constant_condition_inlines_the_taken_branch() {
    let cond = TensorProto { name: Some("c".into()), data_type: Some(9), int32_data: vec![0], ..Default::default() };
    let graph = import(&model(13, vec![if_node("c")], vec![input("x", &[2, 3])], vec![cond]), ImportOptions::default())
        .expect("imports");
    assert_eq!(graph.nodes.len(), 1);
    assert!(matches!(graph.nodes[0].op, Op::Unary(onnx_ir::ops::UnaryOp::Sigmoid)), "{:?}", graph.nodes[0].op);
}

#[test]
fn shape_arithmetic_is_folded_into_a_static_reshape() {
    // Reshape(x, Concat(Gather(Shape(x), 0), [-1])) on a static [2, 3, 4] input.
    let nodes = vec![
        node("Shape", &["x"], &["s"], vec![]),
        node("Gather", &["s", "zero"], &["batch"], vec![]),
        node("Unsqueeze", &["batch", "axes"], &["batch1"], vec![]),
        node("Concat", &["batch1", "minus_one"], &["target"], vec![attr_int("axis", 0)]),
        node("Reshape", &["x", "target"], &["y"], vec![]),
    ];
    let scalar =
        TensorProto { name: Some("zero".into()), data_type: Some(7), int64_data: vec![0], ..Default::default() };
    let inits = vec![scalar, ints_init("axes", &[0]), ints_init("minus_one", &[-1])];
    let graph =
        import(&model(13, nodes, vec![input("x", &[2, 3, 4])], inits), ImportOptions::default()).expect("imports");
    assert_eq!(graph.nodes.len(), 1, "{graph}");
    assert_eq!(graph.nodes[0].op, Op::Reshape(ReshapeConfig { shape: vec![2, -1] }));
    assert_eq!(dims(&graph.values[graph.outputs[0]].ty), vec![Some(2), Some(12)]);
}

#[test]
fn mod_of_constants_is_folded() {
    // torchvision's nn.MultiheadAttention, exported by TorchScript, slices its shape up to
    // Mod(2, 3): unfolded, the Reshape that follows has no static length and is refused.
    let remainders = |fmod: i64| {
        let nodes = vec![node("Mod", &["a", "b"], &["r"], vec![attr_int("fmod", fmod)])];
        let inits = vec![ints_init("a", &[-5, 5, 8, -6]), ints_init("b", &[3, -3, 3, 3])];
        let graph = import(&model(13, nodes, vec![], inits), ImportOptions::default()).expect("imports");
        assert!(graph.nodes.is_empty(), "{graph}");
        graph.values[graph.outputs[0]].constant.as_ref().and_then(|c| c.to_i64s()).expect("a constant")
    };
    // Python's % (the divisor's sign) and C's fmod (the dividend's), as numpy's mod and fmod.
    assert_eq!(remainders(0), [1, -1, 2, 0]);
    assert_eq!(remainders(1), [-2, 2, 2, 0]);
    let nodes = vec![
        node("Shape", &["x"], &["s"], vec![]),
        node("Mod", &["two", "three"], &["end"], vec![]),
        node("Slice", &["s", "zero", "end"], &["head"], vec![]),
        node("Concat", &["head", "minus_one"], &["target"], vec![attr_int("axis", 0)]),
        node("Reshape", &["x", "target"], &["y"], vec![]),
    ];
    let inits =
        vec![ints_init("two", &[2]), ints_init("three", &[3]), ints_init("zero", &[0]), ints_init("minus_one", &[-1])];
    let graph =
        import(&model(13, nodes, vec![input("x", &[2, 3, 4])], inits), ImportOptions::default()).expect("imports");
    assert_eq!(graph.nodes.len(), 1, "{graph}");
    assert_eq!(graph.nodes[0].op, Op::Reshape(ReshapeConfig { shape: vec![2, 3, -1] }));
}

fn scan_node(body_nodes: Vec<NodeProto>, body_outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    let body = GraphProto {
        node: body_nodes,
        input: vec![input("s", &[3]), input("x_t", &[3])],
        output: body_outputs
            .iter()
            .map(|o| ValueInfoProto { name: Some(o.to_string()), ..Default::default() })
            .collect(),
        ..Default::default()
    };
    let mut attribute = vec![
        AttributeProto {
            name: Some("body".into()),
            r#type: Some(attribute_type::GRAPH),
            g: Some(body),
            ..Default::default()
        },
        attr_int("num_scan_inputs", 1),
    ];
    attribute.extend(attrs);
    NodeProto {
        op_type: Some("Scan".into()),
        name: Some("Scan_node".into()),
        input: vec!["s0".into(), "x".into()],
        output: vec!["s_final".into(), "y".into()],
        attribute,
        ..Default::default()
    }
}

#[test]
fn scan_outputs_stack_the_iterations_along_their_axis() {
    let body = vec![node("Add", &["s", "x_t"], &["s_next"], vec![]), node("Relu", &["s_next"], &["y_t"], vec![])];
    let scan = scan_node(
        body,
        &["s_next", "y_t"],
        vec![attr_ints("scan_input_axes", &[-1]), attr_ints("scan_output_axes", &[-1])],
    );
    let graph =
        import(&model(11, vec![scan], vec![input("s0", &[3]), input("x", &[3, 5])], vec![]), ImportOptions::default())
            .expect("imports");
    let Op::Scan(config) = &graph.nodes[0].op else { panic!("expected Scan, got {:?}", graph.nodes[0].op) };
    assert_eq!((config.input_axes.clone(), config.output_axes.clone()), (vec![1], vec![1]));
    let types: Vec<String> = graph.nodes[0].outputs.iter().map(|&o| graph.values[o].ty.to_string()).collect();
    assert_eq!(types, ["f32[3]", "f32[3, 5]"]);
}

#[test]
fn scan_8_and_a_state_changing_rank_are_errors() {
    let body = vec![node("Add", &["s", "x_t"], &["s_next"], vec![]), node("Relu", &["s_next"], &["y_t"], vec![])];
    let scan = scan_node(body, &["s_next", "y_t"], vec![]);
    let err =
        import(&model(8, vec![scan], vec![input("s0", &[3]), input("x", &[4, 3])], vec![]), ImportOptions::default())
            .expect_err("Scan-8");
    assert!(err.to_string().contains("Scan-8"), "{err}");
    let grows = vec![
        node("Unsqueeze", &["s"], &["s_next"], vec![attr_ints("axes", &[0])]),
        node("Relu", &["x_t"], &["y_t"], vec![]),
    ];
    let scan = scan_node(grows, &["s_next", "y_t"], vec![]);
    let err =
        import(&model(11, vec![scan], vec![input("s0", &[3]), input("x", &[4, 3])], vec![]), ImportOptions::default())
            .expect_err("state rank");
    assert!(err.to_string().contains("a state enters the body as f32[3] and leaves it as f32[1, 3]"), "{err}");
}

#[test]
fn loop_carried_values_keep_their_rank_and_scan_outputs_gain_an_axis() {
    let vi = |name: &str, elem: i32| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor { elem_type: Some(elem), shape: None })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let body = |nodes: Vec<NodeProto>| GraphProto {
        node: nodes,
        input: vec![vi("i", 7), vi("cond", 9), vi("s", 1)],
        output: vec![vi("cond", 9), vi("s_next", 1), vi("y_t", 1)],
        ..Default::default()
    };
    let loop_node = |nodes| NodeProto {
        op_type: Some("Loop".into()),
        name: Some("Loop_node".into()),
        input: vec!["m".into(), String::new(), "s0".into()],
        output: vec!["s_final".into(), "ys".into()],
        attribute: vec![AttributeProto {
            name: Some("body".into()),
            r#type: Some(attribute_type::GRAPH),
            g: Some(body(nodes)),
            ..Default::default()
        }],
        ..Default::default()
    };
    let ok = vec![node("Relu", &["s"], &["s_next"], vec![]), node("Sigmoid", &["s_next"], &["y_t"], vec![])];
    let graph = import(
        &model(13, vec![loop_node(ok)], vec![input("s0", &[2, 3])], vec![ints_init("m", &[4])]),
        ImportOptions::default(),
    )
    .expect("imports");
    let types: Vec<String> = graph.nodes[0].outputs.iter().map(|&o| graph.values[o].ty.to_string()).collect();
    assert_eq!(types, ["f32[2, 3]", "f32[?, 2, 3]"]);
    let grows = vec![
        node("Unsqueeze", &["s"], &["s_next"], vec![attr_ints("axes", &[0])]),
        node("Sigmoid", &["s"], &["y_t"], vec![]),
    ];
    let err = import(
        &model(11, vec![loop_node(grows)], vec![input("s0", &[2, 3])], vec![ints_init("m", &[4])]),
        ImportOptions::default(),
    )
    .expect_err("rank changes");
    assert!(
        err.to_string().contains("a carried value enters the body as f32[2, 3] and leaves it as f32[1, 2, 3]"),
        "{err}"
    );
}

/// A Relu of `x: f32[2, 3]` whose graph output `y` is declared as `declared`.
fn relu_declaring(declared: ValueInfoProto) -> Vec<u8> {
    let mut model = ModelProto::decode(
        &model(17, vec![node("Relu", &["x"], &["y"], vec![])], vec![input("x", &[2, 3])], vec![])[..],
    )
    .expect("decodes");
    if let Some(graph) = model.graph.as_mut() {
        graph.output = vec![declared];
    }
    model.encode_to_vec()
}

#[test]
fn a_declared_output_dtype_must_be_the_computed_one() {
    let mut declared = input("y", &[2, 3]);
    if let Some(type_proto::Value::TensorType(t)) = declared.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(7);
    }
    let err = import(&relu_declaring(declared), ImportOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), "graph output `y`: the model declares i64[2, 3] but the graph computes f32[2, 3]");
    // A stale declared rank is tolerated, as ONNX Runtime does: the computed type is returned.
    let graph = import(&relu_declaring(input("y", &[6])), ImportOptions::default()).expect("imports");
    assert_eq!(graph.values[graph.outputs[0]].ty.rank(), 2);
}

#[test]
fn max_pool_indices_output_and_storage_order() {
    let pool = |attrs| node("MaxPool", &["x"], &["y", "z"], attrs);
    let attrs = |order| {
        vec![attr_ints("kernel_shape", &[2, 2]), attr_ints("strides", &[2, 2]), attr_int("storage_order", order)]
    };
    let bytes = model_with_outputs(12, vec![pool(attrs(1))], vec![input("x", &[1, 1, 5, 5])], vec![], &["y", "z"]);
    let graph = import(&bytes, ImportOptions::default()).expect("imports");
    let node = graph.nodes.last().expect("a node");
    let Op::Pool(config) = &node.op else { panic!("{:?}", node.op) };
    assert_eq!(config.indices, Some(onnx_ir::ops::IndexOrder::ColumnMajor));
    let indices = &graph.values[node.outputs[1]].ty;
    assert_eq!((indices.dtype, dims(indices)), (onnx_ir::DType::I64, vec![Some(1), Some(1), Some(2), Some(2)]));
    let bytes = model_with_outputs(12, vec![pool(attrs(2))], vec![input("x", &[1, 1, 5, 5])], vec![], &["y", "z"]);
    let err = import(&bytes, ImportOptions::default()).unwrap_err();
    assert!(err.to_string().contains("storage_order must be 0 or 1, got 2"), "{err}");
}

#[test]
fn max_unpool_shapes_with_and_without_output_shape() {
    let ins = || vec![input("x", &[1, 2, 2, 3]), typed_input("i", 7, &[1, 2, 2, 3])];
    let attrs =
        || vec![attr_ints("kernel_shape", &[2, 3]), attr_ints("strides", &[2, 2]), attr_ints("pads", &[0, 1, 1, 0])];
    let (_, ty) = only_op(&model(11, vec![node("MaxUnpool", &["x", "i"], &["y"], attrs())], ins(), vec![]));
    // (2 - 1) * 2 + 2 - 1 and (3 - 1) * 2 + 3 - 1.
    assert_eq!(dims(&ty), vec![Some(1), Some(2), Some(3), Some(6)]);
    let unpool = vec![node("MaxUnpool", &["x", "i", "s"], &["y"], attrs())];
    let (_, ty) = only_op(&model(22, unpool.clone(), ins(), vec![ints_init("s", &[1, 2, 4, 6])]));
    assert_eq!(dims(&ty), vec![Some(1), Some(2), Some(4), Some(6)]);
    let err =
        import(&model(22, unpool, ins(), vec![ints_init("s", &[1, 2, 2, 6])]), ImportOptions::default()).unwrap_err();
    assert!(err.to_string().contains("smaller than the unpooled"), "{err}");
}

#[test]
fn deform_conv_is_two_dimensional_with_matching_offsets() {
    let deform = |x: &[i64], w: &[i64], offset: &[i64]| {
        let ins = vec![input("x", x), input("w", w), input("o", offset)];
        let attrs = vec![attr_int("offset_group", 2), attr_ints("pads", &[1, 0, 0, 1])];
        import(
            &model(19, vec![node("DeformConv", &["x", "w", "o"], &["y"], attrs)], ins, vec![]),
            ImportOptions::default(),
        )
    };
    let graph = deform(&[1, 4, 5, 5], &[3, 4, 2, 3], &[1, 24, 5, 4]).expect("imports");
    let node = graph.nodes.last().expect("a node");
    assert_eq!(dims(&graph.values[node.outputs[0]].ty), vec![Some(1), Some(3), Some(5), Some(4)]);
    let err = deform(&[1, 4, 5, 5], &[3, 4, 2, 3], &[1, 12, 5, 4]).unwrap_err();
    assert!(err.to_string().contains("offset"), "{err}");
    let err = deform(&[1, 4, 5], &[3, 4, 2], &[1, 8, 4]).unwrap_err();
    assert!(err.to_string().contains("only 2-D deformable convolution"), "{err}");
}

fn import_error(bytes: &[u8]) -> String {
    import(bytes, ImportOptions::default()).unwrap_err().to_string()
}

#[test]
fn dropout_mask_is_all_ones_of_bool_from_opset_10_and_of_the_input_type_before() {
    for (opset, mask) in [(13, onnx_ir::DType::Bool), (7, onnx_ir::DType::F32)] {
        let nodes = vec![node("Dropout", &["x"], &["y", "z"], vec![])];
        let bytes = model_with_outputs(opset, nodes, vec![input("x", &[2, 3])], vec![], &["y", "z"]);
        let graph = import(&bytes, ImportOptions::default()).expect("imports");
        let inference = DropoutConfig { mask: Some(mask), ratio: Some(0.0), training: Some(false), seed: None };
        assert_eq!(graph.nodes[0].op, Op::Dropout(inference));
        assert_eq!(graph.values[graph.outputs[1]].ty.dtype, mask);
        assert_eq!(dims(&graph.values[graph.outputs[1]].ty), [Some(2), Some(3)]);
    }
}

#[test]
fn dropout_training_mode_is_read_where_computed() {
    let dropout = || vec![node("Dropout", &["x", "r", "t"], &["y"], vec![])];
    let x_and_t = || vec![input("x", &[2]), bool_input("t")];
    // A constant ratio of 0: the input, whatever training_mode is.
    let zero = floats_init("r", &[], &[0.0]);
    let unsimplified = ImportOptions { simplify: false, ..Default::default() };
    let graph = import(&model(13, dropout(), x_and_t(), vec![zero]), unsimplified).expect("imports");
    assert_eq!(graph.nodes[0].op, Op::Identity(IdentityConfig));
    // Both computed: read at run time, so they stay inputs.
    let inputs = vec![input("x", &[2]), input("r", &[]), bool_input("t")];
    let graph = import(&model(13, dropout(), inputs, vec![]), ImportOptions::default()).expect("imports");
    let computed = DropoutConfig { mask: None, ratio: None, training: None, seed: None };
    assert_eq!((&graph.nodes[0].op, graph.nodes[0].inputs.len()), (&Op::Dropout(computed), 3));
    // A constant non-zero ratio with a computed training_mode.
    let half = floats_init("r", &[], &[0.5]);
    let graph = import(&model(13, dropout(), x_and_t(), vec![half]), ImportOptions::default()).expect("imports");
    let Op::Dropout(c) = &graph.nodes[0].op else { panic!("expected Dropout, got {:?}", graph.nodes[0].op) };
    assert_eq!((c.ratio, c.training), (Some(0.5), None));
    // Training mode with a ratio of 1 or more drops everything: refused.
    let one = floats_init("r", &[], &[1.0]);
    let err = import_error(&model(13, dropout(), x_and_t(), vec![one]));
    assert!(err.contains("ratio 1 is outside [0, 1)"), "{err}");
}

#[test]
fn blocked_quantization_from_opset_21_with_the_scale_of_the_input_rank() {
    let quantize = || vec![node("QuantizeLinear", &["x", "s"], &["y"], vec![attr_int("block_size", 2)])];
    let inputs = |scale: &[i64]| vec![input("x", &[3, 5]), input("s", scale)];
    let (op, ty) = only_op(&model(21, quantize(), inputs(&[3, 3]), vec![]));
    let Op::Quantize(c) = op else { panic!("expected Quantize, got {op:?}") };
    assert_eq!((c.axis, c.block_size), (1, Some(2)));
    assert_eq!(dims(&ty), [Some(3), Some(5)]);
    let err = import_error(&model(21, quantize(), inputs(&[3, 2]), vec![]));
    assert!(err.contains("ceil(len / block_size) blocks along the axis, got f32[3, 2]"), "{err}");
    let err = import_error(&model(19, quantize(), inputs(&[3, 3]), vec![]));
    assert!(err.contains("`block_size` exists from opset 21"), "{err}");
}

#[test]
fn det_of_the_last_two_dims() {
    let det = || vec![node("Det", &["x"], &["y"], vec![])];
    let (op, ty) = only_op(&model(11, det(), vec![input("x", &[4, 3, 3])], vec![]));
    assert_eq!((op, dims(&ty)), (Op::Det(DetConfig), vec![Some(4)]));
    let err = import_error(&model(22, det(), vec![input("x", &[2, 3])], vec![]));
    assert!(err.contains("the last two dims must be equal"), "{err}");
}

/// A model of one `ai.onnx.ml` node importing that domain at `ml_opset` (none when 0).
fn ml_model(op: &str, inputs: Vec<ValueInfoProto>, attrs: Vec<AttributeProto>, ml_opset: i64) -> Vec<u8> {
    ml_model_outputs(op, inputs, attrs, ml_opset, &["y"])
}

/// [`ml_model`] with the node's `outputs`, all graph outputs.
fn ml_model_outputs(
    op: &str,
    inputs: Vec<ValueInfoProto>,
    attrs: Vec<AttributeProto>,
    ml_opset: i64,
    outputs: &[&str],
) -> Vec<u8> {
    let names: Vec<String> = inputs.iter().map(|i| i.name().to_string()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut ml_node = node(op, &names, outputs, attrs);
    ml_node.domain = Some("ai.onnx.ml".into());
    let bytes = model_with_outputs(13, vec![ml_node], inputs, vec![], outputs);
    let mut proto = ModelProto::decode(bytes.as_slice()).expect("decodes");
    if ml_opset > 0 {
        proto.opset_import.push(OperatorSetIdProto { domain: Some("ai.onnx.ml".into()), version: Some(ml_opset) });
    }
    proto.encode_to_vec()
}

#[test]
fn ml_binarizer_and_array_feature_extractor_are_lowered() {
    let graph = import(
        &ml_model("Binarizer", vec![input("x", &[2, 3])], vec![attr_float("threshold", 1.0)], 1),
        ImportOptions::default(),
    )
    .expect("imports");
    let ops: Vec<&Op> = graph.nodes.iter().map(|n| &n.op).collect();
    assert!(matches!(ops[..], [Op::Binary(_), Op::Cast(CastConfig { to: onnx_ir::DType::F32, .. })]), "{ops:?}");
    let inputs = vec![input("x", &[4]), typed_input("i", 7, &[1, 2])];
    let (_, ty) = only_op(&ml_model("ArrayFeatureExtractor", inputs, vec![], 3));
    assert_eq!(dims(&ty), [Some(1), Some(2)]);
    let err = import_error(&ml_model("Binarizer", vec![input("x", &[2])], vec![], 0));
    assert!(err.contains("imports no opset of the ai.onnx.ml domain"), "{err}");
    let err = import_error(&ml_model("Binarizer", vec![input("x", &[2])], vec![], 9));
    assert!(err.contains("opset version 9 of the ai.onnx.ml domain does not exist"), "{err}");
}

/// A model of one `ai.onnx.preview.training` node reading R, T and the named float [2]
/// tensors, all its outputs graph outputs; `training_opset` 0 imports no opset of the domain.
fn training_model(
    op: &str,
    tensors: &[&str],
    outputs: &[&str],
    attrs: Vec<AttributeProto>,
    training_opset: i64,
) -> Vec<u8> {
    let mut inputs = vec![input("R", &[]), typed_input("T", 7, &[])];
    inputs.extend(tensors.iter().map(|name| input(name, &[2])));
    let names: Vec<&str> = ["R", "T"].into_iter().chain(tensors.iter().copied()).collect();
    let mut training_node = node(op, &names, outputs, attrs);
    training_node.domain = Some("ai.onnx.preview.training".into());
    let bytes = model_with_outputs(13, vec![training_node], inputs, vec![], outputs);
    let mut proto = ModelProto::decode(bytes.as_slice()).expect("decodes");
    if training_opset > 0 {
        let domain = Some("ai.onnx.preview.training".into());
        proto.opset_import.push(OperatorSetIdProto { domain, version: Some(training_opset) });
    }
    proto.encode_to_vec()
}

fn momentum_attrs(mode: &str) -> Vec<AttributeProto> {
    vec![
        attr_float("alpha", 0.9),
        attr_float("beta", 0.1),
        attr_float("norm_coefficient", 0.0),
        attr_string("mode", mode),
    ]
}

#[test]
fn training_optimizers_are_lowered_per_tensor_group() {
    let tensors = ["X1", "X2", "G1", "G2", "V1", "V2", "H1", "H2"];
    let outputs = ["X1n", "X2n", "V1n", "V2n", "H1n", "H2n"];
    let graph =
        import(&training_model("Adam", &tensors, &outputs, vec![], 1), ImportOptions::default()).expect("imports");
    assert_eq!(graph.outputs.len(), 6);
    for &o in &graph.outputs {
        assert_eq!(dims(&graph.values[o].ty), [Some(2)]);
    }
    for mode in ["standard", "nesterov"] {
        let bytes = training_model("Momentum", &["X", "G", "V"], &["Xn", "Vn"], momentum_attrs(mode), 1);
        import(&bytes, ImportOptions::default()).expect("imports");
    }
    let bytes = training_model("Adagrad", &["X", "G", "H"], &["Xn", "Hn"], vec![attr_float("decay_factor", 0.1)], 1);
    import(&bytes, ImportOptions::default()).expect("imports");
}

#[test]
fn training_optimizer_errors_name_the_node_and_reason() {
    let momentum = |attrs| training_model("Momentum", &["X", "G", "V"], &["Xn", "Vn"], attrs, 1);
    let err = import_error(&momentum(momentum_attrs("heavy_ball")));
    assert!(err.contains("attribute `mode` has unknown value `heavy_ball`"), "{err}");
    let err = import_error(&momentum(momentum_attrs("standard").into_iter().skip(1).collect()));
    assert!(err.contains("required attribute `alpha` is missing"), "{err}");
    let err = import_error(&training_model(
        "Adam",
        &["X", "G", "V", "H"],
        &["Xn", "Vn", "Hn"],
        vec![attr_float("gamma", 1.0)],
        1,
    ));
    assert!(err.contains("attribute `gamma` is not supported"), "{err}");
    let err = import_error(&training_model("Adagrad", &["X", "G"], &["Xn"], vec![], 1));
    assert!(err.contains("takes R, T and 3 tensors per optimized tensor"), "{err}");
    let err = import_error(&training_model("Adagrad", &["X", "G", "H"], &["Xn"], vec![], 1));
    assert!(err.contains("1 optimized tensor(s) give 2 outputs, the node has 1"), "{err}");
    let err = import_error(&training_model("Adagrad", &["X", "G", "H"], &["Xn", "Hn"], vec![], 0));
    assert!(err.contains("imports no opset of the ai.onnx.preview.training domain"), "{err}");
    let err = import_error(&training_model("Adagrad", &["X", "G", "H"], &["Xn", "Hn"], vec![], 2));
    assert!(err.contains("opset version 2 of the ai.onnx.preview.training domain does not exist"), "{err}");
    // T must be an int64 scalar.
    let mut proto =
        ModelProto::decode(training_model("Adagrad", &["X", "G", "H"], &["Xn", "Hn"], vec![], 1).as_slice())
            .expect("decodes");
    proto.graph.as_mut().expect("graph").input[1] = input("T", &[]);
    let err = import_error(&proto.encode_to_vec());
    assert!(err.contains("T (the update count) must be an int64 scalar"), "{err}");
    proto.graph.as_mut().expect("graph").input[1] = typed_input("T", 7, &[]);
    proto.graph.as_mut().expect("graph").input[2] = typed_input("X", 11, &[2]);
    let err = import_error(&proto.encode_to_vec());
    assert!(err.contains("double is not supported"), "{err}");
}

/// BatchNormalization of x [2, 3, 4] at `opset` with these outputs, all graph outputs.
fn batch_norm_model(opset: i64, outputs: &[&str], attrs: Vec<AttributeProto>) -> Vec<u8> {
    let mut inputs = vec![input("x", &[2, 3, 4])];
    inputs.extend(["s", "b", "m", "v"].iter().map(|n| input(n, &[3])));
    let nodes = vec![node("BatchNormalization", &["x", "s", "b", "m", "v"], outputs, attrs)];
    model_with_outputs(opset, nodes, inputs, vec![], outputs)
}

#[test]
fn batch_norm_training_mode_per_opset() {
    let has_batch_statistics = |g: &onnx_ir::Graph| g.nodes.iter().any(|n| matches!(n.op, Op::Reduce(_)));
    // Opset 14 and 15: `training_mode`; Y and the running statistics.
    let outputs = ["y", "running_mean", "running_var"];
    let graph = import(&batch_norm_model(15, &outputs, vec![attr_int("training_mode", 1)]), ImportOptions::default())
        .expect("imports");
    assert!(has_batch_statistics(&graph));
    let types: Vec<_> = graph.outputs.iter().map(|&o| dims(&graph.values[o].ty)).collect();
    assert_eq!(types, [vec![Some(2), Some(3), Some(4)], vec![Some(3)], vec![Some(3)]]);
    let err = import_error(&batch_norm_model(15, &["y"], vec![attr_int("training_mode", 2)]));
    assert!(err.contains("training_mode=2"), "{err}");
    let err = import_error(&batch_norm_model(14, &outputs, vec![]));
    assert!(err.contains("training_mode=0 gives Y alone"), "{err}");
    let err = import_error(&batch_norm_model(14, &["y"], vec![attr_int("training_mode", 1)]));
    assert!(err.contains("training_mode=1 gives Y, running_mean and running_var, the node has 1 outputs"), "{err}");
    // Opset 9: five outputs mean training mode; saved_mean is the batch mean, saved_var is
    // not produced.
    let legacy = ["y", "running_mean", "running_var", "saved_mean", "saved_var"];
    let mut nodes = vec![node("BatchNormalization", &["x", "s", "b", "m", "v"], &legacy, vec![])];
    nodes.push(node("Identity", &["saved_mean"], &["mean"], vec![]));
    let mut inputs = vec![input("x", &[2, 3, 4])];
    inputs.extend(["s", "b", "m", "v"].iter().map(|n| input(n, &[3])));
    let bytes = model_with_outputs(9, nodes.clone(), inputs.clone(), vec![], &["y", "mean"]);
    let graph = import(&bytes, ImportOptions::default()).expect("imports");
    assert!(has_batch_statistics(&graph));
    nodes[1] = node("Identity", &["saved_var"], &["mean"], vec![]);
    let err = import_error(&model_with_outputs(9, nodes, inputs.clone(), vec![], &["y", "mean"]));
    assert!(err.contains("uses output `saved_var` of node"), "{err}");
    let err = import_error(&batch_norm_model(9, &legacy, vec![]));
    assert!(err.contains("its output `saved_var` is a graph output but is not supported"), "{err}");
    let err = import_error(&batch_norm_model(9, &legacy[..3], vec![]));
    assert!(err.contains("the node has 3 outputs (opset 9)"), "{err}");
    let err = import_error(&batch_norm_model(9, &["y"], vec![attr_int("training_mode", 1)]));
    assert!(err.contains("attribute `training_mode` is not supported (opset 9)"), "{err}");
    // Opsets 1 and 6: `is_test`.
    let (op, _) = only_op(&batch_norm_model(6, &["y"], vec![attr_int("is_test", 1)]));
    assert!(matches!(op, Op::BatchNorm(_)), "{op:?}");
    // Y alone is test mode whatever `is_test` (its default, 0, would make every old inference
    // graph that omits it train); the five outputs with `is_test` = 0 train.
    let (op, _) = only_op(&batch_norm_model(6, &["y"], vec![]));
    assert!(matches!(op, Op::BatchNorm(_)), "{op:?}");
    let five = node("BatchNormalization", &["x", "s", "b", "m", "v"], &legacy, vec![]);
    let bytes = model_with_outputs(6, vec![five], inputs, vec![], &["y", "saved_mean"]);
    assert!(has_batch_statistics(&import(&bytes, ImportOptions::default()).expect("imports")));
}

/// TfIdfVectorizer's attributes of ONNX's backend tests: 1-grams 2, 3, 5, 4, then 2-grams
/// (5, 6), (7, 8), (6, 7), at coordinates 0 to 6; `extra` added, `skip` left out.
fn tfidf(x: ValueInfoProto, mode: &str, extra: Vec<AttributeProto>, skip: &str) -> Vec<u8> {
    let mut attrs = vec![
        attr_string("mode", mode),
        attr_int("min_gram_length", 1),
        attr_int("max_gram_length", 2),
        attr_int("max_skip_count", 0),
        attr_ints("ngram_counts", &[0, 4]),
        attr_ints("ngram_indexes", &[0, 1, 2, 3, 4, 5, 6]),
        attr_ints("pool_int64s", &[2, 3, 5, 4, 5, 6, 7, 8, 6, 7]),
    ];
    attrs.retain(|a| a.name() != skip && !extra.iter().any(|e| e.name() == a.name()));
    attrs.extend(extra);
    model(9, vec![node("TfIdfVectorizer", &["x"], &["y"], attrs)], vec![x], vec![])
}

#[test]
fn tfidf_vectorizer_rows_of_n_gram_counts() {
    let (op, ty) = only_op(&tfidf(typed_input("x", 6, &[2, 6]), "TFIDF", vec![], ""));
    let Op::TfIdfVectorizer(c) = op else { panic!("expected TfIdfVectorizer, got {op:?}") };
    assert_eq!((c.mode, c.output_size(), c.weights.len()), (onnx_ir::ops::TfIdfMode::TfIdf, 7, 0));
    assert_eq!((ty.dtype, dims(&ty)), (onnx_ir::DType::F32, vec![Some(2), Some(7)]));
    let (_, ty) = only_op(&tfidf(typed_input("x", 7, &[12]), "TF", vec![], ""));
    assert_eq!(dims(&ty), [Some(7)]);
}

#[test]
fn tfidf_vectorizer_refuses_what_it_does_not_implement() {
    let x = || typed_input("x", 7, &[12]);
    let cases = [
        (tfidf(typed_input("x", 8, &[12]), "TF", vec![], ""), "string input is not supported yet"),
        (tfidf(x(), "TF", vec![attr_strings("pool_strings", &["a"])], ""), "string input is not supported yet"),
        (tfidf(x(), "BM25", vec![], ""), "attribute `mode` has unknown value `BM25`"),
        (tfidf(x(), "TF", vec![], "mode"), "attribute `mode` is required"),
        (tfidf(x(), "TF", vec![attr_int("min_gram_length", 0)], ""), "`min_gram_length` must be at least 1"),
        (tfidf(x(), "TF", vec![attr_int("max_skip_count", -1)], ""), "`max_skip_count` must not be negative"),
        (tfidf(x(), "TF", vec![attr_ints("ngram_counts", &[0, 5])], ""), "not a whole number of 2-grams"),
        (tfidf(x(), "TF", vec![attr_ints("ngram_counts", &[0, 11])], ""), "ascending starts within the pool"),
        (tfidf(x(), "TF", vec![attr_ints("ngram_indexes", &[0, 1])], ""), "has 2 values for the pool's 7 n-grams"),
        (tfidf(x(), "IDF", vec![attr_floats("weights", &[1.0])], ""), "`weights` has 1 values for the pool's 7"),
        (
            tfidf(x(), "TF", vec![attr_ints("pool_int64s", &[2, 3, 5, 4, 5, 6, 7, 8, 5, 6])], ""),
            "holds the n-gram [5, 6] twice",
        ),
    ];
    for (bytes, expected) in cases {
        let err = import_error(&bytes);
        assert!(err.contains(expected) && err.contains("TfIdfVectorizer_node"), "{err}");
    }
}

fn roi_align(opset: i64, attrs: Vec<AttributeProto>) -> Vec<u8> {
    let inputs = vec![input("x", &[2, 3, 10, 10]), input("rois", &[5, 4]), typed_input("b", 7, &[5])];
    model(opset, vec![node("RoiAlign", &["x", "rois", "b"], &["y"], attrs)], inputs, vec![])
}

#[test]
fn roi_align_coordinates_default_by_opset() {
    let (op, ty) = only_op(&roi_align(10, vec![attr_int("output_height", 2), attr_string("mode", "max")]));
    let Op::RoiAlign(c) = op else { panic!("expected RoiAlign, got {op:?}") };
    assert_eq!((c.max, c.half_pixel, c.output_height, c.output_width, c.sampling_ratio), (true, false, 2, 1, 0));
    assert_eq!(dims(&ty), [Some(5), Some(3), Some(2), Some(1)]);
    let (op, _) = only_op(&roi_align(16, vec![]));
    assert!(matches!(op, Op::RoiAlign(ref c) if c.half_pixel && !c.max), "{op:?}");
    let output_half_pixel = attr_string("coordinate_transformation_mode", "output_half_pixel");
    let (op, _) = only_op(&roi_align(22, vec![output_half_pixel.clone()]));
    assert!(matches!(op, Op::RoiAlign(ref c) if !c.half_pixel), "{op:?}");
    // Opset 10 has no such attribute.
    let err = import_error(&roi_align(10, vec![output_half_pixel]));
    assert!(err.contains("attribute `coordinate_transformation_mode` is not supported (opset 10)"), "{err}");
    let err = import_error(&roi_align(16, vec![attr_string("mode", "sum")]));
    assert!(err.contains("RoiAlign_node") && err.contains("attribute `mode` has unknown value `sum`"), "{err}");
    let err = import_error(&roi_align(16, vec![attr_string("coordinate_transformation_mode", "asymmetric")]));
    assert!(err.contains("`coordinate_transformation_mode` has unknown value `asymmetric`"), "{err}");
    let err = import_error(&roi_align(16, vec![attr_int("output_width", 0)]));
    assert!(err.contains("`output_width` must be at least 1, got 0"), "{err}");
}

#[test]
fn grid_sample_takes_any_number_of_spatial_axes_from_opset_20() {
    let grid_sample = |opset, x: &[i64], grid: &[i64]| {
        let attrs = vec![attr_string("mode", "cubic")];
        model(
            opset,
            vec![node("GridSample", &["x", "grid"], &["y"], attrs)],
            vec![input("x", x), input("grid", grid)],
            vec![],
        )
    };
    let (op, ty) = only_op(&grid_sample(20, &[1, 2, 3, 4, 5], &[1, 6, 7, 8, 3]));
    assert!(matches!(op, Op::GridSample(_)), "{op:?}");
    assert_eq!(dims(&ty), [Some(1), Some(2), Some(6), Some(7), Some(8)]);
    let (_, ty) = only_op(&grid_sample(20, &[1, 2, 9], &[1, 4, 1]));
    assert_eq!(dims(&ty), [Some(1), Some(2), Some(4)]);
    let err = import_error(&grid_sample(16, &[1, 2, 3, 4, 5], &[1, 6, 7, 8, 3]));
    assert!(err.contains("4 (2-D) before opset 20") && err.contains("GridSample"), "{err}");
    let err = import_error(&grid_sample(20, &[1, 2, 3, 4], &[1, 6, 7, 3]));
    assert!(err.contains("grid's last axis must hold 2 coordinates, got 3"), "{err}");
    let err = import_error(&grid_sample(20, &[1, 2, 3, 4], &[1, 6, 7, 8, 2]));
    assert!(err.contains("X and grid must have one rank"), "{err}");
}

#[test]
fn random_ops_take_their_types_and_shapes() {
    let one = |op: &str, inputs: Vec<ValueInfoProto>, attrs: Vec<AttributeProto>| {
        let names: Vec<String> = inputs.iter().map(|i| i.name().to_string()).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        model(22, vec![node(op, &names, &["y"], attrs)], inputs, vec![])
    };
    let double = attr_int("dtype", 11);
    let (op, ty) = only_op(&one("RandomNormal", vec![], vec![attr_ints("shape", &[2, 3]), double.clone()]));
    assert!(matches!(op, Op::Random(_)), "{op:?}");
    assert_eq!((ty.dtype, dims(&ty)), (onnx_ir::DType::F64, vec![Some(2), Some(3)]));
    let (_, ty) = only_op(&one("Multinomial", vec![input("x", &[4, 5])], vec![attr_int("sample_size", 7)]));
    assert_eq!((ty.dtype, dims(&ty)), (onnx_ir::DType::I32, vec![Some(4), Some(7)]));
    let (_, ty) =
        only_op(&one("Bernoulli", vec![input("x", &[3])], vec![attr_int("dtype", 9), attr_float("seed", 2.0)]));
    assert_eq!((ty.dtype, dims(&ty)), (onnx_ir::DType::Bool, vec![Some(3)]));
    let (_, ty) = only_op(&one("RandomUniformLike", vec![typed_input("x", 7, &[2, 2])], vec![double]));
    assert_eq!((ty.dtype, dims(&ty)), (onnx_ir::DType::F64, vec![Some(2), Some(2)]));

    let cases = [
        (one("RandomUniform", vec![], vec![]), "attribute `shape` is required"),
        (one("RandomUniform", vec![], vec![attr_ints("shape", &[2, -1])]), "has a negative size -1"),
        (
            one("RandomUniform", vec![], vec![attr_ints("shape", &[2]), attr_int("dtype", 6)]),
            "is not one RandomUniform produces",
        ),
        (one("RandomNormalLike", vec![typed_input("x", 7, &[2])], vec![]), "is not one RandomNormalLike produces"),
        (one("Multinomial", vec![input("x", &[2, 3])], vec![attr_int("dtype", 1)]), "is not one Multinomial produces"),
        (one("Multinomial", vec![input("x", &[2, 3, 4])], vec![]), "input must be [batch, classes]"),
        (one("Multinomial", vec![input("x", &[2, 3])], vec![attr_int("sample_size", -2)]), "must not be negative"),
        (one("Bernoulli", vec![typed_input("x", 7, &[2])], vec![]), "input must be a float tensor"),
        (one("RandomNormal", vec![], vec![attr_ints("shape", &[2]), attr_float("sigma", 1.0)]), "sigma"),
    ];
    for (bytes, expected) in cases {
        let err = import_error(&bytes);
        assert!(err.contains(expected), "{err}");
    }
}

/// A one-tree TreeEnsembleRegressor/Classifier's attributes: branch node 0 (x[0] <= 0.5) leads
/// to `true_node` and leaf 2, node 1 is a branch to `node_1_true` and leaf 2, node 2 a leaf
/// weighted for each of `weighted` (the prefix is `class` or `target`).
fn one_tree(prefix: &str, true_node: i64, node_1_true: i64, weighted: &[i64]) -> Vec<AttributeProto> {
    let n = weighted.len();
    vec![
        attr_ints("nodes_treeids", &[0, 0, 0]),
        attr_ints("nodes_nodeids", &[0, 1, 2]),
        attr_ints("nodes_featureids", &[0, 0, 0]),
        attr_strings("nodes_modes", &["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"]),
        attr_floats("nodes_values", &[0.5, 0.25, 0.0]),
        attr_ints("nodes_truenodeids", &[true_node, node_1_true, 0]),
        attr_ints("nodes_falsenodeids", &[2, 2, 0]),
        attr_ints(&format!("{prefix}_treeids"), &vec![0; n]),
        attr_ints(&format!("{prefix}_nodeids"), &vec![2; n]),
        attr_ints(&format!("{prefix}_ids"), weighted),
        attr_floats(&format!("{prefix}_weights"), &vec![1.0; n]),
    ]
}

#[test]
fn ml_predictors_are_lowered_and_refuse_what_they_do_not_reproduce() {
    let regressor = |attrs, ml_opset| ml_model("TreeEnsembleRegressor", vec![input("x", &[3, 2])], attrs, ml_opset);
    let graph = import(&regressor(one_tree("target", 1, 2, &[0]), 3), ImportOptions::default()).expect("imports");
    assert!(graph.nodes.iter().any(|n| matches!(n.op, Op::TreeEnsemble(_))), "{:?}", graph.nodes);
    let err = import_error(&regressor(one_tree("target", 1, 2, &[0]), 5));
    assert!(err.contains("deprecated from ai.onnx.ml opset 5"), "{err}");
    // Node 1 leads back to itself.
    let err = import_error(&regressor(one_tree("target", 1, 1, &[0]), 3));
    assert!(err.contains("the trees have a cycle"), "{err}");

    let classifier = |weighted: &[i64]| {
        let mut attrs = one_tree("class", 1, 2, weighted);
        attrs.push(attr_ints("classlabels_int64s", &[0, 1]));
        ml_model("TreeEnsembleClassifier", vec![input("x", &[3, 2])], attrs, 1)
    };
    import(&classifier(&[0]), ImportOptions::default()).expect("ONNX Runtime's binary form imports");
    let err = import_error(&classifier(&[1]));
    assert!(err.contains("of two classes only the form where class 0 alone is weighted"), "{err}");

    let linear = vec![
        attr_floats("coefficients", &[1.0, 2.0, 3.0, 4.0]),
        attr_floats("intercepts", &[0.0, 1.0]),
        attr_strings("classlabels_strings", &["a", "b"]),
    ];
    let graph = import(&ml_model("LinearClassifier", vec![input("x", &[3, 2])], linear, 1), ImportOptions::default())
        .expect("string labels import");
    assert!(graph.nodes.iter().any(|n| matches!(n.op, Op::Text(_))), "the labels are looked up: {:?}", graph.nodes);
    let svm = vec![
        attr_ints("classlabels_ints", &[0, 1]),
        attr_ints("vectors_per_class", &[1, 1]),
        attr_floats("support_vectors", &[0.0, 1.0, 1.0, 0.0]),
        attr_floats("coefficients", &[1.0, -1.0]),
        attr_floats("rho", &[0.5]),
        attr_floats("prob_a", &[-1.0]),
        attr_floats("prob_b", &[0.1]),
    ];
    let calibrated = ml_model_outputs("SVMClassifier", vec![input("x", &[3, 2])], svm.clone(), 1, &["label", "scores"]);
    let graph = import(&calibrated, ImportOptions::default()).expect("calibrated SVC imports");
    assert!(graph.nodes.iter().any(|n| matches!(n.op, Op::SvmProbabilities(_))), "{:?}", graph.nodes);
    let mut two_platt_pairs: Vec<AttributeProto> = svm.into_iter().filter(|a| a.name() != "prob_a").collect();
    two_platt_pairs.push(attr_floats("prob_a", &[-1.0, -2.0]));
    let err = import_error(&ml_model("SVMClassifier", vec![input("x", &[3, 2])], two_platt_pairs, 1));
    assert!(err.contains("2 `prob_a` and 1 `prob_b` values for 1 pairs of classes"), "{err}");

    // Where ONNX Runtime and the spec part ways, the import refuses rather than pick one.
    let regressor = |op: &str, targets: i64, transform: &str| {
        let mut attrs = vec![attr_floats("coefficients", &vec![0.5; 2 * targets as usize])];
        attrs.push(attr_string("post_transform", transform));
        if op == "LinearRegressor" {
            attrs.push(attr_int("targets", targets));
        } else {
            attrs.push(attr_floats("rho", &[0.1]));
        }
        ml_model(op, vec![input("x", &[3, 2])], attrs, 1)
    };
    import(&regressor("LinearRegressor", 2, "SOFTMAX"), ImportOptions::default()).expect("per-row transform imports");
    import(&regressor("LinearRegressor", 1, "PROBIT"), ImportOptions::default()).expect("one target's PROBIT imports");
    let err = import_error(&regressor("LinearRegressor", 1, "LOGISTIC"));
    assert!(err.contains("ONNX Runtime leaves it unapplied where the spec applies it"), "{err}");
    // SVMRegressor's transform: ONNX Runtime reads and ignores it (the reference evaluator has
    // no answer), so it imports; a spelling no version defines does not.
    import(&regressor("SVMRegressor", 1, "NONE"), ImportOptions::default()).expect("liblinear SVR imports");
    import(&regressor("SVMRegressor", 1, "LOGISTIC"), ImportOptions::default()).expect("SVR's transform is ignored");
    let err = import_error(&regressor("SVMRegressor", 1, "SQUASH"));
    assert!(err.contains("post_transform"), "{err}");
}

#[test]
fn data_movement_of_strings_moves_their_positions() {
    let transposed = model(
        17,
        vec![node("Transpose", &["x"], &["y"], vec![attr_ints("perm", &[1, 0])])],
        vec![typed_input("x", 8, &[2, 3])],
        vec![],
    );
    let graph = import(&transposed, ImportOptions::default()).expect("a transposed string tensor imports");
    let ops: Vec<String> = graph.nodes.iter().map(|n| format!("{:?}", n.op)).collect();
    assert!(
        ops.len() == 3 && ops[0].contains("Positions") && ops[1].contains("Transpose") && ops[2].contains("Take"),
        "{ops:?}"
    );
    let negated = model(17, vec![node("Neg", &["x"], &["y"], vec![])], vec![typed_input("x", 8, &[2, 3])], vec![]);
    let err = import_error(&negated);
    assert!(err.contains("string tensors are supported only by"), "{err}");
}

#[test]
fn zip_map_gives_one_map_per_row_keyed_by_the_labels() {
    let zip_map = |labels: AttributeProto| ml_model("ZipMap", vec![input("x", &[3, 2])], vec![labels], 1);
    let (op, ty) = only_op(&zip_map(attr_ints("classlabels_int64s", &[4, 9])));
    assert!(matches!(op, Op::ZipMap(_)), "{op:?}");
    assert_eq!(ty.to_string(), "seq(map(int64, f32))");
    let (_, ty) = only_op(&zip_map(attr_strings("classlabels_strings", &["cat", "dog"])));
    assert_eq!(ty.holder, onnx_ir::Holder::MapSequence { string_keys: true });
    let err = import_error(&zip_map(attr_ints("classlabels_int64s", &[4, 9, 11])));
    assert!(err.contains("input X must be float [N, 3] (one column per label)"), "{err}");
}

/// Attention: the window bounds exist from opset 25 (-1 leaves a side open), the softmax's
/// precision is parsed, and what the spec leaves undefined or forbids is refused.
#[test]
fn attention_windows_precision_and_cache_inputs_per_opset() {
    use onnx_ir::ops::AttentionConfig;
    let qkv = |q: &[i64]| vec![input("q", q), input("k", &[1, 2, 6, 8]), input("v", &[1, 2, 6, 8])];
    let attention = |opset: i64, inputs: &[&str], attrs: Vec<AttributeProto>, extra: Vec<ValueInfoProto>| {
        let mut graph_inputs = qkv(&[1, 2, 4, 8]);
        graph_inputs.extend(extra);
        model(opset, vec![node("Attention", inputs, &["y"], attrs)], graph_inputs, vec![])
    };
    let config = |bytes: &[u8]| match only_op(bytes).0 {
        Op::Attention(c) => c,
        other => panic!("expected Attention, got {other:?}"),
    };
    let windows = vec![attr_int("left_window_size", 2), attr_int("right_window_size", -1)];
    let c: AttentionConfig = config(&attention(25, &["q", "k", "v"], windows.clone(), vec![]));
    assert_eq!((c.left_window, c.right_window, c.softmax_precision), (Some(2), None, None));
    let error = |bytes: &[u8]| import(bytes, ImportOptions::default()).expect_err("must be refused").to_string();
    assert!(error(&attention(24, &["q", "k", "v"], windows, vec![])).contains("`left_window_size`"));
    let too_small = vec![attr_int("left_window_size", -2)];
    assert!(error(&attention(25, &["q", "k", "v"], too_small, vec![])).contains("`left_window_size` = -2"));
    // softmax_precision FLOAT on float inputs is the scores' own type; DOUBLE is a cast.
    let c = config(&attention(24, &["q", "k", "v"], vec![attr_int("softmax_precision", 1)], vec![]));
    assert_eq!(c.softmax_precision, None);
    let c = config(&attention(24, &["q", "k", "v"], vec![attr_int("softmax_precision", 11)], vec![]));
    assert_eq!(c.softmax_precision, Some(onnx_ir::DType::F64));
    // Opset 25 forbids head counts on 4-D inputs.
    assert!(error(&attention(25, &["q", "k", "v"], vec![attr_int("q_num_heads", 2)], vec![]))
        .contains("must not be set for 4-D inputs"));
    imports_ok(&attention(24, &["q", "k", "v"], vec![attr_int("q_num_heads", 2)], vec![]));
    // The causal offset is the past's length or the external cache's, never both.
    let lengths = || typed_input("lengths", 7, &[1]);
    let past = || vec![input("pk", &[1, 2, 3, 8]), input("pv", &[1, 2, 3, 8])];
    let both = attention(24, &["q", "k", "v", "", "pk", "pv", "lengths"], vec![], [past(), vec![lengths()]].concat());
    assert!(error(&both).contains("nonpad_kv_seqlen cannot be combined with past_key"));
    let half_past = attention(24, &["q", "k", "v", "", "pk"], vec![], past());
    assert!(error(&half_past).contains("past_key and past_value must be given together"));
    let int32_lengths =
        attention(24, &["q", "k", "v", "", "", "", "lengths"], vec![], vec![typed_input("lengths", 6, &[1])]);
    assert!(error(&int32_lengths).contains("nonpad_kv_seqlen must be a 1-D int64 tensor"));
    imports_ok(&attention(
        24,
        &["q", "k", "v", "", "", "", "lengths"],
        vec![attr_int("is_causal", 1)],
        vec![lengths()],
    ));
}

fn imports_ok(bytes: &[u8]) {
    if let Err(e) = import(bytes, ImportOptions::default()) {
        panic!("must import: {e}");
    }
}

/// Opset 28: SpaceToDepth gains DepthToSpace's `mode`; SwiGLU takes A and B of one shape.
#[test]
fn opset_28_space_to_depth_mode_and_swiglu_shapes() {
    use onnx_ir::ops::{DepthSpaceConfig, SwiGluConfig};
    let space_to_depth = |opset: i64| {
        let n = node("SpaceToDepth", &["x"], &["y"], vec![attr_int("blocksize", 2), attr_string("mode", "CRD")]);
        model(opset, vec![n], vec![input("x", &[1, 1, 4, 4])], vec![])
    };
    let (op, ty) = only_op(&space_to_depth(28));
    assert_eq!(op, Op::DepthSpace(DepthSpaceConfig { block: 2, to_space: false, crd: true }));
    assert_eq!(dims(&ty), [Some(1), Some(4), Some(2), Some(2)]);
    let refused = import(&space_to_depth(27), ImportOptions::default()).expect_err("mode is unread before 28");
    assert!(refused.to_string().contains("attribute `mode` is not supported (opset 27)"), "{refused}");
    let swiglu = |b: &[i64]| {
        let n = node("SwiGLU", &["a", "b"], &["y"], vec![attr_float("alpha", 1.5)]);
        model(28, vec![n], vec![input("a", &[2, 3]), input("b", b)], vec![])
    };
    let (op, ty) = only_op(&swiglu(&[2, 3]));
    assert_eq!((op, dims(&ty)), (Op::SwiGlu(SwiGluConfig { alpha: 1.5 }), vec![Some(2), Some(3)]));
    let refused = import(&swiglu(&[1, 3]), ImportOptions::default()).expect_err("no broadcasting");
    assert!(refused.to_string().contains("SwiGLU does not broadcast"), "{refused}");
}
