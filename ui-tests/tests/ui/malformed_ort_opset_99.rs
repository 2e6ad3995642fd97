#[onnx_macro::onnx_model("models/malformed/ort_opset_99.onnx")]
pub struct Model;

fn main() {}
