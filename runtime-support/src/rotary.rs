//! ONNX `RotaryEmbedding` (opset 23), as ONNX's reference evaluator computes it.

use alloc::vec;
use burn::tensor::{Int, Tensor};

/// `x` (`[batch, heads, seq, head_size]`) with its first `rotary_dim` features (all when
/// `None`) of each head rotated by the angles of each position: the halves (or, `interleaved`,
/// the even and odd features) `(x1, x2)` become `(cos·x1 − sin·x2, sin·x1 + cos·x2)`. The
/// caches hold `cos` and `sin` per position, `[batch, seq, rotary_dim / 2]`, or, with
/// `position_ids` (`[batch, seq]`), per position id, `[max_position + 1, rotary_dim / 2]`.
pub fn rotary_embedding<const C: usize>(
    x: Tensor<4>,
    cos_cache: Tensor<C>,
    sin_cache: Tensor<C>,
    position_ids: Option<Tensor<2, Int>>,
    rotary_dim: Option<usize>,
    interleaved: bool,
) -> Tensor<4> {
    let [batch, heads, seq, head_size] = x.dims();
    let rotary = rotary_dim.unwrap_or(head_size);
    let half = rotary / 2;
    // [batch, 1, seq, half]: one angle per position and pair, the same for every head.
    let angles = |cache: Tensor<C>| -> Tensor<4> {
        let width = cache.dims()[C - 1];
        assert_eq!(
            width, half,
            "RotaryEmbedding: the caches' last dim {width} is not rotary_embedding_dim / 2 = {half}"
        );
        let per_position: Tensor<3> = match &position_ids {
            Some(ids) => {
                let [id_batch, id_seq] = ids.dims();
                cache.select(0, ids.clone().reshape([id_batch * id_seq])).reshape([id_batch, id_seq, half])
            }
            None => cache.reshape([0, 0, -1]),
        };
        per_position.unsqueeze_dim(1)
    };
    let (cos, sin) = (angles(cos_cache), angles(sin_cache));
    let rotated = x.clone().narrow(3, 0, rotary);
    let (x1, x2) = if interleaved {
        let pairs = rotated.reshape([batch, heads, seq, half, 2]);
        let feature = |i: usize| pairs.clone().narrow(4, i, 1).reshape([batch, heads, seq, half]);
        (feature(0), feature(1))
    } else {
        (rotated.clone().narrow(3, 0, half), rotated.narrow(3, half, half))
    };
    let real = cos.clone() * x1.clone() - sin.clone() * x2.clone();
    let imaginary = sin * x1 + cos * x2;
    let rotated = if interleaved {
        Tensor::stack::<5>(vec![real, imaginary], 4).reshape([batch, heads, seq, rotary])
    } else {
        Tensor::cat(vec![real, imaginary], 3)
    };
    if rotary == head_size {
        rotated
    } else {
        Tensor::cat(vec![rotated, x.narrow(3, rotary, head_size - rotary)], 3)
    }
}

/// Against ONNX's reference evaluator (`scripts/helper_references.py`, case rotary; inputs are
/// its `weights`, here `wave`: the op only multiplies by the caches, so any values do).
#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::{assert_close, ints, wave};

    fn x() -> Tensor<4> {
        wave([1, 1, 2, 4], 60)
    }

    #[test]
    fn halves_rotate_by_the_cache_of_each_position() {
        let y = rotary_embedding(x(), wave([1, 2, 2], 61), wave([1, 2, 2], 62), None, None, false);
        let expected = [0.1719, -0.1129, -0.0741, -0.1976, -0.3038, 0.0939, 0.1201, 0.1203];
        assert_close(y, [1, 1, 2, 4], &expected, 1e-6);
    }

    #[test]
    fn interleaved_pairs_rotate_by_the_cache_rows_of_their_position_ids() {
        let ids = Some(ints(&[2, 0], [1, 2]));
        let y = rotary_embedding(x(), wave([3, 2], 63), wave([3, 2], 64), ids, None, true);
        let expected = [0.177, -0.219, 0.1374, 0.0968, 0.1038, -0.1934, 0.1874, 0.1432];
        assert_close(y, [1, 1, 2, 4], &expected, 1e-6);
    }

    #[test]
    fn features_past_rotary_embedding_dim_pass_through() {
        let y = rotary_embedding(x(), wave([1, 2, 1], 65), wave([1, 2, 1], 66), None, Some(2), false);
        let expected = [-0.066, -0.183, 0.27, 0.38, -0.02, 0.277, 0.44, 0.17];
        assert_close(y, [1, 1, 2, 4], &expected, 1e-6);
    }
}
