#[onnx_macro::onnx_model("models/malformed/arity_identity_0_inputs.onnx")]
pub struct Model;

fn main() {}
