#[onnx_macro::onnx_model("models/dangling_input.onnx")]
pub struct Model;

fn main() {}
