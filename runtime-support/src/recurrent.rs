//! ONNX RNN, GRU and LSTM, unrolled over time with one matmul per gate group and step.
//! Weights keep ONNX's layout (`W [dirs, gates * hidden, input]`, `R [dirs, gates * hidden,
//! hidden]`, `B [dirs, 2 * gates * hidden]`); gate order is ONNX's (LSTM i, o, f, c; GRU z, r, h).

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Int, Tensor};

/// A recurrent cell's activation (ONNX `activations`, with `activation_alpha`/`activation_beta`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Activation {
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `max(x, 0)`.
    Relu,
    /// `clamp(alpha · x + beta, 0, 1)` (alpha, beta).
    HardSigmoid(f64, f64),
    /// `x` where positive, else `alpha · x` (alpha).
    LeakyRelu(f64),
    /// `x` where above `alpha`, else 0 (alpha).
    ThresholdedRelu(f64),
    /// `alpha · tanh(beta · x)` (alpha, beta).
    ScaledTanh(f64, f64),
    /// `x` where positive, else `alpha · (e^x - 1)` (alpha).
    Elu(f64),
    /// `x / (1 + |x|)`.
    Softsign,
    /// `ln(1 + e^x)`.
    Softplus,
    /// `alpha · x + beta` (alpha, beta).
    Affine(f64, f64),
}

impl Activation {
    fn apply<const D: usize>(self, x: Tensor<D>) -> Tensor<D> {
        use burn::tensor::activation as a;
        match self {
            // ONNX Runtime's kernels (MLAS's rational functions), as the Sigmoid and Tanh ops.
            Self::Sigmoid => crate::kernels::sigmoid(x),
            Self::Tanh => crate::kernels::tanh(x),
            Self::Relu => a::relu(x),
            Self::HardSigmoid(alpha, beta) => x.mul_scalar(alpha).add_scalar(beta).clamp(0.0, 1.0),
            Self::LeakyRelu(alpha) => a::leaky_relu(x, alpha),
            Self::ThresholdedRelu(alpha) => x.clone().mask_fill(x.lower_equal_elem(alpha), 0.0),
            Self::ScaledTanh(alpha, beta) => x.mul_scalar(beta).tanh().mul_scalar(alpha),
            Self::Elu(alpha) => a::elu(x, alpha),
            Self::Softsign => a::softsign(x),
            Self::Softplus => a::softplus(x, 1.0),
            Self::Affine(alpha, beta) => x.mul_scalar(alpha).add_scalar(beta),
        }
    }
}

/// The recurrent cell: ONNX `RNN`, `GRU` or `LSTM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// `h = f(X·Wᵀ + H·Rᵀ + b)`: one gate.
    Rnn,
    /// Gated recurrent unit: update, reset and hidden gates.
    Gru {
        /// Apply the reset gate after the recurrent product (ONNX `linear_before_reset = 1`, PyTorch's GRU).
        linear_before_reset: bool,
    },
    /// Long short-term memory: input, output, forget and cell gates (with peepholes).
    Lstm {
        /// Couple the input and forget gates (ONNX `input_forget = 1`).
        input_forget: bool,
    },
}

impl Cell {
    /// Gates per step: one for RNN, three for GRU, four for LSTM.
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru { .. } => 3,
            Cell::Lstm { .. } => 4,
        }
    }
}

/// The attributes of an ONNX RNN, GRU or LSTM node, as the generated code passes them.
#[derive(Debug, Clone)]
pub struct RecurrentOptions {
    /// Which cell and its cell-specific attributes.
    pub cell: Cell,
    /// The hidden state's size (`hidden_size`).
    pub hidden: usize,
    /// Forward, reverse, or both (outputs stacked forward first).
    pub directions: Vec<bool>,
    /// Per direction: f, g (and h for LSTM), as ONNX lists them.
    pub activations: Vec<Activation>,
    /// Gate inputs clamped to `[-clip, clip]` before their activation (`clip`).
    pub clip: Option<f64>,
    /// Inputs and outputs batch-major (`layout = 1`).
    pub batch_first: bool,
}

/// `x` through ONNX Runtime's dynamic uint8 quantization, as integers less the zero point
/// (exact in f32), and the scale: the range (widened to hold 0) over 255 is the scale (1 for an
/// empty range), the zero point `-min / scale` rounded, and each value `round(x / scale) +
/// zero` clamped to 0..=255, in f32 with ties to even as ONNX Runtime rounds.
pub fn quantize_u8_integers<const D: usize>(x: Tensor<D>) -> (Tensor<D>, f32) {
    let (low, high) = (x.clone().min().into_scalar::<f32>(), x.clone().max().into_scalar::<f32>());
    let (scale, zero) = crate::kernels::u8_quantization(low, high);
    (x.div_scalar(scale).round().add_scalar(zero).clamp(0.0, 255.0).sub_scalar(zero), scale)
}

/// Rows `k * hidden .. (k + 1) * hidden` of a `[gates * hidden, n]` matrix.
fn gate<const D: usize>(m: &Tensor<D>, k: usize, hidden: usize) -> Tensor<D> {
    m.clone().narrow(D - 2, k * hidden, hidden)
}

fn bias_gate(b: &Tensor<1>, k: usize, hidden: usize) -> Tensor<2> {
    b.clone().narrow(0, k * hidden, hidden).unsqueeze::<2>()
}

/// Inputs of the recurrence shared by its directions (time-major `x`).
struct Inputs<'a> {
    x: &'a Tensor<3>,
    w: &'a Tensor<3>,
    r: &'a Tensor<3>,
    b: &'a Option<Tensor<2>>,
    lengths: &'a Option<Tensor<1, Int>>,
    initial_h: &'a Option<Tensor<3>>,
    initial_c: &'a Option<Tensor<3>>,
    peepholes: &'a Option<Tensor<2>>,
    /// DynamicQuantizeLSTM's column scales of W and R, `[dirs, gates * hidden]`.
    scales: Option<&'a (Tensor<2>, Tensor<2>)>,
}

/// Runs the recurrence. Returns `Y [seq, dirs, batch, hidden]` (`[batch, seq, dirs, hidden]`
/// batch-first), `Y_h` and `Y_c` (`[dirs, batch, hidden]`, batch-first `[batch, dirs, hidden]`).
#[allow(clippy::too_many_arguments)]
pub fn recurrent(
    x: Tensor<3>,
    w: Tensor<3>,
    r: Tensor<3>,
    b: Option<Tensor<2>>,
    sequence_lens: Option<Tensor<1, Int>>,
    initial_h: Option<Tensor<3>>,
    initial_c: Option<Tensor<3>>,
    peepholes: Option<Tensor<2>>,
    options: &RecurrentOptions,
) -> (Tensor<4>, Tensor<3>, Tensor<3>) {
    run(x, w, r, None, b, sequence_lens, initial_h, initial_c, peepholes, options)
}

/// [`recurrent`] for com.microsoft's DynamicQuantizeLSTM, as ONNX Runtime computes it: `w` and
/// `r` hold integer weights less their zero point, `scales` their scale per output column
/// (`[dirs, gates * hidden]`, W's then R's); `x`, then `h` before each step, are quantized to
/// uint8 from their own range (`quantize_u8_integers`); each product is exact in integers,
/// then scaled once per column by `scale_x * scale_w`; a step's gates are `(x part + h part) +
/// (Wb + Rb)`, in ONNX Runtime's order. So `h` is bit for bit ONNX Runtime's where the kernels
/// are (a last-bit difference would move a later step's quantization by a whole level).
#[allow(clippy::too_many_arguments)]
pub fn recurrent_quantized(
    x: Tensor<3>,
    w: Tensor<3>,
    r: Tensor<3>,
    scales: (Tensor<2>, Tensor<2>),
    b: Option<Tensor<2>>,
    sequence_lens: Option<Tensor<1, Int>>,
    initial_h: Option<Tensor<3>>,
    initial_c: Option<Tensor<3>>,
    peepholes: Option<Tensor<2>>,
    options: &RecurrentOptions,
) -> (Tensor<4>, Tensor<3>, Tensor<3>) {
    run(x, w, r, Some(scales), b, sequence_lens, initial_h, initial_c, peepholes, options)
}

#[allow(clippy::too_many_arguments)]
fn run(
    x: Tensor<3>,
    w: Tensor<3>,
    r: Tensor<3>,
    scales: Option<(Tensor<2>, Tensor<2>)>,
    b: Option<Tensor<2>>,
    sequence_lens: Option<Tensor<1, Int>>,
    initial_h: Option<Tensor<3>>,
    initial_c: Option<Tensor<3>>,
    peepholes: Option<Tensor<2>>,
    options: &RecurrentOptions,
) -> (Tensor<4>, Tensor<3>, Tensor<3>) {
    let x = if options.batch_first { x.swap_dims(0, 1) } else { x };
    let inputs = Inputs {
        scales: scales.as_ref(),
        x: &x,
        w: &w,
        r: &r,
        b: &b,
        lengths: &sequence_lens,
        initial_h: &initial_h,
        initial_c: &initial_c,
        peepholes: &peepholes,
    };
    let (y, y_h, y_c) = quantized_kernel(&inputs, options).unwrap_or_else(|| each_direction(&inputs, options));
    if options.batch_first {
        (y.permute([2, 0, 1, 3]), y_h.swap_dims(0, 1), y_c.swap_dims(0, 1))
    } else {
        (y, y_h, y_c)
    }
}

/// Every direction of the recurrence, one after the other or side by side: `(Y [seq, dirs,
/// batch, hidden], Y_h, Y_c)`.
fn each_direction(inputs: &Inputs, options: &RecurrentOptions) -> (Tensor<4>, Tensor<3>, Tensor<3>) {
    let x = inputs.x;
    // The two directions of a bidirectional layer are independent recurrences: on two threads
    // they run side by side (each step is too small to split).
    let per_direction: Vec<(Tensor<3>, Tensor<2>, Tensor<2>)> = match options.directions[..] {
        [first_reversed, second_reversed] => {
            // Multiply-adds of one direction.
            let [steps, batch, input] = x.dims();
            let per_step = batch * options.cell.gates() * options.hidden * (input + options.hidden);
            let (first, second) = crate::parallel::join(
                steps.saturating_mul(per_step),
                || direction(inputs, options, 0, first_reversed),
                || direction(inputs, options, 1, second_reversed),
            );
            vec![first, second]
        }
        _ => options
            .directions
            .iter()
            .enumerate()
            .map(|(d, &reversed)| direction(inputs, options, d, reversed))
            .collect(),
    };
    let (mut ys, mut hs, mut cs) = (vec![], vec![], vec![]);
    for (y, h, c) in per_direction {
        ys.push(y);
        hs.push(h);
        cs.push(c);
    }
    (Tensor::stack::<4>(ys, 1), Tensor::stack::<3>(hs, 0), Tensor::stack::<3>(cs, 0))
}

/// DynamicQuantizeLSTM with ONNX's default activations and no clip, peepholes or sequence
/// lengths, every direction in one kernel (`None` where there is none for these tensors).
fn quantized_kernel(inputs: &Inputs, options: &RecurrentOptions) -> Option<(Tensor<4>, Tensor<3>, Tensor<3>)> {
    let Inputs { x, w, r, b, lengths, initial_h, initial_c, peepholes, scales } = *inputs;
    let defaults = [Activation::Sigmoid, Activation::Tanh, Activation::Tanh];
    let plain = options.cell == (Cell::Lstm { input_forget: false })
        && options.activations.chunks(3).all(|act| act == defaults)
        && options.clip.is_none()
        && peepholes.is_none()
        && lengths.is_none();
    let (w_scales, r_scales) = scales.filter(|_| plain)?;
    let time_major = |s: &Option<Tensor<3>>| s.clone().map(|s| if options.batch_first { s.swap_dims(0, 1) } else { s });
    let (h0, c0) = (time_major(initial_h), time_major(initial_c));
    let state = (h0.as_ref(), c0.as_ref());
    crate::kernels::quantized_lstm(x, ((w, r), (w_scales, r_scales), b.as_ref(), state), &options.directions)
}

/// One direction of the recurrence: `Y [seq, batch, hidden]` and the last `h`, `c`.
fn direction(
    inputs: &Inputs,
    options: &RecurrentOptions,
    d: usize,
    reverse: bool,
) -> (Tensor<3>, Tensor<2>, Tensor<2>) {
    let Inputs { x, w, r, b, lengths, initial_h, initial_c, peepholes, scales } = *inputs;
    let [steps, batch, _] = x.dims();
    let hidden = options.hidden;
    let device = x.device();
    let gates = options.cell.gates();
    let state = |t: &Option<Tensor<3>>| -> Tensor<2> {
        let t = t.clone().map(|t| if options.batch_first { t.swap_dims(0, 1) } else { t });
        match t {
            Some(t) => t.narrow(0, d, 1).squeeze_dim(0),
            None => Tensor::zeros([batch, hidden], (&device, x.dtype())),
        }
    };
    let per_dir = match options.cell {
        Cell::Rnn => 1,
        Cell::Gru { .. } => 2,
        Cell::Lstm { .. } => 3,
    };
    let w: Tensor<2> = w.clone().narrow(0, d, 1).squeeze_dim(0);
    let r: Tensor<2> = r.clone().narrow(0, d, 1).squeeze_dim(0);
    let b: Tensor<1> = match &b {
        Some(b) => b.clone().narrow(0, d, 1).squeeze_dim(0),
        None => Tensor::zeros([2 * gates * hidden], (&device, x.dtype())),
    };
    let act = &options.activations[d * per_dir..(d + 1) * per_dir];
    let clip = |t: Tensor<2>| match options.clip {
        Some(c) => t.clamp(-c, c),
        None => t,
    };
    // The input projection of every step and gate is one matrix product before the loop
    // (`[steps * batch, gates * hidden]`); each step then multiplies the state once, for
    // all gates, and reads gate k's columns of both.
    let [_, _, input] = x.dims();
    let input_bias = b.clone().narrow(0, 0, gates * hidden).unsqueeze::<2>();
    // GRU without linear_before_reset multiplies the reset state by gate h's weights
    // itself: the per-step product then covers gates z and r only.
    let state_gates = match options.cell {
        Cell::Gru { linear_before_reset: false } => 2,
        _ => gates,
    };
    let r_state = r.clone().narrow(0, 0, state_gates * hidden).transpose();
    let bias_state = b.clone().narrow(0, gates * hidden, state_gates * hidden).unsqueeze::<2>();
    // DynamicQuantizeLSTM: this direction's column scales, `[1, gates * hidden]`.
    let column_scales = scales.map(|(w_scales, r_scales)| {
        let of = |s: &Tensor<2>| s.clone().narrow(0, d, 1);
        (of(w_scales), of(r_scales))
    });
    let x_rows = x.clone().reshape([steps * batch, input]);
    let projected: Tensor<3> = match &column_scales {
        // The bias comes after the state's product, as ONNX Runtime adds it.
        Some((w_scales, _)) => {
            let (x_int, x_scale) = quantize_u8_integers(x_rows);
            crate::kernels::integer_matmul_constant_transposed(x_int.clone(), &w)
                .unwrap_or_else(|| crate::kernels::integer_matmul(x_int, w.clone().transpose()))
                .mul(w_scales.clone().mul_scalar(x_scale))
        }
        None => crate::kernels::matmul_constant_transposed(x_rows, &w).add(input_bias.clone()),
    }
    .reshape([steps, batch, gates * hidden]);
    // Each step's state product `h · Rᵀ` and the bias added to it. Quantized (DynamicQuantizeLSTM,
    // an LSTM: every gate is in the product), `h` is quantized, the exact product scaled per
    // column, and the input bias, which the projection above left out, joins the recurrent one.
    let state_scales = column_scales.as_ref().map(|(_, r)| r.clone().narrow(1, 0, state_gates * hidden));
    let step_bias = match &state_scales {
        Some(_) => input_bias.clone().narrow(1, 0, state_gates * hidden).add(bias_state.clone()),
        None => bias_state.clone(),
    };
    let state_product = |h: Tensor<2>| match &state_scales {
        Some(r_scales) => {
            let (h_int, h_scale) = quantize_u8_integers(h);
            h_int.matmul(r_state.clone()).mul(r_scales.clone().mul_scalar(h_scale))
        }
        None => h.matmul(r_state.clone()),
    };
    let columns = |m: &Tensor<2>, k: usize| m.clone().narrow(1, k * hidden, hidden);
    let mut h = state(initial_h);
    let mut c = state(initial_c);
    // Small states, or one sequence: there Burn's per-op cost dominates, or the step is a
    // matrix-vector product that reads each row of R once; larger batches are matrix products
    // that Burn's matmul does better than per-row dot products. (A quantized LSTM this kernel
    // could run took `quantized_kernel` before it got here.)
    let default_lstm = options.cell == (Cell::Lstm { input_forget: false })
        && state_scales.is_none()
        && (hidden <= 128 || batch == 1)
        && act == [Activation::Sigmoid, Activation::Tanh, Activation::Tanh]
        && options.clip.is_none()
        && peepholes.is_none()
        && lengths.is_none();
    if default_lstm {
        // An LSTM: the state product covers every gate, so `step_bias` is all of Rb.
        let state = (&h, &c);
        if let Some(done) = crate::kernels::lstm_sequence(&projected, &r, &step_bias, state, reverse) {
            return done;
        }
    }
    let float = (&device, projected.dtype());
    let mut outputs: Vec<Tensor<2>> = (0..steps).map(|_| Tensor::zeros([batch, hidden], float)).collect();
    let order: Vec<usize> = if reverse { (0..steps).rev().collect() } else { (0..steps).collect() };
    for t in order {
        let xw: Tensor<2> = projected.clone().narrow(0, t, 1).squeeze_dim(0);
        // Quantized, this sums `x part + (h part + Wb + Rb)`; the kernel above keeps ONNX
        // Runtime's `(x part + h part) + (Wb + Rb)` (a last-bit difference on this path).
        let hr = state_product(h.clone()).add(step_bias.clone());
        let (h_new, c_new) = match options.cell {
            Cell::Rnn => (act[0].apply(clip(columns(&xw, 0).add(columns(&hr, 0)))), c.clone()),
            Cell::Gru { linear_before_reset } => {
                let z = act[0].apply(clip(columns(&xw, 0).add(columns(&hr, 0))));
                let rg = act[0].apply(clip(columns(&xw, 1).add(columns(&hr, 1))));
                let candidate = if linear_before_reset {
                    columns(&xw, 2).add(rg.mul(columns(&hr, 2)))
                } else {
                    let reset = rg.mul(h.clone());
                    columns(&xw, 2).add(reset.matmul(gate(&r, 2, hidden).transpose())).add(bias_gate(
                        &b,
                        gates + 2,
                        hidden,
                    ))
                };
                let candidate = act[1].apply(clip(candidate));
                (z.clone().neg().add_scalar(1.0).mul(candidate).add(z.mul(h.clone())), c.clone())
            }
            Cell::Lstm { input_forget } => {
                let peephole = |k: usize| -> Option<Tensor<2>> {
                    peepholes
                        .clone()
                        .map(|p| p.narrow(0, d, 1).squeeze_dim::<1>(0).narrow(0, k * hidden, hidden).unsqueeze::<2>())
                };
                let with_peephole = |pre: Tensor<2>, k: usize, cell: &Tensor<2>| match peephole(k) {
                    Some(p) => pre.add(p.mul(cell.clone())),
                    None => pre,
                };
                let i = act[0].apply(clip(with_peephole(columns(&xw, 0).add(columns(&hr, 0)), 0, &c)));
                let f = act[0].apply(clip(with_peephole(columns(&xw, 2).add(columns(&hr, 2)), 2, &c)));
                let f = if input_forget { i.clone().neg().add_scalar(1.0) } else { f };
                let g = act[1].apply(clip(columns(&xw, 3).add(columns(&hr, 3))));
                let c_new = f.mul(c.clone()).add(i.mul(g));
                let o = act[0].apply(clip(with_peephole(columns(&xw, 1).add(columns(&hr, 1)), 1, &c_new)));
                (o.mul(act[2].apply(c_new.clone())), c_new)
            }
        };
        // Past a batch entry's length its state stays and its output is zero.
        match lengths {
            Some(lengths) => {
                let mask = lengths.clone().lower_equal_elem(t as i64).unsqueeze_dim::<2>(1).expand([batch, hidden]);
                outputs[t] = h_new.clone().mask_fill(mask.clone(), 0.0);
                h = h_new.mask_where(mask.clone(), h);
                c = c_new.mask_where(mask, c);
            }
            None => {
                outputs[t] = h_new.clone();
                h = h_new;
                c = c_new;
            }
        }
    }
    (Tensor::stack::<3>(outputs, 0), h, c)
}

/// The recurrences against ONNX Runtime (`scripts/helper_references.py`, the case named in the
/// test; inputs are its `weights`, here `wave`), the activations against their definitions.
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats, ints, wave};

    #[test]
    fn values_in_memory_quantize_as_the_tensor_does() {
        // Ties of x / scale (0.5, 1.5 in units of the scale), a positive-only and an all-zero
        // row (zero point 0, scale 1), and the wave's values.
        let rows: [Vec<f32>; 4] = [
            vec![-1.0, 0.5 * (2.0 / 255.0), 1.5 * (2.0 / 255.0), 1.0],
            vec![0.25, 3.0, 0.75],
            vec![0.0; 5],
            wave([37], 3).into_data().try_to_vec::<f32>().expect("f32"),
        ];
        for row in rows {
            let (tensor, scale) = quantize_u8_integers(floats(&row, [row.len()]));
            let tensor = tensor.into_data().try_to_vec::<f32>().expect("f32");
            let mut bytes = vec![0u8; row.len()];
            let (values_scale, zero) = crate::kernels::quantize_u8_bytes(&row, &mut bytes);
            assert_eq!(values_scale.to_bits(), scale.to_bits(), "{row:?}");
            assert_eq!(
                bytes.iter().map(|&b| (b as f32 - zero).to_bits()).collect::<Vec<_>>(),
                tensor.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{row:?}"
            );
        }
    }

    fn options(cell: Cell, directions: &[bool], activations: &[Activation], clip: Option<f64>) -> RecurrentOptions {
        RecurrentOptions {
            cell,
            hidden: 2,
            directions: directions.to_vec(),
            activations: activations.to_vec(),
            clip,
            batch_first: false,
        }
    }

    /// Case rnn_bidirectional_lengths: Y `[seq 3, dirs 2, batch 2, hidden 2]` and Y_h; the
    /// second batch entry is one step long (zeros after it, its reverse pass starts there).
    const RNN_Y: [f32; 24] = [
        0.070_799_99,
        0.0,
        0.0625,
        0.0,
        0.119_347_57,
        -0.126_563_49,
        0.069_487_81,
        -0.179_339_29, //
        0.310_356,
        0.0,
        0.0,
        0.0,
        0.270_635_6,
        -0.293_712_56,
        0.0,
        0.0, //
        0.367_024_9,
        0.0,
        0.0,
        0.0,
        0.149_569_39,
        -0.299_709_14,
        0.0,
        0.0,
    ];
    const RNN_Y_H: [f32; 8] = [0.367_024_9, 0.0, 0.0625, 0.0, 0.119_347_57, -0.126_563_49, 0.069_487_81, -0.179_339_29];

    fn rnn_case(batch_first: bool) -> (Tensor<4>, Tensor<3>) {
        let o = RecurrentOptions {
            batch_first,
            ..options(Cell::Rnn, &[false, true], &[Activation::Relu, Activation::Tanh], None)
        };
        let (x, h0) = (wave([3, 2, 2], 1), wave([2, 2, 2], 5));
        let (x, h0) = if batch_first { (x.swap_dims(0, 1), h0.swap_dims(0, 1)) } else { (x, h0) };
        let lengths = Some(ints(&[3, 1], [2]));
        let (y, y_h, _) = recurrent(
            x,
            wave([2, 2, 2], 2),
            wave([2, 2, 2], 3),
            Some(wave([2, 4], 4)),
            lengths,
            Some(h0),
            None,
            None,
            &o,
        );
        (y, y_h)
    }

    #[test]
    fn rnn_bidirectional_with_sequence_lengths() {
        let (y, y_h) = rnn_case(false);
        assert_close(y, [3, 2, 2, 2], &RNN_Y, 1e-5);
        assert_close(y_h, [2, 2, 2], &RNN_Y_H, 1e-5);
    }

    #[test]
    fn batch_first_moves_the_batch_axis_of_inputs_and_outputs_to_the_front() {
        // layout = 1: the same case with X and initial_h batch-major; Y `[batch, seq, dirs,
        // hidden]` and Y_h `[batch, dirs, hidden]`.
        let (y, y_h) = rnn_case(true);
        let y_want: Vec<f32> = floats(&RNN_Y, [3, 2, 2, 2]).permute([2, 0, 1, 3]).into_data().iter().collect();
        let y_h_want: Vec<f32> = floats(&RNN_Y_H, [2, 2, 2]).swap_dims(0, 1).into_data().iter().collect();
        assert_close(y, [2, 3, 2, 2], &y_want, 1e-5);
        assert_close(y_h, [2, 2, 2], &y_h_want, 1e-5);
    }

    #[test]
    fn gru_with_and_without_linear_before_reset() {
        // Case gru: Y `[2, 1, 1, 2]` and Y_h of each.
        let expected: [([f32; 4], bool); 2] = [
            ([0.070_313_14, -0.012_905_207, 0.212_410_48, -0.178_642_68], false),
            ([-0.014_529_016, -0.075_382_79, 0.078_195_27, -0.266_628_4], true),
        ];
        for (want, linear_before_reset) in expected {
            let o =
                options(Cell::Gru { linear_before_reset }, &[false], &[Activation::Sigmoid, Activation::Tanh], None);
            let (x, w, r, b) = (wave([2, 1, 2], 6), wave([1, 6, 2], 7), wave([1, 6, 2], 8), wave([1, 12], 9));
            let (y, y_h, _) = recurrent(x, w, r, Some(b), None, None, None, None, &o);
            assert_close(y, [2, 1, 1, 2], &want, 1e-5);
            assert_close(y_h, [1, 1, 2], &want[2..], 1e-5);
        }
    }

    const LSTM_ACTIVATIONS: [Activation; 3] = [Activation::Sigmoid, Activation::Tanh, Activation::Tanh];

    #[test]
    fn lstm_reverse_with_peepholes_clip_and_initial_state() {
        // Case lstm_reverse_peepholes_clip.
        let o = options(Cell::Lstm { input_forget: false }, &[true], &LSTM_ACTIVATIONS, Some(0.9));
        let x = wave([2, 1, 2], 10).mul_scalar(4.0);
        let (w, r, b) = (wave([1, 8, 2], 11), wave([1, 8, 2], 12), wave([1, 16], 13));
        let (h0, c0, p) = (wave([1, 1, 2], 14), wave([1, 1, 2], 15), wave([1, 6], 16));
        let (y, y_h, y_c) = recurrent(x, w, r, Some(b), None, Some(h0), Some(c0), Some(p), &o);
        let expected = [-0.109_192_71, 0.021_206_018, 0.055_677_883, -0.216_027_62];
        assert_close(y, [2, 1, 1, 2], &expected, 1e-5);
        assert_close(y_h, [1, 1, 2], &expected[..2], 1e-5);
        assert_close(y_c, [1, 1, 2], &[-0.397_448_15, 0.040_118_307], 1e-5);
    }

    #[test]
    fn lstm_input_forget_couples_the_forget_gate_to_the_input_gate() {
        // Case lstm_input_forget (no bias: zeros).
        let o = options(Cell::Lstm { input_forget: true }, &[false], &LSTM_ACTIVATIONS, None);
        let (y, y_h, y_c) =
            recurrent(wave([2, 1, 2], 17), wave([1, 8, 2], 18), wave([1, 8, 2], 19), None, None, None, None, None, &o);
        let expected = [-0.048_164_126, 0.049_967_95, -0.000_487_224_7, -0.019_833_837];
        assert_close(y, [2, 1, 1, 2], &expected, 1e-5);
        assert_close(y_h, [1, 1, 2], &expected[2..], 1e-5);
        assert_close(y_c, [1, 1, 2], &[-0.001_026_738_4, -0.038_686_227], 1e-5);
    }

    #[test]
    fn activations_follow_their_onnx_definitions() {
        // At x = -2, 0.5 and 3, worked out from the definitions in ONNX's RNN documentation.
        let x = || floats(&[-2.0, 0.5, 3.0], [3]);
        let cases: [(Activation, [f32; 3]); 11] = [
            (Activation::Relu, [0.0, 0.5, 3.0]),
            // clamp(0.2 x + 0.5, 0, 1)
            (Activation::HardSigmoid(0.2, 0.5), [0.1, 0.6, 1.0]),
            (Activation::LeakyRelu(0.1), [-0.2, 0.5, 3.0]),
            // x where x > alpha, else 0 (alpha itself gives 0)
            (Activation::ThresholdedRelu(0.5), [0.0, 0.0, 3.0]),
            // 2 tanh(0.5 x)
            (Activation::ScaledTanh(2.0, 0.5), [-1.523_188_3, 0.489_837_32, 1.810_296_5]),
            // alpha (e^x - 1) below 0
            (Activation::Elu(0.5), [-0.432_332_4, 0.5, 3.0]),
            // x / (1 + |x|)
            (Activation::Softsign, [-0.666_666_7, 0.333_333_34, 0.75]),
            // ln(1 + e^x)
            (Activation::Softplus, [0.126_928_01, 0.974_077, 3.048_587_4]),
            (Activation::Affine(2.0, -1.0), [-5.0, 0.0, 5.0]),
            (Activation::Sigmoid, [0.119_202_92, 0.622_459_3, 0.952_574_1]),
            (Activation::Tanh, [-0.964_027_6, 0.462_117_16, 0.995_054_8]),
        ];
        for (activation, want) in cases {
            assert_close(activation.apply(x()), [3], &want, 1e-6);
        }
    }
}
