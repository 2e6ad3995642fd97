#[onnx_macro::onnx_model("models/malformed/decode_empty.onnx")]
pub struct Model;

fn main() {}
