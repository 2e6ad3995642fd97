//! Hand-written CPU kernels for Burn's flex backend where flex is the bottleneck: max pooling
//! without the indices flex always computes, and sigmoid / SiLU with a vectorised `exp` (flex
//! runs them one scalar `expf` at a time). A tensor that is not an f32 flex tensor outside
//! autodiff (another backend, a tracked tensor) takes Burn's own op, so the generated code
//! runs everywhere.

use burn::tensor::{activation, Device, Tensor, TensorData};

/// The tensor's f32 elements in row-major order (no copy when the tensor is contiguous and
/// not shared), with its device; or the tensor back when no fast path applies.
#[cfg(feature = "flex")]
fn flex_f32<const D: usize>(x: Tensor<D>) -> Result<(TensorData, Device), Tensor<D>> {
    use burn::backend::{DispatchAutodiffContext, DispatchTensorKind};
    let dispatch = x.into_dispatch();
    let flex = matches!(dispatch.kind, DispatchTensorKind::Flex(_))
        && matches!(dispatch.autodiff, DispatchAutodiffContext::Disabled);
    let x = Tensor::from_dispatch(dispatch);
    if !flex || x.dtype() != burn::tensor::DType::F32 {
        return Err(x);
    }
    let device = x.device();
    Ok((x.into_data(), device))
}

#[cfg(not(feature = "flex"))]
fn flex_f32<const D: usize>(x: Tensor<D>) -> Result<(TensorData, Device), Tensor<D>> {
    Err(x)
}

/// Runs `f` over chunks of the slice, on rayon's pool when it is large.
fn for_chunks(values: &mut [f32], f: impl Fn(&mut [f32]) + Sync + Send) {
    const CHUNK: usize = 1 << 14;
    #[cfg(feature = "flex")]
    if values.len() > 2 * CHUNK {
        use rayon::prelude::*;
        values.par_chunks_mut(CHUNK).for_each(f);
        return;
    }
    values.chunks_mut(CHUNK).for_each(f);
}

/// Runs `f` on matching chunks of `input` and `output` (one image plane each), in parallel.
fn for_each_pair(
    input: &[f32],
    in_len: usize,
    output: &mut [f32],
    out_len: usize,
    f: impl Fn((&[f32], &mut [f32])) + Sync + Send,
) {
    #[cfg(feature = "flex")]
    {
        use rayon::prelude::*;
        input.par_chunks(in_len).zip(output.par_chunks_mut(out_len)).for_each(f);
    }
    #[cfg(not(feature = "flex"))]
    input.chunks(in_len).zip(output.chunks_mut(out_len)).for_each(f);
}

/// Applies an elementwise map in place on the flex fast path, else `fallback`.
fn map_in_place<const D: usize>(
    x: Tensor<D>,
    kernel: fn(&mut [f32]),
    fallback: impl FnOnce(Tensor<D>) -> Tensor<D>,
) -> Tensor<D> {
    match flex_f32(x) {
        Ok((mut data, device)) => match data.as_mut_slice::<f32>() {
            Ok(values) => {
                for_chunks(values, kernel);
                Tensor::from_data(data, &device)
            }
            Err(_) => fallback(Tensor::from_data(data, &device)),
        },
        Err(x) => fallback(x),
    }
}

/// `1 / (1 + e^-x)`.
pub fn sigmoid<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    map_in_place(x, simd::sigmoid, activation::sigmoid)
}

/// SiLU (Swish), `x * sigmoid(x)`, in one pass.
pub fn silu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    map_in_place(x, simd::silu, |x| x.clone().mul(activation::sigmoid(x)))
}

/// 2-D max pooling over NCHW (floor mode), without computing the argmax indices. NaN wins,
/// as in flex's own kernel.
pub fn max_pool2d(
    x: Tensor<4>,
    kernel: [usize; 2],
    strides: [usize; 2],
    pads: [(usize, usize); 2],
    dilations: [usize; 2],
) -> Tensor<4> {
    let fallback = |x: Tensor<4>| {
        burn::tensor::module::max_pool2d(
            x,
            burn::tensor::ops::MaxPoolOptions::new(kernel)
                .with_stride(strides)
                .with_padding_pairs(pads)
                .with_dilation(dilations)
                .with_ceil_mode(false),
        )
    };
    let [n, c, h, w] = x.dims();
    let out_dim = |size: usize, axis: usize| {
        let span = dilations[axis] * (kernel[axis] - 1) + 1;
        (size + pads[axis].0 + pads[axis].1).checked_sub(span).map(|room| room / strides[axis] + 1)
    };
    let (Some(oh), Some(ow)) = (out_dim(h, 0), out_dim(w, 1)) else { return fallback(x) };
    let (data, device) = match flex_f32(x) {
        Ok(found) => found,
        Err(x) => return fallback(x),
    };
    let Ok(input) = data.as_slice::<f32>() else { return fallback(Tensor::from_data(data, &device)) };
    let mut output = vec![0.0f32; n * c * oh * ow];
    let plane = |(plane_in, plane_out): (&[f32], &mut [f32])| {
        for (y, row) in plane_out.chunks_mut(ow).enumerate() {
            for (x, out) in row.iter_mut().enumerate() {
                let mut best = f32::NEG_INFINITY;
                for ky in 0..kernel[0] {
                    let Some(iy) = (y * strides[0] + ky * dilations[0]).checked_sub(pads[0].0).filter(|&i| i < h) else {
                        continue;
                    };
                    let line = &plane_in[iy * w..(iy + 1) * w];
                    for kx in 0..kernel[1] {
                        if let Some(v) =
                            (x * strides[1] + kx * dilations[1]).checked_sub(pads[1].0).and_then(|ix| line.get(ix))
                        {
                            if *v > best || v.is_nan() {
                                best = *v;
                            }
                        }
                    }
                }
                *out = best;
            }
        }
    };
    for_each_pair(input, h * w, &mut output, oh * ow, plane);
    Tensor::from_data(TensorData::new(output, [n, c, oh, ow]), &device)
}

/// Branch-free `exp`, sigmoid and SiLU over slices, compiled for AVX2+FMA and for the baseline
/// target and picked at run time, so LLVM vectorises them on every x86-64 CPU.
mod simd {
    /// `e^x` for f32 (Cephes' `expf`: range reduction by ln 2 in two parts, degree-5
    /// polynomial, exponent bits; within 2 ulp on [-87, 88], clamped outside).
    #[inline(always)]
    fn exp(x: f32) -> f32 {
        const LOG2E: f32 = std::f32::consts::LOG2_E;
        const LN2_HI: f32 = 0.693_359_4;
        const LN2_LO: f32 = -2.121_944_4e-4;
        let x = x.clamp(-87.0, 88.0);
        // Round to nearest through the float's mantissa (no SSE4.1 `round` needed).
        let shifter = 12_582_912.0f32; // 1.5 * 2^23
        let n = (x * LOG2E + shifter) - shifter;
        let r = x - n * LN2_HI - n * LN2_LO;
        let p = 1.987_569_1e-4f32;
        let p = p * r + 1.398_199_9e-3;
        let p = p * r + 8.333_452e-3;
        let p = p * r + 4.166_579_6e-2;
        let p = p * r + 1.666_666_5e-1;
        let p = p * r + 5.000_000_1e-1;
        let y = p * r * r + r + 1.0;
        let bits = ((n as i32 + 127) as u32) << 23;
        y * f32::from_bits(bits)
    }

    #[inline(always)]
    fn sigmoid_one(x: f32) -> f32 {
        1.0 / (1.0 + exp(-x))
    }

    macro_rules! dispatched {
        ($name:ident, $body:expr) => {
            pub fn $name(values: &mut [f32]) {
                #[inline(always)]
                fn body(values: &mut [f32]) {
                    for v in values.iter_mut() {
                        *v = $body(*v);
                    }
                }
                #[cfg(target_arch = "x86_64")]
                {
                    #[target_feature(enable = "avx2,fma")]
                    unsafe fn avx2(values: &mut [f32]) {
                        body(values)
                    }
                    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                        // SAFETY: the CPU has the features the function was compiled for.
                        return unsafe { avx2(values) };
                    }
                }
                body(values)
            }
        };
    }

    dispatched!(sigmoid, sigmoid_one);
    dispatched!(silu, |x: f32| x * sigmoid_one(x));

    #[cfg(test)]
    mod tests {
        #[test]
        fn exp_matches_std_within_2_ulp() {
            for i in -8700..=8800 {
                let x = i as f32 / 100.0;
                let (ours, std) = (super::exp(x), x.exp());
                assert!((ours - std).abs() <= 2.0 * f32::EPSILON * std, "exp({x}) = {ours}, std {std}");
            }
        }
    }
}
