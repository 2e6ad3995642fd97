//! Element-wise ops without a single Burn call: Where, Hardmax, BitShift.

use super::*;

/// ONNX `Where`: `x` where `condition` holds, else `y`, all broadcast together.
pub fn where_op<const D: usize, K: Basic>(
    condition: Tensor<D, Bool>,
    x: Tensor<D, K>,
    y: Tensor<D, K>,
) -> Tensor<D, K> {
    let dims = broadcast_dims(&[condition.dims(), x.dims(), y.dims()]);
    y.expand(dims).mask_where(condition.expand(dims), x.expand(dims))
}

/// ONNX `Hardmax`: 1 at the first maximum along `axis`, 0 elsewhere.
pub fn hardmax<const D: usize>(x: Tensor<D>, axis: usize) -> Tensor<D> {
    let (dims, dtype) = (x.dims(), x.dtype());
    let n = dims[axis];
    let winner = x.argmax(axis).expand(dims);
    let mut index_dims = [1usize; D];
    index_dims[axis] = n;
    let positions = Tensor::<1, Int>::arange(0..n as i64, &winner.device()).reshape(index_dims).expand(dims);
    winner.equal(positions).float().cast(dtype)
}

/// ONNX `BitShift` of integers of `bits` bits (opset 28's rules, which earlier opsets left
/// undefined): a right shift of a signed value is arithmetic; a shift by a negative amount
/// or by `bits` or more gives what the sign fill alone gives, -1 for a right shift of a
/// negative value and 0 otherwise. A left shift's result is wrapped into the type after.
pub fn bit_shift<const D: usize>(x: Tensor<D, Int>, shift: Tensor<D, Int>, left: bool, bits: u32) -> Tensor<D, Int> {
    let dims = broadcast_dims(&[x.dims(), shift.dims()]);
    let (x, shift) = (x.expand(dims), shift.expand(dims));
    let bits = i64::from(bits);
    let out_of_range = shift.clone().lower_elem(0).bool_or(shift.clone().greater_equal_elem(bits));
    let shift = shift.clamp(0, bits - 1);
    if left {
        x.bitwise_left_shift(shift).mask_fill(out_of_range, 0)
    } else {
        let sign_fill = x.clone().lower_elem(0).int().neg();
        x.bitwise_right_shift(shift).mask_where(out_of_range, sign_fill)
    }
}
