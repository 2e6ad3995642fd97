//! Snapshots of the generated code: one small model per op family (the opset-compliance models)
//! and the digits model under each option (weights embedded, from a file, as bytes, none; no
//! simplification; split into parts; custom-op hooks). A change to an emitter shows here as a
//! diff to review, in seconds and without compiling Burn. After an intended change:
//! `INSTA_UPDATE=always cargo test -p onnx-codegen --test snapshots`, then review and commit
//! `tests/snapshots/`.

use onnx_codegen::generate::{generate, GenerateOptions, LoadStrategy};
use onnx_codegen::model::{lower_with, StructSpec, WeightRole, WeightsSource};
use onnx_codegen::{format_file, Hook};

mod common;
/// The model builders of onnx-ir's tests.
#[path = "../../onnx-ir/tests/common/mod.rs"]
mod models;
use proc_macro2::{Ident, Span};
use quote::quote;
use std::path::{Path, PathBuf};

/// One model per op family, as `tests/opset-compliance/<name>.onnx`.
const FAMILIES: &[&str] = &[
    "Add_v14",
    "BitShift_v11",
    "Gelu_v20",
    "Clip_v13",
    "Cast_v21",
    "Where_v16",
    "Conv_v22",
    "MaxPool_v22",
    "BatchNormalization_v15",
    "LayerNormalization_v17",
    "Gemm_v13",
    "Einsum_v12",
    "Reshape_v21",
    "Split_v18",
    "Gather_v13",
    "Slice_v13",
    "Pad_v21",
    "Unique_v11",
    "ScatterElements_v18",
    "DepthToSpace_v13",
    "ReduceMean_v18",
    "ArgMax_v13",
    "TopK_v11",
    "CumSum_v14",
    "Range_v11",
    "Softmax_v13",
    "Attention_v23",
    "RotaryEmbedding_v23",
    "Resize_v19",
    "Upsample_v9",
    "GridSample_v22",
    "NonMaxSuppression_v11",
    "LSTM_v22",
    "GRU_v22",
    "QuantizeLinear_v21",
    "QLinearConv_v10",
    "NegativeLogLikelihoodLoss_v22",
    "If_v21",
    "Scan_v21",
];

fn read(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).expect(path)
}

fn code(bytes: &[u8], strategy: LoadStrategy, simplify: bool, hooks: &[Hook]) -> String {
    let out = PathBuf::from("out");
    let opts = GenerateOptions { strategy, simplify, hooks, ..GenerateOptions::new("Model", &out) };
    generate(bytes, &opts).expect("generates").code
}

#[test]
fn op_families() {
    for family in FAMILIES {
        let bytes = read(&format!("tests/opset-compliance/{family}.onnx"));
        insta::assert_snapshot!(*family, code(&bytes, LoadStrategy::Embedded, true, &[]));
    }
}

#[test]
fn weights_and_simplify_options() {
    let digits = read("examples/digits/model/digits.onnx");
    for (name, strategy, simplify) in [
        ("digits_embedded", LoadStrategy::Embedded, true),
        ("digits_file", LoadStrategy::File, true),
        ("digits_bytes", LoadStrategy::Bytes, true),
        ("digits_no_weights", LoadStrategy::None, true),
        ("digits_no_simplify", LoadStrategy::Embedded, false),
    ] {
        insta::assert_snapshot!(name, code(&digits, strategy, simplify, &[]));
    }
}

/// Parts of two nodes, so that the digits model splits (the default is 256).
#[test]
fn partitioned() {
    let graph = onnx_ir::import(&read("examples/digits/model/digits.onnx"), onnx_ir::ImportOptions::default())
        .expect("imports");
    let lowered = lower_with(&graph, &[], Some(2)).expect("lowers");
    let name = Ident::new("Model", Span::call_site());
    let items = lowered.items(&StructSpec { name: &name, vis: quote! { pub }, attrs: quote! {} }, &WeightsSource::None);
    insta::assert_snapshot!("digits_partitioned", format_file(items));
}

#[test]
fn custom_op_hooks() {
    let hooks = common::example_hooks();
    let bytes = read("ui-tests/models/unsupported_ops.onnx");
    insta::assert_snapshot!("custom_op_hooks", code(&bytes, LoadStrategy::None, true, &hooks));
}

/// MatMul by a constant matrix, then Add of a bias, as transformer exports write a projection:
/// one `Linear` with the bias as its parameter.
#[test]
fn matmul_and_bias_add_are_one_linear() {
    use models::{floats_init, input, model, node};
    let nodes = vec![node("MatMul", &["x", "w"], &["p"], vec![]), node("Add", &["p", "b"], &["y"], vec![])];
    let weight = floats_init("w", &[4, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let bytes = model(13, nodes, vec![input("x", &[-1, 3, 4])], vec![weight, floats_init("b", &[2], &[0.5, -1.0])]);
    let graph = onnx_ir::import(&bytes, onnx_ir::ImportOptions::default()).expect("imports");
    let weights: Vec<String> =
        lower_with(&graph, &[], None).expect("lowers").weights.into_iter().map(|w| w.path).collect();
    assert_eq!(weights, ["linear1.weight", "linear1.bias"]);
    insta::assert_snapshot!("matmul_bias_linear", code(&bytes, LoadStrategy::None, true, &[]));
}

/// A float initializer whose values do not matter here, distinct per name (the importer
/// merges equal constants).
fn init(name: &str, dims: &[i64]) -> onnx_ir::proto::TensorProto {
    let start = name.bytes().map(f32::from).sum::<f32>();
    let values: Vec<f32> = (0..dims.iter().product::<i64>()).map(|i| start + i as f32 * 0.125).collect();
    models::floats_init(name, dims, &values)
}

/// LayerNormalization over the last axis with constant scale and bias (or none) is a
/// `LayerNorm`; GroupNormalization-21 and InstanceNormalization with constant per-channel
/// affine are `GroupNorm` / `InstanceNorm`. Fallbacks: a scale computed at run time, a
/// LayerNormalization not over the last axis.
#[test]
fn norm_layers() {
    use models::{attr_int, input, model_with_outputs, node};
    let nodes = vec![
        node("LayerNormalization", &["t", "ls", "lb"], &["ln_bias"], vec![]),
        node("LayerNormalization", &["t", "ls"], &["ln_no_bias"], vec![]),
        node("LayerNormalization", &["t", "runtime_scale"], &["ln_fallback"], vec![]),
        node("LayerNormalization", &["t", "ls2", "lb2"], &["ln_axis1"], vec![attr_int("axis", 1)]),
        node("GroupNormalization", &["x", "cs", "cb"], &["gn"], vec![attr_int("num_groups", 2)]),
        node("InstanceNormalization", &["x", "cs", "cb"], &["inorm"], vec![]),
        node("InstanceNormalization", &["x", "runtime_channels", "cb"], &["inorm_fallback"], vec![]),
    ];
    let inputs = vec![input("t", &[-1, 3, 4]), input("runtime_scale", &[4]), input("x", &[-1, 4, 3, 3])];
    let inputs = [inputs, vec![input("runtime_channels", &[4])]].concat();
    let inits = vec![init("ls", &[4]), init("lb", &[4]), init("ls2", &[3, 4]), init("lb2", &[3, 4])];
    let inits = [inits, vec![init("cs", &[4]), init("cb", &[4])]].concat();
    let outputs = ["ln_bias", "ln_no_bias", "ln_fallback", "ln_axis1", "gn", "inorm", "inorm_fallback"];
    let bytes = model_with_outputs(21, nodes, inputs, inits, &outputs);
    insta::assert_snapshot!("norm_layers", code(&bytes, LoadStrategy::None, true, &[]));
}

/// GroupNormalization-18 scales per group: no `GroupNorm` (which scales per channel) unless
/// each group is one channel.
#[test]
fn group_norm_per_group_falls_back() {
    use models::{attr_int, input, model_with_outputs, node};
    let nodes = vec![
        node("GroupNormalization", &["x", "gs", "gb"], &["per_group"], vec![attr_int("num_groups", 2)]),
        node("GroupNormalization", &["x", "cs", "cb"], &["per_channel"], vec![attr_int("num_groups", 4)]),
    ];
    let inits = vec![init("gs", &[2]), init("gb", &[2]), init("cs", &[4]), init("cb", &[4])];
    let bytes = model_with_outputs(18, nodes, vec![input("x", &[1, 4, 3, 3])], inits, &["per_group", "per_channel"]);
    insta::assert_snapshot!("group_norm_v18", code(&bytes, LoadStrategy::None, true, &[]));
}

/// A residual block's end (Conv, the Add or Sum of the shortcut, Relu) is one fused call, with
/// constant weights (a `Conv2d` layer) and with weights computed at run time.
#[test]
fn conv_residual() {
    use models::{attr_ints, input, model_with_outputs, node};
    let nodes = vec![
        node("Conv", &["x", "w", "b"], &["y"], vec![attr_ints("pads", &[1, 1, 1, 1])]),
        node("Sum", &["y", "x"], &["s"], vec![]),
        node("Relu", &["s"], &["block"], vec![]),
        node("Conv", &["x", "runtime_w"], &["z"], vec![]),
        node("Add", &["block", "z"], &["runtime"], vec![]),
    ];
    let inputs = vec![input("x", &[-1, 2, 4, 4]), input("runtime_w", &[2, 2, 1, 1])];
    let inits = vec![init("w", &[2, 2, 3, 3]), init("b", &[2])];
    let bytes = model_with_outputs(13, nodes, inputs, inits, &["runtime"]);
    insta::assert_snapshot!("conv_residual", code(&bytes, LoadStrategy::None, true, &[]));
}

/// ConvTranspose with constant weights is a `ConvTranspose1d/2d/3d` (asymmetric pads cropped
/// after it) and a 3-D Conv a `Conv3d`; with weights computed at run time, the functional forms.
#[test]
fn conv_layers() {
    use models::{attr_int, attr_ints, input, model_with_outputs, node};
    let nodes = vec![
        node("ConvTranspose", &["x1", "w1", "b1"], &["ct1"], vec![attr_ints("strides", &[2])]),
        node(
            "ConvTranspose",
            &["x2", "w2", "b2"],
            &["ct2"],
            vec![attr_ints("strides", &[2, 2]), attr_ints("pads", &[1, 1, 1, 1]), attr_ints("output_padding", &[1, 1])],
        ),
        node("ConvTranspose", &["x2", "w2"], &["ct2_cropped"], vec![attr_ints("pads", &[0, 1, 1, 0])]),
        node(
            "ConvTranspose",
            &["x2", "w2g"],
            &["ct2_groups"],
            vec![attr_int("group", 2), attr_ints("dilations", &[2, 1])],
        ),
        node("ConvTranspose", &["x3", "w3"], &["ct3"], vec![attr_ints("pads", &[1, 0, 1, 1, 0, 1])]),
        node("ConvTranspose", &["x2", "runtime_w2"], &["ct2_fallback"], vec![]),
        node("Conv", &["x3", "k3", "kb3"], &["conv3"], vec![attr_ints("pads", &[1, 1, 1, 1, 1, 1])]),
        node("Conv", &["x3", "runtime_k3"], &["conv3_fallback"], vec![attr_ints("strides", &[2, 2, 2])]),
    ];
    let inputs = vec![input("x1", &[1, 2, 5]), input("x2", &[-1, 2, 4, 4]), input("x3", &[1, 2, 4, 4, 4])];
    let inputs = [inputs, vec![input("runtime_w2", &[2, 3, 3, 3]), input("runtime_k3", &[3, 2, 3, 3, 3])]].concat();
    let inits = vec![init("w1", &[2, 3, 3]), init("b1", &[3]), init("w2", &[2, 4, 3, 3]), init("b2", &[4])];
    let inits = [inits, vec![init("w2g", &[2, 3, 2, 2]), init("w3", &[2, 3, 2, 2, 2])]].concat();
    let inits = [inits, vec![init("k3", &[3, 2, 3, 3, 3]), init("kb3", &[3])]].concat();
    let outputs = ["ct1", "ct2", "ct2_cropped", "ct2_groups", "ct3", "ct2_fallback", "conv3", "conv3_fallback"];
    let bytes = model_with_outputs(22, nodes, inputs, inits, &outputs);
    insta::assert_snapshot!("conv_layers", code(&bytes, LoadStrategy::None, true, &[]));
}

/// auto_pad SAME over symbolic spatial dims (issue 37): the input bound, its pads computed from
/// its dims on the host, then the calls of fixed pads (the conv kernel with its fused
/// activation, a conv with run-time weights, the pools; a 3-D conv, which Burn pads symmetrically,
/// after padding the input by the excess); ConvTranspose's SAME pads are fixed.
#[test]
fn same_padding_over_symbolic_dims() {
    use models::{attr_ints, attr_string, input, model_with_outputs, node};
    let same = |mode: &str, strides: &[i64]| vec![attr_string("auto_pad", mode), attr_ints("strides", strides)];
    let pool = |mode: &str| [same(mode, &[2, 2]), vec![attr_ints("kernel_shape", &[3, 3])]].concat();
    let nodes = vec![
        node("Conv", &["x", "w", "b"], &["conv"], same("SAME_UPPER", &[2, 2])),
        node("Relu", &["conv"], &["relu"], vec![]),
        node("Conv", &["x", "runtime_w"], &["conv_runtime"], same("SAME_LOWER", &[1, 1])),
        node("MaxPool", &["x"], &["max"], pool("SAME_UPPER")),
        node("AveragePool", &["x"], &["average"], pool("SAME_LOWER")),
        node("ConvTranspose", &["x", "wt"], &["transposed"], same("SAME_UPPER", &[2, 2])),
        node("Conv", &["x3", "w3"], &["conv3"], same("SAME_UPPER", &[2, 2, 2])),
    ];
    let inputs = vec![input("x", &[1, 2, -1, -1]), input("runtime_w", &[2, 2, 3, 3]), input("x3", &[1, 2, 4, -1, 5])];
    let inits =
        vec![init("w", &[2, 2, 3, 3]), init("b", &[2]), init("wt", &[2, 2, 3, 3]), init("w3", &[2, 2, 3, 2, 3])];
    let outputs = ["relu", "conv_runtime", "max", "average", "transposed", "conv3"];
    let bytes = model_with_outputs(19, nodes, inputs, inits, &outputs);
    insta::assert_snapshot!("same_padding_over_symbolic_dims", code(&bytes, LoadStrategy::None, true, &[]));
}

/// Gather of rows of a constant float matrix is an `Embedding`, for any index rank (negative
/// indices wrapped); along another axis it stays a gather.
#[test]
fn embedding_layers() {
    use models::{attr_int, model_with_outputs, node, typed_input};
    let nodes = vec![
        node("Gather", &["table", "ids"], &["rows"], vec![]),
        node("Gather", &["table", "flat_ids"], &["rows_1d"], vec![]),
        node("Gather", &["table", "id"], &["row"], vec![]),
        node("Gather", &["table", "flat_ids"], &["columns"], vec![attr_int("axis", 1)]),
    ];
    let (int64, inputs) = (7, ["ids", "flat_ids", "id"]);
    let dims: [&[i64]; 3] = [&[-1, 3], &[2], &[]];
    let inputs = inputs.iter().zip(dims).map(|(name, dims)| typed_input(name, int64, dims)).collect();
    let bytes =
        model_with_outputs(13, nodes, inputs, vec![init("table", &[10, 4])], &["rows", "rows_1d", "row", "columns"]);
    insta::assert_snapshot!("embedding_layers", code(&bytes, LoadStrategy::None, true, &[]));
}

/// Which weights of a small model are trained: the Conv's, the Linear's (MatMul + Add),
/// PRelu's slope and the embedding table; an added constant tensor and BatchNorm's running
/// statistics are loaded frozen.
#[test]
fn trainable_weights() {
    use models::{input, model_with_outputs, node, typed_input};
    let nodes = vec![
        node("BatchNormalization", &["x", "gamma", "beta", "mean", "var"], &["n"], vec![]),
        node("Conv", &["n", "w", "b"], &["c"], vec![]),
        node("PRelu", &["c", "slope"], &["p"], vec![]),
        node("Add", &["p", "offset"], &["q"], vec![]),
        node("MatMul", &["q", "m"], &["mm"], vec![]),
        node("Add", &["mm", "mb"], &["y"], vec![]),
        node("Gather", &["table", "ids"], &["e"], vec![]),
    ];
    let inits = vec![init("w", &[2, 1, 3, 3]), init("b", &[2]), init("gamma", &[1]), init("beta", &[1])];
    let inits = [inits, vec![init("mean", &[1]), models::floats_init("var", &[1], &[2.0])]].concat();
    let inits = [inits, vec![init("slope", &[2, 1, 1]), init("offset", &[1, 1, 4]), init("m", &[4, 3])]].concat();
    let inits = [inits, vec![init("mb", &[3]), init("table", &[5, 3])]].concat();
    let inputs = vec![input("x", &[1, 1, 6, 6]), typed_input("ids", 7, &[1, 2])];
    let bytes = model_with_outputs(13, nodes, inputs, inits, &["y", "e"]);
    let graph = onnx_ir::import(&bytes, onnx_ir::ImportOptions::default()).expect("imports");
    let lowered = lower_with(&graph, &[], None).expect("lowers");
    let trainable: Vec<&str> =
        lowered.weights.iter().filter(|w| w.role == WeightRole::Trainable).map(|w| w.path.as_str()).collect();
    let expected = ["batchnorm1.gamma", "batchnorm1.beta", "conv2d1.weight", "conv2d1.bias", "slope"];
    assert_eq!(trainable, [&expected[..], &["linear1.weight", "linear1.bias", "embedding1.weight"]].concat());
    let roles: String = lowered.weights.iter().map(|w| format!("{}: {:?}\n", w.path, w.role)).collect();
    insta::assert_snapshot!("trainable_weights", format!("{roles}\n{}", code(&bytes, LoadStrategy::None, true, &[])));
}

/// The model's producer, versions, descriptions and metadata reach the IR and the struct's doc
/// comment (after the user's own), inert and bounded: Markdown escaped, a text-direction
/// control and newlines made spaces, a long value cut with a note.
#[test]
fn model_metadata_in_the_doc_comment() {
    use onnx_ir::proto::{ModelProto, StringStringEntryProto};
    use prost::Message;
    let bytes =
        models::model(13, vec![models::node("Relu", &["x"], &["y"], vec![])], vec![models::input("x", &[2])], vec![]);
    let mut proto = ModelProto::decode(bytes.as_slice()).expect("decodes");
    let entry = |k: &str, v: &str| StringStringEntryProto { key: Some(k.into()), value: Some(v.into()) };
    proto.producer_name = Some("pytorch".into());
    proto.producer_version = Some("2.1.0".into());
    proto.model_version = Some(3);
    proto.doc_string = Some("A *tiny*\nmodel <b>here</b>.".into());
    proto.metadata_props = vec![entry("author", "me"), entry("onnx_version", "1.16"), entry("long", &"x".repeat(300))];
    let graph_proto = proto.graph.as_mut().expect("a graph");
    graph_proto.name = Some("main_graph".into());
    graph_proto.doc_string = Some("trojan\u{202e}source".into());
    graph_proto.metadata_props = vec![entry("stage", "`final`")];
    let graph = onnx_ir::import(&proto.encode_to_vec(), onnx_ir::ImportOptions::default()).expect("imports");
    assert_eq!(graph.info.producer_name, "pytorch");
    assert_eq!(graph.info.metadata[1], ("onnx_version".to_string(), "1.16".to_string()));
    assert_eq!(graph.info.graph_metadata.len(), 1);
    let lowered = lower_with(&graph, &[], None).expect("lowers");
    let name = Ident::new("Model", Span::call_site());
    let attrs = quote! { #[doc = " My own words."] };
    let items = lowered.items(&StructSpec { name: &name, vis: quote! { pub }, attrs }, &WeightsSource::None);
    insta::assert_snapshot!("model_metadata", format_file(items));
}

/// The run-time helpers that read tensor data back to the host (a device sync on GPU backends;
/// book/src/backends.md, "Host readbacks").
const READBACKS: &[&str] = &["host_ints(", "host_floats(", "runtime_axes(", "range_float(", "range_int(", "into_data("];

/// Shape arithmetic on symbolic dims, as exporters write it (the per-operator pattern models:
/// Shape/Gather/Concat/Reshape chains, Expand through Where(Equal(..)), Range over a dim cast to
/// float, a shape computed inside an If branch): all of it on the host, no tensor read back.
#[test]
fn shape_arithmetic_reads_nothing_back() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/models");
    let mut checked = 0;
    for entry in std::fs::read_dir(&models).expect("tests/models") {
        let dir = entry.expect("entry").path();
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !(name.starts_with("shape_v15_") || name.starts_with("reshape_v14_")) {
            continue;
        }
        let code = code(&std::fs::read(dir.join("model.onnx")).expect("model"), LoadStrategy::None, true, &[]);
        let found: Vec<&&str> = READBACKS.iter().filter(|r| code.contains(**r)).collect();
        assert!(found.is_empty(), "{name} reads back with {found:?}:\n{code}");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} shape-arithmetic models found");
}

/// A shape slice with no elements (Slice past the end of a symbolic shape, concatenated to it,
/// as torchvision's Swin and FCOS TorchScript exports do) is an `[i64; 0]`: a bare `[]` gives
/// rustc no element type ("type annotations needed").
#[test]
fn an_empty_host_shape_has_a_type() {
    use models::{attr_int, ints_init, model, node, typed_input};
    let nodes = vec![
        node("Shape", &["x"], &["shape"], vec![]),
        node("Slice", &["shape", "two", "end", "zero"], &["rest"], vec![]),
        node("Concat", &["shape", "rest"], &["target"], vec![attr_int("axis", 0)]),
        node("Reshape", &["x", "target"], &["y"], vec![]),
    ];
    let inits = vec![ints_init("two", &[2]), ints_init("end", &[i64::MAX]), ints_init("zero", &[0])];
    let bytes = model(13, nodes, vec![typed_input("x", 1, &[-1, 3])], inits);
    for simplify in [false, true] {
        let code = code(&bytes, LoadStrategy::None, simplify, &[]);
        assert!(!code.contains("= [];"), "{code}");
        if !simplify {
            assert!(code.contains("let rest = [0i64; 0];"), "{code}");
        }
    }
}

/// A Cast of floats to an integer type goes through `cast_float_to_int` with the target's
/// width and sign (NaN and the infinities as ONNX Runtime casts them; Burn's `.int()` panics on
/// them on ndarray), a cast between integers does not.
#[test]
fn float_to_int_casts_name_their_target() {
    use models::{attr_int, model_with_outputs, node, typed_input};
    let nodes = vec![
        node("Cast", &["x"], &["wide"], vec![attr_int("to", 7)]),
        node("Cast", &["x"], &["byte"], vec![attr_int("to", 2)]),
        node("Cast", &["wide"], &["narrow"], vec![attr_int("to", 6)]),
    ];
    let bytes = model_with_outputs(13, nodes, vec![typed_input("x", 1, &[4])], vec![], &["wide", "byte", "narrow"]);
    let code = code(&bytes, LoadStrategy::None, false, &[]);
    assert!(code.contains("burn_onnx::ops::cast_float_to_int(x.clone(), 64u32, true)"), "{code}");
    assert!(code.contains("burn_onnx::ops::cast_float_to_int(x, 8u32, false)"), "{code}");
    assert_eq!(code.matches("cast_float_to_int").count(), 2, "{code}");
}

/// A constant quantized weight and its zero point are subtracted at import, not converted and
/// subtracted in every forward (ddddocr's quantized model spent 40 ms of 70 doing that).
#[test]
fn constant_quantized_weights_are_folded_at_import() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/models/conv_integer_v10_dynamic_quantized_chain");
    let code = code(&std::fs::read(path.join("model.onnx")).expect("model"), LoadStrategy::None, true, &[]);
    assert!(code.contains("self.w0_minus_zero_point.val()"), "{code}");
    assert!(!code.contains("default_int(self.w0.val())"), "{code}");
}

/// A DynamicQuantizeLinear → ConvInteger chain hands the quantized integers to the convolution as
/// they are, with their zero point: no float tensor of the input less it between the two.
#[test]
fn a_dynamic_quantization_chain_passes_its_integers_to_the_convolution() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/models/conv_integer_v10_dynamic_quantized_chain");
    let code = code(&std::fs::read(path.join("model.onnx")).expect("model"), LoadStrategy::None, true, &[]);
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(
        compact.contains("burn_onnx::ops::integer_conv2d(q0,Some(qz0.float()),self.w0_minus_zero_point.val(),"),
        "{code}"
    );
    assert!(!code.contains("minus_zero_point(q0"), "{code}");
}

/// A QDQ model as ONNX Runtime's `quantize_static` writes it: the Conv weight's DequantizeLinear
/// (int8, per output channel) is evaluated at import into an f32 weight, and each activation's
/// QuantizeLinear → DequantizeLinear of one scale and zero point becomes one fake quantization
/// with them as literals. A pair of different scales, and a quantized value that is also a graph
/// output, stay as they are.
#[test]
fn a_qdq_models_weights_are_dequantized_at_import_and_its_pairs_fused() {
    use models::{floats_init, input, model_with_outputs, node};
    let int8 = |name: &str, data_type: i32, dims: &[i64], values: &[i32]| onnx_ir::proto::TensorProto {
        name: Some(name.into()),
        data_type: Some(data_type),
        dims: dims.to_vec(),
        int32_data: values.to_vec(),
        ..Default::default()
    };
    let weights: Vec<i32> = (0..2 * 3).map(|i| i * 37 % 255 - 127).collect();
    let inits = vec![
        floats_init("s", &[], &[0.02]),
        int8("z", 2, &[], &[128]),
        floats_init("s2", &[], &[0.03]),
        int8("w_q", 3, &[2, 3, 1, 1], &weights),
        floats_init("w_s", &[2], &[0.01, 0.005]),
        int8("w_z", 3, &[2], &[0, 0]),
    ];
    let nodes = vec![
        node("QuantizeLinear", &["x", "s", "z"], &["x_q"], vec![]),
        node("DequantizeLinear", &["x_q", "s", "z"], &["x_dq"], vec![]),
        node("DequantizeLinear", &["w_q", "w_s", "w_z"], &["w"], vec![models::attr_int("axis", 0)]),
        node("Conv", &["x_dq", "w"], &["y"], vec![]),
        node("QuantizeLinear", &["y", "s", "z"], &["y_q"], vec![]),
        node("DequantizeLinear", &["y_q", "s2", "z"], &["y_other"], vec![]),
        node("QuantizeLinear", &["y_other", "s", "z"], &["kept_q"], vec![]),
        node("DequantizeLinear", &["kept_q", "s", "z"], &["out"], vec![]),
    ];
    let bytes = model_with_outputs(13, nodes, vec![input("x", &[1, 3, 4, 4])], inits, &["out", "kept_q"]);
    let code = code(&bytes, LoadStrategy::None, true, &[]);
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(
        compact.contains("burn_onnx::ops::fake_quantize_per_tensor(x,0.019999999552965164,128.0,(0.0,255.0)"),
        "{code}"
    );
    assert!(!code.contains("w_q"), "the int8 weight is no field: {code}");
    // Different scales, and a quantized value that is a graph output: a QuantizeLinear and a
    // DequantizeLinear each.
    assert_eq!(code.matches("fake_quantize").count(), 1, "{code}");
    assert_eq!(code.matches(".round()").count(), 2, "{code}");
}

/// A weight shared by two MatMulIntegers with different zero points gets one folded weight per
/// zero point; the same pair twice, one.
#[test]
fn a_folded_weight_is_made_once_per_weight_and_zero_point() {
    use models::{model_with_outputs, node, typed_input};
    let uint8 = |name: &str, dims: &[i64], values: &[i32]| onnx_ir::proto::TensorProto {
        name: Some(name.into()),
        data_type: Some(2),
        dims: dims.to_vec(),
        int32_data: values.to_vec(),
        ..Default::default()
    };
    let inits = vec![uint8("w", &[3, 2], &[1, 2, 3, 4, 5, 6]), uint8("one", &[], &[1]), uint8("three", &[], &[3])];
    let nodes = vec![
        node("MatMulInteger", &["a", "w", "", "one"], &["y1"], vec![]),
        node("MatMulInteger", &["a", "w", "", "three"], &["y2"], vec![]),
        node("MatMulInteger", &["a", "w", "", "one"], &["y3"], vec![]),
    ];
    let bytes = model_with_outputs(13, nodes, vec![typed_input("a", 2, &[2, 3])], inits, &["y1", "y2", "y3"]);
    // Without simplification: the repeated node is not merged away.
    let code = code(&bytes, LoadStrategy::None, false, &[]);
    let fields: Vec<&str> =
        code.lines().filter(|l| l.contains("minus_zero_point") && l.contains("float_param")).collect();
    assert_eq!(fields.len(), 2, "{code}");
    let uses = ["let y1 =", "let y2 =", "let y3 ="].map(|y| {
        let start = code.find(y).expect("each output");
        let statement = &code[start..start + code[start..].find(';').expect("a statement")];
        statement.contains("w_minus_zero_point_2")
    });
    assert_eq!(uses, [false, true, false], "{code}");
}
