//! ai.onnx.ml SVMClassifier's probabilities (`prob_a`/`prob_b`, scikit-learn's
//! `probability=True`), on the host as ONNX Runtime computes them in f32: each one-vs-one score
//! through its Platt sigmoid, then libsvm's pairwise coupling (Wu, Lin and Weng 2004, "method 2"),
//! an iteration with a data-dependent stop that no tensor op expresses.

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Tensor, TensorData};

/// `[N, classes]` probabilities from the one-vs-one scores `[N, classes (classes - 1) / 2]`
/// (pairs `i < j` in order) and each pair's Platt parameters.
pub fn svm_probabilities(scores: Tensor<2>, prob_a: &[f32], prob_b: &[f32], classes: usize) -> Tensor<2> {
    let [rows, pairs] = scores.dims();
    let device = scores.device();
    let scores: Vec<f32> = scores.into_data().iter::<f32>().collect();
    let mut out = Vec::with_capacity(rows * classes);
    for row in scores.chunks(pairs.max(1)).take(rows) {
        out.extend(row_probabilities(row, prob_a, prob_b, classes));
    }
    Tensor::from_data(TensorData::new(out, [rows, classes]), &device)
}

/// `1 / (1 + e^-|v|)`, mirrored for negative `v` (ONNX Runtime's logistic).
fn logistic(v: f32) -> f32 {
    let s = 1.0 / (1.0 + (-v.abs()).exp());
    if v < 0.0 {
        1.0 - s
    } else {
        s
    }
}

/// One row: the pairwise probability matrix `r` (`r[i][j]` that i beats j), then coupling.
fn row_probabilities(scores: &[f32], prob_a: &[f32], prob_b: &[f32], classes: usize) -> Vec<f32> {
    let mut r = vec![0.0f32; classes * classes];
    let mut pair = 0;
    for i in 0..classes {
        for j in i + 1..classes {
            let platt = 1.0 - logistic(scores[pair] * prob_a[pair] + prob_b[pair]);
            let p = platt.clamp(1.0e-7, 1.0 - 1.0e-7);
            r[i * classes + j] = p;
            r[j * classes + i] = 1.0 - p;
            pair += 1;
        }
    }
    couple(&r, classes)
}

/// libsvm's `multiclass_probability`: p minimising Σ (r_ji p_i - r_ij p_j)² on the simplex, by
/// at most 100 coordinate steps, stopping once every `|(Qp)_i - pᵀQp|` is under 0.005 / k.
fn couple(r: &[f32], k: usize) -> Vec<f32> {
    let at = |i: usize, j: usize| r[i * k + j];
    let mut q = vec![0.0f32; k * k];
    for i in 0..k {
        for j in 0..k {
            if j != i {
                q[i * k + i] += at(j, i) * at(j, i);
            }
            if j < i {
                q[i * k + j] = q[j * k + i];
            } else if j > i {
                q[i * k + j] = -at(j, i) * at(i, j);
            }
        }
    }
    let mut p = vec![1.0 / k as f32; k];
    let mut qp = vec![0.0f32; k];
    let eps = 0.005 / k as f32;
    for _ in 0..100 {
        let mut pqp = 0.0f32;
        for i in 0..k {
            qp[i] = (0..k).map(|j| q[i * k + j] * p[j]).fold(0.0, |sum, v| sum + v);
            pqp += p[i] * qp[i];
        }
        let max_error = qp.iter().map(|&v| (v - pqp).abs()).fold(0.0f32, f32::max);
        if max_error < eps {
            break;
        }
        for i in 0..k {
            let diff = (-qp[i] + pqp) / q[i * k + i];
            p[i] += diff;
            pqp = (pqp + diff * (diff * q[i * k + i] + 2.0 * qp[i])) / (1.0 + diff) / (1.0 + diff);
            for j in 0..k {
                qp[j] = (qp[j] + diff * q[i * k + j]) / (1.0 + diff);
                p[j] /= 1.0 + diff;
            }
        }
    }
    p
}
