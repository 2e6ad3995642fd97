#[onnx_macro::onnx_model("models/cycle.onnx")]
pub struct Model;

fn main() {}
