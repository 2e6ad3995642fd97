//! ONNX's 8-, 4- and 2-bit element types as they are serialized (`raw_data`, `int32_data`),
//! decoded to their carrier layout (see [`DType::carrier`]): f32 values for the narrow floats
//! (every one exactly representable in f32), one byte per element for the narrow integers.

use crate::types::DType;
use onnx_op_types::{MiniFloat, MiniFloatLayout, Specials};

/// The value of one bit pattern (in the low `1 + exponent_bits + mantissa_bits` bits) of a narrow
/// float.
fn pattern_value(layout: &MiniFloatLayout, bits: u8) -> f32 {
    let width = 1 + layout.exponent_bits + layout.mantissa_bits;
    let bits = u32::from(bits) & ((1 << width) - 1);
    let negative = bits >> (width - 1) == 1;
    let magnitude = bits & ((1 << (width - 1)) - 1);
    let exponent = magnitude >> layout.mantissa_bits;
    let mantissa = magnitude & ((1 << layout.mantissa_bits) - 1);
    let all_ones = (1 << layout.exponent_bits) - 1;
    match layout.specials {
        Specials::NegativeZeroNan if negative && magnitude == 0 => return f32::NAN,
        Specials::AllOnesNan if exponent == all_ones && mantissa == (1 << layout.mantissa_bits) - 1 => return f32::NAN,
        Specials::Ieee if exponent == all_ones => {
            return match (mantissa, negative) {
                (0, false) => f32::INFINITY,
                (0, true) => f32::NEG_INFINITY,
                _ => f32::NAN,
            };
        }
        _ => {}
    }
    let m = layout.mantissa_bits as i32;
    // Subnormals (exponent 0) have no implicit leading one and the smallest exponent.
    let (significand, scale) = if exponent == 0 {
        (mantissa, 1 - layout.bias - m)
    } else {
        (mantissa | (1 << layout.mantissa_bits), exponent as i32 - layout.bias - m)
    };
    // Exact: at most 4 significant bits and exponents well inside f32's range.
    let value = significand as f32 * 2f32.powi(scale);
    if negative {
        -value
    } else {
        value
    }
}

/// The value of a FLOAT8E8M0 pattern: 2^(bits - 127), NaN for 0xff. Exact in f32: 2^-127 is
/// f32's subnormal with the top mantissa bit set, the others are normal f32 powers of two.
fn e8m0_value(bits: u8) -> f32 {
    match bits {
        0 => f32::from_bits(1 << 22),
        0xff => f32::NAN,
        exponent => f32::from_bits(u32::from(exponent) << 23),
    }
}

/// Bytes ONNX serializes `count` elements of a low-bit `dtype` in (packed for 4 and 2 bits).
pub fn packed_len(dtype: DType, count: usize) -> Option<usize> {
    count.checked_mul(dtype.onnx_bits()).map(|bits| bits.div_ceil(8))
}

/// `count` elements of a low-bit `dtype` from their serialized bytes (`packed_len` of them),
/// in the carrier layout; `None` for a type that is not low-bit.
pub fn unpack(dtype: DType, packed: &[u8], count: usize) -> Option<Vec<u8>> {
    let bits = dtype.onnx_bits();
    // Element `i` of a packed layout: first element in the least significant bits.
    let field = |i: usize| -> u8 {
        let per_byte = 8 / bits;
        let byte = packed[i / per_byte];
        (byte >> ((i % per_byte) * bits)) & ((1u16 << bits) - 1) as u8
    };
    if let Some(format) = dtype.mini_float().map(MiniFloat::layout) {
        return Some((0..count).flat_map(|i| pattern_value(&format, field(i)).to_le_bytes()).collect());
    }
    if dtype == DType::F8E8M0 {
        return Some((0..count).flat_map(|i| e8m0_value(field(i)).to_le_bytes()).collect());
    }
    let signed = match dtype {
        DType::I4 | DType::I2 => true,
        DType::U4 | DType::U2 => false,
        _ => return None,
    };
    let shift = 8 - bits as u32;
    Some(
        (0..count)
            .map(|i| {
                let f = field(i);
                // Sign extension: the field's top bit moved to the byte's, shifted back.
                if signed {
                    (((f << shift) as i8) >> shift) as u8
                } else {
                    f
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(dtype: DType, packed: &[u8], count: usize) -> Vec<f32> {
        let bytes = unpack(dtype, packed, count).unwrap();
        bytes.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    /// What ONNX's `numpy_helper.to_array` decodes from the bytes 0..=255 of each type.
    fn onnx_patterns() -> impl Iterator<Item = (DType, Vec<&'static str>)> {
        include_str!("low_bit_patterns.txt").lines().filter(|l| !l.starts_with('#')).map(|line| {
            let mut cells = line.split(' ');
            let dtype = match cells.next().unwrap() {
                "F8E4M3FN" => DType::F8E4M3FN,
                "F8E4M3FNUZ" => DType::F8E4M3FNUZ,
                "F8E5M2" => DType::F8E5M2,
                "F8E5M2FNUZ" => DType::F8E5M2FNUZ,
                "F4E2M1" => DType::F4E2M1,
                "F8E8M0" => DType::F8E8M0,
                "U4" => DType::U4,
                "I4" => DType::I4,
                "U2" => DType::U2,
                "I2" => DType::I2,
                other => panic!("unknown type {other}"),
            };
            (dtype, cells.collect())
        })
    }

    #[test]
    fn every_pattern_decodes_as_onnx() {
        let bytes: Vec<u8> = (0..=255).collect();
        let mut types = 0;
        for (dtype, cells) in onnx_patterns() {
            let count = cells.len();
            assert_eq!(packed_len(dtype, count), Some(256), "{dtype}");
            let decoded = unpack(dtype, &bytes, count).unwrap();
            for (i, cell) in cells.iter().enumerate() {
                if dtype.kind() == crate::Kind::Float {
                    let want = f32::from_bits(u32::from_str_radix(cell, 16).unwrap());
                    let got = f32::from_le_bytes(decoded[4 * i..4 * i + 4].try_into().unwrap());
                    assert!(same(got, want), "{dtype} element {i}: {got}, ONNX {want}");
                } else {
                    let want: i64 = cell.parse().unwrap();
                    let got = if dtype.carrier() == DType::I8 { decoded[i] as i8 as i64 } else { decoded[i] as i64 };
                    assert_eq!(got, want, "{dtype} element {i}");
                }
            }
            types += 1;
        }
        assert_eq!(types, 10);
    }

    fn all_patterns(dtype: DType) -> Vec<f32> {
        floats(dtype, &(0..=255u8).collect::<Vec<_>>(), 256)
    }

    fn same(a: f32, b: f32) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    #[test]
    fn float8_landmarks() {
        // Largest finite values, smallest subnormals and the special patterns of each type.
        let e4m3fn = all_patterns(DType::F8E4M3FN);
        assert_eq!((e4m3fn[0x7e], e4m3fn[0x01], e4m3fn[0x38]), (448.0, 2f32.powi(-9), 1.0));
        assert!(e4m3fn[0x7f].is_nan() && e4m3fn[0xff].is_nan());
        assert!(same(e4m3fn[0x80], -0.0));
        let e4m3fnuz = all_patterns(DType::F8E4M3FNUZ);
        assert_eq!((e4m3fnuz[0x7f], e4m3fnuz[0x01], e4m3fnuz[0x40]), (240.0, 2f32.powi(-10), 1.0));
        assert!(e4m3fnuz[0x80].is_nan() && e4m3fnuz[0xff] == -240.0);
        let e5m2 = all_patterns(DType::F8E5M2);
        assert_eq!((e5m2[0x7b], e5m2[0x01], e5m2[0x3c]), (57344.0, 2f32.powi(-16), 1.0));
        assert_eq!((e5m2[0x7c], e5m2[0xfc]), (f32::INFINITY, f32::NEG_INFINITY));
        assert!(e5m2[0x7d].is_nan() && e5m2[0xff].is_nan());
        let e5m2fnuz = all_patterns(DType::F8E5M2FNUZ);
        assert_eq!((e5m2fnuz[0x7f], e5m2fnuz[0x01], e5m2fnuz[0x40]), (57344.0, 2f32.powi(-17), 1.0));
        assert!(e5m2fnuz[0x80].is_nan() && e5m2fnuz[0xff] == -57344.0);
        let e8m0 = all_patterns(DType::F8E8M0);
        assert_eq!((e8m0[0x00], e8m0[0x7f], e8m0[0xfe]), (2f32.powi(-127), 1.0, 2f32.powi(127)));
        assert!(e8m0[0xff].is_nan());
    }

    #[test]
    fn float4_and_packing() {
        // Two elements a byte, the first in the low nibble; an odd count leaves the last high
        // nibble unused.
        let values = floats(DType::F4E2M1, &[0x21, 0xf7, 0x09], 5);
        assert_eq!(values, [0.5, 1.0, 6.0, -6.0, -0.5]);
        let all = floats(DType::F4E2M1, &[0x10, 0x32, 0x54, 0x76], 8);
        assert_eq!(all, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    }

    #[test]
    fn narrow_integers_sign_extend() {
        assert_eq!(unpack(DType::I4, &[0x8f, 0x07], 3).unwrap(), [-1i8 as u8, -8i8 as u8, 7]);
        assert_eq!(unpack(DType::U4, &[0x8f, 0x07], 3).unwrap(), [15, 8, 7]);
        // Four 2-bit elements a byte: 0b11_10_01_00.
        assert_eq!(unpack(DType::I2, &[0xe4], 4).unwrap(), [0, 1, -2i8 as u8, -1i8 as u8]);
        assert_eq!(unpack(DType::U2, &[0xe4, 0x03], 5).unwrap(), [0, 1, 2, 3, 3]);
        assert_eq!(packed_len(DType::U2, 5), Some(2));
        assert_eq!(packed_len(DType::I4, 3), Some(2));
        assert_eq!(packed_len(DType::F8E5M2, 3), Some(3));
    }
}
