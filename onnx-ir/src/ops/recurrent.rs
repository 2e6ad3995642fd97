//! RNN, GRU and LSTM (every opset: layout from 14): direction, hidden size, activations with
//! their alpha/beta, clip, GRU's linear_before_reset, LSTM's input_forget and peepholes.

use super::{NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::types::{Dim, Kind, TensorType};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    Rnn,
    Gru { linear_before_reset: bool },
    Lstm { input_forget: bool },
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecurrentConfig {
    pub cell: CellKind,
    pub hidden: usize,
    /// One entry per direction: `true` runs backwards.
    pub reverse: Vec<bool>,
    /// Activation names with alpha and beta, as ONNX lists them (per direction).
    pub activations: Vec<(String, f64, f64)>,
    pub clip: Option<f64>,
    pub batch_first: bool,
}

/// The activations the run-time cells implement (code generation names their variants).
const ACTIVATIONS: &[&str] = &[
    "Sigmoid",
    "Tanh",
    "Relu",
    "HardSigmoid",
    "LeakyRelu",
    "ThresholdedRelu",
    "ScaledTanh",
    "Elu",
    "Softsign",
    "Softplus",
    "Affine",
];

fn default_params(name: &str) -> (f64, f64) {
    match name {
        "LeakyRelu" => (0.01, 0.0),
        "ThresholdedRelu" | "Elu" => (1.0, 0.0),
        "ScaledTanh" => (1.0, 1.0),
        "HardSigmoid" => (0.2, 0.5),
        "Affine" => (1.0, 0.0),
        _ => (0.0, 0.0),
    }
}

pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let a = &ctx.attrs;
    let x = ctx.input_type(0)?;
    if x.rank() != 3 || x.dtype.kind() != Kind::Float {
        return Err(ctx.error(format!("X must be a 3-D float tensor, got {x}")));
    }
    let cell = match ctx.op_type {
        "RNN" => CellKind::Rnn,
        "GRU" => CellKind::Gru { linear_before_reset: a.int_or("linear_before_reset", 0)? != 0 },
        _ => CellKind::Lstm { input_forget: a.int_or("input_forget", 0)? != 0 },
    };
    let reverse = match a.string("direction")?.as_deref().unwrap_or("forward") {
        "forward" => vec![false],
        "reverse" => vec![true],
        "bidirectional" => vec![false, true],
        other => return Err(ctx.error(format!("unknown direction `{other}`"))),
    };
    let r = ctx.input_type(2)?;
    let hidden = match a.int("hidden_size")? {
        Some(h) => usize::try_from(h).unwrap_or(0),
        None => r.shape.get(2).and_then(Dim::as_static).ok_or_else(|| ctx.error("hidden_size is required"))?,
    };
    if hidden == 0 {
        let given = a.int("hidden_size")?.unwrap_or(0);
        return Err(ctx.error(format!("hidden_size must be positive, got {given}")));
    }
    let defaults: &[&str] = match cell {
        CellKind::Rnn => &["Tanh"],
        CellKind::Gru { .. } => &["Sigmoid", "Tanh"],
        CellKind::Lstm { .. } => &["Sigmoid", "Tanh", "Tanh"],
    };
    let names: Vec<String> = match a.strings_or_none("activations")? {
        Some(list) => list,
        None => reverse.iter().flat_map(|_| defaults.iter().map(|s| s.to_string())).collect(),
    };
    if names.len() != defaults.len() * reverse.len() {
        return Err(ctx.error(format!("expected {} activations, got {names:?}", defaults.len() * reverse.len())));
    }
    let (alphas, betas) =
        (a.floats("activation_alpha")?.unwrap_or_default(), a.floats("activation_beta")?.unwrap_or_default());
    let (mut ai, mut bi) = (0, 0);
    let mut activations = vec![];
    for name in names {
        super::check_choice("activation", &name, ACTIVATIONS).map_err(|e| ctx.error(e))?;
        let (mut alpha, mut beta) = default_params(&name);
        if matches!(name.as_str(), "LeakyRelu" | "ThresholdedRelu" | "ScaledTanh" | "HardSigmoid" | "Elu" | "Affine") {
            if let Some(&v) = alphas.get(ai) {
                alpha = v as f64;
            }
            ai += 1;
        }
        if matches!(name.as_str(), "ScaledTanh" | "HardSigmoid" | "Affine") {
            if let Some(&v) = betas.get(bi) {
                beta = v as f64;
            }
            bi += 1;
        }
        activations.push((name, alpha, beta));
    }
    let config = RecurrentConfig {
        cell,
        hidden,
        reverse,
        activations,
        clip: a.float("clip")?.map(f64::from),
        batch_first: a.int_or("layout", 0)? != 0,
    };
    Ok(Parsed::new(Op::Recurrent(config), ctx.inputs.len()))
}

pub fn infer(c: &RecurrentConfig, x: &TensorType) -> Vec<TensorType> {
    let (seq, batch) =
        if c.batch_first { (x.shape[1].clone(), x.shape[0].clone()) } else { (x.shape[0].clone(), x.shape[1].clone()) };
    let (dirs, hidden) = (Dim::Static(c.reverse.len()), Dim::Static(c.hidden));
    let y = if c.batch_first {
        vec![batch.clone(), seq, dirs.clone(), hidden.clone()]
    } else {
        vec![seq, dirs.clone(), batch.clone(), hidden.clone()]
    };
    let state = if c.batch_first { vec![batch, dirs, hidden] } else { vec![dirs, batch, hidden] };
    let state = TensorType::new(x.dtype, state);
    let mut out = vec![TensorType::new(x.dtype, y), state.clone()];
    if matches!(c.cell, CellKind::Lstm { .. }) {
        out.push(state);
    }
    out
}
