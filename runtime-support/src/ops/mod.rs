//! Helpers the generated code calls where one Burn call does not express an ONNX op: the
//! generated-code API, reached as `burn_onnx::ops::NAME`. The kernels and op implementations
//! live in the crate's modules and are re-exported here; what only adapts a Burn call lives in
//! one file per op family.

mod attention;
mod elementwise;
mod indexing;
mod quantize;
mod reduce;
mod shape;
mod spatial;

pub use attention::*;
pub use elementwise::*;
pub use indexing::*;
pub use quantize::*;
pub use reduce::*;
pub use shape::*;
pub use spatial::*;

// What the family modules share (they take it with `use super::*`).
use crate::float::{ceil, sqrt};
use alloc::vec;
use alloc::vec::Vec;
use burn::tensor::kind::Basic;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

pub use crate::bitcast::{bit_cast, BitType};
pub use crate::deform_conv::deform_conv2d;
pub use crate::detection::non_max_suppression;
pub use crate::dtype::{default_int, select};
pub use crate::feature_maps::{
    cast_map_to_float, cast_map_to_int, cast_map_to_string, dict_vectorize, CastMapValue, MapValue,
};
pub use crate::grid_sample::{grid_sample, GridMode, GridPadding, GridSampleOptions};
pub use crate::kernels::{
    avg_pool2d, batch_norm, cat, conv1d, conv2d, conv2d_residual, conv3d, conv3d_residual, erf, exp, gelu, linear,
    local_response_norm, matmul_transposed, max_pool2d, mean_dims, sigmoid, silu, tanh, ConvActivation,
    QLinearAddition, Requantization,
};
pub use crate::linalg::det;
pub use crate::low_bit::{
    cast_float_to_int, cast_float_to_narrow_int, cast_to_e8m0, cast_to_mini_float, wrap_int, E8M0Rounding, MiniFloat,
    NarrowInt,
};
pub use crate::pool::{max_pool_with_indices, max_unpool, pool, same_pads, symmetric_padding, PoolReduce, PoolWindow};
pub use crate::random::{
    bernoulli, dropout, dropout_ratio, dropout_training, multinomial, random_normal, random_uniform,
};
pub use crate::recurrent::{recurrent, recurrent_quantized, Activation, Cell, RecurrentOptions};
pub use crate::resize::{resize, AspectPolicy, CoordinateMode, NearestMode, ResizeMode, ResizeOptions};
pub use crate::roi_align::{roi_align, RoiAlignOptions};
pub use crate::roi_pool::max_roi_pool;
pub use crate::rotary::rotary_embedding;
pub use crate::sequence::{
    common_length, empty_sequence, sequence_at, sequence_concat, sequence_erase, sequence_insert, sequence_stack,
    split_to_sequence,
};
pub use crate::signal::{dft, mel_weight_matrix, stft, window, DftOptions, Window};
pub use crate::stateful::{causal_conv_with_state, linear_attention, tensor_scatter_indices, LinearAttentionOptions};
pub use crate::strings::{
    label_encode, regex_full_match, string_concat, string_equal, string_normalize, string_positions, string_split,
    string_take, CaseChange, LabelKey, Labelled,
};
pub use crate::svm_probabilities::svm_probabilities;
pub use crate::tfidf::{tfidf_vectorizer, TfIdf, TfIdfMode};
pub use crate::tree_ensemble::{
    tree_ensemble, tree_ensemble_in_tensor_ops, TreeAggregate, TreeChild, TreeEnsemble, TreeMode, TreeNode,
};
pub use crate::unique::unique;
pub use crate::zip_map::{zip_map, ScoreLabel};

/// Runs a model's forward with the calling thread as one of rayon's workers (flex's
/// threads). A parallel op called from outside a pool hands its work to the pool and sleeps
/// until it is done: two context switches per op, most of a small model's time at two
/// threads. Each calling thread gets a pool of its own (`RAYON_NUM_THREADS` threads, itself
/// included), as ONNX Runtime's caller joins its pool: ops then run where they are called
/// and the other threads steal from them. While `forward` runs, the pool's other threads
/// keep polling for work instead of going to sleep between ops (as ONNX Runtime's threads
/// spin): waking a sleeping thread for each op costs more than many ops take. Inside a pool
/// already, `forward` runs there: a program calling models from many threads at once shares
/// one pool by calling them in `pool.install(..)`. On Linux with glibc the first call also
/// keeps malloc from handing freed tensors back to the system between ops (the mmap and trim
/// thresholds raised once; `BURN_ONNX_MALLOC=system` leaves them).
pub fn on_pool<R: Send>(forward: impl FnOnce() -> R + Send) -> R {
    crate::malloc::keep_freed_memory();
    #[cfg(feature = "flex")]
    {
        if rayon::current_thread_index().is_none() {
            thread_local! {
                /// `None` when the pool cannot start (no threads): then ops hand over as before.
                /// Built with `use_current_thread`, the calling thread stays its worker 0 from
                /// then on, so later calls find themselves on a pool already.
                static POOL: Option<rayon::ThreadPool> =
                    rayon::ThreadPoolBuilder::new().use_current_thread().build().ok();
            }
            return POOL.with(|pool| match pool {
                Some(pool) => pool.install(|| crate::parallel::run_forward(forward)),
                None => forward(),
            });
        }
        crate::parallel::run_forward(forward)
    }
    #[cfg(not(feature = "flex"))]
    forward()
}

/// The values of a small float tensor (scales, roi), read back to the host.
pub fn host_floats<const D: usize>(values: Tensor<D>) -> Vec<f64> {
    values.into_data().iter::<f64>().collect()
}
