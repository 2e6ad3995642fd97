struct Tensor<const D: usize>;

#[onnx_macro::onnx_custom_op]
fn channel_scale() -> Tensor<4> {
    Tensor
}

fn main() {}
