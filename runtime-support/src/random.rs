//! ONNX's random ops: RandomUniform, RandomNormal (and their `Like` forms), Bernoulli and
//! Multinomial. Each draws uniform values in [0, 1) and shapes them with tensor ops. A node
//! without `seed` draws from the backend's generator (`Backend::seed` makes runs repeatable);
//! a node with one draws from SplitMix64 seeded by its bits, on the host: the same values on
//! every backend and every call, as a seeded node is in ONNX Runtime (whose values differ: no
//! two runtimes share a generator). SplitMix64 is a few lines (Steele, Lea and Flood, 2014);
//! a generator crate would add a dependency to every user's graph for them.

use alloc::vec::Vec;
use burn::tensor::activation::softmax;
use burn::tensor::{Bool, DType, Device, Distribution, Int, Tensor, TensorData};

/// SplitMix64: a 64-bit state stepped by the golden-ratio increment, each step mixed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A float32 in [0, 1): 24 random bits, every value a multiple of 2^-24.
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u32 << 24) as f32
    }
}

/// A node's seed as SplitMix64's starting state: a float `seed` (the random ops') by its bits,
/// an integer one (Dropout's) as it is.
trait Seed: Copy {
    fn state(self) -> u64;
}

impl Seed for f32 {
    fn state(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Seed for i64 {
    fn state(self) -> u64 {
        self as u64
    }
}

/// `streams` tensors of `shape` uniform draws in [0, 1), of `dtype` (a float type).
fn uniform<const D: usize>(
    shape: [usize; D],
    seed: Option<impl Seed>,
    streams: usize,
    (device, dtype): (&Device, DType),
) -> Vec<Tensor<D>> {
    match seed {
        None => (0..streams).map(|_| Tensor::random(shape, Distribution::Default, (device, dtype))).collect(),
        Some(seed) => {
            let mut generator = SplitMix64(seed.state());
            let count: usize = shape.iter().product();
            (0..streams)
                .map(|_| {
                    let values: Vec<f32> = (0..count).map(|_| generator.unit()).collect();
                    Tensor::from_data(TensorData::new(values, shape), (device, dtype))
                })
                .collect()
        }
    }
}

/// One tensor of draws (the first stream).
fn uniform_one<const D: usize>(shape: [usize; D], seed: Option<impl Seed>, like: (&Device, DType)) -> Tensor<D> {
    uniform(shape, seed, 1, like).remove(0)
}

/// RandomUniform(Like): draws in [low, high), float32 (the generated code casts them to the
/// output's type).
pub fn random_uniform<const D: usize>(
    shape: [usize; D],
    low: f64,
    high: f64,
    seed: Option<f32>,
    device: &Device,
) -> Tensor<D> {
    uniform_one(shape, seed, (device, DType::F32)).mul_scalar(high - low).add_scalar(low)
}

/// RandomNormal(Like): normal draws of `mean` and standard deviation `scale`, by Box–Muller
/// from two uniform draws per element.
pub fn random_normal<const D: usize>(
    shape: [usize; D],
    mean: f64,
    scale: f64,
    seed: Option<f32>,
    device: &Device,
) -> Tensor<D> {
    let mut draws = uniform(shape, seed, 2, (device, DType::F32));
    let (angle, radius) = (draws.pop().expect("two streams"), draws.pop().expect("two streams"));
    // 1 - u lies in (0, 1]: its logarithm is finite.
    let radius = radius.neg().add_scalar(1.0).log().mul_scalar(-2.0).sqrt();
    let angle = angle.mul_scalar(2.0 * core::f64::consts::PI).cos();
    radius.mul(angle).mul_scalar(scale).add_scalar(mean)
}

/// Bernoulli: each element true with the probability `p` holds for it.
pub fn bernoulli<const D: usize>(p: Tensor<D>, seed: Option<f32>) -> Tensor<D, Bool> {
    uniform_one(p.dims(), seed, (&p.device(), p.dtype())).lower(p)
}

/// Multinomial: `sample_size` class indices per row of unnormalised log-probabilities
/// `[batch, classes]`, each drawn from the row's softmax.
pub fn multinomial(logits: Tensor<2>, sample_size: usize, seed: Option<f32>) -> Tensor<2, Int> {
    let [batch, classes] = logits.dims();
    let cumulative = softmax(logits.clone(), 1).cumsum(1);
    let draws = uniform_one([batch, sample_size], seed, (&logits.device(), logits.dtype()));
    // The class is the number of cumulative probabilities at or below the draw; rounding can
    // leave the last one under 1, and a draw above it then picks the last class.
    let samples = [batch, sample_size, classes];
    let below =
        cumulative.unsqueeze_dim::<3>(1).expand(samples).lower_equal(draws.unsqueeze_dim::<3>(2).expand(samples));
    let class: Tensor<2, Int> = below.int().sum_dim(2).squeeze_dim(2);
    class.clamp_max(classes.saturating_sub(1) as i64)
}

/// Dropout: in training mode with a ratio above 0, each element kept with probability
/// 1 - ratio and scaled by 1 / (1 - ratio), the others zero; otherwise the input. The mask
/// holds which elements were kept.
pub fn dropout<const D: usize>(
    x: Tensor<D>,
    ratio: f64,
    training: bool,
    seed: Option<i64>,
) -> (Tensor<D>, Tensor<D, Bool>) {
    let device = x.device();
    if !training || ratio == 0.0 {
        let kept = Tensor::<D, Bool>::ones(x.shape(), &device);
        return (x, kept);
    }
    assert!((0.0..1.0).contains(&ratio), "Dropout: ratio {ratio} is outside [0, 1)");
    let kept = uniform_one(x.dims(), seed, (&device, x.dtype())).greater_equal_elem(ratio);
    let y = x.mask_fill(kept.clone().bool_not(), 0.0).mul_scalar(1.0 / (1.0 - ratio));
    (y, kept)
}

/// Dropout's `ratio` input read at run time (ONNX's default, 0.5, when empty).
pub fn dropout_ratio(ratio: Tensor<1>) -> f64 {
    ratio.into_data().iter::<f64>().next().unwrap_or(0.5)
}

/// Dropout's `training_mode` input read at run time (false when empty).
pub fn dropout_training(training: Tensor<1, Bool>) -> bool {
    training.into_data().iter::<bool>().next().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{device, floats};

    /// Mean and variance of a tensor's values.
    fn moments<const D: usize>(t: Tensor<D>) -> (f64, f64) {
        let values: Vec<f64> = t.into_data().iter::<f64>().collect();
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        (mean, values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n)
    }

    #[test]
    fn a_seed_gives_the_same_values_and_another_seed_others() {
        let draw = |seed| random_uniform([64], -1.0, 1.0, Some(seed), &device()).into_data();
        assert_eq!(draw(3.0), draw(3.0));
        assert_ne!(draw(3.0), draw(4.0));
    }

    /// 200,000 draws: the standard error of the mean is 0.0013 (uniform on [2, 6)) and 0.011
    /// (normal, scale 5); the bounds are about five of them.
    #[test]
    fn uniform_draws_lie_in_range_with_its_moments() {
        let t = random_uniform([400, 500], 2.0, 6.0, Some(1.0), &device());
        let values: Vec<f32> = t.clone().into_data().iter::<f32>().collect();
        assert!(values.iter().all(|&v| (2.0..6.0).contains(&v)));
        let (mean, variance) = moments(t);
        assert!((mean - 4.0).abs() < 0.007, "{mean}");
        assert!((variance - 16.0 / 12.0).abs() < 0.01, "{variance}");
    }

    #[test]
    fn normal_draws_have_the_mean_and_scale() {
        for seed in [Some(7.0), None] {
            let (mean, variance) = moments(random_normal([400, 500], -3.0, 5.0, seed, &device()));
            assert!((mean + 3.0).abs() < 0.06, "{mean}");
            assert!((variance.sqrt() - 5.0).abs() < 0.05, "{variance}");
        }
    }

    #[test]
    fn bernoulli_is_true_as_often_as_the_probability() {
        let p = floats(&[0.0, 0.25, 1.0], [3, 1]).repeat_dim(1, 100_000);
        let hits: Vec<f64> = bernoulli(p, Some(2.0)).float().mean_dim(1).into_data().iter::<f64>().collect();
        assert_eq!(hits[0], 0.0);
        assert!((hits[1] - 0.25).abs() < 0.007, "{hits:?}");
        assert_eq!(hits[2], 1.0);
    }

    #[test]
    fn dropout_keeps_a_share_and_scales_it() {
        let x = floats(&[2.0], [1, 1]).repeat_dim(1, 100_000);
        let (y, kept) = dropout(x.clone(), 0.75, true, Some(9));
        let (y, kept): (Vec<f32>, Vec<bool>) = (y.into_data().iter().collect(), kept.into_data().iter().collect());
        assert!(y.iter().zip(&kept).all(|(&v, &k)| if k { v == 8.0 } else { v == 0.0 }));
        let share = kept.iter().filter(|&&k| k).count() as f64 / 100_000.0;
        assert!((share - 0.25).abs() < 0.007, "{share}");
        let (same, all) = dropout(x.clone(), 0.75, false, None);
        assert_eq!(same.into_data(), x.into_data());
        assert!(all.into_data().iter::<bool>().all(|k| k));
    }

    #[test]
    fn multinomial_draws_classes_as_often_as_the_softmax() {
        // Probabilities 0.1, 0.2, 0.7 in the first row, one certain class in the second.
        let logits = floats(&[0.1f32.ln(), 0.2f32.ln(), 0.7f32.ln(), -1e9, 0.0, -1e9], [2, 3]);
        let classes = multinomial(logits, 50_000, Some(5.0));
        assert_eq!(classes.dims(), [2, 50_000]);
        let values: Vec<i64> = classes.into_data().iter::<i64>().collect();
        let (first, second) = values.split_at(50_000);
        for (class, p) in [(0, 0.1), (1, 0.2), (2, 0.7)] {
            let share = first.iter().filter(|&&c| c == class).count() as f64 / 50_000.0;
            assert!((share - p).abs() < 0.01, "class {class}: {share}");
        }
        assert!(second.iter().all(|&c| c == 1));
    }
}
