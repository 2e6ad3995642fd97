//! The imported model over several devices, with Burn's own multi-device pieces (what
//! burn-train's multi-device learner is built on, without burn-train): a replica per device
//! (`Module::fork`), each computing the gradients of its share of the batch in its own thread,
//! the gradients summed per parameter on one device by `MultiGradientsParams` in
//! `ModuleOptimizer::step_multi`. Each share's loss is weighted by its share of the batch, so
//! the sum is the whole batch's mean loss and one step equals a single-device step on the whole
//! batch, up to float rounding. The same code runs on GPUs (`Device::cuda(i)`).

use crate::Digits;
use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{GradientsParams, ModuleOptimizer, MultiGradientsParams};
use burn::tensor::{Device, Int, Tensor};

/// `count` rows cut into `parts` contiguous `(start, length)` ranges, as equal as possible.
pub fn shares(count: usize, parts: usize) -> Vec<(usize, usize)> {
    let parts = parts.max(1);
    (0..parts)
        .map(|i| (count * i / parts, count * (i + 1) / parts - count * i / parts))
        .filter(|&(_, len)| len > 0)
        .collect()
}

/// The cross-entropy of `model` on a batch, the mean over its rows.
pub fn loss(model: &Digits, images: Tensor<4>, targets: Tensor<1, Int>) -> Tensor<1> {
    CrossEntropyLossConfig::new().init(&images.device()).forward(model.forward(images), targets)
}

/// One optimizer step on the batch split over `devices` (autodiff devices); returns the model
/// and the batch's mean loss before the step.
pub fn data_parallel_step(
    model: Digits,
    optimizer: &mut ModuleOptimizer,
    learning_rate: f64,
    (images, targets): (Tensor<4>, Tensor<1, Int>),
    devices: &[Device],
) -> (Digits, f32) {
    let count = images.dims()[0];
    let work: Vec<_> = shares(count, devices.len())
        .into_iter()
        .zip(devices)
        .map(|((start, len), device)| {
            let x = images.clone().narrow(0, start, len).to_device(device);
            let y = targets.clone().narrow(0, start, len).to_device(device);
            (model.clone().fork(device), x, y, len as f64 / count as f64, device.clone())
        })
        .collect();
    let results: Vec<(GradientsParams, Device, f32)> = std::thread::scope(|scope| {
        let handles: Vec<_> = work
            .into_iter()
            .map(|(replica, x, y, weight, device)| {
                scope.spawn(move || {
                    let share = loss(&replica, x, y) * weight;
                    let value = share.clone().into_scalar::<f32>();
                    (GradientsParams::from_grads(share.backward(), &replica), device, value)
                })
            })
            .collect();
        // A replica's panic is the caller's: resumed here, not turned into a wrong step.
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let batch_loss = results.iter().map(|(_, _, value)| value).sum();
    let grads = MultiGradientsParams { grads: results.into_iter().map(|(g, d, _)| (g, d)).collect() };
    (optimizer.step_multi(learning_rate, model, grads), batch_loss)
}

/// Batch inference split over `devices`: a replica of the (inference) model on each, its share
/// of the rows run in its own thread, the logits gathered on the first device in row order.
pub fn forward_split(model: &Digits, images: Tensor<4>, devices: &[Device]) -> Tensor<2> {
    let model = model.valid();
    let count = images.dims()[0];
    let logits: Vec<Tensor<2>> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares(count, devices.len())
            .into_iter()
            .zip(devices)
            .map(|((start, len), device)| {
                let replica = model.clone().to_device(device);
                let x = images.clone().narrow(0, start, len).to_device(device);
                scope.spawn(move || replica.forward(x))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let first = devices.first().cloned().unwrap_or_else(|| images.device());
    Tensor::cat(logits.into_iter().map(|l| l.to_device(&first)).collect(), 0)
}
