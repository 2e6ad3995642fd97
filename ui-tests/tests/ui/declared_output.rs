#[onnx_macro::onnx_model("models/declared_output.onnx")]
pub struct Model;

fn main() {}
