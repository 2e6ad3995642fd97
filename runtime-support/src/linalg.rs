//! ONNX `Det`, computed on the host: Burn's `linalg` feature (burn-linalg) is not part of the
//! build, and a determinant is a small sequential computation per matrix.

use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Tensor, TensorData};

/// ONNX `Det`: the determinant of each square matrix of the last two dims, `[..., n, n]` to
/// `[...]` (a one-element vector for a single matrix, the generated code's rank 0), in the
/// input's float type. LU decomposition with partial pivoting in f64, as numpy's LAPACK does.
pub fn det<const D: usize, const O: usize>(x: Tensor<D>) -> Tensor<O> {
    let dims = x.dims();
    assert!(D >= 2 && dims[D - 2] == dims[D - 1], "Det: the last two dims must be equal, got {dims:?}");
    let n = dims[D - 1];
    let batch = &dims[..D - 2];
    let count: usize = batch.iter().product();
    let (device, dtype) = (x.device(), x.dtype());
    let values: Vec<f64> = x.into_data().iter::<f64>().collect();
    // The determinant of a 0 x 0 matrix is 1 (the empty product).
    let dets: Vec<f64> =
        if n == 0 { vec![1.0; count] } else { values.chunks(n * n).map(|m| lu_determinant(m, n)).collect() };
    let mut out = [1usize; O];
    out[O - batch.len()..].copy_from_slice(batch);
    Tensor::from_data(TensorData::new(dets, out), (&device, dtype))
}

/// The determinant of the row-major `n x n` matrix `m`: the product of U's diagonal, negated
/// for each row swap. The pivot is the first entry of largest magnitude in its column (LAPACK's).
fn lu_determinant(m: &[f64], n: usize) -> f64 {
    let mut a = m.to_vec();
    let mut det = 1.0;
    for col in 0..n {
        let mut pivot = col;
        for row in col + 1..n {
            if a[row * n + col].abs() > a[pivot * n + col].abs() {
                pivot = row;
            }
        }
        let p = a[pivot * n + col];
        if p == 0.0 {
            return 0.0;
        }
        if pivot != col {
            for c in 0..n {
                a.swap(pivot * n + c, col * n + c);
            }
            det = -det;
        }
        det *= p;
        for row in col + 1..n {
            let factor = a[row * n + col] / p;
            for c in col + 1..n {
                a[row * n + c] -= factor * a[col * n + c];
            }
        }
    }
    det
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::floats;

    fn values<const D: usize>(t: Tensor<D>) -> (Vec<usize>, Vec<f32>) {
        (t.dims().to_vec(), t.into_data().iter::<f32>().collect())
    }

    #[test]
    fn determinants_of_a_batch_by_hand() {
        // By hand: [[1, 2], [3, 4]] has 1*4 - 2*3 = -2; [[2, 0], [0, 3]] has 6.
        let x = floats(&[1.0, 2.0, 3.0, 4.0, 2.0, 0.0, 0.0, 3.0], [2, 2, 2]);
        assert_eq!(values(det::<3, 1>(x)), (vec![2], vec![-2.0, 6.0]));
    }

    #[test]
    fn single_matrix_is_a_one_element_vector() {
        // By hand, along the first row: 6(-2*7 - 5*8) - 1(4*7 - 5*2) + 1(4*8 + 2*2) = -306.
        let x = floats(&[6.0, 1.0, 1.0, 4.0, -2.0, 5.0, 2.0, 8.0, 7.0], [3, 3]);
        assert_eq!(values(det::<2, 1>(x)), (vec![1], vec![-306.0]));
    }

    #[test]
    fn row_swaps_flip_the_sign_and_singular_is_zero() {
        // By hand: rows 0 and 1 of diag(1, 1, 2, 3) swapped: -6. Two equal rows: 0.
        let swapped = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0];
        let singular = [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 0.0, 0.0, 1.0];
        let x = floats(&[swapped, singular].concat(), [1, 2, 4, 4]);
        assert_eq!(values(det::<4, 2>(x)), (vec![1, 2], vec![-6.0, 0.0]));
    }
}
