//! MaxPool, AveragePool and LpPool (any number of spatial axes, every opset: ceil_mode from
//! 10, dilations for MaxPool from 10, AveragePool from 19 and LpPool from 18,
//! count_include_pad from 7; MaxPool's `Indices` output from 8), GlobalAveragePool,
//! GlobalMaxPool and GlobalLpPool (a float `p` in opset 1, an integer from 2), and MaxUnpool
//! (opsets 9, 11, 22).

use super::common::{add_dims, mul_dims, read_window, spatial_attr, window_output_type, Pads, Window};
use super::{one, InferOp};
use super::{IntsInput, NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

/// The reduction of each pooling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolKind {
    /// MaxPool: the largest value.
    Max,
    /// AveragePool: the mean.
    Average {
        /// `count_include_pad` (opset 7, default 0): explicit padding counts towards the divisor.
        count_include_pad: bool,
    },
    /// `(sum |x|^p)^(1/p)` over each window.
    Lp {
        /// `p` (default 2).
        p: u32,
    },
}

/// How MaxPool's `Indices` output numbers the input's elements: flat positions over the whole
/// `[N, C, spatial...]` input, the spatial axes row-major or column-major.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexOrder {
    /// `storage_order = 0` (the default): the last spatial axis varies fastest.
    RowMajor,
    /// `storage_order = 1`: the first spatial axis varies fastest (N and C still outermost).
    ColumnMajor,
}

/// MaxPool, AveragePool or LpPool over the spatial axes of `[N, C, spatial...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// The reduction.
    pub kind: PoolKind,
    /// Kernel, strides, dilations and explicit pads (auto_pad resolved at import).
    pub window: Window,
    /// `ceil_mode` (opset 10, default 0): output sizes round up, adding a last partial window.
    pub ceil_mode: bool,
    /// MaxPool's second output (opset 8), when the node has one: each maximum's position in
    /// the input, an int64 tensor of the output's shape.
    pub indices: Option<IndexOrder>,
}

/// The required `kernel_shape`: one positive size per spatial axis of `x`, `[N, C, spatial...]`.
fn read_kernel(ctx: &NodeCtx, x: &TensorType) -> Result<Vec<usize>> {
    let kernel = ctx.attrs.ints("kernel_shape")?.ok_or_else(|| ctx.error("attribute `kernel_shape` is required"))?;
    if kernel.is_empty() || x.rank() != kernel.len() + 2 {
        return Err(ctx.error(format!("kernel_shape {kernel:?} does not fit the input {x} ([N, C, spatial...])")));
    }
    if kernel.iter().any(|&k| k < 1) {
        return Err(ctx.error(format!("kernel_shape {kernel:?} must be positive")));
    }
    Ok(kernel.iter().map(|&k| k as usize).collect())
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    let window = read_window(ctx, read_kernel(ctx, x)?, x)?;
    // A pad as wide as the dilated kernel makes windows of padding alone (ONNX Runtime refuses
    // a pad as large as the undilated kernel at load; dilated ones are valid in ONNX's reference).
    if let Pads::Fixed(pads) = &window.pads {
        let extent = |axis: usize| (window.kernel[axis] - 1) * window.dilations[axis] + 1;
        if let Some((axis, (begin, end))) = pads.iter().enumerate().find(|(axis, (b, e))| *b.max(e) >= extent(*axis)) {
            return Err(ctx.error(format!(
                "pads ({begin}, {end}) of spatial axis {axis} must be smaller than its kernel's extent {}",
                extent(axis)
            )));
        }
    }
    let mut indices = None;
    let kind = if ctx.op_type == "MaxPool" {
        let order = match ctx.attrs.int_or("storage_order", 0)? {
            0 => IndexOrder::RowMajor,
            1 => IndexOrder::ColumnMajor,
            other => return Err(ctx.error(format!("storage_order must be 0 or 1, got {other}"))),
        };
        indices = (ctx.num_outputs > 1).then_some(order);
        PoolKind::Max
    } else if ctx.op_type == "LpPool" {
        PoolKind::Lp { p: read_p(ctx)? }
    } else {
        PoolKind::Average { count_include_pad: ctx.attrs.int_or("count_include_pad", 0)? != 0 }
    };
    let ceil_mode = ctx.attrs.int_or("ceil_mode", 0)? != 0;
    Ok(Parsed::new(Op::Pool(PoolConfig { kind, window, ceil_mode, indices }), 1))
}

/// The pooled values and, when the node has them, MaxPool's int64 indices of the same shape.
pub fn infer(c: &PoolConfig, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
    let y = window_output_type(inputs[0], inputs[0].shape[1].clone(), &c.window, c.ceil_mode)?;
    let indices = c.indices.map(|_| TensorType::new(DType::I64, y.shape.clone()));
    Ok(std::iter::once(y).chain(indices).collect())
}

/// LpPool's and GlobalLpPool's `p`: a float in opset 1 (an integral one is accepted), an
/// integer from opset 2; at least 1.
fn read_p(ctx: &NodeCtx) -> Result<u32> {
    let p = if ctx.opset < 2 {
        let p = ctx.attrs.float_or("p", 2.0)?;
        if p.fract() != 0.0 {
            return Err(ctx.error(format!("p = {p} is not an integer, which is not supported")));
        }
        p as i64
    } else {
        ctx.attrs.int_or("p", 2)?
    };
    u32::try_from(p).ok().filter(|&p| p >= 1).ok_or_else(|| ctx.error(format!("p = {p} must be at least 1")))
}

pub fn parse_global(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.input_type(0)?.rank() < 3 {
        return Err(ctx.error(format!("expected [N, C, spatial...], got {}", ctx.input_type(0)?)));
    }
    let kind = match ctx.op_type {
        "GlobalMaxPool" => PoolKind::Max,
        "GlobalLpPool" => PoolKind::Lp { p: read_p(ctx)? },
        _ => PoolKind::Average { count_include_pad: false },
    };
    Ok(Parsed::new(Op::GlobalPool(kind), 1))
}

pub fn infer_global(inputs: &[&TensorType]) -> Result<TensorType, String> {
    let x = inputs[0];
    let shape = x.shape.iter().enumerate().map(|(i, d)| if i < 2 { d.clone() } else { Dim::Static(1) }).collect();
    Ok(TensorType::new(x.dtype, shape))
}

/// MaxUnpool: `X`'s values written at their flat `I`ndices into zeros of the shape MaxPool with
/// this window reads, `[N, C, (in - 1) * stride + kernel - pad_begin - pad_end...]`; with
/// `output_shape`, that tensor then zero-padded at the end of each axis to it (as ONNX's
/// reference evaluator and the backend tests do: the indices keep addressing the unpadded one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaxUnpoolConfig {
    /// `kernel_shape` (required).
    pub kernel: Vec<usize>,
    /// `strides` per spatial axis (default 1).
    pub strides: Vec<usize>,
    /// `(begin, end)` per spatial axis (`pads`, default 0).
    pub pads: Vec<(usize, usize)>,
    /// `output_shape` (input 2), the whole output's dims, known now or read at run time.
    pub output_shape: Option<IntsInput>,
}

pub fn parse_max_unpool(ctx: &NodeCtx) -> Result<Parsed> {
    let (x, indices) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if x.dtype.kind() != Kind::Float {
        return Err(ctx.error(format!("X must be a float tensor, got {x}")));
    }
    let kernel = read_kernel(ctx, x)?;
    let spatial = kernel.len();
    if indices.dtype != DType::I64 || indices.rank() != x.rank() {
        return Err(ctx.error(format!("I must be an int64 tensor of X's rank, got {indices} for X {x}")));
    }
    let flat = spatial_attr(ctx, "pads", 2 * spatial, 0, 0)?;
    let output_shape = ctx.ints_input(2, "output_shape")?;
    if let Some(shape) = &output_shape {
        if shape.len() != x.rank() {
            return Err(ctx.error(format!("output_shape has {} values, X {x} has rank {}", shape.len(), x.rank())));
        }
    }
    let config = MaxUnpoolConfig {
        kernel,
        strides: spatial_attr(ctx, "strides", spatial, 1, 1)?,
        pads: (0..spatial).map(|i| (flat[i], flat[i + spatial])).collect(),
        output_shape,
    };
    // Static shapes are checked now, so that inference cannot fail later.
    infer_max_unpool(&config, x).map_err(|e| ctx.error(e))?;
    Ok(Parsed::new(Op::MaxUnpool(config), 3))
}

/// The length MaxPool's window reads along spatial `axis` of an unpooled input of `size`.
fn unpooled_len(c: &MaxUnpoolConfig, axis: usize, size: usize) -> Result<usize, String> {
    let steps = mul_dims(size.saturating_sub(1), c.strides[axis], "the unpooled size")?;
    let (begin, end) = c.pads[axis];
    let full = add_dims(steps, c.kernel[axis], "the unpooled size")?;
    full.checked_sub(begin.saturating_add(end)).filter(|_| size > 0).ok_or_else(|| {
        format!(
            "spatial axis {axis} of size {size} unpools to nothing with kernel {}, pads {begin}, {end}",
            c.kernel[axis]
        )
    })
}

/// `[N, C, unpooled spatial...]`, or `output_shape`, which may only add to each axis.
pub fn infer_max_unpool(c: &MaxUnpoolConfig, x: &TensorType) -> Result<TensorType, String> {
    let mut shape = x.shape[..2].to_vec();
    for (axis, d) in x.shape[2..].iter().enumerate() {
        shape.push(match d.as_static() {
            Some(size) => Dim::Static(unpooled_len(c, axis, size)?),
            None => Dim::Unknown,
        });
    }
    match c.output_shape.as_ref() {
        None => {}
        Some(IntsInput::Static(dims)) => {
            for (axis, (d, &wanted)) in shape.iter_mut().zip(dims).enumerate() {
                let wanted =
                    usize::try_from(wanted).map_err(|_| format!("output_shape {dims:?} has a negative dim"))?;
                if d.as_static().is_some_and(|n| n > wanted) {
                    return Err(format!("output_shape {dims:?} is smaller than the unpooled {d} along axis {axis}"));
                }
                *d = Dim::Static(wanted);
            }
        }
        Some(IntsInput::Runtime { .. }) => shape = vec![Dim::Unknown; x.rank()],
    }
    Ok(TensorType::new(x.dtype, shape))
}

/// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: the window's reduction over all
/// spatial dims, kept with size 1 (an average never counts padding: there is none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GlobalPoolConfig {
    /// Which reduction.
    pub kind: PoolKind,
}

impl InferOp for PoolConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        infer(self, inputs)
    }
}

impl InferOp for MaxUnpoolConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_max_unpool(self, inputs[0])?)
    }
}

impl InferOp for PoolKind {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_global(inputs)?)
    }
}
