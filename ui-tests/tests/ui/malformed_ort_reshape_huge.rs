#[onnx_macro::onnx_model("models/malformed/ort_reshape_huge.onnx")]
pub struct Model;

fn main() {}
