//! An attribute no parser reads is an import error naming node, op and attribute (issue 13:
//! ignored attributes gave wrong answers); attributes whose value cannot change the result are
//! accepted.

use onnx_ir::ops::ReshapeRuntimeConfig;
use onnx_ir::proto::*;
use onnx_ir::{import, import_with_custom_ops, ImportOptions};

mod common;
use common::*;

fn import_error(bytes: &[u8]) -> String {
    import(bytes, ImportOptions::default()).expect_err("must be refused").to_string()
}

fn imports(bytes: &[u8]) {
    if let Err(e) = import(bytes, ImportOptions::default()) {
        panic!("must import: {e}");
    }
}

#[test]
fn space_to_depth_has_no_mode() {
    // DepthToSpace's CRD order used to apply silently to SpaceToDepth, which has only one order.
    let n = node("SpaceToDepth", &["x"], &["y"], vec![attr_int("blocksize", 2), attr_string("mode", "CRD")]);
    let bytes = model(13, vec![n], vec![input("x", &[1, 1, 4, 4])], vec![]);
    assert_eq!(
        import_error(&bytes),
        "node `SpaceToDepth_node` (SpaceToDepth): attribute `mode` is not supported (opset 13)"
    );
    let n = node("DepthToSpace", &["x"], &["y"], vec![attr_int("blocksize", 2), attr_string("mode", "CRD")]);
    imports(&model(13, vec![n], vec![input("x", &[1, 4, 2, 2])], vec![]));
}

#[test]
fn every_unread_attribute_is_named() {
    let attention = node(
        "Attention",
        &["q", "k", "v"],
        &["y"],
        vec![attr_int("left_window_size", 2), attr_int("is_causal", 1), attr_int("right_window_size", 0)],
    );
    let qkv = vec![input("q", &[1, 2, 4, 8]), input("k", &[1, 2, 4, 8]), input("v", &[1, 2, 4, 8])];
    assert_eq!(
        import_error(&model(23, vec![attention], qkv, vec![])),
        "node `Attention_node` (Attention): attributes `left_window_size`, `right_window_size` are not supported (opset 23)"
    );
}

#[test]
fn attributes_of_another_opset_are_refused() {
    // Reshape's `shape` moved to an input at opset 5: the attribute would be ignored after.
    let n = node("Reshape", &["x", "s"], &["y"], vec![attr_ints("shape", &[6])]);
    let bytes = model(14, vec![n], vec![input("x", &[2, 3])], vec![ints_init("s", &[3, 2])]);
    assert!(import_error(&bytes).contains("attribute `shape` is not supported (opset 14)"));
}

#[test]
fn a_precision_the_generated_code_does_not_compute_in_is_refused() {
    let layer_norm = |stash_type: i64| {
        let n = node("LayerNormalization", &["x", "g"], &["y"], vec![attr_int("stash_type", stash_type)]);
        model(17, vec![n], vec![input("x", &[2, 4])], vec![floats_init("g", &[4], &[1.0; 4])])
    };
    imports(&layer_norm(1));
    assert_eq!(
        import_error(&layer_norm(11)),
        "node `LayerNormalization_node` (LayerNormalization): attribute `stash_type` = f64 is not supported, only f32"
    );
}

#[test]
fn pads_beside_auto_pad_must_agree_with_it() {
    let conv = |pads: &[i64]| {
        let attrs = vec![attr_string("auto_pad", "SAME_UPPER"), attr_ints("pads", pads)];
        let w = floats_init("w", &[1, 1, 3, 3], &[1.0; 9]);
        model(11, vec![node("Conv", &["x", "w"], &["y"], attrs)], vec![input("x", &[1, 1, 5, 5])], vec![w])
    };
    imports(&conv(&[1, 1, 1, 1]));
    assert!(import_error(&conv(&[0, 0, 2, 2])).contains("pads [0, 0, 2, 2] contradict auto_pad SAME_UPPER"));
}

#[test]
fn reshape_keeps_allowzero_for_a_run_time_shape() {
    // It used to be dropped: a 0 in the shape then copied the input's dim.
    let n = node("Reshape", &["x", "s"], &["y"], vec![attr_int("allowzero", 1)]);
    let mut shape = input("s", &[2]);
    if let Some(type_proto::Value::TensorType(t)) = shape.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(7);
    }
    let graph = import(&model(14, vec![n], vec![input("x", &[2, 3]), shape], vec![]), ImportOptions::default())
        .expect("imports");
    assert_eq!(graph.nodes[0].op, onnx_ir::Op::ReshapeRuntime(ReshapeRuntimeConfig { rank: 2, allowzero: true }));
}

#[test]
fn attributes_that_cannot_change_the_result_are_accepted() {
    let x = || vec![input("x", &[2, 3])];
    // Opset 1's in-place hint.
    imports(&model(1, vec![node("Relu", &["x"], &["y"], vec![attr_ints("consumed_inputs", &[0])])], x(), vec![]));
    // Dropout is the identity in inference, whatever its ratio or seed.
    let dropout = node("Dropout", &["x"], &["y"], vec![attr_float("ratio", 0.3), attr_int("seed", 7)]);
    imports(&model(13, vec![dropout], x(), vec![]));
    // TopK's `sorted=0` leaves the order open; sorted output is one of the allowed orders.
    let topk = node("TopK", &["x", "k"], &["y", "i"], vec![attr_int("sorted", 0)]);
    imports(&model(11, vec![topk], x(), vec![ints_init("k", &[2])]));
    // BatchNormalization's momentum only updates training statistics.
    let stats = ["s", "b", "m", "v"].map(|name| floats_init(name, &[3], &[1.0; 3]));
    let bn = node("BatchNormalization", &["x", "s", "b", "m", "v"], &["y"], vec![attr_float("momentum", 0.8)]);
    imports(&model(15, vec![bn], x(), stats.to_vec()));
}

#[test]
fn subgraph_attributes_count_as_read() {
    let branch = |op: &str| GraphProto {
        node: vec![node(op, &["x"], &["out"], vec![])],
        output: vec![ValueInfoProto { name: Some("out".into()), ..Default::default() }],
        ..Default::default()
    };
    let if_node = |extra: Vec<AttributeProto>| {
        let mut attrs = vec![attr_graph("then_branch", branch("Relu")), attr_graph("else_branch", branch("Neg"))];
        attrs.extend(extra);
        model(13, vec![node("If", &["c"], &["y"], attrs)], vec![input("x", &[2]), bool_input("c")], vec![])
    };
    imports(&if_node(vec![]));
    assert!(import_error(&if_node(vec![attr_int("unrolled", 1)])).contains("attribute `unrolled` is not supported"));
}

#[test]
fn hooks_receive_every_attribute() {
    let n = NodeProto {
        domain: Some("com.example".into()),
        ..node("Fancy", &["x"], &["y"], vec![attr_int("anything", 3), attr_string("mode", "wild")])
    };
    let custom = [("com.example".to_string(), "Fancy".to_string())];
    let mut proto = <ModelProto as prost::Message>::decode(&model(13, vec![n], vec![input("x", &[2])], vec![])[..])
        .expect("decodes");
    proto.opset_import.push(OperatorSetIdProto { domain: Some("com.example".into()), version: Some(1) });
    let bytes = prost::Message::encode_to_vec(&proto);
    let graph = import_with_custom_ops(&bytes, ImportOptions::default(), &custom).expect("imports");
    let onnx_ir::Op::Custom(op) = &graph.nodes[0].op else { panic!("expected a custom op") };
    assert_eq!(op.attributes.len(), 2);
}
