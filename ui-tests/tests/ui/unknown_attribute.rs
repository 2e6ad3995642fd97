#[onnx_macro::onnx_model("models/unknown_attribute.onnx")]
pub struct Model;

fn main() {}
