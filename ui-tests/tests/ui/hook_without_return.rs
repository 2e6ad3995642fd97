struct Tensor<const D: usize>;

#[onnx_macro::onnx_custom_op]
fn channel_scale(x: Tensor<4>, _attributes: &u8) {
    let _ = x;
}

fn main() {}
