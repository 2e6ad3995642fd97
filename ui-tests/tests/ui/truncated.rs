#[onnx_macro::onnx_model("models/truncated.onnx")]
pub struct Model;

fn main() {}
