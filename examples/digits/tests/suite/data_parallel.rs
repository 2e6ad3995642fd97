//! Data-parallel fine-tuning of the imported digits model over two devices (src/parallel.rs):
//! 30 Adam steps with each batch of 64 split over two flex devices follow the single-device run
//! on the same batches (every step's loss within 1e-4, the tuned model's test logits within
//! 1e-3) and lower the loss on the whole training split; the same over a flex and an ndarray device, whose kernels differ,
//! within the same bounds. Batch inference split over two devices equals the single-device
//! forward.

use burn::module::Module;
use burn::optim::AdamConfig;
use burn::tensor::{Device, Int, Tensor, TensorData};
use digits::parallel::{data_parallel_step, forward_split, loss, shares};
use digits::{test_images, train_images, train_labels, Digits};

const STEPS: usize = 30;
const BATCH: usize = 64;
const LEARNING_RATE: f64 = 1e-3;

/// The training batches, the same for every run.
fn batches(device: &Device) -> Vec<(Tensor<4>, Tensor<1, Int>)> {
    let images = train_images(device);
    let labels = train_labels();
    let targets = Tensor::<1, Int>::from_data(TensorData::new(labels.clone(), [labels.len()]), device);
    (0..STEPS)
        .map(|step| {
            let start = (step * BATCH) % (labels.len() - BATCH);
            (images.clone().narrow(0, start, BATCH), targets.clone().narrow(0, start, BATCH))
        })
        .collect()
}

/// Fine-tunes from the file's weights on `devices` (one device: the plain single-device loop);
/// the loss of every step before it, and the test logits of the tuned model on flex.
fn fine_tune(devices: &[Device]) -> (Vec<f32>, Vec<f32>) {
    let first = &devices[0];
    let mut model = Digits::from_embedded(first);
    let whole_split = |model: &Digits| {
        let labels = train_labels();
        let targets = Tensor::<1, Int>::from_data(TensorData::new(labels.clone(), [labels.len()]), first);
        loss(&model.clone().fork(first), train_images(first), targets).into_scalar::<f32>()
    };
    let before = whole_split(&model);
    let mut optimizer = AdamConfig::new().init();
    let mut losses = vec![];
    for batch in batches(first) {
        let step_loss;
        if devices.len() == 1 {
            let batch_loss = loss(&model, batch.0, batch.1);
            step_loss = batch_loss.clone().into_scalar::<f32>();
            let grads = burn::optim::GradientsParams::from_grads(batch_loss.backward(), &model);
            model = optimizer.step(LEARNING_RATE, model, grads);
        } else {
            (model, step_loss) = data_parallel_step(model, &mut optimizer, LEARNING_RATE, batch, devices);
        }
        losses.push(step_loss);
    }
    // The loss on the whole training split falls (the batches' own losses vary with the batch).
    let after = whole_split(&model);
    println!("digits on {} device(s): training-split loss {before:.5} -> {after:.5}", devices.len());
    assert!(after < before, "the training-split loss did not fall: {before} -> {after}");
    let flex = Device::flex();
    let tuned = model.valid().to_device(&flex);
    (losses, tuned.forward(test_images(&flex)).into_data().iter::<f32>().collect())
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn check_against_single(name: &str, devices: &[Device], single: &(Vec<f32>, Vec<f32>)) {
    let (losses, logits) = fine_tune(devices);
    let (loss_diff, logit_diff) = (max_diff(&losses, &single.0), max_diff(&logits, &single.1));
    let curve = |l: &[f32]| [0, STEPS / 3, 2 * STEPS / 3, STEPS - 1].map(|i| format!("{:.4}", l[i])).join(" ");
    println!(
        "digits data-parallel ({name}): loss at steps 0, 10, 20, 29: {} (single device: {}); \
         max loss difference {loss_diff:e}, max test-logit difference {logit_diff:e}",
        curve(&losses),
        curve(&single.0)
    );
    let early: f32 = losses[..5].iter().sum::<f32>() / 5.0;
    let late: f32 = losses[STEPS - 5..].iter().sum::<f32>() / 5.0;
    assert!(late < early, "{name}: the loss did not fall: {early} over the first 5 steps, {late} over the last 5");
    assert!(loss_diff <= 1e-4, "{name}: a step's loss differs from the single-device run by {loss_diff:e}");
    assert!(
        logit_diff <= 1e-3,
        "{name}: the tuned model's test logits differ from the single-device run's by {logit_diff:e}"
    );
}

#[test]
fn data_parallel_fine_tuning_matches_one_device() {
    let single = fine_tune(&[Device::flex().autodiff()]);
    let two_flex = [Device::flex().autodiff(), Device::flex().autodiff()];
    check_against_single("two flex devices", &two_flex, &single);
    // Two different devices: every gradient and replica crosses between them.
    #[allow(deprecated)] // ndarray is deprecated in Burn 0.22, and is the other CPU backend here
    let flex_and_ndarray = [Device::flex().autodiff(), Device::ndarray().autodiff()];
    check_against_single("flex and ndarray", &flex_and_ndarray, &single);
}

#[test]
fn batch_inference_split_over_two_devices() {
    let flex = Device::flex();
    let model = Digits::from_embedded(&flex);
    let images = test_images(&flex);
    let whole: Vec<f32> = model.forward(images.clone()).into_data().iter::<f32>().collect();
    assert_eq!(shares(images.dims()[0], 2), [(0, 225), (225, 225)]);
    let split: Vec<f32> =
        forward_split(&model, images, &[flex.clone(), flex.clone()]).into_data().iter::<f32>().collect();
    let diff = max_diff(&split, &whole);
    println!("digits: 450 test images split over two devices, max logit difference from one forward {diff:e}");
    assert!(diff <= 1e-5, "split inference differs from one forward by {diff:e}");
}
