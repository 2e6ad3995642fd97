//! ONNX `TfIdfVectorizer` (opset 9) over integer tokens, on the host: n-gram matching is a
//! sequential scan of each row against a table of n-grams, nothing a tensor op expresses.

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::{Int, Tensor, TensorData};
pub use onnx_op_types::TfIdfMode;

/// The node's attributes, checked at import: `ngram_counts` ascending within the pool, each
/// n-gram size's items a whole number of n-grams, no n-gram twice, `ngram_indexes` one per
/// n-gram, `weights` empty or one per n-gram too.
#[derive(Debug, Clone, Copy)]
pub struct TfIdf<'a> {
    /// `mode`.
    pub mode: TfIdfMode,
    /// `min_gram_length` (1 or more).
    pub min_gram_length: usize,
    /// `max_gram_length`.
    pub max_gram_length: usize,
    /// `max_skip_count`: n-grams are also formed from every `1 + skip`-th token, skip up to this.
    pub max_skip_count: usize,
    /// `pool_int64s`: the 1-grams, then the 2-grams, ... each n-gram's tokens in order.
    pub pool: &'a [i64],
    /// `ngram_counts`: where the n-grams of size `i + 1` start in the pool.
    pub ngram_counts: &'a [usize],
    /// `ngram_indexes`: the output coordinate of each n-gram of the pool, in pool order.
    pub ngram_indexes: &'a [usize],
    /// `weights`: each n-gram's, in pool order (the spec, ONNX Runtime; ONNX's reference
    /// evaluator reads them per output coordinate, the same where `ngram_indexes` is
    /// `0, 1, ...`); empty: all ones.
    pub weights: &'a [f32],
}

/// Each row's (a 1-D input's) n-gram counts, weighted by `mode`: `[max(ngram_indexes) + 1]`
/// per row, f32. The matching follows ONNX's reference (`op_tfidf_vectorizer.py`) and ONNX
/// Runtime: for each skip distance `d` from 1 to `max_skip_count + 1` and each start, the
/// tokens at `start`, `start + d`, ... are matched against the pool's n-grams of sizes
/// `min_gram_length` to `max_gram_length`; 1-grams count once, at distance 1 only. Each
/// occurrence updates its coordinate in that order, in f32, as ONNX Runtime does.
pub fn tfidf_vectorizer<const D: usize>(x: Tensor<D, Int>, options: &TfIdf) -> Tensor<D> {
    let dims = x.dims();
    let device = x.device();
    let tokens: Vec<i64> = x.into_data().iter::<i64>().collect();
    // A rank-0 input is held as a one-element vector: one row, as a 1-D input.
    let (rows, row_len) = if D == 2 { (dims[0], dims[1]) } else { (1, tokens.len()) };
    let width = options.ngram_indexes.iter().max().map_or(0, |&m| m + 1);
    let table = ngram_table(options);
    let mut values = vec![0f32; rows * width];
    if width > 0 {
        for (row, out) in values.chunks_mut(width).enumerate() {
            weigh_row(&tokens[row * row_len..][..row_len], options, &table, out);
        }
    }
    let mut shape = [width; D];
    if D == 2 {
        shape[0] = rows;
    }
    Tensor::from_data(TensorData::new(values, shape), &device)
}

/// The pool's n-grams of the matched sizes, each with its position in the pool's n-grams.
fn ngram_table<'a>(options: &TfIdf<'a>) -> BTreeMap<&'a [i64], usize> {
    let mut table = BTreeMap::new();
    let mut id = 0;
    for (level, &start) in options.ngram_counts.iter().enumerate() {
        let size = level + 1;
        let end = options.ngram_counts.get(level + 1).copied().unwrap_or(options.pool.len());
        for ngram in options.pool[start..end].chunks_exact(size) {
            if (options.min_gram_length..=options.max_gram_length).contains(&size) {
                table.insert(ngram, id);
            }
            id += 1;
        }
    }
    table
}

/// Applies one row's matches to its output coordinates `out`.
fn weigh_row(row: &[i64], options: &TfIdf, table: &BTreeMap<&[i64], usize>, out: &mut [f32]) {
    let mut smallest = options.min_gram_length;
    let mut gram = Vec::with_capacity(options.max_gram_length);
    for distance in 1..=options.max_skip_count + 1 {
        for start in 0..row.len() {
            gram.clear();
            for &token in row[start..].iter().step_by(distance).take(options.max_gram_length) {
                gram.push(token);
                if gram.len() < smallest {
                    continue;
                }
                if let Some(&id) = table.get(gram.as_slice()) {
                    let (coordinate, weight) = (options.ngram_indexes[id], options.weights.get(id).copied());
                    match options.mode {
                        TfIdfMode::Tf => out[coordinate] += 1.0,
                        TfIdfMode::Idf => out[coordinate] = weight.unwrap_or(1.0),
                        TfIdfMode::TfIdf => out[coordinate] += weight.unwrap_or(1.0),
                    }
                }
            }
        }
        // 1-grams do not depend on the distance: counted at distance 1 only.
        if smallest == 1 {
            smallest = 2;
        }
    }
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;
    use crate::test_util::ints;

    fn values<const D: usize>(t: Tensor<D>) -> (Vec<usize>, Vec<f32>) {
        (t.dims().to_vec(), t.into_data().iter::<f32>().collect())
    }

    /// The pool of ONNX's TfIdfVectorizer backend tests: 1-grams 2, 3, 5, 4, then 2-grams
    /// (5, 6), (7, 8), (6, 7), at coordinates 0 to 6.
    const POOL: [i64; 10] = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7];
    const ROW: [i64; 12] = [1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8];

    fn options(mode: TfIdfMode, min: usize, max: usize, skip: usize, weights: &[f32]) -> TfIdf<'_> {
        TfIdf {
            mode,
            min_gram_length: min,
            max_gram_length: max,
            max_skip_count: skip,
            pool: &POOL,
            ngram_counts: &[0, 4],
            ngram_indexes: &[0, 1, 2, 3, 4, 5, 6],
            weights,
        }
    }

    #[test]
    fn bigrams_without_skips_of_a_vector() {
        // ONNX's test_tfidfvectorizer_tf_only_bigrams_skip0 (onnx/backend/test/case/node/tfidfvectorizer.py).
        let y = tfidf_vectorizer(ints(&ROW, [12]), &options(TfIdfMode::Tf, 2, 2, 0, &[]));
        assert_eq!(values(y), (vec![7], vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]));
    }

    #[test]
    fn unigrams_and_bigrams_with_skips_per_row() {
        // ONNX's test_tfidfvectorizer_tf_batch_uniandbigrams_skip5.
        let x = ints(&[1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8], [2, 6]);
        let y = tfidf_vectorizer(x, &options(TfIdfMode::Tf, 1, 2, 5, &[]));
        let expected = vec![0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0];
        assert_eq!(values(y), (vec![2, 7], expected));
    }

    #[test]
    fn idf_and_tfidf_weigh_each_ngram() {
        // scripts/helper_references.py tfidf_weighted: 1- and 2-grams with skips up to 5 on the
        // row above (counts 0, 3, 1, 0, 1, 3, 1), weights 0.5, 1.5, ... 6.5.
        let weights = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5];
        let run = |mode, weights| values(tfidf_vectorizer(ints(&ROW, [12]), &options(mode, 1, 2, 5, weights)));
        assert_eq!(run(TfIdfMode::Tf, &weights), (vec![7], vec![0.0, 3.0, 1.0, 0.0, 1.0, 3.0, 1.0]));
        assert_eq!(run(TfIdfMode::Idf, &weights), (vec![7], vec![0.0, 1.5, 2.5, 0.0, 4.5, 5.5, 6.5]));
        assert_eq!(run(TfIdfMode::TfIdf, &weights), (vec![7], vec![0.0, 4.5, 2.5, 0.0, 4.5, 16.5, 6.5]));
        assert_eq!(run(TfIdfMode::Idf, &[]), (vec![7], vec![0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]));
    }

    #[test]
    fn weights_follow_the_ngram_to_its_coordinate() {
        // tfidf_weighted's last two (ONNX Runtime): the coordinates reversed.
        let weights = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5];
        let reversed = TfIdf { ngram_indexes: &[6, 5, 4, 3, 2, 1, 0], ..options(TfIdfMode::TfIdf, 1, 2, 5, &weights) };
        let y = values(tfidf_vectorizer(ints(&ROW, [12]), &reversed));
        assert_eq!(y, (vec![7], vec![6.5, 16.5, 4.5, 0.0, 2.5, 4.5, 0.0]));
        let y = values(tfidf_vectorizer(ints(&ROW, [12]), &TfIdf { mode: TfIdfMode::Idf, ..reversed }));
        assert_eq!(y, (vec![7], vec![6.5, 5.5, 4.5, 0.0, 2.5, 1.5, 0.0]));
    }
}
