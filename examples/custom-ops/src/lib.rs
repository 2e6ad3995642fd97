//! Hooks for the ops the importer does not know (`example.custom::ChannelScale`,
//! `example.custom::ScaleBias`, `com.microsoft::FastGelu`) and an override of the built-in
//! MatMul, all named in the model attribute.
#![forbid(unsafe_code)]

use burn::tensor::Tensor;
use burn_onnx::hook::NodeAttributes;
use burn_onnx::{onnx_custom_op, onnx_model};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `x * scale` per channel; `scale` is the node's constant second input.
#[onnx_custom_op]
pub fn channel_scale(x: Tensor<4>, scale: Tensor<1>, _attributes: &NodeAttributes) -> Tensor<4> {
    let [channels] = scale.dims();
    x.mul(scale.reshape([1, channels, 1, 1]))
}

/// `x * scale + bias`, both node attributes.
#[onnx_custom_op]
pub fn scale_bias(x: Tensor<4>, attributes: &NodeAttributes) -> Tensor<4> {
    let scale = attributes.float("scale").unwrap_or(1.0);
    let bias = attributes.float("bias").unwrap_or(0.0);
    x.mul_scalar(scale).add_scalar(bias)
}

/// ONNX Runtime's FastGelu: the tanh approximation of GELU.
#[onnx_custom_op]
pub fn fast_gelu(x: Tensor<4>, _attributes: &NodeAttributes) -> Tensor<4> {
    burn::tensor::activation::gelu_approximate(x)
}

/// How many times the MatMul override ran.
pub static MATMUL_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Replaces every MatMul of the model (its types still come from the built-in inference).
#[onnx_custom_op]
pub fn counted_matmul(a: Tensor<4>, b: Tensor<2>, _attributes: &NodeAttributes) -> Tensor<4> {
    MATMUL_CALLS.fetch_add(1, Ordering::SeqCst);
    a.matmul(b.unsqueeze())
}

#[onnx_model(
    "model/custom_ops.onnx",
    custom_ops = [
        "example.custom::ChannelScale" => channel_scale,
        "example.custom::ScaleBias" => scale_bias,
        "com.microsoft::FastGelu" => fast_gelu,
        "MatMul" => counted_matmul,
    ]
)]
pub struct CustomOps;

/// Reads one of the TensorProto files make_model.py wrote.
pub fn read(name: &str) -> onnx_ir::TensorData {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("model").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    onnx_ir::TensorData::decode(&bytes).unwrap_or_else(|e| panic!("cannot decode {}: {e}", path.display()))
}

/// Runs the model on the stored input; the output values and the largest difference from the
/// NumPy reference.
pub fn run() -> (Vec<f32>, f64) {
    let device = burn::tensor::Device::flex();
    let input = read("input.pb");
    let x: Tensor<4> = Tensor::from_data(
        burn::tensor::TensorData::new(
            input.to_f64s().expect("decoded data is in memory").iter().map(|&v| v as f32).collect::<Vec<_>>(),
            input.shape.clone(),
        ),
        &device,
    );
    let y: Vec<f32> = CustomOps::default().forward(x).into_data().iter::<f32>().collect();
    let expected = read("expected.pb").to_f64s().expect("decoded data is in memory");
    let max_diff = y.iter().zip(&expected).map(|(a, b)| (*a as f64 - b).abs()).fold(0.0, f64::max);
    (y, max_diff)
}
