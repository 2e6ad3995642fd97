#[onnx_macro::onnx_model("models/malformed/ort_matmul_inner_dims.onnx")]
pub struct Model;

fn main() {}
