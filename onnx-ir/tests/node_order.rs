//! Nodes listed out of topological order (ONNX forbids it, ONNX Runtime accepts it) are sorted
//! at import; a cycle is an error naming its nodes.

use onnx_ir::proto::*;
use onnx_ir::{import, ImportOptions};
use prost::Message;

mod common;
use common::*;

/// A model whose graph lists `nodes` as given and outputs `output`.
fn model_listing(nodes: Vec<NodeProto>, output: &str, inputs: Vec<ValueInfoProto>) -> Vec<u8> {
    let mut proto = ModelProto::decode(&model(13, nodes, inputs, vec![])[..]).expect("decodes");
    if let Some(graph) = proto.graph.as_mut() {
        graph.output = vec![ValueInfoProto { name: Some(output.into()), ..Default::default() }];
    }
    proto.encode_to_vec()
}

fn ir(bytes: &[u8]) -> String {
    import(bytes, ImportOptions { simplify: false, ..Default::default() }).expect("imports").to_string()
}

fn chain() -> Vec<NodeProto> {
    vec![
        node("Relu", &["x"], &["a"], vec![]),
        node("Neg", &["a"], &["b"], vec![]),
        node("Add", &["a", "b"], &["c"], vec![]),
        node("Sigmoid", &["c"], &["y"], vec![]),
    ]
}

#[test]
fn nodes_in_reverse_order_give_the_sorted_graph() {
    let sorted = model_listing(chain(), "y", vec![input("x", &[2, 3])]);
    let mut reversed = chain();
    reversed.reverse();
    let reversed = model_listing(reversed, "y", vec![input("x", &[2, 3])]);
    assert_eq!(ir(&reversed), ir(&sorted));
}

#[test]
fn unnamed_nodes_keep_the_names_of_their_place_in_the_file() {
    let mut nodes = chain();
    nodes.iter_mut().for_each(|n| n.name = None);
    nodes.swap(0, 1);
    let graph = import(&model_listing(nodes, "y", vec![input("x", &[2])]), ImportOptions::default()).expect("imports");
    let names: Vec<&str> = graph.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["Relu_1", "Neg_0", "Add_2", "Sigmoid_3"]);
}

/// An If running `branch_nodes` in its then branch and passing `outer` on in its else branch.
fn if_reading(outer: &str, branch_nodes: Vec<NodeProto>) -> NodeProto {
    let branch = |nodes: Vec<NodeProto>| GraphProto {
        node: nodes,
        output: vec![ValueInfoProto { name: Some("out".into()), ..Default::default() }],
        ..Default::default()
    };
    let else_branch = branch(vec![node("Identity", &[outer], &["out"], vec![])]);
    let attrs = vec![attr_graph("then_branch", branch(branch_nodes)), attr_graph("else_branch", else_branch)];
    node("If", &["c"], &["y"], attrs)
}

#[test]
fn values_a_subgraph_reads_order_the_node_holding_it() {
    // The If reads `t` only inside its branches; Tanh, which makes `t`, is listed after it.
    // The branch lists its own nodes out of order too.
    let branch_nodes = vec![node("Neg", &["inner"], &["out"], vec![]), node("Relu", &["t"], &["inner"], vec![])];
    let nodes = vec![if_reading("t", branch_nodes), node("Tanh", &["x"], &["t"], vec![])];
    let graph = import(&model_listing(nodes, "y", vec![input("x", &[2]), bool_input("c")]), ImportOptions::default())
        .expect("imports");
    let ops: Vec<&str> = graph.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(ops, ["Tanh_node", "If_node"]);
    let onnx_ir::Op::If(config) = &graph.nodes[1].op else { panic!("expected If") };
    let branch: Vec<&str> = config.then_branch.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(branch, ["Relu_node", "Neg_node"]);
}

#[test]
fn a_cycle_is_an_error_naming_its_nodes() {
    let nodes = vec![
        node("Relu", &["x"], &["a"], vec![]),
        node("Add", &["a", "c"], &["b"], vec![]),
        node("Neg", &["b"], &["c"], vec![]),
        node("Sigmoid", &["c"], &["y"], vec![]),
    ];
    let error = import(&model_listing(nodes, "y", vec![input("x", &[2])]), ImportOptions::default())
        .expect_err("a cycle cannot be ordered");
    assert_eq!(
        error.to_string(),
        "node `Add_node` (Add): the nodes form a cycle: `Add_node` -> `Neg_node` -> `Add_node`"
    );
}

#[test]
fn a_node_reading_its_own_output_is_a_cycle() {
    let nodes = vec![node("Add", &["x", "y"], &["y"], vec![])];
    let error = import(&model_listing(nodes, "y", vec![input("x", &[2])]), ImportOptions::default())
        .expect_err("a cycle cannot be ordered");
    assert!(error.to_string().contains("the nodes form a cycle: `Add_node` -> `Add_node`"), "{error}");
}
