//! Hand-written CPU kernels for Burn's flex backend where flex is the bottleneck: max pooling
//! without the indices flex always computes, and sigmoid / SiLU / tanh vectorised as ONNX
//! Runtime's rational functions (flex runs them one scalar `expf` / `tanhf` at a time). A
//! tensor that is not an f32 flex tensor outside autodiff (another backend, a tracked tensor, a
//! strided view) takes Burn's own op, so the generated code runs everywhere.

use alloc::vec::Vec;
use burn::tensor::ops::ConvOptions;
use burn::tensor::{activation, Tensor};

/// `1 / (1 + e^-x)`.
pub fn sigmoid<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    elementwise(x, simd::sigmoid, activation::sigmoid)
}

/// `tanh(x)`, vectorised (flex calls libm's `tanhf` per element).
pub fn tanh<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    elementwise(x, simd::tanh, Tensor::tanh)
}

/// `e^x`, vectorised.
pub fn exp<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    elementwise(x, simd::exp, Tensor::exp)
}

/// The error function, vectorised (flex calls libm's `erff` per element).
pub fn erf<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    elementwise(x, simd::erf, Tensor::erf)
}

/// GELU, `x · Φ(x)` with the exact normal CDF `½(1 + erf(x/√2))`, in one vectorised pass; for
/// negative x through erfc, without the cancellation of `1 + erf` (Burn's form).
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    elementwise(x, simd::gelu, activation::gelu)
}

/// SiLU (Swish), `x * sigmoid(x)`, in one pass.
pub fn silu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    elementwise(x, simd::silu, |x| x.clone().mul(activation::sigmoid(x)))
}

/// `kernel` over a flex tensor's elements, else Burn's op (`fallback`).
fn elementwise<const D: usize>(
    x: Tensor<D>,
    #[cfg_attr(not(feature = "flex"), allow(unused_variables))] kernel: fn(&mut [f32]),
    fallback: fn(Tensor<D>) -> Tensor<D>,
) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = match flex::map(x, kernel) {
        Ok(y) => return y,
        Err(x) => x,
    };
    fallback(x)
}

/// The mean over `axes` (each kept as size 1). Over a flex f32 tensor's trailing axes
/// (GlobalAveragePool's planes, a ReduceMean over the last axes), each run of their values is
/// summed in one vectorised pass and divided by its length; Burn reduces one axis at a time,
/// a pass with its own allocation each (a MobileNet's pooling of 1280 planes of 2×2 took 4%
/// of its forward). Elsewhere Burn's `mean_dim`, axis by axis.
pub fn mean_dims<const D: usize>(x: Tensor<D>, axes: &[usize]) -> Tensor<D> {
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    #[cfg(feature = "flex")]
    let x = {
        let first = D.saturating_sub(axes.len());
        if !axes.is_empty() && sorted.iter().enumerate().all(|(i, &a)| a == first + i) {
            match flex::mean_trailing(x, first) {
                Ok(y) => return y,
                Err(x) => x,
            }
        } else {
            x
        }
    };
    sorted.iter().fold(x, |y, &axis| y.mean_dim(axis))
}

/// 2-D max pooling over NCHW, without computing the argmax indices. NaN wins, as in flex's
/// own kernel. In ceil mode (output sizes rounded up, a window that would start in the end
/// padding left out) it is floor mode over an end padding widened to those windows, since
/// padding never wins a max (Burn's flex kernel took the path that also computes the indices).
pub fn max_pool2d(
    x: Tensor<4>,
    kernel: [usize; 2],
    strides: [usize; 2],
    pads: [(usize, usize); 2],
    dilations: [usize; 2],
    ceil_mode: bool,
) -> Tensor<4> {
    #[cfg(feature = "flex")]
    let x = {
        let [_, _, h, w] = x.dims();
        let window = Window { kernel, strides, pads, dilations };
        let mut floor = window;
        if ceil_mode {
            floor.pads = [0, 1].map(|axis| (pads[axis].0, pads[axis].1 + window.ceil_extra([h, w][axis], axis)));
        }
        match flex::max_pool2d(x, floor) {
            Ok(y) => return y,
            Err(x) => x,
        }
    };
    burn::tensor::module::max_pool2d(
        x,
        burn::tensor::ops::MaxPoolOptions::new(kernel)
            .with_stride(strides)
            .with_padding_pairs(pads)
            .with_dilation(dilations)
            .with_ceil_mode(ceil_mode),
    )
}

/// 2-D average pooling over NCHW (floor mode, no dilation): the window sum divided by the
/// window's size, or with `count_include_pad = false` by its taps inside the image.
pub fn avg_pool2d(
    x: Tensor<4>,
    kernel: [usize; 2],
    strides: [usize; 2],
    pads: [(usize, usize); 2],
    count_include_pad: bool,
) -> Tensor<4> {
    #[cfg(feature = "flex")]
    let x = match flex::avg_pool2d(x, Window { kernel, strides, pads, dilations: [1, 1] }, count_include_pad) {
        Ok(y) => return y,
        Err(x) => x,
    };
    burn::tensor::module::avg_pool2d(
        x,
        burn::tensor::ops::AvgPoolOptions::new(kernel)
            .with_stride(strides)
            .with_padding_pairs(pads)
            .with_count_include_pad(count_include_pad)
            .with_ceil_mode(false),
    )
}

/// ONNX LocalResponseNormalization across axis 1 of `x [N, C, ...]`: `x / (bias + alpha / size
/// · Σ x²)^beta`, the sum over the `size` channels around each one (`(size - 1) / 2` before,
/// `size / 2` after, missing channels counting 0). One vectorised pass on flex; Burn's ops (the
/// window sum as an average pool over channels) elsewhere.
pub fn local_response_norm<const D: usize>(x: Tensor<D>, size: usize, alpha: f64, beta: f64, bias: f64) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = match flex::local_response_norm(
        x,
        Lrn { size, scale: (alpha / size as f64) as f32, beta: beta as f32, bias: bias as f32 },
    ) {
        Ok(y) => return y,
        Err(x) => x,
    };
    let dims = x.dims();
    let (before, after) = ((size - 1) / 2, size / 2);
    let squares: Tensor<4> = x.clone().square().reshape([dims[0] as i64, 1, dims[1] as i64, -1]);
    let sums = burn::tensor::module::avg_pool2d(
        squares,
        burn::tensor::ops::AvgPoolOptions::new([size, 1])
            .with_stride([1, 1])
            .with_padding_pairs([(before, after), (0, 0)])
            .with_count_include_pad(true),
    )
    .mul_scalar(size as f64)
    .reshape(dims);
    x.div(sums.mul_scalar(alpha / size as f64).add_scalar(bias).powf_scalar(beta))
}

/// The parameters of [`local_response_norm`], `scale` being `alpha / size`.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
struct Lrn {
    size: usize,
    scale: f32,
    beta: f32,
    bias: f32,
}

/// The activation a convolution or batch normalisation applies to its result (fused by the
/// importer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConvActivation {
    /// The convolution's result as it is.
    None,
    /// `max(x, 0)`.
    Relu,
    /// `x` where positive, else `alpha · x`.
    LeakyRelu(f32),
    /// `1 / (1 + e^-x)`, as ONNX Runtime's rational approximation on flex.
    Sigmoid,
    /// `x · sigmoid(x)` (a Mul of the input by its Sigmoid, fused).
    Silu,
    /// `clamp(alpha · x + beta, 0, 1)`.
    HardSigmoid(f32, f32),
    /// `x · clamp(x / 6 + 1/2, 0, 1)`.
    HardSwish,
    /// `x` raised to the first bound, then lowered to the second (a Clip of constant bounds;
    /// ReLU6 is `Clamp(0.0, 6.0)`); NaN stays NaN.
    Clamp(f32, f32),
}

impl ConvActivation {
    /// The activation through Burn's ops, for results no kernel fused it into.
    pub fn apply<const D: usize>(self, x: Tensor<D>) -> Tensor<D> {
        match self {
            Self::None => x,
            Self::Relu => activation::relu(x),
            Self::LeakyRelu(alpha) => activation::leaky_relu(x, alpha as f64),
            Self::Sigmoid => sigmoid(x),
            Self::Silu => silu(x),
            Self::HardSigmoid(alpha, beta) => x.mul_scalar(alpha).add_scalar(beta).clamp(0.0, 1.0),
            Self::HardSwish => x.clone().mul(x.mul_scalar(1.0 / 6.0).add_scalar(0.5).clamp(0.0, 1.0)),
            Self::Clamp(min, max) => x.clamp_min(min).clamp_max(max),
        }
    }

    /// The same on a row of results (NaN stays NaN, as in Burn's ops).
    #[cfg_attr(not(feature = "flex"), allow(dead_code))]
    #[inline(always)]
    fn apply_slice(self, values: &mut [f32]) {
        match self {
            Self::None => {}
            Self::Relu => values.iter_mut().for_each(|v| *v = if *v < 0.0 { 0.0 } else { *v }),
            Self::LeakyRelu(alpha) => values.iter_mut().for_each(|v| *v = if *v < 0.0 { *v * alpha } else { *v }),
            Self::Sigmoid => simd::sigmoid(values),
            Self::Silu => simd::silu(values),
            Self::HardSigmoid(alpha, beta) => values.iter_mut().for_each(|v| *v = hard_sigmoid(*v, alpha, beta)),
            Self::HardSwish => values.iter_mut().for_each(|v| *v *= hard_sigmoid(*v, 1.0 / 6.0, 0.5)),
            Self::Clamp(min, max) => values.iter_mut().for_each(|v| *v = clamp(*v, min, max)),
        }
    }
}

/// 2-D convolution (NCHW input, `[out, in, kh, kw]` weight), then `activation`: through
/// im2col and the AVX2 matrix product, the bias and activation applied as each row of the
/// result is finished; depthwise ones as shifted multiply-adds over whole planes. Other grouped
/// convolutions and CPUs without AVX2 take Burn's.
pub fn conv2d(
    x: Tensor<4>,
    weight: Tensor<4>,
    bias: Option<Tensor<1>>,
    options: ConvOptions<2>,
    activation: ConvActivation,
) -> Tensor<4> {
    conv_then((x, weight, bias, None), options, activation, &CONV2D)
}

/// `activation(conv2d(x, weight, bias) + residual)`: a residual connection (ResNet's sum of a
/// block's last convolution and its shortcut) fused into the convolution, the sum made as each
/// row of the result is finished. `residual` has the result's shape; other shapes broadcast
/// through Burn's add.
pub fn conv2d_residual(
    x: Tensor<4>,
    weight: Tensor<4>,
    bias: Option<Tensor<1>>,
    options: ConvOptions<2>,
    residual: Tensor<4>,
    activation: ConvActivation,
) -> Tensor<4> {
    conv_then((x, weight, bias, Some(residual)), options, activation, &CONV2D)
}

/// 3-D convolution (NCDHW input, `[out, in, kd, kh, kw]` weight, ONNX's per-side pads), then
/// `activation`: on flex as 2-D convolutions of the planes under each output depth, with the
/// 2-D kernel's products; grouped ones and other backends take Burn's `conv3d`, the input
/// padded first by what one side of an axis pads beyond the other (Burn pads both alike).
pub fn conv3d(
    x: Tensor<5>,
    weight: Tensor<5>,
    bias: Option<Tensor<1>>,
    options: ConvOptions<3>,
    activation: ConvActivation,
) -> Tensor<5> {
    conv_then((x, weight, bias, None), options, activation, &CONV3D)
}

/// `activation(conv3d(x, weight, bias) + residual)`, the residual sum fused as in
/// [`conv2d_residual`] (ResNet-3D's blocks).
pub fn conv3d_residual(
    x: Tensor<5>,
    weight: Tensor<5>,
    bias: Option<Tensor<1>>,
    options: ConvOptions<3>,
    residual: Tensor<5>,
    activation: ConvActivation,
) -> Tensor<5> {
    conv_then((x, weight, bias, Some(residual)), options, activation, &CONV3D)
}

/// A convolution's input, weight, bias and residual (`D`: the input's rank).
pub type ConvOperands<const D: usize> = (Tensor<D>, Tensor<D>, Option<Tensor<1>>, Option<Tensor<D>>);

/// The two ways to run an `N`-D convolution: our kernel (flex f32 tensors, else its operands
/// back) and Burn's op.
struct Convolution<const D: usize, const N: usize> {
    kernel: fn(ConvOperands<D>, &ConvOptions<N>, ConvActivation) -> Result<Tensor<D>, ConvOperands<D>>,
    burn: fn(Tensor<D>, Tensor<D>, Option<Tensor<1>>, ConvOptions<N>) -> Tensor<D>,
}

const CONV2D: Convolution<4, 2> = Convolution {
    #[cfg(feature = "flex")]
    kernel: flex::conv2d,
    #[cfg(not(feature = "flex"))]
    kernel: |operands, _, _| Err(operands),
    burn: burn::tensor::module::conv2d,
};

const CONV3D: Convolution<5, 3> = Convolution {
    #[cfg(feature = "flex")]
    kernel: flex::conv3d,
    #[cfg(not(feature = "flex"))]
    kernel: |operands, _, _| Err(operands),
    burn: |x, weight, bias, options| {
        let (x, padding) = crate::pool::symmetric_padding(x, options.padding);
        let options = ConvOptions::new_with_padding(options.stride, padding, options.dilation, options.groups);
        burn::tensor::module::conv3d(x, weight, bias, options)
    },
};

/// `activation(convolution(x, weight, bias) + residual)`: half floats in f32, rounded once;
/// our kernel where it takes the operands, else Burn's op and ops.
fn conv_then<const D: usize, const N: usize>(
    (x, weight, bias, residual): ConvOperands<D>,
    options: ConvOptions<N>,
    activation: ConvActivation,
    convolution: &Convolution<D, N>,
) -> Tensor<D> {
    let dtype = x.dtype();
    if matches!(dtype, burn::tensor::DType::F16 | burn::tensor::DType::BF16) {
        // Half floats accumulate in f32 and are rounded once, as ONNX Runtime and ONNX's
        // reference compute them.
        let f32 = |t: Tensor<D>| t.cast(burn::tensor::FloatDType::F32);
        let bias = bias.map(|b| b.cast(burn::tensor::FloatDType::F32));
        let operands = (f32(x), f32(weight), bias, residual.map(f32));
        return conv_then(operands, options, activation, convolution).cast(dtype);
    }
    let (x, weight, bias, residual) = match (convolution.kernel)((x, weight, bias, residual), &options, activation) {
        Ok(y) => return y,
        Err(back) => back,
    };
    let y = (convolution.burn)(x, weight, bias, options);
    activation.apply(match residual {
        Some(r) => y + r,
        None => y,
    })
}

/// `activation(layer.forward(x))` for a BatchNorm in inference (running statistics): on flex
/// outside autodiff, one pass over the planes in parallel, each channel's normalisation
/// `(x - mean) · scale + β` with `scale = γ / √(var + ε)`, the activation applied with it;
/// Burn's layer elsewhere (training and autodiff included).
pub fn batch_norm<const D: usize>(layer: &burn::nn::BatchNorm, x: Tensor<D>, activation: ConvActivation) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = match flex::batch_norm(layer, x, activation) {
        Ok(y) => return y,
        Err(x) => x,
    };
    activation.apply(layer.forward(x))
}

/// `layer.forward(x)` (`x · W + b` over the last axis) through the AVX2 matrix product on flex,
/// the bias added as each row is finished; Burn's `Linear` elsewhere (autodiff included, so the
/// layer still trains).
pub fn linear<const D: usize>(layer: &burn::nn::Linear, x: Tensor<D>) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let x = match flex::linear(layer, x) {
        Ok(y) => return y,
        Err(x) => x,
    };
    layer.forward(x)
}

/// `a.matmul(b.transpose())` (Gemm's `transB` with a B computed at run time, such as the fully
/// connected layers of ONNX's light models, whose weights are ConstantOfShape fills): on flex,
/// for a few rows of `a`, B read in place by our product; Burn's matmul elsewhere.
pub fn matmul_transposed(a: Tensor<2>, b: Tensor<2>) -> Tensor<2> {
    #[cfg(feature = "flex")]
    let (a, b) = match flex::matmul_transposed(a, b) {
        Ok(y) => return y,
        Err(operands) => operands,
    };
    a.matmul(b.transpose())
}

/// `Tensor::cat` of float tensors; on flex the copies are split across rayon's pool (flex
/// copies them one after the other, a fifth of DenseNet's time).
pub fn cat<const D: usize>(tensors: Vec<Tensor<D>>, dim: usize) -> Tensor<D> {
    #[cfg(feature = "flex")]
    let tensors = match flex::cat(tensors, dim) {
        Ok(y) => return y,
        Err(tensors) => tensors,
    };
    Tensor::cat(tensors, dim)
}

/// 1-D convolution as a 2-D one of height 1 (the same kernel; reshapes are views).
pub fn conv1d(
    x: Tensor<3>,
    weight: Tensor<3>,
    bias: Option<Tensor<1>>,
    options: ConvOptions<1>,
    activation: ConvActivation,
) -> Tensor<3> {
    let options2 = ConvOptions::new_with_padding(
        [1, options.stride[0]],
        [(0, 0), options.padding[0]],
        [1, options.dilation[0]],
        options.groups,
    );
    conv2d(x.unsqueeze_dim(2), weight.unsqueeze_dim(2), bias, options2, activation).squeeze_dim(2)
}

/// The LSTM recurrence of one direction with ONNX's default activations (σ, tanh, tanh), no
/// clip, peepholes or sequence lengths: `projected [steps, batch, 4 * hidden]` is `X·Wᵀ + Wb`
/// (gates i, o, f, c), `r [4 * hidden, hidden]`, `bias [1, 4 * hidden]` is Rb. Returns
/// `(Y [steps, batch, hidden], Y_h, Y_c)` in plain loops on flex data, where Burn would run
/// about twenty small tensor ops per step; `None` when the tensors are not on flex.
pub(crate) fn lstm_sequence(
    projected: &Tensor<3>,
    r: &Tensor<2>,
    bias: &Tensor<2>,
    initial: (&Tensor<2>, &Tensor<2>),
    reverse: bool,
) -> Option<(Tensor<3>, Tensor<2>, Tensor<2>)> {
    #[cfg(feature = "flex")]
    return flex::lstm_sequence(projected, r, bias, initial, reverse);
    #[cfg(not(feature = "flex"))]
    {
        let _ = (projected, r, bias, initial, reverse);
        None
    }
}

/// The weights, column scales, bias and initial state of [`quantized_lstm`].
pub(crate) type QuantizedLstmInputs<'a> = (
    (&'a Tensor<3>, &'a Tensor<3>),
    (&'a Tensor<2>, &'a Tensor<2>),
    Option<&'a Tensor<2>>,
    (Option<&'a Tensor<3>>, Option<&'a Tensor<3>>),
);

/// com.microsoft's DynamicQuantizeLSTM with the default activations, no clip, peepholes or
/// sequence lengths, every direction at once as ONNX Runtime computes it (see
/// `recurrent::recurrent_quantized`): `(Y [steps, dirs, batch, hidden], Y_h, Y_c)` from
/// time-major `x`, in plain loops on flex data with the u8 × s8 products; `None` off flex or
/// for weights that product cannot hold.
pub(crate) fn quantized_lstm(
    x: &Tensor<3>,
    inputs: QuantizedLstmInputs,
    reversed: &[bool],
) -> Option<(Tensor<4>, Tensor<3>, Tensor<3>)> {
    #[cfg(feature = "flex")]
    {
        let (weights, scales, bias, initial) = inputs;
        flex::quantized_lstm(x, weights, scales, bias, initial, reversed)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (x, inputs, reversed);
        None
    }
}

/// `a · b` of integer-valued f32 matrices (quantized values less their zero points): exact
/// in 32-bit integers through the u8 × s8 product on flex, converted to f32 once (as ONNX
/// Runtime converts its int32 sums); Burn's f32 product elsewhere or for values outside that
/// product's range (exact there while the sums stay under 2^24).
pub(crate) fn integer_matmul(a: Tensor<2>, b: Tensor<2>) -> Tensor<2> {
    #[cfg(feature = "flex")]
    if let Some(product) = flex::integer_matmul(&a, &b) {
        return product;
    }
    a.matmul(b)
}

/// `a · wᵀ` as [`integer_matmul`] for a `w` that is the same from call to call (an RNN's input
/// weights): wᵀ packed once, kept while its storage lives. `None` off flex or for values the
/// product cannot hold.
pub(crate) fn integer_matmul_constant_transposed(a: Tensor<2>, w: &Tensor<2>) -> Option<Tensor<2>> {
    #[cfg(feature = "flex")]
    return flex::integer_matmul_constant_transposed(&a, w);
    #[cfg(not(feature = "flex"))]
    {
        let _ = (a, w);
        None
    }
}

/// `a · wᵀ` for a `w` that is the same from call to call (an RNN's input weights): on flex, wᵀ
/// packed once for our product and kept while its storage lives; Burn's matmul elsewhere.
pub(crate) fn matmul_constant_transposed(a: Tensor<2>, w: &Tensor<2>) -> Tensor<2> {
    #[cfg(feature = "flex")]
    let a = match flex::matmul_constant_transposed(a, w) {
        Ok(product) => return product,
        Err(a) => a,
    };
    a.matmul(w.clone().transpose())
}

/// [`integer_matmul`] for a `b` that is the same from call to call (a model's weight): packed
/// once, kept while its storage lives. `None` off flex or for values the product cannot hold.
pub(crate) fn integer_matmul_constant(a: Tensor<2>, b: &Tensor<2>) -> Option<Tensor<2>> {
    #[cfg(feature = "flex")]
    return flex::integer_matmul_constant(&a, b);
    #[cfg(not(feature = "flex"))]
    {
        let _ = (a, b);
        None
    }
}

/// QLinear*'s requantization of integer sums: plus the bias, times the scale, rounded to even,
/// plus the zero point, saturated to the range.
pub struct Requantization {
    /// int32, in units of the sums: one value or one per output channel.
    pub bias: Option<Tensor<1, burn::tensor::Int>>,
    /// `x_scale · w_scale / y_scale`: one value or one per output channel.
    pub scale: Tensor<1>,
    /// The output's zero point: one value.
    pub zero: Tensor<1>,
    /// The output type's least and greatest values.
    pub range: (f32, f32),
}

/// ONNX Runtime's QLinearAdd of quantized values `a` and `b` (as f32):
/// `fma(a, ratio_a, fma(b, ratio_b, offset))`, clamped to the range, rounded to even (the
/// order of MLAS's AVX2 kernel, whose conversion rounds to even and packing saturates).
#[derive(Debug, Clone, Copy)]
pub struct QLinearAddition {
    /// `a_scale / c_scale`.
    pub ratio_a: f32,
    /// `b_scale / c_scale`.
    pub ratio_b: f32,
    /// `c_zero - (ratio_a * a_zero + ratio_b * b_zero)`.
    pub offset: f32,
    /// The output type's least and greatest values (integers within ±2^24).
    pub range: (f32, f32),
}

impl QLinearAddition {
    /// The requantized sum of `a` and `b`.
    #[inline(always)]
    pub fn sum(&self, a: f32, b: f32) -> i32 {
        use crate::float::{mul_add_f32, round_ties_even_f32};
        let v = mul_add_f32(a, self.ratio_a, mul_add_f32(b, self.ratio_b, self.offset));
        // Selects, which vectorise; NaN (from non-finite parameters only) becomes the low bound.
        let v = if v >= self.range.0 { v } else { self.range.0 };
        let v = if v <= self.range.1 { v } else { self.range.1 };
        // SAFETY: a finite integer within the range, which i32 holds.
        unsafe { round_ties_even_f32(v).to_int_unchecked::<i32>() }
    }
}

/// QLinearAdd of two int flex tensors of one shape (see `flex::qlinear_add`); `None` for other
/// tensors.
pub(crate) fn qlinear_add<const D: usize>(
    a: &Tensor<D, burn::tensor::Int>,
    b: &Tensor<D, burn::tensor::Int>,
    p: &QLinearAddition,
) -> Option<Tensor<D, burn::tensor::Int>> {
    #[cfg(feature = "flex")]
    {
        flex::qlinear_add(a, b, p)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (a, b, p);
        None
    }
}

/// ConvInteger's 2-D convolution on flex (see `flex::integer_conv2d`): `zero` one integer.
/// `None` for other tensors or values.
pub(crate) fn integer_conv2d(
    x: &Tensor<4, burn::tensor::Int>,
    zero: &Tensor<1>,
    weight: &Tensor<4>,
    options: &ConvOptions<2>,
) -> Option<Tensor<4>> {
    #[cfg(feature = "flex")]
    {
        flex::integer_conv2d(x, integer_scalar(zero)?, weight, options)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (x, zero, weight, options);
        None
    }
}

/// QLinearConv's 2-D convolution and requantization on flex (see `flex::qlinear_conv2d`): the
/// zero points one integer each, the bias and scale one value or one per output channel.
/// `None` for other tensors or values.
pub(crate) fn qlinear_conv2d(
    x: &Tensor<4, burn::tensor::Int>,
    zero: &Tensor<1>,
    weight: &Tensor<4>,
    options: &ConvOptions<2>,
    r: &Requantization,
) -> Option<Tensor<4, burn::tensor::Int>> {
    #[cfg(feature = "flex")]
    {
        let biases = match &r.bias {
            Some(b) => int_values(b)?,
            None => vec![0],
        };
        let scales = f32_values(&r.scale)?;
        let y_zero = integer_scalar(&r.zero)? as f32;
        let requantization = flex::Requantizer { scales: &scales, zero: y_zero, range: r.range };
        flex::qlinear_conv2d(x, integer_scalar(zero)?, weight, options, &biases, &requantization)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (x, zero, weight, options, r);
        None
    }
}

/// QDQ's fake quantization on flex (see `flex::fake_quantize`): `scale` and `zero` one value
/// each. `None` for other tensors or parameters.
pub(crate) fn fake_quantize<const D: usize>(
    x: &Tensor<D>,
    scale: &Tensor<D>,
    zero: Option<&Tensor<D>>,
    range: (f32, f32),
) -> Option<Tensor<D>> {
    #[cfg(feature = "flex")]
    {
        let zero = match zero {
            Some(z) => one_value(z)?,
            None => 0.0,
        };
        fake_quantize_per_tensor(x, one_value(scale)?, zero, range)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (x, scale, zero, range);
        None
    }
}

/// [`fake_quantize`] by one scale and zero point given as numbers.
pub(crate) fn fake_quantize_per_tensor<const D: usize>(
    x: &Tensor<D>,
    scale: f32,
    zero: f32,
    range: (f32, f32),
) -> Option<Tensor<D>> {
    #[cfg(feature = "flex")]
    {
        flex::fake_quantize(x, scale, zero, range)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (x, scale, zero, range);
        None
    }
}

/// The values of a small parameter tensor (a scale, a zero point) as f32, read back.
#[cfg(feature = "flex")]
fn f32_values<const D: usize>(t: &Tensor<D>) -> Option<Vec<f32>> {
    t.clone().into_data().convert::<f32>().try_into_vec::<f32>().ok()
}

/// The values of a small int parameter tensor (a bias) as i32, read back.
#[cfg(feature = "flex")]
fn int_values<const D: usize>(t: &Tensor<D, burn::tensor::Int>) -> Option<Vec<i32>> {
    t.clone().into_data().convert::<i32>().try_into_vec::<i32>().ok()
}

/// The one value of `t`; `None` for another count.
#[cfg(feature = "flex")]
fn one_value<const D: usize>(t: &Tensor<D>) -> Option<f32> {
    match f32_values(t)?.as_slice() {
        &[v] => Some(v),
        _ => None,
    }
}

/// The one value of `t` when it is an integer that i32 holds.
#[cfg(feature = "flex")]
fn integer_scalar(t: &Tensor<1>) -> Option<i32> {
    one_value(t).filter(|v| v.trunc() == *v && v.abs() <= (1 << 24) as f32).map(|v| v as i32)
}

/// `x - zero` as f32 for an int flex tensor and a single zero point (see `flex::int_minus`);
/// `None` otherwise.
pub(crate) fn int_minus<const D: usize>(x: &Tensor<D, burn::tensor::Int>, zero: &Tensor<D>) -> Option<Tensor<D>> {
    #[cfg(feature = "flex")]
    {
        flex::int_minus(x, one_value(zero)?)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (x, zero);
        None
    }
}

/// QLinearMatMul's requantization on flex (see `flex::requantize`): `scale` broadcasts along one
/// dim of `acc` at most, `zero` is one value. `None` for other tensors or shapes.
pub(crate) fn requantize<const D: usize>(
    acc: &Tensor<D>,
    scale: &Tensor<D>,
    zero: &Tensor<D>,
    range: (f32, f32),
) -> Option<Tensor<D, burn::tensor::Int>> {
    #[cfg(feature = "flex")]
    {
        let channel = broadcast_channel(acc.dims(), [scale.dims()])?;
        let scales = f32_values(scale)?;
        flex::requantize(acc, channel, &flex::Requantizer { scales: &scales, zero: one_value(zero)?, range })
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (acc, scale, zero, range);
        None
    }
}

/// A fused *Integer's finish on flex (see `flex::dequantize_sums`): `bias` and `scale`
/// broadcast along one dim of `acc` at most, the same one. `None` for other tensors or shapes.
pub(crate) fn dequantize_sums<const D: usize>(
    acc: &Tensor<D>,
    bias: Option<&Tensor<D, burn::tensor::Int>>,
    scale: &Tensor<D>,
) -> Option<Tensor<D>> {
    #[cfg(feature = "flex")]
    {
        let bias_dims = bias.map_or([1; D], |b| b.dims());
        let channel = broadcast_channel(acc.dims(), [scale.dims(), bias_dims])?;
        let scales = f32_values(scale)?;
        let biases = match bias {
            Some(b) => int_values(b)?,
            None => vec![0],
        };
        flex::dequantize_sums(acc, &biases, &scales, channel)
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = (acc, bias, scale);
        None
    }
}

/// The one dim of `dims` along which the broadcast operands of dims `params` vary (each 1
/// there or the full length; 0 when none varies), `None` when they vary along more than one.
#[cfg(feature = "flex")]
fn broadcast_channel<const D: usize, const N: usize>(dims: [usize; D], params: [[usize; D]; N]) -> Option<usize> {
    let mut wide = (0..D).filter(|&d| params.iter().any(|p| p[d] != 1));
    let channel = wide.next().unwrap_or(0);
    let fits = params.iter().all(|p| p[channel] == 1 || p[channel] == dims[channel]);
    (wide.next().is_none() && fits).then_some(channel)
}

/// How many products of 8-bit values less their zero points (each at most 255² in magnitude)
/// an f32 sum holds exactly: every partial sum is an integer under 2^24.
#[cfg(feature = "flex")]
pub(crate) const F32_EXACT_TERMS: usize = (1 << 24) / (255 * 255);

/// The operands of [`attention`]: `q [b, h, q_len, d]`, `key_t [b, h, d, kv_len]` (K already
/// transposed, as the fused pattern has it), `v [b, h, kv_len, dv]`, an additive `mask`.
pub(crate) type AttentionOperands = (Tensor<4>, Tensor<4>, Tensor<4>, Option<Tensor<4>>);

/// `softmax(q·key_t·scale + mask)·v` per batch and head on flex f32 tensors: the two products
/// through the AVX2 matrix product (K need not be transposed back), each row of scores scaled,
/// masked and normalised in one vectorised pass, the heads spread over the pool. flex's own
/// kernel computed that softmax one scalar `expf` at a time (a third of a diffusion UNet's
/// forward). A row whose scores are all `-inf` is zeros, as in flex's. The operands back when
/// they are not flex f32 tensors of one batch and head count or the mask's last dim is not the
/// keys'.
#[allow(clippy::result_large_err)]
pub(crate) fn attention(operands: AttentionOperands, scale: f32) -> Result<Tensor<4>, AttentionOperands> {
    #[cfg(feature = "flex")]
    return flex::attention(operands, scale);
    #[cfg(not(feature = "flex"))]
    {
        let _ = scale;
        Err(operands)
    }
}

/// `recurrent::quantize_u8_integers` of `values` as the uint8 bytes themselves (`out`; each
/// stands for `byte - zero`), the same f32 operations in the same order (the LSTM kernel's
/// state, in memory); returns the scale and the zero point.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) fn quantize_u8_bytes(values: &[f32], out: &mut [u8]) -> (f32, f32) {
    let (scale, zero) = u8_quantization_of(values);
    quantize_u8_into(values, out, scale, zero);
    (scale, zero)
}

/// The scale and zero point of [`u8_quantization`] over `values`' range.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) fn u8_quantization_of(values: &[f32]) -> (f32, f32) {
    let (low, high) = min_max_where(values, |_| true).unwrap_or((f32::INFINITY, f32::NEG_INFINITY));
    u8_quantization(low, high)
}

/// The least and greatest of `values` (NaN ignored, as `f32::min` and `max` ignore it;
/// infinities, or `low > high`, when there are none), or `None` when `all` fails for one of them.
/// Sixteen lanes of minima and maxima, and `all` folded over each vector and tested once, so the
/// loop vectorises where `all` does: a test per value, or one running minimum, kept it scalar
/// (the range of every activation of a quantized model: 3% of `common_old`'s time).
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) fn min_max_where(values: &[f32], all: impl Fn(f32) -> bool + Copy) -> Option<(f32, f32)> {
    const LANES: usize = 16;
    #[inline(always)]
    fn lanes(values: &[f32], all: impl Fn(f32) -> bool + Copy) -> Option<(f32, f32)> {
        let (mut low, mut high) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
        let mut vectors = values.chunks_exact(LANES);
        for vector in &mut vectors {
            let mut holds = true;
            for ((&v, low), high) in vector.iter().zip(&mut low).zip(&mut high) {
                holds &= all(v);
                // Comparisons (`vminps`), where `min` and `max` kept the loop scalar; a NaN `v`
                // is passed over, as `min` and `max` pass it over.
                *low = if v < *low { v } else { *low };
                *high = if v > *high { v } else { *high };
            }
            if !holds {
                return None;
            }
        }
        let rest = vectors.remainder();
        if !rest.iter().all(|&v| all(v)) {
            return None;
        }
        let low = rest.iter().chain(&low).fold(f32::INFINITY, |m, &v| m.min(v));
        let high = rest.iter().chain(&high).fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        Some((low, high))
    }
    #[cfg(feature = "flex")]
    return flex::vectorised(
        #[inline(always)]
        || lanes(values, all),
    );
    #[cfg(not(feature = "flex"))]
    lanes(values, all)
}

/// `round(v / scale) + zero` clamped to 0..=255 for each of `values`, into `out`.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) fn quantize_u8_into(values: &[f32], out: &mut [u8], scale: f32, zero: f32) {
    // `max` then `min` where `clamp` kept a NaN (then cast to 0): the same bytes, and a loop the
    // compiler vectorises (rounding in `vroundps` where AVX2 is there, not a `rintf` call per
    // value: a fifth of ddddocr's quantized model).
    #[inline(always)]
    #[allow(clippy::manual_clamp)] // `clamp` keeps a NaN, which `to_int_unchecked` must not see
    fn quantize(values: &[f32], out: &mut [u8], scale: f32, zero: f32) {
        for (o, &v) in out.iter_mut().zip(values) {
            let q = ((v / scale).round_ties_even() + zero).max(0.0).min(255.0);
            // SAFETY: `q` is an integer in 0..=255 (a NaN became 0 above).
            *o = unsafe { q.to_int_unchecked::<u8>() };
        }
    }
    #[cfg(feature = "flex")]
    flex::vectorised(
        #[inline(always)]
        || quantize(values, out, scale, zero),
    );
    #[cfg(not(feature = "flex"))]
    quantize(values, out, scale, zero);
}

/// An f32 flex tensor's values quantized by [`quantize_u8_bytes`]: the bytes, the scale and the
/// zero point; `None` for other tensors.
pub(crate) fn quantize_u8_tensor<const D: usize>(x: &Tensor<D>) -> Option<(Vec<u8>, f32, f32)> {
    #[cfg(feature = "flex")]
    {
        flex::with_values(x, |values| {
            let mut bytes = vec![0u8; values.len()];
            let (scale, zero) = quantize_u8_bytes(values, &mut bytes);
            (bytes, scale, zero)
        })
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = x;
        None
    }
}

/// The scale and zero point of ONNX Runtime's dynamic uint8 quantization of values from `low`
/// to `high`: the range widened to hold 0, over 255 (1 for an empty range), and `-low / scale`
/// rounded to even.
pub(crate) fn u8_quantization(low: f32, high: f32) -> (f32, f32) {
    let (low, high) = (low.min(0.0), high.max(0.0));
    let scale = if high == low { 1.0 } else { (high - low) / 255.0 };
    (scale, libm::rintf((0.0 - low / scale).clamp(0.0, 255.0)))
}

/// A 2-D pooling or convolution window.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
#[derive(Clone, Copy)]
struct Window {
    kernel: [usize; 2],
    strides: [usize; 2],
    pads: [(usize, usize); 2],
    dilations: [usize; 2],
}

impl Window {
    /// Output size along `axis` for an input of `size` (floor mode), `None` if no window fits.
    #[cfg_attr(not(feature = "flex"), allow(dead_code))]
    fn out_dim(&self, size: usize, axis: usize) -> Option<usize> {
        let (span, padded) = self.span_and_padded(size, axis)?;
        Some(padded.checked_sub(span)? / self.strides[axis].max(1) + 1)
    }

    /// The end padding that ceil mode adds along `axis` for an input of `size`: room for the
    /// windows that rounding the output size up brings in, less one that would start past the
    /// input and its start padding (ONNX Runtime's rule); 0 where no window fits.
    #[cfg_attr(not(feature = "flex"), allow(dead_code))]
    fn ceil_extra(&self, size: usize, axis: usize) -> usize {
        let Some((span, padded)) = self.span_and_padded(size, axis) else { return 0 };
        let Some(room) = padded.checked_sub(span) else { return 0 };
        let stride = self.strides[axis].max(1);
        let mut windows = room.div_ceil(stride) + 1;
        if (windows - 1) * stride >= size + self.pads[axis].0 {
            windows -= 1;
        }
        // No window left (an empty input without start padding): nothing to add.
        let Some(last) = windows.checked_sub(1) else { return 0 };
        (last * stride + span).saturating_sub(padded)
    }

    /// The dilated window's extent along `axis` and the padded size of an input of `size`;
    /// `None` for a window of no taps or an extent past `usize`.
    #[cfg_attr(not(feature = "flex"), allow(dead_code))]
    fn span_and_padded(&self, size: usize, axis: usize) -> Option<(usize, usize)> {
        let span = self.dilations[axis].checked_mul(self.kernel[axis].checked_sub(1)?)? + 1;
        Some((span, size + self.pads[axis].0 + self.pads[axis].1))
    }
}

/// The flex fast paths: the tensor's f32 buffer is used directly (in place when not shared).
/// Their `Err` hands the caller's tensors back unchanged for Burn's op.
/// Whether burn_onnx's flex kernels run (the default). Off, every op takes Burn's own flex op,
/// as it does on any other backend: what a Burn remote server hosting a flex device runs, so a
/// local run can be compared with a remote one bit for bit (`examples/remote`). Process-wide.
#[cfg(feature = "flex")]
pub fn set_flex_kernels(enabled: bool) {
    flex::ENABLED.store(enabled, core::sync::atomic::Ordering::Relaxed);
}

#[cfg(feature = "flex")]
#[allow(clippy::result_large_err)]
mod flex;

mod simd;

/// The flex kernels' f32 matrix product (AVX-512 / AVX2 tiles, picked at run time).
#[cfg(feature = "flex")]
pub(crate) mod gemm;

/// Output buffers the kernels write whole, not zeroed first.
#[cfg(feature = "flex")]
pub(crate) mod written;

/// Transposes in AVX2 register blocks (the depthwise kernel's layout changes).
#[cfg(feature = "flex")]
pub(crate) mod transpose;

/// The u8 × s8 integer matrix product of quantized models (AVX-512 VNNI / AVX2 / portable).
#[cfg(feature = "flex")]
pub(crate) mod igemm;

/// `x` raised to `min`, then lowered to `max`, as Burn's `clamp_min` then `clamp_max` (NaN
/// stays NaN).
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
#[inline(always)]
fn clamp(x: f32, min: f32, max: f32) -> f32 {
    let x = if x < min { min } else { x };
    if x > max {
        max
    } else {
        x
    }
}

/// `clamp(alpha · x + beta, 0, 1)` as Burn computes it (a product, a sum, then the bounds).
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
#[inline(always)]
fn hard_sigmoid(x: f32, alpha: f32, beta: f32) -> f32 {
    (x * alpha + beta).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::Window;

    fn window(kernel: usize, stride: usize, pads: (usize, usize)) -> Window {
        Window { kernel: [kernel; 2], strides: [stride; 2], pads: [pads; 2], dilations: [1; 2] }
    }

    /// Ceil mode's extra end padding: room for the window rounding up brings in, none where
    /// the windows fit exactly, none for a window that would start past the input (ONNX
    /// Runtime's reduce-by-one), and none for an empty input left with no window at all.
    #[test]
    fn ceil_mode_widens_the_end_padding_by_onnx_runtimes_rule() {
        assert_eq!(window(2, 2, (0, 0)).ceil_extra(5, 0), 1);
        assert_eq!(window(3, 2, (0, 0)).ceil_extra(6, 0), 1);
        assert_eq!(window(3, 2, (0, 0)).ceil_extra(7, 0), 0);
        assert_eq!(window(1, 2, (0, 0)).ceil_extra(2, 0), 0);
        assert_eq!(window(1, 1, (0, 1)).ceil_extra(0, 0), 0);
        assert_eq!(window(2, 2, (0, 0)).ceil_extra(0, 0), 0);
    }
}
