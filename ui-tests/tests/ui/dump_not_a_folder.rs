// The dump folder is a file (the model itself).
#[onnx_macro::onnx_model("models/relu.onnx", dump = "models/relu.onnx")]
pub struct Model;

fn main() {}
