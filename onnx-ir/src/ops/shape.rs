//! Shape manipulation: Flatten, Reshape (shape attribute before opset 5, input after),
//! Transpose, Concat, Squeeze and Unsqueeze (axes attribute before opset 13, input after).

use super::common::{dims_product, mul_dims, normalize_axes, normalize_axis};
use super::{one, InferOp};
use super::{IntsInput, NodeCtx, Op, Parsed};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::{DType, Dim, TensorType};

pub fn parse_flatten(ctx: &NodeCtx) -> Result<Parsed> {
    let rank = ctx.input_type(0)?.rank();
    let axis = ctx.attrs.int_or("axis", 1)?;
    // Flatten's axis ranges over [-rank, rank]: axis == rank is valid.
    let axis = if axis == rank as i64 { rank } else { normalize_axis(axis, rank).map_err(|e| ctx.error(e))? };
    Ok(Parsed::new(Op::Flatten(FlattenConfig { axis }), 1))
}

pub fn infer_flatten(axis: usize, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    Ok(TensorType::new(x.dtype, vec![dims_product(&x.shape[..axis])?, dims_product(&x.shape[axis..])?]))
}

pub fn parse_reshape(ctx: &NodeCtx) -> Result<Parsed> {
    let allowzero = ctx.attrs.int_or("allowzero", 0)? != 0;
    let shape = if ctx.opset < 5 {
        ctx.attrs.ints("shape")?.ok_or_else(|| ctx.error("attribute `shape` is required"))?
    } else {
        match ctx.ints_input(1, "shape")?.ok_or_else(|| ctx.error("input `shape` is required"))? {
            IntsInput::Static(shape) => shape,
            IntsInput::Runtime { len } => {
                return Ok(Parsed::new(Op::ReshapeRuntime(ReshapeRuntimeConfig { rank: len, allowzero }), 2))
            }
        }
    };
    if allowzero && shape.contains(&0) {
        return Err(ctx.error("allowzero=1 with a 0 in the shape (an empty tensor) is not supported"));
    }
    if shape.iter().filter(|&&d| d == -1).count() > 1 || shape.iter().any(|&d| d < -1) {
        return Err(ctx.error(format!("invalid target shape {shape:?}")));
    }
    Ok(Parsed::new(Op::Reshape(ReshapeConfig { shape }), 1))
}

pub fn infer_reshape(target: &[i64], inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    let mut shape: Vec<Dim> = target
        .iter()
        .enumerate()
        .map(|(i, &d)| match d {
            0 => x.shape.get(i).cloned().ok_or_else(|| format!("shape entry {i} copies a dim the input {x} lacks")),
            -1 => Ok(Dim::Unknown),
            d => Ok(Dim::Static(d as usize)),
        })
        .collect::<Result<_, _>>()?;
    let inferred = target.iter().position(|&d| d == -1);
    let known: Vec<Dim> =
        shape.iter().enumerate().filter(|&(i, _)| Some(i) != inferred).map(|(_, d)| d.clone()).collect();
    // Both products checked: a target such as [2^62, 2^62] is no shape at all.
    match (inferred, dims_product(&x.shape)?, dims_product(&known)?) {
        (Some(pos), Dim::Static(total), Dim::Static(rest)) => {
            if rest == 0 || total % rest != 0 {
                return Err(format!("cannot reshape {x} into {target:?}"));
            }
            shape[pos] = Dim::Static(total / rest);
        }
        (None, Dim::Static(total), Dim::Static(count)) if total != count => {
            return Err(format!("cannot reshape {x} ({total} elements) into {target:?} ({count} elements)"));
        }
        _ => {}
    }
    Ok(TensorType::new(x.dtype, shape))
}

pub fn parse_transpose(ctx: &NodeCtx) -> Result<Parsed> {
    let rank = ctx.input_type(0)?.rank();
    let perm = match ctx.attrs.ints("perm")? {
        Some(p) => {
            let perm: Vec<usize> =
                p.iter().map(|&a| normalize_axis(a, rank)).collect::<Result<_, _>>().map_err(|e| ctx.error(e))?;
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            if sorted != (0..rank).collect::<Vec<_>>() {
                return Err(ctx.error(format!("perm {p:?} is not a permutation of 0..{rank}")));
            }
            perm
        }
        None => (0..rank).rev().collect(),
    };
    Ok(Parsed::new(Op::Transpose(TransposeConfig { perm }), 1))
}

pub fn infer_transpose(perm: &[usize], inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    Ok(TensorType::new(x.dtype, perm.iter().map(|&p| x.shape[p].clone()).collect()))
}

pub fn parse_concat(ctx: &NodeCtx) -> Result<Parsed> {
    let rank = ctx.input_type(0)?.rank();
    let axis = match ctx.attrs.int("axis")? {
        Some(a) => a,
        None if ctx.opset < 4 => 1,
        None => return Err(ctx.error("attribute `axis` is required")),
    };
    let axis = normalize_axis(axis, rank).map_err(|e| ctx.error(e))?;
    if ctx.inputs.iter().any(Option::is_none) {
        return Err(ctx.error("an input is missing"));
    }
    Ok(Parsed::new(Op::Concat(ConcatConfig { axis }), ctx.inputs.len()))
}

pub fn infer_concat(axis: usize, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let first = inputs[0];
    let mut shape = first.shape.clone();
    let mut total = Some(0usize);
    for t in inputs {
        if t.rank() != first.rank() || t.dtype != first.dtype {
            return Err(format!("inputs disagree: {first} and {t}"));
        }
        // Every other dim must agree (as ONNX Runtime checks at load) where both are known.
        let disagree = (0..first.rank())
            .filter(|&d| d != axis)
            .any(|d| matches!((&first.shape[d], &t.shape[d]), (Dim::Static(a), Dim::Static(b)) if a != b));
        if disagree {
            return Err(format!("inputs disagree off the concatenation axis {axis}: {first} and {t}"));
        }
        total = match (total, t.shape[axis].as_static()) {
            (Some(a), Some(b)) => Some(super::common::add_dims(a, b, "the concatenated dim")?),
            _ => None,
        };
    }
    shape[axis] = total.map_or(Dim::Unknown, Dim::Static);
    Ok(TensorType::new(first.dtype, shape))
}

/// Axes from the attribute (before opset 13) or the constant second input.
fn read_axes(ctx: &NodeCtx) -> Result<Option<Vec<i64>>> {
    if ctx.opset < 13 {
        ctx.attrs.ints("axes")
    } else {
        ctx.const_ints(1, "axes")
    }
}

pub fn parse_squeeze(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if let (true, Some(IntsInput::Runtime { len })) = (ctx.opset >= 13, ctx.ints_input(1, "axes")?) {
        return Ok(Parsed::new(Op::SqueezeRuntime(SqueezeRuntimeConfig { rank: x.rank().saturating_sub(len) }), 2));
    }
    let axes = match read_axes(ctx)? {
        Some(axes) => normalize_axes(&axes, x.rank()).map_err(|e| ctx.error(e))?,
        None => {
            // Every dim of size 1 goes: one known only at run time leaves the output rank open.
            if let Some(open) = x.shape.iter().position(|d| d.as_static().is_none()) {
                return Err(ctx.error(format!(
                    "Squeeze without axes needs a static input shape, got {x} (whether axis {open} has size 1, \
                     and so the output rank, is known only at run time)"
                )));
            }
            (0..x.rank()).filter(|&i| x.shape[i] == Dim::Static(1)).collect()
        }
    };
    for &a in &axes {
        if matches!(x.shape[a], Dim::Static(n) if n != 1) {
            return Err(ctx.error(format!("cannot squeeze axis {a} of {x}: its size is not 1")));
        }
    }
    Ok(Parsed::new(Op::Squeeze(SqueezeConfig { axes }), 1))
}

pub fn infer_squeeze(axes: &[usize], inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    let shape = x.shape.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, d)| d.clone()).collect();
    Ok(TensorType::new(x.dtype, shape))
}

pub fn parse_unsqueeze(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if let (true, Some(IntsInput::Runtime { len })) = (ctx.opset >= 13, ctx.ints_input(1, "axes")?) {
        return Ok(Parsed::new(Op::UnsqueezeRuntime(UnsqueezeRuntimeConfig { rank: x.rank() + len }), 2));
    }
    let axes = read_axes(ctx)?.ok_or_else(|| ctx.error("axes are required"))?;
    let out_rank = x.rank() + axes.len();
    let normalized = normalize_axes(&axes, out_rank).map_err(|e| ctx.error(e))?;
    if normalized.len() != axes.len() {
        return Err(ctx.error(format!("axes {axes:?} repeat an axis")));
    }
    Ok(Parsed::new(Op::Unsqueeze(UnsqueezeConfig { axes: normalized }), 1))
}

pub fn infer_unsqueeze(axes: &[usize], inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    let mut rest = x.shape.iter();
    let out_rank = x.rank() + axes.len();
    let shape = (0..out_rank)
        .map(|i| if axes.contains(&i) { Dim::Static(1) } else { rest.next().cloned().unwrap_or(Dim::Unknown) })
        .collect();
    Ok(TensorType::new(x.dtype, shape))
}

spelled_enum! {
    /// DepthToSpace's `mode`: the order of the depth axis (depth-column-row or column-row-depth).
    enum DepthOrder {
        Dcr = "DCR",
        Crd = "CRD",
    }
}

/// DepthToSpace and SpaceToDepth (DCR or CRD order; SpaceToDepth's CRD from opset 28) on
/// `[N, C, H, W]`.
pub fn parse_depth_space(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let block =
        ctx.attrs.int("blocksize")?.filter(|&b| b > 0).ok_or_else(|| ctx.error("attribute `blocksize` is required"))?
            as usize;
    if x.rank() != 4 {
        return Err(ctx.error(format!("input must be [N, C, H, W], got {x}")));
    }
    let to_space = ctx.op_type == "DepthToSpace";
    // SpaceToDepth has a `mode` from opset 28; one before is refused as unread, not taken as
    // DepthToSpace's.
    let has_mode = to_space || ctx.opset >= 28;
    let crd = has_mode && ctx.attrs.choice_or("mode", DepthOrder::Dcr)? == DepthOrder::Crd;
    Ok(Parsed::new(Op::DepthSpace(DepthSpaceConfig { block, to_space, crd }), 1))
}

pub fn infer_depth_space(block: usize, to_space: bool, x: &TensorType) -> Result<TensorType, String> {
    type Scale<'f> = &'f dyn Fn(usize) -> Result<usize, String>;
    let d = |i: usize, f: Scale| x.shape[i].as_static().map_or(Ok(Dim::Unknown), |n| f(n).map(Dim::Static));
    let b2 = mul_dims(block, block, "blocksize squared")?;
    let (div, div2) = (|n: usize| Ok(n / block), |n: usize| Ok(n / b2));
    let (mul, mul2) = (|n| mul_dims(n, block, "a spatial dim times blocksize"), |n| mul_dims(n, b2, "the channels"));
    let shape = if to_space {
        vec![x.shape[0].clone(), d(1, &div2)?, d(2, &mul)?, d(3, &mul)?]
    } else {
        vec![x.shape[0].clone(), d(1, &mul2)?, d(2, &div)?, d(3, &div)?]
    };
    Ok(TensorType::new(x.dtype, shape))
}

pub fn parse_eye_like(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    if x.rank() != 2 {
        return Err(ctx.error(format!("input must be a matrix, got {x}")));
    }
    let dtype = match ctx.attrs.int("dtype")? {
        Some(code) => crate::types::DType::from_onnx(code as i32)
            .ok_or_else(|| ctx.error(format!("dtype code {code} is not supported")))?,
        None => x.dtype,
    };
    Ok(Parsed::new(Op::EyeLike(EyeLikeConfig { k: ctx.attrs.int_or("k", 0)?, dtype }), 1))
}

/// `Squeeze` with axes computed at run time.
#[derive(Debug, Clone, PartialEq)]
pub struct SqueezeRuntimeConfig {
    /// The output rank.
    pub rank: usize,
}

/// `Unsqueeze` with axes computed at run time.
#[derive(Debug, Clone, PartialEq)]
pub struct UnsqueezeRuntimeConfig {
    /// The output rank.
    pub rank: usize,
}

/// `DepthToSpace` or `SpaceToDepth` on `[N, C, H, W]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DepthSpaceConfig {
    /// `blocksize` (required).
    pub block: usize,
    /// DepthToSpace rather than SpaceToDepth.
    pub to_space: bool,
    /// `mode` is CRD (column, row, depth) rather than the default DCR (SpaceToDepth's from
    /// opset 28).
    pub crd: bool,
}

/// `EyeLike`: ones on a diagonal of a 2-D tensor of the input's shape, zeros elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct EyeLikeConfig {
    /// `k` (default 0): the diagonal, positive above the main one.
    pub k: i64,
    /// The output type (`dtype`, default the input's).
    pub dtype: DType,
}

/// Output `[prod(dims[..axis]), prod(dims[axis..])]`.
#[derive(Debug, Clone, PartialEq)]
pub struct FlattenConfig {
    /// `axis` (default 1), normalised.
    pub axis: usize,
}

/// Target shape with ONNX's `0` (copy) and `-1` (infer) entries.
#[derive(Debug, Clone, PartialEq)]
pub struct ReshapeConfig {
    /// The `shape` input's values.
    pub shape: Vec<i64>,
}

/// Reshape to a shape read at run time (same `0`/`-1` rules), of known rank. With
/// `allowzero` a 0 is an empty dim rather than a copy of the input's.
#[derive(Debug, Clone, PartialEq)]
pub struct ReshapeRuntimeConfig {
    /// The rank of the target shape.
    pub rank: usize,
    /// `allowzero` (opset 14, default 0).
    pub allowzero: bool,
}

/// `Transpose` by `perm`.
#[derive(Debug, Clone, PartialEq)]
pub struct TransposeConfig {
    /// `perm` (default the reversed axes): output axis `i` is input axis `perm[i]`.
    pub perm: Vec<usize>,
}

/// `Concat` along `axis`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConcatConfig {
    /// `axis`, normalised.
    pub axis: usize,
}

/// Sorted, normalised axes.
#[derive(Debug, Clone, PartialEq)]
pub struct SqueezeConfig {
    /// The removed axes (size 1).
    pub axes: Vec<usize>,
}

/// Sorted axes of the output.
#[derive(Debug, Clone, PartialEq)]
pub struct UnsqueezeConfig {
    /// The inserted axes.
    pub axes: Vec<usize>,
}

impl InferOp for SqueezeRuntimeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let SqueezeRuntimeConfig { rank } = self;
        one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown; *rank]))
    }
}

impl InferOp for UnsqueezeRuntimeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let UnsqueezeRuntimeConfig { rank } = self;
        one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown; *rank]))
    }
}

impl InferOp for DepthSpaceConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let DepthSpaceConfig { block, to_space, .. } = self;
        one(infer_depth_space(*block, *to_space, inputs[0])?)
    }
}

impl InferOp for EyeLikeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let EyeLikeConfig { dtype, .. } = self;
        one(TensorType::new(*dtype, inputs[0].shape.clone()))
    }
}

impl InferOp for FlattenConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let FlattenConfig { axis } = self;
        one(infer_flatten(*axis, inputs)?)
    }
}

impl InferOp for ReshapeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let ReshapeConfig { shape } = self;
        one(infer_reshape(shape, inputs)?)
    }
}

impl InferOp for ReshapeRuntimeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let ReshapeRuntimeConfig { rank, .. } = self;
        one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown; *rank]))
    }
}

impl InferOp for TransposeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let TransposeConfig { perm } = self;
        one(infer_transpose(perm, inputs)?)
    }
}

impl InferOp for ConcatConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let ConcatConfig { axis } = self;
        one(infer_concat(*axis, inputs)?)
    }
}

impl InferOp for SqueezeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let SqueezeConfig { axes } = self;
        one(infer_squeeze(axes, inputs)?)
    }
}

impl InferOp for UnsqueezeConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let UnsqueezeConfig { axes } = self;
        one(infer_unsqueeze(axes, inputs)?)
    }
}
