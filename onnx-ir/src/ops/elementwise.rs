//! Elementwise ops: Add/Sub/Mul/Div (numpy and pre-opset-7 broadcasting), activations
//! (Relu, Sigmoid, Tanh, LeakyRelu) and Clip (attributes before opset 11, inputs after).

use super::common::{broadcast_shapes, fmt_dims};
use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};
pub use onnx_op_types::E8M0Rounding;

/// An elementwise op of two tensors (numpy broadcasting), named after its ONNX op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `A + B`.
    Add,
    /// `A - B`.
    Sub,
    /// `A * B`.
    Mul,
    /// `A / B`.
    Div,
    /// `A ^ B`.
    Pow,
    /// `fmod = 1`: the sign follows the dividend (C fmod); otherwise the divisor (Python %).
    Mod {
        /// Whether ONNX's `fmod` attribute is 1 (default 0).
        fmod: bool,
    },
    /// `A == B`, a bool tensor.
    Equal,
    /// `A < B`, a bool tensor.
    Less,
    /// `A <= B`, a bool tensor (opset 12).
    LessOrEqual,
    /// `A > B`, a bool tensor.
    Greater,
    /// `A >= B`, a bool tensor (opset 12).
    GreaterOrEqual,
    /// Logical and of bool tensors.
    And,
    /// Logical or of bool tensors.
    Or,
    /// Logical exclusive or of bool tensors.
    Xor,
    /// `A << B` or `A >> B` on unsigned integers (opset 11), signed ones too from opset 28 (an
    /// arithmetic right shift; a negative or too large amount gives the sign fill).
    BitShift {
        /// Whether `direction` is `"LEFT"` (it is required).
        left: bool,
    },
    /// Bitwise and of integers (opset 18).
    BitwiseAnd,
    /// Bitwise or of integers (opset 18).
    BitwiseOr,
    /// Bitwise exclusive or of integers (opset 18).
    BitwiseXor,
    /// `x` where `x >= 0`, else `slope * x` (`B` is the slope, broadcast to `A`).
    PRelu,
}

spelled_enum! {
    /// BitShift's `direction`.
    enum ShiftDirection {
        Left = "LEFT",
        Right = "RIGHT",
    }
}

impl BinaryOp {
    /// The op of a binary node from its op type (and Mod's `fmod`, BitShift's `direction`).
    pub fn from_op_type(ctx: &NodeCtx) -> Result<Self> {
        Ok(match ctx.op_type {
            "Add" => Self::Add,
            "Sub" => Self::Sub,
            "Mul" => Self::Mul,
            "Div" => Self::Div,
            "Pow" => Self::Pow,
            "Mod" => Self::Mod { fmod: ctx.attrs.int_or("fmod", 0)? != 0 },
            "Equal" => Self::Equal,
            "Less" => Self::Less,
            "LessOrEqual" => Self::LessOrEqual,
            "Greater" => Self::Greater,
            "GreaterOrEqual" => Self::GreaterOrEqual,
            "And" => Self::And,
            "Or" => Self::Or,
            "Xor" => Self::Xor,
            "BitShift" => match ctx.attrs.choice::<ShiftDirection>("direction")? {
                Some(direction) => Self::BitShift { left: direction == ShiftDirection::Left },
                None => return Err(ctx.error("attribute `direction` is required")),
            },
            "BitwiseAnd" => Self::BitwiseAnd,
            "BitwiseOr" => Self::BitwiseOr,
            "BitwiseXor" => Self::BitwiseXor,
            "PRelu" => Self::PRelu,
            other => return Err(ctx.error(format!("`{other}` is not a binary op"))),
        })
    }

    /// Comparisons and logic produce bool tensors.
    pub fn yields_bool(self) -> bool {
        matches!(
            self,
            Self::Equal
                | Self::Less
                | Self::LessOrEqual
                | Self::Greater
                | Self::GreaterOrEqual
                | Self::And
                | Self::Or
                | Self::Xor
        )
    }
}

/// A binary op and how its operands line up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryConfig {
    /// The operation.
    pub op: BinaryOp,
    /// Pre-opset-7 `broadcast=1` with an `axis` that differs from numpy's suffix alignment:
    /// the right operand's dims line up with the left operand's starting at this axis.
    pub legacy_axis: Option<usize>,
}

pub fn parse_binary(ctx: &NodeCtx) -> Result<Parsed> {
    let op = BinaryOp::from_op_type(ctx)?;
    let kind = ctx.input_type(0)?.dtype.kind();
    let logic = matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor);
    let bits =
        matches!(op, BinaryOp::BitShift { .. } | BinaryOp::BitwiseAnd | BinaryOp::BitwiseOr | BinaryOp::BitwiseXor);
    let fits = if logic {
        kind == Kind::Bool
    } else if bits {
        kind == Kind::Int
    } else {
        kind != Kind::Bool || op == BinaryOp::Equal
    };
    if !fits || (op == BinaryOp::PRelu && kind != Kind::Float) {
        return Err(ctx.error(format!("{} on {} tensors is not supported", ctx.op_type, ctx.input_type(0)?.dtype)));
    }
    if kind == Kind::Int && matches!(op, BinaryOp::Div | BinaryOp::Mod { .. }) {
        check_constant_divisor(ctx)?;
    }
    let mut legacy_axis = None;
    if ctx.opset < 7 && ctx.attrs.int_or("broadcast", 0)? == 1 {
        let (a, b) = (ctx.input_type(0)?.rank(), ctx.input_type(1)?.rank());
        if b > a {
            return Err(ctx.error(format!("legacy broadcast needs rank(B) <= rank(A), got {b} > {a}")));
        }
        let axis = match ctx.attrs.int("axis")? {
            Some(axis) => super::common::normalize_axis(axis, a.max(1)).map_err(|e| ctx.error(e))?,
            None => a - b,
        };
        if axis + b > a {
            return Err(ctx.error(format!("legacy broadcast axis {axis} does not fit rank {b} into rank {a}")));
        }
        legacy_axis = (axis != a - b).then_some(axis);
    } else if op == BinaryOp::PRelu {
        legacy_axis = prelu_channel_axis(ctx)?;
    } else if ctx.opset < 7 {
        // Without `broadcast=1` the shapes must already agree, which leaves `axis` nothing to align.
        ctx.attrs.ignore(&["axis"]);
    }
    Ok(Parsed::new(Op::Binary(BinaryConfig { op, legacy_axis }), 2))
}

/// An integer Div or Mod by a constant holding a zero, which ONNX Runtime refuses at load (a
/// divisor known only at run time fails `forward` there, as the kernel does in ONNX Runtime).
fn check_constant_divisor(ctx: &NodeCtx) -> Result<()> {
    let divisor = ctx.input(1)?;
    match divisor.constant.as_ref().and_then(|data| data.to_i64s()) {
        Some(values) if values.contains(&0) => Err(ctx.error(format!(
            "integer {} by zero: the divisor `{}` is a constant holding 0",
            if ctx.op_type == "Mod" { "modulo" } else { "division" },
            divisor.name
        ))),
        _ => Ok(()),
    }
}

/// PRelu before opset 7 (Caffe2's): a 1-D slope of one value per channel applies along axis 1.
/// A slope that numpy broadcasting already fits (one value, the input's shape, or a length that
/// differs from a static channel count) keeps numpy's alignment.
fn prelu_channel_axis(ctx: &NodeCtx) -> Result<Option<usize>> {
    let (x, slope) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if ctx.opset >= 7 || slope.rank() != 1 || x.rank() < 3 {
        return Ok(None);
    }
    Ok(match (&slope.shape[0], &x.shape[1]) {
        (Dim::Static(n), Dim::Static(c)) if *n > 1 && n != c => None,
        (Dim::Static(n), _) if *n > 1 => Some(1),
        _ => None,
    })
}

/// The right operand's shape padded with 1s to line up at `axis` (legacy broadcasting).
pub fn legacy_aligned(b: &[Dim], axis: usize, rank: usize) -> Vec<Dim> {
    let mut out = vec![Dim::Static(1); rank];
    out[axis..axis + b.len()].clone_from_slice(b);
    out
}

pub fn infer_binary(c: &BinaryConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let (a, b) = (inputs[0], inputs[1]);
    if a.dtype != b.dtype && c.op != BinaryOp::Pow {
        return Err(format!("operand types differ: {a} and {b}"));
    }
    let b_shape = match c.legacy_axis {
        Some(axis) => legacy_aligned(&b.shape, axis, a.rank()),
        None => b.shape.clone(),
    };
    let shape = broadcast_shapes(&a.shape, &b_shape).map_err(|e| match c.legacy_axis {
        // The shapes in `e` are the aligned ones: say where the right one came from.
        Some(axis) => format!("{e} (the right operand {} aligned at axis {axis})", fmt_dims(&b.shape)),
        None => e,
    })?;
    let dtype = if c.op.yields_bool() { DType::Bool } else { a.dtype };
    Ok(TensorType::new(dtype, shape))
}

/// Elementwise functions of one tensor, with their attributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnaryOp {
    /// `max(0, x)`.
    Relu,
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `x * sigmoid(x)`: Swish (opset 24) with `alpha` 1, and made by the `fuse_silu` pass from
    /// Sigmoid + Mul.
    Silu,
    /// `x * sigmoid(alpha * x)`, Swish with another `alpha`.
    Swish {
        /// ONNX's `alpha` (default 1.0).
        alpha: f64,
    },
    /// `tanh(x)`.
    Tanh,
    /// `x` where `x >= 0`, else `alpha * x`.
    LeakyRelu {
        /// ONNX's `alpha` (default 0.01).
        alpha: f64,
    },
    /// `|x|`.
    Abs,
    /// `-x`.
    Neg,
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Square root.
    Sqrt,
    /// `1 / x`.
    Reciprocal,
    /// Rounds toward +inf.
    Ceil,
    /// Rounds toward -inf.
    Floor,
    /// Rounds to the nearest integer, halves to even.
    Round,
    /// Sine (radians).
    Sin,
    /// Cosine (radians).
    Cos,
    /// Tangent (radians).
    Tan,
    /// Arcsine (opset 7).
    Asin,
    /// Arccosine (opset 7).
    Acos,
    /// Arctangent (opset 7).
    Atan,
    /// Hyperbolic sine (opset 9).
    Sinh,
    /// Hyperbolic cosine (opset 9).
    Cosh,
    /// Inverse hyperbolic sine (opset 9).
    Asinh,
    /// Inverse hyperbolic cosine (opset 9).
    Acosh,
    /// Inverse hyperbolic tangent (opset 9).
    Atanh,
    /// The error function (opset 9).
    Erf,
    /// -1, 0 or 1 by the sign of `x` (opset 9).
    Sign,
    /// `ln(1 + e^x)`.
    Softplus,
    /// `x / (1 + |x|)`.
    Softsign,
    /// `x` where `x > 0`, else `alpha * (e^x - 1)`.
    Elu {
        /// ONNX's `alpha` (default 1.0).
        alpha: f64,
    },
    /// `gamma * x` where `x > 0`, else `gamma * alpha * (e^x - 1)`.
    Selu {
        /// ONNX's `alpha` (default 1.67326).
        alpha: f64,
        /// ONNX's `gamma` (default 1.0507).
        gamma: f64,
    },
    /// `max(0, x) + min(0, alpha * (e^(x / alpha) - 1))` (opset 12).
    Celu {
        /// ONNX's `alpha` (default 1.0).
        alpha: f64,
    },
    /// `clamp(alpha * x + beta, 0, 1)`.
    HardSigmoid {
        /// ONNX's `alpha` (default 0.2).
        alpha: f64,
        /// ONNX's `beta` (default 0.5).
        beta: f64,
    },
    /// `x * clamp(x / 6 + 1/2, 0, 1)` (opset 14).
    HardSwish,
    /// `x` raised to `min`, then lowered to `max` (numpy's order): a Clip of constant bounds,
    /// made by the `fuse_conv_activation` pass when it joins a Conv (ReLU6 is 0 and 6).
    Clamp {
        /// The lower bound.
        min: f64,
        /// The upper bound.
        max: f64,
    },
    /// `x * tanh(ln(1 + e^x))` (opset 18).
    Mish,
    /// `x * Φ(x)`, Φ the standard normal CDF (opset 20).
    Gelu {
        /// Whether `approximate` is `"tanh"` (the tanh approximation of Φ) rather than `"none"`.
        tanh: bool,
    },
    /// `x` where `x > alpha`, else 0 (opset 10).
    ThresholdedRelu {
        /// ONNX's `alpha` (default 1.0).
        alpha: f64,
    },
    /// `x - bias` where `x > lambd`, `x + bias` where `x < -lambd`, else 0 (opset 9).
    Shrink {
        /// ONNX's `bias` (default 0).
        bias: f64,
        /// ONNX's `lambd` (default 0.5).
        lambd: f64,
    },
    /// Whether each element is NaN, a bool tensor (opset 9).
    IsNaN,
    /// Whether each element is an infinity of a detected sign, a bool tensor (opset 10).
    IsInf {
        /// ONNX's `detect_positive` (default 1).
        positive: bool,
        /// ONNX's `detect_negative` (default 1).
        negative: bool,
    },
    /// Logical not of a bool tensor.
    Not,
    /// Bitwise not of integers (opset 18).
    BitwiseNot,
}

impl UnaryOp {
    /// Whether the op is defined on integer tensors too (the rest need floats).
    pub fn accepts_int(self) -> bool {
        matches!(self, Self::Relu | Self::Abs | Self::Neg | Self::Sign | Self::Ceil | Self::Floor | Self::Round)
    }
}

spelled_enum! {
    /// Gelu's `approximate`.
    enum GeluApproximation {
        None = "none",
        Tanh = "tanh",
    }
}

pub fn parse_unary(ctx: &NodeCtx) -> Result<Parsed> {
    let a = &ctx.attrs;
    let f = |name: &str, default: f32| -> Result<f64> { Ok(a.float_or(name, default)? as f64) };
    let op = match ctx.op_type {
        "Relu" => UnaryOp::Relu,
        "Sigmoid" => UnaryOp::Sigmoid,
        "Tanh" => UnaryOp::Tanh,
        "LeakyRelu" => UnaryOp::LeakyRelu { alpha: f("alpha", 0.01)? },
        "Abs" => UnaryOp::Abs,
        "Neg" => UnaryOp::Neg,
        "Exp" => UnaryOp::Exp,
        "Log" => UnaryOp::Log,
        "Sqrt" => UnaryOp::Sqrt,
        "Reciprocal" => UnaryOp::Reciprocal,
        "Ceil" => UnaryOp::Ceil,
        "Floor" => UnaryOp::Floor,
        "Round" => UnaryOp::Round,
        "Sin" => UnaryOp::Sin,
        "Cos" => UnaryOp::Cos,
        "Tan" => UnaryOp::Tan,
        "Asin" => UnaryOp::Asin,
        "Acos" => UnaryOp::Acos,
        "Atan" => UnaryOp::Atan,
        "Sinh" => UnaryOp::Sinh,
        "Cosh" => UnaryOp::Cosh,
        "Asinh" => UnaryOp::Asinh,
        "Acosh" => UnaryOp::Acosh,
        "Atanh" => UnaryOp::Atanh,
        "Erf" => UnaryOp::Erf,
        "Sign" => UnaryOp::Sign,
        "Softplus" => UnaryOp::Softplus,
        "Softsign" => UnaryOp::Softsign,
        "Elu" => UnaryOp::Elu { alpha: f("alpha", 1.0)? },
        "Selu" => UnaryOp::Selu { alpha: f("alpha", 1.673_263_2)?, gamma: f("gamma", 1.050_701)? },
        "Celu" => UnaryOp::Celu { alpha: f("alpha", 1.0)? },
        "HardSigmoid" => UnaryOp::HardSigmoid { alpha: f("alpha", 0.2)?, beta: f("beta", 0.5)? },
        "HardSwish" => UnaryOp::HardSwish,
        "Swish" => {
            let alpha = f("alpha", 1.0)?;
            if alpha == 1.0 {
                UnaryOp::Silu
            } else {
                UnaryOp::Swish { alpha }
            }
        }
        "Mish" => UnaryOp::Mish,
        "Gelu" => {
            UnaryOp::Gelu { tanh: a.choice_or("approximate", GeluApproximation::None)? == GeluApproximation::Tanh }
        }
        "ThresholdedRelu" => UnaryOp::ThresholdedRelu { alpha: f("alpha", 1.0)? },
        "Shrink" => UnaryOp::Shrink { bias: f("bias", 0.0)?, lambd: f("lambd", 0.5)? },
        "IsNaN" => UnaryOp::IsNaN,
        "IsInf" => UnaryOp::IsInf {
            positive: a.int_or("detect_positive", 1)? != 0,
            negative: a.int_or("detect_negative", 1)? != 0,
        },
        "Not" => UnaryOp::Not,
        "BitwiseNot" => UnaryOp::BitwiseNot,
        other => return Err(ctx.error(format!("`{other}` is not an elementwise function"))),
    };
    let kind = ctx.input_type(0)?.dtype.kind();
    let fits = match op {
        UnaryOp::Not => kind == Kind::Bool,
        UnaryOp::BitwiseNot => kind == Kind::Int,
        _ if kind == Kind::Bool => false,
        _ => kind == Kind::Float || op.accepts_int(),
    };
    if !fits {
        return Err(ctx.error(format!("{} on {} tensors is not supported", ctx.op_type, ctx.input_type(0)?.dtype)));
    }
    Ok(Parsed::new(Op::Unary(op), 1))
}

pub fn infer_unary(op: UnaryOp, inputs: &[&TensorType]) -> TensorType {
    let x = inputs[0];
    match op {
        UnaryOp::IsNaN | UnaryOp::IsInf { .. } => TensorType::new(DType::Bool, x.shape.clone()),
        _ => x.clone(),
    }
}

/// Max, Min, Sum and Mean over any number of inputs, with numpy broadcasting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariadicOp {
    /// Elementwise maximum.
    Max,
    /// Elementwise minimum.
    Min,
    /// Elementwise sum.
    Sum,
    /// Elementwise mean.
    Mean,
}

pub fn parse_variadic(ctx: &NodeCtx) -> Result<Parsed> {
    let op = match ctx.op_type {
        "Max" => VariadicOp::Max,
        "Min" => VariadicOp::Min,
        "Sum" => VariadicOp::Sum,
        _ => VariadicOp::Mean,
    };
    if ctx.inputs.is_empty() || ctx.inputs.iter().any(Option::is_none) {
        return Err(ctx.error("every input is required"));
    }
    if op == VariadicOp::Mean && ctx.input_type(0)?.dtype.kind() != Kind::Float {
        return Err(ctx.error("Mean of integer tensors is not supported"));
    }
    Ok(Parsed::new(Op::Variadic(op), ctx.inputs.len()))
}

pub fn infer_variadic(inputs: &[&TensorType]) -> Result<TensorType, String> {
    let mut shape = inputs[0].shape.clone();
    for t in &inputs[1..] {
        if t.dtype != inputs[0].dtype {
            return Err(format!("operand types differ: {} and {t}", inputs[0]));
        }
        shape = broadcast_shapes(&shape, &t.shape)?;
    }
    Ok(TensorType::new(inputs[0].dtype, shape))
}

pub fn parse_where(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.input_type(0)?.dtype != DType::Bool {
        return Err(ctx.error(format!("condition must be bool, got {}", ctx.input_type(0)?)));
    }
    Ok(Parsed::new(Op::Where(WhereConfig), 3))
}

/// SwiGLU (opset 28): `Swish_alpha(A) * B`, A the gate and B the value, of one shape (no
/// broadcasting).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwiGluConfig {
    /// The Swish's `alpha` (default 1.0): `a * sigmoid(alpha * a)`.
    pub alpha: f64,
}

pub fn parse_swiglu(ctx: &NodeCtx) -> Result<Parsed> {
    let (gate, value) = (ctx.input_type(0)?, ctx.input_type(1)?);
    if gate.dtype.kind() != Kind::Float || gate.dtype.is_low_bit() || value.dtype != gate.dtype {
        return Err(ctx.error(format!("A and B must be tensors of one float type, got {gate} and {value}")));
    }
    let differ = gate.rank() != value.rank()
        || gate
            .shape
            .iter()
            .zip(&value.shape)
            .any(|(a, b)| matches!((a.as_static(), b.as_static()), (Some(a), Some(b)) if a != b));
    if differ {
        return Err(
            ctx.error(format!("A and B must have one shape (SwiGLU does not broadcast), got {gate} and {value}"))
        );
    }
    let alpha = f64::from(ctx.attrs.float_or("alpha", 1.0)?);
    Ok(Parsed::new(Op::SwiGlu(SwiGluConfig { alpha }), 2))
}

pub fn infer_where(inputs: &[&TensorType]) -> Result<TensorType, String> {
    let (c, x, y) = (inputs[0], inputs[1], inputs[2]);
    if x.dtype != y.dtype {
        return Err(format!("branch types differ: {x} and {y}"));
    }
    let shape = broadcast_shapes(&broadcast_shapes(&c.shape, &x.shape)?, &y.shape)?;
    Ok(TensorType::new(x.dtype, shape))
}

/// Cast (target from the `to` attribute) and CastLike (target from the second input's type).
pub fn parse_cast(ctx: &NodeCtx) -> Result<Parsed> {
    // Both concern float8 targets only (other casts wrap or round as they always do); round_mode
    // FLOAT8E8M0 alone.
    let saturate = ctx.attrs.int_or("saturate", 1)? != 0;
    let round_mode = ctx.attrs.choice_or("round_mode", E8M0Rounding::Up)?;
    let to = if ctx.op_type == "CastLike" {
        ctx.input_type(1)?.dtype
    } else {
        // Opset 1 names the type as a string ("FLOAT"); later opsets use the type code.
        let code = match ctx.attrs.string("to") {
            Ok(Some(name)) => type_code(&name).ok_or_else(|| ctx.error(format!("unknown type name `{name}`")))?,
            _ => ctx.attrs.int("to")?.ok_or_else(|| ctx.error("attribute `to` is required"))?,
        };
        DType::from_onnx(code as i32).ok_or_else(|| ctx.error(format!("cast to type code {code} is not supported")))?
    };
    Ok(Parsed::new(Op::Cast(CastConfig { to, saturate, round_mode }), 1))
}

/// BitCast (opset 26): the input's bits read as type `to`, of the same width. Supported
/// between the types whose values the generated code holds exactly (every value of f16, bf16
/// and f32 in Burn's float, of the integers in its int, bool as bool; f64 travels in the float
/// tensor like any f64 value); not the 8-, 4- and 2-bit floats and integers, whose carriers
/// keep the value, not the bits, and not to bool from another type, whose other bit patterns
/// have no bool value.
pub fn parse_bitcast(ctx: &NodeCtx) -> Result<Parsed> {
    let from = ctx.input_type(0)?.dtype;
    let code = ctx.attrs.int("to")?.ok_or_else(|| ctx.error("attribute `to` is required"))?;
    let to = i32::try_from(code)
        .ok()
        .and_then(DType::from_onnx)
        .ok_or_else(|| ctx.error(format!("BitCast to type code {code} is not supported")))?;
    if from.onnx_bits() != to.onnx_bits() {
        return Err(ctx.error(format!(
            "BitCast from {from} ({} bits) to {to} ({} bits): the widths differ",
            from.onnx_bits(),
            to.onnx_bits()
        )));
    }
    if from.is_low_bit() || to.is_low_bit() || (to == DType::Bool && from != DType::Bool) {
        return Err(ctx.error(format!("BitCast from {from} to {to} is not supported")));
    }
    Ok(Parsed::new(Op::BitCast(BitCastConfig { to }), 1))
}

/// A Clip bound: absent, known now, or read from the input tensor at run time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// No bound on this side.
    None,
    /// A bound known at import time.
    Static(f64),
    /// A bound read from the node's input at run time.
    Runtime,
}

/// ONNX `Clip`: bounds from attributes before opset 11, from inputs since.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipConfig {
    /// The lower bound.
    pub min: Bound,
    /// The upper bound.
    pub max: Bound,
}

pub fn parse_clip(ctx: &NodeCtx) -> Result<Parsed> {
    // Opset 6's defaults are ±FLT_MAX, which clip nothing.
    let finite = |v: Option<f64>| match v.filter(|v| v.abs() < f32::MAX as f64) {
        Some(v) => Bound::Static(v),
        None => Bound::None,
    };
    let (min, max) = if ctx.opset < 11 {
        (finite(ctx.attrs.float("min")?.map(f64::from)), finite(ctx.attrs.float("max")?.map(f64::from)))
    } else {
        let bound = |i: usize, what: &str| -> Result<Bound> {
            match ctx.inputs.get(i).copied().flatten() {
                None => Ok(Bound::None),
                Some(v) => match &v.constant {
                    Some(t) => {
                        Ok(finite(Some(t.scalar_f64().ok_or_else(|| ctx.error(format!("{what} must be a scalar")))?)))
                    }
                    None => Ok(Bound::Runtime),
                },
            }
        };
        (bound(1, "min")?, bound(2, "max")?)
    };
    Ok(Parsed::new(Op::Clip(ClipConfig { min, max }), 3))
}

/// `TensorProto.DataType` code of a type name, as Cast-1 spells it.
fn type_code(name: &str) -> Option<i64> {
    const NAMES: [&str; 17] = [
        "UNDEFINED",
        "FLOAT",
        "UINT8",
        "INT8",
        "UINT16",
        "INT16",
        "INT32",
        "INT64",
        "STRING",
        "BOOL",
        "FLOAT16",
        "DOUBLE",
        "UINT32",
        "UINT64",
        "COMPLEX64",
        "COMPLEX128",
        "BFLOAT16",
    ];
    NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)).map(|i| i as i64)
}

/// `Where(condition, x, y)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WhereConfig;

/// `Cast` to another element type.
#[derive(Debug, Clone, PartialEq)]
pub struct CastConfig {
    /// The target type (`to`).
    pub to: DType,
    /// For a float8 target: an out-of-range value becomes the largest value of its sign
    /// (else infinity or NaN, per type).
    pub saturate: bool,
    /// For a FLOAT8E8M0 target: which power of two a value rounds to.
    pub round_mode: E8M0Rounding,
}

/// The input's bits read as `to`, a type of the same width.
#[derive(Debug, Clone, PartialEq)]
pub struct BitCastConfig {
    /// The target type (`to`).
    pub to: DType,
}

impl InferOp for BinaryConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_binary(self, inputs)?)
    }
}

impl InferOp for UnaryOp {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_unary(*self, inputs))
    }
}

impl InferOp for VariadicOp {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_variadic(inputs)?)
    }
}

impl InferOp for SwiGluConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}

impl InferOp for WhereConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_where(inputs)?)
    }
}

impl InferOp for CastConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let CastConfig { to, .. } = self;
        one(TensorType::new(*to, inputs[0].shape.clone()))
    }
}

impl InferOp for BitCastConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let BitCastConfig { to } = self;
        one(TensorType::new(*to, inputs[0].shape.clone()))
    }
}

impl InferOp for ClipConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(inputs[0].clone())
    }
}
