//! The kernels on flex's f32 tensors: each returns its input back (`Err`) when the tensor is not
//! one it handles, and the caller takes Burn's op.

use super::Window;
use crate::kernels::gemm;
use crate::kernels::written::{self, written_by};
use crate::parallel::{job_len, PARALLEL_MIN_ELEMENTS};
use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::{BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Bytes, DType, Shape, Tensor};
use rayon::prelude::*;
use std::mem::MaybeUninit;

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
pub(crate) fn vectorised<R>(f: impl FnOnce() -> R) -> R {
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
    let copy = |output: &mut [MaybeUninit<f32>]| {
        // (destination, source) runs in output order, each at most CHUNK long.
        let mut runs = Vec::new();
        let mut free = output;
        for o in 0..outer {
            for (input, s) in inputs.iter().zip(&shapes) {
                let len = s[dim] * inner;
                let (run, tail) = std::mem::take(&mut free).split_at_mut(len);
                free = tail;
                runs.extend(run.chunks_mut(CHUNK).zip(input[o * len..][..len].chunks(CHUNK)));
            }
        }
        let jobs = job_len(runs.len(), total.div_ceil(runs.len().max(1)), PARALLEL_MIN_ELEMENTS);
        runs.into_par_iter().with_min_len(jobs).for_each(|(to, from)| {
            to.write_copy_of_slice(from);
        });
    };
    // SAFETY: the runs cut the whole output (every input's run of every outer index).
    let output = unsafe { written_by(total, copy) };
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

/// The mean over the axes from `from` on (kept as size 1): each run of their values summed in
/// eight lanes, then divided by its length; runs spread over the pool when there is enough work.
/// `Err` for empty runs (Burn's mean of nothing is NaN) and tensors it does not handle.
pub fn mean_trailing<const D: usize>(x: Tensor<D>, from: usize) -> Result<Tensor<D>, Tensor<D>> {
    let t = take(x)?;
    let dims: [usize; D] = t.layout().shape().dims();
    let run: usize = dims.get(from..).map_or(0, |d| d.iter().product());
    let (Some(input), true) = (t.as_slice::<f32>(), from < D && run > 0) else { return Err(give(t)) };
    let mut shape = dims;
    shape[from..].fill(1);
    let runs = input.par_chunks(run);
    let jobs = job_len(runs.len(), run, PARALLEL_MIN_ELEMENTS);
    let means = runs.with_min_len(jobs).map(|values| {
        let sum = vectorised(
            #[inline(always)]
            || sum_in_lanes(values),
        );
        sum / run as f32
    });
    Ok(from_vec(means.collect(), shape))
}

/// `Σ values`, in eight running sums (a lane each) added together at the end.
#[inline(always)]
fn sum_in_lanes(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        lanes.iter_mut().zip(chunk).for_each(|(lane, &v)| *lane += v);
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
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
    let pool = |output: &mut [MaybeUninit<f32>]| {
        if h * w == 0 || oh * ow == 0 {
            written::zeroed(output);
            return;
        }
        // A separable window visits each input element about twice and each output once.
        let planes = input.par_chunks(h * w).zip(output.par_chunks_mut(oh * ow));
        let jobs = job_len(planes.len(), 2 * h * w + oh * ow, PARALLEL_MIN_ELEMENTS);
        planes.with_min_len(jobs).for_each(|(plane, out)| {
            POOL_ROWS.with_borrow_mut(|scratch| {
                vectorised(
                    #[inline(always)]
                    || pool_plane(plane, [h, w], out, ow, window, scratch, reduction),
                );
                // SAFETY: `pool_plane` writes every output of the plane.
                finish(unsafe { written::assume_written(out) })
            })
        });
    };
    // SAFETY: `pool` writes every output (zeros for an empty plane).
    let output = unsafe { written_by(n * c * oh * ow, pool) };
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

/// Products of fewer rows than this (and more than `skinny` takes) read a Linear's weight packed
/// once ([`constant::packed_f32`]), where the tiles packed it on every call or read it in place:
/// packing reads and writes all of B, a cost that a product of more rows spreads over more work
/// (kernels bench, one thread: ddddocr's 16 × 1024 → 8210 9.4 → 3.8 ms, MiniLM's 128 × 384 →
/// 1536 0.99× → 0.88× Burn's time), and B read in place is read a slab of columns across all its
/// rows at a time, where a packed panel is one sequential run (MiniLM's 8-row layers, their
/// weights out of cache between calls: the model 1.8 → 1.5 ms). The packing is kept while the
/// weight lives: memory the size of those weights (up to 1 GiB of them), as ONNX Runtime's
/// prepacked weights take.
const PACKED_WEIGHT_MAX_ROWS: usize = 256;

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
    let m: usize = shape[..D - 1].iter().product();
    let a = gemm::Matrix { data: input, rows: m, cols: k, stride: k };
    let b = gemm::Matrix { data: w, rows: k, cols: n, stride: n };
    let packed = (gemm::SKINNY_MAX_ROWS + 1..PACKED_WEIGHT_MAX_ROWS)
        .contains(&m)
        .then(|| constant::packed_f32(&layer.weight.val(), false))
        .flatten();
    // Between the few rows that only stream B and the many that fill the register tile, the
    // tiles where they read B packed or in place, else Burn's product (see `LINEAR_MIN_ROWS`).
    let few_rows = (gemm::SKINNY_MAX_ROWS + 1..gemm::LINEAR_MIN_ROWS).contains(&m);
    if few_rows && packed.is_none() && !gemm::reads_b_in_place(m, &b) {
        return Err(x);
    }
    let add_bias = |_, j0, row: &mut [f32]| add_bias(bias.map(|b| &b[j0..]), row);
    let output = if k > 0 && m <= gemm::SKINNY_MAX_ROWS {
        let mut output = vec![0.0f32; m * n];
        gemm::skinny(a, b, bias, &mut output);
        output
    } else if let Some(packed) = packed {
        // SAFETY: `sgemm_into` writes every value.
        unsafe { written_by(m * n, |output| gemm::sgemm_into(a, &*packed, output, &add_bias)) }
    } else {
        // SAFETY: `sgemm_into` writes every value.
        unsafe { written_by(m * n, |output| gemm::sgemm_into(a, &b, output, &add_bias)) }
    };
    shape[D - 1] = n;
    Ok(from_vec(output, shape))
}

/// `a · bᵀ` for fewer than [`LINEAR_MIN_ROWS`](crate::kernels::gemm::LINEAR_MIN_ROWS) rows of
/// `a`, computed as `(b · aᵀ)ᵀ`: B's rows are then the left operand, read in place, where
/// packing the transposed B would cost what the whole product does (a fully connected layer of
/// one image streams its weight once). The operands back otherwise.
pub fn matmul_transposed(a: Tensor<2>, b: Tensor<2>) -> Result<Tensor<2>, (Tensor<2>, Tensor<2>)> {
    let ([m, k], [n, kb]) = (a.dims(), b.dims());
    if !crate::kernels::gemm::available() || k != kb || k == 0 || m >= crate::kernels::gemm::LINEAR_MIN_ROWS {
        return Err((a, b));
    }
    let (ta, tb) = match (take(a), take(b)) {
        (Ok(ta), Ok(tb)) => (ta, tb),
        (a, b) => return Err((a.map_or_else(|t| t, give), b.map_or_else(|t| t, give))),
    };
    let (Some(lhs), Some(rhs)) = (ta.as_slice::<f32>(), tb.as_slice::<f32>()) else {
        return Err((give(ta), give(tb)));
    };
    // A one-row matrix and its transpose lie alike in memory: no copies then.
    let transposed;
    let at = if m == 1 {
        lhs
    } else {
        transposed = transposed_copy(lhs, m, k);
        &transposed
    };
    let mut product = vec![0.0f32; n * m];
    let at = crate::kernels::gemm::Matrix { data: at, rows: k, cols: m, stride: m };
    crate::kernels::gemm::sgemm(matrix(rhs, n, k), &at, &mut product, &|_, _, _| {});
    let output = if m == 1 { product } else { transposed_copy(&product, n, m) };
    Ok(from_vec(output, [m, n]))
}

/// `a · wᵀ` for a `w` (`[n, k]`) that is the same from call to call (an RNN's input weights):
/// wᵀ packed on the first call and kept while `w`'s storage lives, where Burn's product
/// transposed it on every call.
pub fn matmul_constant_transposed(a: Tensor<2>, w: &Tensor<2>) -> Result<Tensor<2>, Tensor<2>> {
    let ([m, k], [n, kw]) = (a.dims(), w.dims());
    if k != kw {
        return Err(a);
    }
    let Some(packed) = constant::packed_f32(w, true) else { return Err(a) };
    let ta = take(a)?;
    let Some(values) = ta.as_slice::<f32>() else { return Err(give(ta)) };
    let a = gemm::Matrix { data: values, rows: m, cols: k, stride: k };
    // SAFETY: `sgemm_into` writes every value.
    let output = unsafe { written_by(m * n, |output| gemm::sgemm_into(a, &*packed, output, &|_, _, _| {})) };
    Ok(from_vec(output, [m, n]))
}

/// The row-major `rows × cols` matrix `values`, transposed (in `kernels::transpose`'s blocks).
fn transposed_copy(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    // SAFETY: the transpose writes every value of its `cols × rows` destination.
    unsafe {
        written_by(rows * cols, |out| crate::kernels::transpose::transpose(values, [rows, cols], cols, out, rows))
    }
}

fn add_bias(bias: Option<&[f32]>, row: &mut [f32]) {
    if let Some(b) = bias {
        row.iter_mut().zip(b).for_each(|(v, b)| *v += b);
    }
}

mod constant;
mod conv;
pub use conv::{conv2d, conv3d};
mod integer;
mod lstm;
use conv::finish_outputs;
pub use integer::{
    dequantize_sums, fake_quantize, int_minus, integer_conv2d, integer_matmul, integer_matmul_constant,
    integer_matmul_constant_transposed, qlinear_add, qlinear_conv2d, requantize, Requantizer,
};
pub use lstm::{lstm_sequence, quantized_lstm};

/// A copy of the elements of an f32 flex tensor (views included), row-major.
pub(super) fn values<const D: usize>(x: &Tensor<D>) -> Option<Vec<f32>> {
    with_values(x, <[f32]>::to_vec)
}

/// `f` of the elements of an f32 flex tensor (views copied first), row-major, read in place.
pub(super) fn with_values<const D: usize, R>(x: &Tensor<D>, f: impl FnOnce(&[f32]) -> R) -> Option<R> {
    let t = take(x.clone()).ok()?;
    Some(f(t.as_slice::<f32>()?))
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
/// each window's rows, for every output row, into rows padded left and right with the identity
/// (`oh × wp`); then over each window's columns at every position of those rows as one long
/// loop (positions past a row's end read the next row: their results are never kept), every
/// `s`-th position kept. Long loops, which LLVM vectorises whole: small networks' planes have
/// rows of 7 to 31 values, on which a loop per row and tap spent its time in scalar tails and
/// loop setup (SqueezeNet 1.1's pooling: a fifth of the model's time).
#[inline(always)]
fn pool_plane(
    input: &[f32],
    [h, w]: [usize; 2],
    output: &mut [MaybeUninit<f32>],
    ow: usize,
    win: Window,
    scratch: &mut Vec<f32>,
    (identity, combine): (f32, impl Fn(f32, f32) -> f32 + Copy),
) {
    let (s, d, p) = (win.strides, win.dilations, win.pads);
    let (oh, pl, wp) = (output.len() / ow, p[1].0, p[1].0 + w + p[1].1);
    // The columns the last row's windows read past its end.
    let overhang = (win.kernel[1] - 1) * d[1];
    scratch.clear();
    scratch.resize(2 * oh * wp + overhang, identity);
    let (rows, pooled) = scratch.split_at_mut(oh * wp + overhang);
    for (y, row) in rows.chunks_exact_mut(wp).enumerate() {
        let row = &mut row[pl..][..w];
        for ky in taps(y, s[0], d[0], p[0].0, win.kernel[0], h) {
            let line = &input[(y * s[0] + ky * d[0] - p[0].0) * w..][..w];
            row.iter_mut().zip(line).for_each(|(m, &v)| *m = combine(*m, v));
        }
    }
    for kx in 0..win.kernel[1] {
        let shifted = &rows[kx * d[1]..][..pooled.len()];
        pooled.iter_mut().zip(shifted).for_each(|(m, &v)| *m = combine(*m, v));
    }
    // Every output: `oh` rows of `ow`, each row's windows inside its `wp` pooled columns.
    for (out, row) in output.chunks_exact_mut(ow).zip(pooled.chunks_exact(wp)) {
        if s[1] == 1 {
            out.write_copy_of_slice(&row[..ow]);
        } else {
            out.iter_mut().zip(row.iter().step_by(s[1])).for_each(|(o, &v)| {
                o.write(v);
            });
        }
    }
}

/// The larger of `best` and `v`, NaN once either is NaN (as flex's kernel). Written as
/// `best` or `v` chosen by a comparison, a loop updating maxima in place became masked stores of
/// `v` (`vmaskmovps`, slow on this CPU: two fifths of SqueezeNet 1.1's time, in its pooling);
/// `max` and a NaN sum are values LLVM computes in registers and stores whole.
#[inline(always)]
fn nan_max(best: f32, v: f32) -> f32 {
    if best.is_nan() | v.is_nan() {
        best + v
    } else {
        best.max(v)
    }
}

thread_local! {
    /// Each thread's rows of the plane it pools (see [`pool_plane`]).
    static POOL_ROWS: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The stride phases of one padded input plane and the sums over the phase grid.
    static DEPTHWISE: std::cell::RefCell<(Vec<f32>, Vec<f32>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}
