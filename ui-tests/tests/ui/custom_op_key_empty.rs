#[onnx_macro::onnx_model("models/unsupported_ops.onnx", custom_ops = ["example.custom::" => channel_scale])]
pub struct Model;

fn main() {}
