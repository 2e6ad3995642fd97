//! Which weights of an imported model train: the float constants read as a layer's weight (Conv,
//! Gemm/MatMul, norms, embedding tables, recurrent cells) are parameters with `require_grad`
//! set; a constant read as a plain operand (a bias Added here, which a model may equally use as
//! a fixed table) is loaded frozen, and the user unfreezes it on its public field.

use burn::tensor::{Device, Tensor};
use burn_onnx::onnx_model;

#[onnx_model("models/add_v14_const/model.onnx")]
pub struct AddConstant;

#[test]
fn an_operand_constant_is_frozen_until_unfrozen() {
    let device = Device::default().autodiff();
    let mut model = AddConstant::from_embedded(&device);
    let input = || Tensor::<3>::ones([2, 3, 4], &device).require_grad();
    let grads = model.forward(input()).sum().backward();
    assert!(model.b.val().grad(&grads).is_none(), "loaded frozen");

    model.b = model.b.set_require_grad(true);
    let grads = model.forward(input()).sum().backward();
    let grad = model.b.val().grad(&grads).expect("unfrozen: a gradient");
    // Each of b's 4 values is added to 2 × 3 outputs of the sum.
    assert_eq!(grad.into_data().iter::<f32>().collect::<Vec<_>>(), [6.0; 4]);
}
