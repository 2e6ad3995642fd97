use super::{align_rank, EmitOp};
use crate::emitter::{float_as, float_dtype_tokens, float_literal, lit, scalar_literal, Emitter};
use crate::error::Result;
use onnx_ir::ops::{
    BinaryConfig, BinaryOp, BitCastConfig, Bound, CastConfig, ClipConfig, DropoutConfig, E8M0Rounding, IdentityConfig,
    SwiGluConfig, UnaryOp, VariadicOp, WhereConfig,
};
use onnx_ir::{DType, Kind, Node};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The method of a binary op, and its scalar form where Burn has one.
fn binary_methods(op: BinaryOp, float: bool) -> (&'static str, Option<&'static str>) {
    match op {
        BinaryOp::Add => ("add", Some("add_scalar")),
        BinaryOp::Sub => ("sub", Some("sub_scalar")),
        BinaryOp::Mul => ("mul", Some("mul_scalar")),
        BinaryOp::Div => ("div", Some("div_scalar")),
        BinaryOp::Pow if float => ("powf", Some("powf_scalar")),
        BinaryOp::Pow => ("powi", Some("powi_scalar")),
        BinaryOp::Mod { fmod: true } if float => ("fmod", Some("fmod_scalar")),
        BinaryOp::Mod { .. } => ("remainder", Some("remainder_scalar")),
        BinaryOp::Equal => ("equal", Some("equal_elem")),
        BinaryOp::Less => ("lower", Some("lower_elem")),
        BinaryOp::LessOrEqual => ("lower_equal", Some("lower_equal_elem")),
        BinaryOp::Greater => ("greater", Some("greater_elem")),
        BinaryOp::GreaterOrEqual => ("greater_equal", Some("greater_equal_elem")),
        BinaryOp::And => ("bool_and", None),
        BinaryOp::Or => ("bool_or", None),
        BinaryOp::Xor => ("bool_xor", None),
        // burn_onnx::ops::bit_shift (out-of-range amounts), in binary_in_storage.
        BinaryOp::BitShift { .. } => ("bit_shift", None),
        BinaryOp::BitwiseAnd => ("bitwise_and", Some("bitwise_and_scalar")),
        BinaryOp::BitwiseOr => ("bitwise_or", Some("bitwise_or_scalar")),
        BinaryOp::BitwiseXor => ("bitwise_xor", Some("bitwise_xor_scalar")),
        BinaryOp::PRelu => ("prelu", None),
    }
}

pub fn binary(e: &mut Emitter, node: &Node, c: &BinaryConfig) -> Result<TokenStream> {
    let value = binary_in_storage(e, node, c)?;
    let can_overflow = matches!(
        c.op,
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Pow | BinaryOp::BitShift { left: true }
    );
    Ok(if can_overflow { wrapped_to_output_type(e, node, value) } else { value })
}

/// `value`, an integer result computed in Burn's wider storage, wrapped into the node's output
/// type as ONNX Runtime's (and numpy's) arithmetic does: uint8 200 + 100 is 44, int8 -(-128)
/// is -128. Other results unchanged.
fn wrapped_to_output_type(e: &Emitter, node: &Node, value: TokenStream) -> TokenStream {
    match e.ty(node.outputs[0]).dtype.int_bits() {
        Some((bits, signed)) if bits < 64 => quote! { burn_onnx::ops::wrap_int(#value, #bits, #signed) },
        _ => value,
    }
}

/// A binary op's result, integers in Burn's storage type (not wrapped to the ONNX type).
fn binary_in_storage(e: &mut Emitter, node: &Node, c: &BinaryConfig) -> Result<TokenStream> {
    let (a, b) = (e.input_id(&node.inputs, 0)?, e.input_id(&node.inputs, 1)?);
    let rank = e.rank(node.outputs[0]).max(1);
    let a_type = e.ty(a);
    if a_type.dtype == DType::String {
        return super::text::equal(e, node);
    }
    let float = a_type.dtype.kind() == Kind::Float;
    let (name, scalar_name) = binary_methods(c.op, float);
    let method = format_ident!("{name}");
    let same_kind = e.ty(b).dtype.kind() == a_type.dtype.kind();
    if let Some(scalar_method) = scalar_name.map(|n| format_ident!("{n}")) {
        if let Some(v) = e.scalar(b).filter(|_| e.rank(a).max(1) == rank && c.legacy_axis.is_none()) {
            let (a, v) = (e.use_value(a)?, scalar_literal(v, e.ty(b).dtype));
            return Ok(quote! { #a.#scalar_method(#v) });
        }
        if let Some(v) = e.scalar(a).filter(|_| e.rank(b).max(1) == rank) {
            let commuted = match c.op {
                BinaryOp::Add | BinaryOp::Mul => Some(quote! { #scalar_method }),
                BinaryOp::Sub => Some(quote! { neg().add_scalar }),
                BinaryOp::Div if float => Some(quote! { recip().mul_scalar }),
                _ => None,
            };
            if let Some(call) = commuted {
                let (b, v) = (e.use_value(b)?, scalar_literal(v, a_type.dtype));
                return Ok(quote! { #b.#call(#v) });
            }
        }
    }
    let (ra, rb) = (e.rank(a).max(1), e.rank(b).max(1));
    let lhs = align_rank(e.use_value(a)?, ra, rank);
    let rhs = e.use_value(b)?;
    let rhs = match c.legacy_axis {
        Some(axis) => {
            let axes = (0..axis).chain(axis + rb..rank).map(lit);
            let rank = lit(rank);
            quote! { #rhs.unsqueeze_dims::<#rank>(&[#(#axes),*]) }
        }
        None => align_rank(rhs, rb, rank),
    };
    // Pow with a float base and an integer exponent: the exponent is converted.
    let rhs =
        if c.op == BinaryOp::Pow && float && !same_kind { float_as(rhs, e.ty(b).dtype, a_type.dtype) } else { rhs };
    Ok(match c.op {
        // An integer base with a float exponent is computed in floats; the result stays integer.
        BinaryOp::Pow if !float && !same_kind => quote! { #lhs.float().powf(#rhs).int() },
        // C fmod on integers: the remainder of truncated division.
        BinaryOp::Mod { fmod: true } if !float => quote! {{
            let (a, b) = (#lhs, #rhs);
            a.clone().sub(a.div(b.clone()).mul(b))
        }},
        BinaryOp::BitShift { left } => {
            let bits = a_type.dtype.int_bits().map_or(64, |(bits, _)| bits);
            quote! { burn_onnx::ops::bit_shift(#lhs, #rhs, #left, #bits) }
        }
        BinaryOp::PRelu => quote! {{
            let x = #lhs;
            let negative = x.clone().clamp_max(0.0).mul(#rhs);
            x.clamp_min(0.0).add(negative)
        }},
        _ => quote! { #lhs.#method(#rhs) },
    })
}

/// `x * sigmoid(alpha * x)`: Swish, SiLU where `alpha` is 1.
fn swish(x: TokenStream, alpha: f64) -> TokenStream {
    if alpha == 1.0 {
        return quote! { burn_onnx::ops::silu(#x) };
    }
    let alpha = float_literal(alpha);
    quote! {{
        let x = #x;
        x.clone().mul(burn_onnx::ops::sigmoid(x.mul_scalar(#alpha)))
    }}
}

/// SwiGLU: the Swish of the gate A times the value B (one shape, checked at import).
pub fn swiglu(e: &mut Emitter, node: &Node, alpha: f64) -> Result<TokenStream> {
    let gate = swish(e.input(&node.inputs, 0)?, alpha);
    let value = e.input(&node.inputs, 1)?;
    Ok(quote! { #gate.mul(#value) })
}

/// `body` of a half-precision `x` computed in f32 and rounded to the half type once at the end:
/// a rounding after each step of a composite (Celu's exp, less one, times alpha) drifts an ulp
/// from ONNX's expected values (ml_dtypes' `expm1` rounds once).
fn half_in_f32(x: TokenStream, dtype: DType, body: impl FnOnce(TokenStream) -> TokenStream) -> TokenStream {
    match float_dtype_tokens(dtype) {
        Some(half) if matches!(dtype.carrier(), DType::F16 | DType::BF16) => {
            let y = body(quote! { #x.cast(burn::tensor::FloatDType::F32) });
            quote! { #y.cast(#half) }
        }
        _ => body(x),
    }
}

pub fn unary(e: &mut Emitter, node: &Node, op: UnaryOp) -> Result<TokenStream> {
    let value = unary_in_storage(e, node, op)?;
    Ok(if matches!(op, UnaryOp::Neg | UnaryOp::Abs) { wrapped_to_output_type(e, node, value) } else { value })
}

fn unary_in_storage(e: &mut Emitter, node: &Node, op: UnaryOp) -> Result<TokenStream> {
    let dtype = e.ty(e.input_id(&node.inputs, 0)?).dtype;
    let float = dtype.kind() == Kind::Float;
    let x = e.input(&node.inputs, 0)?;
    let f = float_literal;
    let act = quote! { burn::tensor::activation };
    Ok(match op {
        UnaryOp::Relu if float => quote! { #act::relu(#x) },
        UnaryOp::Relu => quote! { #x.clamp_min(0) },
        UnaryOp::Sigmoid => quote! { burn_onnx::ops::sigmoid(#x) },
        UnaryOp::Silu => swish(x, 1.0),
        UnaryOp::Swish { alpha } => swish(x, alpha),
        UnaryOp::Tanh => quote! { burn_onnx::ops::tanh(#x) },
        UnaryOp::LeakyRelu { alpha } => {
            let alpha = f(alpha);
            quote! { #act::leaky_relu(#x, #alpha) }
        }
        UnaryOp::Abs => quote! { #x.abs() },
        UnaryOp::Neg => quote! { #x.neg() },
        UnaryOp::Sign => quote! { #x.sign() },
        UnaryOp::Ceil | UnaryOp::Floor | UnaryOp::Round if !float => x,
        UnaryOp::Ceil => quote! { #x.ceil() },
        UnaryOp::Floor => quote! { #x.floor() },
        UnaryOp::Round => quote! { #x.round() },
        UnaryOp::Exp => quote! { burn_onnx::ops::exp(#x) },
        UnaryOp::Log => quote! { #x.log() },
        UnaryOp::Sqrt => quote! { #x.sqrt() },
        UnaryOp::Reciprocal => quote! { #x.recip() },
        UnaryOp::Sin => quote! { #x.sin() },
        UnaryOp::Cos => quote! { #x.cos() },
        UnaryOp::Tan => quote! { #x.tan() },
        UnaryOp::Asin => quote! { #x.asin() },
        UnaryOp::Acos => quote! { #x.acos() },
        UnaryOp::Atan => quote! { #x.atan() },
        UnaryOp::Sinh => quote! { #x.sinh() },
        UnaryOp::Cosh => quote! { #x.cosh() },
        UnaryOp::Asinh => quote! { #x.asinh() },
        UnaryOp::Acosh => quote! { #x.acosh() },
        UnaryOp::Atanh => quote! { #x.atanh() },
        UnaryOp::Erf => quote! { burn_onnx::ops::erf(#x) },
        UnaryOp::Softplus => quote! { #act::softplus(#x, 1.0) },
        UnaryOp::Softsign => quote! { #act::softsign(#x) },
        UnaryOp::Clamp { min, max } => {
            let (min, max) = (f(min), f(max));
            quote! { #x.clamp_min(#min).clamp_max(#max) }
        }
        UnaryOp::Mish => quote! { #act::mish(#x) },
        UnaryOp::Gelu { tanh: false } => quote! { burn_onnx::ops::gelu(#x) },
        UnaryOp::Gelu { tanh: true } => quote! { #act::gelu_approximate(#x) },
        UnaryOp::Elu { alpha } | UnaryOp::Selu { alpha, .. } => {
            let alpha = f(alpha);
            let gamma = match op {
                UnaryOp::Selu { gamma, .. } => {
                    let gamma = f(gamma);
                    quote! { .mul_scalar(#gamma) }
                }
                _ => quote! {},
            };
            quote! {{
                let x = #x;
                let negative = x.clone().exp().sub_scalar(1.0).mul_scalar(#alpha);
                x.clone().mask_where(x.lower_equal_elem(0.0), negative)#gamma
            }}
        }
        UnaryOp::Celu { alpha } => {
            let alpha = f(alpha);
            half_in_f32(x, dtype, |x| {
                quote! {{
                    let x = #x;
                    let negative = x.clone().div_scalar(#alpha).exp().sub_scalar(1.0).mul_scalar(#alpha);
                    x.clamp_min(0.0).add(negative.clamp_max(0.0))
                }}
            })
        }
        UnaryOp::HardSigmoid { alpha, beta } => {
            let (alpha, beta) = (f(alpha), f(beta));
            quote! { #x.mul_scalar(#alpha).add_scalar(#beta).clamp(0.0, 1.0) }
        }
        UnaryOp::HardSwish => quote! {{
            let x = #x;
            x.clone().mul(x.mul_scalar(1.0 / 6.0).add_scalar(0.5).clamp(0.0, 1.0))
        }},
        UnaryOp::ThresholdedRelu { alpha } => {
            let alpha = f(alpha);
            quote! {{
                let x = #x;
                x.clone().mask_fill(x.lower_equal_elem(#alpha), 0.0)
            }}
        }
        UnaryOp::Shrink { bias, lambd } => {
            let (bias, lambd, neg_lambd) = (f(bias), f(lambd), f(-lambd));
            quote! {{
                let x = #x;
                let below = x.clone().lower_elem(#neg_lambd);
                let above = x.clone().greater_elem(#lambd);
                x.clone()
                    .zeros_like()
                    .mask_where(below, x.clone().add_scalar(#bias))
                    .mask_where(above, x.sub_scalar(#bias))
            }}
        }
        UnaryOp::IsNaN => quote! { #x.is_nan() },
        UnaryOp::IsInf { positive: true, negative: true } => quote! { #x.is_inf() },
        UnaryOp::IsInf { positive, negative } => {
            let sign = match (positive, negative) {
                (true, _) => quote! { greater_elem(0.0) },
                (_, true) => quote! { lower_elem(0.0) },
                // Neither: nothing is reported (a comparison no value satisfies).
                _ => quote! { greater_elem(f64::INFINITY) },
            };
            quote! {{
                let x = #x;
                x.clone().is_inf().bool_and(x.#sign)
            }}
        }
        UnaryOp::Not => quote! { #x.bool_not() },
        // Unsigned types keep only their own bits (Burn's integers are signed).
        UnaryOp::BitwiseNot => match dtype {
            DType::U8 => quote! { #x.bitwise_not().bitwise_and_scalar(0xff) },
            DType::U16 => quote! { #x.bitwise_not().bitwise_and_scalar(0xffff) },
            _ => quote! { #x.bitwise_not() },
        },
    })
}

/// Max/Min/Sum/Mean folded pairwise, each operand raised to the output rank.
pub fn variadic(e: &mut Emitter, node: &Node, op: VariadicOp) -> Result<TokenStream> {
    let rank = e.rank(node.outputs[0]).max(1);
    if let Some(clamped) = clamp_by_scalar(e, node, op)? {
        return Ok(clamped);
    }
    let mut operands = vec![];
    for i in 0..node.inputs.len() {
        let r = e.rank(e.input_id(&node.inputs, i)?).max(1);
        operands.push(align_rank(e.input(&node.inputs, i)?, r, rank));
    }
    let method = match op {
        VariadicOp::Max => quote! { max_pair },
        VariadicOp::Min => quote! { min_pair },
        VariadicOp::Sum | VariadicOp::Mean => quote! { add },
    };
    let mean = (op == VariadicOp::Mean).then(|| float_literal(node.inputs.len() as f64));
    let mut operands = operands.into_iter();
    let first = operands.next().unwrap_or_default();
    if node.inputs.len() <= MAX_CHAIN {
        // `a.add(b).add(c)`, extended in place: re-quoting the chain so far for every operand
        // would copy it each time.
        let mut acc = first;
        acc.extend(operands.map(|operand| quote! { .#method(#operand) }));
        acc.extend(mean.map(|n| quote! { .div_scalar(#n) }));
        return Ok(acc);
    }
    // A wide node: one statement per operand. A chain this long nests as deep as it is long
    // in every parser that reads it (syn, prettyplease, rustc) and overflows their stacks.
    let steps = operands.map(|operand| quote! { acc = acc.#method(#operand); });
    let result = match mean {
        Some(n) => quote! { acc.div_scalar(#n) },
        None => quote! { acc },
    };
    Ok(quote! {{
        let mut acc = #first;
        #(#steps)*
        #result
    }})
}

/// Operands of a Max/Min/Sum/Mean written as one method chain; wider nodes get statements.
const MAX_CHAIN: usize = 16;

/// `Max(x, c)` / `Min(x, c)` with a one-element constant `c` that does not raise x's rank: one
/// clamp pass (NaN stays NaN, as in ONNX) instead of a broadcast compare and select.
fn clamp_by_scalar(e: &mut Emitter, node: &Node, op: VariadicOp) -> Result<Option<TokenStream>> {
    let method = match op {
        VariadicOp::Max => quote! { clamp_min },
        VariadicOp::Min => quote! { clamp_max },
        _ => return Ok(None),
    };
    let [Some(a), Some(b)] = node.inputs[..] else { return Ok(None) };
    let (x, c) = match (e.scalar(a), e.scalar(b)) {
        (None, Some(c)) => (a, c),
        (Some(c), None) => (b, c),
        _ => return Ok(None),
    };
    if e.rank(x) != e.rank(node.outputs[0]) || e.ty(x).dtype != e.ty(node.outputs[0]).dtype {
        return Ok(None);
    }
    let value = scalar_literal(c, e.ty(x).dtype);
    let x = e.use_value(x)?;
    Ok(Some(quote! { #x.#method(#value) }))
}

/// `Where(c, x, y)`: y with x where c holds, all operands broadcast to the output shape.
pub fn where_(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let rank = e.rank(node.outputs[0]).max(1);
    let mut ops = vec![];
    for i in 0..3 {
        let r = e.rank(e.input_id(&node.inputs, i)?).max(1);
        ops.push(align_rank(e.input(&node.inputs, i)?, r, rank));
    }
    let (c, x, y) = (&ops[0], &ops[1], &ops[2]);
    Ok(quote! { burn_onnx::ops::where_op(#c, #x, #y) })
}

/// Cast between Burn's kinds. A float target is held in its own dtype (f64, f16 and bf16 as
/// themselves, see [`float_as`]); within the integers the element type stays Burn's
/// default, values wrapped into the target's range. A low-bit target rounds or wraps into its
/// carrier (see `low_bit`).
pub fn cast(e: &mut Emitter, node: &Node, to: DType, saturate: bool, round_mode: E8M0Rounding) -> Result<TokenStream> {
    let from_dtype = e.ty(e.input_id(&node.inputs, 0)?).dtype;
    let from = from_dtype.kind();
    let x = e.input(&node.inputs, 0)?;
    if to.is_low_bit() {
        // A double reaches the four float8 types through f32, as ONNX's reference evaluator
        // and ONNX Runtime both cast it (1.125 + 1e-12 becomes E5M2's 1.0, f32's tie rounded
        // to even, not 1.25). For the other low-bit types neither is shown to: refused.
        let (x, from_dtype) = match (from_dtype, to) {
            (DType::F64, DType::F8E4M3FN | DType::F8E4M3FNUZ | DType::F8E5M2 | DType::F8E5M2FNUZ) => {
                (float_as(x, DType::F64, DType::F32), DType::F32)
            }
            _ => (x, from_dtype),
        };
        super::refuse_double(e, from_dtype, &format!("a cast to {to}"))?;
        if to == DType::F8E8M0 {
            return Ok(super::low_bit::cast_to_e8m0(x, from_dtype, saturate, round_mode));
        }
        return super::low_bit::cast_to(x, from_dtype, to, saturate)
            .ok_or_else(|| e.error(format!("no run-time cast to {to}")));
    }
    if from == Kind::String || to.kind() == Kind::String {
        return Err(e.error("a cast of string tensors"));
    }
    Ok(convert(x, from_dtype, to))
}

/// `x`, a tensor of IR type `from`, as IR type `to` (neither a string nor a low-bit type): a
/// float target in its own dtype ([`float_as`]), integers wrapped into the target's range, floats
/// to integers as ONNX Runtime casts them (`burn_onnx::ops::cast_float_to_int`), other kinds
/// converted.
pub fn convert(x: TokenStream, from: DType, to: DType) -> TokenStream {
    match (from.kind(), to.kind()) {
        (_, Kind::Float) => float_as(x, from, to),
        (Kind::Int, Kind::Int) => super::low_bit::int_to_int(x, from, to),
        (a, b) if a == b => x,
        (Kind::Float, Kind::Int) => match to.int_bits() {
            // NaN, the infinities and out-of-range values as ONNX Runtime casts them.
            Some((bits, signed)) => quote! { burn_onnx::ops::cast_float_to_int(#x, #bits, #signed) },
            None => quote! { #x.int() },
        },
        (_, Kind::Int) => quote! { #x.int() },
        (_, Kind::Bool) => quote! { #x.bool() },
        (_, Kind::String) => x, // refused by the callers
    }
}

/// BitCast between types the IR accepted (`burn_onnx::ops::BitType` names them as `DType`).
pub fn bit_cast(e: &mut Emitter, node: &Node, to: DType) -> Result<TokenStream> {
    let from = e.ty(e.input_id(&node.inputs, 0)?).dtype;
    let x = e.input(&node.inputs, 0)?;
    let rank = lit(e.rank(node.outputs[0]).max(1));
    let kind = match to.kind() {
        Kind::Float => quote! { burn::tensor::Float },
        Kind::Int => quote! { burn::tensor::Int },
        Kind::Bool => quote! { burn::tensor::Bool },
        Kind::String => return Err(e.error("a bit cast of string tensors")),
    };
    let (from, to) = (format_ident!("{from:?}"), format_ident!("{to:?}"));
    Ok(quote! {
        burn_onnx::ops::bit_cast::<#rank, _, #kind>(#x, burn_onnx::ops::BitType::#from, burn_onnx::ops::BitType::#to)
    })
}

pub fn clip(e: &mut Emitter, node: &Node, c: &ClipConfig) -> Result<TokenStream> {
    let dtype = e.ty(node.outputs[0]).dtype;
    let x = e.input(&node.inputs, 0)?;
    let scalar = if dtype.kind() == Kind::Float {
        quote! { f64 }
    } else {
        quote! { i64 }
    };
    let mut bound = |b: Bound, index: usize| -> Result<Option<TokenStream>> {
        Ok(match b {
            Bound::None => None,
            Bound::Static(v) => Some(scalar_literal(v, dtype)),
            Bound::Runtime => {
                let t = e.input(&node.inputs, index)?;
                Some(quote! { #t.into_scalar::<#scalar>() })
            }
        })
    };
    Ok(match (bound(c.min, 1)?, bound(c.max, 2)?) {
        // min then max, as numpy: with min > max every element becomes max.
        (Some(lo), Some(hi)) => quote! { #x.clamp_min(#lo).clamp_max(#hi) },
        (Some(lo), None) => quote! { #x.clamp_min(#lo) },
        (None, Some(hi)) => quote! { #x.clamp_max(#hi) },
        (None, None) => x,
    })
}

/// Dropout through `burn_onnx::ops::dropout` (the input in inference, random elements zeroed
/// and the rest scaled in training mode), the ratio and training_mode read at run time where
/// the model computes them, and the mask (when asked for) in the node's type.
pub fn dropout(e: &mut Emitter, node: &Node, c: &DropoutConfig) -> Result<TokenStream> {
    let ratio = match c.ratio {
        Some(r) => float_literal(r),
        None => {
            let r = e.input(&node.inputs, 1)?;
            quote! { burn_onnx::ops::dropout_ratio(#r) }
        }
    };
    let training = match c.training {
        Some(t) => quote! { #t },
        None => {
            let t = e.input(&node.inputs, 2)?;
            quote! { burn_onnx::ops::dropout_training(#t) }
        }
    };
    let x = e.input(&node.inputs, 0)?;
    let seed = match c.seed {
        Some(s) => {
            let s = proc_macro2::Literal::i64_suffixed(s);
            quote! { Some(#s) }
        }
        None => quote! { None },
    };
    let dropped = quote! { burn_onnx::ops::dropout(#x, #ratio, #training, #seed) };
    let Some(mask_type) = c.mask else { return Ok(quote! { #dropped.0 }) };
    let mask = convert(quote! { mask }, DType::Bool, mask_type);
    Ok(quote! {{
        let (y, mask) = #dropped;
        (y, #mask)
    }})
}

impl EmitOp for BinaryConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        binary(e, node, self)
    }
}

impl EmitOp for UnaryOp {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        unary(e, node, *self)
    }
}

impl EmitOp for VariadicOp {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        variadic(e, node, *self)
    }
}

impl EmitOp for SwiGluConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        swiglu(e, node, self.alpha)
    }
}

impl EmitOp for WhereConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        where_(e, node)
    }
}

impl EmitOp for CastConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let CastConfig { to, saturate, round_mode } = self;
        cast(e, node, *to, *saturate, *round_mode)
    }
}

impl EmitOp for BitCastConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let BitCastConfig { to } = self;
        bit_cast(e, node, *to)
    }
}

impl EmitOp for ClipConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        clip(e, node, self)
    }
}

impl EmitOp for IdentityConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        e.input(&node.inputs, 0)
    }
}

impl EmitOp for DropoutConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        dropout(e, node, self)
    }
}
