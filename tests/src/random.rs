//! The random ops through `#[onnx_model]` (tests/random/random_ops.onnx, written by
//! scripts/make_op_models.py): no evaluator shares another runtime's generator, so these check
//! what ONNX specifies: shapes, types, ranges and the distributions' moments, and that a seeded
//! node repeats its draws while an unseeded one does not.

use burn::tensor::{Int, Tensor, TensorData};
use burn_onnx::onnx_model;

#[onnx_model("random/random_ops.onnx")]
pub struct RandomOps;

fn floats<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.into_data().iter::<f64>().collect()
}

fn ints<const D: usize>(t: Tensor<D, Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

/// Mean and standard deviation.
fn moments(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (mean, (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt())
}

/// The bounds below are about five standard errors of 120,000 or 150,000 draws.
#[test]
fn draws_follow_their_distributions_and_seeds() {
    let device = crate::device();
    let model = RandomOps::new(&device);
    // Bernoulli probabilities 0, 0.3 and 1, one row each; class probabilities 0.2/0.5/0.3 and
    // one certain class.
    let rows: Vec<f32> = [0.0f32, 0.3, 1.0].iter().flat_map(|&p| std::iter::repeat_n(p, 50_000)).collect();
    let p = || Tensor::<2>::from_data(TensorData::new(rows.clone(), [3, 50_000]), &device);
    let logits = || {
        let values = vec![0.2f32.ln(), 0.5f32.ln(), 0.3f32.ln(), -1e9, -1e9, 0.0];
        Tensor::<2>::from_data(TensorData::new(values, [2, 3]), &device)
    };
    let (uniform, normal, normal_like, uniform_like, coins, classes) = model.forward(p(), logits());
    assert_eq!((uniform.dims(), normal.dims(), normal_like.dims()), ([300, 400], [300, 400], [3, 50_000]));
    assert_eq!((uniform_like.dims(), coins.dims(), classes.dims()), ([3, 50_000], [3, 50_000], [2, 20_000]));

    let uniform = floats(uniform);
    assert!(uniform.iter().all(|v| (-2.0..3.0).contains(v)));
    let (mean, sd) = moments(&uniform);
    assert!((mean - 0.5).abs() < 0.02 && (sd - 5.0 / 12f64.sqrt()).abs() < 0.01, "uniform: {mean}, {sd}");
    let (mean, sd) = moments(&floats(normal));
    assert!((mean - 1.0).abs() < 0.03 && (sd - 2.0).abs() < 0.03, "normal: {mean}, {sd}");
    let (mean, sd) = moments(&floats(normal_like));
    assert!((mean + 4.0).abs() < 0.01 && (sd - 0.5).abs() < 0.01, "normal_like: {mean}, {sd}");
    let uniform_like = floats(uniform_like);
    assert!(uniform_like.iter().all(|v| (0.0..1.0).contains(v)));

    let coins = ints(coins);
    assert!(coins.iter().all(|&c| c == 0 || c == 1));
    let heads: Vec<usize> = coins.chunks(50_000).map(|row| row.iter().filter(|&&c| c == 1).count()).collect();
    assert_eq!((heads[0], heads[2]), (0, 50_000));
    assert!((heads[1] as f64 / 50_000.0 - 0.3).abs() < 0.011, "{heads:?}");

    let classes = ints(classes);
    let (first, second) = classes.split_at(20_000);
    for (class, p) in [(0, 0.2), (1, 0.5), (2, 0.3)] {
        let share = first.iter().filter(|&&c| c == class).count() as f64 / 20_000.0;
        assert!((share - p).abs() < 0.018, "class {class}: {share}");
    }
    assert!(second.iter().all(|&c| c == 2));

    // Seeded nodes repeat their draws on the next call; the unseeded ones draw anew.
    let (again_uniform, again_normal, ..) = model.forward(p(), logits());
    assert_eq!(floats(again_uniform), uniform);
    assert_ne!(floats(again_normal), floats(model.forward(p(), logits()).1));
}
