#[onnx_macro::onnx_model("models/attribute_type.onnx")]
pub struct Model;

fn main() {}
