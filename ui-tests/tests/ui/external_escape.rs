#[onnx_macro::onnx_model("models/external_escape.onnx")]
pub struct Model;

fn main() {}
