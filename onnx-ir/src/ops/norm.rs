//! BatchNormalization, for every opset (1, 6, 7, 9, 14, 15): in inference form per-channel
//! scale, bias, mean and variance; in training mode the batch's statistics, lowered at import
//! into IR ops, with the running statistics as further outputs.

use super::common::normalize_axis;
use super::elementwise::{BinaryOp, UnaryOp};
use super::lowered::{Lowered, Src};
use super::reduce::{ReduceAxes, ReduceConfig, ReduceOp};
use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed, ReshapeConfig};
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

/// BatchNormalization in inference form: `(x - mean) / sqrt(var + epsilon) * scale + bias` per channel (axis 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchNormConfig {
    /// `epsilon` (default 1e-5).
    pub epsilon: f64,
    /// The channel count, the length of scale, bias, mean and variance.
    pub channels: usize,
    /// An activation applied to the result, fused in by the `fuse_conv_activation` pass (as
    /// for a Conv); `None` as parsed.
    pub activation: Option<super::UnaryOp>,
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let training = training_mode(ctx)?;
    // Read at any opset: some exporters keep writing `spatial=1` after opset 9 dropped it.
    if ctx.attrs.int_or("spatial", 1)? != 1 {
        return Err(ctx.error("spatial=0 (per-activation statistics) is not supported"));
    }
    let x = ctx.input_type(0)?;
    if x.rank() < 2 {
        return Err(ctx.error(format!("input must be [N, C, ...], got {x}")));
    }
    let names = ["scale", "bias", "mean", "var"];
    let mut channels = None;
    for (i, what) in names.iter().enumerate() {
        let ty = ctx.input_type(i + 1)?;
        if ty.rank() != 1 || channels.is_some_and(|c| Some(c) != ty.shape[0].as_static()) {
            return Err(ctx.error(format!("`{what}` must be a vector of the channel count, got {ty}")));
        }
        channels = ty.shape[0].as_static();
    }
    let epsilon = ctx.attrs.float_or("epsilon", 1e-5)? as f64;
    if training {
        return batch_norm_training(ctx, x, epsilon);
    }
    // `momentum` updates the running statistics, in training mode only.
    ctx.attrs.ignore(&["momentum"]);
    Ok(Parsed::new(Op::BatchNorm(BatchNormConfig { epsilon, channels: channels.unwrap_or(0), activation: None }), 5))
}

/// Whether the node normalizes with the batch's statistics: `training_mode` from opset 14
/// (with exactly the outputs Y, running_mean and running_var, else Y alone); before, with Y
/// alone or all five outputs, the five outputs with `is_test` = 0 at opsets 1 and 6, and the
/// five outputs at opsets 7 and 9 (the spec's output cases, and ONNX Runtime's rule). Other output counts are invalid
/// (onnx.checker and ONNX Runtime refuse them).
fn training_mode(ctx: &NodeCtx) -> Result<bool> {
    let outputs = ctx.num_outputs;
    let count_error =
        |expected: &str| Err(ctx.error(format!("{expected}, the node has {outputs} outputs (opset {})", ctx.opset)));
    if ctx.opset >= 14 {
        return match ctx.attrs.int_or("training_mode", 0)? {
            0 if outputs != 1 => {
                count_error("training_mode=0 gives Y alone (running statistics only in training mode)")
            }
            1 if outputs != 3 => count_error("training_mode=1 gives Y, running_mean and running_var"),
            0 => Ok(false),
            1 => Ok(true),
            v => Err(ctx.error(format!("training_mode={v}: ONNX defines 0 and 1"))),
        };
    }
    if outputs != 1 && outputs != 5 {
        return count_error("the outputs are Y alone (test mode) or Y, mean, var, saved_mean and saved_var (training)");
    }
    if ctx.opset >= 7 {
        // Opset 7 dropped `is_test` (the outputs tell the mode); some exporters keep writing it.
        ctx.attrs.ignore(&["is_test"]);
        return Ok(outputs == 5);
    }
    // The spec's output cases say the mode too: Y alone is test mode, whatever `is_test` (its
    // default, 0, would make every old inference graph that omits it train).
    let is_test = ctx.attrs.int_or("is_test", 0)? != 0;
    Ok(outputs == 5 && !is_test)
}

/// Training mode: `Y = scale * (X - mean) / sqrt(var + epsilon) + B` with the batch's mean and
/// (population) variance over every axis but 1, and the running statistics
/// `input * momentum + batch * (1 - momentum)` as outputs 1 and 2. Before opset 14 output 3 is
/// the batch mean; output 4 (`saved_var`: the batch variance in the spec, ONNX Runtime writes
/// the inverse standard deviation) is not produced.
fn batch_norm_training(ctx: &NodeCtx, x: &TensorType, epsilon: f64) -> Result<Parsed> {
    if x.dtype.kind() != Kind::Float {
        return Err(ctx.error(format!("input X must be float, got {x}")));
    }
    for i in 1..5 {
        let ty = ctx.input_type(i)?;
        if ty.dtype != x.dtype {
            return Err(ctx.error(format!(
                "in training mode, scale, bias, mean and var must have X's type {}, input {i} is {ty}",
                x.dtype
            )));
        }
    }
    let momentum = f64::from(ctx.attrs.float_or("momentum", 0.9)?);
    let rank = x.rank();
    let mut plan = Lowered::default();
    let reduce = Op::Reduce(ReduceConfig {
        op: ReduceOp::Mean,
        axes: ReduceAxes::Static(std::iter::once(0).chain(2..rank).collect()),
        keepdims: true,
    });
    let mean = plan.op(reduce.clone(), &[Src::Input(0)]);
    let centred = plan.binary(BinaryOp::Sub, Src::Input(0), mean);
    let squared = plan.binary(BinaryOp::Mul, centred, centred);
    let var = plan.op(reduce, &[squared]);
    // Scale and bias as [C, 1, ...], against X's [N, C, ...].
    let per_channel =
        Op::Reshape(ReshapeConfig { shape: std::iter::once(-1).chain(std::iter::repeat_n(1, rank - 2)).collect() });
    let scale = plan.op(per_channel.clone(), &[Src::Input(1)]);
    let bias = plan.op(per_channel, &[Src::Input(2)]);
    let scaled = plan.binary(BinaryOp::Mul, scale, centred);
    let epsilon = plan.scalar_of(x.dtype, epsilon);
    let shifted = plan.binary(BinaryOp::Add, var, epsilon);
    let deviation = plan.unary(UnaryOp::Sqrt, shifted);
    let normalized = plan.binary(BinaryOp::Div, scaled, deviation);
    let y = plan.binary(BinaryOp::Add, normalized, bias);
    let (kept, added) = (plan.scalar_of(x.dtype, momentum), plan.scalar_of(x.dtype, 1.0 - momentum));
    let running = |plan: &mut Lowered, input: usize, batch: Src| {
        let batch = plan.op(Op::Reshape(ReshapeConfig { shape: vec![-1] }), &[batch]);
        let old = plan.binary(BinaryOp::Mul, Src::Input(input), kept);
        let new = plan.binary(BinaryOp::Mul, batch, added);
        (plan.binary(BinaryOp::Add, old, new), batch)
    };
    let (running_mean, batch_mean) = running(&mut plan, 3, mean);
    let (running_var, _) = running(&mut plan, 4, var);
    let mut outputs = vec![Some(y), Some(running_mean), Some(running_var)];
    if ctx.opset < 14 {
        outputs.extend([Some(batch_mean), None]);
    }
    Ok(Parsed::lowered(plan.done(outputs)))
}

/// LayerNormalization (opset 17) and RMSNormalization (opset 23): normalise over the dims from
/// `axis` on, then scale (and shift, for LayerNorm).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerNormConfig {
    /// The first normalised axis (`axis`, default -1), normalised.
    pub axis: usize,
    /// `epsilon` (default 1e-5), added to the variance.
    pub epsilon: f64,
    /// RMSNormalization: no centring, no bias, no statistics outputs.
    pub rms: bool,
}

pub fn parse_layer_norm(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.dtype.kind() != Kind::Float {
        return Err(ctx.error(format!("input must be float, got {x}")));
    }
    let axis = normalize_axis(ctx.attrs.int_or("axis", -1)?, x.rank()).map_err(|e| ctx.error(e))?;
    // The default f32 statistics only: the generated code follows no other stash type.
    ctx.check_precision("stash_type", &[DType::F32])?;
    let rms = ctx.op_type == "RMSNormalization";
    for (index, what) in [(1, "Scale"), (2, "B")] {
        check_broadcasts_to(ctx, index, what, &x.shape[axis..])?;
    }
    let epsilon = ctx.attrs.float_or("epsilon", 1e-5)? as f64;
    Ok(Parsed::new(Op::LayerNorm(LayerNormConfig { axis, epsilon, rms }), if rms { 2 } else { 3 }))
}

/// Input `index` (when present) broadcasts to the normalized dims, right-aligned, where both
/// dims are static: ONNX Runtime fails every run of a scale or bias that does not.
fn check_broadcasts_to(ctx: &NodeCtx, index: usize, what: &str, normalized: &[Dim]) -> Result<()> {
    let Some(value) = ctx.inputs.get(index).copied().flatten() else { return Ok(()) };
    let shape = &value.ty.shape;
    let fits = shape.len() <= normalized.len()
        && shape.iter().rev().zip(normalized.iter().rev()).all(|(s, n)| match (s.as_static(), n.as_static()) {
            (Some(s), Some(n)) => s == n || s == 1,
            _ => true,
        });
    if fits {
        return Ok(());
    }
    let normalized = super::common::fmt_dims(normalized);
    Err(ctx.error(format!("`{what}` {} does not broadcast to the normalized dims {normalized}", value.ty)))
}

pub fn infer_layer_norm(c: &LayerNormConfig, x: &TensorType) -> Vec<TensorType> {
    let stats: Vec<Dim> =
        x.shape.iter().enumerate().map(|(i, d)| if i < c.axis { d.clone() } else { Dim::Static(1) }).collect();
    let stats = TensorType::new(x.dtype, stats);
    if c.rms {
        vec![x.clone()]
    } else {
        vec![x.clone(), stats.clone(), stats]
    }
}

pub fn parse_lp_norm(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let axis = normalize_axis(ctx.attrs.int_or("axis", -1)?, x.rank()).map_err(|e| ctx.error(e))?;
    let p = match ctx.attrs.int_or("p", 2)? {
        1 => 1,
        2 => 2,
        other => return Err(ctx.error(format!("p must be 1 or 2, got {other}"))),
    };
    Ok(Parsed::new(Op::LpNorm(LpNormConfig { axis, p }), 1))
}

/// InstanceNormalization, GroupNormalization (per-group scale/bias in opset 18, per-channel
/// from 21) and MeanVarianceNormalization: normalise over groups of dims.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupNormKind {
    /// InstanceNormalization: over each channel's spatial dims, then per-channel scale and bias.
    Instance,
    /// GroupNormalization: over each group of channels and their spatial dims.
    Group {
        /// `num_groups`, which divides the channels.
        groups: usize,
        /// Scale and bias per group (opset 18) rather than per channel (opset 21).
        per_group_affine: bool,
    },
    /// MeanVarianceNormalization: `(x - mean) / sqrt(variance)` over `axes`, no scale or bias.
    MeanVariance {
        /// `axes` (default `[0, 2, 3]`), normalised and sorted.
        axes: Vec<usize>,
    },
}

pub fn parse_group_norm(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.dtype.kind() != Kind::Float || x.rank() < 2 {
        return Err(ctx.error(format!("input must be float [N, C, ...], got {x}")));
    }
    let (kind, default_eps, inputs) = match ctx.op_type {
        "InstanceNormalization" => (GroupNormKind::Instance, 1e-5, 3),
        "GroupNormalization" => {
            let groups = ctx
                .attrs
                .int("num_groups")?
                .filter(|&g| g > 0)
                .ok_or_else(|| ctx.error("attribute `num_groups` is required"))? as usize;
            (GroupNormKind::Group { groups, per_group_affine: ctx.opset < 21 }, 1e-5, 3)
        }
        _ => {
            let axes = ctx.attrs.ints("axes")?.unwrap_or_else(|| vec![0, 2, 3]);
            let axes = super::common::normalize_axes(&axes, x.rank()).map_err(|e| ctx.error(e))?;
            (GroupNormKind::MeanVariance { axes }, 1e-9, 1)
        }
    };
    let channels = x.shape[1].clone();
    let affine = match &kind {
        GroupNormKind::Instance => Some(channels),
        GroupNormKind::Group { groups, per_group_affine: true } => Some(Dim::Static(*groups)),
        GroupNormKind::Group { .. } => Some(channels),
        GroupNormKind::MeanVariance { .. } => None,
    };
    if let Some(len) = affine {
        super::common::check_per_channel(ctx, 1, "scale", &len)?;
        super::common::check_per_channel(ctx, 2, "B", &len)?;
    }
    ctx.check_precision("stash_type", &[DType::F32])?;
    let epsilon = ctx.attrs.float_or("epsilon", default_eps as f32)? as f64;
    Ok(Parsed::new(Op::GroupNorm(GroupNormConfig { kind, epsilon }), inputs))
}

/// LRN: each element divided by `(bias + alpha / size * window sum of squares)^beta` over
/// `size` neighbouring channels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LrnConfig {
    /// `size`: the channels in each window (required).
    pub size: usize,
    /// `alpha` (default 1e-4).
    pub alpha: f64,
    /// `beta` (default 0.75).
    pub beta: f64,
    /// `bias` (default 1.0).
    pub bias: f64,
}

pub fn parse_lrn(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.rank() < 3 || x.dtype.kind() != Kind::Float {
        return Err(ctx.error(format!("input must be float [N, C, ...], got {x}")));
    }
    let size =
        ctx.attrs.int("size")?.filter(|&s| s > 0).ok_or_else(|| ctx.error("attribute `size` is required"))? as usize;
    let config = LrnConfig {
        size,
        alpha: ctx.attrs.float_or("alpha", 1e-4)? as f64,
        beta: ctx.attrs.float_or("beta", 0.75)? as f64,
        bias: ctx.attrs.float_or("bias", 1.0)? as f64,
    };
    Ok(Parsed::new(Op::Lrn(config), 1))
}

/// LpNormalization along `axis` with p = 1 or 2.
#[derive(Debug, Clone, PartialEq)]
pub struct LpNormConfig {
    /// `axis` (default -1), normalised.
    pub axis: usize,
    /// `p` (default 2).
    pub p: u8,
}

/// InstanceNormalization, GroupNormalization or MeanVarianceNormalization.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupNormConfig {
    /// Which normalisation, with its groups or axes.
    pub kind: GroupNormKind,
    /// `epsilon` (default 1e-5; MeanVarianceNormalization, which has none, uses 1e-9).
    pub epsilon: f64,
}

impl InferOp for LayerNormConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(infer_layer_norm(self, inputs[0]))
    }
}

impl InferOp for LpNormConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for BatchNormConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for GroupNormConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for LrnConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}
