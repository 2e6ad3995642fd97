#[onnx_macro::onnx_model(weights = "embed")]
pub struct Model;

fn main() {}
