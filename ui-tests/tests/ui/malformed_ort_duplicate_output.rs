#[onnx_macro::onnx_model("models/malformed/ort_duplicate_output.onnx")]
pub struct Model;

fn main() {}
