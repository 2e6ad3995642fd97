#[onnx_macro::onnx_model("models/malformed/function_recursive.onnx")]
pub struct Model;

fn main() {}
