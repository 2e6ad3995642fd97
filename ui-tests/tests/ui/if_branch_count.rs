#[onnx_macro::onnx_model("models/if_branch_count.onnx")]
pub struct Model;

fn main() {}
