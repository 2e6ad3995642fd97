#[onnx_macro::onnx_model("models/graph_input_no_shape.onnx")]
pub struct Model;

fn main() {}
