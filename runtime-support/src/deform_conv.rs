//! ONNX DeformConv (2-D) through Burn's `deform_conv2d`, whose offset and mask layouts are
//! ONNX's: a (row, column) offset pair, and a mask value, per offset group and kernel tap.

use burn::tensor::module::deform_conv2d as burn_deform_conv2d;
use burn::tensor::ops::{DeformConvOptions, PadMode};
use burn::tensor::Tensor;

/// `options.padding` is ignored: `pads` gives ONNX's `(begin, end)` per spatial axis. Burn pads
/// both sides alike, so unequal pads become zeros added to the input first, which sampling
/// reads as it reads outside the input (zero); the output size is the offset's either way.
pub fn deform_conv2d(
    x: Tensor<4>,
    offset: Tensor<4>,
    weight: Tensor<4>,
    mask: Option<Tensor<4>>,
    bias: Option<Tensor<1>>,
    pads: [(usize, usize); 2],
    mut options: DeformConvOptions<2>,
) -> Tensor<4> {
    let x = if pads.iter().all(|(begin, end)| begin == end) {
        options.padding = pads.map(|p| p.0);
        x
    } else {
        options.padding = [0, 0];
        x.pad([(0, 0), (0, 0), pads[0], pads[1]], PadMode::Constant(0.0))
    };
    burn_deform_conv2d(x, offset, weight, mask, bias, options)
}

/// Each case against ONNX's reference evaluator (`scripts/helper_references.py`, the case named
/// in the test).
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, floats, wave};

    #[test]
    fn groups_offset_groups_stride_dilation_and_asymmetric_pads() {
        // Case deform_conv.
        let x = wave([1, 4, 4, 5], 1);
        let weight = wave([2, 2, 3, 2], 2);
        let offset = wave([1, 24, 2, 4], 3).mul_scalar(3.0);
        let mask = wave([1, 12, 2, 4], 4).add_scalar(0.5);
        let bias = floats(&[0.25, -0.5], [2]);
        let options = DeformConvOptions::new([2, 1], [0, 0], [1, 2], 2, 2);
        let y = deform_conv2d(x, offset, weight, Some(mask), Some(bias), [(1, 0), (0, 1)], options);
        let expected = [
            0.536_946_6,
            0.216_289_73,
            0.165_208,
            0.273_286_13,
            0.159_406_33,
            0.522_745_4,
            0.119_427_71,
            0.292_029,
            -0.511_812_87,
            -0.440_973_22,
            -0.574_175_5,
            -0.619_154_4,
            -0.286_908_6,
            -0.622_657_06,
            -0.460_208_98,
            -0.596_335_77,
        ];
        assert_close(y, [1, 2, 2, 4], &expected, 1e-5);
    }
}
