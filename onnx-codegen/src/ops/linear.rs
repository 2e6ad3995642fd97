use super::{align_rank, EmitOp};
use crate::emitter::{float_literal, lit, scaled, Emitter, WeightRole};
use crate::error::Result;
use onnx_ir::ops::{DetConfig, EinsumConfig, GemmConfig, MatMulConfig};
use onnx_ir::{Node, TensorData, ValueId};
use proc_macro2::TokenStream;
use quote::quote;

/// Gemm with a constant B (and constant or absent C) is a `Linear` layer, with alpha and beta
/// folded into its weights; anything else is spelled out with matmul.
pub fn gemm(e: &mut Emitter, node: &Node, c: &GemmConfig) -> Result<TokenStream> {
    let (a, b) = (e.input_id(&node.inputs, 0)?, e.input_id(&node.inputs, 1)?);
    let bias = node.inputs.get(2).copied().flatten();
    if !c.trans_a {
        if let Some(linear) = try_linear(e, a, b, bias, c)? {
            return Ok(linear);
        }
    }
    let lhs = e.use_value(a)?;
    let rhs = e.use_value(b)?;
    let mut y = match (c.trans_a, c.trans_b) {
        // B's rows read in place by burn_onnx's product where that pays.
        (false, true) => quote! { burn_onnx::ops::matmul_transposed(#lhs, #rhs) },
        (true, true) => quote! { #lhs.transpose().matmul(#rhs.transpose()) },
        (true, false) => quote! { #lhs.transpose().matmul(#rhs) },
        (false, false) => quote! { #lhs.matmul(#rhs) },
    };
    if c.alpha != 1.0 {
        let alpha = float_literal(c.alpha);
        y = quote! { #y.mul_scalar(#alpha) };
    }
    match bias {
        Some(bias) if c.beta != 0.0 => add_scaled(e, y, bias, c.beta),
        _ => Ok(y),
    }
}

fn try_linear(
    e: &mut Emitter,
    a: ValueId,
    b: ValueId,
    bias: Option<ValueId>,
    c: &GemmConfig,
) -> Result<Option<TokenStream>> {
    let Some(weight) = e.constant(b) else { return Ok(None) };
    let weight = if c.trans_b { weight.transposed_2d() } else { Some(weight.clone()) };
    let Some(weight) = weight else { return Ok(None) };
    let (k, n) = (weight.shape[0], weight.shape[1]);
    // A constant row of C joins the layer; any other C is added to its output.
    let (bias_data, added) = match bias {
        None => (None, None),
        Some(_) if c.beta == 0.0 => (None, None),
        Some(id) => match e.constant(id).map(|data| bias_vector(data, n, c.beta)) {
            Some(Some(v)) => (Some(v), None),
            _ => (None, Some(id)),
        },
    };
    let Some(weight) = scaled(&weight, c.alpha) else { return Ok(None) };
    let y = linear_layer(e, a, weight, bias_data, k, n)?;
    let Some(added) = added else { return Ok(Some(y)) };
    Ok(Some(add_scaled(e, y, added, c.beta)?))
}

/// `y + beta · C`, C broadcast to `y`'s rank 2.
fn add_scaled(e: &mut Emitter, y: TokenStream, bias: ValueId, beta: f64) -> Result<TokenStream> {
    if let Some(v) = e.scalar(bias) {
        let v = float_literal(v * beta);
        return Ok(quote! { #y.add_scalar(#v) });
    }
    let rank = e.rank(bias).max(1);
    let mut bias = align_rank(e.use_value(bias)?, rank, 2);
    if beta != 1.0 {
        let beta = float_literal(beta);
        bias = quote! { #bias.mul_scalar(#beta) };
    }
    Ok(quote! { #y.add(#bias) })
}

/// C as an `[n]` vector times beta, when it broadcasts along rows only.
fn bias_vector(data: &TensorData, n: usize, beta: f64) -> Option<TensorData> {
    let values = data.to_f64s()?;
    let row: Vec<f64> = match data.shape[..] {
        [] | [1] | [1, 1] => vec![values[0]; n],
        [m] | [1, m] if m == n => values,
        _ => return None,
    };
    let row: Vec<f64> = row.iter().map(|v| v * beta).collect();
    TensorData::from_f64s(data.dtype.carrier(), vec![n], &row)
}

fn linear_layer(
    e: &mut Emitter,
    input: ValueId,
    weight: TensorData,
    bias: Option<TensorData>,
    k: usize,
    n: usize,
) -> Result<TokenStream> {
    let (has_bias, k, n) = (bias.is_some(), lit(k), lit(n));
    // Taken from B and C (or a fused MatMul's inputs 1 and 2), possibly scaled: weights.
    let mut weights = vec![("weight", weight, WeightRole::Trainable)];
    weights.extend(bias.map(|b| ("bias", b, WeightRole::Trainable)));
    let field = e.add_layer(
        "linear",
        quote! { burn::nn::Linear },
        quote! { burn::nn::LinearConfig::new(#k, #n).with_bias(#has_bias).init(device) },
        weights,
    );
    let x = e.use_value(input)?;
    Ok(quote! { burn_onnx::ops::linear(&self.#field, #x) })
}

/// MatMul with numpy semantics: 1-D operands are promoted to matrices and the added axis
/// removed afterwards; batch dims broadcast. A constant 2-D right operand is a `Linear`,
/// with the bias of a fused MatMul (see `onnx_ir::Op::MatMul(MatMulConfig)`) when it has one.
pub fn matmul(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let (a, b) = (e.input_id(&node.inputs, 0)?, e.input_id(&node.inputs, 1)?);
    let (ra, rb) = (e.rank(a), e.rank(b));
    let bias = node.inputs.get(2).copied().flatten();
    if let Some(weight) = e.constant(b).filter(|w| w.shape.len() == 2 && ra >= 2) {
        let (k, n) = (weight.shape[0], weight.shape[1]);
        let bias = bias.map(|id| e.constant(id).cloned().ok_or_else(|| e.error("the bias must be a constant")));
        return linear_layer(e, a, weight.clone(), bias.transpose()?, k, n);
    }
    if bias.is_some() {
        return Err(e.error("a MatMul with a bias needs a constant matrix as its right operand"));
    }
    let lhs = e.use_value(a)?;
    let rhs = e.use_value(b)?;
    if ra == 1 && rb == 1 {
        // The dot product: a rank-0 result, held as a one-element vector.
        return Ok(quote! { #lhs.mul(#rhs).sum() });
    }
    let lhs = if ra == 1 {
        quote! { #lhs.unsqueeze::<2>() }
    } else {
        lhs
    };
    let rhs = if rb == 1 {
        quote! { #rhs.unsqueeze_dim::<2>(1) }
    } else {
        rhs
    };
    let rank = ra.max(rb).max(2);
    let lhs = align_rank(lhs, ra.max(2), rank);
    let rhs = align_rank(rhs, rb.max(2), rank);
    let y = quote! { #lhs.matmul(#rhs) };
    let out = lit(rank - 1);
    Ok(if ra == 1 {
        let axis = lit(rank - 2);
        quote! { #y.squeeze_dim::<#out>(#axis) }
    } else if rb == 1 {
        let axis = lit(rank - 1);
        quote! { #y.squeeze_dim::<#out>(#axis) }
    } else {
        y
    })
}

/// Einsum with the equation as written (Burn evaluates it at run time).
pub fn einsum(e: &mut Emitter, node: &Node, equation: &str) -> Result<TokenStream> {
    let out = e.ty(node.outputs[0]);
    let rank = lit(out.rank().max(1));
    let kind = match out.dtype.kind() {
        onnx_ir::Kind::Int => quote! { Int },
        _ => quote! { burn::tensor::Float },
    };
    let operands = (0..node.inputs.len()).map(|i| e.input(&node.inputs, i)).collect::<Result<Vec<_>>>()?;
    Ok(quote! { Tensor::<#rank, #kind>::einsum(#equation, [#(#operands.into()),*]) })
}

/// Det on the host (`burn_onnx::ops::det`): rank `D` to the batch rank (rank 0 is a
/// one-element vector).
pub fn det(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let (rank, out) = (lit(e.rank(e.input_id(&node.inputs, 0)?)), lit(e.rank(node.outputs[0]).max(1)));
    let x = e.input(&node.inputs, 0)?;
    Ok(quote! { burn_onnx::ops::det::<#rank, #out>(#x) })
}

impl EmitOp for GemmConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        gemm(e, node, self)
    }
}

impl EmitOp for MatMulConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        matmul(e, node)
    }
}

impl EmitOp for DetConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        det(e, node)
    }
}

impl EmitOp for EinsumConfig {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        let EinsumConfig { equation } = self;
        einsum(e, node, equation)
    }
}
