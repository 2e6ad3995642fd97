//! Blocked quantization's parameters (DequantizeLinear and QuantizeLinear with `block_size`).

use super::*;

/// Blocked quantization's scale or zero point (ONNX `block_size`): each value along `axis`
/// repeated `block_size` times, cut to `len` (the quantized tensor's length there).
pub fn repeat_blocks<const D: usize>(param: Tensor<D>, axis: usize, block_size: usize, len: usize) -> Tensor<D> {
    let indices = Tensor::<1, Int>::arange(0..len as i64, &param.device()).div_scalar(block_size as i64);
    param.select(axis, indices)
}
