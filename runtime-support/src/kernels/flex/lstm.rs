//! LSTM recurrences in plain loops on flex data, where Burn would run about twenty small
//! tensor ops per step: ONNX's LSTM with the default activations, and com.microsoft's
//! DynamicQuantizeLSTM whole (all directions, the input projection included) as ONNX Runtime
//! computes it.

use super::integer::packed_constant_of;
use super::{from_vec, take, values};
use crate::kernels::igemm::{gemm, PackedB, RowsOfA};
use burn::tensor::Tensor;
use std::sync::Arc;

/// One direction's `(Y [steps, batch, hidden], h, c)` on the host.
type Outputs = (Vec<f32>, Vec<f32>, Vec<f32>);

/// The steps of one direction from the state `(h, c)` (`[batch, hidden]` each);
/// `pre_activations(t, h, g)` writes step `t`'s gates (i, o, f, c, `[batch, 4 * hidden]`)
/// before their activations.
fn steps_of(
    (steps, batch, hidden): (usize, usize, usize),
    reverse: bool,
    (mut h, mut c): (Vec<f32>, Vec<f32>),
    mut pre_activations: impl FnMut(usize, &[f32], &mut [f32]),
) -> Outputs {
    let gates = 4 * hidden;
    let mut ys = vec![0.0f32; steps * batch * hidden];
    let mut g = vec![0.0f32; batch * gates];
    let mut tanh_c = vec![0.0f32; hidden];
    for step in 0..steps {
        let t = if reverse { steps - 1 - step } else { step };
        pre_activations(t, &h, &mut g);
        for b in 0..batch {
            let g = &mut g[b * gates..][..gates];
            super::super::simd::sigmoid(&mut g[..3 * hidden]);
            super::super::simd::tanh(&mut g[3 * hidden..]);
            let (i, rest) = g.split_at(hidden);
            let (o, rest) = rest.split_at(hidden);
            let (f, cand) = rest.split_at(hidden);
            let cb = &mut c[b * hidden..(b + 1) * hidden];
            for k in 0..hidden {
                cb[k] = f[k] * cb[k] + i[k] * cand[k];
            }
            tanh_c.copy_from_slice(cb);
            super::super::simd::tanh(&mut tanh_c);
            let hb = &mut h[b * hidden..(b + 1) * hidden];
            for k in 0..hidden {
                hb[k] = o[k] * tanh_c[k];
            }
            ys[(t * batch + b) * hidden..][..hidden].copy_from_slice(hb);
        }
    }
    (ys, h, c)
}

/// One direction of ONNX's LSTM with the default activations (σ, tanh, tanh), no clip,
/// peepholes or sequence lengths: `projected [steps, batch, 4 * hidden]` is `X·Wᵀ + Wb`
/// (gates i, o, f, c), `r [4 * hidden, hidden]`, `bias [1, 4 * hidden]` is Rb. `None` when the
/// tensors are not on flex.
pub fn lstm_sequence(
    projected: &Tensor<3>,
    r: &Tensor<2>,
    bias: &Tensor<2>,
    (h0, c0): (&Tensor<2>, &Tensor<2>),
    reverse: bool,
) -> Option<(Tensor<3>, Tensor<2>, Tensor<2>)> {
    let [steps, batch, gates] = projected.dims();
    let hidden = gates / 4;
    let (xw, bias) = (values(projected)?, values(bias)?);
    let r_tensor = take(r.clone()).ok()?;
    let r_values = r_tensor.as_slice::<f32>()?;
    let (h, c) = (values(h0)?, values(c0)?);
    if r_values.len() != gates * hidden || bias.len() != gates || h.len() != batch * hidden || c.len() != h.len() {
        return None;
    }
    let (ys, h, c) = steps_of((steps, batch, hidden), reverse, (h, c), |t, h, g| {
        for (b, g) in g.chunks_exact_mut(gates).enumerate() {
            let (xw, hb) = (&xw[(t * batch + b) * gates..][..gates], &h[b * hidden..][..hidden]);
            // Gates four at a time (there are 4 × hidden).
            for (quad, g) in g.chunks_exact_mut(4).enumerate() {
                let rows = std::array::from_fn(|q| &r_values[(4 * quad + q) * hidden..][..hidden]);
                let sums = crate::kernels::gemm::dot4(rows, hb);
                for (q, g) in g.iter_mut().enumerate() {
                    let j = 4 * quad + q;
                    *g = xw[j] + bias[j] + sums[q];
                }
            }
        }
    });
    Some((from_vec(ys, [steps, batch, hidden]), from_vec(h, [batch, hidden]), from_vec(c, [batch, hidden])))
}

/// What one direction of DynamicQuantizeLSTM reads.
struct QuantizedDirection<'a> {
    /// Wᵀ and Rᵀ packed as the products' right sides (`[input, gates]`, `[hidden, gates]`).
    w: Arc<PackedB>,
    r: Arc<PackedB>,
    /// The column scales of W and R.
    w_scales: &'a [f32],
    r_scales: &'a [f32],
    /// `Wb + Rb`, as ONNX Runtime sums them.
    bias: Vec<f32>,
    initial: (Vec<f32>, Vec<f32>),
    reverse: bool,
}

/// com.microsoft's DynamicQuantizeLSTM on flex data, every direction, as ONNX Runtime computes
/// it: `x` (time-major `[steps, batch, input]`) quantized to uint8 from its range once, `w` and
/// `r` (`[dirs, 4 * hidden, input | hidden]`, integer weights less their zero points, packed
/// once while they live) with their column scales (`[dirs, 4 * hidden]` each); each step's `h`
/// (the whole batch) quantized likewise, each product exact in 32 bits and scaled once by
/// `scale_x * scale_w`, the gates `(x part + h part) + (Wb + Rb)`; σ, tanh, tanh. Returns `(Y
/// [steps, dirs, batch, hidden], Y_h, Y_c)`; `None` when a tensor is not on flex, the shapes
/// disagree or the weights do not fit the u8 × s8 product (the caller then runs Burn's ops).
pub fn quantized_lstm(
    x: &Tensor<3>,
    (w, r): (&Tensor<3>, &Tensor<3>),
    (w_scales, r_scales): (&Tensor<2>, &Tensor<2>),
    bias: Option<&Tensor<2>>,
    (h0, c0): (Option<&Tensor<3>>, Option<&Tensor<3>>),
    reversed: &[bool],
) -> Option<(Tensor<4>, Tensor<3>, Tensor<3>)> {
    let [steps, batch, input] = x.dims();
    let [dirs, gates, _] = w.dims();
    let hidden = gates / 4;
    let agree = gates % 4 == 0
        && reversed.len() == dirs
        && w.dims() == [dirs, gates, input]
        && r.dims() == [dirs, gates, hidden]
        && w_scales.dims() == [dirs, gates]
        && r_scales.dims() == [dirs, gates]
        && bias.is_none_or(|b| b.dims() == [dirs, 2 * gates])
        && [h0, c0].iter().flatten().all(|s| s.dims() == [dirs, batch, hidden]);
    if !agree {
        return None;
    }
    let (w_scales, r_scales) = (values(w_scales)?, values(r_scales)?);
    let bias = bias.map(values).unwrap_or_else(|| Some(vec![0.0; dirs * 2 * gates]))?;
    let state = |s: Option<&Tensor<3>>| s.map(values).unwrap_or_else(|| Some(vec![0.0; dirs * batch * hidden]));
    let (h0, c0) = (state(h0)?, state(c0)?);
    let per_state = batch * hidden;
    let of_direction = |d: usize| -> Option<QuantizedDirection<'_>> {
        let bias = &bias[d * 2 * gates..][..2 * gates];
        Some(QuantizedDirection {
            w: packed_constant_of(w, d)?,
            r: packed_constant_of(r, d)?,
            w_scales: &w_scales[d * gates..][..gates],
            r_scales: &r_scales[d * gates..][..gates],
            bias: bias[..gates].iter().zip(&bias[gates..]).map(|(wb, rb)| wb + rb).collect(),
            initial: (h0[d * per_state..][..per_state].to_vec(), c0[d * per_state..][..per_state].to_vec()),
            reverse: reversed[d],
        })
    };
    let directions = (0..dirs).map(of_direction).collect::<Option<Vec<_>>>()?;
    let mut x_rows = RowsOfA::empty();
    let x_scale = x_rows.quantize(&values(x)?, steps * batch, input);
    let dims = (steps, batch, hidden);
    let run = |d: &QuantizedDirection| quantized_direction(&x_rows, x_scale, d, dims);
    let outputs: Vec<Outputs> = match &directions[..] {
        // The two directions are independent recurrences: on two threads they run side by side.
        [first, second] => {
            let work = steps * batch * gates * (input + hidden);
            let (first, second) = crate::parallel::join(work, || run(first), || run(second));
            vec![first, second]
        }
        _ => directions.iter().map(run).collect(),
    };
    // Y interleaves the directions at each step: `[steps, dirs, batch, hidden]`.
    let mut y = vec![0.0f32; steps * dirs * per_state];
    for (d, (ys, _, _)) in outputs.iter().enumerate() {
        for (t, step) in ys.chunks_exact(per_state.max(1)).enumerate() {
            y[(t * dirs + d) * per_state..][..per_state].copy_from_slice(step);
        }
    }
    let last = |pick: fn(&Outputs) -> &Vec<f32>| outputs.iter().flat_map(pick).copied().collect::<Vec<f32>>();
    Some((
        from_vec(y, [steps, dirs, batch, hidden]),
        from_vec(last(|o| &o.1), [dirs, batch, hidden]),
        from_vec(last(|o| &o.2), [dirs, batch, hidden]),
    ))
}

/// One direction of [`quantized_lstm`], from `x`'s quantized rows and scale.
fn quantized_direction(
    x_rows: &RowsOfA,
    x_scale: f32,
    d: &QuantizedDirection,
    (steps, batch, hidden): (usize, usize, usize),
) -> Outputs {
    let gates = 4 * hidden;
    let mut sums = vec![0i32; steps * batch * gates];
    gemm(x_rows, &d.w, &mut sums);
    let x_multipliers: Vec<f32> = d.w_scales.iter().map(|&s| s * x_scale).collect();
    let xw: Vec<f32> =
        sums.chunks_exact(gates).flat_map(|row| row.iter().zip(&x_multipliers).map(|(&s, &m)| s as f32 * m)).collect();
    let (mut h_rows, mut h_sums, mut h_multipliers) = (RowsOfA::empty(), vec![0i32; batch * gates], vec![0.0; gates]);
    steps_of((steps, batch, hidden), d.reverse, d.initial.clone(), |t, h, g| {
        let h_scale = h_rows.quantize(h, batch, hidden);
        gemm(&h_rows, &d.r, &mut h_sums);
        for (m, &s) in h_multipliers.iter_mut().zip(d.r_scales) {
            *m = h_scale * s;
        }
        let xw = &xw[t * batch * gates..][..batch * gates];
        for ((g, xw), sums) in g.chunks_exact_mut(gates).zip(xw.chunks_exact(gates)).zip(h_sums.chunks_exact(gates)) {
            for j in 0..gates {
                g[j] = (xw[j] + sums[j] as f32 * h_multipliers[j]) + d.bias[j];
            }
        }
    })
}
