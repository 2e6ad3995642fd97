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

/// Named dims given sizes, as ONNX Runtime's free-dimension overrides: in the shape of `x`
/// (`DynamicDimension.0` and `W`, the latter shared with `bias`) and by denotation (`H` stays
/// open): `forward` is specialised to them and checks them.
#[onnx_model(
    "../ui-tests/models/named_dims.onnx",
    input_shapes = ["x=[2, 3, ?, 4]"],
    dims = ["DATA_BATCH=2"]
)]
pub struct FixedDims;

fn fixed_dims_forward(x: [usize; 4], bias: usize) -> Tensor<4> {
    let device = Device::default();
    FixedDims::default().forward(Tensor::ones(x, &device), Tensor::ones([bias], &device))
}

#[test]
fn declared_sizes_fix_named_dims() {
    let y = fixed_dims_forward([2, 3, 5, 4], 4);
    assert_eq!(y.dims(), [2, 3, 5, 4]);
    assert_eq!(y.into_data().iter::<f32>().collect::<Vec<_>>(), vec![2.0; 120]);
}

#[test]
#[should_panic(expected = "input `x`: dim 3 (`W`) was declared 4 at import, got 6")]
fn forward_checks_a_fixed_dim() {
    fixed_dims_forward([2, 3, 5, 6], 4);
}

#[test]
#[should_panic(expected = "input `bias`: dim 0 (`W`) was declared 4 at import, got 5")]
fn forward_checks_a_dim_fixed_by_name_on_every_input() {
    fixed_dims_forward([2, 3, 5, 4], 5);
}
