//! ONNX `BitCast` (opset 26): the bits of each element read as another type of the same width,
//! on the host (no backend reinterprets a tensor's storage in place).

use alloc::vec::Vec;
use burn::tensor::kind::Basic;
use burn::tensor::{bf16, f16, DType, Tensor, TensorData};

/// An element type whose values Burn's tensors hold exactly, named as `onnx_ir::DType` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitType {
    /// `bool`, one byte (0 or 1).
    Bool,
    /// 8-bit unsigned integer.
    U8,
    /// 8-bit signed integer.
    I8,
    /// 16-bit unsigned integer.
    U16,
    /// 16-bit signed integer.
    I16,
    /// IEEE 754 half precision.
    F16,
    /// bfloat16: f32's exponent with a 7-bit mantissa.
    BF16,
    /// 32-bit unsigned integer.
    U32,
    /// 32-bit signed integer.
    I32,
    /// IEEE 754 single precision.
    F32,
    /// 64-bit unsigned integer.
    U64,
    /// 64-bit signed integer.
    I64,
    /// IEEE 754 double precision.
    F64,
}

/// `x`'s elements, of ONNX type `from`, with their bits read as type `to` (of the same width).
pub fn bit_cast<const D: usize, K: Basic, K2: Basic>(x: Tensor<D, K>, from: BitType, to: BitType) -> Tensor<D, K2> {
    let device = x.device();
    let data = x.into_data();
    let shape = data.shape().clone();
    let bits: Vec<u64> = match from {
        BitType::F16 => data.iter::<f32>().map(|v| f16::from_f32(v).to_bits().into()).collect(),
        BitType::BF16 => data.iter::<f32>().map(|v| bf16::from_f32(v).to_bits().into()).collect(),
        BitType::F32 => data.iter::<f32>().map(|v| v.to_bits().into()).collect(),
        BitType::F64 => data.iter::<f64>().map(f64::to_bits).collect(),
        // Bools read as 0 or 1; integers in two's complement, whose low bits are their bit
        // pattern at any width.
        _ => data.iter::<i64>().map(|v| v as u64).collect(),
    };
    let out = match to {
        BitType::Bool => TensorData::new(bits.iter().map(|&b| b != 0).collect::<Vec<_>>(), shape),
        BitType::F16 => TensorData::new(bits.iter().map(|&b| f16::from_bits(b as u16)).collect::<Vec<_>>(), shape),
        BitType::BF16 => TensorData::new(bits.iter().map(|&b| bf16::from_bits(b as u16)).collect::<Vec<_>>(), shape),
        BitType::F32 => TensorData::new(bits.iter().map(|&b| f32::from_bits(b as u32)).collect::<Vec<_>>(), shape),
        BitType::F64 => TensorData::new(bits.iter().map(|&b| f64::from_bits(b)).collect::<Vec<_>>(), shape),
        BitType::U8 => TensorData::new(bits.iter().map(|&b| i64::from(b as u8)).collect::<Vec<_>>(), shape),
        BitType::I8 => TensorData::new(bits.iter().map(|&b| i64::from(b as i8)).collect::<Vec<_>>(), shape),
        BitType::U16 => TensorData::new(bits.iter().map(|&b| i64::from(b as u16)).collect::<Vec<_>>(), shape),
        BitType::I16 => TensorData::new(bits.iter().map(|&b| i64::from(b as i16)).collect::<Vec<_>>(), shape),
        BitType::U32 => TensorData::new(bits.iter().map(|&b| i64::from(b as u32)).collect::<Vec<_>>(), shape),
        BitType::I32 => TensorData::new(bits.iter().map(|&b| i64::from(b as i32)).collect::<Vec<_>>(), shape),
        // Burn's ints are signed: a u64 past i64::MAX is held as its two's complement, as in
        // every other u64 value the generated code computes.
        BitType::U64 | BitType::I64 => TensorData::new(bits.iter().map(|&b| b as i64).collect::<Vec<_>>(), shape),
    };
    // Int results in i64 storage: Burn's default int (i32 on some backends) cannot hold
    // every u32, i64 or u64 bit pattern.
    match to {
        // Floats keep the target's dtype (the data's own).
        BitType::F16 | BitType::BF16 | BitType::F32 | BitType::F64 => {
            let dtype = out.dtype();
            Tensor::from_data(out, (&device, dtype))
        }
        BitType::Bool => Tensor::from_data(out, &device),
        _ => Tensor::from_data(out, (&device, DType::I64)),
    }
}

/// Bit patterns worked out by hand (IEEE 754 encodings, two's complement).
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{floats, int_values, ints};
    use burn::tensor::{Bool, Int};

    #[test]
    fn floats_read_as_integers_of_their_width_and_back() {
        // 1.0f32 is 0x3F80_0000, -2.0f32 0xC000_0000 (-2^30 as i32, 2^31 + 2^30 as u32).
        let x = || floats(&[1.0, -2.0], [2]);
        assert_eq!(int_values(bit_cast::<1, _, Int>(x(), BitType::F32, BitType::I32)).1, [0x3F80_0000, -(1 << 30)]);
        assert_eq!(int_values(bit_cast::<1, _, Int>(x(), BitType::F32, BitType::U32)).1, [0x3F80_0000, 0xC000_0000]);
        let back: Tensor<1> = bit_cast(ints(&[0x3F80_0000, -(1 << 30)], [2]), BitType::I32, BitType::F32);
        assert_eq!(back.into_data().iter::<f32>().collect::<Vec<_>>(), [1.0, -2.0]);
        // Half precision: 1.0 is 0x3C00, -0.0 0x8000; bfloat16 1.0 is 0x3F80.
        let halves = bit_cast::<1, _, Int>(floats(&[1.0, -0.0], [2]), BitType::F16, BitType::U16);
        assert_eq!(int_values(halves).1, [0x3C00, 0x8000]);
        assert_eq!(int_values(bit_cast::<1, _, Int>(floats(&[1.0], [1]), BitType::BF16, BitType::I16)).1, [0x3F80]);
        let half: Tensor<1> = bit_cast(ints(&[0x3C00, 0xC000], [2]), BitType::U16, BitType::F16);
        assert_eq!(half.into_data().iter::<f32>().collect::<Vec<_>>(), [1.0, -2.0]);
    }

    #[test]
    fn integers_change_signedness_and_doubles_keep_all_64_bits() {
        assert_eq!(
            int_values(bit_cast::<1, Int, Int>(ints(&[-1, 127, -128], [3]), BitType::I8, BitType::U8)).1,
            [255, 127, 128]
        );
        assert_eq!(
            int_values(bit_cast::<1, Int, Int>(ints(&[65535, 32768], [2]), BitType::U16, BitType::I16)).1,
            [-1, -32768]
        );
        // u64 2^64 - 1 is held as its two's complement, -1.
        assert_eq!(int_values(bit_cast::<1, Int, Int>(ints(&[-1], [1]), BitType::I64, BitType::U64)).1, [-1]);
        let one = Tensor::<1>::from_data(TensorData::new(vec![1.0f64], [1]), (&crate::test_util::device(), DType::F64));
        assert_eq!(int_values(bit_cast::<1, _, Int>(one, BitType::F64, BitType::I64)).1, [0x3FF0_0000_0000_0000]);
        let flags: Tensor<1, Bool> = bit_cast(ints(&[0, 1], [2]), BitType::U8, BitType::Bool);
        assert_eq!(flags.into_data().iter::<bool>().collect::<Vec<_>>(), [false, true]);
    }
}
