#[onnx_macro::onnx_model("models/unsupported_ops.onnx", weights = "disk")]
pub struct Model;

fn main() {}
