//! `auto_pad = SAME_UPPER / SAME_LOWER` (issue 37): pads fixed at import over static spatial
//! dims, computed at run time over symbolic ones (PaddleOCR's detector and recogniser have
//! `Conv`s with SAME_UPPER on `[DynamicDimension.0, C, ?, ?]`); ConvTranspose's SAME pads do
//! not depend on the input's size and stay fixed.

use onnx_ir::ops::{ConvTransposeConfig, Pads};
use onnx_ir::{import, Dim, ImportOptions, Op};

mod common;
use common::*;

/// A one-node model of `op` over a float input of `dims` (negative: symbolic), with a
/// `[1, 1, k, k]` weight for the convolutions, imported.
fn imported(op: &str, dims: &[i64], attrs: Vec<onnx_ir::proto::AttributeProto>) -> onnx_ir::Result<onnx_ir::Graph> {
    let weighted = op.starts_with("Conv");
    let inputs: &[&str] = if weighted { &["x", "w"] } else { &["x"] };
    let inits = if weighted { vec![floats_init("w", &[1, 1, 3, 3], &[1.0; 9])] } else { vec![] };
    import(&model(19, vec![node(op, inputs, &["y"], attrs)], vec![input("x", dims)], inits), ImportOptions::default())
}

fn same(mode: &str, strides: &[i64]) -> Vec<onnx_ir::proto::AttributeProto> {
    vec![attr_string("auto_pad", mode), attr_ints("strides", strides)]
}

fn window_pads(graph: &onnx_ir::Graph) -> Pads {
    match &graph.nodes[0].op {
        Op::Conv(c) => c.window.pads.clone(),
        Op::Pool(c) => c.window.pads.clone(),
        other => panic!("unexpected op {other:?}"),
    }
}

fn output_dims(graph: &onnx_ir::Graph) -> Vec<Dim> {
    graph.values[graph.outputs[0]].ty.shape.clone()
}

#[test]
fn static_spatial_dims_are_padded_at_import() {
    // 7 -> 4 outputs at stride 2 need 2 (1 each side), 8 -> 4 need 1: at the end for SAME_UPPER.
    let graph = imported("Conv", &[1, 1, 7, 8], same("SAME_UPPER", &[2, 2])).unwrap();
    assert_eq!(window_pads(&graph), Pads::Fixed(vec![(1, 1), (0, 1)]));
    let graph = imported("Conv", &[1, 1, 7, 8], same("SAME_LOWER", &[2, 2])).unwrap();
    assert_eq!(window_pads(&graph), Pads::Fixed(vec![(1, 1), (1, 0)]));
}

#[test]
fn symbolic_spatial_dims_are_padded_at_run_time() {
    for (op, mode, upper) in [("Conv", "SAME_UPPER", true), ("Conv", "SAME_LOWER", false)] {
        let graph = imported(op, &[1, 1, -1, -1], same(mode, &[2, 2])).unwrap();
        assert_eq!(window_pads(&graph), Pads::Same { upper });
        assert_eq!(output_dims(&graph)[2..], [Dim::Unknown, Dim::Unknown]);
    }
    let mut attrs = same("SAME_UPPER", &[2, 2]);
    attrs.push(attr_ints("kernel_shape", &[3, 3]));
    for op in ["MaxPool", "AveragePool", "LpPool"] {
        let graph = imported(op, &[-1, 3, -1, -1], attrs.clone()).unwrap();
        assert_eq!(window_pads(&graph), Pads::Same { upper: true }, "{op}");
    }
}

#[test]
fn a_static_axis_beside_a_symbolic_one_keeps_its_output_length() {
    // SAME gives ceil(size / stride) outputs: 7 at stride 2 is 4 whatever the other axis is.
    let graph = imported("Conv", &[1, 1, 7, -1], same("SAME_UPPER", &[2, 2])).unwrap();
    assert_eq!(window_pads(&graph), Pads::Same { upper: true });
    assert_eq!(output_dims(&graph)[2..], [Dim::Static(4), Dim::Unknown]);
}

#[test]
fn pads_beside_same_over_symbolic_dims_are_refused() {
    let mut attrs = same("SAME_UPPER", &[1, 1]);
    attrs.push(attr_ints("pads", &[1, 1, 1, 1]));
    let error = imported("Conv", &[1, 1, -1, -1], attrs).unwrap_err().to_string();
    assert!(error.contains("pads [1, 1, 1, 1] beside auto_pad SAME_UPPER over the symbolic spatial dims"), "{error}");
}

#[test]
fn conv_transpose_same_pads_do_not_depend_on_the_size() {
    // Output `size * stride`; the full length is `stride * (size - 1) + span`: they differ by
    // `span - stride` = 3 - 2 = 1, the odd one at the end (SAME_UPPER) or the beginning.
    for (mode, pads) in [("SAME_UPPER", (0, 1)), ("SAME_LOWER", (1, 0))] {
        for dims in [[1, 1, -1, -1], [1, 1, 5, 6]] {
            let graph = imported("ConvTranspose", &dims, same(mode, &[2, 2])).unwrap();
            let Op::ConvTranspose(ConvTransposeConfig { window, output_padding, .. }) = &graph.nodes[0].op else {
                panic!("not a ConvTranspose")
            };
            assert_eq!(window.pads, Pads::Fixed(vec![pads; 2]), "{mode} on {dims:?}");
            assert_eq!(output_padding, &[0, 0]);
        }
    }
    // A span shorter than the stride (3 < 4) is made up by output padding at the end.
    let graph = imported("ConvTranspose", &[1, 1, -1, -1], same("SAME_UPPER", &[4, 4])).unwrap();
    let Op::ConvTranspose(c) = &graph.nodes[0].op else { panic!("not a ConvTranspose") };
    assert_eq!((c.window.pads.clone(), c.output_padding.clone()), (Pads::Fixed(vec![(0, 0); 2]), vec![1, 1]));
}
