#[onnx_macro::onnx_model("models/unsupported_ops.onnx", simplify = "yes")]
pub struct Model;

fn main() {}
