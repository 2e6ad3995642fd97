//! ONNX DFT, STFT, the cosine windows and MelWeightMatrix. A transform is a matrix product
//! with a table of cosines and sines (O(n²), exact to f32 rounding for the lengths models use);
//! complex values are a last axis of 2 (real, imaginary), real ones a last axis of 1.

// libm's, with std too: the same tables on every build.
use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{DType, Device, Tensor, TensorCreationOptions, TensorData};
use libm::{cos, floor, log10, pow, sin};

/// What a DFT computes: the forward transform (`onesided`: bins `0..=n/2` only), the inverse
/// (scaled by `1/n`), or, `inverse` and `onesided`, the real signal of a one-sided spectrum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DftOptions {
    /// The inverse transform, scaled by `1/n`.
    pub inverse: bool,
    /// Only the bins `0..=n/2` of a real signal's spectrum.
    pub onesided: bool,
}

/// `cos` and `sin` of `2π·(j·k mod n)/n` for `j` in `0..rows`, `k` in `0..cols`, each scaled
/// by `weight(j)`, as `[rows, cols]` matrices.
/// In the dtype of `float` (the input's), rounded once from f64.
fn basis(rows: usize, cols: usize, n: usize, weight: impl Fn(usize) -> f64, float: (&Device, DType)) -> [Tensor<2>; 2] {
    let (mut c, mut s) = (Vec::with_capacity(rows * cols), Vec::with_capacity(rows * cols));
    for j in 0..rows {
        for k in 0..cols {
            let angle = 2.0 * core::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
            c.push(cos(angle) * weight(j));
            s.push(sin(angle) * weight(j));
        }
    }
    let table = |v: Vec<f64>| Tensor::from_data(TensorData::new(v, [rows, cols]), float);
    [table(c), table(s)]
}

/// ONNX DFT of `x` along `axis` (not the last) with `length` points (the input truncated or
/// zero-padded to it; default the axis' length, or `2·(bins − 1)` for the real inverse).
pub fn dft<const D: usize>(x: Tensor<D>, axis: usize, length: Option<usize>, options: DftOptions) -> Tensor<D> {
    let device = x.device();
    let x = x.swap_dims(axis, D - 2);
    let dims = x.dims();
    let (count, complex) = (dims[D - 2], dims[D - 1] == 2);
    let real_output = options.inverse && options.onesided;
    let n = length.unwrap_or(if real_output { 2 * count.saturating_sub(1) } else { count });
    let rows: usize = dims[..D - 2].iter().product();
    // Only the first `used` input points (or one-sided bins) take part.
    let used = if real_output { count.min(n / 2 + 1) } else { count.min(n) };
    let part = |i: usize| x.clone().narrow(D - 1, i, 1).narrow(D - 2, 0, used).reshape([rows, used]);
    let (re, im) = (part(0), complex.then(|| part(1)));
    let mut out_dims = dims;
    let y = if real_output {
        // x[t] = Σ_k c_k/n (Re X_k cos θ − Im X_k sin θ), c_k = 2 but for bin 0 and n/2.
        let weight = |k: usize| if k == 0 || 2 * k == n { 1.0 } else { 2.0 } / n as f64;
        let [c, s] = basis(used, n, n, weight, (&device, x.dtype()));
        let y = re.matmul(c);
        let y = match im {
            Some(im) => y - im.matmul(s),
            None => y,
        };
        (out_dims[D - 2], out_dims[D - 1]) = (n, 1);
        y.reshape(out_dims)
    } else {
        let bins = if options.onesided { n / 2 + 1 } else { n };
        let (scale, sign) = if options.inverse { (1.0 / n as f64, 1.0) } else { (1.0, -1.0) };
        let [c, s] = basis(used, bins, n, |_| scale, (&device, x.dtype()));
        // (re + i·im)(cos θ + i·sign·sin θ)
        let (mut y_re, mut y_im) = (re.clone().matmul(c.clone()), re.matmul(s.clone()).mul_scalar(sign));
        if let Some(im) = im {
            y_re = y_re - im.clone().matmul(s).mul_scalar(sign);
            y_im = y_im + im.matmul(c);
        }
        (out_dims[D - 2], out_dims[D - 1]) = (bins, 1);
        Tensor::cat(vec![y_re.reshape(out_dims), y_im.reshape(out_dims)], D - 1)
    };
    y.swap_dims(axis, D - 2)
}

/// ONNX STFT of `signal` (`[batch, length, 1 or 2]`): frames of `frame_length` (default the
/// window's length) every `step` samples, weighted by `window` (default ones), each
/// transformed; `[batch, frames, bins, 2]`.
pub fn stft(
    signal: Tensor<3>,
    step: usize,
    window: Option<Tensor<1>>,
    frame_length: Option<usize>,
    onesided: bool,
) -> Tensor<4> {
    let [batch, length, _] = signal.dims();
    let size = window.as_ref().map_or_else(|| frame_length.unwrap_or(length), |w| w.dims()[0]);
    let n = frame_length.unwrap_or(size);
    let frames = if length >= n { (length - n) / step + 1 } else { 0 };
    let window = window.unwrap_or_else(|| Tensor::ones([size], (&signal.device(), signal.dtype())));
    let framed: Vec<Tensor<3>> = (0..frames)
        .map(|f| {
            let start = f * step;
            let frame = signal.clone().slice_dim(1, start..(start + size).min(length));
            let missing = start + size - (start + size).min(length);
            frame.pad([(0, 0), (0, missing), (0, 0)], burn::tensor::ops::PadMode::Constant(0.0))
        })
        .collect();
    let bins = if onesided { n / 2 + 1 } else { n };
    if framed.is_empty() {
        return Tensor::zeros([batch, 0, bins, 2], (&signal.device(), signal.dtype()));
    }
    let weighted = Tensor::stack::<4>(framed, 1) * window.reshape([1, 1, size, 1]);
    dft(weighted, 2, Some(n), DftOptions { inverse: false, onesided })
}

/// Which generalized cosine window: `a0 − a1·cos(2πn/N) + a2·cos(4πn/N)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// `0.5 − 0.5·cos(2πn/N)`.
    Hann,
    /// `25/46 − 21/46·cos(2πn/N)`.
    Hamming,
    /// `0.42 − 0.5·cos(2πn/N) + 0.08·cos(4πn/N)`.
    Blackman,
}

/// The window of `size` values; `N` is `size` when `periodic`, else `size − 1`.
/// `options`: `&device` for the device's default float, or `(&device, DType::F64)` and the like.
pub fn window(kind: Window, size: i64, periodic: bool, options: impl Into<TensorCreationOptions>) -> Tensor<1> {
    let size = size.max(0) as usize;
    let (a0, a1, a2) = match kind {
        Window::Hann => (0.5, 0.5, 0.0),
        Window::Hamming => (25.0 / 46.0, 21.0 / 46.0, 0.0),
        Window::Blackman => (0.42, 0.5, 0.08),
    };
    let period = if periodic { size } else { size.saturating_sub(1) } as f64;
    let values: Vec<f64> = (0..size)
        .map(|i| {
            let angle = 2.0 * core::f64::consts::PI * i as f64 / period;
            a0 - a1 * cos(angle) + a2 * cos(2.0 * angle)
        })
        .collect();
    Tensor::from_data(TensorData::new(values, [size]), options)
}

/// ONNX MelWeightMatrix, `[dft_length / 2 + 1, mel_bins]`: triangular filters of peak 1 between
/// mel-spaced edges, as ONNX's reference builds them (edges rounded down to DFT bins). `options`:
/// `&device`, or `(&device, DType::F64)` and the like.
pub fn mel_weight_matrix(
    mel_bins: i64,
    dft_length: i64,
    sample_rate: i64,
    lower_hertz: f64,
    upper_hertz: f64,
    options: impl Into<TensorCreationOptions>,
) -> Tensor<2> {
    let (mel_bins, spectrum_bins) = (mel_bins.max(0) as usize, (dft_length.max(0) / 2 + 1) as usize);
    let mel = |hertz: f64| 2595.0 * log10(1.0 + hertz / 700.0);
    let (low, high) = (mel(lower_hertz), mel(upper_hertz));
    let step = (high - low) / (mel_bins + 2) as f64;
    let edges: Vec<usize> = (0..mel_bins + 2)
        .map(|i| {
            let hertz = 700.0 * (pow(10.0, (i as f64 * step + low) / 2595.0) - 1.0);
            floor((dft_length + 1) as f64 * hertz / sample_rate as f64).max(0.0) as usize
        })
        .collect();
    let mut out = vec![0f64; spectrum_bins * mel_bins];
    let mut set = |bin: usize, mel: usize, value: f64| {
        if bin < spectrum_bins {
            out[bin * mel_bins + mel] = value;
        }
    };
    for i in 0..mel_bins {
        let (left, center, right) = (edges[i], edges[i + 1], edges[i + 2]);
        if center == left {
            set(center, i, 1.0);
        } else {
            for j in left..=center {
                set(j, i, (j - left) as f64 / (center - left) as f64);
            }
        }
        for j in center..right {
            set(j, i, (right - j) as f64 / (right - center) as f64);
        }
    }
    Tensor::from_data(TensorData::new(out, [spectrum_bins, mel_bins]), options)
}
