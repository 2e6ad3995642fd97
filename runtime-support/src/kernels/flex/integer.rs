//! Integer products of quantized models on flex tensors: MatMulInteger's product with a constant
//! weight (packed once, kept while the weight lives), a product of two run-time matrices, the
//! integer convolution and QLinear's requantization. The values arrive as integer-valued f32 (quantized
//! values less their zero points) and leave as f32 of the exact 32-bit sums.

use super::constant::{ConstantCache, Making};
use super::{from_vec, take, values};
use crate::kernels::igemm::{gemm, integer_range_of, signed_offset, PackedB, RowsOfA};
use crate::kernels::Window;
use burn::backend::{BackendTensor, DispatchTensor, DispatchTensorKind};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{DType, Int, Tensor};
use std::sync::Arc;

/// `a · b` through the exact u8 × s8 product, as f32 (`None` when the values do not fit it or
/// the tensors are not flex f32). B is packed for this call.
pub fn integer_matmul(a: &Tensor<2>, b: &Tensor<2>) -> Option<Tensor<2>> {
    let [k, n] = b.dims();
    let b = values(b)?;
    let packed = PackedB::pack(k, n, |p, j| b[p * n + j])?;
    product(a, &packed)
}

/// `a · b` for a `b` that stays the same from call to call (a model's weight less its zero
/// point): packed on the first call and kept for as long as that tensor's storage lives.
pub fn integer_matmul_constant(a: &Tensor<2>, b: &Tensor<2>) -> Option<Tensor<2>> {
    let packed = packed_constant(b, false)?;
    product(a, &packed)
}

/// `a · wᵀ` for a `w` (`[n, k]`) that stays the same from call to call (an RNN's input
/// weights): wᵀ packed on the first call and kept as [`integer_matmul_constant`] keeps B.
pub fn integer_matmul_constant_transposed(a: &Tensor<2>, w: &Tensor<2>) -> Option<Tensor<2>> {
    let packed = packed_constant(w, true)?;
    product(a, &packed)
}

/// `a` (`[m, k]`) times packed B, as f32.
fn product(a: &Tensor<2>, b: &PackedB) -> Option<Tensor<2>> {
    let [m, k] = a.dims();
    if b.dims().0 != k {
        return None;
    }
    let a = take(a.clone()).ok()?;
    let rows = RowsOfA::new(a.as_slice::<f32>()?, m, k)?;
    let n = b.dims().1;
    let mut sums = vec![0i32; m * n];
    gemm(&rows, b, &mut sums);
    Some(from_vec(sums.into_iter().map(|s| s as f32).collect(), [m, n]))
}

/// Packings of the constant right sides in use.
static PACKED: ConstantCache<PackedB> = ConstantCache::new();

/// Convolution weights read into rows in use.
static CONV_ROWS: ConstantCache<Vec<RowsOfA>> = ConstantCache::new();

/// B's packing (Bᵀ's where `transposed`), made once while B's storage lives. `None` for a B that
/// is not a flex f32 tensor or does not fit the product.
fn packed_constant(b: &Tensor<2>, transposed: bool) -> Option<Arc<PackedB>> {
    let [rows, columns] = b.dims();
    let making = if transposed { Making::TransposedB } else { Making::B };
    PACKED.get(b, making, |values| {
        if transposed {
            PackedB::pack(columns, rows, |p, j| values[j * columns + p])
        } else {
            PackedB::pack(rows, columns, |p, j| values[p * columns + j])
        }
    })
}

/// The packing of `stack[d]ᵀ` for `stack` `[dirs, n, k]` (a recurrence's weights), as
/// [`packed_constant`] makes it, read in place where narrowing to matrix `d` cost a few tensor
/// ops on every call.
pub(super) fn packed_constant_of(stack: &Tensor<3>, d: usize) -> Option<Arc<PackedB>> {
    let [dirs, n, k] = stack.dims();
    if d >= dirs {
        return None;
    }
    PACKED.get(stack, Making::TransposedBOf(d), |values| {
        let matrix = &values[d * n * k..][..n * k];
        PackedB::pack(k, n, |p, j| matrix[j * k + p])
    })
}

/// An i32 or i64 flex tensor of quantized values less one zero point, as f32 (`v as f32 - zero`,
/// what Burn's conversion then subtraction compute): one pass where those ops made two. `None`
/// for other tensors (a strided view included).
pub fn int_minus<const D: usize>(x: &Tensor<D, Int>, zero: f32) -> Option<Tensor<D>> {
    if !super::ENABLED.load(core::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let DispatchTensor { kind: DispatchTensorKind::Flex(BackendTensor::Int(t)), .. } = x.clone().into_dispatch() else {
        return None;
    };
    let values: Vec<f32> = match t.dtype() {
        DType::I32 => t.as_slice::<i32>()?.iter().map(|&v| v as f32 - zero).collect(),
        DType::I64 => t.as_slice::<i64>()?.iter().map(|&v| v as f32 - zero).collect(),
        _ => return None,
    };
    Some(from_vec(values, x.dims()))
}

/// QLinear*'s requantization of the f32 sums in `acc` (a flex tensor): each times its scale
/// (`scales` has one value, or one per index of dim `channel`), clamped to `lo - zero ..= hi -
/// zero` (the same integers as clamping after the rounding, since both bounds are integers),
/// rounded to even and offset by `zero`, as ONNX Runtime's requantization computes it: one pass,
/// vectorised, where Burn's ops made five.
pub fn requantize<const D: usize>(
    acc: &Tensor<D>,
    scales: &[f32],
    channel: usize,
    zero: f32,
    (lo, hi): (f32, f32),
) -> Option<Vec<i32>> {
    const EXACT: f32 = (1 << 24) as f32;
    if !(-EXACT..=EXACT).contains(&lo) || !(-EXACT..=EXACT).contains(&hi) || !(-EXACT..=EXACT).contains(&zero) {
        return None;
    }
    let (low, high) = (lo - zero, hi - zero);
    let requantize = |scale: f32, s: f32| {
        // `max` then `min` (NaN gives `low`): always a finite value in range.
        let v = (s * scale).max(low).min(high).round_ties_even() + zero;
        // SAFETY: `v` is an integer within `lo..=hi`, which lie in ±2^24 (checked above).
        unsafe { v.to_int_unchecked::<i32>() }
    };
    per_channel(acc, channel, &[scales.len()], |c| scales[c % scales.len()], requantize)
}

/// A fused *Integer's finish: each of the f32 sums in `acc` (a flex tensor; integers) as i32,
/// plus its int32 bias (`biases`: one value, or one per index of dim `channel`) wrapping as
/// int32 does, as f32, times its scale (`scales`, likewise), as ONNX Runtime's Add, Cast and
/// Mul compute it: one vectorised pass where Burn's ops made four.
pub fn dequantize_sums<const D: usize>(
    acc: &Tensor<D>,
    biases: &[i32],
    scales: &[f32],
    channel: usize,
) -> Option<Tensor<D>> {
    let parameters = |c: usize| (biases[c % biases.len()], scales[c % scales.len()]);
    let finish = |(bias, scale): (i32, f32), s: f32| saturating_i32(s).wrapping_add(bias) as f32 * scale;
    let out = per_channel(acc, channel, &[biases.len(), scales.len()], parameters, finish)?;
    Some(from_vec(out, acc.dims()))
}

/// `s as i32` (NaN 0, saturated past i32's range) in operations that vectorise: Rust's
/// saturating cast stays a scalar conversion per value, which kept `dequantize_sums`' loop scalar
/// (6% of `common_old`'s time).
#[inline(always)]
fn saturating_i32(s: f32) -> i32 {
    /// The greatest f32 below 2^31.
    const BELOW_2_31: f32 = 2_147_483_520.0;
    // `max` of a NaN and a number is the number: `clamped` is a number in i32's range.
    let clamped = s.max(i32::MIN as f32).min(BELOW_2_31);
    // SAFETY: `clamped` is not NaN and lies in -2^31..=2^31 - 128, all of which i32 holds.
    let v = unsafe { clamped.to_int_unchecked::<i32>() };
    if s.is_nan() {
        0
    } else if s > BELOW_2_31 {
        i32::MAX
    } else {
        v
    }
}

/// `value(parameters(c), sum)` for every f32 sum of `acc` (a flex tensor), `c` its index along
/// dim `channel`, in one vectorised pass; `None` when `acc` is not such a tensor or a parameter
/// count of `counts` is neither 1 nor the channels'.
#[inline(always)]
fn per_channel<const D: usize, P: Copy, T: Copy + Default>(
    acc: &Tensor<D>,
    channel: usize,
    counts: &[usize],
    parameters: impl Fn(usize) -> P,
    value: impl Fn(P, f32) -> T,
) -> Option<Vec<T>> {
    let dims = acc.dims();
    let inner: usize = dims.get(channel + 1..)?.iter().product();
    if counts.iter().any(|&count| count != 1 && count != dims[channel]) {
        return None;
    }
    let t = take(acc.clone()).ok()?;
    let sums = t.as_slice::<f32>()?;
    let mut out = vec![T::default(); sums.len()];
    super::vectorised(
        #[inline(always)]
        || {
            for (c, (sums, out)) in sums.chunks(inner.max(1)).zip(out.chunks_mut(inner.max(1))).enumerate() {
                let p = parameters(c);
                out.iter_mut().zip(sums).for_each(|(o, &s)| *o = value(p, s));
            }
        },
    );
    Some(out)
}

/// ConvInteger's 2-D convolution: `x` (`[n, c, h, w]`, the input less its zero point) with `w`
/// (`[o, c / groups, kh, kw]`, the weight less its zero point), exact in 32 bits, as f32. Per
/// image and group one integer product: the weight's rows on the left, the input's im2col
/// columns packed on the right (padding is 0, the zero point's own value), so the result comes
/// out as the output's planes. `None` when the values do not fit the product.
pub fn integer_conv2d(x: &Tensor<4>, w: &Tensor<4>, options: &ConvOptions<2>) -> Option<Tensor<4>> {
    let [batch, channels, height, width] = x.dims();
    let [out_channels, group_channels, kh, kw] = w.dims();
    let groups = options.groups;
    if groups == 0 || channels != group_channels * groups || out_channels % groups != 0 {
        return None;
    }
    let window =
        Window { kernel: [kh, kw], strides: options.stride, pads: options.padding, dilations: options.dilation };
    let (oh, ow) = (window.out_dim(height, 0)?, window.out_dim(width, 1)?);
    // Read in place (a copy only of a strided view).
    let x = take(x.clone()).ok()?;
    let x = x.as_slice::<f32>()?;
    // The input's values and the padding's 0 in one signed byte each. With 0 the span stays within
    // 255: the values lie in -255..=255, so 0 is at most 255 from the farthest of them.
    let (low, high) = integer_range_of(x)?;
    let (low, high) = (low.min(0), high.max(0));
    let offset = signed_offset(low, high);
    let (depth, per_group, pixels) = (group_channels * kh * kw, out_channels / groups, oh * ow);
    // The weight (a model's constant) read into rows once while its storage lives.
    let weights = CONV_ROWS.get(w, Making::ConvRows(groups), |w| {
        (0..groups).map(|g| RowsOfA::new(&w[g * per_group * depth..][..per_group * depth], per_group, depth)).collect()
    })?;
    // Each input value as its byte once: im2col reads every value kh · kw times (a conversion
    // per read was a ninth of `common_old`'s time at 3 × 3), and copies bytes.
    let bytes: Vec<i8> = super::vectorised(
        #[inline(always)]
        || x.iter().map(|&v| (saturating_i32(v) - offset) as i8).collect(),
    );
    let padding = (-offset) as i8;
    let mut out = vec![0f32; batch * out_channels * pixels];
    let mut sums = vec![0i32; per_group * pixels];
    for image in 0..batch {
        for (g, weights) in weights.iter().enumerate() {
            let first_plane = image * channels + g * group_channels;
            let columns = PackedB::from_rows(depth, pixels, offset, |p, first, segment| {
                let (c, ky, kx) = (p / (kh * kw), p / kw % kh, p % kw);
                let plane = &bytes[(first_plane + c) * height * width..][..height * width];
                im2col_segment(plane, (height, width), (ky, kx), &window, padding, (ow, first), segment);
            })?;
            gemm(weights, &columns, &mut sums);
            let planes = &mut out[(image * out_channels + g * per_group) * pixels..][..per_group * pixels];
            for (o, &s) in planes.iter_mut().zip(&sums) {
                *o = s as f32;
            }
        }
    }
    Some(from_vec(out, [batch, out_channels, oh, ow]))
}

/// Columns `first..first + out.len()` of one row of the im2col matrix: kernel tap `(ky, kx)` of
/// the plane of bytes `plane` under those output positions (`ow` per output row), `padding`
/// where the tap reads outside it.
fn im2col_segment(
    plane: &[i8],
    (height, width): (usize, usize),
    (ky, kx): (usize, usize),
    window: &Window,
    padding: i8,
    (ow, first): (usize, usize),
    out: &mut [i8],
) {
    let ([sy, sx], [dy, dx]) = (window.strides, window.dilations);
    let ((top, _), (left, _)) = (window.pads[0], window.pads[1]);
    // The output columns whose input column lies inside the row: a run read as one loop.
    let (inside, end) = super::valid_columns(kx * dx, left, sx, width, ow);
    let (mut position, mut out) = (first, out);
    while !out.is_empty() {
        // The part of output row `oy` in the segment, from column `ox0`.
        let (oy, ox0) = (position / ow, position % ow);
        let len = (ow - ox0).min(out.len());
        let (part, rest) = std::mem::take(&mut out).split_at_mut(len);
        match (oy * sy + ky * dy).checked_sub(top).filter(|&iy| iy < height) {
            None => part.fill(padding),
            Some(iy) => {
                let source = &plane[iy * width..][..width];
                let (a, b) = (inside.clamp(ox0, ox0 + len) - ox0, end.clamp(ox0, ox0 + len) - ox0);
                part[..a].fill(padding);
                part[b.max(a)..].fill(padding);
                if a < b {
                    let start = (ox0 + a) * sx + kx * dx - left;
                    if sx == 1 {
                        part[a..b].copy_from_slice(&source[start..][..b - a]);
                    } else {
                        part[a..b].iter_mut().zip(source[start..].iter().step_by(sx)).for_each(|(o, &v)| *o = v);
                    }
                }
            }
        }
        position += part.len();
        out = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::floats;

    /// The vectorisable cast is `as`'s, at the edges of i32 and past them.
    #[test]
    fn saturating_i32_is_the_as_cast() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1e9,
            -1e9,
            2_147_483_520.0,
            2_147_483_648.0,
            -2_147_483_648.0,
            -2_147_483_904.0,
            3e9,
            -3e9,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        for s in edges.into_iter().chain(integers(100, -300, 300, 7)) {
            assert_eq!(saturating_i32(s), s as i32, "{s}");
        }
    }

    /// Integer values from `low` to `high`, spread by a fixed pattern.
    fn integers(len: usize, low: i32, high: i32, seed: usize) -> Vec<f32> {
        let span = (high - low + 1) as usize;
        (0..len).map(|i| (low + ((i * 7919 + seed * 104_729) % span) as i32) as f32).collect()
    }

    fn data<const D: usize>(t: Tensor<D>) -> Vec<f32> {
        t.into_data().try_to_vec::<f32>().expect("f32")
    }

    /// The integer convolution gives Burn's f32 convolution's values (exact there: the sums
    /// stay under 2^24) for strides, dilations, asymmetric pads, groups, an im2col packed in
    /// several blocks, and zero-point-like ranges on either side of 0.
    #[test]
    fn integer_convolution_matches_the_float_one() {
        let cases: [([usize; 4], [usize; 4], ConvOptions<2>); 5] = [
            ([1, 3, 9, 11], [8, 3, 3, 3], ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], 1)),
            // 3,720 output positions: the im2col is packed in two blocks, split inside a row.
            ([1, 3, 62, 60], [4, 3, 3, 3], ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], 1)),
            ([2, 4, 10, 7], [6, 2, 3, 2], ConvOptions::new_with_padding([2, 1], [(0, 2), (1, 0)], [1, 2], 2)),
            ([1, 5, 6, 6], [17, 5, 1, 1], ConvOptions::new_with_padding([1, 1], [(0, 0), (0, 0)], [1, 1], 1)),
            ([1, 4, 8, 8], [4, 1, 3, 3], ConvOptions::new_with_padding([2, 2], [(1, 1), (1, 1)], [1, 1], 4)),
        ];
        for (seed, (xs, ws, options)) in cases.into_iter().enumerate() {
            for ((xl, xh), (wl, wh)) in [((-128, 127), (-127, 127)), ((-30, 225), (0, 255)), ((-255, 0), (-200, 55))] {
                let x = floats(&integers(xs.iter().product(), xl, xh, seed), xs);
                let w = floats(&integers(ws.iter().product(), wl, wh, seed + 1), ws);
                let expected = burn::tensor::module::conv2d(x.clone(), w.clone(), None, options.clone());
                let actual = integer_conv2d(&x, &w, &options).expect("fits the integer product");
                assert_eq!(actual.dims(), expected.dims());
                assert_eq!(data(actual), data(expected), "case {seed}, x in {xl}..={xh}, w in {wl}..={wh}");
            }
        }
    }

    /// A constant B is packed once and found again by its storage; a new tensor of other
    /// values is not taken for it.
    #[test]
    fn constant_products_follow_the_weight() {
        let a = floats(&integers(6 * 10, 0, 255, 3), [6, 10]);
        let b = floats(&integers(10 * 20, -128, 127, 4), [10, 20]);
        let expected = data(a.clone().matmul(b.clone()));
        for _ in 0..2 {
            assert_eq!(data(integer_matmul_constant(&a, &b).expect("fits")), expected);
        }
        let other = b.clone().neg();
        assert_eq!(data(integer_matmul_constant(&a, &other).expect("fits")), data(a.clone().matmul(other)));
        assert_eq!(data(integer_matmul(&a, &b).expect("fits")), expected);
        // The same storage read as Bᵀ is another packing, not the one above.
        let w = b.clone().transpose().into_data();
        let w = Tensor::<2>::from_data(w, &crate::test_util::device());
        for _ in 0..2 {
            assert_eq!(data(integer_matmul_constant_transposed(&a, &w).expect("fits")), expected);
        }
        let square = floats(&integers(10 * 10, -128, 127, 5), [10, 10]);
        let a10 = a.clone().narrow(1, 0, 10);
        assert_eq!(
            data(integer_matmul_constant_transposed(&a10, &square).expect("fits")),
            data(a10.clone().matmul(square.clone().transpose()))
        );
        assert_eq!(data(integer_matmul_constant(&a10, &square).expect("fits")), data(a10.matmul(square)));
    }
}
