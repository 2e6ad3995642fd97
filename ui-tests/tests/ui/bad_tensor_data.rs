#[onnx_macro::onnx_model("models/bad_tensor_data.onnx")]
pub struct Model;

fn main() {}
