#[onnx_macro::onnx_model("models/inference_failure.onnx")]
pub struct Model;

fn main() {}
