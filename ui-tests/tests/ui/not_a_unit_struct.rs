#[onnx_macro::onnx_model("models/unsupported_ops.onnx")]
pub struct Model {
    layer: u32,
}

fn main() {}
