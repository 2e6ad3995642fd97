//! The kernels on flex's f32 tensors: each returns its input back (`Err`) when the tensor is not
//! one it handles, and the caller takes Burn's op.

use super::Window;
use crate::parallel::{job_len, PARALLEL_MIN_ELEMENTS};
use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::{BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Bytes, DType, Shape, Tensor};
use rayon::prelude::*;

/// The flex primitive of an f32 tensor outside autodiff (a strided view copied into row-major
/// order: every kernel here reads rows), or the tensor back.
pub(super) static ENABLED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(true);

fn take<const D: usize>(x: Tensor<D>) -> Result<FlexTensor, Tensor<D>> {
    if !ENABLED.load(core::sync::atomic::Ordering::Relaxed) {
        return Err(x);
    }
    match x.into_dispatch() {
        DispatchTensor {
            kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
            autodiff: DispatchAutodiffContext::Disabled,
        } if t.dtype() == DType::F32 => Ok(if t.as_slice::<f32>().is_some() { t } else { t.to_contiguous() }),
        other => Err(Tensor::from_dispatch(other)),
    }
}

fn give<const D: usize>(t: FlexTensor) -> Tensor<D> {
    Tensor::from_dispatch(DispatchTensor {
        kind: DispatchTensorKind::Flex(BackendTensor::Float(t)),
        autodiff: DispatchAutodiffContext::Disabled,
    })
}

fn from_vec<const D: usize>(values: Vec<f32>, shape: [usize; D]) -> Tensor<D> {
    give(FlexTensor::new(Bytes::from_elems(values), Layout::contiguous(Shape::from(shape)), DType::F32))
}

/// Runs `f` compiled for AVX2 and FMA where the CPU has them (the closure is inlined into a
/// function built with those features, so LLVM vectorises its loops 8 wide), else as is.
/// `f` must be an `#[inline(always)]` closure calling `#[inline(always)]` functions: a
/// closure left out of line is compiled on its own, without the features (and `mul_add`
/// becomes a call to a software `fmaf`).
#[inline(always)]
fn vectorised<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if crate::kernels::gemm::available() {
        /// # Safety
        ///
        /// The CPU must have AVX2 and FMA.
        #[target_feature(enable = "avx2,fma")]
        unsafe fn run<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        // SAFETY: the CPU has the features `run` is compiled for.
        return unsafe { run(f) };
    }
    f()
}

/// Elements per parallel task of elementwise kernels.
const CHUNK: usize = 1 << 14;

/// Outputs the depthwise and LRN kernels compute at a time, held in registers: 8 vectors
/// of 8 lanes.
const REGISTER_BLOCK: usize = 64;

/// Concatenates f32 tensors of equal shapes but along `dim`: the output is cut into runs
/// copied from one input each, in jobs of at least `PARALLEL_MIN_ELEMENTS`.
pub fn cat<const D: usize>(tensors: Vec<Tensor<D>>, dim: usize) -> Result<Tensor<D>, Vec<Tensor<D>>> {
    let mut taken = Vec::with_capacity(tensors.len());
    let mut rest = tensors.into_iter();
    while let Some(x) = rest.next() {
        match take(x) {
            Ok(t) => taken.push(t),
            Err(x) => return Err(taken.into_iter().map(give).chain([x]).chain(rest).collect()),
        }
    }
    let shapes: Vec<[usize; D]> = taken.iter().map(|t| t.layout().shape().dims()).collect();
    let agree = dim < D && shapes.iter().all(|s| (0..D).all(|d| d == dim || s[d] == shapes[0][d]));
    if !agree || taken.iter().any(|t| t.as_slice::<f32>().is_none()) {
        return Err(taken.into_iter().map(give).collect());
    }
    let inputs: Vec<&[f32]> = taken.iter().filter_map(|t| t.as_slice::<f32>()).collect();
    let mut shape = shapes[0];
    shape[dim] = shapes.iter().map(|s| s[dim]).sum();
    let (outer, inner) = (shape[..dim].iter().product::<usize>(), shape[dim + 1..].iter().product::<usize>());
    let total: usize = shape.iter().product();
    let mut output = vec![0.0f32; total];
    // (destination, source) runs in output order, each at most CHUNK long.
    let mut runs = Vec::new();
    let mut free = &mut output[..];
    for o in 0..outer {
        for (input, s) in inputs.iter().zip(&shapes) {
            let len = s[dim] * inner;
            let (run, tail) = std::mem::take(&mut free).split_at_mut(len);
            free = tail;
            runs.extend(run.chunks_mut(CHUNK).zip(input[o * len..][..len].chunks(CHUNK)));
        }
    }
    let jobs = job_len(runs.len(), total.div_ceil(runs.len().max(1)), PARALLEL_MIN_ELEMENTS);
    runs.into_par_iter().with_min_len(jobs).for_each(|(to, from)| to.copy_from_slice(from));
    Ok(from_vec(output, shape))
}

/// Applies `kernel` to every element: in place when the buffer is the tensor's alone and
/// exactly its elements, else into a new buffer.
pub fn map<const D: usize>(x: Tensor<D>, kernel: fn(&mut [f32])) -> Result<Tensor<D>, Tensor<D>> {
    let mut t = take(x)?;
    let n = t.layout().shape().num_elements();
    if t.is_contiguous() && t.layout().start_offset() == 0 {
        if let Some(values) = t.try_storage_mut::<f32>().filter(|v| v.len() == n) {
            values
                .par_chunks_mut(CHUNK)
                .with_min_len(job_len(n.div_ceil(CHUNK), CHUNK, PARALLEL_MIN_ELEMENTS))
                .for_each(kernel);
            return Ok(give(t));
        }
    }
    let shape: [usize; D] = t.layout().shape().dims();
    let Some(values) = t.as_slice::<f32>() else { return Err(give(t)) };
    let mut out = values.to_vec();
    out.par_chunks_mut(CHUNK).with_min_len(job_len(n.div_ceil(CHUNK), CHUNK, PARALLEL_MIN_ELEMENTS)).for_each(kernel);
    Ok(from_vec(out, shape))
}

pub fn max_pool2d(x: Tensor<4>, window: Window) -> Result<Tensor<4>, Tensor<4>> {
    pool2d(x, window, |_| {}, (f32::NEG_INFINITY, nan_max))
}

pub fn avg_pool2d(x: Tensor<4>, window: Window, count_include_pad: bool) -> Result<Tensor<4>, Tensor<4>> {
    // Taps of each output row and column inside the image (all of them with the padding).
    let inside = |axis: usize, size: usize, out: usize| -> Vec<f32> {
        let (k, s, p) = (window.kernel[axis], window.strides[axis], window.pads[axis].0);
        (0..out).map(|o| if count_include_pad { k } else { taps(o, s, 1, p, k, size).len() } as f32).collect()
    };
    let [_, _, h, w] = x.dims();
    let (oh, ow) = (window.out_dim(h, 0).unwrap_or(0), window.out_dim(w, 1).unwrap_or(0));
    let (rows, columns) = (inside(0, h, oh), inside(1, w, ow));
    let divide = |out: &mut [f32]| {
        for (row, &r) in out.chunks_mut(ow).zip(&rows) {
            row.iter_mut().zip(&columns).for_each(|(v, &c)| *v /= r * c);
        }
    };
    pool2d(x, window, divide, (0.0, |a: f32, b: f32| a + b))
}

/// Pools every plane of `x` with the reduction `(identity, combine)` (see [`pool_plane`]),
/// then `finish` on each pooled plane.
fn pool2d(
    x: Tensor<4>,
    window: Window,
    finish: impl Fn(&mut [f32]) + Sync,
    reduction: (f32, impl Fn(f32, f32) -> f32 + Copy + Sync),
) -> Result<Tensor<4>, Tensor<4>> {
    let t = take(x)?;
    let [n, c, h, w]: [usize; 4] = t.layout().shape().dims();
    let (Some(oh), Some(ow), Some(input)) = (window.out_dim(h, 0), window.out_dim(w, 1), t.as_slice::<f32>()) else {
        return Err(give(t));
    };
    let mut output = vec![0.0f32; n * c * oh * ow];
    if h * w > 0 && oh * ow > 0 {
        // A separable window visits each input element about twice and each output once.
        let planes = input.par_chunks(h * w).zip(output.par_chunks_mut(oh * ow));
        let jobs = job_len(planes.len(), 2 * h * w + oh * ow, PARALLEL_MIN_ELEMENTS);
        planes.with_min_len(jobs).for_each(|(plane, out)| {
            POOL_ROWS.with_borrow_mut(|columns| {
                vectorised(
                    #[inline(always)]
                    || pool_plane(plane, [h, w], out, ow, window, columns, reduction),
                );
                finish(out)
            })
        });
    }
    Ok(from_vec(output, [n, c, oh, ow]))
}

pub fn batch_norm<const D: usize>(
    layer: &burn::nn::BatchNorm,
    x: Tensor<D>,
    activation: super::ConvActivation,
) -> Result<Tensor<D>, Tensor<D>> {
    let statistics = [layer.gamma.val(), layer.beta.val(), layer.running_mean.value(), layer.running_var.value()];
    let Some([gamma, beta, mean, var]) =
        statistics.iter().map(values).collect::<Option<Vec<_>>>().and_then(|v| <[Vec<f32>; 4]>::try_from(v).ok())
    else {
        return Err(x);
    };
    let t = take(x)?;
    let dims: [usize; D] = t.layout().shape().dims();
    let channels = if D >= 2 { dims[1] } else { 0 };
    let plane: usize = dims.iter().skip(2).product();
    let sizes_ok = [&gamma, &beta, &mean, &var].iter().all(|v| v.len() == channels) && channels > 0;
    let (Some(input), true) = (t.as_slice::<f32>(), sizes_ok && plane > 0) else { return Err(give(t)) };
    let epsilon = layer.epsilon;
    let scale: Vec<f32> =
        gamma.iter().zip(&var).map(|(&g, &v)| (g as f64 / (v as f64 + epsilon).sqrt()) as f32).collect();
    let mut output = vec![0.0f32; input.len()];
    let planes = output.par_chunks_mut(plane).zip(input.par_chunks(plane)).enumerate();
    let jobs = job_len(planes.len(), plane, PARALLEL_MIN_ELEMENTS);
    planes.with_min_len(jobs).for_each(|(index, (out, x))| {
        let c = index % channels;
        let (m, s) = (mean[c], scale[c]);
        vectorised(
            #[inline(always)]
            || {
                out.iter_mut().zip(x).for_each(|(o, &v)| *o = (v - m) * s);
                finish_outputs(out, Some(beta[c]), None, activation)
            },
        )
    });
    Ok(from_vec(output, dims))
}

pub fn local_response_norm<const D: usize>(x: Tensor<D>, lrn: super::Lrn) -> Result<Tensor<D>, Tensor<D>> {
    let t = take(x)?;
    let dims: [usize; D] = t.layout().shape().dims();
    let (Some(input), true) = (t.as_slice::<f32>(), D >= 3 && lrn.size > 0) else { return Err(give(t)) };
    let (channels, plane) = (dims[1], dims[2..].iter().product::<usize>());
    let mut output = vec![0.0f32; input.len()];
    if plane > 0 {
        let planes = output.par_chunks_mut(plane).enumerate();
        let jobs = job_len(planes.len(), plane * lrn.size, PARALLEL_MIN_ELEMENTS);
        planes.with_min_len(jobs).for_each(|(index, out)| {
            let (image, c) = (index / channels, index % channels);
            let planes = &input[image * channels * plane..][..channels * plane];
            let window = c.saturating_sub((lrn.size - 1) / 2)..(c + lrn.size / 2 + 1).min(channels);
            vectorised(
                #[inline(always)]
                || lrn_plane(planes, plane, c, window, lrn, out),
            )
        });
    }
    Ok(from_vec(output, dims))
}

/// Output plane `c` of one image's `planes`, `window` the channels summed, a register
/// block at a time.
#[inline(always)]
fn lrn_plane(planes: &[f32], plane: usize, c: usize, window: std::ops::Range<usize>, lrn: super::Lrn, out: &mut [f32]) {
    let x = &planes[c * plane..][..plane];
    for (b, (out, x)) in out.chunks_mut(REGISTER_BLOCK).zip(x.chunks(REGISTER_BLOCK)).enumerate() {
        let mut sums = [0.0f32; REGISTER_BLOCK];
        for channel in window.clone() {
            let values = &planes[channel * plane + b * REGISTER_BLOCK..][..x.len()];
            sums.iter_mut().zip(values).for_each(|(s, &v)| *s = v.mul_add(v, *s));
        }
        let bases = &mut sums[..x.len()];
        bases.iter_mut().for_each(|s| *s = s.mul_add(lrn.scale, lrn.bias));
        // x · base^-beta as x · e^(-beta · ln base) where the base is a positive normal
        // float (ln is defined there and the exponent stays in range); libm's powf else.
        let normal = bases.iter().all(|&d| (f32::MIN_POSITIVE..=1e30).contains(&d));
        if normal {
            for ((o, &x), &d) in out.iter_mut().zip(x).zip(bases.iter()) {
                *o = x * super::simd::exp_one(-lrn.beta * super::simd::ln_one(d));
            }
        } else {
            for ((o, &x), &d) in out.iter_mut().zip(x).zip(bases.iter()) {
                *o = x / d.powf(lrn.beta);
            }
        }
    }
}

/// `data` as a row-major `rows × cols` matrix.
fn matrix(data: &[f32], rows: usize, cols: usize) -> crate::kernels::gemm::Matrix<'_> {
    crate::kernels::gemm::Matrix { data, rows, cols, stride: cols }
}

pub fn attention(operands: super::AttentionOperands, scale: f32) -> Result<Tensor<4>, super::AttentionOperands> {
    let (q, key_t, v, mask) = operands;
    let ([b, h, lq, d], [kb, kh, kd, lk], [vb, vh, vk, dv]) = (q.dims(), key_t.dims(), v.dims());
    let mask_dims = mask.as_ref().map(|m| m.dims());
    let mask_fits = mask_dims.is_none_or(|m| m[3] == lk && [b, h, lq].iter().zip(m).all(|(&n, k)| k == n || k == 1));
    let shapes_fit = [kb, vb] == [b; 2] && [kh, vh] == [h; 2] && kd == d && vk == lk && mask_fits;
    if !crate::kernels::gemm::available() || !shapes_fit || d == 0 || lk == 0 {
        return Err((q, key_t, v, mask));
    }
    let (tq, tk, tv, tm) = match (take(q), take(key_t), take(v), mask.map(take).transpose()) {
        (Ok(q), Ok(k), Ok(v), Ok(m)) => (q, k, v, m),
        (q, k, v, m) => {
            let back = |t: Result<FlexTensor, Tensor<4>>| t.map_or_else(|t| t, give);
            return Err((back(q), back(k), back(v), m.map_or_else(Some, |m| m.map(give))));
        }
    };
    let (Some(qs), Some(ks), Some(vs)) = (tq.as_slice::<f32>(), tk.as_slice::<f32>(), tv.as_slice::<f32>()) else {
        return Err((give(tq), give(tk), give(tv), tm.map(give)));
    };
    let ms = match &tm {
        Some(m) => match m.as_slice::<f32>() {
            Some(values) => Some(values),
            None => return Err((give(tq), give(tk), give(tv), tm.map(give))),
        },
        None => None,
    };
    // The mask's offset of head (bi, hi) and its stride between query rows (0: broadcast).
    let mask_at = |bi: usize, hi: usize| {
        let [mb, mh, mq, _] = mask_dims.unwrap_or([1; 4]);
        let (row, plane) = (usize::from(mq > 1) * lk, mq * lk);
        (bi * usize::from(mb > 1) * mh * plane + hi * usize::from(mh > 1) * plane, row)
    };
    let mut output = vec![0.0f32; b * h * lq * dv];
    // Each job reuses one buffer of scores for its heads.
    let head = |scores: &mut Vec<f32>, (index, out): (usize, &mut [f32])| {
        let q = matrix(&qs[index * lq * d..][..lq * d], lq, d);
        let k = matrix(&ks[index * d * lk..][..d * lk], d, lk);
        crate::kernels::gemm::sgemm(q, &k, scores, &|_, _, _| {});
        let (offset, row_stride) = mask_at(index / h, index % h);
        vectorised(
            #[inline(always)]
            || {
                for (i, row) in scores.chunks_mut(lk).enumerate() {
                    let mask_row = ms.map(|m| &m[offset + i * row_stride..][..lk]);
                    super::simd::softmax_row(row, scale, mask_row);
                }
            },
        );
        let p = matrix(scores, lq, lk);
        crate::kernels::gemm::sgemm(p, &matrix(&vs[index * lk * dv..][..lk * dv], lk, dv), out, &|_, _, _| {});
    };
    let per_head = lq * lk * (d + dv);
    if lq * dv == 0 {
        return Ok(from_vec(output, [b, h, lq, dv]));
    }
    output
        .par_chunks_mut(lq * dv)
        .enumerate()
        .with_min_len(job_len(b * h, per_head, crate::parallel::PARALLEL_MIN_FMAS))
        .for_each_init(|| vec![0.0f32; lq * lk], head);
    Ok(from_vec(output, [b, h, lq, dv]))
}

pub fn linear<const D: usize>(layer: &burn::nn::Linear, x: Tensor<D>) -> Result<Tensor<D>, Tensor<D>> {
    if !crate::kernels::gemm::available() || D == 0 {
        return Err(x);
    }
    let (Ok(weight), Ok(tx)) = (take(layer.weight.val()), take(x.clone())) else { return Err(x) };
    let bias = match layer.bias.as_ref().map(|b| take(b.val())).transpose() {
        Ok(b) => b,
        Err(_) => return Err(x),
    };
    let [k, n]: [usize; 2] = weight.layout().shape().dims();
    let mut shape: [usize; D] = tx.layout().shape().dims();
    let (Some(input), Some(w)) = (tx.as_slice::<f32>(), weight.as_slice::<f32>()) else { return Err(x) };
    let bias = match bias.as_ref().map(|b| b.as_slice::<f32>().filter(|v| v.len() == n)) {
        Some(None) => return Err(x),
        other => other.flatten(),
    };
    if shape[D - 1] != k {
        return Err(x);
    }
    let m = input.len() / k.max(1);
    // Between the few rows that only stream B and the many that fill the register tile,
    // Burn's product (its register kernels for a few rows) is the fastest measured.
    if (crate::kernels::gemm::SKINNY_MAX_ROWS + 1..crate::kernels::gemm::LINEAR_MIN_ROWS).contains(&m) {
        return Err(x);
    }
    let mut output = vec![0.0f32; m * n];
    if k == 0 {
        output.chunks_mut(n.max(1)).for_each(|row| add_bias(bias, row));
    } else {
        let a = crate::kernels::gemm::Matrix { data: input, rows: m, cols: k, stride: k };
        let b = crate::kernels::gemm::Matrix { data: w, rows: k, cols: n, stride: n };
        if m <= crate::kernels::gemm::SKINNY_MAX_ROWS {
            crate::kernels::gemm::skinny(a, b, bias, &mut output);
        } else {
            crate::kernels::gemm::sgemm(a, &b, &mut output, &|_, j0, row| add_bias(bias.map(|b| &b[j0..]), row));
        }
    }
    shape[D - 1] = n;
    Ok(from_vec(output, shape))
}

fn add_bias(bias: Option<&[f32]>, row: &mut [f32]) {
    if let Some(b) = bias {
        row.iter_mut().zip(b).for_each(|(v, b)| *v += b);
    }
}

type ConvOperands = (Tensor<4>, Tensor<4>, Option<Tensor<1>>, Option<Tensor<4>>);

/// The convolution's operands as flex tensors, or all of them back unchanged.
fn take_operands(
    (x, weight, bias, residual): ConvOperands,
) -> Result<(FlexTensor, FlexTensor, Option<FlexTensor>, Option<FlexTensor>), ConvOperands> {
    let tx = match take(x) {
        Ok(t) => t,
        Err(x) => return Err((x, weight, bias, residual)),
    };
    let tw = match take(weight) {
        Ok(t) => t,
        Err(w) => return Err((give(tx), w, bias, residual)),
    };
    let tb = match bias.map(take).transpose() {
        Ok(b) => b,
        Err(b) => return Err((give(tx), give(tw), Some(b), residual)),
    };
    match residual.map(take).transpose() {
        Ok(r) => Ok((tx, tw, tb, r)),
        Err(r) => Err((give(tx), give(tw), tb.map(give), Some(r))),
    }
}

pub fn conv2d(
    x: Tensor<4>,
    weight: Tensor<4>,
    bias: Option<Tensor<1>>,
    options: &ConvOptions<2>,
    residual: Option<Tensor<4>>,
    activation: super::ConvActivation,
) -> Result<Tensor<4>, ConvOperands> {
    // Grouped convolutions other than depthwise ones stay with flex: its per-group products
    // measured as fast as ours or faster on ShuffleNet's shapes (benches/kernels.rs).
    let (groups, [ci, wci]) = (options.groups, [x.dims()[1], weight.dims()[1]]);
    let depthwise = wci == 1 && groups == ci && groups > 1;
    if groups != 1 && !depthwise || !crate::kernels::gemm::available() {
        return Err((x, weight, bias, residual));
    }
    let (tx, tw, tb, tr) = take_operands((x, weight, bias, residual))?;
    let back =
        |tx, tw, tb: Option<FlexTensor>, tr: Option<FlexTensor>| Err((give(tx), give(tw), tb.map(give), tr.map(give)));
    let [n, ci, h, w]: [usize; 4] = tx.layout().shape().dims();
    let [co, wci, kh, kw]: [usize; 4] = tw.layout().shape().dims();
    let window =
        Window { kernel: [kh, kw], strides: options.stride, pads: options.padding, dilations: options.dilation };
    let (Some(oh), Some(ow)) = (window.out_dim(h, 0), window.out_dim(w, 1)) else { return back(tx, tw, tb, tr) };
    let bias_ok = tb.as_ref().is_none_or(|b| b.as_slice::<f32>().is_some_and(|v| v.len() == co));
    let residual_ok =
        tr.as_ref().is_none_or(|r| r.layout().shape().dims::<4>() == [n, co, oh, ow] && r.as_slice::<f32>().is_some());
    let channels_ok = wci * groups == ci && co % groups == 0;
    // The depthwise kernel splits planes: empty ones (and zero strides) go to flex.
    let planes_ok = !depthwise || h * w * oh * ow > 0 && options.stride.iter().all(|&s| s > 0);
    let (Some(input), Some(weights), true, true) =
        (tx.as_slice::<f32>(), tw.as_slice::<f32>(), bias_ok && residual_ok, channels_ok && planes_ok)
    else {
        return back(tx, tw, tb, tr);
    };
    let bias = tb.as_ref().and_then(|b| b.as_slice::<f32>());
    let residual = tr.as_ref().and_then(|r| r.as_slice::<f32>());
    // A column-vector image (a 1-D convolution along H: w = kw = ow = 1) is, in memory, the
    // row-vector image of the transposed convolution, whose im2col rows are contiguous runs
    // rather than one pixel per output row.
    let transposed = (w == 1 && kw == 1 && ow == 1).then(|| transposed(options));
    let geometry = match &transposed {
        Some(options) => Geometry { h: w, w: h, kh: kw, kw: kh, oh: ow, ow: oh, options },
        None => Geometry { h, w, kh, kw, oh, ow, options },
    };
    let mut output = vec![0.0f32; n * co * oh * ow];
    // `values` are the outputs of channel `row` from `offset` in the whole output on.
    let finish = |row: usize, offset: usize, values: &mut [f32]| {
        let residual = residual.map(|r| &r[offset..][..values.len()]);
        vectorised(
            #[inline(always)]
            || finish_outputs(values, bias.map(|b| b[row]), residual, activation),
        )
    };
    if depthwise {
        // One input channel per group: a product per channel would have a single row.
        geometry.depthwise(input, weights, [ci, co / ci], &mut output, &finish);
    } else {
        geometry.gemm(input, weights, [ci, co], &mut output, &finish);
    }
    Ok(from_vec(output, [n, co, oh, ow]))
}

/// The options of the convolution with H and W swapped.
fn transposed(o: &ConvOptions<2>) -> ConvOptions<2> {
    let swap = |[a, b]: [usize; 2]| [b, a];
    ConvOptions {
        stride: swap(o.stride),
        padding: [o.padding[1], o.padding[0]],
        dilation: swap(o.dilation),
        groups: o.groups,
    }
}

/// Bias, then the residual sum, then the activation, in the order of the ops they replace:
/// one pass for the piecewise-linear activations, which select per element.
#[inline(always)]
fn finish_outputs(values: &mut [f32], bias: Option<f32>, residual: Option<&[f32]>, activation: super::ConvActivation) {
    use super::ConvActivation as A;
    match activation {
        A::None => add_then(values, bias, residual, |x| x),
        A::Relu => add_then(values, bias, residual, |x| if x < 0.0 { 0.0 } else { x }),
        A::LeakyRelu(alpha) => add_then(values, bias, residual, |x| if x < 0.0 { x * alpha } else { x }),
        A::HardSigmoid(alpha, beta) => add_then(values, bias, residual, |x| super::hard_sigmoid(x, alpha, beta)),
        A::HardSwish => add_then(values, bias, residual, |x| x * super::hard_sigmoid(x, 1.0 / 6.0, 0.5)),
        A::Sigmoid | A::Silu => {
            add_then(values, bias, residual, |x| x);
            activation.apply_slice(values)
        }
    }
}

/// `v = f(v + bias + residual)` for each value, each loop specialised to the terms present.
#[inline(always)]
fn add_then(values: &mut [f32], bias: Option<f32>, residual: Option<&[f32]>, f: impl Fn(f32) -> f32) {
    match (bias, residual) {
        (Some(b), Some(r)) => values.iter_mut().zip(r).for_each(|(v, r)| *v = f(*v + b + r)),
        (None, Some(r)) => values.iter_mut().zip(r).for_each(|(v, r)| *v = f(*v + r)),
        (Some(b), None) => values.iter_mut().for_each(|v| *v = f(*v + b)),
        (None, None) => values.iter_mut().for_each(|v| *v = f(*v)),
    }
}

/// What runs on each finished run of outputs: `(output channel, offset in the whole
/// output, values)`.
type Finish<'a> = dyn Fn(usize, usize, &mut [f32]) + Sync + 'a;

/// Sizes of one image's convolution.
struct Geometry<'a> {
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    options: &'a ConvOptions<2>,
}

impl Geometry<'_> {
    /// The input position under kernel tap `k` of output position `o` along `axis` (0 for
    /// H, 1 for W), or `None` in the padding.
    fn source(&self, axis: usize, o: usize, k: usize) -> Option<usize> {
        let options = self.options;
        (o * options.stride[axis] + k * options.dilation[axis])
            .checked_sub(options.padding[axis].0)
            .filter(|&i| i < [self.h, self.w][axis])
    }

    /// A 1×1 kernel with unit stride and no padding: the image itself is the right operand.
    fn is_pointwise(&self) -> bool {
        let o = self.options;
        self.kh == 1 && self.kw == 1 && o.stride == [1, 1] && o.padding == [(0, 0), (0, 0)]
    }

    /// Every image as one matrix product of the weights with its im2col columns (the image
    /// itself for a pointwise kernel), the weights read in place.
    fn gemm(&self, input: &[f32], weights: &[f32], [ci, co]: [usize; 2], output: &mut [f32], finish: &Finish) {
        use crate::kernels::gemm::Matrix;
        let (plane, out_plane) = (self.h * self.w, self.oh * self.ow);
        let k = ci * self.kh * self.kw;
        let a = Matrix { data: weights, rows: co, cols: k, stride: k };
        let images = input.chunks(ci * plane).zip(output.chunks_mut(co * out_plane));
        for (index, (image, out)) in images.enumerate() {
            let first = index * co * out_plane;
            let finish = |row, column, values: &mut [f32]| finish(row, first + row * out_plane + column, values);
            if self.is_pointwise() {
                let b = Matrix { data: image, rows: ci, cols: plane, stride: plane };
                crate::kernels::gemm::sgemm(a, &b, out, &finish);
            } else {
                crate::kernels::gemm::sgemm(a, &Im2col { geometry: self, image, rows: k }, out, &finish);
            }
        }
    }
}

/// How a depthwise convolution lays out the stride phases of a padded input plane.
struct Phases {
    strides: [usize; 2],
    /// Columns of a phase, and of the grid the sums are computed on.
    width: usize,
    /// Elements of a phase, slack included.
    len: usize,
    /// Elements of the grid of sums, whole register blocks.
    grid: usize,
    /// Where each kernel tap reads, relative to the output's grid position.
    offsets: Vec<usize>,
}

impl Geometry<'_> {
    /// A depthwise convolution (`multiplier` output channels per input channel) as shifted
    /// multiply-adds over whole planes. The padded input is split into stride phases
    /// (`phase (ry, rx)` holds the padded pixels `(qy·sy + ry, qx·sx + rx)`), so every
    /// kernel tap reads one phase at a fixed offset from the output pixel: output `(y, x)`
    /// of tap `(ky, kx)` is phase `(ky·dy mod sy, kx·dx mod sx)` at `(y + ky·dy / sy,
    /// x + kx·dx / sx)`. Outputs are computed on the phase width (columns past the output
    /// width are discarded), REGISTER_BLOCK at a time with all taps in registers.
    fn depthwise(
        &self,
        input: &[f32],
        weights: &[f32],
        [channels, multiplier]: [usize; 2],
        output: &mut [f32],
        finish: &Finish,
    ) {
        let o = self.options;
        let ([sy, sx], [dy, dx]) = (o.stride, o.dilation);
        let (hp, wp) = (self.h + o.padding[0].0 + o.padding[0].1, self.w + o.padding[1].0 + o.padding[1].1);
        let (hq, wq) = (hp.div_ceil(sy), wp.div_ceil(sx));
        // Blocks past the last output read past the last phase row: one block of slack.
        let phase_len = hq * wq + wq + REGISTER_BLOCK;
        let offsets: Vec<usize> = (0..self.kh * self.kw)
            .map(|t| {
                let (oy, ox) = ((t / self.kw) * dy, (t % self.kw) * dx);
                ((oy % sy) * sx + ox % sx) * phase_len + (oy / sy) * wq + ox / sx
            })
            .collect();
        let grid = (self.oh * wq).div_ceil(REGISTER_BLOCK) * REGISTER_BLOCK;
        let (plane, out_plane) = (self.h * self.w, self.oh * self.ow);
        let phases = Phases { strides: [sy, sx], width: wq, len: phase_len, grid, offsets };
        // A tap costs about what an element visit of a memory-bound op does (it reloads the
        // shifted phase), far more than a multiply-add of the matrix product.
        let per_plane = multiplier * out_plane * phases.offsets.len();
        let planes = input.par_chunks(plane).zip(output.par_chunks_mut(multiplier * out_plane)).enumerate();
        let jobs = job_len(planes.len(), per_plane, PARALLEL_MIN_ELEMENTS);
        planes.with_min_len(jobs).for_each(|(index, (image, out))| {
            let oc = (index % channels) * multiplier;
            let kernels = &weights[oc * phases.offsets.len()..][..multiplier * phases.offsets.len()];
            let first = index * multiplier * out_plane;
            let finish = |j, out: &mut [f32]| finish(oc + j, first + j * out_plane, out);
            DEPTHWISE.with_borrow_mut(|buffers| {
                vectorised(
                    #[inline(always)]
                    || self.depthwise_plane(image, &phases, kernels, buffers, out, &finish),
                )
            })
        });
    }

    /// The outputs of one input plane `image`, one plane per kernel of `kernels`.
    #[inline(always)]
    fn depthwise_plane(
        &self,
        image: &[f32],
        phases: &Phases,
        kernels: &[f32],
        (split, sums): &mut (Vec<f32>, Vec<f32>),
        out: &mut [f32],
        finish: &dyn Fn(usize, &mut [f32]),
    ) {
        self.split_phases(image, phases, split);
        sums.resize(phases.grid, 0.0);
        let taps = phases.offsets.len();
        for (j, (out, kernel)) in out.chunks_mut(self.oh * self.ow).zip(kernels.chunks(taps)).enumerate() {
            shifted_sums(split, &phases.offsets, kernel, sums);
            for (row, sum) in out.chunks_mut(self.ow).zip(sums.chunks(phases.width)) {
                row.copy_from_slice(&sum[..self.ow]);
            }
            finish(j, out);
        }
    }

    /// The padded plane `image`, split into its stride phases (see [`Self::depthwise`]).
    #[inline(always)]
    fn split_phases(&self, image: &[f32], layout: &Phases, phases: &mut Vec<f32>) {
        let Phases { strides: [sy, sx], width: wq, len: phase_len, .. } = *layout;
        let (pt, pl) = (self.options.padding[0].0, self.options.padding[1].0);
        phases.clear();
        phases.resize(sy * sx * phase_len, 0.0);
        for (y, line) in image.chunks(self.w).enumerate() {
            let py = y + pt;
            // Where phase (py mod sy, 0) holds padded row py.
            let row = (py % sy) * sx * phase_len + (py / sy) * wq;
            if sx == 1 {
                phases[row + pl..][..line.len()].copy_from_slice(line);
            } else {
                for rx in 0..sx {
                    // The first column x with (x + pl) mod sx = rx, then every sx-th.
                    let first = (rx + sx - pl % sx) % sx;
                    let start = row + rx * phase_len + (first + pl) / sx;
                    let columns = line.iter().skip(first).step_by(sx);
                    phases[start..].iter_mut().zip(columns).for_each(|(p, &v)| *p = v);
                }
            }
        }
    }
}

/// `sums[i] = Σ_t kernel[t] · phases[i + offsets[t]]`, a register block at a time.
#[inline(always)]
fn shifted_sums(phases: &[f32], offsets: &[usize], kernel: &[f32], sums: &mut [f32]) {
    for (b, block) in sums.chunks_exact_mut(REGISTER_BLOCK).enumerate() {
        let mut acc = [0.0f32; REGISTER_BLOCK];
        for (&offset, &w) in offsets.iter().zip(kernel) {
            let source = &phases[offset + b * REGISTER_BLOCK..][..REGISTER_BLOCK];
            for (a, &v) in acc.iter_mut().zip(source) {
                *a = v.mul_add(w, *a);
            }
        }
        block.copy_from_slice(&acc);
    }
}

/// The im2col matrix of one image, `[(c, ky, kx), (y, x)]`: the input pixel under kernel
/// tap (ky, kx) for output pixel (y, x) of channel c, or 0 in the padding. Computed segment
/// by segment as the matrix product packs it, never stored whole.
struct Im2col<'a> {
    geometry: &'a Geometry<'a>,
    image: &'a [f32],
    rows: usize,
}

impl crate::kernels::gemm::Right for Im2col<'_> {
    fn rows(&self) -> usize {
        self.rows
    }

    fn cols(&self) -> usize {
        self.geometry.oh * self.geometry.ow
    }

    /// Column j: the window of output pixel j, channel by channel, row by row, without
    /// the divisions a call of `segment` per element would make.
    fn column(&self, j: usize, out: &mut [f32]) {
        let g = self.geometry;
        let (y, x) = (j / g.ow, j % g.ow);
        let planes = self.image.chunks(g.h * g.w).zip(out.chunks_mut(g.kh * g.kw));
        for (plane, window) in planes {
            for (ky, window_row) in window.chunks_mut(g.kw).enumerate() {
                let iy = g.source(0, y, ky);
                for (kx, v) in window_row.iter_mut().enumerate() {
                    *v = match (iy, g.source(1, x, kx)) {
                        (Some(iy), Some(ix)) => plane[iy * g.w + ix],
                        _ => 0.0,
                    };
                }
            }
        }
    }

    fn segment(&self, p: usize, j0: usize, out: &mut [f32]) {
        let g = self.geometry;
        let o = g.options;
        let (pl, sx, dx) = (o.padding[1].0, o.stride[1], o.dilation[1]);
        let (c, ky, kx) = (p / (g.kh * g.kw), (p / g.kw) % g.kh, p % g.kw);
        let plane = &self.image[c * g.h * g.w..][..g.h * g.w];
        let shift = kx * dx;
        // Output columns whose input column x * sx + shift - pl lies in 0..w.
        let (first, end) = valid_columns(shift, pl, sx, g.w, g.ow);
        // Output rows from (y, x) on: divisions once, not per row (narrow maps have many).
        let (mut y, mut x, mut out) = (j0 / g.ow, j0 % g.ow, out);
        while !out.is_empty() {
            let len = (g.ow - x).min(out.len());
            let (line, rest) = std::mem::take(&mut out).split_at_mut(len);
            let (a, b) = (first.clamp(x, x + line.len()), end.clamp(x, x + line.len()));
            match g.source(0, y, ky) {
                Some(iy) if a < b => {
                    let source = &plane[iy * g.w..][..g.w];
                    line[..a - x].fill(0.0);
                    line[b - x..].fill(0.0);
                    let (start, dst) = (a * sx + shift - pl, &mut line[a - x..b - x]);
                    if sx == 1 {
                        dst.copy_from_slice(&source[start..start + dst.len()]);
                    } else {
                        dst.iter_mut().zip(source[start..].iter().step_by(sx)).for_each(|(v, &s)| *v = s);
                    }
                }
                _ => line.fill(0.0),
            }
            (y, x, out) = (y + 1, 0, rest);
        }
    }
}

/// A copy of the elements of an f32 flex tensor (views included), row-major.
fn values<const D: usize>(x: &Tensor<D>) -> Option<Vec<f32>> {
    let t = take(x.clone()).ok()?;
    t.as_slice::<f32>().map(<[f32]>::to_vec)
}

pub fn lstm_sequence(
    projected: &Tensor<3>,
    r: &Tensor<2>,
    bias: &Tensor<2>,
    (h0, c0): (&Tensor<2>, &Tensor<2>),
    reverse: bool,
    quantize_state: bool,
) -> Option<(Tensor<3>, Tensor<2>, Tensor<2>)> {
    let [steps, batch, gates] = projected.dims();
    let hidden = gates / 4;
    let (xw, bias) = (values(projected)?, values(bias)?);
    let r_tensor = take(r.clone()).ok()?;
    let r = r_tensor.as_slice::<f32>()?;
    let (mut h, mut c) = (values(h0)?, values(c0)?);
    if r.len() != gates * hidden || bias.len() != gates || h.len() != batch * hidden || c.len() != h.len() {
        return None;
    }
    let mut ys = vec![0.0f32; steps * batch * hidden];
    let mut g = vec![0.0f32; gates];
    let mut tanh_c = vec![0.0f32; hidden];
    let mut quantized = if quantize_state { vec![0.0f32; h.len()] } else { vec![] };
    for step in 0..steps {
        let t = if reverse { steps - 1 - step } else { step };
        if quantize_state {
            super::quantize_dequantize_u8_values(&h, &mut quantized);
        }
        for b in 0..batch {
            let base = (t * batch + b) * gates;
            let state = if quantize_state { &quantized } else { &h };
            let hb = &state[b * hidden..(b + 1) * hidden];
            // Gates four at a time (there are 4 × hidden).
            for (quad, g) in g.chunks_exact_mut(4).enumerate() {
                let rows = std::array::from_fn(|q| &r[(4 * quad + q) * hidden..][..hidden]);
                let sums = crate::kernels::gemm::dot4(rows, hb);
                for (q, g) in g.iter_mut().enumerate() {
                    let j = 4 * quad + q;
                    *g = xw[base + j] + bias[j] + sums[q];
                }
            }
            super::simd::sigmoid(&mut g[..3 * hidden]);
            super::simd::tanh(&mut g[3 * hidden..]);
            let (i, rest) = g.split_at(hidden);
            let (o, rest) = rest.split_at(hidden);
            let (f, cand) = rest.split_at(hidden);
            let cb = &mut c[b * hidden..(b + 1) * hidden];
            for k in 0..hidden {
                cb[k] = f[k] * cb[k] + i[k] * cand[k];
            }
            tanh_c.copy_from_slice(cb);
            super::simd::tanh(&mut tanh_c);
            let hb = &mut h[b * hidden..(b + 1) * hidden];
            for k in 0..hidden {
                hb[k] = o[k] * tanh_c[k];
            }
            ys[(t * batch + b) * hidden..][..hidden].copy_from_slice(hb);
        }
    }
    Some((from_vec(ys, [steps, batch, hidden]), from_vec(h, [batch, hidden]), from_vec(c, [batch, hidden])))
}

/// Output columns `first..end` whose input column `x * stride + shift - pad` lies in `0..w`
/// (of `ow` output columns).
fn valid_columns(shift: usize, pad: usize, stride: usize, w: usize, ow: usize) -> (usize, usize) {
    let first = pad.saturating_sub(shift).div_ceil(stride).min(ow);
    let end = (w + pad).checked_sub(shift + 1).map_or(0, |last| last / stride + 1).clamp(first, ow);
    (first, end)
}

/// Kernel taps `k` with `o * stride + k * dilation - pad` inside `0..size`.
fn taps(o: usize, stride: usize, dilation: usize, pad: usize, kernel: usize, size: usize) -> std::ops::Range<usize> {
    let base = o * stride;
    let first = pad.saturating_sub(base).div_ceil(dilation).min(kernel);
    let end = (size + pad).checked_sub(base + 1).map_or(0, |last| last / dilation + 1).clamp(first, kernel);
    first..end
}

/// Pooling of one plane in two passes, `(identity, combine)` the reduction (max or sum): over
/// each window's columns, for every input row (`columns`, `h × ow`), then over its rows,
/// output row by output row — both passes plain loops over rows that LLVM vectorises.
#[inline(always)]
fn pool_plane(
    input: &[f32],
    [h, w]: [usize; 2],
    output: &mut [f32],
    ow: usize,
    win: Window,
    columns: &mut Vec<f32>,
    (identity, combine): (f32, impl Fn(f32, f32) -> f32 + Copy),
) {
    let (s, d, p) = (win.strides, win.dilations, win.pads);
    // With a column stride, the windows are first reduced at every column (contiguous
    // loops, vectorised), then every s-th kept: a strided gather per tap does not vectorise.
    let dense_len = if s[1] > 1 { (ow - 1) * s[1] + 1 } else { 0 };
    columns.clear();
    columns.resize(h * ow + dense_len, identity);
    let (columns, dense) = columns.split_at_mut(h * ow);
    for (line, maxima) in input.chunks(w).zip(columns.chunks_mut(ow)) {
        if s[1] > 1 {
            dense.fill(identity);
            reduce_columns(line, dense, win.kernel[1], d[1], p[1].0, combine);
            maxima.iter_mut().zip(dense.iter().step_by(s[1])).for_each(|(m, &v)| *m = v);
        } else {
            reduce_columns(line, maxima, win.kernel[1], d[1], p[1].0, combine);
        }
    }
    for (y, row) in output.chunks_mut(ow).enumerate() {
        row.fill(identity);
        for ky in taps(y, s[0], d[0], p[0].0, win.kernel[0], h) {
            let maxima = &columns[(y * s[0] + ky * d[0] - p[0].0) * ow..][..ow];
            row.iter_mut().zip(maxima).for_each(|(m, &v)| *m = combine(*m, v));
        }
    }
}

/// `out[o] = combine(out[o], line[o + kx·dilation - pad])` over the taps kx that fall inside
/// `line` (the padding is left out): contiguous runs, which LLVM vectorises.
#[inline(always)]
fn reduce_columns(
    line: &[f32],
    out: &mut [f32],
    kernel: usize,
    dilation: usize,
    pad: usize,
    combine: impl Fn(f32, f32) -> f32,
) {
    for kx in 0..kernel {
        let (first, end) = valid_columns(kx * dilation, pad, 1, line.len(), out.len());
        let start = first + kx * dilation;
        if first < end {
            let taps = &line[start - pad..][..end - first];
            out[first..end].iter_mut().zip(taps).for_each(|(m, &v)| *m = combine(*m, v));
        }
    }
}

/// The larger of `best` and `v`, NaN once either is NaN (as flex's kernel).
#[inline(always)]
fn nan_max(best: f32, v: f32) -> f32 {
    if v > best || v.is_nan() {
        v
    } else {
        best
    }
}

thread_local! {
    /// Each thread's column maxima (or sums) of the plane it pools.
    static POOL_ROWS: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The stride phases of one padded input plane and the sums over the phase grid.
    static DEPTHWISE: std::cell::RefCell<(Vec<f32>, Vec<f32>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}
