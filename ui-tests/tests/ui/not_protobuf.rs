#[onnx_macro::onnx_model("models/not_protobuf.onnx")]
pub struct Model;

fn main() {}
