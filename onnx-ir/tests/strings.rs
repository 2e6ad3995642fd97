//! String tensors at import: the text ops, Equal and Identity take them; every other op, a
//! string constant and an unsupported attribute value are errors naming the node and reason.

use onnx_ir::ops::text::{CaseChange, TextOp};
use onnx_ir::proto::*;
use onnx_ir::{import, DType, ImportOptions, Op};

mod common;
use common::*;

const STRING: i32 = 8;

fn text_input(name: &str, dims: &[i64]) -> ValueInfoProto {
    typed_input(name, STRING, dims)
}

fn import_err(bytes: &[u8]) -> String {
    import(bytes, ImportOptions::default()).expect_err("must not import").to_string()
}

#[test]
fn text_ops_import_with_string_types() {
    let nodes = vec![
        node("StringConcat", &["a", "b"], &["ab"], vec![]),
        node("StringNormalizer", &["ab"], &["n"], vec![attr_string("case_change_action", "UPPER")]),
        node("Equal", &["n", "n"], &["same"], vec![]),
    ];
    let bytes = model(20, nodes, vec![text_input("a", &[3]), text_input("b", &[1])], vec![]);
    let graph = import(&bytes, ImportOptions::default()).expect("imports");
    let ops: Vec<&Op> = graph.nodes.iter().map(|n| &n.op).collect();
    assert!(matches!(ops[0], Op::Text(TextOp::Concat)));
    assert!(matches!(ops[1], Op::Text(TextOp::Normalize(c)) if c.case == CaseChange::Upper));
    let out = &graph.values[graph.outputs[0]].ty;
    assert_eq!((out.dtype, out.rank()), (DType::Bool, 1));
}

#[test]
fn other_ops_refuse_strings() {
    let bytes = model(20, vec![node("Add", &["a", "a"], &["y"], vec![])], vec![text_input("a", &[2])], vec![]);
    let err = import_err(&bytes);
    assert!(err.contains("Add") && err.contains("string tensors are supported only by"), "{err}");
    let cast = node("Cast", &["x"], &["y"], vec![attr_int("to", STRING as i64)]);
    let err = import_err(&model(20, vec![cast], vec![input("x", &[2])], vec![]));
    assert!(err.contains("Cast") && err.contains("string tensors"), "{err}");
}

#[test]
fn string_constants_are_refused_with_their_name() {
    let init = TensorProto {
        name: Some("words".into()),
        data_type: Some(STRING),
        dims: vec![1],
        string_data: vec![b"a".to_vec()],
        ..Default::default()
    };
    let bytes =
        model(20, vec![node("Equal", &["a", "words"], &["y"], vec![])], vec![text_input("a", &[1])], vec![init]);
    let err = import_err(&bytes);
    assert!(err.contains("words") && err.contains("not as initializers or constants"), "{err}");
}

#[test]
fn unsupported_attribute_values_are_errors() {
    let normalize = |attr| {
        model(10, vec![node("StringNormalizer", &["a"], &["y"], vec![attr])], vec![text_input("a", &[2])], vec![])
    };
    let err = import_err(&normalize(attr_string("case_change_action", "TITLE")));
    assert!(err.contains("case_change_action") && err.contains("TITLE"), "{err}");
    let err = import_err(&normalize(attr_string("locale", "tr_TR")));
    assert!(err.contains("locale") && err.contains("tr_TR"), "{err}");
    let full_match = |pattern| {
        model(
            20,
            vec![node("RegexFullMatch", &["a"], &["y"], vec![attr_string("pattern", pattern)])],
            vec![text_input("a", &[2])],
            vec![],
        )
    };
    let err = import_err(&full_match("(a"));
    assert!(err.contains("pattern") && err.contains("(a"), "{err}");
    import(&full_match(r"\w+@\w+\.com"), ImportOptions::default()).expect("a valid pattern imports");
}
