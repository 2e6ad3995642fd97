//! RNN, GRU and LSTM (every opset: layout from 14): direction, hidden size, activations with
//! their alpha/beta, clip, GRU's linear_before_reset, LSTM's input_forget and peepholes.

use super::InferOp;
use super::{NodeCtx, Op, Parsed};
use crate::attributes::spelled_enum;
use crate::error::Result;
use crate::types::{Dim, Kind, TensorType};

/// The recurrent cell, with its cell-specific attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellKind {
    /// RNN: one gate, `h = f(X·Wᵀ + h·Rᵀ + b)`.
    Rnn,
    /// GRU: update, reset and hidden gates (ONNX order z, r, h).
    Gru {
        /// `linear_before_reset` (default 0): the reset gate multiplies `h·Rᵀ + Rb` rather than `h`.
        linear_before_reset: bool,
    },
    /// LSTM: input, output, forget and cell gates (ONNX order i, o, f, c).
    Lstm {
        /// `input_forget` (default 0): the forget gate is `1 - input gate`.
        input_forget: bool,
    },
}

spelled_enum! {
    /// A gate activation of `activations`.
    pub enum Activation {
        Sigmoid = "Sigmoid",
        Tanh = "Tanh",
        Relu = "Relu",
        HardSigmoid = "HardSigmoid",
        LeakyRelu = "LeakyRelu",
        ThresholdedRelu = "ThresholdedRelu",
        ScaledTanh = "ScaledTanh",
        Elu = "Elu",
        Softsign = "Softsign",
        Softplus = "Softplus",
        Affine = "Affine",
    }
}

impl Activation {
    /// How many of (alpha, beta) the function takes: ONNX hands out `activation_alpha` and
    /// `activation_beta` in order to the functions that take them.
    pub fn arity(self) -> usize {
        match self {
            Self::HardSigmoid | Self::ScaledTanh | Self::Affine => 2,
            Self::LeakyRelu | Self::ThresholdedRelu | Self::Elu => 1,
            Self::Sigmoid | Self::Tanh | Self::Relu | Self::Softsign | Self::Softplus => 0,
        }
    }

    /// ONNX's (alpha, beta) when the model gives none.
    fn default_params(self) -> (f64, f64) {
        match self {
            Self::LeakyRelu => (0.01, 0.0),
            Self::ThresholdedRelu | Self::Elu | Self::Affine => (1.0, 0.0),
            Self::ScaledTanh => (1.0, 1.0),
            Self::HardSigmoid => (0.2, 0.5),
            Self::Sigmoid | Self::Tanh | Self::Relu | Self::Softsign | Self::Softplus => (0.0, 0.0),
        }
    }
}

spelled_enum! {
    /// `direction` of the recurrence.
    enum Direction {
        Forward = "forward",
        Reverse = "reverse",
        Bidirectional = "bidirectional",
    }
}

/// RNN, GRU or LSTM (inputs X, W, R, B, sequence_lens, initial_h, initial_c, P as ONNX orders them).
#[derive(Debug, Clone, PartialEq)]
pub struct RecurrentConfig {
    /// The cell.
    pub cell: CellKind,
    /// `hidden_size`.
    pub hidden: usize,
    /// One entry per direction: `true` runs backwards.
    pub reverse: Vec<bool>,
    /// Activations with alpha and beta, as ONNX lists them (per direction).
    pub activations: Vec<(Activation, f64, f64)>,
    /// `clip`: gate pre-activations clamped to `[-clip, clip]`; none when unset.
    pub clip: Option<f64>,
    /// `layout` = 1 (opset 14): X, Y and the states batch-major.
    pub batch_first: bool,
    /// com.microsoft's DynamicQuantizeLSTM: X, and `h` before each step, are quantized to
    /// uint8 with their own range (as ONNX Runtime does) before they meet the weights, which
    /// are then integer values (less their zero point), with their column scales `[dirs, 4 *
    /// hidden]` as inputs 8 (W's) and 9 (R's).
    pub quantize_inputs: bool,
}

/// Parses RNN, GRU and LSTM of any opset into [`Op::Recurrent`].
pub fn parse(ctx: &NodeCtx) -> Result<Parsed> {
    let a = &ctx.attrs;
    // Opsets 1 to 3 make Y optional with it; Y is computed whether or not it is used.
    a.ignore(&["output_sequence"]);
    let x = ctx.input_type(0)?;
    if x.rank() != 3 || x.dtype.kind() != Kind::Float {
        return Err(ctx.error(format!("X must be a 3-D float tensor, got {x}")));
    }
    let cell = match ctx.op_type {
        "RNN" => CellKind::Rnn,
        "GRU" => CellKind::Gru { linear_before_reset: a.int_or("linear_before_reset", 0)? != 0 },
        _ => CellKind::Lstm { input_forget: a.int_or("input_forget", 0)? != 0 },
    };
    let reverse = match a.choice_or("direction", Direction::Forward)? {
        Direction::Forward => vec![false],
        Direction::Reverse => vec![true],
        Direction::Bidirectional => vec![false, true],
    };
    let r = ctx.input_type(2)?;
    let hidden = match a.int("hidden_size")? {
        Some(h) => usize::try_from(h).unwrap_or(0),
        // DynamicQuantizeLSTM's R is `[dirs, hidden, 4 * hidden]`, LSTM's `[dirs, 4 * hidden, hidden]`.
        None => r
            .shape
            .get(if ctx.op_type == "DynamicQuantizeLSTM" { 1 } else { 2 })
            .and_then(Dim::as_static)
            .ok_or_else(|| ctx.error("hidden_size is required"))?,
    };
    if hidden == 0 {
        let given = a.int("hidden_size")?.unwrap_or(0);
        return Err(ctx.error(format!("hidden_size must be positive, got {given}")));
    }
    check_weight_shapes(ctx, &cell, hidden, reverse.len())?;
    let defaults: &[Activation] = match cell {
        CellKind::Rnn => &[Activation::Tanh],
        CellKind::Gru { .. } => &[Activation::Sigmoid, Activation::Tanh],
        CellKind::Lstm { .. } => &[Activation::Sigmoid, Activation::Tanh, Activation::Tanh],
    };
    let functions: Vec<Activation> = match a.strings_or_none("activations")? {
        Some(list) => {
            if list.len() != defaults.len() * reverse.len() {
                return Err(ctx.error(format!("expected {} activations, got {list:?}", defaults.len() * reverse.len())));
            }
            list.iter().map(|name| a.spelled("activations", name)).collect::<Result<_>>()?
        }
        None => reverse.iter().flat_map(|_| defaults.iter().copied()).collect(),
    };
    let (alphas, betas) =
        (a.floats("activation_alpha")?.unwrap_or_default(), a.floats("activation_beta")?.unwrap_or_default());
    let (mut ai, mut bi) = (0, 0);
    let mut activations = vec![];
    for function in functions {
        let (mut alpha, mut beta) = function.default_params();
        if function.arity() >= 1 {
            if let Some(&v) = alphas.get(ai) {
                alpha = v as f64;
            }
            ai += 1;
        }
        if function.arity() == 2 {
            if let Some(&v) = betas.get(bi) {
                beta = v as f64;
            }
            bi += 1;
        }
        activations.push((function, alpha, beta));
    }
    let config = RecurrentConfig {
        cell,
        hidden,
        reverse,
        activations,
        clip: a.float("clip")?.map(f64::from),
        batch_first: a.int_or("layout", 0)? != 0,
        quantize_inputs: false,
    };
    Ok(Parsed::new(Op::Recurrent(config), ctx.inputs.len()))
}

/// W, R and B against `hidden_size`, the direction count and X's features, where their dims
/// are static (ONNX Runtime refuses a contradiction at load): the cell reads them as such.
/// DynamicQuantizeLSTM's W and R are transposed (`[dirs, input, 4 * hidden]`, `[dirs, hidden,
/// 4 * hidden]`).
fn check_weight_shapes(ctx: &NodeCtx, cell: &CellKind, hidden: usize, dirs: usize) -> Result<()> {
    let gates = match cell {
        CellKind::Rnn => 1,
        CellKind::Gru { .. } => 3,
        CellKind::Lstm { .. } => 4,
    };
    let too_large = || ctx.error(format!("hidden_size {hidden} is too large"));
    let bias = hidden.checked_mul(2 * gates).ok_or_else(too_large)?;
    let (rows, bias) = (Dim::Static(bias / 2), Dim::Static(bias));
    // X's features are its last dim in either layout.
    let (features, dirs, hidden) = (ctx.input_type(0)?.shape[2].clone(), Dim::Static(dirs), Dim::Static(hidden));
    let oriented = |inner: Dim| match ctx.op_type {
        "DynamicQuantizeLSTM" => vec![dirs.clone(), inner, rows.clone()],
        _ => vec![dirs.clone(), rows.clone(), inner],
    };
    let expected =
        [(1, "W", oriented(features)), (2, "R", oriented(hidden.clone())), (3, "B", vec![dirs.clone(), bias])];
    for (index, name, dims) in expected {
        let Some(value) = ctx.inputs.get(index).copied().flatten() else { continue };
        let shape = &value.ty.shape;
        let fits = shape.len() == dims.len()
            && shape.iter().zip(&dims).all(|(got, want)| match (got.as_static(), want.as_static()) {
                (Some(got), Some(want)) => got == want,
                _ => true,
            });
        if !fits {
            let want = dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
            return Err(ctx.error(format!(
                "{name} is {} but hidden_size {hidden}, {dirs} direction(s) and X's features make it [{want}]",
                value.ty
            )));
        }
    }
    Ok(())
}

/// Outputs Y `[seq, dirs, batch, hidden]` and Y_h `[dirs, batch, hidden]` (and Y_c for LSTM);
/// batch first with `layout` 1.
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

impl InferOp for RecurrentConfig {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        Ok(infer(self, inputs[0]))
    }
}
