//! The optimizer ops of the `ai.onnx.preview.training` domain (Adagrad, Adam, Momentum): one
//! update step of each optimized tensor, elementwise formulas lowered at import into
//! default-domain IR ops. All three are opset 1 ops, the domain's only version. Inputs: the
//! learning rate `R` (a float scalar), the update count `T` (an int64 scalar), then the
//! optimized tensors in groups (all `X`s, then all `G`s, then each state's); outputs the new
//! `X`s, then each new state. The formulas are the schemas' and ONNX's reference evaluator's
//! (`onnx/reference/ops/aionnx_preview_training`), in their order of operations.

use super::elementwise::{BinaryOp, UnaryOp};
use super::lowered::{check_domain_opset, Lowered, Src};
use super::{NodeCtx, Op, WhereConfig};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::DType;

/// The domain.
pub const DOMAIN: &str = "ai.onnx.preview.training";

/// The newest opset version of the domain that onnx.defs (onnx==1.23.2) defines.
pub const NEWEST_OPSET: i64 = 1;

/// The ops lowered here, with the tensors of each group (X, G, then the states) and how they
/// are lowered: SUPPORTED-OPS.md lists them from this table.
pub const OPS: &[(&str, usize, &str)] = &[
    ("Adagrad", 3, "learning rate decayed by `T`, accumulated squared gradient, elementwise update"),
    ("Adam", 4, "bias-corrected learning rate where `T > 0`, both moments, elementwise update"),
    ("Momentum", 3, "standard or Nesterov momentum (`mode`), `beta` from the second update on"),
];

spelled_enum! {
    /// Momentum's `mode`.
    enum MomentumMode {
        Standard = "standard",
        Nesterov = "nesterov",
    }
}

/// Whether the op is one this module lowers.
pub fn lowers(domain: &str, op_type: &str) -> bool {
    domain == DOMAIN && OPS.iter().any(|(op, ..)| *op == op_type)
}

/// The node as IR ops; `ctx.opset` is the model's version of the domain (0 when it imports none).
pub fn lower(ctx: &NodeCtx) -> Result<Lowered> {
    check_domain_opset(ctx, DOMAIN, NEWEST_OPSET)?;
    let Some(&(_, per_group, _)) = OPS.iter().find(|(op, ..)| *op == ctx.op_type) else {
        return Err(ctx.error("no implementation"));
    };
    let step = Step::new(ctx, per_group)?;
    match ctx.op_type {
        "Adagrad" => adagrad(ctx, step),
        "Adam" => adam(ctx, step),
        _ => momentum(ctx, step),
    }
}

/// What every optimizer reads: the group count, the tensors' type and `T` as that type.
struct Step {
    plan: Lowered,
    /// How many tensors are optimized.
    groups: usize,
    /// The tensors' type (float).
    dtype: DType,
    /// The learning rate `R`.
    rate: Src,
    /// `T > 0`, a bool scalar.
    updated_before: Src,
}

impl Step {
    /// Checks the inputs (`R`, `T`, then `per_group` tensors per optimized tensor) and outputs
    /// (all but the gradient of each group).
    fn new(ctx: &NodeCtx, per_group: usize) -> Result<Self> {
        let tensors = ctx.inputs.len().saturating_sub(2);
        let groups = tensors / per_group;
        if ctx.inputs.len() < 2 + per_group || !tensors.is_multiple_of(per_group) {
            return Err(ctx.error(format!(
                "takes R, T and {per_group} tensors per optimized tensor, got {} inputs",
                ctx.inputs.len()
            )));
        }
        let outputs = (per_group - 1) * groups;
        if ctx.num_outputs != outputs {
            return Err(ctx.error(format!(
                "{groups} optimized tensor(s) give {outputs} outputs, the node has {}",
                ctx.num_outputs
            )));
        }
        // Double (which the schema allows) is refused: the generated code computes scalar
        // inputs and casts in float32, which double tensors would then meet at run time.
        let (rate, count) = (ctx.input_type(0)?, ctx.input_type(1)?);
        if rate.rank() != 0 || rate.dtype != DType::F32 {
            return Err(ctx
                .error(format!("R (the learning rate) must be a float scalar (double is not supported), got {rate}")));
        }
        if count.rank() != 0 || count.dtype != DType::I64 {
            return Err(ctx.error(format!("T (the update count) must be an int64 scalar, got {count}")));
        }
        let dtype = DType::F32;
        for i in 2..ctx.inputs.len() {
            let t = ctx.input_type(i)?;
            if t.dtype != dtype {
                return Err(ctx.error(format!(
                    "the optimized tensors and their states must be float (double is not supported), input {i} is {t}"
                )));
            }
        }
        let mut plan = Lowered::default();
        let rate = Src::Input(0);
        let zero = plan.scalar_of(DType::I64, 0.0);
        let updated_before = plan.binary(BinaryOp::Greater, Src::Input(1), zero);
        Ok(Self { plan, groups, dtype, rate, updated_before })
    }

    /// Input `index` of group `group` (0: X, 1: G, then the states).
    fn input(&self, index: usize, group: usize) -> Src {
        Src::Input(2 + index * self.groups + group)
    }

    fn scalar(&mut self, value: f64) -> Src {
        self.plan.scalar_of(self.dtype, value)
    }

    /// `T` as the tensors' type.
    fn count(&mut self) -> Src {
        self.plan.op(Op::cast(self.dtype), &[Src::Input(1)])
    }

    /// `norm_coefficient * X + G`: the gradient plus that of `0.5 * norm_coefficient * ||X||²`.
    fn regularized_gradient(&mut self, norm_coefficient: f64, group: usize) -> Src {
        let coefficient = self.scalar(norm_coefficient);
        let decay = self.plan.binary(BinaryOp::Mul, coefficient, self.input(0, group));
        self.plan.binary(BinaryOp::Add, decay, self.input(1, group))
    }

    /// `sqrt(h) + epsilon`.
    fn root_plus(&mut self, h: Src, epsilon: f64) -> Src {
        let root = self.plan.unary(UnaryOp::Sqrt, h);
        let epsilon = self.scalar(epsilon);
        self.plan.binary(BinaryOp::Add, root, epsilon)
    }

    /// `a * x + b * y` for constants `a` and `b`.
    fn blend(&mut self, a: f64, x: Src, b: f64, y: Src) -> Src {
        let (a, b) = (self.scalar(a), self.scalar(b));
        let ax = self.plan.binary(BinaryOp::Mul, a, x);
        let by = self.plan.binary(BinaryOp::Mul, b, y);
        self.plan.binary(BinaryOp::Add, ax, by)
    }

    /// The outputs: the new `X`s, then each state's new values, all in group order.
    fn done(self, per_group: Vec<Vec<Src>>) -> Lowered {
        let kinds = per_group.first().map_or(0, Vec::len);
        let outputs = (0..kinds).flat_map(|k| per_group.iter().map(move |g| Some(g[k]))).collect();
        self.plan.done(outputs)
    }
}

/// A float attribute with a default, as f64.
fn float(ctx: &NodeCtx, name: &str, default: f32) -> Result<f64> {
    Ok(f64::from(ctx.attrs.float_or(name, default)?))
}

/// A float attribute the schema requires.
fn required_float(ctx: &NodeCtx, name: &str) -> Result<f64> {
    let value = ctx.attrs.float(name)?.ok_or_else(|| ctx.error(format!("required attribute `{name}` is missing")))?;
    Ok(f64::from(value))
}

/// Adagrad: `r = R / (1 + T * decay_factor)`, `H_new = H + G_reg²`,
/// `X_new = X - r * G_reg / (sqrt(H_new) + epsilon)`.
fn adagrad(ctx: &NodeCtx, mut s: Step) -> Result<Lowered> {
    let norm_coefficient = float(ctx, "norm_coefficient", 0.0)?;
    let decay_factor = float(ctx, "decay_factor", 0.0)?;
    let epsilon = float(ctx, "epsilon", 1e-6)?;
    let count = s.count();
    let decay = s.scalar(decay_factor);
    let decayed = s.plan.binary(BinaryOp::Mul, count, decay);
    let one = s.scalar(1.0);
    let divisor = s.plan.binary(BinaryOp::Add, one, decayed);
    let rate = s.plan.binary(BinaryOp::Div, s.rate, divisor);
    let mut outputs = vec![];
    for group in 0..s.groups {
        let g = s.regularized_gradient(norm_coefficient, group);
        let squared = s.plan.binary(BinaryOp::Mul, g, g);
        let h_new = s.plan.binary(BinaryOp::Add, s.input(2, group), squared);
        let adaptive = s.root_plus(h_new, epsilon);
        let scaled = s.plan.binary(BinaryOp::Mul, rate, g);
        let step = s.plan.binary(BinaryOp::Div, scaled, adaptive);
        let x_new = s.plan.binary(BinaryOp::Sub, s.input(0, group), step);
        outputs.push(vec![x_new, h_new]);
    }
    Ok(s.done(outputs))
}

/// Adam: both moments, `R_adjusted = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R`,
/// `X_new = X - R_adjusted * (V_new / (sqrt(H_new) + epsilon))`, then scaled by
/// `1 - norm_coefficient_post`.
fn adam(ctx: &NodeCtx, mut s: Step) -> Result<Lowered> {
    let norm_coefficient = float(ctx, "norm_coefficient", 0.0)?;
    let norm_coefficient_post = float(ctx, "norm_coefficient_post", 0.0)?;
    let alpha = float(ctx, "alpha", 0.9)?;
    let beta = float(ctx, "beta", 0.999)?;
    let epsilon = float(ctx, "epsilon", 1e-6)?;
    let count = s.count();
    let one = s.scalar(1.0);
    let one_minus_power = |s: &mut Step, base: f64| {
        let base = s.scalar(base);
        let power = s.plan.binary(BinaryOp::Pow, base, count);
        s.plan.binary(BinaryOp::Sub, one, power)
    };
    let beta_part = one_minus_power(&mut s, beta);
    let alpha_part = one_minus_power(&mut s, alpha);
    let root = s.plan.unary(UnaryOp::Sqrt, beta_part);
    let corrected = s.plan.binary(BinaryOp::Mul, s.rate, root);
    let corrected = s.plan.binary(BinaryOp::Div, corrected, alpha_part);
    // At T = 0 the correction divides by zero; Where keeps R there.
    let rate = s.plan.op(Op::Where(WhereConfig), &[s.updated_before, corrected, s.rate]);
    let mut outputs = vec![];
    for group in 0..s.groups {
        let g = s.regularized_gradient(norm_coefficient, group);
        let v_new = s.blend(alpha, s.input(2, group), 1.0 - alpha, g);
        let squared = s.plan.binary(BinaryOp::Mul, g, g);
        let h_new = s.blend(beta, s.input(3, group), 1.0 - beta, squared);
        let h_sqrt = s.root_plus(h_new, epsilon);
        let direction = s.plan.binary(BinaryOp::Div, v_new, h_sqrt);
        let step = s.plan.binary(BinaryOp::Mul, rate, direction);
        let mut x_new = s.plan.binary(BinaryOp::Sub, s.input(0, group), step);
        // A factor of exactly 1 changes no value.
        if norm_coefficient_post != 0.0 {
            let keep = s.scalar(1.0 - norm_coefficient_post);
            x_new = s.plan.binary(BinaryOp::Mul, keep, x_new);
        }
        outputs.push(vec![x_new, v_new, h_new]);
    }
    Ok(s.done(outputs))
}

/// Momentum: `V_new = alpha * V + beta_adjusted * G_reg` (`beta_adjusted` 1 at `T = 0`), then
/// `X_new = X - R * V_new` (standard) or `X - R * (G_reg + alpha * V_new)` (Nesterov).
fn momentum(ctx: &NodeCtx, mut s: Step) -> Result<Lowered> {
    let mode: MomentumMode =
        ctx.attrs.choice("mode")?.ok_or_else(|| ctx.error("required attribute `mode` is missing"))?;
    let norm_coefficient = required_float(ctx, "norm_coefficient")?;
    let alpha = required_float(ctx, "alpha")?;
    let beta = required_float(ctx, "beta")?;
    let (beta, one) = (s.scalar(beta), s.scalar(1.0));
    let beta_adjusted = s.plan.op(Op::Where(WhereConfig), &[s.updated_before, beta, one]);
    let alpha_scalar = s.scalar(alpha);
    let mut outputs = vec![];
    for group in 0..s.groups {
        let g = s.regularized_gradient(norm_coefficient, group);
        let kept = s.plan.binary(BinaryOp::Mul, alpha_scalar, s.input(2, group));
        let added = s.plan.binary(BinaryOp::Mul, beta_adjusted, g);
        let v_new = s.plan.binary(BinaryOp::Add, kept, added);
        let direction = match mode {
            MomentumMode::Standard => v_new,
            MomentumMode::Nesterov => {
                let ahead = s.plan.binary(BinaryOp::Mul, alpha_scalar, v_new);
                s.plan.binary(BinaryOp::Add, g, ahead)
            }
        };
        let step = s.plan.binary(BinaryOp::Mul, s.rate, direction);
        let x_new = s.plan.binary(BinaryOp::Sub, s.input(0, group), step);
        outputs.push(vec![x_new, v_new]);
    }
    Ok(s.done(outputs))
}
