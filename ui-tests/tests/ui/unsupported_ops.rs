#[onnx_macro::onnx_model("models/unsupported_ops.onnx")]
pub struct Model;

fn main() {}
