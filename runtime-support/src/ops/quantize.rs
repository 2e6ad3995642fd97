//! Quantization: blocked parameters, the integer products' operands and their requantization.

use super::*;
use burn::tensor::ops::ConvOptions;

/// Blocked quantization's scale or zero point (ONNX `block_size`): each value along `axis`
/// repeated `block_size` times, cut to `len` (the quantized tensor's length there).
pub fn repeat_blocks<const D: usize>(param: Tensor<D>, axis: usize, block_size: usize, len: usize) -> Tensor<D> {
    let indices = Tensor::<1, Int>::arange(0..len as i64, &param.device()).div_scalar(block_size as i64);
    param.select(axis, indices)
}

/// MatMulInteger's product with a constant B: `a` (`[.., m, k]`, A's values less its zero
/// point, as floats) times `b` (`[k, n]`, a field of the model: the weight less its zero
/// point). On flex, exact in 32-bit integers through the u8 × s8 product, B packed on the
/// first call and kept while the field lives; elsewhere Burn's f32 product (exact while the
/// sums stay under 2^24).
pub fn integer_matmul<const D: usize>(a: Tensor<D>, b: Tensor<2>) -> Tensor<D> {
    let dims = a.dims();
    let (k, n) = (dims[D - 1], b.dims()[1]);
    let rows = dims[..D - 1].iter().product::<usize>();
    let flat: Tensor<2> = a.clone().reshape([rows, k]);
    if let Some(product) = crate::kernels::integer_matmul_constant(flat, &b) {
        let mut out = dims;
        out[D - 1] = n;
        return product.reshape(out);
    }
    a.matmul(b.unsqueeze::<D>())
}

/// A quantized product's operand: the int values `x` less their zero point, as f32 (one pass on
/// flex for a single zero point; Burn's conversion and subtraction otherwise).
pub fn minus_zero_point<const D: usize>(x: Tensor<D, Int>, zero: Tensor<D>) -> Tensor<D> {
    if let Some(y) = crate::kernels::int_minus(&x, &zero) {
        return y;
    }
    x.float().sub(zero)
}

/// QuantizeLinear then DequantizeLinear with the same `scale` and `zero` (QDQ's fake
/// quantization): `x / scale` rounded to even, plus `zero`, saturated to `range`, less `zero`,
/// times `scale`, with the integers' own rule for NaN (0). One vectorised pass on flex for a
/// single scale and zero point; elsewhere Burn's ops, the same ones the two nodes make.
pub fn fake_quantize<const D: usize>(
    x: Tensor<D>,
    scale: Tensor<D>,
    zero: Option<Tensor<D>>,
    range: (f32, f32),
) -> Tensor<D> {
    if let Some(y) = crate::kernels::fake_quantize(&x, &scale, zero.as_ref(), range) {
        return y;
    }
    fake_quantize_by_ops(x, scale, zero, range)
}

/// [`fake_quantize`] by one scale and zero point known when the model was generated.
pub fn fake_quantize_per_tensor<const D: usize>(x: Tensor<D>, scale: f32, zero: f32, range: (f32, f32)) -> Tensor<D> {
    if let Some(y) = crate::kernels::fake_quantize_per_tensor(&x, scale, zero, range) {
        return y;
    }
    let (device, dtype) = (x.device(), x.dtype());
    let scalar =
        |v: f32| Tensor::<1>::from_data(TensorData::new(alloc::vec![v], [1]), (&device, dtype)).reshape([1; D]);
    fake_quantize_by_ops(x, scalar(scale), Some(scalar(zero)), range)
}

/// [`fake_quantize`] as Burn's ops make it: the QuantizeLinear and DequantizeLinear ops.
fn fake_quantize_by_ops<const D: usize>(
    x: Tensor<D>,
    scale: Tensor<D>,
    zero: Option<Tensor<D>>,
    range: (f32, f32),
) -> Tensor<D> {
    let q = x.div(scale.clone()).round();
    let q = match &zero {
        Some(z) => q.add(z.clone()),
        None => q,
    };
    let q = q.clamp(range.0, range.1).int().float();
    let q = match zero {
        Some(z) => q.sub(z),
        None => q,
    };
    q.mul(scale)
}

/// ConvInteger's 2-D convolution: `x`'s quantized values less `zero` (one value; none is 0)
/// convolved with `weight` (the weight less its zero point, a field of the model), the exact
/// sums as f32. On flex, up to 258 terms a sum, the f32 convolution of the values less the zero
/// point (exact: every partial sum is an integer under 2^24); past that the values read once
/// into bytes and summed in 32 bits by the u8 × s8 product. Elsewhere Burn's f32 convolution
/// (exact while the sums stay under 2^24).
pub fn integer_conv2d(
    x: Tensor<4, Int>,
    zero: Option<Tensor<1>>,
    weight: Tensor<4>,
    options: ConvOptions<2>,
) -> Tensor<4> {
    let zero = zero.unwrap_or_else(|| Tensor::zeros([1], &x.device()));
    if let Some(y) = crate::kernels::integer_conv2d(&x, &zero, &weight, &options) {
        return y;
    }
    let x = minus_zero_point(x, zero.unsqueeze_dims::<4>(&[0, 2, 3]));
    crate::kernels::conv2d(x, weight, None, options, crate::kernels::ConvActivation::None)
}

/// QLinearConv (2-D): [`integer_conv2d`]'s sums requantized by `r`, as ONNX Runtime computes
/// them (the bias added to the 32-bit sums). On flex the sums are requantized in one pass into
/// the output's integers; elsewhere by Burn's ops.
pub fn qlinear_conv2d(
    x: Tensor<4, Int>,
    zero: Tensor<1>,
    weight: Tensor<4>,
    options: ConvOptions<2>,
    r: Requantization,
) -> Tensor<4, Int> {
    if let Some(y) = crate::kernels::qlinear_conv2d(&x, &zero, &weight, &options, &r) {
        return y;
    }
    let per_channel = |t: Tensor<1>| t.unsqueeze_dims::<4>(&[0, 2, 3]);
    let sums = integer_conv2d(x, Some(zero), weight, options);
    let sums = match r.bias {
        Some(bias) => sums.add(per_channel(bias.float())),
        None => sums,
    };
    requantize(sums, per_channel(r.scale), per_channel(r.zero), r.range)
}

/// QLinearConv's and QLinearMatMul's requantization: the f32 integer sums `acc` times `scale`
/// (one value, or one per output channel or column), rounded to even, plus `zero`, saturated to
/// `range` (the output type's), as ONNX Runtime computes it. One vectorised pass on flex;
/// Burn's ops elsewhere.
pub fn requantize<const D: usize>(
    acc: Tensor<D>,
    scale: Tensor<D>,
    zero: Tensor<D>,
    range: (f32, f32),
) -> Tensor<D, Int> {
    if let Some(y) = crate::kernels::requantize(&acc, &scale, &zero, range) {
        return y;
    }
    acc.mul(scale).round().add(zero).clamp(range.0, range.1).int()
}

/// ONNX Runtime's QLinearAdd of two quantized tensors of one shape (their integer values):
/// each pair requantized by [`QLinearAddition::sum`]. One vectorised pass on flex; elsewhere the
/// values are read back and computed on the host (Burn has no fused multiply-add op).
pub fn qlinear_add<const D: usize>(a: Tensor<D, Int>, b: Tensor<D, Int>, p: QLinearAddition) -> Tensor<D, Int> {
    if let Some(y) = crate::kernels::qlinear_add(&a, &b, &p) {
        return y;
    }
    qlinear_add_on_host(a, b, p)
}

/// [`qlinear_add`] on the values read back.
fn qlinear_add_on_host<const D: usize>(a: Tensor<D, Int>, b: Tensor<D, Int>, p: QLinearAddition) -> Tensor<D, Int> {
    let (shape, device) = (a.shape(), a.device());
    let (a, b) = (a.into_data(), b.into_data());
    let sums: alloc::vec::Vec<i32> = a.iter::<f32>().zip(b.iter::<f32>()).map(|(a, b)| p.sum(a, b)).collect();
    Tensor::from_data(TensorData::new(sums, shape), &device)
}

/// Dynamic quantization's dequantization of an integer product's sums (ConvInteger or
/// MatMulInteger, an int32 bias Add, a Cast to float and a Mul by the scales' product, fused at
/// import): `acc` (the f32 sums) as int32, plus `bias` wrapping to 32 bits, as f32, times
/// `scale`, as ONNX Runtime computes them. One vectorised pass on flex; Burn's ops elsewhere.
pub fn dequantize_sums<const D: usize>(acc: Tensor<D>, bias: Option<Tensor<D, Int>>, scale: Tensor<D>) -> Tensor<D> {
    if let Some(y) = crate::kernels::dequantize_sums(&acc, bias.as_ref(), &scale) {
        return y;
    }
    let sums = acc.int();
    let sums = match bias {
        Some(bias) => wrap_int(sums.add(bias), 32, true),
        None => sums,
    };
    sums.float().mul(scale)
}

/// DynamicQuantizeLinear: `x` as uint8 values (`Int`), with the scale and zero point made from
/// its range as ONNX Runtime makes them (the range widened to hold 0, over 255; 1 for an
/// empty range; the zero point `-min / scale` rounded to even, the values `round(x / scale) +
/// zero` clamped to 0..=255). On flex one pass finds the range and one quantizes; elsewhere
/// Burn's tensor ops do the same steps.
pub fn dynamic_quantize_linear<const D: usize>(x: Tensor<D>) -> (Tensor<D, Int>, Tensor<1>, Tensor<1, Int>) {
    let device = x.device();
    if let Some((bytes, scale, zero)) = crate::kernels::quantize_u8_tensor(&x) {
        let shape = x.shape();
        let values: alloc::vec::Vec<i32> = bytes.into_iter().map(i32::from).collect();
        let y = Tensor::<D, Int>::from_data(TensorData::new(values, shape), &device);
        let scale = Tensor::<1>::from_data(TensorData::new(alloc::vec![scale], [1]), (&device, x.dtype()));
        return (y, scale, Tensor::<1, Int>::from_ints([zero as i32], &device));
    }
    let low = x.clone().min().clamp_max(0.0);
    let high = x.clone().max().clamp_min(0.0);
    // An empty range (all zeros) has scale 1, as in ONNX Runtime (ONNX's formula divides by 0).
    let range = high.sub(low.clone());
    let scale = range.clone().div_scalar(255.0).mask_fill(range.equal_elem(0.0), 1.0);
    let zero = low.neg().div(scale.clone()).round().clamp(0.0, 255.0);
    let y = x.div(scale.clone().unsqueeze::<D>()).round().add(zero.clone().unsqueeze::<D>()).clamp(0.0, 255.0).int();
    (y, scale, zero.int())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::ints;

    /// QLinearAdd's host path (every backend but flex) gives the flex kernel's values, ties and
    /// saturation included.
    #[test]
    fn qlinear_add_on_the_host_is_the_kernels() {
        let a: alloc::vec::Vec<i64> = (0..300).map(|i| (i * 37) % 256).collect();
        let b: alloc::vec::Vec<i64> = (0..300).map(|i| (i * 101 + 7) % 256).collect();
        let p = QLinearAddition { ratio_a: 0.5, ratio_b: 0.05 / 0.07, offset: -3.25, range: (0.0, 255.0) };
        let (a, b) = (ints(&a, [3, 100]), ints(&b, [3, 100]));
        let host = qlinear_add_on_host(a.clone(), b.clone(), p).into_data();
        let kernel = crate::kernels::qlinear_add(&a, &b, &p).expect("flex takes two int tensors");
        host.assert_eq(&kernel.into_data(), true);
    }
}
