#[onnx_macro::onnx_model("models/does_not_exist.onnx")]
pub struct Model;

fn main() {}
