//! The planted difference of `onnx2burn check`'s tests: a Sub that is right but for one element,
//! one ulp off (`--custom-op Sub=off_by_one_ulp`).

use burn_onnx::burn::tensor::{Tensor, TensorData};
use burn_onnx::hook::NodeAttributes;
use burn_onnx::onnx_custom_op;

/// `a - b`, with the first element moved to the next f32 away from zero.
#[onnx_custom_op]
pub fn off_by_one_ulp(a: Tensor<2>, b: Tensor<1>, _attributes: &NodeAttributes) -> Tensor<2> {
    let difference = a.sub(b.unsqueeze());
    let device = difference.device();
    let shape = difference.dims();
    let mut values: Vec<f32> = difference.into_data().iter::<f32>().collect();
    values[0] = f32::from_bits(values[0].to_bits() + 1);
    Tensor::from_data(TensorData::new(values, shape), &device)
}
