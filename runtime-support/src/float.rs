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
