//! Integer products of quantized models on flex tensors: MatMulInteger's product with a constant
//! weight (packed once, kept while the weight lives), a product of two run-time matrices, the
//! integer convolution and QLinear's requantization. The values arrive as integer-valued f32 (quantized
//! values less their zero points) and leave as f32 of the exact 32-bit sums.

use super::constant::{ConstantCache, Making};
use super::{from_vec, take, values};
use crate::kernels::igemm::{gemm, signed_offset, PackedB, RowsOfA};
use crate::kernels::{QLinearAddition, Window, F32_EXACT_TERMS};
use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::{BackendTensor, DispatchAutodiffContext, DispatchTensor, DispatchTensorKind};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Bytes, DType, Int, Shape, Tensor};
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

/// The values of an i32 or i64 flex tensor (a strided view is not one), read in place.
enum IntValues<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

/// `f` of the values of an int flex tensor outside autodiff; `None` for other tensors.
fn with_ints<const D: usize, R>(x: &Tensor<D, Int>, f: impl FnOnce(IntValues) -> R) -> Option<R> {
    if !super::ENABLED.load(core::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let DispatchTensor { kind: DispatchTensorKind::Flex(BackendTensor::Int(t)), .. } = x.clone().into_dispatch() else {
        return None;
    };
    Some(match t.dtype() {
        DType::I32 => f(IntValues::I32(t.as_slice::<i32>()?)),
        DType::I64 => f(IntValues::I64(t.as_slice::<i64>()?)),
        _ => return None,
    })
}

/// An int flex tensor of the device's integer type holding `values` (no copy where that type
/// is i32).
fn int_tensor<const D: usize>(values: Vec<i32>, shape: [usize; D], device: &burn::tensor::Device) -> Tensor<D, Int> {
    if device.settings().int_dtype != burn::tensor::IntDType::I32 {
        return Tensor::from_data(burn::tensor::TensorData::new(values, shape), device);
    }
    let t = FlexTensor::new(Bytes::from_elems(values), Layout::contiguous(Shape::from(shape)), DType::I32);
    Tensor::from_dispatch(DispatchTensor {
        kind: DispatchTensorKind::Flex(BackendTensor::Int(t)),
        autodiff: DispatchAutodiffContext::Disabled,
    })
}

/// An i32 or i64 flex tensor of quantized values less one zero point, as f32 (`v as f32 - zero`,
/// what Burn's conversion then subtraction compute): one pass where those ops made two. `None`
/// for other tensors (a strided view included).
pub fn int_minus<const D: usize>(x: &Tensor<D, Int>, zero: f32) -> Option<Tensor<D>> {
    let values: Vec<f32> = with_ints(x, |values| match values {
        IntValues::I32(v) => v.iter().map(|&v| v as f32 - zero).collect(),
        IntValues::I64(v) => v.iter().map(|&v| v as f32 - zero).collect(),
    })?;
    Some(from_vec(values, x.dims()))
}

/// QLinearAdd of two int flex tensors of one shape and integer type (see [`QLinearAddition`]):
/// one vectorised pass. `None` for other tensors.
pub fn qlinear_add<const D: usize>(
    a: &Tensor<D, Int>,
    b: &Tensor<D, Int>,
    p: &QLinearAddition,
) -> Option<Tensor<D, Int>> {
    if a.dims() != b.dims() {
        return None;
    }
    let values = with_ints(a, |a| {
        with_ints(b, |b| match (a, b) {
            (IntValues::I32(a), IntValues::I32(b)) => Some(requantized_sums(a, b, p)),
            (IntValues::I64(a), IntValues::I64(b)) => Some(requantized_sums(a, b, p)),
            _ => None,
        })
    })???;
    Some(int_tensor(values, a.dims(), &a.device()))
}

/// An int flex tensor's element as f32 (`as`), inlined where the vectorised loops call it.
trait AsF32: Copy {
    fn as_f32(self) -> f32;
}

impl AsF32 for i32 {
    #[inline(always)]
    fn as_f32(self) -> f32 {
        self as f32
    }
}

impl AsF32 for i64 {
    #[inline(always)]
    fn as_f32(self) -> f32 {
        self as f32
    }
}

/// `p.sum` of each pair of `a` and `b` (8-bit values). A plain loop in the vectorised closure:
/// a closure passed to `map` was compiled out of line, without FMA, its `mul_add` a call to
/// the software `fmaf` (4% of a QOperator ResNet's forward).
#[inline(always)]
fn requantized_sums<T: AsF32>(a: &[T], b: &[T], p: &QLinearAddition) -> Vec<i32> {
    super::vectorised(
        #[inline(always)]
        || {
            let mut out = vec![0; a.len().min(b.len())];
            for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
                *o = p.sum(a.as_f32(), b.as_f32());
            }
            out
        },
    )
}

/// QDQ's fake quantization of an f32 flex tensor in one vectorised pass, as Burn's ops make it
/// (`x / scale` rounded to even, plus `zero`, clamped to `lo..=hi`, as an integer, less `zero`,
/// times `scale`): NaN becomes the integer 0, as the conversion makes it. `None` for other
/// tensors.
pub fn fake_quantize<const D: usize>(x: &Tensor<D>, scale: f32, zero: f32, (lo, hi): (f32, f32)) -> Option<Tensor<D>> {
    let values = super::with_values(x, |values| {
        super::vectorised(
            #[inline(always)]
            || {
                values
                    .iter()
                    .map(|&v| {
                        let q = (v / scale).round_ties_even() + zero;
                        // Selects, which vectorise (an `else if` chain stayed a branch per value);
                        // NaN fails both comparisons and is then made 0.
                        let low = if q < lo { lo } else { q };
                        let clamped = if low > hi { hi } else { low };
                        let q = if q.is_nan() { 0.0 } else { clamped };
                        (q - zero) * scale
                    })
                    .collect()
            },
        )
    })?;
    Some(from_vec(values, x.dims()))
}

/// QLinear*'s requantization of 32-bit sums: each times its scale (one, or one per index of the
/// channel dim), rounded to even, plus the output's zero point, saturated to the output type's
/// range, as ONNX Runtime computes it.
pub struct Requantizer<'a> {
    pub scales: &'a [f32],
    pub zero: f32,
    pub range: (f32, f32),
}

impl Requantizer<'_> {
    /// The range less the zero point, where it clamps before the rounding (the same integers as
    /// clamping after it, both bounds being integers); `None` where the range or zero point lie
    /// past ±2^24, where f32 no longer holds every integer.
    fn shifted_range(&self) -> Option<(f32, f32)> {
        const EXACT: f32 = (1 << 24) as f32;
        let (lo, hi) = self.range;
        [lo, hi, self.zero].iter().all(|v| (-EXACT..=EXACT).contains(v)).then_some((lo - self.zero, hi - self.zero))
    }

    /// The requantized value of sum `s` under `scale`, `shifted` the [`Self::shifted_range`].
    #[inline(always)]
    fn value(&self, shifted: (f32, f32), scale: f32, s: f32) -> i32 {
        let v = s * scale;
        // Comparisons, which vectorise (`f32::max` stays scalar); NaN fails the first and
        // becomes the low bound: always a finite value in range.
        let v = if v >= shifted.0 { v } else { shifted.0 };
        let v = if v <= shifted.1 { v } else { shifted.1 };
        // SAFETY: an integer within the range, which lies in ±2^24 (`shifted_range`).
        unsafe { (v.round_ties_even() + self.zero).to_int_unchecked::<i32>() }
    }
}

/// QLinearMatMul's requantization of the f32 sums in `acc` (a flex tensor), the scales along dim
/// `channel`: one vectorised pass where Burn's ops made five.
pub fn requantize<const D: usize>(acc: &Tensor<D>, channel: usize, r: &Requantizer) -> Option<Tensor<D, Int>> {
    let shifted = r.shifted_range()?;
    let scales = r.scales;
    let values = per_channel(
        acc,
        channel,
        &[scales.len()],
        |c| scales[c % scales.len()],
        |scale, s| r.value(shifted, scale, s),
    )?;
    Some(int_tensor(values, acc.dims(), &acc.device()))
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
    Some(per_run(t.as_slice::<f32>()?, inner, parameters, value))
}

/// `value(parameters(c), sum)` for every sum of `sums`, `c` the index of its run of `inner`
/// values, in one vectorised pass.
#[inline(always)]
fn per_run<S: Copy, P: Copy, T: Copy + Default>(
    sums: &[S],
    inner: usize,
    parameters: impl Fn(usize) -> P,
    value: impl Fn(P, S) -> T,
) -> Vec<T> {
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
    out
}

/// A quantized input less its zero point as signed bytes, each value its byte plus `offset`.
struct ShiftedBytes {
    bytes: Vec<i8>,
    offset: i32,
}

impl ShiftedBytes {
    /// The values of an int flex tensor less `zero`, when they and 0 (the padding's value, the
    /// zero point's own) lie in -255..=255 within a span of 255; `None` otherwise.
    fn of<const D: usize>(x: &Tensor<D, Int>, zero: i32) -> Option<Self> {
        with_ints(x, |values| match values {
            IntValues::I32(v) => Self::of_values(v, zero),
            IntValues::I64(v) => Self::of_values(v, zero),
        })?
    }

    fn of_values<T: Copy + Ord + Into<i64>>(values: &[T], zero: i32) -> Option<Self> {
        let Some(&first) = values.first() else { return Some(Self { bytes: Vec::new(), offset: 0 }) };
        let (low, high) = super::vectorised(
            #[inline(always)]
            || values.iter().fold((first, first), |(low, high), &v| (low.min(v), high.max(v))),
        );
        let zero = i64::from(zero);
        let (low, high) = (low.into().saturating_sub(zero), high.into().saturating_sub(zero));
        let (low, high) = (low.min(0), high.max(0));
        if low < -255 || high > 255 || high - low > 255 {
            return None;
        }
        let offset = signed_offset(low as i32, high as i32);
        // Every value lies within 255 of `zero`, an i32: the narrowing keeps it.
        let shift = zero as i32 + offset;
        let bytes = super::vectorised(
            #[inline(always)]
            || values.iter().map(|&v| (v.into() as i32).wrapping_sub(shift) as i8).collect(),
        );
        Some(Self { bytes, offset })
    }
}

/// The exact sums of a quantized convolution, row-major: 32-bit integers, or integer-valued
/// f32 from the float kernel.
enum Sums {
    Integers(Vec<i32>, [usize; 4]),
    Floats(Box<Tensor<4>>),
}

/// ConvInteger's 2-D convolution on flex: `x` (`[n, c, h, w]`, quantized values) less `zero`
/// convolved with `w` (`[o, c / groups, kh, kw]`, the weight less its zero point), the exact
/// 32-bit sums as f32. `None` where the values do not fit the integer kernels.
pub fn integer_conv2d(x: &Tensor<4, Int>, zero: i32, w: &Tensor<4>, options: &ConvOptions<2>) -> Option<Tensor<4>> {
    Some(match conv_sums(x, zero, w, options)? {
        Sums::Integers(sums, dims) => from_vec(
            super::vectorised(
                #[inline(always)]
                || sums.iter().map(|&s| s as f32).collect(),
            ),
            dims,
        ),
        Sums::Floats(sums) => *sums,
    })
}

/// QLinearConv (2-D) on flex: [`integer_conv2d`]'s sums plus the int32 `biases` (one, or one per
/// output channel) requantized by `r` (scales likewise) in one pass, the bias added in 32 bits
/// before the conversion to f32, as ONNX Runtime adds it.
pub fn qlinear_conv2d(
    x: &Tensor<4, Int>,
    zero: i32,
    w: &Tensor<4>,
    options: &ConvOptions<2>,
    biases: &[i32],
    r: &Requantizer,
) -> Option<Tensor<4, Int>> {
    let channels = w.dims()[0];
    let fits = |count: usize| count == 1 || count == channels;
    if !fits(biases.len()) || !fits(r.scales.len()) {
        return None;
    }
    let shifted = r.shifted_range()?;
    // Run `c` of the sums is output channel `c % channels`.
    let parameters = |c: usize| (biases[c % biases.len()], r.scales[c % r.scales.len()]);
    let value = |(bias, scale): (i32, f32), s: i32| r.value(shifted, scale, s.wrapping_add(bias) as f32);
    let (values, dims) = match conv_sums(x, zero, w, options)? {
        Sums::Integers(sums, dims) => (per_run(&sums, dims[2] * dims[3], parameters, value), dims),
        Sums::Floats(sums) => {
            let dims = sums.dims();
            let t = take(*sums).ok()?;
            let sums = t.as_slice::<f32>()?;
            (per_run(sums, dims[2] * dims[3], parameters, |p, s: f32| value(p, saturating_i32(s))), dims)
        }
    };
    Some(int_tensor(values, dims, &x.device()))
}

/// The exact sums of `x` less `zero` convolved with `w` (see [`integer_conv2d`]). Up to 258
/// terms per sum (depthwise, pointwise and first layers) the f32 kernel: exact, every partial
/// sum being an integer under 2^24, and faster there than packing bytes (a depthwise
/// convolution is a product of one row per group). Deeper ones [`integer_sums`].
fn conv_sums(x: &Tensor<4, Int>, zero: i32, w: &Tensor<4>, options: &ConvOptions<2>) -> Option<Sums> {
    let [_, group_channels, kh, kw] = w.dims();
    // (The integer product also where the f32 kernel is not built for this CPU.)
    if group_channels * kh * kw > F32_EXACT_TERMS || !crate::kernels::gemm::available() {
        return integer_sums(x, zero, w, options);
    }
    let x = int_minus(x, zero as f32)?;
    super::conv2d((x, w.clone(), None, None), options, crate::kernels::ConvActivation::None)
        .ok()
        .map(|sums| Sums::Floats(Box::new(sums)))
}

/// [`conv_sums`] in 32-bit integers. Per image and group one integer product: the weight's rows
/// on the left, the input's im2col columns packed on the right (padding is 0, the zero point's
/// own value), so the result comes out as the output's planes.
fn integer_sums(x: &Tensor<4, Int>, zero: i32, w: &Tensor<4>, options: &ConvOptions<2>) -> Option<Sums> {
    let [batch, channels, height, width] = x.dims();
    let [out_channels, group_channels, kh, kw] = w.dims();
    let groups = options.groups;
    if groups == 0 || channels != group_channels * groups || out_channels % groups != 0 {
        return None;
    }
    let window =
        Window { kernel: [kh, kw], strides: options.stride, pads: options.padding, dilations: options.dilation };
    let (oh, ow) = (window.out_dim(height, 0)?, window.out_dim(width, 1)?);
    let (depth, per_group, pixels) = (group_channels * kh * kw, out_channels / groups, oh * ow);
    let input = ShiftedBytes::of(x, zero)?;
    // The weight (a model's constant) read into rows once while its storage lives.
    let weights = CONV_ROWS.get(w, Making::ConvRows(groups), |w| {
        (0..groups).map(|g| RowsOfA::new(&w[g * per_group * depth..][..per_group * depth], per_group, depth)).collect()
    })?;
    let padding = (-input.offset) as i8;
    let mut out = vec![0i32; batch * out_channels * pixels];
    for image in 0..batch {
        for (g, weights) in weights.iter().enumerate() {
            let first_plane = image * channels + g * group_channels;
            let columns = PackedB::from_rows(depth, pixels, input.offset, |p, first, segment| {
                let (c, ky, kx) = (p / (kh * kw), p / kw % kh, p % kw);
                let plane = &input.bytes[(first_plane + c) * height * width..][..height * width];
                im2col_segment(plane, (height, width), (ky, kx), &window, padding, (ow, first), segment);
            })?;
            let planes = &mut out[(image * out_channels + g * per_group) * pixels..][..per_group * pixels];
            gemm(weights, &columns, planes);
        }
    }
    Some(Sums::Integers(out, [batch, out_channels, oh, ow]))
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

    /// Convolutions of the kernels' tests: strides, dilations, asymmetric pads, groups, an
    /// im2col packed in several blocks, a depthwise one and a deep one (over 258 terms a sum).
    fn convolutions() -> [([usize; 4], [usize; 4], ConvOptions<2>); 7] {
        [
            ([1, 3, 9, 11], [8, 3, 3, 3], ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], 1)),
            // 3,720 output positions: the im2col is packed in two blocks, split inside a row.
            ([1, 3, 62, 60], [4, 3, 3, 3], ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], 1)),
            ([2, 4, 10, 7], [6, 2, 3, 2], ConvOptions::new_with_padding([2, 1], [(0, 2), (1, 0)], [1, 2], 2)),
            ([1, 5, 6, 6], [17, 5, 1, 1], ConvOptions::new_with_padding([1, 1], [(0, 0), (0, 0)], [1, 1], 1)),
            ([1, 4, 8, 8], [4, 1, 3, 3], ConvOptions::new_with_padding([2, 2], [(1, 1), (1, 1)], [1, 1], 4)),
            ([2, 6, 7, 9], [6, 1, 3, 3], ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], 6)),
            ([1, 40, 6, 5], [5, 40, 3, 3], ConvOptions::new_with_padding([1, 1], [(1, 0), (0, 1)], [1, 1], 1)),
        ]
    }

    /// Quantized values of a tensor of `dims` (`range`), its zero point, and the values less it
    /// as f32.
    fn quantized<const D: usize>(
        dims: [usize; D],
        (low, high, zero): (i32, i32, i32),
        seed: usize,
    ) -> (Tensor<D, Int>, Tensor<D>) {
        let q = integers(dims.iter().product(), low, high, seed);
        let ints: Vec<i64> = q.iter().map(|&v| v as i64).collect();
        let less: Vec<f32> = q.iter().map(|&v| v - zero as f32).collect();
        (crate::test_util::ints(&ints, dims), floats(&less, dims))
    }

    /// QLinearAdd's vectorised pass is the scalar formula, fused multiply-adds included, in every
    /// lane and the tail: u8 values on ratios whose products are not exact, and a / 2 + b on
    /// an exact scale, where every odd `a` is a tie that rounds to even, with sums past 255.
    #[test]
    fn qlinear_add_is_the_scalar_formula() {
        let len = 1003;
        let (a, b) = (integers(len, 0, 255, 1), integers(len, 0, 255, 2));
        let tensor = |v: &[f32]| crate::test_util::ints(&v.iter().map(|&v| v as i64).collect::<Vec<_>>(), [len]);
        for (ratio_a, ratio_b, offset) in [(0.05f32 / 0.07, 0.03f32 / 0.07, 1.3f32), (0.5, 1.0, 0.0)] {
            let p = QLinearAddition { ratio_a, ratio_b, offset, range: (0.0, 255.0) };
            let y = qlinear_add(&tensor(&a), &tensor(&b), &p).expect("int flex tensors");
            let y = y.into_data().convert::<i32>().try_to_vec::<i32>().expect("ints");
            for i in 0..len {
                let v = a[i].mul_add(ratio_a, b[i].mul_add(ratio_b, offset));
                assert_eq!(y[i], v.round_ties_even().clamp(0.0, 255.0) as i32, "{i}: {} + {}", a[i], b[i]);
            }
        }
    }

    /// The integer convolution gives Burn's f32 convolution's values (exact there: the sums stay
    /// under 2^24), through the integer product itself and through the kernel each size takes,
    /// for u8 and i8 inputs whose values less their zero points lie on either side of 0.
    #[test]
    fn integer_convolution_matches_the_float_one() {
        for (seed, (xs, ws, options)) in convolutions().into_iter().enumerate() {
            for (x_range, (wl, wh)) in
                [((0, 255, 128), (-127, 127)), ((0, 255, 30), (0, 255)), ((-128, 127, 0), (-127, 127))]
                    .into_iter()
                    .chain([((0, 255, 255), (-200, 55))])
            {
                let (x, less) = quantized(xs, x_range, seed);
                let w = floats(&integers(ws.iter().product(), wl, wh, seed + 1), ws);
                let expected = data(burn::tensor::module::conv2d(less, w.clone(), None, options.clone()));
                let zero = x_range.2;
                let Some(Sums::Integers(sums, dims)) = integer_sums(&x, zero, &w, &options) else {
                    panic!("case {seed}: the integer product takes these values")
                };
                let actual: Vec<f32> = sums.iter().map(|&s| s as f32).collect();
                assert_eq!(dims.iter().product::<usize>(), expected.len());
                assert_eq!(actual, expected, "case {seed}, x {x_range:?}, w in {wl}..={wh}");
                let chosen = integer_conv2d(&x, zero, &w, &options).expect("fits the integer kernels");
                assert_eq!(data(chosen), expected, "case {seed}, x {x_range:?}, w in {wl}..={wh}: chosen kernel");
            }
        }
    }

    /// Values that no offset brings into a signed byte (a span over 255 with the padding's 0)
    /// are turned away, for Burn's convolution to take.
    #[test]
    fn values_past_a_byte_are_turned_away() {
        let options = ConvOptions::new_with_padding([1, 1], [(0, 0), (0, 0)], [1, 1], 1);
        let w = floats(&integers(5 * 40 * 9, -127, 127, 1), [5, 40, 3, 3]);
        for (low, high, zero) in [(0, 256, 0), (-1, 255, 0), (10, 300, 100), (0, 255, -1)] {
            let (x, _) = quantized([1, 40, 4, 4], (low, high, zero), 2);
            assert!(integer_conv2d(&x, zero, &w, &options).is_none(), "{low}..={high} less {zero}");
        }
    }

    /// QLinearConv's requantization, value by value as ONNX Runtime computes it: the sum plus
    /// its channel's bias in 32 bits, as f32, times the channel's scale, clamped, rounded to
    /// even, plus the zero point. Per-channel and single scales and biases, none, outputs that
    /// saturate at both ends, u8 and i8 outputs, every kernel.
    #[test]
    fn qlinear_convolution_requantizes_as_onnx_runtime() {
        /// Biases, scales, the output's zero point and range.
        type Case<'a> = (&'a [i32], &'a [f32], f32, (f32, f32));
        let (mut at_low, mut at_high) = (0, 0);
        for (seed, (xs, ws, options)) in convolutions().into_iter().enumerate() {
            let x_range = (0, 255, 120);
            let (x, less) = quantized(xs, x_range, seed);
            let w = floats(&integers(ws.iter().product(), -127, 127, seed + 3), ws);
            let sums = data(burn::tensor::module::conv2d(less, w.clone(), None, options.clone()));
            let channels = ws[0];
            let per_channel_scales: Vec<f32> = (0..channels).map(|c| 2e-4 + 1e-5 * c as f32).collect();
            let per_channel_biases: Vec<i32> = (0..channels).map(|c| (c as i32 - 3) * 1_001).collect();
            let cases: [Case; 4] = [
                (&per_channel_biases, &per_channel_scales, 128.0, (0.0, 255.0)),
                // No bias: one 0, as `kernels::qlinear_conv2d` passes it.
                (&[0], &[3e-3], 0.0, (-128.0, 127.0)),
                (&[-777], &per_channel_scales, -5.0, (-128.0, 127.0)),
                (&per_channel_biases, &[0.0123], 250.0, (0.0, 255.0)),
            ];
            for (biases, scales, zero, range) in cases {
                let plane = sums.len() / (xs[0] * channels);
                let expected: Vec<i32> = sums
                    .iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        let c = i / plane % channels;
                        let bias = biases.get(c).or(biases.first()).copied().unwrap_or(0);
                        let scale = scales.get(c).or(scales.first()).copied().unwrap_or(1.0);
                        let v = (s as i32 + bias) as f32 * scale;
                        (v.round_ties_even() + zero).clamp(range.0, range.1) as i32
                    })
                    .collect();
                let r = Requantizer { scales, zero, range };
                let actual = qlinear_conv2d(&x, x_range.2, &w, &options, biases, &r).expect("fits");
                let actual = actual.into_data().convert::<i32>().try_to_vec::<i32>().expect("ints");
                assert_eq!(actual, expected, "case {seed}, zero {zero}, biases {}", biases.len());
                let saturated = expected.iter().filter(|&&v| v as f32 == range.0 || v as f32 == range.1).count();
                assert!(saturated < expected.len(), "case {seed}: not every value saturates");
                at_low += expected.iter().filter(|&&v| v as f32 == range.0).count();
                at_high += expected.iter().filter(|&&v| v as f32 == range.1).count();
            }
        }
        assert!(at_low > 0 && at_high > 0, "outputs saturate at both ends: {at_low}, {at_high}");
    }

    /// The one-pass fake quantization gives the bits of Burn's op sequence (divide, round to
    /// even, add the zero point, clamp, to integers, back, subtract it, multiply): ties both
    /// ways, values past either end, NaN (the integer 0), infinities, signed zeros, no zero point.
    #[test]
    fn fake_quantization_is_burns_op_sequence() {
        let mut values: Vec<f32> = (-700..700).map(|i| i as f32 * 0.0125).collect();
        values.extend([f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 1e30, -1e30, 0.025, -0.025, 0.075]);
        let x = floats(&values, [values.len()]);
        for (scale, zero, range) in
            [(0.05, 128.0, (0.0, 255.0)), (0.01, 0.0, (-128.0, 127.0)), (0.003, -3.0, (-128.0, 127.0))]
        {
            let q = x.clone().div_scalar(scale).round().add_scalar(zero).clamp(range.0, range.1).int().float();
            let expected = data(q.sub_scalar(zero).mul_scalar(scale));
            let actual = data(fake_quantize(&x, scale, zero, range).expect("an f32 flex tensor"));
            let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&actual), bits(&expected), "scale {scale}, zero {zero}");
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
