//! Exports a ResNet-18, a transformer encoder and one small case per family of lowered
//! operations into ONNX test folders (`model.onnx`, `test_data_set_N/{input,output}_K.pb` with
//! Burn's own outputs on three seeded inputs) under `target/tmp/exported`. `scripts/test.sh`
//! then checks every file with `onnx.checker` and compares ONNX Runtime with Burn's outputs
//! (`scripts/check_export.py`), and imports every file back with `#[onnx_model]` through the
//! test runner (the round trip). The tests here check what needs no Python: each export
//! succeeds, the op kinds the lowering covers, and the errors for what cannot be exported.

use burn::module::Module;
use burn::nn::conv::{Conv1dConfig, Conv2dConfig, ConvTranspose2dConfig};
use burn::nn::interpolate::{Interpolate2dConfig, InterpolateMode};
use burn::nn::pool::{AdaptiveAvgPool2dConfig, AvgPool1dConfig, AvgPool2dConfig, MaxPool1dConfig};
use burn::nn::{GroupNormConfig, InstanceNormConfig, LayerNormConfig, PReluConfig, PaddingConfig1d, PaddingConfig2d};
use burn::tensor::activation;
use burn::tensor::module::attention;
use burn::tensor::ops::{AttentionModuleOptions, PadMode};
use burn::tensor::{Bool, Device, Distribution, Int, Tensor, TensorData};
use burn_onnx_export::{tensor_pb, ExportError, ExportTensors, ExportedModel, OnnxExporter, SymbolicAxes};
use export_example::{Encoder, ResNet18};
use std::collections::BTreeSet;
use std::marker::PhantomData;
use std::path::PathBuf;

fn out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("exported")
}

fn device() -> Device {
    Device::default()
}

fn floats<const D: usize>(shape: [usize; D], seed: u64) -> Tensor<D> {
    let device = device();
    device.seed(seed);
    Tensor::random(shape, Distribution::Normal(0.0, 1.0), &device)
}

/// Exports `forward` with the first sample's dims and writes the ONNX test folder `name` with
/// Burn's outputs for every sample; returns the exported op types.
fn write_case<M, I, O>(name: &str, model: &M, samples: Vec<I>, forward: impl Fn(&M, I) -> O) -> Vec<String>
where
    M: Module + Clone,
    I: ExportTensors + Clone,
    O: ExportTensors,
{
    let exported = OnnxExporter::new()
        .name(name)
        .export(model, samples[0].clone(), &forward)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    write_folder(name, &exported, model, samples, forward)
}

/// Writes `exported` as the ONNX test folder `name` with Burn's outputs for every sample;
/// returns the exported op types.
fn write_folder<M, I, O>(
    name: &str,
    exported: &ExportedModel,
    model: &M,
    samples: Vec<I>,
    forward: impl Fn(&M, I) -> O,
) -> Vec<String>
where
    M: Module + Clone,
    I: ExportTensors + Clone,
    O: ExportTensors,
{
    let dir = out_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    exported.save(dir.join("model.onnx")).unwrap();
    for (k, sample) in samples.into_iter().enumerate() {
        let set = dir.join(format!("test_data_set_{k}"));
        std::fs::create_dir_all(&set).unwrap();
        let outputs = forward(model, sample.clone()).into_data();
        for (prefix, datas) in [("input", sample.into_data()), ("output", outputs)] {
            for (i, data) in datas.iter().enumerate() {
                let name = format!("{prefix}_{i}");
                std::fs::write(set.join(format!("{name}.pb")), tensor_pb(&name, data).unwrap()).unwrap();
            }
        }
    }
    exported.op_types().into_iter().map(String::from).collect()
}

/// The dims of a graph input or output as written: a number, or the symbol's name.
fn graph_dims(exported: &ExportedModel, output: bool) -> Vec<Vec<String>> {
    use burn_onnx_export::proto::{tensor_shape_proto::dimension::Value, type_proto};
    let graph = exported.proto().graph.as_ref().unwrap();
    let infos = if output { &graph.output } else { &graph.input };
    infos
        .iter()
        .map(|info| {
            let Some(type_proto::Value::TensorType(t)) = info.r#type.as_ref().and_then(|t| t.value.as_ref()) else {
                panic!("not a tensor")
            };
            let dims = &t.shape.as_ref().unwrap().dim;
            dims.iter()
                .map(|d| match &d.value {
                    Some(Value::DimValue(n)) => n.to_string(),
                    Some(Value::DimParam(p)) => p.clone(),
                    None => "?".to_string(),
                })
                .collect()
        })
        .collect()
}

/// A module without parameters, for the cases that are plain tensor functions.
#[derive(Module, Debug)]
struct Stateless {
    #[module(skip)]
    _none: PhantomData<()>,
}

const STATELESS: Stateless = Stateless { _none: PhantomData };

fn seeded<const D: usize>(shape: [usize; D]) -> Vec<Tensor<D>> {
    (0..3).map(|seed| floats(shape, 100 + seed)).collect()
}

type Case = (&'static str, fn(Tensor<4>) -> Tensor<4>);

/// Elementwise, activation, comparison, shape and reduction cases on a `[2, 3, 4, 5]` tensor.
fn tensor_cases() -> Vec<Case> {
    vec![
        ("math", |x| {
            let positive = x.clone().abs().add_scalar(0.5);
            x.clone().exp()
                + positive.clone().log()
                + positive.clone().sqrt()
                + x.clone().sin()
                + x.clone().cos()
                + x.clone().tanh()
                + x.clone().erf()
                + positive.clone().recip()
                + x.clone().mul_scalar(3.0).floor()
                + x.clone().mul_scalar(3.0).ceil()
                + x.clone().mul_scalar(3.0).round()
                + x.clone().neg()
                + positive.clone().powf_scalar(1.5)
                + positive.clone().powf(x.clone().abs())
                + x.clone().clamp(-0.5, 0.7)
                + x.clone().clamp_min(0.1)
                + x.clone().clamp_max(0.2)
                + x.clone().sub_scalar(1.0).div_scalar(4.0)
                + x.clone().remainder_scalar(0.7)
                + x.clone() / positive
        }),
        ("activations", |x| {
            activation::relu(x.clone())
                + activation::sigmoid(x.clone())
                + activation::leaky_relu(x.clone(), 0.1)
                + activation::gelu(x.clone())
                + activation::silu(x.clone())
                + activation::hard_sigmoid(x.clone(), 0.2, 0.5)
                + activation::log_sigmoid(x.clone())
                + activation::softmax(x.clone(), 1)
                + activation::log_softmax(x.clone(), 3)
                + activation::softmin(x.clone(), 2)
                + activation::tanh(x)
        }),
        ("compare_where", |x| {
            let y = x.clone().flip([3]);
            let positive = x.clone().greater_elem(0.0);
            let mask =
                positive.clone().bool_and(x.clone().lower(y.clone()).bool_not()).bool_or(x.clone().equal_elem(0.0));
            let picked = x.clone().mask_where(mask.clone(), y.clone()).mask_fill(x.clone().lower_equal_elem(-1.0), 2.5);
            let ge = x.clone().greater_equal(y.clone()).float();
            let ne = x.clone().not_equal(y).int().float();
            picked + ge + ne + mask.float()
        }),
        ("shapes", |x| {
            let [a, b, c, d] = x.dims();
            let t = x.clone().permute([0, 2, 3, 1]).swap_dims(1, 2).reshape([a, d, c, b]).permute([0, 3, 2, 1]);
            let sliced = x.clone().slice([0..a, 1..3, 0..c, 0..d]).narrow(3, 1, 3);
            let padded = sliced.pad([(0, 0), (0, 1), (0, 0), (1, 1)], PadMode::Constant(0.25));
            let joined = Tensor::cat(vec![x.clone().narrow(1, 0, 1), x.clone().narrow(1, 1, 2)], 1);
            let stacked: Tensor<5> = Tensor::stack(vec![x.clone(), t.clone()], 0);
            let summed = stacked.sum_dim(0).squeeze_dim::<4>(0).unsqueeze_dim::<5>(0).squeeze_dim::<4>(0);
            let expanded = x.clone().narrow(2, 0, 1).expand([a, b, c, d]);
            let repeated = x.clone().narrow(0, 0, 1).repeat_dim(0, a);
            let flipped = x.clone().flip([1, 3]);
            let flattened = x.clone().flatten::<2>(1, 3).reshape([a, b, c, d]);
            t + padded + joined + summed + expanded + repeated + flipped + flattened
        }),
        ("reductions", |x| {
            let [a, b, c, _] = x.dims();
            let s = x.clone().sum_dim(3)
                + x.clone().mean_dim(3)
                + x.clone().max_dim(3)
                + x.clone().min_dim(3)
                + x.clone().prod_dim(3)
                + x.clone().argmax(3).float()
                + x.clone().argmin(3).float();
            let (values, indices) = x.clone().max_dim_with_indices(3);
            let whole = x.clone().sum().reshape([1, 1, 1, 1]) + x.clone().mean().reshape([1, 1, 1, 1]);
            let cumulative = x.clone().cumsum(2).sum_dim(3);
            let multi = x.clone().sum_dims(&[1, 3]).expand([a, b, c, 1]);
            s + values + indices.float() + whole + cumulative + multi + x.clone().max().reshape([1, 1, 1, 1])
        }),
        ("indexing", |x| {
            let device = x.device();
            let indices = Tensor::<1, Int>::from_ints([3, 0, 4, 1], &device);
            let selected = x.clone().select(3, indices);
            let gather_index = Tensor::<4, Int>::from_data(
                TensorData::new((0..120).map(|i| (i * 7 % 5) as i64).collect(), [2, 3, 4, 5]),
                &device,
            );
            let gathered = x.clone().gather(3, gather_index).narrow(3, 0, 4);
            selected + gathered
        }),
        ("pooling", |x| {
            let x = x.reshape([2, 3, 4, 5]);
            let avg = AvgPool2dConfig::new([2, 2])
                .with_strides([1, 1])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init()
                .forward(x.clone());
            let max = burn::nn::pool::MaxPool2dConfig::new([2, 3]).with_strides([1, 1]).init().forward(x.clone());
            let adaptive = AdaptiveAvgPool2dConfig::new([2, 1]).init().forward(x.clone());
            let [a, b, c, d] = x.dims();
            let rows = x.clone().reshape([a, b * c, d]);
            let max1 = MaxPool1dConfig::new(2).init().forward(rows.clone());
            let avg1 = AvgPool1dConfig::new(3).with_stride(2).init().forward(rows);
            avg.narrow(2, 0, 3).narrow(3, 0, 4)
                + max.narrow(3, 0, 1).expand([a, b, 3, 4])
                + adaptive.narrow(2, 0, 1)
                + max1.sum_dim(2).reshape([a, b, c, 1]).narrow(2, 0, 1)
                + avg1.sum_dim(2).reshape([a, b, c, 1]).narrow(2, 0, 1)
        }),
        ("interpolate", |x| {
            let up = |mode, align_corners| {
                Interpolate2dConfig::new()
                    .with_output_size(Some([7, 9]))
                    .with_mode(mode)
                    .with_align_corners(align_corners)
                    .init()
                    .forward(x.clone())
            };
            up(InterpolateMode::Nearest, false)
                + up(InterpolateMode::Linear, false)
                + up(InterpolateMode::Linear, true)
                + up(InterpolateMode::Cubic, false)
        }),
        ("attention", |x| {
            let q = x.clone();
            let k = x.clone().flip([2]);
            let v = x.clone().mul_scalar(2.0);
            let device = x.device();
            let mask = Tensor::<4, Bool>::from_data(
                TensorData::new((0..16).map(|i| i % 5 == 3).collect::<Vec<_>>(), [1, 1, 4, 4]),
                &device,
            )
            .expand([2, 3, 4, 4]);
            let masked =
                attention(q.clone(), k.clone(), v.clone(), Some(mask), None, AttentionModuleOptions::default());
            let causal = attention(
                q,
                k,
                v,
                None,
                None,
                AttentionModuleOptions { is_causal: true, scale: Some(0.3), softcap: None },
            );
            masked + causal
        }),
    ]
}

/// Layers with parameters: convolutions (groups, dilation, padding, bias), a transposed
/// convolution, norms and PReLU.
#[derive(Module, Debug)]
struct Layers {
    conv1d: burn::nn::conv::Conv1d,
    conv2d: burn::nn::conv::Conv2d,
    deconv: burn::nn::conv::ConvTranspose2d,
    group_norm: burn::nn::GroupNorm,
    instance_norm: burn::nn::InstanceNorm,
    layer_norm: burn::nn::LayerNorm,
    prelu: burn::nn::PRelu,
}

impl Layers {
    fn new(device: &Device) -> Self {
        device.seed(7);
        Self {
            conv1d: Conv1dConfig::new(4, 6, 3)
                .with_groups(2)
                .with_dilation(2)
                .with_padding(PaddingConfig1d::Explicit(2, 1))
                .init(device),
            conv2d: Conv2dConfig::new([4, 8], [3, 3])
                .with_stride([2, 1])
                .with_groups(4)
                .with_padding(PaddingConfig2d::Explicit(1, 0, 1, 2))
                .init(device),
            deconv: ConvTranspose2dConfig::new([8, 4], [3, 3])
                .with_stride([2, 2])
                .with_padding([1, 1])
                .with_padding_out([1, 0])
                .init(device),
            group_norm: GroupNormConfig::new(2, 4).init(device),
            instance_norm: InstanceNormConfig::new(4).with_affine(true).init(device),
            layer_norm: LayerNormConfig::new(6).init(device),
            prelu: PReluConfig::new().with_num_parameters(4).init(device),
        }
    }

    fn forward(&self, x: Tensor<4>) -> (Tensor<3>, Tensor<4>, Tensor<4>) {
        let [a, b, c, d] = x.dims();
        let rows = self.conv1d.forward(x.clone().reshape([a, b, c * d]));
        let rows = self.layer_norm.forward(rows.narrow(2, 0, 6));
        let features = self.deconv.forward(self.conv2d.forward(x.clone()));
        let normed = self.prelu.forward(self.instance_norm.forward(self.group_norm.forward(x)));
        (rows, features, normed)
    }
}

/// Sizes computed at run time from a symbolic batch (recorded at 2 and 3, run at 2, 3 and 4):
/// flatten and reshape, expand, repeat, slices whose bounds are the batch or constants, a
/// filled tensor and a range.
fn symbolic_sizes_case() -> Vec<String> {
    let samples: Vec<Tensor<3>> = [2, 3, 4].into_iter().map(|b| floats([b, 4, 5], 400 + b as u64)).collect();
    let forward = |_: &Stateless, x: Tensor<3>| {
        let [b, c, d] = x.dims();
        let device = x.device();
        let back = x.clone().flatten::<2>(0, 1).reshape([b, c, d]);
        let first = x.clone().narrow(0, 0, 1);
        let head = first.clone().expand([b, c, d]);
        let rotated = Tensor::cat(vec![x.clone().narrow(0, 1, b - 1), first.clone()], 0);
        let repeated = first.repeat_dim(0, b);
        let ones = Tensor::<3>::ones([b, c, d], &device);
        let positions = Tensor::<1, Int>::arange(0..b as i64, &device).float().reshape([b, 1, 1]);
        back + head + rotated + repeated + ones + positions
    };
    let exported = OnnxExporter::new()
        .name("symbolic_sizes")
        .export_dynamic(
            &STATELESS,
            [samples[0].clone(), samples[1].clone()],
            [SymbolicAxes::new().axis(0, "batch")],
            forward,
        )
        .unwrap();
    assert_eq!(graph_dims(&exported, true), [["batch", "4", "5"]]);
    write_folder("symbolic_sizes", &exported, &STATELESS, samples, forward)
}

const EXPORT_OPS_START: &str = "<!-- export ops: start -->";
const EXPORT_OPS_END: &str = "<!-- export ops: end -->";

/// The export chapter's list of exported ONNX op kinds (book/src/export.md) is this test's:
/// every kind some per-op case emits (each case checked against ONNX Runtime by
/// scripts/check_export.py).
fn check_book_op_list(ops: &BTreeSet<String>) {
    let list = format!(
        "{EXPORT_OPS_START}\n**{} ONNX op kinds** (written by `examples/export`'s per-op test; \
         `UPDATE_EXPORT_OPS=1 cargo test --workspace --test export` rewrites it): {}.\n{EXPORT_OPS_END}",
        ops.len(),
        ops.iter().map(|op| format!("`{op}`")).collect::<Vec<_>>().join(", ")
    );
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../book/src/export.md");
    let chapter = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    // Rewritten only between the markers: a chapter without them is an error, never a file replaced.
    let (start, end) = match (chapter.find(EXPORT_OPS_START), chapter.find(EXPORT_OPS_END)) {
        (Some(start), Some(end)) if start < end => (start, end),
        _ => panic!("{} has no `{EXPORT_OPS_START}` and `{EXPORT_OPS_END}` lines, in that order", path.display()),
    };
    let current = &chapter[start..end + EXPORT_OPS_END.len()];
    if std::env::var_os("UPDATE_EXPORT_OPS").is_some() {
        std::fs::write(&path, chapter.replace(current, &list)).unwrap();
    } else {
        assert_eq!(
            current, list,
            "book/src/export.md's export op list is stale: run UPDATE_EXPORT_OPS=1 cargo test --workspace --test export"
        );
    }
}

#[test]
fn modules_and_operations_export() {
    let mut ops = BTreeSet::new();
    for (name, f) in tensor_cases() {
        ops.extend(write_case(name, &STATELESS, seeded([2, 3, 4, 5]), |_, x| f(x)));
    }
    let layers = Layers::new(&device());
    ops.extend(write_case("layers", &layers, seeded([2, 4, 6, 5]), Layers::forward));
    ops.extend(write_case(
        "matmul_int",
        &STATELESS,
        vec![(floats([2, 3, 4], 1), floats([4, 5], 2))],
        |_, (a, b): (Tensor<3>, Tensor<2>)| {
            let product = a.clone().matmul(b.unsqueeze::<3>());
            let ints = a.mul_scalar(4.0).int();
            let int_ops = ints.clone().remainder_scalar(3) + ints.clone().clamp(-2, 5) + ints.abs().powi_scalar(2);
            (product, int_ops)
        },
    ));
    ops.extend(symbolic_sizes_case());
    ops.remove("Identity");
    println!("{} ONNX op kinds in the per-op cases: {:?}", ops.len(), ops);
    assert!(ops.len() >= 40, "only {} op kinds: {ops:?}", ops.len());
    check_book_op_list(&ops);
}

#[test]
fn resnet18_exports() {
    let device = device();
    device.seed(18);
    let model = ResNet18::new(10, &device);
    let samples: Vec<Tensor<4>> = (0..3).map(|seed| floats([1, 3, 64, 64], 200 + seed)).collect();
    let ops = write_case("resnet18", &model, samples, ResNet18::forward);
    assert_eq!(ops.iter().filter(|op| *op == "Conv").count(), 20, "{ops:?}");
    assert_eq!(ops.iter().filter(|op| *op == "BatchNormalization").count(), 20);
}

/// Token ids and a padding mask (the last `batch - 1` rows padded after 7 tokens, the first
/// after `seq - seed`).
fn encoder_sample(batch: usize, seq: usize, seed: u64) -> (Tensor<2, Int>, Tensor<2, Bool>) {
    let device = device();
    device.seed(300 + seed);
    let tokens = Tensor::<2, Int>::random([batch, seq], Distribution::Uniform(0.0, Encoder::VOCAB as f64), &device);
    let lengths: Vec<usize> = (0..batch).map(|row| if row == 0 { seq - seed as usize } else { 7.min(seq) }).collect();
    let padding: Vec<bool> = lengths.iter().flat_map(|&n| (0..seq).map(move |i| i >= n)).collect();
    (tokens, Tensor::<2, Bool>::from_data(TensorData::new(padding, [batch, seq]), &device))
}

#[test]
fn transformer_encoder_exports() {
    let device = device();
    device.seed(5);
    let model = Encoder::new(&device);
    let samples = (0..3).map(|seed| encoder_sample(2, 12, seed)).collect();
    let ops = write_case("transformer_encoder", &model, samples, |m, (tokens, padding)| m.forward(tokens, padding));
    for op in ["Gather", "MatMul", "Softmax", "LayerNormalization", "Erf", "Where"] {
        assert!(ops.iter().any(|o| o == op), "no {op} in {ops:?}");
    }
}

/// ResNet-18 with a symbolic batch, recorded at batch 1 and 5; the test folder runs it at
/// batch 1, 5 and 3 (a size neither recording had).
#[test]
fn resnet18_exports_with_a_symbolic_batch() {
    let device = device();
    device.seed(18);
    let model = ResNet18::new(10, &device);
    let samples: Vec<Tensor<4>> =
        [1, 5, 3].into_iter().map(|batch| floats([batch, 3, 64, 64], 210 + batch as u64)).collect();
    let exported = OnnxExporter::new()
        .name("resnet18_dynamic")
        .export_dynamic(
            &model,
            [samples[0].clone(), samples[1].clone()],
            [SymbolicAxes::new().axis(0, "batch")],
            ResNet18::forward,
        )
        .unwrap();
    assert_eq!(graph_dims(&exported, false), [["batch", "3", "64", "64"]]);
    assert_eq!(graph_dims(&exported, true), [["batch", "10"]]);
    let ops = write_folder("resnet18_dynamic", &exported, &model, samples, ResNet18::forward);
    // The flatten before the classifier reads the batch from the input's shape.
    assert!(ops.iter().any(|op| op == "Shape"), "{ops:?}");
}

/// The encoder with a symbolic batch and sequence length, recorded at [2, 12] and [3, 7] and
/// run at those and at [4, 9].
#[test]
fn transformer_encoder_exports_with_symbolic_batch_and_sequence() {
    let device = device();
    device.seed(5);
    let model = Encoder::new(&device);
    let samples: Vec<_> = [(2, 12), (3, 7), (4, 9)].into_iter().map(|(b, s)| encoder_sample(b, s, 1)).collect();
    let axes = SymbolicAxes::new().axis(0, "batch").axis(1, "sequence");
    let forward = |m: &Encoder, (tokens, padding): (Tensor<2, Int>, Tensor<2, Bool>)| m.forward(tokens, padding);
    let exported = OnnxExporter::new()
        .name("transformer_encoder_dynamic")
        .export_dynamic(&model, [samples[0].clone(), samples[1].clone()], [axes.clone(), axes], forward)
        .unwrap();
    assert_eq!(graph_dims(&exported, false), [["batch", "sequence"], ["batch", "sequence"]]);
    assert_eq!(graph_dims(&exported, true), [["batch", "sequence", "8"]]);
    let ops = write_folder("transformer_encoder_dynamic", &exported, &model, samples, forward);
    // The positions 0..sequence are computed at run time, not stored.
    assert!(ops.iter().any(|op| op == "Range"), "{ops:?}");
}

#[test]
fn a_size_kept_as_a_constant_is_an_error() {
    let batch = SymbolicAxes::new().axis(0, "batch");
    // The mean over the batch by hand: the divisor is the first sample's batch.
    let result = OnnxExporter::new().export_dynamic(
        &STATELESS,
        [floats([2, 3], 1), floats([5, 3], 2)],
        [batch.clone()],
        |_, x: Tensor<2>| {
            let n = x.dims()[0];
            x.sum_dim(0).div_scalar(n as f64)
        },
    );
    match result {
        Err(ExportError::SymbolicShape { op, .. }) => assert_eq!(op, "DivScalar"),
        other => panic!("expected a symbolic-shape error, got {other:?}"),
    }
    // An axis that differs between the samples must be named.
    let result = OnnxExporter::new().export_dynamic(
        &STATELESS,
        [floats([2, 3], 1), floats([5, 4], 2)],
        [batch],
        |_, x: Tensor<2>| x.exp(),
    );
    assert!(matches!(result, Err(ExportError::DynamicSamples { .. })), "{result:?}");
    // Sizes that scale alike cannot tell a product of both symbols from either squared.
    let both = SymbolicAxes::new().axis(0, "batch").axis(1, "sequence");
    let result = OnnxExporter::new().export_dynamic(
        &STATELESS,
        [floats([2, 4], 1), floats([4, 8], 2)],
        [both],
        |_, x: Tensor<2>| x.exp(),
    );
    assert!(matches!(result, Err(ExportError::DynamicSamples { .. })), "{result:?}");
}

#[test]
fn host_readback_is_an_error() {
    let result = OnnxExporter::new().export(&STATELESS, floats([2, 3], 1), |_, x: Tensor<2>| {
        let threshold = x.clone().max().into_scalar::<f32>();
        x.sub_scalar(threshold)
    });
    assert!(matches!(result, Err(ExportError::HostReadback { .. })), "{result:?}");
}

#[test]
fn an_operation_without_lowering_is_named() {
    let result = OnnxExporter::new().export(&STATELESS, floats([2, 3], 1), |_, x: Tensor<2>| x.log1p());
    match result {
        Err(ExportError::UnsupportedOperation { op }) => assert_eq!(op, "Log1p"),
        other => panic!("expected an unsupported operation, got {other:?}"),
    }
}
