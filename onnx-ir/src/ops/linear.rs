//! Gemm (alpha/beta/transposes; C optional from opset 11) and MatMul (numpy matmul
//! semantics, including 1-D operands and batch broadcasting), Einsum, and Det (opsets 11, 22).

use super::common::broadcast_shapes;
use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, TensorType};

/// Gemm: `alpha · A' · B' + beta · C`, A' and B' transposed as asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmConfig {
    /// `alpha` (default 1.0).
    pub alpha: f64,
    /// `beta` (default 1.0).
    pub beta: f64,
    /// `transA` (default 0).
    pub trans_a: bool,
    /// `transB` (default 0).
    pub trans_b: bool,
}

pub fn parse_gemm(ctx: &NodeCtx) -> Result<Parsed> {
    // Before opset 7, `broadcast=0` demands a C of the output's shape, which broadcasting keeps.
    ctx.attrs.ignore(&["broadcast"]);
    let config = GemmConfig {
        alpha: ctx.attrs.float_or("alpha", 1.0)? as f64,
        beta: ctx.attrs.float_or("beta", 1.0)? as f64,
        trans_a: ctx.attrs.int_or("transA", 0)? != 0,
        trans_b: ctx.attrs.int_or("transB", 0)? != 0,
    };
    for i in 0..2 {
        if ctx.input_type(i)?.rank() != 2 {
            return Err(ctx.error(format!("input {i} must be a matrix, got {}", ctx.input_type(i)?)));
        }
    }
    Ok(Parsed::new(Op::Gemm(config), 3))
}

/// The reduced (inner) dims of a matrix product must agree where both are known.
fn check_inner(a: &Dim, b: &Dim) -> Result<(), String> {
    match (a, b) {
        (Dim::Static(x), Dim::Static(y)) if x != y => Err(format!("inner dimensions differ: {x} and {y}")),
        _ => Ok(()),
    }
}

fn matrix_dims(t: &TensorType, transposed: bool) -> (Dim, Dim) {
    let (r, c) = (t.shape[0].clone(), t.shape[1].clone());
    if transposed {
        (c, r)
    } else {
        (r, c)
    }
}

pub fn infer_gemm(c: &GemmConfig, inputs: &[&TensorType]) -> Result<TensorType, String> {
    let (m, k_a) = matrix_dims(inputs[0], c.trans_a);
    let (k_b, n) = matrix_dims(inputs[1], c.trans_b);
    check_inner(&k_a, &k_b)?;
    let out = vec![m, n];
    if let Some(bias) = inputs.get(2) {
        broadcast_shapes(&out, &bias.shape).map_err(|e| format!("C does not broadcast to the output: {e}"))?;
    }
    Ok(TensorType::new(inputs[0].dtype, out))
}

pub fn parse_matmul(ctx: &NodeCtx) -> Result<Parsed> {
    for i in 0..2 {
        if ctx.input_type(i)?.rank() == 0 {
            return Err(ctx.error("MatMul of a scalar is not defined"));
        }
    }
    Ok(Parsed::new(Op::MatMul(MatMulConfig), 2))
}

pub fn infer_matmul(inputs: &[&TensorType]) -> Result<TensorType, String> {
    let (a, b) = (inputs[0], inputs[1]);
    if let Some(bias) = inputs.get(2) {
        check_fused_bias(a, b, bias)?;
    }
    // 1-D operands are promoted to matrices, and the added axis removed from the result.
    let a_shape = if a.rank() == 1 { vec![Dim::Static(1), a.shape[0].clone()] } else { a.shape.clone() };
    let b_shape = if b.rank() == 1 { vec![b.shape[0].clone(), Dim::Static(1)] } else { b.shape.clone() };
    let (ra, rb) = (a_shape.len(), b_shape.len());
    check_inner(&a_shape[ra - 1], &b_shape[rb - 2])?;
    let mut shape = broadcast_shapes(&a_shape[..ra - 2], &b_shape[..rb - 2])?;
    if a.rank() > 1 {
        shape.push(a_shape[ra - 2].clone());
    }
    if b.rank() > 1 {
        shape.push(b_shape[rb - 1].clone());
    }
    Ok(TensorType::new(a.dtype, shape))
}

/// The bias of a fused MatMul (see [`Op::MatMul(MatMulConfig)`]): an `[n]` vector for an `[k, n]` matrix `b`
/// and an `a` of rank 2 or more.
fn check_fused_bias(a: &TensorType, b: &TensorType, bias: &TensorType) -> Result<(), String> {
    match (&b.shape[..], &bias.shape[..]) {
        ([_, n], [len]) if a.rank() >= 2 && len == n && bias.dtype == a.dtype => Ok(()),
        _ => Err(format!("a MatMul bias must be a vector of b's columns, got {bias} for {a} times {b}")),
    }
}

/// Einsum: the equation, and the output rank it implies for the input ranks.
pub fn parse_einsum(ctx: &NodeCtx) -> Result<Parsed> {
    let equation: String = ctx
        .attrs
        .string("equation")?
        .ok_or_else(|| ctx.error("attribute `equation` is required"))?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if ctx.inputs.iter().any(Option::is_none) || ctx.inputs.is_empty() {
        return Err(ctx.error("every input is required"));
    }
    Ok(Parsed::new(Op::Einsum(EinsumConfig { equation }), ctx.inputs.len()))
}

/// Output rank of an einsum equation: explicit (`->`) or implicit (labels used once, sorted),
/// with `...` standing for the broadcast dims not named by letters.
pub fn einsum_rank(equation: &str, ranks: &[usize]) -> Result<usize, String> {
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ranks.len() {
        return Err(format!("equation `{equation}` has {} operands, the node {}", terms.len(), ranks.len()));
    }
    let letters = |t: &str| t.chars().filter(|c| c.is_ascii_alphabetic()).count();
    // Each term names every dim of its input, or at most its rank with `...` for the rest.
    for (i, (term, &rank)) in terms.iter().zip(ranks).enumerate() {
        let named = letters(term);
        if named > rank || (named < rank && !term.contains("...")) {
            return Err(format!(
                "term `{term}` of equation `{equation}` names {named} dims, input {i} has rank {rank}"
            ));
        }
    }
    let ellipsis = terms
        .iter()
        .zip(ranks)
        .filter(|(t, _)| t.contains("..."))
        .map(|(t, &r)| r.saturating_sub(letters(t)))
        .max()
        .unwrap_or(0);
    Ok(match rhs {
        Some(r) => letters(r) + if r.contains("...") { ellipsis } else { 0 },
        None => {
            let all: String = terms.concat();
            let once = all.chars().filter(|c| c.is_ascii_alphabetic() && all.matches(*c).count() == 1).count();
            once + ellipsis
        }
    })
}

/// Det: the determinant of each square matrix of the last two dims.
pub fn parse_det(ctx: &NodeCtx) -> Result<Parsed> {
    let x = ctx.input_type(0)?;
    // bfloat16 from opset 22.
    let float = matches!(x.dtype, DType::F16 | DType::F32 | DType::F64) || (x.dtype == DType::BF16 && ctx.opset >= 22);
    if !float {
        return Err(ctx.error(format!("input must be a float tensor, got {x}")));
    }
    let [.., rows, cols] = &x.shape[..] else {
        return Err(ctx.error(format!("input must have rank 2 or more (square matrices), got {x}")));
    };
    if let (Some(r), Some(c)) = (rows.as_static(), cols.as_static()) {
        if r != c {
            return Err(ctx.error(format!("the last two dims must be equal (square matrices), got {x}")));
        }
    }
    Ok(Parsed::new(Op::Det(DetConfig), 1))
}

/// The batch dims: the input's without its last two.
pub fn infer_det(x: &TensorType) -> TensorType {
    TensorType::new(x.dtype, x.shape[..x.rank().saturating_sub(2)].to_vec())
}

/// `MatMul(a, b)` with numpy semantics. A model's MatMul has two inputs; the one that
/// `passes::fuse_matmul_bias` makes of a MatMul and an Add has a third, a bias of shape
/// `[n]` added to every row, and then `b` is a constant `[k, n]` matrix and `a` has rank 2
/// or more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatMulConfig;

/// `Det`: the determinant of each square matrix of the last two dims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetConfig;

/// `Einsum` of any number of inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct EinsumConfig {
    /// The `equation`, e.g. `"ij,jk->ik"`.
    pub equation: String,
}

impl InferOp for GemmConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_gemm(self, inputs)?)
    }
}

impl InferOp for MatMulConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_matmul(inputs)?)
    }
}

impl InferOp for DetConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer_det(inputs[0]))
    }
}

impl InferOp for EinsumConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        let EinsumConfig { equation } = self;
        let ranks: Vec<usize> = inputs.iter().map(|t| t.rank()).collect();
        one(TensorType::new(inputs[0].dtype, vec![Dim::Unknown; einsum_rank(equation, &ranks)?]))
    }
}
