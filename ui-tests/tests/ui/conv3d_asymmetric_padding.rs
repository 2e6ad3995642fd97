#[onnx_macro::onnx_model("models/conv3d_asymmetric_padding.onnx")]
pub struct Model;

fn main() {}
