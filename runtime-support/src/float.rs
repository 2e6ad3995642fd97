//! The f64 functions runtime-support calls that std has and core lacks: std's own methods with
//! `std` (the code as it was), libm's without it (exact operations: the same results).
//!
//! Plain functions rather than a trait, and always these: the host build cannot catch a method
//! call that needs std. Burn links std there whatever the features (cubecl-environment depends
//! on `web-time` wherever `target_os` is not `"none"`), and std's float methods are visible to
//! every crate of a graph that links it; only a target without std would fail.

pub(crate) fn floor(x: f64) -> f64 {
    #[cfg(feature = "std")]
    return x.floor();
    #[cfg(not(feature = "std"))]
    libm::floor(x)
}

pub(crate) fn ceil(x: f64) -> f64 {
    #[cfg(feature = "std")]
    return x.ceil();
    #[cfg(not(feature = "std"))]
    libm::ceil(x)
}

/// `x - trunc(x)`, as std defines it.
pub(crate) fn fract(x: f64) -> f64 {
    #[cfg(feature = "std")]
    return x.fract();
    #[cfg(not(feature = "std"))]
    {
        x - libm::trunc(x)
    }
}

pub(crate) fn sqrt(x: f64) -> f64 {
    #[cfg(feature = "std")]
    return x.sqrt();
    #[cfg(not(feature = "std"))]
    libm::sqrt(x)
}

/// `2^n`, exact.
pub(crate) fn exp2i(n: i32) -> f64 {
    #[cfg(feature = "std")]
    return 2f64.powi(n);
    #[cfg(not(feature = "std"))]
    libm::ldexp(1.0, n)
}

pub(crate) fn round_ties_even(x: f64) -> f64 {
    #[cfg(feature = "std")]
    return x.round_ties_even();
    #[cfg(not(feature = "std"))]
    libm::roundeven(x)
}

/// `x` rounded to the nearest integer, ties to even, in f32. Inlined, so that it vectorises in
/// the loops that call it.
#[inline(always)]
pub(crate) fn round_ties_even_f32(x: f32) -> f32 {
    #[cfg(feature = "std")]
    return x.round_ties_even();
    #[cfg(not(feature = "std"))]
    libm::roundevenf(x)
}

/// `x * y + z` rounded once (a fused multiply-add). Inlined, so that it becomes one instruction
/// where the caller is compiled with FMA.
#[inline(always)]
pub(crate) fn mul_add_f32(x: f32, y: f32, z: f32) -> f32 {
    #[cfg(feature = "std")]
    return x.mul_add(y, z);
    #[cfg(not(feature = "std"))]
    libm::fmaf(x, y, z)
}

/// Hand-worked values, and libm's functions (the build without std) giving std's results.
#[cfg(test)]
mod tests {
    use super::*;

    const EDGES: [f64; 12] =
        [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 2.999_999_999, -7.25, 1e300, f64::INFINITY, 4.5e-320];

    #[test]
    fn hand_worked_values() {
        assert_eq!([floor(-2.5), ceil(-2.5), fract(-2.5), sqrt(2.25)], [-3.0, -2.0, -0.5, 1.5]);
        assert_eq!([exp2i(-3), exp2i(10), exp2i(-149)], [0.125, 1024.0, f64::from(f32::from_bits(1))]);
        // Ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2.
        assert_eq!([0.5, -0.5, 1.5, 2.5, -2.5].map(round_ties_even), [0.0, -0.0, 2.0, 2.0, -2.0]);
        assert_eq!([0.5f32, -0.5, 1.5, 2.5, -2.5].map(round_ties_even_f32), [0.0, -0.0, 2.0, 2.0, -2.0]);
        // Rounded once: 1 + 2^-23 squared is 1 + 2^-22 + 2^-46, which a product then a sum
        // would round to 1 + 2^-22 before subtracting it.
        let x = 1.0 + f32::EPSILON;
        assert_eq!(mul_add_f32(x, x, -(1.0 + 2.0 * f32::EPSILON)), 2f32.powi(-46));
    }

    #[test]
    fn libm_gives_what_std_gives() {
        for x in EDGES.into_iter().chain(EDGES.map(|x| -x)) {
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits();
            assert!(same(floor(x), libm::floor(x)) && same(ceil(x), libm::ceil(x)), "{x}");
            assert!(same(fract(x), x - libm::trunc(x)) || x.is_infinite(), "{x}");
            assert!(same(round_ties_even(x), libm::roundeven(x)), "{x}");
            assert!(same(sqrt(x.abs()), libm::sqrt(x.abs())), "{x}");
            let same32 = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let (x, y) = (x as f32, 1.0 + f32::EPSILON);
            assert!(same32(round_ties_even_f32(x), libm::roundevenf(x)), "{x}");
            assert!(same32(mul_add_f32(x, y, -x), libm::fmaf(x, y, -x)), "{x}");
        }
        // The exponents low_bit.rs takes powers of: within f32's range.
        for n in [-149, -20, -1, 0, 1, 127] {
            assert_eq!(exp2i(n), libm::ldexp(1.0, n), "{n}");
        }
    }
}
