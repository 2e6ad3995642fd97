#[onnx_macro::onnx_model("models/named_dims.onnx", dims = ["H=320", "W"])]
pub struct Model;

fn main() {}
