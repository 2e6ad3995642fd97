#[onnx_macro::onnx_model("models/graph_input_no_shape.onnx", input_shapes = ["images=[batch, 3]"])]
pub struct Model;

fn main() {}
