//! `input_shapes`: a model that gives its input no shape imports once the user declares one, and
//! `forward` takes the declared rank (the node suite runs such models against ONNX's outputs:
//! tests/onnx-backend/input-shapes.txt).

use burn::tensor::{Device, Tensor};
use burn_onnx::onnx_model;

#[onnx_model("../ui-tests/models/graph_input_no_shape.onnx", input_shapes = ["x=[batch, 3]"])]
pub struct DeclaredRank;

#[test]
fn a_declared_shape_types_forward() {
    let device = Device::default();
    let x = Tensor::<2>::ones([5, 3], &device);
    let y: Tensor<2> = DeclaredRank::default().forward(x);
    assert_eq!(y.dims(), [5, 3], "the batch dim stays symbolic");
}
