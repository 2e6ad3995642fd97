//! ONNX's 8- and 4-bit floats and 4- and 2-bit integers at run time, and integer casts that
//! wrap values into a narrower integer type. No backend computes in
//! them: a tensor of a narrow float is an f32 tensor whose every value is representable in the
//! narrow type, one of a narrow integer an Int tensor of values in its range. A cast to one
//! rounds or wraps each value as ONNX's `Cast` does (for the floats: round to nearest, ties to
//! even; overflow, infinities and NaN per type and `saturate`).

use crate::float::{exp2i, round_ties_even};
use alloc::vec::Vec;
use burn::tensor::{DType, Int, IntDType, Tensor, TensorData};
pub use onnx_op_types::{E8M0Rounding, MiniFloat};

/// `x` rounded to the narrow float `format`, as ONNX's Cast: ties to even; a magnitude beyond
/// the largest value (infinities included) becomes the largest value with `saturate`, else
/// infinity where the type has one and NaN where it has not. FLOAT4E2M1, with neither, always
/// saturates, and takes NaN to a zero of the opposite sign, as ONNX's reference (ml_dtypes)
/// does.
fn round_to(format: MiniFloat, x: f32, saturate: bool) -> f32 {
    let layout = format.layout();
    let (min_exponent, mantissa_bits) = (1 - layout.bias, layout.mantissa_bits as i32);
    if x.is_nan() {
        return match (layout.nan(), x.is_sign_negative()) {
            (true, _) => f32::NAN,
            (false, true) => 0.0,
            (false, false) => -0.0,
        };
    }
    let negative = x.is_sign_negative();
    let magnitude = f64::from(x).abs();
    let rounded = if magnitude.is_infinite() {
        magnitude
    } else {
        // The spacing of the narrow type's values around `magnitude` (exact powers of two;
        // an f32 is always a normal f64, so its exponent field is its binary exponent).
        let exponent = ((magnitude.to_bits() >> 52) as i32 - 1023).max(min_exponent);
        let spacing = exp2i(exponent - mantissa_bits);
        round_ties_even(magnitude / spacing) * spacing
    };
    let value = if rounded > layout.max {
        if saturate || !(layout.nan() || layout.infinities()) {
            layout.max
        } else if layout.infinities() {
            f64::INFINITY
        } else {
            return f32::NAN;
        }
    } else if rounded == 0.0 && !layout.negative_zero() {
        return 0.0;
    } else {
        rounded
    };
    let value = value as f32;
    if negative {
        -value
    } else {
        value
    }
}

/// ONNX `Cast` to a narrow float: every element rounded as ONNX says (ties to even, `saturate`).
pub fn cast_to_mini_float<const D: usize>(x: Tensor<D>, format: MiniFloat, saturate: bool) -> Tensor<D> {
    map_on_host(x, |v| round_to(format, v, saturate))
}

/// ONNX `Cast` to FLOAT8E8M0: every element rounded (see [`E8M0Rounding::round`]).
pub fn cast_to_e8m0<const D: usize>(x: Tensor<D>, rounding: E8M0Rounding, saturate: bool) -> Tensor<D> {
    map_on_host(x, |v| rounding.round(v, saturate))
}

/// `f` on every element, as f32, of an f32 tensor. On the host: these casts are rare, and exact
/// rounding into a narrow type is not a Burn op.
fn map_on_host<const D: usize>(x: Tensor<D>, f: impl Fn(f32) -> f32) -> Tensor<D> {
    let device = x.device();
    let shape = x.shape();
    let values: Vec<f32> = x.into_data().iter::<f32>().map(f).collect();
    Tensor::from_data(TensorData::new(values, shape), &device)
}

/// One of the 4- and 2-bit integer types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NarrowInt {
    /// ONNX `UINT4`: 0 to 15, two per byte.
    U4,
    /// ONNX `INT4`: -8 to 7, two per byte.
    I4,
    /// ONNX `UINT2`: 0 to 3, four per byte.
    U2,
    /// ONNX `INT2`: -2 to 1, four per byte.
    I2,
}

impl NarrowInt {
    /// `v` modulo 2^bits, in the type's range (two's complement for the signed types): ONNX's
    /// Cast to these types wraps, as to the other integer types.
    pub fn wrap(self, v: i64) -> i64 {
        let (bits, signed) = match self {
            Self::U4 => (4, false),
            Self::I4 => (4, true),
            Self::U2 => (2, false),
            Self::I2 => (2, true),
        };
        let low = v & ((1 << bits) - 1);
        if signed && low >= 1 << (bits - 1) {
            low - (1 << bits)
        } else {
            low
        }
    }

    /// A float cast as ONNX's reference does: truncated toward zero, then wrapped. NaN, the
    /// infinities and magnitudes of 2^31 or more (whose f32 values are multiples of 256, so
    /// wrapped they are 0 too) give 0.
    pub fn from_float(self, x: f32) -> i64 {
        if !x.is_finite() || x.abs() >= 2_147_483_648.0 {
            return 0;
        }
        // `as` truncates toward zero.
        self.wrap(x as i64)
    }
}

/// ONNX `Cast` of a float tensor to a 4- or 2-bit integer type (see [`NarrowInt::from_float`]).
pub fn cast_float_to_narrow_int<const D: usize>(x: Tensor<D>, to: NarrowInt) -> Tensor<D, Int> {
    let device = x.device();
    let shape = x.shape();
    let values: Vec<i64> = x.into_data().iter::<f32>().map(|v| to.from_float(v)).collect();
    Tensor::from_data(TensorData::new(values, shape), &device)
}

/// ONNX `Cast` of a float tensor to an integer type of `bits` bits (8 to 64; `signed`), as
/// ONNX Runtime computes it on x86: truncated toward zero through a 32-bit integer (signed
/// targets of 32 bits or fewer, unsigned ones under 32) or a 64-bit one (the others), whose
/// "integer indefinite" (its minimum) NaN, the infinities and values beyond its range become,
/// then wrapped to the target (`wrap_int`: the indefinite's low bits are 0 in the narrower
/// targets). Int64 on a device whose integers are 32-bit gets i32's minimum. Burn's own float to
/// int conversion saturates on flex and panics on ndarray for these values.
pub fn cast_float_to_int<const D: usize>(x: Tensor<D>, bits: u32, signed: bool) -> Tensor<D, Int> {
    let through_64 = bits > 32 || (bits == 32 && !signed);
    let limit = if through_64 { 9_223_372_036_854_775_808.0 } else { 2_147_483_648.0 };
    let indefinite = if through_64 { i64::MIN } else { i64::from(i32::MIN) };
    let undefined = x.clone().is_nan().bool_or(x.clone().abs().greater_equal_elem(limit));
    let truncated = x.mask_fill(undefined.clone(), 0.0).int();
    let storage_min = match truncated.dtype() {
        DType::I32 => i64::from(i32::MIN),
        DType::I16 => i64::from(i16::MIN),
        DType::I8 => i64::from(i8::MIN),
        _ => i64::MIN,
    };
    let cast = truncated.mask_fill(undefined, indefinite.max(storage_min));
    wrap_int(cast, bits, signed)
}

/// ONNX `Cast` of an integer tensor to an integer type of `bits` bits (`signed`: two's
/// complement), the narrow ones included: each value modulo 2^bits, in the type's range (the
/// spec's "discard higher bits and reinterpret": 300 to uint8 is 44, 200 to int8 is -56). On
/// the device, in the tensor's own storage: a shift pair sign-extends, a mask keeps the low bits.
/// A 32-bit unsigned target in storage of 32 bits or fewer widens to i64 first, since its
/// values past 2^31 do not fit a signed 32-bit integer.
pub fn wrap_int<const D: usize>(x: Tensor<D, Int>, bits: u32, signed: bool) -> Tensor<D, Int> {
    let storage_bits = |x: &Tensor<D, Int>| 8 * x.dtype().size() as u32;
    let x = if !signed && bits >= storage_bits(&x) && bits < 64 { x.cast(IntDType::I64) } else { x };
    let storage = storage_bits(&x);
    if bits >= storage {
        return x;
    }
    if signed {
        let unused = storage - bits;
        x.bitwise_left_shift_scalar(unused).bitwise_right_shift_scalar(unused)
    } else {
        x.bitwise_and_scalar((1i64 << bits) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of `low_bit_reference.txt`: an input and ONNX's reference Cast of it.
    struct Row {
        x: f32,
        /// To each narrow float of [`MiniFloat`], with and without saturation (f32 bits).
        floats: Vec<f32>,
        /// To UINT4, INT4, UINT2 and INT2.
        ints: Vec<i64>,
        /// To FLOAT8E8M0, rounding up, down and to nearest, each with and without saturation
        /// (ONNX Runtime's: see [`E8M0Rounding::round`]).
        e8m0: Vec<f32>,
    }

    fn reference() -> impl Iterator<Item = Row> {
        include_str!("low_bit_reference.txt").lines().filter(|l| !l.starts_with('#')).map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields.len(), 20, "a reference row has 20 fields: {line}");
            let float = |f: &&str| f32::from_bits(u32::from_str_radix(f, 16).unwrap());
            Row {
                x: float(&fields[0]),
                floats: fields[1..10].iter().map(float).collect(),
                ints: fields[10..14].iter().map(|f| f.parse().unwrap()).collect(),
                e8m0: fields[14..].iter().map(float).collect(),
            }
        })
    }

    /// Same value, NaN matching any NaN, zeros matched by sign.
    fn same(a: f32, b: f32) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    #[test]
    fn narrow_floats_round_as_onnx_reference() {
        let columns = [
            (MiniFloat::E4M3FN, true),
            (MiniFloat::E4M3FN, false),
            (MiniFloat::E4M3FNUZ, true),
            (MiniFloat::E4M3FNUZ, false),
            (MiniFloat::E5M2, true),
            (MiniFloat::E5M2, false),
            (MiniFloat::E5M2FNUZ, true),
            (MiniFloat::E5M2FNUZ, false),
            (MiniFloat::E2M1, true),
        ];
        let mut rows = 0;
        for Row { x, floats, .. } in reference() {
            for (&(format, saturate), &want) in columns.iter().zip(&floats) {
                let got = round_to(format, x, saturate);
                assert!(
                    same(got, want),
                    "{format:?} saturate={saturate}: {x:e} ({:#x}) -> {got:e}, ONNX {want:e}",
                    x.to_bits()
                );
            }
            rows += 1;
        }
        assert!(rows > 1000, "only {rows} reference rows");
    }

    #[test]
    fn e8m0_rounds_as_onnx_runtime() {
        let mut rows = 0;
        for Row { x, e8m0, .. } in reference() {
            let modes = [E8M0Rounding::Up, E8M0Rounding::Down, E8M0Rounding::Nearest];
            let columns = modes.iter().flat_map(|&mode| [(mode, true), (mode, false)]);
            for ((mode, saturate), &want) in columns.zip(&e8m0) {
                let got = mode.round(x, saturate);
                assert!(
                    same(got, want),
                    "{mode:?} saturate={saturate}: {x:e} ({:#x}) -> {got:e}, ONNX {want:e}",
                    x.to_bits()
                );
            }
            rows += 1;
        }
        assert!(rows > 2000, "only {rows} reference rows");
        // Landmarks: 1.5 is a tie (nearest goes up), 3 rounds up to 4 or down to 2, past the
        // largest value saturation holds at 2^127, and zero saturates to 2^-127.
        assert_eq!([E8M0Rounding::Nearest.round(1.5, true), E8M0Rounding::Down.round(3.0, true)], [2.0, 2.0]);
        assert_eq!(E8M0Rounding::Up.round(3.0, true), 4.0);
        assert_eq!(E8M0Rounding::Up.round(f32::MAX, true), 2f32.powi(127));
        assert!(E8M0Rounding::Up.round(f32::MAX, false).is_nan());
        assert_eq!(E8M0Rounding::Nearest.round(0.0, true), 2f32.powi(-127));
        assert!(E8M0Rounding::Nearest.round(0.0, false).is_nan());
    }

    #[test]
    fn narrow_ints_wrap_as_onnx_reference() {
        for Row { x, ints, .. } in reference() {
            for (to, &want) in [NarrowInt::U4, NarrowInt::I4, NarrowInt::U2, NarrowInt::I2].iter().zip(&ints) {
                assert_eq!(to.from_float(x), want, "{to:?}: {x:e}");
            }
        }
        // From integers (ml_dtypes, which ONNX's reference casts with): 200 = 0b1100_1000.
        assert_eq!([NarrowInt::U4.wrap(200), NarrowInt::I4.wrap(200), NarrowInt::I4.wrap(-9)], [8, -8, 7]);
        assert_eq!([NarrowInt::U2.wrap(-1), NarrowInt::I2.wrap(2), NarrowInt::I2.wrap(-3)], [3, -2, 1]);
    }

    /// The tensor casts on every reference row at once: FLOAT8E4M3FN without saturation (NaN
    /// past 448), FLOAT8E8M0 to nearest without saturation, and INT4.
    #[cfg(feature = "flex")]
    #[test]
    fn tensor_casts_match_the_reference_rows() {
        let rows: Vec<Row> = reference().collect();
        let x = crate::test_util::floats(&rows.iter().map(|r| r.x).collect::<Vec<_>>(), [rows.len()]);
        let floats: Vec<f32> = cast_to_mini_float(x.clone(), MiniFloat::E4M3FN, false).into_data().iter().collect();
        for (row, got) in rows.iter().zip(floats) {
            assert!(same(got, row.floats[1]), "{:e} -> {got:e}, ONNX {:e}", row.x, row.floats[1]);
        }
        let e8m0: Vec<f32> = cast_to_e8m0(x.clone(), E8M0Rounding::Nearest, false).into_data().iter().collect();
        for (row, got) in rows.iter().zip(e8m0) {
            assert!(same(got, row.e8m0[5]), "{:e} -> {got:e}, ONNX {:e}", row.x, row.e8m0[5]);
        }
        let ints = crate::test_util::int_values(cast_float_to_narrow_int(x, NarrowInt::I4)).1;
        assert_eq!(ints, rows.iter().map(|r| r.ints[1]).collect::<Vec<_>>());
    }
}
