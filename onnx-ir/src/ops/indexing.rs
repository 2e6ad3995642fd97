//! Shape-producing and indexing ops: Shape, Size, ConstantOfShape, Range, Expand, Gather,
//! Slice, Split, Tile, Trilu and CumSum. Integer-list inputs (shapes, starts, sizes) may be
//! constants or run-time tensors of known length. Shape, Size and Range of known values are
//! folded into constants.

use super::common::{
    add_dims, broadcast_shapes, checked_product, dims_product, mul_dims, normalize_axes, normalize_axis, SHAPE_LIMIT,
};
use super::{one, InferOp};
use super::{IntsInput, NodeCtx, Op, Parsed};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::tensor::TensorData;
use crate::types::{DType, Dim, Kind, TensorType};

fn i64_tensor(values: &[i64], shape: Vec<usize>) -> TensorData {
    TensorData::new(DType::I64, shape, values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

/// ONNX's clamp of a start/end attribute into `0..=dim` (negative counts from the end).
fn clamp_bound(v: i64, dim: i64) -> i64 {
    let v = if v < 0 { v + dim } else { v };
    v.clamp(0, dim)
}

pub fn parse_shape(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let rank = x.rank() as i64;
    let start = clamp_bound(ctx.attrs.int_or("start", 0)?, rank) as usize;
    let end = clamp_bound(ctx.attrs.int_or("end", rank)?, rank) as usize;
    let end = end.max(start);
    let dims: Option<Vec<i64>> = x.shape[start..end].iter().map(|d| d.as_static().map(|n| n as i64)).collect();
    match dims {
        Some(dims) => Ok(Parsed::folded(i64_tensor(&dims, vec![dims.len()]))),
        None => Ok(Parsed::new(Op::Shape(ShapeConfig { start, end }), 1)),
    }
}

pub fn parse_size(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    match x.static_shape() {
        Some(dims) => {
            let count = checked_product(dims.iter().copied())
                .ok_or_else(|| ctx.error(format!("the element count of input {x} overflows")))?;
            Ok(Parsed::folded(i64_tensor(&[count as i64], vec![])))
        }
        None => Ok(Parsed::new(Op::Size(SizeConfig), 1)),
    }
}

pub fn parse_constant_of_shape(ctx: &NodeCtx) -> Result<Parsed> {
    let shape = ctx.ints_input(0, "shape")?.ok_or_else(|| ctx.error("input `shape` is required"))?;
    let (value, dtype) = match ctx.attrs.tensor("value")? {
        Some(t) => (t.scalar_f64().ok_or_else(|| ctx.error("`value` must hold one element"))?, t.dtype),
        None => (0.0, DType::F32),
    };
    if let Some(dims) = shape.as_static() {
        if let Some(&d) = dims.iter().find(|&&d| d < 0) {
            return Err(ctx.error(format!("shape {dims:?} has a negative dimension {d}")));
        }
        if checked_product(dims.iter().map(|&d| d as usize)).is_none() {
            return Err(ctx.error(format!("the element count of shape {dims:?} overflows")));
        }
    }
    Ok(Parsed::new(Op::ConstantOfShape(ConstantOfShapeConfig { shape, value, dtype }), 1))
}

pub fn parse_range(ctx: &NodeCtx) -> Result<Parsed> {
    let dtype = ctx.input_type(0)?.dtype;
    if dtype.kind() == Kind::Bool {
        return Err(ctx.error("Range over bools is not defined"));
    }
    let scalars: Option<Vec<f64>> = (0..3)
        .map(|i| {
            ctx.inputs.get(i).copied().flatten().and_then(|v| v.constant.as_ref()).and_then(TensorData::scalar_f64)
        })
        .collect();
    if let Some(s) = scalars {
        let (start, limit, delta) = (s[0], s[1], s[2]);
        if delta == 0.0 {
            return Err(ctx.error("Range with delta 0"));
        }
        let count = ((limit - start) / delta).ceil().max(0.0);
        if !(start.is_finite() && limit.is_finite() && delta.is_finite()) {
            return Err(ctx.error(format!("Range from {start} to {limit} by {delta} has no finite length")));
        }
        // Past the fold budget the range is computed at run time, like any other large value.
        if count > crate::tensor::MAX_FOLDED_ELEMENTS as f64 {
            return Ok(Parsed::new(Op::Range(RangeConfig), 3));
        }
        let n = count as usize;
        let values: Vec<f64> = (0..n).map(|i| start + i as f64 * delta).collect();
        let data = match dtype.kind() {
            // In the inputs' own float type (a double range stays double).
            Kind::Float => TensorData::from_f64s(dtype.carrier(), vec![n], &values)
                .ok_or_else(|| ctx.error(format!("Range of {dtype}")))?,
            _ => i64_tensor(&values.iter().map(|v| *v as i64).collect::<Vec<_>>(), vec![n]),
        };
        return Ok(Parsed::folded(data));
    }
    Ok(Parsed::new(Op::Range(RangeConfig), 3))
}

pub fn parse_expand(ctx: &NodeCtx) -> Result<Parsed> {
    let shape = ctx.ints_input(1, "shape")?.ok_or_else(|| ctx.error("input `shape` is required"))?;
    Ok(Parsed::new(Op::Expand(ExpandConfig { shape }), 2))
}

pub fn infer_expand(shape: &IntsInput, x: &TensorType) -> Result<TensorType, String> {
    let target: Vec<Dim> = match shape {
        IntsInput::Static(v) => v.iter().map(|&d| Dim::Static(d.max(0) as usize)).collect(),
        IntsInput::Runtime { len } => vec![Dim::Unknown; *len],
    };
    // A target read at run time still keeps the input's dims other than 1: broadcasting
    // leaves them as they are (or fails).
    Ok(TensorType::new(x.dtype, broadcast_shapes(&x.shape, &target)?))
}

pub fn parse_gather(ctx: &NodeCtx) -> Result<Parsed> {
    let rank = ctx.input_type(0)?.rank();
    let axis = normalize_axis(ctx.attrs.int_or("axis", 0)?, rank).map_err(|e| ctx.error(e))?;
    if ctx.input_type(1)?.dtype.kind() != Kind::Int {
        return Err(ctx.error("indices must be integers"));
    }
    check_constant_indices(ctx, ctx.input_type(0)?.shape[axis].as_static())?;
    Ok(Parsed::new(Op::Gather(GatherConfig { axis }), 2))
}

/// Constant indices against a static axis of `size`: ONNX Runtime fails every run with one
/// outside `-size..size`.
fn check_constant_indices(ctx: &NodeCtx, size: Option<usize>) -> Result<()> {
    let indices = ctx.input(1)?.constant.as_ref().and_then(|data| data.to_i64s());
    let (Some(size), Some(indices)) = (size, indices) else { return Ok(()) };
    let bound = size as i64;
    match indices.iter().find(|&&i| i < -bound || i >= bound) {
        Some(i) => Err(ctx.error(format!("index {i} is out of range for an axis of size {size}"))),
        None => Ok(()),
    }
}

pub fn infer_gather(axis: usize, data: &TensorType, indices: &TensorType) -> TensorType {
    let mut shape = data.shape[..axis].to_vec();
    shape.extend(indices.shape.iter().cloned());
    shape.extend(data.shape[axis + 1..].iter().cloned());
    TensorType::new(data.dtype, shape)
}

/// Slice bounds per listed axis; `axes` default to `0..len`, `steps` to 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceConfig {
    /// Start index per listed axis (negative counts from the end; clamped to the axis).
    pub starts: IntsInput,
    /// End index (exclusive) per listed axis, same rules.
    pub ends: IntsInput,
    /// The sliced axes (negative from the end); `None` for `0..starts.len()`.
    pub axes: Option<IntsInput>,
    /// The step per listed axis (not 0; negative walks backwards); `None` for all 1.
    pub steps: Option<IntsInput>,
}

pub fn parse_slice(ctx: &NodeCtx) -> Result<Parsed> {
    let config = if ctx.opset < 10 {
        let req = |n: &str| ctx.attrs.ints(n)?.ok_or_else(|| ctx.error(format!("attribute `{n}` is required")));
        SliceConfig {
            starts: IntsInput::Static(req("starts")?),
            ends: IntsInput::Static(req("ends")?),
            axes: ctx.attrs.ints("axes")?.map(IntsInput::Static),
            steps: None,
        }
    } else {
        let req =
            |i: usize, n: &str| ctx.ints_input(i, n)?.ok_or_else(|| ctx.error(format!("input `{n}` is required")));
        SliceConfig {
            starts: req(1, "starts")?,
            ends: req(2, "ends")?,
            axes: ctx.ints_input(3, "axes")?,
            steps: ctx.ints_input(4, "steps")?,
        }
    };
    let lists = [Some(&config.ends), config.axes.as_ref(), config.steps.as_ref()];
    if let Some(other) = lists.into_iter().flatten().find(|l| l.len() != config.starts.len()) {
        return Err(ctx.error(format!(
            "starts has {} entries, but ends, axes and steps must have as many (one has {})",
            config.starts.len(),
            other.len()
        )));
    }
    if config.steps.as_ref().and_then(IntsInput::as_static).is_some_and(|s| s.contains(&0)) {
        return Err(ctx.error("slice step 0"));
    }
    Ok(Parsed::new(Op::Slice(config), ctx.inputs.len().max(1)))
}

pub fn infer_slice(c: &SliceConfig, x: &TensorType) -> Result<TensorType, String> {
    let rank = x.rank();
    let mut shape = x.shape.clone();
    let (Some(starts), Some(ends)) = (c.starts.as_static(), c.ends.as_static()) else {
        // Which axes change is unknown until run time unless `axes` is constant.
        match c.axes.as_ref().and_then(IntsInput::as_static) {
            Some(axes) => {
                for &a in axes {
                    shape[normalize_axis(a, rank)?] = Dim::Unknown;
                }
            }
            None => shape.iter_mut().for_each(|d| *d = Dim::Unknown),
        }
        return Ok(TensorType::new(x.dtype, shape));
    };
    let axes: Vec<i64> = match &c.axes {
        Some(IntsInput::Static(a)) => a.clone(),
        Some(IntsInput::Runtime { .. }) => {
            shape.iter_mut().for_each(|d| *d = Dim::Unknown);
            return Ok(TensorType::new(x.dtype, shape));
        }
        None => (0..starts.len() as i64).collect(),
    };
    let steps: Option<Vec<i64>> = match &c.steps {
        Some(s) => s.as_static().map(<[i64]>::to_vec),
        None => Some(vec![1; axes.len()]),
    };
    for (i, &a) in axes.iter().enumerate() {
        let axis = normalize_axis(a, rank)?;
        shape[axis] = match (x.shape[axis].as_static(), &steps) {
            (Some(dim), Some(steps)) => Dim::Static(slice_len(starts[i], ends[i], steps[i], dim as i64)),
            _ => Dim::Unknown,
        };
    }
    Ok(TensorType::new(x.dtype, shape))
}

/// Number of elements ONNX Slice selects on one axis of size `dim`.
pub fn slice_len(start: i64, end: i64, step: i64, dim: i64) -> usize {
    // i128: starts, ends and steps are any i64 (i64::MAX means "to the end"), so the sums and
    // the negated step below overflow in i64.
    let (start, end, step, dim) = (start as i128, end as i128, step as i128, dim as i128);
    let norm = |v: i128| if v < 0 { v + dim } else { v };
    let (start, end) = (norm(start), norm(end));
    let n = if step > 0 {
        let (s, e) = (start.clamp(0, dim), end.clamp(0, dim));
        (e - s + step - 1).div_euclid(step)
    } else {
        let (s, e) = (start.clamp(-1, dim - 1), end.clamp(-1, dim - 1));
        (s - e + (-step) - 1).div_euclid(-step)
    };
    n.max(0) as usize
}

/// How Split divides its axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitSizes {
    /// Sizes known at import (the `split` attribute, or a constant input from opset 13).
    Static(Vec<usize>),
    /// Sizes read at run time, for `count` outputs.
    Runtime {
        /// The number of outputs.
        count: usize,
    },
    /// `count` parts as equal as possible (the last one smaller).
    Equal {
        /// The number of outputs.
        count: usize,
    },
}

pub fn parse_split(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let axis = normalize_axis(ctx.attrs.int_or("axis", 0)?, x.rank()).map_err(|e| ctx.error(e))?;
    let given =
        if ctx.opset < 13 { ctx.attrs.ints("split")?.map(IntsInput::Static) } else { ctx.ints_input(1, "split")? };
    let sizes = match given {
        Some(IntsInput::Static(v)) if !v.is_empty() => {
            SplitSizes::Static(static_split(ctx, &v, x.shape[axis].as_static())?)
        }
        Some(IntsInput::Runtime { len }) if len > 0 => SplitSizes::Runtime { count: len },
        _ => {
            let count = match ctx.attrs.int("num_outputs")? {
                Some(n) if n > 0 => n as usize,
                Some(n) => return Err(ctx.error(format!("num_outputs must be positive, got {n}"))),
                None => ctx.num_outputs,
            };
            if count != ctx.num_outputs {
                return Err(ctx.error(format!("num_outputs is {count}, but the node has {} outputs", ctx.num_outputs)));
            }
            SplitSizes::Equal { count }
        }
    };
    Ok(Parsed::new(Op::Split(SplitConfig { axis, sizes }), ctx.inputs.len().clamp(1, 2)))
}

/// Constant split sizes, checked as ONNX Runtime does: none negative, one per output, adding up
/// to the axis.
fn static_split(ctx: &NodeCtx, sizes: &[i64], dim: Option<usize>) -> Result<Vec<usize>> {
    if sizes.iter().any(|&s| s < 0) {
        return Err(ctx.error(format!("split sizes must not be negative, got {sizes:?}")));
    }
    if sizes.len() != ctx.num_outputs {
        return Err(ctx.error(format!("{} split sizes for {} outputs", sizes.len(), ctx.num_outputs)));
    }
    let sizes: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
    let total = sizes.iter().try_fold(0usize, |acc, &s| add_dims(acc, s, "the sum of the split sizes"));
    match (total.map_err(|e| ctx.error(e))?, dim) {
        (total, Some(dim)) if total != dim => {
            Err(ctx.error(format!("split sizes {sizes:?} add up to {total}, the axis has {dim}")))
        }
        _ => Ok(sizes),
    }
}

pub fn infer_split(axis: usize, sizes: &SplitSizes, x: &TensorType) -> Vec<TensorType> {
    let with = |d: Dim| {
        let mut s = x.shape.clone();
        s[axis] = d;
        TensorType::new(x.dtype, s)
    };
    match sizes {
        SplitSizes::Static(v) => v.iter().map(|&n| with(Dim::Static(n))).collect(),
        SplitSizes::Runtime { count } => vec![with(Dim::Unknown); *count],
        SplitSizes::Equal { count } => match x.shape[axis].as_static() {
            Some(dim) => equal_split(dim, *count).into_iter().map(|n| with(Dim::Static(n))).collect(),
            None => vec![with(Dim::Unknown); *count],
        },
    }
}

/// ONNX's equal split: `ceil(dim / count)` each, the last part taking the rest.
pub fn equal_split(dim: usize, count: usize) -> Vec<usize> {
    let part = dim.div_ceil(count.max(1));
    (0..count).map(|i| part.min(dim.saturating_sub(i * part))).collect()
}

pub fn parse_tile(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.opset < 6 {
        // Tile-1: `tiles` copies along one `axis`, both constant scalars of the input's type.
        let scalar = |i: usize, what: &str| -> Result<i64> {
            ctx.const_input(i, what)?
                .and_then(TensorData::scalar_f64)
                .map(|v| v as i64)
                .ok_or_else(|| ctx.error(format!("`{what}` must be a constant scalar")))
        };
        let rank = ctx.input_type(0)?.rank();
        let axis = normalize_axis(scalar(2, "axis")?, rank).map_err(|e| ctx.error(e))?;
        let mut repeats = vec![1; rank];
        repeats[axis] = scalar(1, "tiles")?;
        return Ok(Parsed::new(Op::Tile(TileConfig { repeats: IntsInput::Static(repeats) }), 1));
    }
    let repeats = ctx.ints_input(1, "repeats")?.ok_or_else(|| ctx.error("input `repeats` is required"))?;
    Ok(Parsed::new(Op::Tile(TileConfig { repeats }), 2))
}

pub fn infer_tile(repeats: &IntsInput, x: &TensorType) -> Result<TensorType, String> {
    if repeats.len() != x.rank() {
        return Err(format!("{} repeats for a rank-{} input", repeats.len(), x.rank()));
    }
    let shape = x
        .shape
        .iter()
        .enumerate()
        .map(|(i, d)| match (d.as_static(), repeats.as_static()) {
            (Some(n), Some(r)) => mul_dims(n, r[i].max(0) as usize, "the tiled dim").map(Dim::Static),
            _ => Ok(Dim::Unknown),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let out = TensorType::new(x.dtype, shape);
    // ONNX Runtime's Tile fails every run past this size; a static one is refused here instead.
    if let Some(dims) = out.static_shape() {
        let bytes = dims.iter().try_fold(x.dtype.size(), |n, &d| n.checked_mul(d));
        if bytes.is_none_or(|b| b > TILE_MAX_BYTES) {
            return Err(format!("the tiled output {out} is over ONNX Runtime's Tile limit of {TILE_MAX_BYTES} bytes"));
        }
    }
    Ok(out)
}

/// ONNX Runtime's largest Tile output (its kernel refuses more).
const TILE_MAX_BYTES: usize = 1 << 32;

pub fn parse_trilu(ctx: &NodeCtx) -> Result<Parsed> {
    let k = ctx.ints_input(1, "k")?;
    Ok(Parsed::new(
        Op::Trilu(TriluConfig {
            upper: ctx.attrs.int_or("upper", 1)? != 0,
            k: k.unwrap_or(IntsInput::Static(vec![0])),
        }),
        2,
    ))
}

pub fn parse_cumsum(ctx: &NodeCtx) -> Result<Parsed> {
    let rank = ctx.input_type(0)?.rank();
    let axis = match ctx.ints_input(1, "axis")? {
        Some(IntsInput::Static(a)) if a.len() == 1 => Some(normalize_axis(a[0], rank).map_err(|e| ctx.error(e))?),
        Some(IntsInput::Runtime { .. }) => None,
        _ => return Err(ctx.error("`axis` must be a scalar")),
    };
    Ok(Parsed::new(
        Op::CumSum(CumSumConfig {
            axis,
            exclusive: ctx.attrs.int_or("exclusive", 0)? != 0,
            reverse: ctx.attrs.int_or("reverse", 0)? != 0,
            product: ctx.op_type == "CumProd",
        }),
        2,
    ))
}

pub fn parse_gather_elements(ctx: &NodeCtx) -> Result<Parsed> {
    let (data, indices) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if data.rank() != indices.rank() || indices.dtype.kind() != Kind::Int {
        return Err(ctx.error(format!("indices must be integers of the data's rank, got {data} and {indices}")));
    }
    let axis = normalize_axis(ctx.attrs.int_or("axis", 0)?, data.rank()).map_err(|e| ctx.error(e))?;
    Ok(Parsed::new(Op::GatherElements(GatherElementsConfig { axis }), 2))
}

/// ReverseSequence (opset 10): along `time_axis`, the first `sequence_lens[b]` elements of each
/// batch entry `b` (along `batch_axis`) reversed, the rest kept.
pub fn parse_reverse_sequence(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, lens) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if x.rank() < 2 {
        return Err(ctx.error(format!("the input must have rank 2 or more, got {x}")));
    }
    if lens.dtype != DType::I64 || lens.rank() != 1 {
        return Err(ctx.error(format!("sequence_lens must be a 1-D int64 tensor, got {lens}")));
    }
    let axis = |name: &str, default: i64| -> Result<usize> {
        match ctx.attrs.int_or(name, default)? {
            a @ (0 | 1) => Ok(a as usize),
            a => Err(ctx.error(format!("attribute `{name}` must be 0 or 1, got {a}"))),
        }
    };
    let (time_axis, batch_axis) = (axis("time_axis", 0)?, axis("batch_axis", 1)?);
    if time_axis == batch_axis {
        return Err(ctx.error(format!("time_axis and batch_axis are both {time_axis}")));
    }
    if let (Dim::Static(batch), Dim::Static(n)) = (&x.shape[batch_axis], &lens.shape[0]) {
        if batch != n {
            return Err(ctx.error(format!("{n} sequence lengths for a batch of {batch} ({x})")));
        }
    }
    Ok(Parsed::new(Op::ReverseSequence(ReverseSequenceConfig { time_axis }), 2))
}

pub fn parse_hardmax(ctx: &NodeCtx) -> Result<Parsed> {
    let rank = ctx.input_type(0)?.rank();
    let legacy = ctx.opset < 13;
    let axis =
        normalize_axis(ctx.attrs.int_or("axis", if legacy { 1 } else { -1 })?, rank).map_err(|e| ctx.error(e))?;
    Ok(Parsed::new(Op::Hardmax(HardmaxConfig { axis, coerce_2d: legacy && axis + 1 != rank }), 1))
}

pub fn parse_topk(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let axis = normalize_axis(ctx.attrs.int_or("axis", -1)?, x.rank()).map_err(|e| ctx.error(e))?;
    let k = if ctx.opset < 10 {
        IntsInput::Static(vec![ctx.attrs.int("k")?.ok_or_else(|| ctx.error("attribute `k` is required"))?])
    } else {
        ctx.ints_input(1, "k")?.ok_or_else(|| ctx.error("input `k` is required"))?
    };
    if k.len() != 1 {
        return Err(ctx.error(format!("k must hold one value, got {}", k.len())));
    }
    if let Some(&[k]) = k.as_static() {
        if k < 0 {
            return Err(ctx.error(format!("k must not be negative, got {k}")));
        }
        if let Some(size) = x.shape[axis].as_static().filter(|&size| k as u64 > size as u64) {
            return Err(ctx.error(format!("k = {k} is larger than axis {axis} of size {size} (input {x})")));
        }
    }
    let largest = ctx.attrs.int_or("largest", 1)? != 0;
    // `sorted=0` leaves the order unspecified, so the sorted order the generated code gives fits.
    ctx.attrs.ignore(&["sorted"]);
    Ok(Parsed::new(Op::TopK(TopKConfig { axis, k, largest }), 2))
}

pub fn infer_topk(axis: usize, k: &IntsInput, x: &TensorType) -> Vec<TensorType> {
    let mut shape = x.shape.clone();
    shape[axis] = k.as_static().and_then(<[i64]>::first).map_or(Dim::Unknown, |&k| Dim::Static(k.max(0) as usize));
    vec![TensorType::new(x.dtype, shape.clone()), TensorType::new(DType::I64, shape)]
}

pub fn parse_one_hot(ctx: &NodeCtx) -> Result<Parsed> {
    let indices = ctx.input_type(0)?;
    let axis = normalize_axis(ctx.attrs.int_or("axis", -1)?, indices.rank() + 1).map_err(|e| ctx.error(e))?;
    let depth = ctx.inputs.get(1).copied().flatten().and_then(|v| v.constant.as_ref()).and_then(TensorData::scalar_f64);
    Ok(Parsed::new(Op::OneHot(OneHotConfig { axis, depth: depth.map(|d| d as usize) }), 3))
}

pub fn infer_one_hot(axis: usize, depth: Option<usize>, indices: &TensorType, values: &TensorType) -> TensorType {
    let mut shape = indices.shape.clone();
    shape.insert(axis, depth.map_or(Dim::Unknown, Dim::Static));
    TensorType::new(values.dtype, shape)
}

/// Pad: `pads` as an attribute (before opset 11) or input, `axes` from 18; modes constant,
/// reflect and edge, and wrap from 19.
#[derive(Debug, Clone, PartialEq)]
pub struct PadConfig {
    /// `[begins..., ends...]` per padded axis (negative crops): an attribute before opset 11, input 1 since.
    pub pads: IntsInput,
    /// The padded axes (opset 18, negative from the end); `None` for all.
    pub axes: Option<IntsInput>,
    /// `mode` and, for constant, its value.
    pub mode: PadMode,
}

/// Pad's `mode` (default constant).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadMode {
    /// The value, when it is an attribute or a constant input (else read at run time).
    Constant(Option<f64>),
    /// Mirrors the input without repeating its edge.
    Reflect,
    /// Repeats the edge element.
    Edge,
    /// Wraps around: the padding before an axis repeats its end, the padding after its start.
    Wrap,
}

spelled_enum! {
    /// Pad's `mode` as spelled (the value of [`PadMode::Constant`] comes from elsewhere).
    enum PadModeName {
        Constant = "constant",
        Reflect = "reflect",
        Edge = "edge",
        Wrap = "wrap",
    }
}

pub fn parse_pad(ctx: &NodeCtx) -> Result<Parsed> {
    let mode = ctx.attrs.choice_or("mode", PadModeName::Constant)?;
    let (pads, value, axes) = if ctx.opset < 11 {
        let pads = ctx
            .attrs
            .ints("pads")?
            .or(ctx.attrs.ints("paddings")?)
            .ok_or_else(|| ctx.error("attribute `pads` is required"))?;
        (IntsInput::Static(pads), Some(ctx.attrs.float_or("value", 0.0)? as f64), None)
    } else {
        let pads = ctx.ints_input(1, "pads")?.ok_or_else(|| ctx.error("input `pads` is required"))?;
        let value = match ctx.inputs.get(2).copied().flatten() {
            None => Some(0.0),
            Some(v) => v.constant.as_ref().and_then(TensorData::scalar_f64),
        };
        (pads, value, ctx.ints_input(3, "axes")?)
    };
    let padded_axes = match &axes {
        Some(axes) => axes.len(),
        None => ctx.input_type(0)?.rank(),
    };
    if pads.len() != 2 * padded_axes {
        let of = if axes.is_some() { format!("{padded_axes} axes") } else { format!("a rank-{padded_axes} input") };
        return Err(ctx.error(format!("{} pads for {of} (expected {})", pads.len(), 2 * padded_axes)));
    }
    let mode = match mode {
        PadModeName::Constant => PadMode::Constant(value),
        PadModeName::Reflect => PadMode::Reflect,
        PadModeName::Edge => PadMode::Edge,
        // Pad-19 added `wrap`; earlier versions do not define it.
        PadModeName::Wrap if ctx.opset < 19 => {
            return Err(ctx.error(format!("pad mode `wrap` needs opset 19, the model has opset {}", ctx.opset)))
        }
        PadModeName::Wrap => PadMode::Wrap,
    };
    Ok(Parsed::new(Op::Pad(PadConfig { pads, axes, mode }), ctx.inputs.len().clamp(1, 4)))
}

pub fn infer_pad(c: &PadConfig, x: &TensorType) -> Result<TensorType, String> {
    let rank = x.rank();
    let (Some(pads), None) = (c.pads.as_static(), &c.axes) else {
        return Ok(TensorType::new(x.dtype, vec![Dim::Unknown; rank]));
    };
    let padded = |i: usize, n: usize| {
        // i128: two i64 pads and a dim cannot overflow it.
        let size = n as i128 + pads[i] as i128 + pads[i + rank] as i128;
        match usize::try_from(size.max(0)) {
            Ok(size) if size <= SHAPE_LIMIT => Ok(size),
            _ => Err(format!("padded axis {i} overflows ({n} + {} + {})", pads[i], pads[i + rank])),
        }
    };
    let shape = (0..rank)
        .map(|i| match x.shape[i].as_static() {
            Some(n) if pads.len() == 2 * rank => padded(i, n).map(Dim::Static),
            _ => Ok(Dim::Unknown),
        })
        .collect::<Result<_, _>>()?;
    Ok(TensorType::new(x.dtype, shape))
}

/// CenterCropPad (opset 18): each listed axis (all axes when `axes` is absent) centre-cropped or
/// zero-padded to its target size; an odd difference puts the extra element at the end.
pub fn parse_center_crop_pad(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.dtype.kind() == Kind::Bool {
        return Err(ctx.error(format!("CenterCropPad of a bool tensor is not supported yet, got {x}")));
    }
    let axes = match ctx.attrs.ints("axes")? {
        None => (0..x.rank()).collect(),
        Some(axes) => {
            if normalize_axes(&axes, x.rank()).map_err(|e| ctx.error(e))?.len() != axes.len() {
                return Err(ctx.error(format!("attribute `axes` {axes:?} repeats an axis")));
            }
            // In the model's order: each axis pairs with its target size.
            axes.iter()
                .map(|&a| normalize_axis(a, x.rank()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ctx.error(e))?
        }
    };
    let shape = ctx.ints_input(1, "shape")?.ok_or_else(|| ctx.error("input `shape` is required"))?;
    if shape.len() != axes.len() {
        return Err(ctx.error(format!("{} target sizes for {} axes", shape.len(), axes.len())));
    }
    if let Some(negative) = shape.as_static().and_then(|s| s.iter().find(|&&n| n < 0)) {
        return Err(ctx.error(format!("target size {negative} is negative")));
    }
    Ok(Parsed::new(Op::CenterCropPad(CenterCropPadConfig { axes, shape }), 2))
}

/// The target sizes on the listed axes (unknown when read at run time), the input's elsewhere.
pub fn infer_center_crop_pad(axes: &[usize], shape: &IntsInput, x: &TensorType) -> TensorType {
    let mut dims = x.shape.clone();
    for (i, &axis) in axes.iter().enumerate() {
        dims[axis] = match shape.as_static() {
            Some(sizes) => Dim::Static(sizes[i] as usize),
            None => Dim::Unknown,
        };
    }
    TensorType::new(x.dtype, dims)
}

/// Unique (opset 11): the distinct elements (or, along `axis`, the distinct slices), sorted
/// or in order of first occurrence.
pub fn parse_unique(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let axis = ctx.attrs.int("axis")?.map(|a| normalize_axis(a, x.rank())).transpose().map_err(|e| ctx.error(e))?;
    if axis.is_none() && x.rank() == 0 {
        return Err(ctx.error(format!("Unique of a scalar, got {x}")));
    }
    let sorted = ctx.attrs.int_or("sorted", 1)? != 0;
    Ok(Parsed::new(Op::Unique(UniqueConfig { axis, sorted }), 1))
}

/// Y (X's rank along an axis, else 1-D; its length known only at run time), then the int64
/// first-occurrence indices, inverse indices (one per element or slice of X) and counts.
pub fn infer_unique(axis: Option<usize>, x: &TensorType) -> Vec<TensorType> {
    let (y, sliced) = match axis {
        Some(axis) => {
            let mut dims = x.shape.clone();
            dims[axis] = Dim::Unknown;
            (dims, x.shape[axis].clone())
        }
        None => (vec![Dim::Unknown], dims_product(&x.shape).unwrap_or(Dim::Unknown)),
    };
    let per_unique = TensorType::new(DType::I64, vec![Dim::Unknown]);
    vec![TensorType::new(x.dtype, y), per_unique.clone(), TensorType::new(DType::I64, vec![sliced]), per_unique]
}

spelled_enum! {
    /// How Scatter* combines an update with the existing value.
    pub enum ScatterReduction {
        None = "none",
        Add = "add",
        Mul = "mul",
        Max = "max",
        Min = "min",
    }
}

/// ScatterElements (and the older Scatter) along `axis`, and ScatterND.
pub fn parse_scatter(ctx: &NodeCtx) -> Result<Parsed> {
    let data = ctx.input_type(0)?;
    if ctx.input_type(1)?.dtype.kind() != Kind::Int {
        return Err(ctx.error("indices must be integers"));
    }
    let reduction = ctx.attrs.choice_or("reduction", ScatterReduction::None)?;
    let op = if ctx.op_type == "ScatterND" {
        Op::ScatterNd(ScatterNdConfig { reduction })
    } else {
        Op::Scatter(ScatterConfig {
            axis: normalize_axis(ctx.attrs.int_or("axis", 0)?, data.rank()).map_err(|e| ctx.error(e))?,
            reduction,
        })
    };
    Ok(Parsed::new(op, 3))
}

/// GatherND: the last axis of `indices` (static length k) indexes `k` data axes after the
/// `batch_dims` leading axes that data and indices share.
pub fn parse_gather_nd(ctx: &NodeCtx) -> Result<Parsed> {
    let (data, indices) = (ctx.input_type(0)?, ctx.input_type(1)?);
    let depth = match indices.shape.last().and_then(Dim::as_static) {
        Some(depth) if indices.dtype.kind() == Kind::Int => depth,
        _ => return Err(ctx.error(format!("indices must be integers with a static last dim, got {indices}"))),
    };
    let batch_dims = ctx.attrs.int_or("batch_dims", 0)?;
    let batch_dims = usize::try_from(batch_dims)
        .ok()
        .filter(|&b| b < data.rank().min(indices.rank()))
        .ok_or_else(|| ctx.error(format!("batch_dims {batch_dims} is not below the ranks of {data} and {indices}")))?;
    if depth > data.rank() - batch_dims {
        return Err(ctx.error(format!(
            "indices of depth {depth} after {batch_dims} batch dims index more axes than data {data} has"
        )));
    }
    for axis in 0..batch_dims {
        if let (Some(a), Some(b)) = (data.shape[axis].as_static(), indices.shape[axis].as_static()) {
            if a != b {
                return Err(ctx.error(format!("batch axis {axis} differs: data {data}, indices {indices}")));
            }
        }
    }
    Ok(Parsed::new(Op::GatherNd(GatherNdConfig { batch_dims }), 2))
}

/// The index dims but the last, then the data dims past the batch and indexed ones.
pub fn infer_gather_nd(batch_dims: usize, data: &TensorType, indices: &TensorType) -> TensorType {
    let depth = indices.shape.last().and_then(Dim::as_static).unwrap_or(0);
    let mut shape = indices.shape[..indices.rank() - 1].to_vec();
    shape.extend(data.shape.iter().skip(batch_dims + depth).cloned());
    TensorType::new(data.dtype, shape)
}

/// Compress (opsets 9 and 11): the slices along `axis` (of the flattened input when absent)
/// where the 1-D bool condition holds; a shorter condition leaves the rest out.
pub fn parse_compress(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, condition) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if condition.dtype != DType::Bool || condition.rank() != 1 {
        return Err(ctx.error(format!("condition must be a 1-D bool tensor, got {condition}")));
    }
    let axis = match ctx.attrs.int("axis")? {
        Some(axis) => Some(normalize_axis(axis, x.rank()).map_err(|e| ctx.error(e))?),
        None => None,
    };
    Ok(Parsed::new(Op::Compress(CompressConfig { axis }), 2))
}

/// The selected axis (or the flattened input) has a length known at run time only.
pub fn infer_compress(axis: Option<usize>, x: &TensorType) -> TensorType {
    let shape = match axis {
        Some(axis) => {
            let mut shape = x.shape.clone();
            shape[axis] = Dim::Unknown;
            shape
        }
        None => vec![Dim::Unknown],
    };
    TensorType::new(x.dtype, shape)
}

/// NonZero (opsets 9 and 13): the int64 `[rank, count]` coordinates of the non-zero elements,
/// in row-major order.
pub fn parse_non_zero(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.rank() == 0 {
        return Err(ctx.error(format!("NonZero of a scalar is not supported yet, got {x}")));
    }
    Ok(Parsed::new(Op::NonZero(NonZeroConfig), 1))
}

/// TensorScatter (opset 24): `update` written into a copy of `past_cache` along `axis` (not the
/// batch axis), from each batch row's `write_indices` entry (0 when absent), wrapping around
/// the axis when `circular`.
pub fn parse_tensor_scatter(ctx: &NodeCtx) -> Result<Parsed> {
    let (cache, update) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if cache.rank() != update.rank() || cache.dtype != update.dtype {
        return Err(ctx.error(format!("past_cache {cache} and update {update} differ in rank or type")));
    }
    let axis = normalize_axis(ctx.attrs.int_or("axis", -2)?, cache.rank()).map_err(|e| ctx.error(e))?;
    if axis == 0 {
        return Err(ctx.error("axis 0 is the batch axis, which TensorScatter cannot write along"));
    }
    let circular = match ctx.attrs.string("mode")?.as_deref() {
        None | Some("linear") => false,
        Some("circular") => true,
        Some(other) => return Err(ctx.error(format!("mode `{other}` is not one of linear, circular"))),
    };
    Ok(Parsed::new(Op::TensorScatter(TensorScatterConfig { axis, circular }), ctx.inputs.len()))
}

/// Run-time `Shape` of dims `start..end` (static shapes are folded at import).
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeConfig {
    /// The first dim (`start`, default 0), clamped to the rank.
    pub start: usize,
    /// One past the last dim (`end`, default the rank), clamped.
    pub end: usize,
}

/// Run-time `Size`: the element count, an int64 scalar (static shapes are folded at import).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeConfig;

/// `ConstantOfShape`: a tensor of `shape` filled with `value`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstantOfShapeConfig {
    /// The output shape (input 0).
    pub shape: IntsInput,
    /// The fill value (`value`'s one element, default 0).
    pub value: f64,
    /// The element type of `value` (default f32).
    pub dtype: DType,
}

/// `Range(start, limit, delta)`: `ceil((limit - start) / delta)` elements from `start` by `delta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeConfig;

/// `Expand(input, shape)`: numpy broadcast of the input to `shape`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandConfig {
    /// The target shape (input 1).
    pub shape: IntsInput,
}

/// `Gather(data, indices)`: slices of `data` along `axis` picked by `indices` (negatives from the end).
#[derive(Debug, Clone, PartialEq)]
pub struct GatherConfig {
    /// `axis` (default 0), normalised.
    pub axis: usize,
}

/// `Split` into several outputs along `axis`.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitConfig {
    /// `axis` (default 0), normalised.
    pub axis: usize,
    /// The output sizes along `axis`.
    pub sizes: SplitSizes,
}

/// `Tile(input, repeats)`: the input repeated `repeats[i]` times along axis `i`.
#[derive(Debug, Clone, PartialEq)]
pub struct TileConfig {
    /// Per-axis repeat counts (input 1).
    pub repeats: IntsInput,
}

/// `Trilu` (opset 14): the upper or lower triangle of the last two dims, the rest zeroed.
#[derive(Debug, Clone, PartialEq)]
pub struct TriluConfig {
    /// `upper` (default 1).
    pub upper: bool,
    /// The diagonal offset `k` (input 1, default 0): positive above the main diagonal.
    pub k: IntsInput,
}

/// `axis` is `None` when it is only known at run time.
#[derive(Debug, Clone, PartialEq)]
pub struct CumSumConfig {
    /// The axis (input 1), normalised.
    pub axis: Option<usize>,
    /// `exclusive` (default 0): each output excludes its own element.
    pub exclusive: bool,
    /// `reverse` (default 0): accumulate from the end.
    pub reverse: bool,
    /// CumProd (opset 26) rather than CumSum.
    pub product: bool,
}

/// `Hardmax`: 1 at the first maximum along `axis`, 0 elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct HardmaxConfig {
    /// `axis` (default -1 from opset 13, 1 before), normalised.
    pub axis: usize,
    /// Before opset 13: over all dims from `axis` on, flattened, instead of `axis` alone.
    pub coerce_2d: bool,
}

/// `TopK(x, k)`: the `k` largest (or smallest) values along `axis`, sorted, and their int64 indices.
#[derive(Debug, Clone, PartialEq)]
pub struct TopKConfig {
    /// `axis` (default -1), normalised.
    pub axis: usize,
    /// `k` (an attribute before opset 10, input 1 since).
    pub k: IntsInput,
    /// `largest` (opset 11, default 1).
    pub largest: bool,
}

/// `OneHot(indices, depth, values)`: `values[1]` where the new axis's index is the class, else `values[0]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OneHotConfig {
    /// Where the class axis goes in the output (`axis`, default -1), normalised.
    pub axis: usize,
    /// `depth` when known at import; `None` when read at run time.
    pub depth: Option<usize>,
}

/// `ReverseSequence(input, sequence_lens)`: the first `sequence_lens[b]` elements of each
/// batch entry reversed along the time axis; the batch axis is the other one of 0 and 1.
#[derive(Debug, Clone, PartialEq)]
pub struct ReverseSequenceConfig {
    /// `time_axis` (default 0), 0 or 1.
    pub time_axis: usize,
}

/// `Compress(data, condition)` along `axis`, or over the flattened data when `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressConfig {
    /// `axis`, normalised; `None` to flatten the data first.
    pub axis: Option<usize>,
}

/// The `[rank, count]` coordinates of the non-zero elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonZeroConfig;

/// Outputs: the distinct elements (or slices along `axis`), first-occurrence indices,
/// inverse indices and counts.
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueConfig {
    /// `axis`, normalised; `None` for the flattened elements.
    pub axis: Option<usize>,
    /// `sorted` (default 1): ascending order rather than order of first occurrence.
    pub sorted: bool,
}

/// Listed axes (normalised, in the model's order) centre-cropped or zero-padded to `shape`.
#[derive(Debug, Clone, PartialEq)]
pub struct CenterCropPadConfig {
    /// The cropped or padded axes (`axes`, default all), normalised.
    pub axes: Vec<usize>,
    /// The target size per listed axis (input 1).
    pub shape: IntsInput,
}

/// `GatherElements(data, indices)`: `data` indexed along `axis` by `indices`, elementwise.
#[derive(Debug, Clone, PartialEq)]
pub struct GatherElementsConfig {
    /// `axis` (default 0), normalised.
    pub axis: usize,
}

/// GatherND after `batch_dims` shared leading axes.
#[derive(Debug, Clone, PartialEq)]
pub struct GatherNdConfig {
    /// `batch_dims` (opset 12, default 0).
    pub batch_dims: usize,
}

/// `ScatterElements` (and Scatter, opsets 9 and 10): `updates` written into `data` along `axis`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterConfig {
    /// `axis` (default 0), normalised.
    pub axis: usize,
    /// `reduction` (opset 16, default none): how an update combines with the value it lands on.
    pub reduction: ScatterReduction,
}

/// `ScatterND(data, indices, updates)`: slices of `updates` written at index tuples.
#[derive(Debug, Clone, PartialEq)]
pub struct ScatterNdConfig {
    /// `reduction` (opset 16, default none).
    pub reduction: ScatterReduction,
}

/// `TensorScatter(past_cache, update, write_indices?)` along `axis`.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorScatterConfig {
    /// The sequence axis written (`axis`, default -2), normalised.
    pub axis: usize,
    /// `mode = "circular"`: write positions wrap around the axis.
    pub circular: bool,
}

impl InferOp for ShapeConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let ShapeConfig { start, end } = self;
        one(TensorType::from_static(DType::I64, &[end - start]))
    }
}

impl InferOp for SizeConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(DType::I64, vec![]))
    }
}

impl InferOp for ConstantOfShapeConfig {
    fn infer_outputs(&self, _: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let ConstantOfShapeConfig { shape, dtype, .. } = self;
        one(TensorType::new(
            *dtype,
            match shape {
                IntsInput::Static(v) => v.iter().map(|&d| Dim::Static(d.max(0) as usize)).collect(),
                IntsInput::Runtime { len } => vec![Dim::Unknown; *len],
            },
        ))
    }
}

impl InferOp for RangeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown]))
    }
}

impl InferOp for ExpandConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let ExpandConfig { shape } = self;
        one(infer_expand(shape, inputs[0])?)
    }
}

impl InferOp for GatherConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let GatherConfig { axis } = self;
        one(infer_gather(*axis, inputs[0], inputs[1]))
    }
}

impl InferOp for SliceConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_slice(self, inputs[0])?)
    }
}

impl InferOp for SplitConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let SplitConfig { axis, sizes } = self;
        Ok(infer_split(*axis, sizes, inputs[0]))
    }
}

impl InferOp for TileConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let TileConfig { repeats } = self;
        one(infer_tile(repeats, inputs[0])?)
    }
}

impl InferOp for TriluConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for CumSumConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for ReverseSequenceConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for HardmaxConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for TopKConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let TopKConfig { axis, k, .. } = self;
        Ok(infer_topk(*axis, k, inputs[0]))
    }
}

impl InferOp for OneHotConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let OneHotConfig { axis, depth } = self;
        one(infer_one_hot(*axis, *depth, inputs[0], inputs[inputs.len() - 1]))
    }
}

impl InferOp for PadConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_pad(self, inputs[0])?)
    }
}

impl InferOp for UniqueConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let UniqueConfig { axis, .. } = self;
        Ok(infer_unique(*axis, inputs[0]))
    }
}

impl InferOp for CenterCropPadConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let CenterCropPadConfig { axes, shape } = self;
        one(infer_center_crop_pad(axes, shape, inputs[0]))
    }
}

impl InferOp for CompressConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let CompressConfig { axis } = self;
        one(infer_compress(*axis, inputs[0]))
    }
}

impl InferOp for NonZeroConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(DType::I64, vec![Dim::Static(inputs[0].rank()), Dim::Unknown]))
    }
}

impl InferOp for TensorScatterConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for GatherNdConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let GatherNdConfig { batch_dims } = self;
        one(infer_gather_nd(*batch_dims, inputs[0], inputs[1]))
    }
}

impl InferOp for ScatterConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for ScatterNdConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for GatherElementsConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(TensorType::new(inputs[0].dtype, inputs[1].shape.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 14): i64 extremes overflowed the slice arithmetic.
    #[test]
    fn slice_len_of_extreme_bounds_and_steps() {
        assert_eq!(slice_len(0, i64::MAX, i64::MAX, 8), 1);
        assert_eq!(slice_len(i64::MAX, i64::MIN, i64::MIN, 8), 1);
        assert_eq!(slice_len(i64::MIN, i64::MAX, 1, 8), 8);
        assert_eq!(slice_len(-1, i64::MIN, -1, 8), 8);
        assert_eq!(slice_len(1, 7, 2, 8), 3);
    }

    #[test]
    fn equal_split_never_divides_by_zero() {
        assert_eq!(equal_split(5, 0), Vec::<usize>::new());
        assert_eq!(equal_split(5, 2), vec![3, 2]);
    }
}
