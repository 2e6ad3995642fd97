struct Tensor<const D: usize>;

struct Kernels;

impl Kernels {
    #[onnx_macro::onnx_custom_op]
    fn channel_scale(&self, x: Tensor<4>, _attributes: &u8) -> Tensor<4> {
        x
    }
}

fn main() {}
