#[onnx_macro::onnx_model("models/if_branch_types.onnx")]
pub struct Model;

fn main() {}
