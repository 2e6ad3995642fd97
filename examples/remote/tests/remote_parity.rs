//! The digits classifier run on a Burn remote device: a `remote-server` process on 127.0.0.1
//! (one flex device), the weights loaded onto it, the 450 test images classified there. Its
//! logits equal, bit for bit, a local run through the same Burn flex ops (the server runs Burn's
//! ops; burn_onnx's own flex kernels, switched off for that run, take only local flex tensors),
//! agree with the default local run and with ONNX Runtime within 1e-4, and the server stops
//! when the test closes its stdin. An unreachable server is an error, not a skipped check.

use burn::tensor::{Device, Tensor};
use digits::{read_data, test_images, Digits};
use remote_example::{connect, median_ms, LoopbackServer};

fn values(logits: Tensor<2>) -> Vec<f32> {
    logits.into_data().iter::<f32>().collect()
}

fn max_diff(a: &[f32], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - y).abs()).fold(0.0, f64::max)
}

#[test]
fn digits_on_a_remote_device_equal_the_local_run() {
    let server = LoopbackServer::start(env!("CARGO_BIN_EXE_remote-server").as_ref()).expect("server");
    let remote = connect(server.url()).expect("remote device");
    let remote_model = Digits::from_embedded(&remote);
    let remote_logits = values(remote_model.forward(test_images(&remote)));

    // Locally with Burn's own flex ops, as the server runs them (burn_onnx's flex kernels off).
    let flex = Device::flex();
    let local_model = Digits::from_embedded(&flex);
    burn_onnx::set_flex_kernels(false);
    let burn_ops_logits = values(local_model.forward(test_images(&flex)));
    let burn_ops_ms = median_ms(5, || values(local_model.forward(test_images(&flex))));
    burn_onnx::set_flex_kernels(true);
    let local_logits = values(local_model.forward(test_images(&flex)));

    let ort = read_data("ort_logits.pb").to_f64s().expect("decoded data is in memory");
    assert_eq!(remote_logits.len(), ort.len());
    let differing = remote_logits.iter().zip(&burn_ops_logits).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
    assert_eq!(
        differing,
        0,
        "{differing} of {} remote logits differ from the local run of the same kernels",
        ort.len()
    );
    let local: Vec<f64> = local_logits.iter().map(|&v| f64::from(v)).collect();
    let (to_local, to_ort) = (max_diff(&remote_logits, &local), max_diff(&remote_logits, &ort));
    assert!(to_local <= 1e-4 && to_ort <= 1e-4, "remote vs local {to_local:e}, vs ONNX Runtime {to_ort:e}");

    // Time per forward of the 450 images, outputs read back (book/src/beyond-one-machine.md).
    let local_ms = median_ms(5, || values(local_model.forward(test_images(&flex))));
    let remote_ms = median_ms(5, || values(remote_model.forward(test_images(&remote))));
    println!(
        "digits, 450 images, per forward: local flex {local_ms:.2} ms (burn_onnx's kernels), {burn_ops_ms:.2} ms \
         (Burn's ops), remote on the loopback {remote_ms:.2} ms; remote = local Burn ops bit for bit, \
         {to_ort:e} from ONNX Runtime"
    );
    server.stop().expect("the server stops");
}

#[test]
fn an_unreachable_server_is_an_error() {
    // Port 1 on the loopback address: nothing listens there.
    assert!(connect("ws://127.0.0.1:1").is_err(), "connected to a server that does not exist");
}
