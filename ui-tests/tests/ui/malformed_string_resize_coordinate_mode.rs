#[onnx_macro::onnx_model("models/malformed/string_resize_coordinate_mode.onnx")]
pub struct Model;

fn main() {}
