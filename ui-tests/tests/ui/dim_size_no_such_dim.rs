#[onnx_macro::onnx_model("models/named_dims.onnx", dims = ["height=320"])]
pub struct Model;

fn main() {}
