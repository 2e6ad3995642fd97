//! Model-local functions are inlined at import: names bound and made unique, attribute
//! references resolved, nested calls expanded, opset imports checked; sparse initializers are
//! made dense.

use onnx_ir::ops::UnaryOp;
use onnx_ir::proto::*;
use onnx_ir::{import, import_with_custom_ops, Error, ImportOptions, Op};
use prost::Message;

mod common;
use common::*;

const DOMAIN: &str = "local";

fn opset(domain: &str, version: i64) -> OperatorSetIdProto {
    OperatorSetIdProto { domain: Some(domain.into()), version: Some(version) }
}

fn function(name: &str, inputs: &[&str], outputs: &[&str], nodes: Vec<NodeProto>) -> FunctionProto {
    FunctionProto {
        name: Some(name.into()),
        domain: Some(DOMAIN.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        node: nodes,
        opset_import: vec![opset("", 17)],
        ..Default::default()
    }
}

fn call(name: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    let mut node = node(name, inputs, outputs, attrs);
    node.domain = Some(DOMAIN.into());
    node.name = Some(format!("call_{}", outputs[0]));
    node
}

/// An attribute of a body node that takes the function's attribute `referred`.
fn reference(name: &str, referred: &str, code: i32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        ref_attr_name: Some(referred.into()),
        r#type: Some(code),
        ..Default::default()
    }
}

/// A model at opset 17 whose graph is `nodes` over input `x` [2, 3], output the last node's.
fn model_with(nodes: Vec<NodeProto>, functions: Vec<FunctionProto>, outputs: &[&str]) -> Vec<u8> {
    let graph = GraphProto {
        node: nodes,
        input: vec![input("x", &[2, 3])],
        output: outputs.iter().map(|o| ValueInfoProto { name: Some(o.to_string()), ..Default::default() }).collect(),
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![opset("", 17), opset(DOMAIN, 1)],
        graph: Some(graph),
        functions,
        ..Default::default()
    }
    .encode_to_vec()
}

fn ir(bytes: &[u8]) -> String {
    import(bytes, ImportOptions { simplify: false, ..Default::default() }).expect("imports").to_string()
}

fn relu_of_sigmoid() -> FunctionProto {
    function(
        "ReluSigmoid",
        &["a"],
        &["b"],
        vec![node("Sigmoid", &["a"], &["t"], vec![]), node("Relu", &["t"], &["b"], vec![])],
    )
}

#[test]
fn a_call_becomes_its_body_with_the_call_s_names() {
    let bytes = model_with(vec![call("ReluSigmoid", &["x"], &["y"], vec![])], vec![relu_of_sigmoid()], &["y"]);
    let text = ir(&bytes);
    assert!(text.contains("call_y/t = Unary(Sigmoid) [call_y/Sigmoid_node](x)"), "{text}");
    assert!(text.contains("y = Unary(Relu) [call_y/Relu_node](call_y/t)"), "{text}");
}

#[test]
fn two_calls_get_distinct_internal_names() {
    let nodes = vec![call("ReluSigmoid", &["x"], &["h"], vec![]), call("ReluSigmoid", &["h"], &["y"], vec![])];
    let graph = import(
        &model_with(nodes, vec![relu_of_sigmoid()], &["y"]),
        ImportOptions { simplify: false, ..Default::default() },
    )
    .expect("imports");
    let names: Vec<&str> = graph.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["call_h/Sigmoid_node", "call_h/Relu_node", "call_y/Sigmoid_node", "call_y/Relu_node"]);
}

fn leaky(default: Option<f32>) -> FunctionProto {
    let mut f = function(
        "Leaky",
        &["a"],
        &["b"],
        vec![node("LeakyRelu", &["a"], &["b"], vec![reference("alpha", "slope", attribute_type::FLOAT)])],
    );
    match default {
        Some(v) => f.attribute_proto.push(attr_float("slope", v)),
        None => f.attribute.push("slope".into()),
    }
    f
}

fn leaky_alpha(function: FunctionProto, attrs: Vec<AttributeProto>) -> f64 {
    let bytes = model_with(vec![call("Leaky", &["x"], &["y"], attrs)], vec![function], &["y"]);
    let graph = import(&bytes, ImportOptions::default()).expect("imports");
    match graph.nodes[..] {
        [ref n] => match n.op {
            Op::Unary(UnaryOp::LeakyRelu { alpha }) => alpha,
            ref op => panic!("not a LeakyRelu: {op:?}"),
        },
        _ => panic!("one node expected: {graph}"),
    }
}

#[test]
fn attribute_references_take_the_call_s_value_else_the_default_else_the_op_s() {
    assert_eq!(leaky_alpha(leaky(Some(0.5)), vec![attr_float("slope", 0.25)]), 0.25);
    assert_eq!(leaky_alpha(leaky(Some(0.5)), vec![]), 0.5);
    assert_eq!(leaky_alpha(leaky(None), vec![]), 0.01f32 as f64);
}

#[test]
fn nested_calls_are_inlined_with_their_attributes() {
    // Outer(a) = Leaky(ReluSigmoid(a)) with Outer's `s` handed on to Leaky's `slope`.
    let mut inner_call = call("Leaky", &["r"], &["o"], vec![reference("slope", "s", attribute_type::FLOAT)]);
    inner_call.name = None;
    let mut outer = function("Outer", &["a"], &["o"], vec![call("ReluSigmoid", &["a"], &["r"], vec![]), inner_call]);
    outer.attribute.push("s".into());
    let bytes = model_with(
        vec![call("Outer", &["x"], &["y"], vec![attr_float("s", 0.125)])],
        vec![leaky(None), relu_of_sigmoid(), outer],
        &["y"],
    );
    let text = ir(&bytes);
    assert!(text.contains("call_y/call_r/t = Unary(Sigmoid) [call_y/call_r/Sigmoid_node](x)"), "{text}");
    assert!(text.contains("call_y/r = Unary(Relu) [call_y/call_r/Relu_node](call_y/call_r/t)"), "{text}");
    // The unnamed inner call is named after its op and position in Outer's body.
    assert!(text.contains("y = Unary(LeakyRelu { alpha: 0.125 }) [call_y/Leaky_1/LeakyRelu_node](call_y/r)"), "{text}");
}

#[test]
fn a_function_calling_itself_is_an_error() {
    let looping = function("Loop", &["a"], &["b"], vec![call("Loop", &["a"], &["b"], vec![])]);
    let err = import(
        &model_with(vec![call("Loop", &["x"], &["y"], vec![])], vec![looping], &["y"]),
        ImportOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Function { .. }), "{err:?}");
    assert!(err.to_string().contains("function `local::Loop`: calls itself"), "{err}");
}

#[test]
fn calls_that_multiply_are_bounded() {
    // f_k calls f_{k+1} four times: 4^12 Relu nodes in the end, refused long before.
    let mut functions = vec![function("F12", &["a"], &["b"], vec![node("Relu", &["a"], &["b"], vec![])])];
    for k in (0..12).rev() {
        let calls = (0..4)
            .map(|i| {
                let (from, to) = (if i == 0 { "a".to_string() } else { format!("v{i}") }, format!("v{}", i + 1));
                let to = if i == 3 { "b".to_string() } else { to };
                call(&format!("F{}", k + 1), &[&from], &[&to], vec![])
            })
            .collect();
        functions.push(function(&format!("F{k}"), &["a"], &["b"], calls));
    }
    let started = std::time::Instant::now();
    let err =
        import(&model_with(vec![call("F0", &["x"], &["y"], vec![])], functions, &["y"]), ImportOptions::default())
            .unwrap_err();
    assert!(err.to_string().contains("inlining would make more than"), "{err}");
    assert!(started.elapsed().as_secs() < 10, "took {:?}", started.elapsed());
}

#[test]
fn a_function_s_opset_must_give_its_ops_the_model_s_meaning() {
    // Relu is the same op at opsets 14 and 17; Squeeze took its axes as an input from 13 on.
    let mut relu = relu_of_sigmoid();
    relu.opset_import = vec![opset("", 14)];
    let bytes = model_with(vec![call("ReluSigmoid", &["x"], &["y"], vec![])], vec![relu], &["y"]);
    assert!(import(&bytes, ImportOptions::default()).is_ok());
    let mut squeeze = function("Squeeze1", &["a"], &["b"], vec![node("Squeeze", &["a"], &["b"], vec![])]);
    squeeze.opset_import = vec![opset("", 11)];
    let bytes = model_with(vec![call("Squeeze1", &["x"], &["y"], vec![])], vec![squeeze], &["y"]);
    let err = import(&bytes, ImportOptions::default()).unwrap_err();
    assert!(err.to_string().contains("Squeeze is not the same op under both (version 11 and 13)"), "{err}");
}

#[test]
fn omitted_optional_inputs_and_outputs_of_a_call() {
    // Clip(a, lo, hi) called with `lo` only; Split's second output unused by the caller.
    let clip = function("Clamp", &["a", "lo", "hi"], &["b"], vec![node("Clip", &["a", "lo", "hi"], &["b"], vec![])]);
    let lo = TensorProto { name: Some("lo".into()), data_type: Some(1), float_data: vec![0.0], ..Default::default() };
    let mut bytes =
        ModelProto::decode(&model_with(vec![call("Clamp", &["x", "lo"], &["y"], vec![])], vec![clip], &["y"])[..])
            .expect("decodes");
    bytes.graph.as_mut().expect("graph").initializer.push(lo);
    let text = ir(&bytes.encode_to_vec());
    assert!(text.contains("[call_y/Clip_node](x, lo, <none>)"), "{text}");

    let mut halves = function(
        "Halves",
        &["a"],
        &["first", "second"],
        vec![node("Split", &["a"], &["first", "second"], vec![attr_int("axis", 1), attr_int("num_outputs", 2)])],
    );
    halves.opset_import = vec![opset("", 18)];
    let mut only_first = call("Halves", &["x"], &["y"], vec![]);
    only_first.output.push(String::new());
    let bytes = ModelProto {
        opset_import: vec![opset("", 18), opset(DOMAIN, 1)],
        ..ModelProto::decode(&model_with(vec![only_first], vec![halves], &["y"])[..]).expect("decodes")
    };
    let text = ir(&bytes.encode_to_vec());
    assert!(text.contains("y, call_y/second = Split"), "{text}");
}

#[test]
fn calls_inside_subgraphs_are_inlined() {
    let if_node = if_with("c", call("ReluSigmoid", &["x"], &["out"], vec![]), node("Tanh", &["x"], &["out"], vec![]));
    let mut model =
        ModelProto::decode(&model_with(vec![if_node], vec![relu_of_sigmoid()], &["y"])[..]).expect("decodes");
    let mut c = input("c", &[]);
    if let Some(type_proto::Value::TensorType(t)) = c.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(9);
    }
    model.graph.as_mut().expect("graph").input.push(c);
    let graph =
        import(&model.encode_to_vec(), ImportOptions { simplify: false, ..Default::default() }).expect("imports");
    let Op::If(config) = &graph.nodes[0].op else { panic!("not an If: {graph}") };
    let names: Vec<&str> = config.then_branch.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["call_out/Sigmoid_node", "call_out/Relu_node"]);
    let value = |id: usize| graph.values[id].name.as_str();
    assert_eq!(value(config.then_branch.nodes[0].outputs[0]), "call_out/t");
    assert_eq!(value(config.then_branch.outputs[0]), "out");
}

#[test]
fn a_hook_for_the_function_s_op_keeps_the_call() {
    let bytes = model_with(vec![call("ReluSigmoid", &["x"], &["y"], vec![])], vec![relu_of_sigmoid()], &["y"]);
    let hooks = [(DOMAIN.to_string(), "ReluSigmoid".to_string())];
    let graph = import_with_custom_ops(&bytes, ImportOptions::default(), &hooks).expect("imports");
    assert!(matches!(&graph.nodes[..], [n] if matches!(&n.op, Op::Custom(c) if c.op_type == "ReluSigmoid")), "{graph}");
}

fn sparse(dims: &[i64], values: &[f32], indices: &[i64], index_dims: &[i64]) -> SparseTensorProto {
    SparseTensorProto {
        values: Some(floats_init("w", &[values.len() as i64], values)),
        indices: Some(TensorProto {
            data_type: Some(7),
            dims: index_dims.to_vec(),
            int64_data: indices.to_vec(),
            ..Default::default()
        }),
        dims: dims.to_vec(),
    }
}

fn with_sparse(initializer: SparseTensorProto) -> Result<onnx_ir::Graph, Error> {
    let mut model = ModelProto::decode(
        &model(17, vec![node("Add", &["x", "w"], &["y"], vec![])], vec![input("x", &[2, 3])], vec![])[..],
    )
    .expect("decodes");
    model.graph.as_mut().expect("graph").sparse_initializer.push(initializer);
    import(&model.encode_to_vec(), ImportOptions { simplify: false, ..Default::default() })
}

#[test]
fn sparse_initializers_are_made_dense() {
    let graph = with_sparse(sparse(&[2, 3], &[1.0, 2.0], &[1, 5], &[2])).expect("imports");
    let w = graph.values.iter().find(|v| v.name == "w").and_then(|v| v.constant.as_ref()).expect("w is a constant");
    assert_eq!(w.to_f64s().expect("in memory"), vec![0.0, 1.0, 0.0, 0.0, 0.0, 2.0]);
    // The same as coordinates.
    let graph = with_sparse(sparse(&[2, 3], &[1.0, 2.0], &[0, 1, 1, 2], &[2, 2])).expect("imports");
    let w = graph.values.iter().find(|v| v.name == "w").and_then(|v| v.constant.as_ref()).expect("w is a constant");
    assert_eq!(w.to_f64s().expect("in memory"), vec![0.0, 1.0, 0.0, 0.0, 0.0, 2.0]);
}

#[test]
fn sparse_initializers_out_of_range_or_huge_are_errors() {
    let err = with_sparse(sparse(&[2, 3], &[1.0], &[6], &[1])).unwrap_err();
    assert!(err.to_string().contains("sparse index 6 is outside [2, 3]"), "{err}");
    let err = with_sparse(sparse(&[1 << 20, 1 << 20], &[1.0], &[0], &[1])).unwrap_err();
    assert!(err.to_string().contains("would be more than"), "{err}");
}

/// The op sequence of a model of tests/models/ (scripts/make_op_models.py), unsimplified.
fn ops_of_case(case: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/models").join(case).join("model.onnx");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let graph = import(&bytes, ImportOptions { simplify: false, ..Default::default() }).expect("imports");
    graph.nodes.iter().map(|n| format!("{} {:?}", n.name, n.op)).collect()
}

#[test]
fn the_function_models_of_the_op_suite_inline_as_expected() {
    let nested = ops_of_case("function_v21_nested");
    let alphas: Vec<&str> = nested.iter().filter_map(|op| op.split("alpha: ").nth(1)).collect();
    // Outer(s = 0.1), then Outer without `s`: each calls Leaky twice, the first with `s`.
    assert_eq!(alphas, ["0.10000000149011612 })", "0.5 })", "0.5 })", "0.5 })"], "{nested:#?}");
    let names: Vec<&str> = nested.iter().filter_map(|op| op.split(' ').next()).collect();
    // The calls are unnamed: each body is prefixed by the call's first output.
    let expected = ["h/Mul_0", "h/Leaky_1/LeakyRelu_0", "h/Leaky_2/LeakyRelu_0", "y/Mul_0", "y/Leaky_1/LeakyRelu_0"];
    assert_eq!(names[..5], expected, "{nested:#?}");
    let own_opset = ops_of_case("function_v21_own_opset");
    assert_eq!(own_opset.len(), 2, "{own_opset:#?}");
    assert!(own_opset[0].contains("Reduce") && own_opset[1].contains("Sub"), "{own_opset:#?}");
    let optional = ops_of_case("function_v21_optional");
    assert!(optional[0].contains("Clip") && optional[1].contains("Split"), "{optional:#?}");
    let in_if = ops_of_case("function_v21_in_if");
    assert!(in_if.iter().any(|op| op.contains("LeakyRelu { alpha: 0.25 }")), "{in_if:#?}");
}
