//! Branch-free `exp`, sigmoid, SiLU and tanh over slices, compiled for AVX2+FMA and for the
//! baseline target and picked at run time, so LLVM vectorises them on every x86-64 CPU.

/// `e^x` for f32 (Cephes' `expf`: range reduction by ln 2 in two parts, degree-5
/// polynomial, exponent bits; within 2 ulp on [-87, 88], clamped outside).
#[inline(always)]
pub(super) fn exp_one(x: f32) -> f32 {
    const LOG2E: f32 = core::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let x = x.clamp(-87.0, 88.0);
    // Round to nearest through the float's mantissa: `t`'s low bits hold n as an integer
    // (plain float and wrapping integer ops only, so LLVM vectorises every step).
    const SHIFTER: f32 = 12_582_912.0; // 1.5 * 2^23
    let t = x * LOG2E + SHIFTER;
    let n = t - SHIFTER;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.987_569_1e-4f32;
    let p = p * r + 1.398_199_9e-3;
    let p = p * r + 8.333_452e-3;
    let p = p * r + 4.166_579_6e-2;
    let p = p * r + 1.666_666_5e-1;
    let p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    // 2^n: n + 127 in the exponent field.
    let scale = f32::from_bits(t.to_bits().wrapping_sub(SHIFTER.to_bits()).wrapping_add(127) << 23);
    y * scale
}

/// `ln x` for a positive normal f32 (Cephes' `logf`: x = m · 2^e with m in [√½, √2), a
/// degree-9 polynomial in m - 1, e · ln 2 in two parts; within 2 ulp). Plain float and
/// integer ops, so LLVM vectorises it.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
#[inline(always)]
pub(super) fn ln_one(x: f32) -> f32 {
    let bits = x.to_bits();
    // x = m · 2^e with m in [0.5, 1), then moved to [√½, √2).
    let e = ((bits >> 23) as i32 - 126) as f32;
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f00_0000);
    let small = m < core::f32::consts::FRAC_1_SQRT_2;
    let (e, m) = if small { (e - 1.0, m + m - 1.0) } else { (e, m - 1.0) };
    let z = m * m;
    let p = 7.037_683_6e-2f32;
    let p = p * m - 1.151_461e-1;
    let p = p * m + 1.167_699_9e-1;
    let p = p * m - 1.242_014_1e-1;
    let p = p * m + 1.424_932_3e-1;
    let p = p * m - 1.666_805_8e-1;
    let p = p * m + 2.000_071_5e-1;
    let p = p * m - 2.499_999_4e-1;
    let p = p * m + 3.333_333e-1;
    let y = p * m * z + e * -2.121_944_4e-4 - 0.5 * z;
    m + y + e * 0.693_359_4
}

/// `x · p(x²) / q(x²)` with x clamped to ±`bound`, each polynomial by Horner's rule in fused
/// multiply-adds from its highest coefficient: MLAS's (ONNX Runtime's) form of Eigen's
/// rational sigmoid and tanh, operation for operation.
#[inline(always)]
fn odd_rational(x: f32, bound: f32, p: &[f32], q: &[f32]) -> f32 {
    let x = x.clamp(-bound, bound);
    let x2 = x * x;
    let horner = |c: &[f32]| c[1..].iter().fold(c[0], |acc, &k| acc.mul_add(x2, k));
    x * horner(p) / horner(q)
}

/// The logistic function as ONNX Runtime computes it (MLAS, with Eigen's coefficients): an
/// odd polynomial over an even one in x clamped to [-18, 18], plus ½, at least 0. Within
/// 2e-7 of `1 / (1 + e^-x)`; with fused multiply-adds (the AVX2 build, and `mul_add`'s
/// fused fallback) bit for bit ONNX Runtime's `Sigmoid`. That matters beyond the last bit:
/// a DynamicQuantizeLinear after a SiLU rounds ties, and a value one ulp off ONNX Runtime's
/// gives another integer, an error that grows layer by layer in a quantized network.
#[inline(always)]
fn sigmoid_one(x: f32) -> f32 {
    const P: [f32; 5] = [4.37031e-11, 1.1562732e-7, 6.085749e-5, 8.513771e-3, 2.4828795e-1];
    const Q: [f32; 6] = [6.1024737e-13, 5.7610214e-9, 6.291068e-6, 1.7019882e-3, 1.1681765e-1, 9.931519e-1];
    let y = odd_rational(x, 18.0, &P, &Q) + 0.5;
    // Not `max`: NaN stays NaN.
    if y < 0.0 {
        0.0
    } else {
        y
    }
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
            // Detecting the CPU's features at run time needs std.
            #[cfg(all(target_arch = "x86_64", feature = "std"))]
            {
                /// # Safety
                ///
                /// The CPU must have AVX2 and FMA.
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2(values: &mut [f32]) {
                    body(values)
                }
                if crate::cpu::avx2_fma() {
                    // SAFETY: the CPU has the features the function was compiled for.
                    return unsafe { avx2(values) };
                }
            }
            body(values)
        }
    };
}

/// One row of attention scores made probabilities, `softmax(row · scale + mask)`: its
/// maximum and sum kept in eight lanes so that the loops vectorise (an `f32::max` or `+`
/// folded over the row one value at a time does not). A row of `-inf` only becomes zeros.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
#[inline(always)]
pub(super) fn softmax_row(row: &mut [f32], scale: f32, mask: Option<&[f32]>) {
    const LANES: usize = 8;
    match mask {
        Some(mask) => row.iter_mut().zip(mask).for_each(|(v, &m)| *v = v.mul_add(scale, m)),
        None => row.iter_mut().for_each(|v| *v *= scale),
    }
    let lanes = |row: &[f32], start: f32, fold: fn(f32, f32) -> f32| {
        let mut acc = [start; LANES];
        let chunks = row.chunks_exact(LANES);
        let tail = chunks.remainder().iter().fold(start, |a, &v| fold(a, v));
        for chunk in chunks {
            acc.iter_mut().zip(chunk).for_each(|(a, &v)| *a = fold(*a, v));
        }
        acc.iter().fold(tail, |a, &v| fold(a, v))
    };
    let max = lanes(row, f32::NEG_INFINITY, f32::max);
    if max == f32::NEG_INFINITY {
        row.fill(0.0);
        return;
    }
    // A masked score (-inf) weighs exactly 0 (`exp_one` clamps to e^-87).
    row.iter_mut().for_each(|v| *v = if *v == f32::NEG_INFINITY { 0.0 } else { exp_one(*v - max) });
    let inverse = 1.0 / lanes(row, 0.0, |a, v| a + v);
    row.iter_mut().for_each(|v| *v *= inverse);
}

/// Where the two approximations of erf meet, and past which erf(x) is 1 in f32 (erfc(3.92)
/// = 1.6e-8, under half the spacing of floats below 1).
const ERF_SPLIT: f32 = 0.921_875;
const ERF_ONE: f32 = 3.92;

/// erf(t) / t = P(t²) on [0, ERF_SPLIT]: least squares on Chebyshev nodes (within 2.1e-7
/// relative, evaluated in f32).
#[inline(always)]
fn erf_small(t: f32) -> f32 {
    const P: [f32; 6] = [
        -6.047_049e-4,
        5.005_603_6e-3,
        -2.677_638_6e-2,
        1.128_213_9e-1,
        -3.761_253_4e-1,
        core::f32::consts::FRAC_2_SQRT_PI,
    ];
    let s = t * t;
    t * P[1..].iter().fold(P[0], |acc, &k| acc.mul_add(s, k))
}

/// erfc(t) = e^Q(t) on [ERF_SPLIT, ERF_ONE], Q of degree 8 fitted to ln erfc (within 7e-8 of
/// erf once subtracted from 1); 0 past ERF_ONE.
#[inline(always)]
fn erfc_large(t: f32) -> f32 {
    const Q: [f32; 9] = [
        1.636_900_7e-6,
        -4.601_793_6e-5,
        5.961_686e-4,
        -4.755_204e-3,
        2.640_465e-2,
        -1.100_440_2e-1,
        -6.318_718e-1,
        -1.130_202_3,
        3.114_174_2e-4,
    ];
    let u = t.clamp(ERF_SPLIT, ERF_ONE);
    let tail = exp_one(Q[1..].iter().fold(Q[0], |acc, &k| acc.mul_add(u, k)));
    if t < ERF_ONE {
        tail
    } else {
        0.0
    }
}

/// erfc(|x|) for every x (NaN stays NaN).
#[inline(always)]
fn erfc_abs(t: f32) -> f32 {
    let small = 1.0 - erf_small(t);
    let large = erfc_large(t);
    if t > ERF_SPLIT {
        large
    } else {
        small
    }
}

/// erf(x), within 2.5e-7 of the exact value (libm's `erff` is within 1 ulp, ONNX Runtime's
/// MLAS kernel faithfully rounded).
#[inline(always)]
fn erf_one(x: f32) -> f32 {
    let t = x.abs();
    let small = erf_small(t);
    let large = 1.0 - erfc_large(t);
    (if t > ERF_SPLIT { large } else { small }).copysign(x)
}

/// x · Φ(x) = x · (1 - ½ erfc(x/√2)) for x ≥ 0, ½ x · erfc(-x/√2) below.
#[inline(always)]
fn gelu_one(x: f32) -> f32 {
    let tail = 0.5 * erfc_abs(x.abs() * core::f32::consts::FRAC_1_SQRT_2);
    x * if x >= 0.0 { 1.0 - tail } else { tail }
}

dispatched!(sigmoid, sigmoid_one);
dispatched!(silu, |x: f32| x * sigmoid_one(x));
dispatched!(tanh, tanh_one);
dispatched!(exp, exp_one);
dispatched!(erf, erf_one);
dispatched!(gelu, gelu_one);

/// `tanh` as ONNX Runtime computes it (MLAS, Eigen's coefficients): an odd polynomial over
/// an even one in x clamped to [-9, 9]. Within 3e-7 of `tanh`, and bit for bit ONNX
/// Runtime's `Tanh` with fused multiply-adds (see `sigmoid_one`).
#[inline(always)]
fn tanh_one(x: f32) -> f32 {
    const P: [f32; 7] =
        [-2.7607684e-16, 2.000188e-13, -8.604672e-11, 5.1222973e-8, 1.48572235e-5, 6.3726195e-4, 4.8935246e-3];
    const Q: [f32; 4] = [1.1982584e-6, 1.1853471e-4, 2.2684347e-3, 4.893525e-3];
    odd_rational(x, 9.0, &P, &Q)
}

#[cfg(test)]
mod tests {
    /// The largest |ours - exact| over a sweep of [-20, 20], exact computed in f64.
    fn max_error(ours: fn(f32) -> f32, exact: fn(f64) -> f64) -> f64 {
        (-200_000..=200_000)
            .map(|i| i as f32 / 10_000.0)
            .map(|x| (ours(x) as f64 - exact(x as f64)).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn tanh_within_3e7_of_exact() {
        let error = max_error(super::tanh_one, f64::tanh);
        assert!(error <= 3e-7, "max |tanh error| {error:e}");
        let ours = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0].map(super::tanh_one);
        assert!(ours[0].is_nan() && ours[1] == 1.0 && ours[2] == -1.0 && ours[3] == 0.0, "{ours:?}");
    }

    #[test]
    fn erf_and_gelu_within_2_5e7_of_exact() {
        let error = max_error(super::erf_one, libm::erf);
        assert!(error <= 2.5e-7, "max |erf error| {error:e}");
        let gelu = |x: f64| x * 0.5 * libm::erfc(-x / core::f64::consts::SQRT_2);
        let (mut worst, mut at) = (0.0f64, 0.0);
        for i in -200_000..=200_000 {
            let x = i as f32 / 10_000.0;
            // Relative where the value is small (a far negative x): no cancellation.
            let exact = gelu(x as f64);
            let error = (super::gelu_one(x) as f64 - exact).abs() / exact.abs().max(1.0);
            if error > worst {
                (worst, at) = (error, x);
            }
        }
        assert!(worst <= 2.5e-7, "max gelu error {worst:e} at {at}");
        let ours = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0].map(super::erf_one);
        assert!(ours[0].is_nan() && ours[1] == 1.0 && ours[2] == -1.0 && ours[3] == 0.0, "{ours:?}");
        let ours = [f32::NAN, f32::INFINITY, -30.0, 30.0].map(super::gelu_one);
        assert!(ours[0].is_nan() && ours[1] == f32::INFINITY && ours[2] == 0.0 && ours[3] == 30.0, "{ours:?}");
    }

    #[test]
    fn sigmoid_within_2e7_of_exact() {
        let error = max_error(super::sigmoid_one, |x| 1.0 / (1.0 + (-x).exp()));
        assert!(error <= 2e-7, "max |sigmoid error| {error:e}");
        let ours = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0].map(super::sigmoid_one);
        assert!(ours[0].is_nan() && ours[1] == 1.0 && ours[2] == 0.0 && ours[3] == 0.5, "{ours:?}");
    }

    #[test]
    fn ln_matches_std_within_2_ulp() {
        for i in 0..=60_000 {
            let x = 10f32.powf(i as f32 / 1000.0 - 30.0);
            let (ours, std) = (super::ln_one(x), x.ln());
            assert!((ours - std).abs() <= 2.0 * f32::EPSILON * std.abs().max(1.0), "ln({x}) = {ours}, std {std}");
        }
    }

    #[test]
    fn exp_matches_std_within_2_ulp() {
        for i in -8700..=8800 {
            let x = i as f32 / 100.0;
            let (ours, std) = (super::exp_one(x), x.exp());
            assert!((ours - std).abs() <= 2.0 * f32::EPSILON * std, "exp({x}) = {ours}, std {std}");
        }
    }
}
