//! Micro-benchmark of the flex kernels of `burn_onnx::ops` against Burn's own ops on the same
//! inputs, at the shapes of the real models' layers. Run by hand, in release:
//!
//!   RAYON_NUM_THREADS=1 cargo bench -p onnx-burn --bench kernels [-- NAME-SUBSTRING]
//!
//! Each case runs both versions interleaved and prints the best time of each and their ratio
//! (the machine is noisy: read the ratio). `cargo test` (or `-- --smoke`) runs every case once.

use burn::tensor::ops::ConvOptions;
use burn::tensor::{activation, Device, Tensor, TensorData};
use burn_onnx::ops;
use std::time::{Duration, Instant};

/// Deterministic values in [-1, 1).
fn tensor<const D: usize>(shape: [usize; D], seed: u64) -> Tensor<D> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let n = shape.iter().product();
    let values: Vec<f32> = (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect();
    Tensor::from_data(TensorData::new(values, shape), &Device::flex())
}

/// The best of `rounds` timings of `f`, each over enough calls to last about 20 ms.
fn best(rounds: usize, f: &mut dyn FnMut()) -> Duration {
    let start = Instant::now();
    f();
    let calls = (Duration::from_millis(20).as_secs_f64() / start.elapsed().as_secs_f64().max(1e-7)).clamp(1.0, 1e4);
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            (0..calls as usize).for_each(|_| f());
            start.elapsed() / calls as u32
        })
        .min()
        .unwrap_or_default()
}

struct Bench {
    rounds: usize,
    /// Only the cases whose name contains this (`cargo bench ... -- conv`).
    filter: Option<String>,
}

impl Bench {
    /// Times `ours` and `burn` (interleaved, `rounds` each) and prints a table row.
    fn case(&self, name: &str, mut ours: impl FnMut() + Send, mut burn: impl FnMut() + Send) {
        if self.filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
            return;
        }
        let (mut a, mut b) = (Duration::MAX, Duration::MAX);
        for _ in 0..self.rounds {
            // On the calling thread's pool, as a model's forward runs (a parallel op called from
            // outside one hands its work over and sleeps: two context switches per call).
            a = a.min(ops::on_pool(|| best(1, &mut ours)));
            b = b.min(ops::on_pool(|| best(1, &mut burn)));
        }
        let ratio = a.as_secs_f64() / b.as_secs_f64();
        println!("| {name} | {:.1} µs | {:.1} µs | {ratio:.2}× |", a.as_secs_f64() * 1e6, b.as_secs_f64() * 1e6);
    }

    /// A convolution `x [n, c, h, w]`, `w [co, c / groups, k, k]`, with bias, ours against Burn's.
    fn conv(&self, name: &str, x: [usize; 4], w: [usize; 4], stride: usize, pad: usize, groups: usize) {
        let (x, w, b) = (tensor(x, 1), tensor(w, 2), tensor([w[0]], 3));
        let options = ConvOptions::new_with_padding([stride; 2], [(pad, pad); 2], [1, 1], groups);
        self.case(
            name,
            || {
                let y = ops::conv2d(x.clone(), w.clone(), Some(b.clone()), options.clone(), ops::ConvActivation::Relu);
                std::hint::black_box(y);
            },
            || {
                let y = burn::tensor::module::conv2d(x.clone(), w.clone(), Some(b.clone()), options.clone());
                std::hint::black_box(activation::relu(y));
            },
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test` runs it at smoke size.
    let smoke = !std::env::args().any(|a| a == "--bench") || std::env::args().any(|a| a == "--smoke");
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let bench = Bench { rounds: if smoke { 1 } else { 7 }, filter };
    let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into());
    println!("flex kernels against Burn's ops, {threads} thread(s), best of {} rounds\n", bench.rounds);
    println!("| kernel | ours | Burn | ratio |\n|---|---|---|---|");
    bench.conv("conv 3×3, 64→64, 56×56 (ResNet)", [1, 64, 56, 56], [64, 64, 3, 3], 1, 1, 1);
    bench.conv("conv 1×1, 256→64, 56×56 (ResNet)", [1, 256, 56, 56], [64, 256, 1, 1], 1, 0, 1);
    bench.conv("conv 7×7/2, 3→64, 224×224 (stem)", [1, 3, 224, 224], [64, 3, 7, 7], 2, 3, 1);
    bench.conv("conv 1×1, 1024→352, 7×7 (Inception)", [1, 1024, 7, 7], [352, 1024, 1, 1], 1, 0, 1);
    bench.conv("conv 3×3, 192→320, 7×7 (Inception)", [1, 192, 7, 7], [320, 192, 3, 3], 1, 1, 1);
    bench.conv("conv 3×3, 256→256, 14×14 (ResNet)", [1, 256, 14, 14], [256, 256, 3, 3], 1, 1, 1);
    bench.conv("conv 3×3, 512→512, 7×7 (ResNet)", [1, 512, 7, 7], [512, 512, 3, 3], 1, 1, 1);
    bench.conv("conv 5×1, 256→512, 512×1 (magika)", [1, 256, 512, 1], [512, 256, 5, 1], 1, 0, 1);
    bench.conv("grouped 1×1, 272→272, 4 groups, 14×14 (ShuffleNet)", [1, 272, 14, 14], [272, 68, 1, 1], 1, 0, 4);
    bench.conv("depthwise 3×3, 272, 14×14 (ShuffleNet)", [1, 272, 14, 14], [272, 1, 3, 3], 1, 1, 272);
    bench.conv("depthwise 3×3/2, 112, 56×56 (ShuffleNet)", [1, 112, 56, 56], [112, 1, 3, 3], 2, 1, 112);
    bench.conv("depthwise 5×5, 192, 40×40 (PP-OCR)", [1, 192, 40, 40], [192, 1, 5, 5], 1, 2, 192);
    bench.conv("depthwise 3×3, 32, 160×160 (PP-OCR)", [1, 32, 160, 160], [32, 1, 3, 3], 1, 1, 32);
    // A mobile network's last planes (MNASNet at 64×64: 2×2 to 16×16).
    bench.conv("depthwise 3×3, 480, 2×2 (MNASNet)", [1, 480, 2, 2], [480, 1, 3, 3], 1, 1, 480);
    bench.conv("depthwise 5×5, 240, 4×4 (MNASNet)", [1, 240, 4, 4], [240, 1, 5, 5], 1, 2, 240);
    bench.conv("depthwise 3×3/2, 144, 16×16 (MNASNet)", [1, 144, 16, 16], [144, 1, 3, 3], 2, 1, 144);
    bench.conv("depthwise 3×3, 96, 8×8 (MNASNet)", [1, 96, 8, 8], [96, 1, 3, 3], 1, 1, 96);
    bench.conv("depthwise 3×3, 48, 12×12", [1, 48, 12, 12], [48, 1, 3, 3], 1, 1, 48);
    bench.conv("depthwise 3×3, 48, 16×16 (MNASNet)", [1, 48, 16, 16], [48, 1, 3, 3], 1, 1, 48);
    // MobileNetV2 ×0.35 at 64×64.
    bench.conv("depthwise 3×3/2, 48, 32×32 (MobileNetV2)", [1, 48, 32, 32], [48, 1, 3, 3], 2, 1, 48);
    bench.conv("depthwise 3×3, 16, 32×32 (MobileNetV2)", [1, 16, 32, 32], [16, 1, 3, 3], 1, 1, 16);
    bench.conv("depthwise 3×3, 144, 4×4 (MobileNetV2)", [1, 144, 4, 4], [144, 1, 3, 3], 1, 1, 144);
    bench.conv("depthwise 3×3/2, 192, 4×4 (MobileNetV2)", [1, 192, 4, 4], [192, 1, 3, 3], 2, 1, 192);
    bench.conv("depthwise 3×3, 336, 2×2 (MobileNetV2)", [1, 336, 2, 2], [336, 1, 3, 3], 1, 1, 336);
    bench.conv("conv 1×1, 56→336, 2×2 (MobileNetV2)", [1, 56, 2, 2], [336, 56, 1, 1], 1, 0, 1);
    bench.conv("conv 1×1, 336→56, 2×2 (MobileNetV2)", [1, 336, 2, 2], [56, 336, 1, 1], 1, 0, 1);
    bench.conv("conv 1×1, 112→1280, 2×2 (MobileNetV2)", [1, 112, 2, 2], [1280, 112, 1, 1], 1, 0, 1);
    bench.conv("conv 1×1, 24→144, 4×4 (MobileNetV2)", [1, 24, 4, 4], [144, 24, 1, 1], 1, 0, 1);
    bench.conv("conv 1×1, 16→96, 8×8 (MobileNetV2)", [1, 16, 8, 8], [96, 16, 1, 1], 1, 0, 1);
    // Narrow networks at 64×64 (the zoo's ResNet-18 ×0.25, SqueezeNet 1.1): few rows per product.
    bench.conv("conv 7×7/2, 3→64, 2 × 64×64 (ResNet-18 ×0.25)", [2, 3, 64, 64], [64, 3, 7, 7], 2, 3, 1);
    bench.conv("conv 3×3, 16→16, 2 × 16×16 (ResNet-18 ×0.25)", [2, 16, 16, 16], [16, 16, 3, 3], 1, 1, 1);
    bench.conv("conv 3×3, 32→32, 2 × 8×8 (ResNet-18 ×0.25)", [2, 32, 8, 8], [32, 32, 3, 3], 1, 1, 1);
    bench.conv("conv 3×3/2, 3→64, 2 × 64×64 (SqueezeNet 1.1)", [2, 3, 64, 64], [64, 3, 3, 3], 2, 0, 1);
    bench.conv("conv 3×3, 16→64, 2 × 15×15 (SqueezeNet 1.1)", [2, 16, 15, 15], [64, 16, 3, 3], 1, 1, 1);
    bench.conv("conv 1×1, 16→64, 2 × 15×15 (SqueezeNet 1.1)", [2, 16, 15, 15], [64, 16, 1, 1], 1, 0, 1);
    bench.conv("conv 1×1, 256→48, 2 × 3×3 (SqueezeNet 1.1)", [2, 256, 3, 3], [48, 256, 1, 1], 1, 0, 1);
    bench.conv("conv 1×1, 128→32, 2 × 7×7 (SqueezeNet 1.1)", [2, 128, 7, 7], [32, 128, 1, 1], 1, 0, 1);
    bench.conv("conv 3×3, 48→192, 2 × 3×3 (SqueezeNet 1.1)", [2, 48, 3, 3], [192, 48, 3, 3], 1, 1, 1);
    bench.conv("conv 1×1, 64→256, 2 × 3×3 (SqueezeNet 1.1)", [2, 64, 3, 3], [256, 64, 1, 1], 1, 0, 1);

    let x = tensor([1, 64, 112, 112], 4);
    let pool = |x: Tensor<4>| ops::max_pool2d(x, [3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], false);
    let burn_pool = |x: Tensor<4>| {
        let options =
            burn::tensor::ops::MaxPoolOptions::new([3, 3]).with_stride([2, 2]).with_padding_pairs([(1, 1), (1, 1)]);
        burn::tensor::module::max_pool2d(x, options)
    };
    bench.case(
        "max pool 3×3/2, 64, 112×112",
        || drop(std::hint::black_box(pool(x.clone()))),
        || drop(std::hint::black_box(burn_pool(x.clone()))),
    );

    let x = tensor([2, 64, 31, 31], 5);
    let pool = |x: Tensor<4>| ops::max_pool2d(x, [3, 3], [2, 2], [(0, 0), (0, 0)], [1, 1], true);
    let burn_pool = |x: Tensor<4>| {
        let options = burn::tensor::ops::MaxPoolOptions::new([3, 3]).with_stride([2, 2]).with_ceil_mode(true);
        burn::tensor::module::max_pool2d(x, options)
    };
    bench.case(
        "max pool 3×3/2 ceil, 2 × 64, 31×31 (SqueezeNet 1.1)",
        || drop(std::hint::black_box(pool(x.clone()))),
        || drop(std::hint::black_box(burn_pool(x.clone()))),
    );

    let x = tensor([1, 192, 28, 28], 8);
    bench.case(
        "avg pool 3×3, 192, 28×28 (Inception)",
        || drop(std::hint::black_box(ops::avg_pool2d(x.clone(), [3, 3], [1, 1], [(1, 1), (1, 1)], true))),
        || {
            let options = burn::tensor::ops::AvgPoolOptions::new([3, 3])
                .with_stride([1, 1])
                .with_padding_pairs([(1, 1), (1, 1)])
                .with_count_include_pad(true);
            drop(std::hint::black_box(burn::tensor::module::avg_pool2d(x.clone(), options)))
        },
    );

    for (rows, k, n, model) in [
        (128, 384, 1536, "MiniLM, 128 tokens"),
        (8, 384, 1536, "MiniLM, 8 tokens"),
        (8, 1536, 384, "MiniLM, 8 tokens"),
        (1, 4096, 4096, "AlexNet"),
        (16, 1024, 8210, "ddddocr"),
    ] {
        let (x, layer) = (tensor([rows, k], 5), burn::nn::LinearConfig::new(k, n).init(&Device::flex()));
        bench.case(
            &format!("linear {rows}×{k} → {n} ({model})"),
            || drop(std::hint::black_box(ops::linear(&layer, x.clone()))),
            || drop(std::hint::black_box(layer.forward(x.clone()))),
        );
    }

    let x = tensor([1, 64, 56, 56], 7);
    bench.case(
        "LRN size 5, 64×56×56 (Inception v1)",
        || drop(std::hint::black_box(ops::local_response_norm(x.clone(), 5, 1e-4, 0.75, 1.0))),
        || {
            let squares = x.clone().square().reshape([1, 1, 64, -1]);
            let options = burn::tensor::ops::AvgPoolOptions::new([5, 1])
                .with_stride([1, 1])
                .with_padding_pairs([(2, 2), (0, 0)])
                .with_count_include_pad(true);
            let sums = burn::tensor::module::avg_pool2d(squares, options).mul_scalar(5.0).reshape([1, 64, 56, 56]);
            drop(std::hint::black_box(x.clone().div(sums.mul_scalar(2e-5).add_scalar(1.0).powf_scalar(0.75))))
        },
    );

    let x = tensor([1, 64, 80, 80], 6);
    // A fresh tensor per call: the kernels work in place on a tensor they own.
    bench.case(
        "silu, 64×80×80",
        || drop(std::hint::black_box(ops::silu(x.clone() + 0.0))),
        || drop(std::hint::black_box(activation::silu(x.clone() + 0.0))),
    );
    bench.case(
        "sigmoid, 64×80×80",
        || drop(std::hint::black_box(ops::sigmoid(x.clone() + 0.0))),
        || drop(std::hint::black_box(activation::sigmoid(x.clone() + 0.0))),
    );
    bench.case(
        "tanh, 64×80×80",
        || drop(std::hint::black_box(ops::tanh(x.clone() + 0.0))),
        || drop(std::hint::black_box((x.clone() + 0.0).tanh())),
    );
    bench.case(
        "exp, 64×80×80",
        || drop(std::hint::black_box(ops::exp(x.clone() + 0.0))),
        || drop(std::hint::black_box((x.clone() + 0.0).exp())),
    );
}
