#[onnx_macro::onnx_model("models/dangling_output.onnx")]
pub struct Model;

fn main() {}
