//! Random ops: RandomUniform and RandomNormal (opsets 1, 22) and their `Like` forms, Bernoulli
//! (15, 22), Multinomial (7, 22). Each node draws anew on every run; with `seed` the draws
//! repeat (see `burn_onnx::ops::random_uniform` for whose generator).

use super::common::checked_product;
use super::{one, InferOp};
use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{DType, Dim, Kind, TensorType};

/// What a random op draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Uniform in [low, high).
    Uniform {
        /// `low` (default 0).
        low: f64,
        /// `high` (default 1).
        high: f64,
    },
    /// Normal of `mean` and standard deviation `scale`.
    Normal {
        /// `mean` (default 0).
        mean: f64,
        /// `scale` (default 1).
        scale: f64,
    },
    /// Bernoulli: 1 with the probability input 0 holds for the element, else 0.
    Bernoulli,
    /// Multinomial: `sample_size` class indices per row of input 0's log-probabilities.
    Multinomial {
        /// `sample_size` (default 1).
        sample_size: usize,
    },
}

/// A random op, its attributes checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomConfig {
    /// What it draws.
    pub distribution: Distribution,
    /// The `shape` attribute (RandomUniform, RandomNormal); `None`: input 0's shape, or for
    /// Multinomial `[batch, sample_size]`.
    pub shape: Option<Vec<usize>>,
    /// The output's element type.
    pub dtype: DType,
    /// `seed`, when given.
    pub seed: Option<f32>,
}

/// Parses the six random ops into [`Op::Random`].
pub fn parse_random(ctx: &NodeCtx) -> Result<Parsed> {
    let distribution = match ctx.op_type {
        "RandomUniform" | "RandomUniformLike" => Distribution::Uniform {
            low: f64::from(ctx.attrs.float_or("low", 0.0)?),
            high: f64::from(ctx.attrs.float_or("high", 1.0)?),
        },
        "RandomNormal" | "RandomNormalLike" => Distribution::Normal {
            mean: f64::from(ctx.attrs.float_or("mean", 0.0)?),
            scale: f64::from(ctx.attrs.float_or("scale", 1.0)?),
        },
        "Bernoulli" => Distribution::Bernoulli,
        _ => {
            let sample_size = ctx.attrs.int_or("sample_size", 1)?;
            let sample_size = usize::try_from(sample_size)
                .map_err(|_| ctx.error(format!("`sample_size` must not be negative, got {sample_size}")))?;
            Distribution::Multinomial { sample_size }
        }
    };
    let seed = ctx.attrs.float("seed")?;
    let (shape, inputs) = match ctx.op_type {
        "RandomUniform" | "RandomNormal" => (Some(shape_attr(ctx)?), 0),
        _ => (None, 1),
    };
    let dtype = output_dtype(ctx, &distribution)?;
    Ok(Parsed::new(Op::Random(RandomConfig { distribution, shape, dtype, seed }), inputs))
}

/// The required `shape` attribute: sizes of at least 0 whose product fits.
fn shape_attr(ctx: &NodeCtx) -> Result<Vec<usize>> {
    let dims = ctx.attrs.ints("shape")?.ok_or_else(|| ctx.error("attribute `shape` is required"))?;
    let sizes: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| ctx.error(format!("`shape` {dims:?} has a negative size {d}"))))
        .collect::<Result<_>>()?;
    checked_product(sizes.iter().copied())
        .ok_or_else(|| ctx.error(format!("the element count of `shape` {dims:?} overflows")))?;
    Ok(sizes)
}

/// The `dtype` attribute, or its default: float for RandomUniform/Normal, the input's type for
/// the `Like` forms and Bernoulli, int32 for Multinomial; checked against what the op allows.
fn output_dtype(ctx: &NodeCtx, distribution: &Distribution) -> Result<DType> {
    let input = || ctx.input_type(0).map(|t| t.dtype);
    let dtype = match ctx.attrs.int("dtype")? {
        Some(code) => DType::from_onnx(code as i32)
            .ok_or_else(|| ctx.error(format!("`dtype` names type code {code}, which is not supported")))?,
        None => match (ctx.op_type, distribution) {
            ("RandomUniform" | "RandomNormal", _) => DType::F32,
            (_, Distribution::Multinomial { .. }) => DType::I32,
            _ => input()?,
        },
    };
    let allowed = match distribution {
        Distribution::Multinomial { .. } => matches!(dtype, DType::I32 | DType::I64),
        Distribution::Bernoulli => dtype.kind() != Kind::String && !dtype.is_low_bit(),
        _ => dtype.kind() == Kind::Float && !dtype.is_low_bit(),
    };
    if !allowed {
        return Err(ctx.error(format!("output type {dtype} is not one {} produces", ctx.op_type)));
    }
    if let Distribution::Bernoulli | Distribution::Multinomial { .. } = distribution {
        let x = ctx.input_type(0)?;
        if x.dtype.kind() != Kind::Float {
            return Err(ctx.error(format!("input must be a float tensor, got {x}")));
        }
        if matches!(distribution, Distribution::Multinomial { .. }) && x.rank() != 2 {
            return Err(ctx.error(format!("input must be [batch, classes], got {x}")));
        }
    }
    Ok(dtype)
}

/// The output type: the `shape` attribute's, input 0's shape, or Multinomial's `[batch, sample_size]`.
pub fn infer(c: &RandomConfig, inputs: &[&TensorType]) -> TensorType {
    let shape = match (&c.shape, &c.distribution) {
        (Some(dims), _) => dims.iter().map(|&d| Dim::Static(d)).collect(),
        (None, Distribution::Multinomial { sample_size }) => {
            vec![inputs[0].shape[0].clone(), Dim::Static(*sample_size)]
        }
        (None, _) => inputs[0].shape.clone(),
    };
    TensorType::new(c.dtype, shape)
}

impl InferOp for RandomConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        one(infer(self, inputs))
    }
}
