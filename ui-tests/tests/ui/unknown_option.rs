#[onnx_macro::onnx_model("models/unsupported_ops.onnx", weights = "embed", optimise = true)]
pub struct Model;

fn main() {}
