//! String-valued attributes are parsed into enums at import: a value outside the spelled ones is
//! an error naming node, op, attribute and value, never a string handed to the code generator.

use onnx_ir::ops::recurrent::Activation;
use onnx_ir::ops::resize::{AspectPolicy, CoordinateMode, GridPadding, Interpolation, NearestMode};
use onnx_ir::ops::{DepthSpaceConfig, PadMode, Reduction, ScatterConfig, ScatterReduction};
use onnx_ir::proto::*;
use onnx_ir::{import, ImportOptions, Op};

mod common;
use common::*;

/// One node of `op` over the graph inputs and initializers of [`case`], with `attrs`.
struct Case {
    op: &'static str,
    opset: i64,
    inputs: &'static [&'static str],
    attrs: Vec<AttributeProto>,
}

/// The graph inputs and initializers every case draws from by name.
fn operands() -> (Vec<ValueInfoProto>, Vec<TensorProto>) {
    let int_input = |name: &str, dims: &[i64]| {
        let mut v = input(name, dims);
        if let Some(type_proto::Value::TensorType(t)) = v.r#type.as_mut().and_then(|t| t.value.as_mut()) {
            t.elem_type = Some(7);
        }
        v
    };
    let inputs = vec![input("x", &[1, 4, 4, 4]), input("grid", &[1, 2, 2, 2]), int_input("i", &[2, 2])];
    let inits = vec![
        floats_init("scales", &[4], &[1.0, 1.0, 2.0, 2.0]),
        floats_init("w", &[4, 4, 1, 1], &[0.5; 16]),
        floats_init("seq", &[1, 1, 2], &[1.0, 2.0]),
        floats_init("lstm_w", &[1, 4, 2], &[0.1; 8]),
        floats_init("lstm_r", &[1, 4, 1], &[0.1; 4]),
        floats_init("m", &[2, 3], &[0.0; 6]),
        ints_init("target", &[0, 1]),
        ints_init("pads", &[0, 0, 0, 0, 0, 0, 1, 1]),
        floats_init("upd", &[1, 1], &[1.0]),
        ints_init("idx", &[0]),
    ];
    (inputs, inits)
}

fn import_case(case: Case) -> onnx_ir::Result<Op> {
    let (inputs, inits) = operands();
    let nodes = vec![node(case.op, case.inputs, &["y"], case.attrs)];
    let graph = import(&model(case.opset, nodes, inputs, inits), ImportOptions::default())?;
    Ok(graph.nodes.last().expect("a node").op.clone())
}

fn resize(attrs: Vec<AttributeProto>) -> Case {
    Case { op: "Resize", opset: 13, inputs: &["x", "", "scales"], attrs }
}

fn grid_sample(attrs: Vec<AttributeProto>) -> Case {
    Case { op: "GridSample", opset: 16, inputs: &["x", "grid"], attrs }
}

fn lstm(attrs: Vec<AttributeProto>) -> Case {
    Case { op: "LSTM", opset: 14, inputs: &["seq", "lstm_w", "lstm_r"], attrs }
}

#[test]
fn an_unknown_value_names_node_attribute_and_value() {
    let with =
        |op, opset, inputs, attr: &str, value: &str| Case { op, opset, inputs, attrs: vec![attr_string(attr, value)] };
    let cases = [
        (
            resize(vec![attr_string("coordinate_transformation_mode", "half pixel")]),
            "coordinate_transformation_mode",
            "half pixel",
        ),
        (resize(vec![attr_string("coordinate_transformation_mode", "")]), "coordinate_transformation_mode", ""),
        (resize(vec![attr_string("mode", "area")]), "mode", "area"),
        (resize(vec![attr_string("nearest_mode", "round")]), "nearest_mode", "round"),
        (resize(vec![attr_string("keep_aspect_ratio_policy", "fit")]), "keep_aspect_ratio_policy", "fit"),
        (grid_sample(vec![attr_string("mode", "trilinear")]), "mode", "trilinear"),
        (grid_sample(vec![attr_string("padding_mode", "wrap")]), "padding_mode", "wrap"),
        (with("Conv", 11, &["x", "w"], "auto_pad", "SAME"), "auto_pad", "SAME"),
        (with("ConvTranspose", 11, &["x", "w"], "auto_pad", "same_upper"), "auto_pad", "same_upper"),
        (
            Case {
                op: "MaxPool",
                opset: 12,
                inputs: &["x"],
                attrs: vec![attr_ints("kernel_shape", &[2, 2]), attr_string("auto_pad", "FULL")],
            },
            "auto_pad",
            "FULL",
        ),
        (with("Gelu", 20, &["x"], "approximate", "erf"), "approximate", "erf"),
        (with("Pad", 11, &["x", "pads"], "mode", "circular"), "mode", "circular"),
        (with("ScatterElements", 18, &["i", "i", "i"], "reduction", "sum"), "reduction", "sum"),
        (
            Case {
                op: "DepthToSpace",
                opset: 13,
                inputs: &["x"],
                attrs: vec![attr_int("blocksize", 2), attr_string("mode", "crd")],
            },
            "mode",
            "crd",
        ),
        (with("NegativeLogLikelihoodLoss", 13, &["m", "target"], "reduction", "avg"), "reduction", "avg"),
        (with("BitShift", 11, &["i", "i"], "direction", "UP"), "direction", "UP"),
        (lstm(vec![attr_string("direction", "both")]), "direction", "both"),
        (lstm(vec![attr_strings("activations", &["Sigmoid", "tanh", "Tanh"])]), "activations", "tanh"),
    ];
    for (case, attr, value) in cases {
        let op = case.op;
        let err = import_case(case).expect_err(op).to_string();
        let expected = format!("node `{op}_node` ({op}): attribute `{attr}` has unknown value `{value}` (expected `");
        assert!(err.starts_with(&expected), "{op}: {err}");
    }
}

#[test]
fn the_error_lists_every_accepted_spelling() {
    let err = import_case(resize(vec![attr_string("coordinate_transformation_mode", "half pixel")])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node `Resize_node` (Resize): attribute `coordinate_transformation_mode` has unknown value `half pixel` \
         (expected `half_pixel`, `half_pixel_symmetric`, `pytorch_half_pixel`, `align_corners`, `asymmetric`, \
         `tf_crop_and_resize`)"
    );
}

#[test]
fn resize_modes_are_enums_with_onnx_defaults() {
    let Op::Resize(c) = import_case(resize(vec![])).unwrap() else { panic!("not a Resize") };
    assert_eq!(
        (c.mode, c.nearest_mode, c.coordinate, c.policy),
        (Interpolation::Nearest, NearestMode::RoundPreferFloor, CoordinateMode::HalfPixel, AspectPolicy::Stretch)
    );
    let Op::Resize(c) = import_case(resize(vec![
        attr_string("mode", "cubic"),
        attr_string("nearest_mode", "ceil"),
        attr_string("coordinate_transformation_mode", "tf_crop_and_resize"),
        attr_string("keep_aspect_ratio_policy", "not_smaller"),
    ]))
    .unwrap() else {
        panic!("not a Resize")
    };
    assert_eq!(
        (c.mode, c.nearest_mode, c.coordinate, c.policy),
        (Interpolation::Cubic, NearestMode::Ceil, CoordinateMode::TfCropAndResize, AspectPolicy::NotSmaller)
    );
    // Upsample-7 (and Upsample-1 in capitals) means linear by `bilinear`; it rounds down, asymmetric.
    let upsample =
        Case { op: "Upsample", opset: 7, inputs: &["x"], attrs: vec![attr_string("mode", "BILINEAR"), scales()] };
    let Op::Resize(c) = import_case(upsample).unwrap() else { panic!("not a Resize") };
    assert_eq!(
        (c.mode, c.nearest_mode, c.coordinate),
        (Interpolation::Linear, NearestMode::Floor, CoordinateMode::Asymmetric)
    );
}

fn scales() -> AttributeProto {
    AttributeProto {
        name: Some("scales".into()),
        r#type: Some(attribute_type::FLOATS),
        floats: vec![1.0, 1.0, 2.0, 2.0],
        ..Default::default()
    }
}

#[test]
fn grid_sample_modes_in_both_spellings() {
    let attrs = vec![attr_string("mode", "bilinear"), attr_string("padding_mode", "reflection")];
    let Op::GridSample(c) = import_case(grid_sample(attrs)).unwrap() else { panic!("not a GridSample") };
    assert_eq!((c.mode, c.padding), (Interpolation::Linear, GridPadding::Reflection));
    let Op::GridSample(c) = import_case(grid_sample(vec![attr_string("mode", "bicubic")])).unwrap() else {
        panic!("not a GridSample")
    };
    assert_eq!(c.mode, Interpolation::Cubic);
    let err = import_case(grid_sample(vec![attr_string("mode", "trilinear")])).unwrap_err();
    assert!(err.to_string().contains("unknown value `trilinear`"), "{err}");
}

#[test]
fn recurrent_activations_take_their_alpha_and_beta_in_order() {
    let attrs = vec![
        attr_strings("activations", &["HardSigmoid", "LeakyRelu", "Tanh"]),
        AttributeProto {
            name: Some("activation_alpha".into()),
            r#type: Some(attribute_type::FLOATS),
            floats: vec![0.25, 0.5],
            ..Default::default()
        },
    ];
    let Op::Recurrent(c) = import_case(lstm(attrs)).unwrap() else { panic!("not an LSTM") };
    assert_eq!(
        c.activations,
        vec![(Activation::HardSigmoid, 0.25, 0.5), (Activation::LeakyRelu, 0.5, 0.0), (Activation::Tanh, 0.0, 0.0)]
    );
}

#[test]
fn other_string_attributes_parse_to_their_enums() {
    let with =
        |op, opset, inputs, attr: &str, value: &str| Case { op, opset, inputs, attrs: vec![attr_string(attr, value)] };
    let op = import_case(with("Pad", 11, &["x", "pads"], "mode", "edge")).unwrap();
    assert!(matches!(op, Op::Pad(ref c) if c.mode == PadMode::Edge), "{op:?}");
    let err = import_case(with("Pad", 11, &["x", "pads"], "mode", "wrap")).unwrap_err();
    assert!(err.to_string().ends_with("pad mode `wrap` needs opset 19, the model has opset 11"), "{err}");
    let op = import_case(with("Pad", 19, &["x", "pads"], "mode", "wrap")).unwrap();
    assert!(matches!(op, Op::Pad(ref c) if c.mode == PadMode::Wrap), "{op:?}");
    let op = import_case(with("ScatterElements", 18, &["i", "i", "i"], "reduction", "max")).unwrap();
    assert!(matches!(op, Op::Scatter(ScatterConfig { reduction: ScatterReduction::Max, .. })), "{op:?}");
    let op = import_case(with("NegativeLogLikelihoodLoss", 13, &["m", "target"], "reduction", "sum")).unwrap();
    assert!(matches!(op, Op::Loss(ref c) if c.reduction == Reduction::Sum), "{op:?}");
    let op = import_case(with("Gelu", 20, &["x"], "approximate", "tanh")).unwrap();
    assert!(matches!(op, Op::Unary(ref c) if format!("{c:?}").contains("tanh: true")), "{op:?}");
    let attrs = vec![attr_int("blocksize", 2), attr_string("mode", "CRD")];
    let op = import_case(Case { op: "DepthToSpace", opset: 13, inputs: &["x"], attrs }).unwrap();
    assert!(matches!(op, Op::DepthSpace(DepthSpaceConfig { crd: true, .. })), "{op:?}");
}
