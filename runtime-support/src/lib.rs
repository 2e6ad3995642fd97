//! Burn ONNX: import ONNX models into Burn at compile time.
//!
//! ```ignore
//! use burn_onnx::onnx_model;
//!
//! #[onnx_model("models/mnist.onnx")]
//! pub struct Mnist;
//!
//! let model = Mnist::default();
//! let logits = model.forward(images);
//! ```
//!
//! This crate re-exports the macro and everything generated code needs, so a user depends on
//! it alone.
//!
//! Without the default feature `std` it is `#![no_std]` + `alloc`: models with embedded weights
//! (and `from_bytes`) work; reading weights from files needs `std`.

#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

pub use burn;
pub use burn_store;
pub use include_bytes_aligned::include_bytes_aligned;
pub use onnx_macro::{onnx_custom_op, onnx_model};

mod bitcast;
mod boxed;
mod deform_conv;
mod detection;
pub use boxed::Boxed;
pub use feature_maps::FeatureMap;
#[cfg(feature = "flex")]
pub use kernels::set_flex_kernels;
pub use strings::StringTensor;
pub use zip_map::ScoreMap;

/// What generated code names through `burn_onnx` rather than the standard library, so that it
/// compiles in `#![no_std]` crates too (`Vec` and `vec!` come from `alloc`; std re-exports them).
#[doc(hidden)]
pub mod __private {
    pub extern crate alloc;
}

use burn::module::{Param, ParamId};
use burn::tensor::{Bool, Device, Int, Tensor};
use burn_store::{BurnpackStore, ModuleSnapshot};

/// Why weights could not be loaded into a generated model.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The usual cause: a `weights = "file"` model run where its build did not write the file.
    #[error(
        "weights file `{path}` not found: a `weights = \"file\"` model reads it where the build wrote it; ship the \
         .bpk with the program and load it with `from_file(path, device)`"
    )]
    Missing { path: String },
    #[cfg(feature = "std")]
    #[error("cannot read weights file `{path}`: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("invalid Burnpack weights: {0}")]
    Format(String),
    #[error("weights do not match the model: {0}")]
    Mismatch(String),
}

fn load_from_store<M: ModuleSnapshot>(mut module: M, store: BurnpackStore) -> Result<M, LoadError> {
    let mut store = store.allow_partial(false);
    let result = module.load_from(&mut store).map_err(|e| LoadError::Format(e.to_string()))?;
    if !result.errors.is_empty() {
        let first: Vec<String> = result.errors.iter().take(3).map(|e| format!("{e:?}")).collect();
        return Err(LoadError::Mismatch(first.join("; ")));
    }
    if !result.unused.is_empty() {
        return Err(LoadError::Mismatch(format!("tensors not used by the model: {:?}", result.unused)));
    }
    Ok(module)
}

/// Loads weights embedded in the binary (zero-copy where the backend allows).
pub fn load_static<M: ModuleSnapshot>(module: M, bytes: &'static [u8]) -> Result<M, LoadError> {
    load_from_store(module, BurnpackStore::from_static(bytes))
}

/// Loads weights from Burnpack bytes.
pub fn load_bytes<M: ModuleSnapshot>(module: M, bytes: Vec<u8>) -> Result<M, LoadError> {
    let bytes = burn_store::burn_pack::Bytes::from_bytes_vec(bytes);
    load_from_store(module, BurnpackStore::from_bytes(Some(bytes)))
}

/// Loads weights from a `.bpk` file (`from_file` of generated models).
pub fn load_file<M: ModuleSnapshot>(module: M, path: impl WeightsPath) -> Result<M, LoadError> {
    path.load(module)
}

/// Where `from_file` reads weights: with `std`, any path (`AsRef<std::path::Path>`). Generated
/// code names this trait rather than `std::path::Path` so that it also compiles in `#![no_std]`
/// crates, where no type implements it: there is no file system to read from.
#[diagnostic::on_unimplemented(
    message = "`from_file` reads weights from a file path: it needs burn-onnx's `std` feature",
    label = "not a path burn-onnx can read (`AsRef<std::path::Path>` with the `std` feature)"
)]
pub trait WeightsPath {
    /// Loads the Burnpack weights at this path into `module`.
    fn load<M: ModuleSnapshot>(self, module: M) -> Result<M, LoadError>;
}

#[cfg(feature = "std")]
impl<P: AsRef<std::path::Path>> WeightsPath for P {
    fn load<M: ModuleSnapshot>(self, module: M) -> Result<M, LoadError> {
        let path = self.as_ref();
        if let Err(source) = std::fs::metadata(path) {
            let path = path.display().to_string();
            return Err(match source.kind() {
                std::io::ErrorKind::NotFound => LoadError::Missing { path },
                _ => LoadError::Io { path, source },
            });
        }
        load_from_store(module, BurnpackStore::from_file(path).auto_extension(false))
    }
}

/// A float parameter of `shape`, allocated lazily (weights usually overwrite it first).
pub fn float_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    Param::uninitialized(
        ParamId::new(),
        move |device, _| Tensor::zeros(shape, device),
        device.clone(),
        false,
        shape.into(),
    )
}

/// An integer parameter of `shape`, allocated lazily.
pub fn int_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D, Int>> {
    Param::uninitialized(
        ParamId::new(),
        move |device, _| Tensor::zeros(shape, device),
        device.clone(),
        false,
        shape.into(),
    )
}

/// A boolean parameter of `shape`, allocated lazily.
pub fn bool_param<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D, Bool>> {
    Param::uninitialized(
        ParamId::new(),
        move |device, _| Tensor::empty(shape, device),
        device.clone(),
        false,
        shape.into(),
    )
}

mod float;
// The flex kernels' matrix product (threads, CPU features detected at run time: std).
#[cfg(feature = "std")]
mod cpu;
mod feature_maps;
#[cfg(feature = "flex")]
mod gemm;
mod grid_sample;
mod kernels;
mod linalg;
mod low_bit;
mod parallel;
mod pool;
mod random;
mod recurrent;
mod resize;
mod roi_align;
mod roi_pool;
mod rotary;
mod sequence;
mod signal;
mod stateful;
mod strings;
mod svm_probabilities;
#[cfg(all(test, feature = "flex"))]
mod test_util;
mod tfidf;
mod tree_ensemble;
mod unique;
mod zip_map;

/// Helpers the generated code calls where one Burn call does not express an ONNX op.
pub mod ops {
    pub use crate::bitcast::{bit_cast, BitType};
    pub use crate::deform_conv::deform_conv2d;
    pub use crate::detection::non_max_suppression;
    pub use crate::feature_maps::{
        cast_map_to_float, cast_map_to_int, cast_map_to_string, dict_vectorize, CastMapValue, MapNumber,
    };
    pub use crate::grid_sample::{grid_sample, GridMode, GridPadding, GridSampleOptions};
    pub use crate::kernels::{
        avg_pool2d, batch_norm, cat, conv1d, conv2d, conv2d_residual, erf, exp, gelu, linear, local_response_norm,
        max_pool2d, sigmoid, silu, tanh, ConvActivation,
    };
    pub use crate::linalg::det;
    pub use crate::low_bit::{
        cast_float_to_int, cast_float_to_narrow_int, cast_to_e8m0, cast_to_mini_float, wrap_int, E8M0Rounding,
        MiniFloat, NarrowInt,
    };
    pub use crate::pool::{
        max_pool_with_indices, max_unpool, pool, same_pads, symmetric_padding, PoolReduce, PoolWindow,
    };
    pub use crate::random::{
        bernoulli, dropout, dropout_ratio, dropout_training, multinomial, random_normal, random_uniform,
    };
    pub use crate::recurrent::{recurrent, Activation, Cell, RecurrentOptions};
    pub use crate::resize::{resize, AspectPolicy, CoordinateMode, NearestMode, ResizeMode, ResizeOptions};
    pub use crate::roi_align::{roi_align, RoiAlignOptions};
    pub use crate::roi_pool::max_roi_pool;
    pub use crate::rotary::rotary_embedding;
    pub use crate::sequence::{
        common_length, empty_sequence, sequence_at, sequence_concat, sequence_erase, sequence_insert, sequence_stack,
        split_to_sequence,
    };
    pub use crate::signal::{dft, mel_weight_matrix, stft, window, DftOptions, Window};
    pub use crate::stateful::{
        causal_conv_with_state, linear_attention, tensor_scatter_indices, LinearAttentionOptions,
    };
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
    /// one pool by calling them in `pool.install(..)`.
    pub fn on_pool<R: Send>(forward: impl FnOnce() -> R + Send) -> R {
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

    use crate::float::{ceil, sqrt};
    use alloc::vec;
    use alloc::vec::Vec;
    use burn::tensor::kind::Basic;
    use burn::tensor::{Bool, Device, Int, Tensor, TensorData};

    /// Axes computed at run time (read back to the host), normalised into `0..rank`, sorted.
    pub fn runtime_axes(axes: Tensor<1, Int>, rank: usize) -> Vec<usize> {
        let mut out: Vec<usize> =
            axes.into_data().iter::<i64>().map(|a| if a < 0 { a + rank as i64 } else { a } as usize).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The numpy broadcast of same-rank shapes (a 1 stretches to the other size).
    pub fn broadcast_dims<const D: usize>(shapes: &[[usize; D]]) -> [usize; D] {
        let mut out = [1; D];
        for shape in shapes {
            for (o, &d) in out.iter_mut().zip(shape) {
                if d != 1 {
                    *o = d;
                }
            }
        }
        out
    }

    /// ONNX `Where`: `x` where `condition` holds, else `y`, all broadcast together.
    pub fn where_op<const D: usize, K: Basic>(
        condition: Tensor<D, Bool>,
        x: Tensor<D, K>,
        y: Tensor<D, K>,
    ) -> Tensor<D, K> {
        let dims = broadcast_dims(&[condition.dims(), x.dims(), y.dims()]);
        y.expand(dims).mask_where(condition.expand(dims), x.expand(dims))
    }

    /// An integer tensor in the device's default integer type. Weights load in the type they
    /// were stored in (i64), computed tensors come in the default type; ops such as `cat`
    /// need them alike.
    ///
    /// Values beyond the default type's range saturate (a cast would wrap: INT64_MAX, ONNX's
    /// usual "no limit", would become -1 in an i32).
    pub fn default_int<const D: usize>(t: Tensor<D, Int>) -> Tensor<D, Int> {
        let dtype = t.device().settings().int_dtype;
        let from = burn::tensor::IntDType::from(t.dtype());
        if from == dtype {
            return t;
        }
        let ((from_min, from_max), (to_min, to_max)) = (int_range(from), int_range(dtype));
        let t = if from_min < to_min || from_max > to_max {
            // Both bounds lie in the source type's range: the clamp's scalars are exact there.
            let bound = |v: i128| i64::try_from(v).unwrap_or(i64::MAX);
            t.clamp(bound(from_min.max(to_min)), bound(from_max.min(to_max)))
        } else {
            t
        };
        t.cast(dtype)
    }

    /// The values an integer type holds.
    fn int_range(dtype: burn::tensor::IntDType) -> (i128, i128) {
        use burn::tensor::IntDType as I;
        match dtype {
            I::I64 => (i64::MIN.into(), i64::MAX.into()),
            I::I32 => (i32::MIN.into(), i32::MAX.into()),
            I::I16 => (i16::MIN.into(), i16::MAX.into()),
            I::I8 => (i8::MIN.into(), i8::MAX.into()),
            I::U64 => (0, u64::MAX.into()),
            I::U32 => (0, u32::MAX.into()),
            I::U16 => (0, u16::MAX.into()),
            I::U8 => (0, u8::MAX.into()),
        }
    }

    /// The values of a small integer tensor (a shape, axes, sizes), read back to the host.
    pub fn host_ints<const D: usize>(values: Tensor<D, Int>) -> Vec<i64> {
        values.into_data().iter::<i64>().collect()
    }

    /// `[usize; D]` from ONNX integers (negative values clamp to 0).
    pub fn to_dims<const D: usize>(values: &[i64]) -> [usize; D] {
        let mut out = [1; D];
        for (o, &v) in out.iter_mut().zip(values) {
            *o = v.max(0) as usize;
        }
        out
    }

    /// A 1-D int64 tensor of the given dims (ONNX `Shape`, `Size`).
    pub fn shape_tensor(dims: &[usize], device: &Device) -> Tensor<1, Int> {
        let values: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let n = values.len();
        Tensor::from_data(TensorData::new(values, [n]), device)
    }

    /// A shape computed on the host (an `[i64; N]` of the generated code) as a tensor, for a
    /// tensor op that reads it. Values beyond the device's integer type saturate, as in
    /// [`default_int`] (Burn's conversion panics on them).
    pub fn ints_tensor(values: &[i64], device: &Device) -> Tensor<1, Int> {
        let (min, max) = int_range(device.settings().int_dtype);
        let (min, max) = (i64::try_from(min).unwrap_or(i64::MIN), i64::try_from(max).unwrap_or(i64::MAX));
        let saturated: Vec<i64> = values.iter().map(|v| (*v).clamp(min, max)).collect();
        Tensor::from_data(TensorData::new(saturated, [values.len()]), device)
    }

    fn range_values(start: f64, limit: f64, delta: f64) -> Vec<f64> {
        let n = ceil((limit - start) / delta).max(0.0) as usize;
        (0..n).map(|i| start + i as f64 * delta).collect()
    }

    fn first(values: TensorData) -> f64 {
        values.iter::<f64>().next().unwrap_or(0.0)
    }

    /// ONNX `Range` over floats, from one-element tensors (read back to the host); in `start`'s
    /// float dtype.
    pub fn range_float(start: Tensor<1>, limit: Tensor<1>, delta: Tensor<1>) -> Tensor<1> {
        let (device, dtype) = (start.device(), start.dtype());
        range_float_from(first(start.into_data()), first(limit.into_data()), first(delta.into_data()), (&device, dtype))
    }

    /// ONNX `Range` over floats, from bounds known on the host: computed in f64 and rounded to
    /// the dtype of `options` (`&device` for the device's default float, `(&device, DType::F64)`).
    pub fn range_float_from(
        start: f64,
        limit: f64,
        delta: f64,
        options: impl Into<burn::tensor::TensorCreationOptions>,
    ) -> Tensor<1> {
        let values = range_values(start, limit, delta);
        let n = values.len();
        Tensor::from_data(TensorData::new(values, [n]), options)
    }

    /// ONNX `Range` over integers, from one-element tensors (read back to the host).
    pub fn range_int(start: Tensor<1, Int>, limit: Tensor<1, Int>, delta: Tensor<1, Int>) -> Tensor<1, Int> {
        let device = start.device();
        range_int_from(first(start.into_data()), first(limit.into_data()), first(delta.into_data()), &device)
    }

    /// ONNX `Range` over integers, from bounds known on the host.
    pub fn range_int_from(start: f64, limit: f64, delta: f64, device: &Device) -> Tensor<1, Int> {
        let values: Vec<i64> = range_values(start, limit, delta).into_iter().map(|v| v as i64).collect();
        let n = values.len();
        Tensor::from_data(TensorData::new(values, [n]), device)
    }

    /// The dims `Expand` produces: `shape` broadcast with the input dims (right-aligned).
    pub fn expand_dims<const D: usize, const D2: usize>(dims: [usize; D], shape: &[i64]) -> [usize; D2] {
        core::array::from_fn(|i| {
            let from_input = (i + D).checked_sub(D2).map_or(1, |j| dims[j]);
            let from_shape = (i + shape.len()).checked_sub(D2).map_or(1, |j| shape[j].max(0) as usize);
            if from_shape == 1 {
                from_input
            } else {
                from_shape
            }
        })
    }

    /// Index tensors with negative entries counted from the end of an axis of `size`.
    pub fn wrap_indices<const D: usize>(indices: Tensor<D, Int>, size: usize) -> Tensor<D, Int> {
        let negative = indices.clone().lower_elem(0);
        indices.clone().mask_where(negative, indices.add_scalar(size as i64))
    }

    /// ONNX `OneHot`'s mask: true where the class along the new axis `axis` (of length `depth`)
    /// is the index (negatives counted from the end). An index outside `-depth..depth` matches
    /// no class, so its row is all "off", as ONNX asks (Burn's `one_hot` scatters it out of
    /// bounds).
    pub fn one_hot<const D: usize, const D2: usize>(
        indices: Tensor<D, Int>,
        depth: usize,
        axis: usize,
    ) -> Tensor<D2, Bool> {
        let indices: Tensor<D2, Int> = default_int(wrap_indices(indices, depth)).unsqueeze_dim(axis);
        let mut class_dims = [1; D2];
        class_dims[axis] = depth;
        let classes = Tensor::<1, Int>::arange(0..depth as i64, &indices.device()).reshape(class_dims);
        let dims = broadcast_dims(&[indices.dims(), class_dims]);
        indices.expand(dims).equal(default_int(classes).expand(dims))
    }

    /// Panics unless dim `axis` of graph input `input`'s `dims` is `size`, the size a declaration
    /// gave the dim the model calls `name` at import (the generated code is specialised to it).
    #[track_caller]
    pub fn check_dim(dims: &[usize], input: &str, axis: usize, name: &str, size: usize) {
        let got = dims[axis];
        assert!(got == size, "input `{input}`: dim {axis} (`{name}`) was declared {size} at import, got {got}");
    }

    /// Burn's `select`, its result of the data's dtype (see [`of_dtype`]).
    pub fn select<const D: usize, K: Basic>(data: Tensor<D, K>, axis: usize, indices: Tensor<1, Int>) -> Tensor<D, K> {
        let dtype = data.dtype();
        of_dtype(data.select(axis, indices), dtype)
    }

    /// `x` as a tensor of `dtype`, the dtype of the data it was picked from. Flex 0.22 types the
    /// result of a bool `select` or `gather` `U8` rather than `Bool`, and every later op of two
    /// bool tensors then fails flex's dtype assertion (debug builds) or mixes two storages (issue
    /// 36: every transformer exported with PyTorch's TorchScript exporter gathers its attention
    /// mask). Where the dtype changed, the same bytes (one per element either way) are re-typed;
    /// no other backend takes that path.
    fn of_dtype<const D: usize, K: Basic>(x: Tensor<D, K>, dtype: burn::tensor::DType) -> Tensor<D, K> {
        if x.dtype() == dtype || x.dtype().size() != dtype.size() {
            return x;
        }
        let device = x.device();
        let (bytes, shape, _) = x.into_data().into_parts();
        Tensor::from_data(TensorData::from_bytes(bytes, shape, dtype), &device)
    }

    /// ONNX `Gather`: `indices` (flattened, negatives counted from the end) picked along `axis`;
    /// the result has the data dims with `axis` replaced by `index_dims`.
    pub fn gather<const D: usize, const D2: usize, K: Basic>(
        data: Tensor<D, K>,
        indices: Tensor<1, Int>,
        index_dims: &[usize],
        axis: usize,
    ) -> Tensor<D2, K> {
        let dims = data.dims();
        let picked = select(data, axis, wrap_indices(indices, dims[axis]));
        let mut out: Vec<usize> = dims[..axis].to_vec();
        out.extend_from_slice(index_dims);
        out.extend_from_slice(&dims[axis + 1..]);
        if out.is_empty() {
            out.push(1);
        }
        picked.reshape(burn::tensor::Shape::from(out))
    }

    /// ONNX `GatherND`: the last axis of `indices` (length k) picks, per position, a slice of
    /// `data` along the k axes after the `batch_dims` leading ones, which data and indices share;
    /// negative indices count from the end of their axis. Computed as one Burn `gather_nd` of
    /// rank-3 indices (`[batch, positions, 1 + k]`, the batch number first) into the data seen
    /// as `[batch, k indexed dims, the rest]`, of rank `F` = k + 2.
    pub fn gather_nd<const D: usize, const M: usize, const F: usize, const OUT: usize, K: Basic>(
        data: Tensor<D, K>,
        indices: Tensor<M, Int>,
        batch_dims: usize,
    ) -> Tensor<OUT, K> {
        let device = data.device();
        let (data_dims, index_dims) = (data.dims(), indices.dims());
        let depth = index_dims[M - 1];
        let indexed = &data_dims[batch_dims..batch_dims + depth];
        let batch: usize = data_dims[..batch_dims].iter().product();
        let positions: usize = index_dims[batch_dims..M - 1].iter().product();
        let rest: usize = data_dims[batch_dims + depth..].iter().product();
        let mut size_dims = [1; M];
        size_dims[M - 1] = depth;
        let sizes: Vec<i64> = indexed.iter().map(|&d| d as i64).collect();
        let sizes = default_int(ints_tensor(&sizes, &device).reshape(size_dims)).expand(index_dims);
        let indices = default_int(indices);
        let negative = indices.clone().lower_elem(0);
        let indices = indices.clone().mask_where(negative, indices.add(sizes)).reshape([batch, positions, depth]);
        let batch_numbers =
            Tensor::<1, Int>::arange(0..batch as i64, &device).reshape([batch, 1, 1]).expand([batch, positions, 1]);
        let indices = Tensor::cat(vec![default_int(batch_numbers), indices], 2);
        let mut flat_dims = vec![batch];
        flat_dims.extend_from_slice(indexed);
        flat_dims.push(rest);
        let picked: Tensor<3, K> = data.reshape::<F, _>(burn::tensor::Shape::from(flat_dims)).gather_nd(indices);
        let mut out: Vec<usize> = index_dims[..M - 1].to_vec();
        out.extend_from_slice(&data_dims[batch_dims + depth..]);
        if out.is_empty() {
            out.push(1);
        }
        picked.reshape(burn::tensor::Shape::from(out))
    }

    /// ONNX `Compress`: the slices of `data` along `axis` where `condition` holds. A condition
    /// shorter than the axis leaves the rest out; a longer one may only add false entries.
    pub fn compress<const D: usize, K: Basic>(
        data: Tensor<D, K>,
        condition: Tensor<1, Bool>,
        axis: usize,
    ) -> Tensor<D, K> {
        let size = data.dims()[axis];
        let kept: Vec<i64> =
            condition.into_data().iter::<bool>().enumerate().filter(|&(_, c)| c).map(|(i, _)| i as i64).collect();
        if let Some(&last) = kept.last() {
            assert!(last < size as i64, "Compress: condition selects index {last} of an axis of {size}");
        }
        let count = kept.len();
        let indices = Tensor::<1, Int>::from_data(TensorData::new(kept, [count]), &data.device());
        select(data, axis, indices)
    }

    /// ONNX `Slice`: per listed axis (all axes in order when `axes` is empty), elements from
    /// `start` towards `end` (exclusive) by `step` (1 when `steps` is empty), bounds clamped
    /// like ONNX. Negative steps walk the flipped axis.
    pub fn slice<const D: usize, K: Basic>(
        mut x: Tensor<D, K>,
        starts: &[i64],
        ends: &[i64],
        axes: &[i64],
        steps: &[i64],
    ) -> Tensor<D, K> {
        for i in 0..starts.len() {
            let axis = axes.get(i).map_or(i as i64, |&a| if a < 0 { a + D as i64 } else { a }) as usize;
            let step = steps.get(i).copied().unwrap_or(1);
            let dim = x.dims()[axis] as i64;
            let norm = |v: i64| if v < 0 { v + dim } else { v };
            let (start, end) = (norm(starts[i]), norm(ends[i]));
            let mut ranges: Vec<burn::tensor::Slice> = (0..D).map(|_| burn::tensor::Slice::new(0, None, 1)).collect();
            if step > 0 {
                let (s, e) = (start.clamp(0, dim), end.clamp(0, dim).max(start.clamp(0, dim)));
                ranges[axis] = burn::tensor::Slice::new(s as isize, Some(e as isize), step as isize);
                x = x.slice(ranges.as_slice());
            } else {
                // Index i of the axis is n-1-i once flipped: walk forwards there.
                let (s, e) = (start.clamp(-1, dim - 1), end.clamp(-1, dim - 1));
                let (fs, fe) = (dim - 1 - s, (dim - 1 - e).max(dim - 1 - s));
                ranges[axis] = burn::tensor::Slice::new(fs as isize, Some(fe as isize), -step as isize);
                x = x.flip([axis]).slice(ranges.as_slice());
            }
        }
        x
    }

    /// ONNX's equal split of `dim` into `count` parts: `ceil(dim / count)` each, the last smaller.
    pub fn equal_split(dim: usize, count: usize) -> Vec<usize> {
        let part = dim.div_ceil(count.max(1));
        (0..count).map(|i| part.min(dim.saturating_sub(i * part))).collect()
    }

    /// ONNX `Split` into `N` parts of `sizes` along `axis` (a part may be empty, which Burn's
    /// `narrow` refuses and `slice` allows).
    pub fn split<const D: usize, const N: usize, K: Basic>(
        x: Tensor<D, K>,
        sizes: &[usize],
        axis: usize,
    ) -> [Tensor<D, K>; N] {
        let mut start = 0;
        core::array::from_fn(|i| {
            let len = sizes.get(i).copied().unwrap_or(0);
            // A slice, not `narrow`, which refuses the empty parts ONNX allows.
            let part = x.clone().slice_dim(axis, start..start + len);
            start += len;
            part
        })
    }

    /// Non-negative integers as `usize` (tile repeats, split sizes).
    pub fn to_usizes(values: &[i64]) -> Vec<usize> {
        values.iter().map(|&v| v.max(0) as usize).collect()
    }

    /// Per-element negative log-likelihood of `target` classes (axis 1 of `log_prob`), and the
    /// weight of each element (the class weight, 0 where the target is `ignore_index`).
    pub fn nll_loss<const D: usize, const T: usize>(
        log_prob: Tensor<D>,
        target: Tensor<T, Int>,
        class_weight: Option<Tensor<1>>,
        ignore_index: Option<i64>,
    ) -> (Tensor<T>, Tensor<T>) {
        let dims = target.dims();
        let ignored = match ignore_index {
            Some(i) => target.clone().equal_elem(i),
            None => target.clone().zeros_like().bool(),
        };
        let safe = target.mask_fill(ignored.clone(), 0);
        // Pick the target class with a one-hot mask along axis 1.
        let (classes, dtype) = (log_prob.dims()[1], log_prob.dtype());
        let one_hot: Tensor<D, Int> = safe.clone().one_hot_fill(classes, 1.0, 0.0, 1);
        let picked: Tensor<T> = log_prob.mul(one_hot.float().cast(dtype)).sum_dim(1).squeeze_dim(1);
        let weight: Tensor<T> = match class_weight {
            Some(w) => w.select(0, safe.reshape([-1])).reshape(dims),
            None => picked.ones_like(),
        };
        let weight = weight.mask_fill(ignored, 0.0);
        (picked.neg().mul(weight.clone()), weight)
    }

    /// ONNX `ReduceMax` (`max`) or `ReduceMin` along `axis`, kept as length 1. Over an empty
    /// axis (where Burn's `max_dim`/`min_dim` panic) every result is `identity`, the
    /// reduction's identity (-inf/+inf, an integer type's extreme); an integer identity beyond
    /// 32 bits is stored in 64 (int64's extremes do not fit Burn's 32-bit integers).
    pub fn extreme_dim<const D: usize, K: burn::tensor::kind::Ordered, E: burn::tensor::ElementConversion + Copy>(
        x: Tensor<D, K>,
        axis: usize,
        max: bool,
        identity: E,
    ) -> Tensor<D, K> {
        let mut dims = x.dims();
        if dims[axis] > 0 {
            return if max { x.max_dim(axis) } else { x.min_dim(axis) };
        }
        dims[axis] = 1;
        filled_like(&x, dims, identity)
    }

    /// The part of `data` that ONNX's GatherElements/ScatterElements `indices` address: all of
    /// `axis`, and on the other axes only as far as `indices` reaches (ONNX lets it be smaller
    /// there; Burn's gather and scatter want equal sizes). `None` when that is all of `data`.
    fn indexed_corner<const D: usize, K: Basic>(
        data: &Tensor<D, K>,
        axis: usize,
        indices: &Tensor<D, Int>,
    ) -> Option<[core::ops::Range<usize>; D]> {
        let (dims, covered) = (data.dims(), indices.dims());
        if (0..D).all(|a| a == axis || dims[a] == covered[a]) {
            return None;
        }
        Some(core::array::from_fn(|a| if a == axis { 0..dims[a] } else { 0..covered[a] }))
    }

    /// ONNX GatherElements (see [`indexed_corner`]).
    pub fn gather_elements<const D: usize, K: Basic>(
        data: Tensor<D, K>,
        axis: usize,
        indices: Tensor<D, Int>,
    ) -> Tensor<D, K> {
        let dtype = data.dtype();
        let gathered = match indexed_corner(&data, axis, &indices) {
            Some(corner) => data.slice(corner).gather(axis, indices),
            None => data.gather(axis, indices),
        };
        of_dtype(gathered, dtype)
    }

    /// ONNX ScatterElements: the corner `indices` address (see [`indexed_corner`]) is scattered
    /// into, then put back.
    pub fn scatter_elements<const D: usize, K: Basic>(
        data: Tensor<D, K>,
        axis: usize,
        indices: Tensor<D, Int>,
        updates: Tensor<D, K>,
        update: burn::tensor::ops::IndexingUpdateOp,
    ) -> Tensor<D, K> {
        match indexed_corner(&data, axis, &indices) {
            Some(corner) => {
                let part = data.clone().slice(corner.clone()).scatter(axis, indices, updates, update);
                data.slice_assign(corner, part)
            }
            None => data.scatter(axis, indices, updates, update),
        }
    }

    /// ReduceLogSumExp over `axes` (kept, of size 1), as ONNX Runtime: `m + log Σ exp(x - m)`
    /// with `m` the maximum (0 where it is infinite), so that large inputs do not overflow `exp`
    /// and very negative ones do not all underflow to `log 0`. An empty reduction is `log 0`,
    /// -inf.
    pub fn log_sum_exp<const D: usize>(x: Tensor<D>, axes: &[usize]) -> Tensor<D> {
        let mut kept = x.dims();
        if axes.iter().any(|&axis| kept[axis] == 0) {
            axes.iter().for_each(|&axis| kept[axis] = 1);
            return Tensor::full(kept, f32::NEG_INFINITY, (&x.device(), x.dtype()));
        }
        let max = axes.iter().fold(x.clone(), |m, &axis| m.max_dim(axis));
        let max = max.clone().mask_fill(max.is_inf(), 0.0);
        let sum = axes.iter().fold((x - max.clone()).exp(), |s, &axis| s.sum_dim(axis));
        sum.log() + max
    }

    /// ReduceMax/ReduceMin over all of `x`'s elements, as `[1]`: `identity` when there are none.
    /// (Flattening an empty tensor does not work: Burn's reshape reads a 0 as "keep this dim".)
    pub fn extreme_all<const D: usize, K: burn::tensor::kind::Ordered, E: burn::tensor::ElementConversion + Copy>(
        x: Tensor<D, K>,
        max: bool,
        identity: E,
    ) -> Tensor<1, K> {
        let count: usize = x.dims().iter().product();
        if count == 0 {
            return filled_like(&x, [1], identity);
        }
        extreme_dim(x.reshape([count]), 0, max, identity)
    }

    /// A tensor of `dims` filled with `value`, on `like`'s device in its dtype (i64 for an integer
    /// value that its 32-bit storage cannot hold).
    fn filled_like<
        const D: usize,
        const R: usize,
        K: burn::tensor::kind::Ordered,
        E: burn::tensor::ElementConversion + Copy,
    >(
        like: &Tensor<D, K>,
        dims: [usize; R],
        value: E,
    ) -> Tensor<R, K> {
        let dtype = like.dtype();
        let wide = dtype.is_int() && i32::try_from(value.elem::<i64>()).is_err();
        let dtype = if wide { burn::tensor::DType::I64 } else { dtype };
        Tensor::full(dims, value, (&like.device(), dtype))
    }

    /// ONNX `AffineGrid` (opset 20): `theta` `[N, S, S + 1]` (S = D - 2 spatial axes) applied to
    /// the normalised coordinates of the spatial dims of `size` (`[N, C, spatial...]`), giving
    /// `[N, spatial..., S]` whose last axis is (x, y, z): the last spatial axis's coordinate
    /// first. A coordinate runs from -1 to 1 along its axis, over the centres of the end elements
    /// with `align_corners`, else over their outer edges (the centres of `n` equal parts). An axis
    /// of one element has coordinate 1 with `align_corners` and 0 without, as ONNX Runtime
    /// computes it (Eigen's one-point `LinSpaced` is its upper end; ONNX's reference has none).
    pub fn affine_grid<const D: usize>(theta: Tensor<3>, size: &[i64], align_corners: bool) -> Tensor<D> {
        let spatial: Vec<usize> = size[2..].iter().map(|&d| d.max(0) as usize).collect();
        let axes = spatial.len();
        let count = spatial.iter().try_fold(1usize, |p, &n| p.checked_mul(n));
        let count = count.unwrap_or_else(|| panic!("AffineGrid: size {size:?} has too many positions"));
        let coordinate = |i: usize, n: usize| -> f64 {
            match (n, align_corners) {
                (1, true) => 1.0,
                (_, true) => -1.0 + 2.0 * i as f64 / (n - 1) as f64,
                (_, false) => -1.0 + (2 * i + 1) as f64 / n as f64,
            }
        };
        // The homogeneous coordinates (x, y, z, 1) of every position, in row-major order.
        let mut base = Vec::with_capacity(count * (axes + 1));
        let mut position = vec![0.0; axes];
        for flat in 0..count {
            let mut rest = flat;
            for (axis, &n) in spatial.iter().enumerate().rev() {
                position[axes - 1 - axis] = coordinate(rest % n, n);
                rest /= n;
            }
            base.extend_from_slice(&position);
            base.push(1.0);
        }
        let (device, dtype, batch) = (theta.device(), theta.dtype(), theta.dims()[0]);
        let mut dims = [0; D];
        dims[0] = batch;
        dims[1..D - 1].copy_from_slice(&spatial);
        dims[D - 1] = axes;
        if count == 0 || batch == 0 {
            // Burn's reshape reads a 0 as 'keep this dim'.
            return Tensor::zeros(dims, (&device, dtype));
        }
        let base = Tensor::<2>::from_data(TensorData::new(base, [count, axes + 1]), (&device, dtype));
        // [N, count, S + 1] times [N, S + 1, S].
        let grid = base.unsqueeze::<3>().expand([batch, count, axes + 1]).matmul(theta.swap_dims(1, 2));
        grid.reshape(dims)
    }

    /// Col2Im's per-axis attributes: `pads` holds all begins, then all ends.
    pub struct Col2ImWindow<'a> {
        pub strides: &'a [usize],
        pub dilations: &'a [usize],
        pub pads: &'a [usize],
    }

    /// ONNX `Col2Im`: columns `[N, C * prod(block), L]` summed into images `[N, C, image...]`
    /// (`D` = 2 + the spatial rank). Column `l` is the block at the `l`-th sliding position (row
    /// major) over the padded image, entry `c * prod(block) + k` its element `k` of channel `c`;
    /// overlapping entries add up. One scatter-add into the flattened padded image, whose
    /// positions are computed here, then the padding cropped.
    pub fn col2im<const D: usize>(columns: Tensor<3>, image: &[i64], block: &[i64], window: Col2ImWindow) -> Tensor<D> {
        let [batch, rows, count] = columns.dims();
        let spatial = image.len();
        assert!(
            spatial + 2 == D && block.len() == spatial && image.iter().chain(block).all(|&d| d > 0),
            "Col2Im: image_shape {image:?} and block_shape {block:?} must give {} positive dims",
            D - 2
        );
        let (image, block) = (to_usizes(image), to_usizes(block));
        let padded: Vec<usize> = (0..spatial).map(|i| image[i] + window.pads[i] + window.pads[i + spatial]).collect();
        let blocks_along: Vec<usize> = (0..spatial)
            .map(|i| {
                let span = window.dilations[i] * (block[i] - 1) + 1;
                assert!(span <= padded[i], "Col2Im: block {block:?} does not fit the padded image {padded:?}");
                (padded[i] - span) / window.strides[i] + 1
            })
            .collect();
        let block_size: usize = block.iter().product();
        assert!(
            rows % block_size == 0 && blocks_along.iter().product::<usize>() == count,
            "Col2Im: columns [{batch}, {rows}, {count}] do not hold blocks {block:?} at {blocks_along:?} positions"
        );
        // The row-major coordinates of `index` in a grid of `dims`.
        let coordinates = |mut index: usize, dims: &[usize]| {
            let mut at = vec![0; dims.len()];
            for (a, &d) in at.iter_mut().zip(dims).rev() {
                *a = index % d;
                index /= d;
            }
            at
        };
        let mut positions = Vec::with_capacity(block_size * count);
        for k in 0..block_size {
            let offset = coordinates(k, &block);
            for l in 0..count {
                let start = coordinates(l, &blocks_along);
                let flat = (0..spatial).fold(0, |flat, i| {
                    flat * padded[i] + start[i] * window.strides[i] + offset[i] * window.dilations[i]
                });
                positions.push(flat as i64);
            }
        }
        let channels = rows / block_size;
        let device = columns.device();
        let entries = block_size * count;
        let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [entries]), &device)
            .reshape([1, 1, entries])
            .expand([batch, channels, entries]);
        let pixels: usize = padded.iter().product();
        let summed = Tensor::<3>::zeros([batch, channels, pixels], (&device, columns.dtype())).scatter(
            2,
            positions,
            columns.reshape([batch, channels, entries]),
            burn::tensor::ops::IndexingUpdateOp::Add,
        );
        let mut dims = vec![batch, channels];
        dims.extend_from_slice(&padded);
        let mut crop: Vec<burn::tensor::Slice> = vec![burn::tensor::Slice::full(); 2];
        crop.extend(
            (0..spatial).map(|i| {
                burn::tensor::Slice::new(window.pads[i] as isize, Some((window.pads[i] + image[i]) as isize), 1)
            }),
        );
        summed.reshape::<D, _>(burn::tensor::Shape::from(dims)).slice(crop.as_slice())
    }

    /// Blocked quantization's scale or zero point (ONNX `block_size`): each value along `axis`
    /// repeated `block_size` times, cut to `len` (the quantized tensor's length there).
    pub fn repeat_blocks<const D: usize>(param: Tensor<D>, axis: usize, block_size: usize, len: usize) -> Tensor<D> {
        let indices = Tensor::<1, Int>::arange(0..len as i64, &param.device()).div_scalar(block_size as i64);
        param.select(axis, indices)
    }

    /// ONNX `Hardmax`: 1 at the first maximum along `axis`, 0 elsewhere.
    pub fn hardmax<const D: usize>(x: Tensor<D>, axis: usize) -> Tensor<D> {
        let (dims, dtype) = (x.dims(), x.dtype());
        let n = dims[axis];
        let winner = x.argmax(axis).expand(dims);
        let mut index_dims = [1usize; D];
        index_dims[axis] = n;
        let positions = Tensor::<1, Int>::arange(0..n as i64, &winner.device()).reshape(index_dims).expand(dims);
        winner.equal(positions).float().cast(dtype)
    }

    /// ONNX `Trilu`: the upper (or lower) triangle of the last two dims from diagonal `k` on.
    /// An empty tensor is returned as it is: Burn's triangle mask reshapes a zero-sized row or
    /// column index wrongly (it reads the 0 as 'keep this dim') and panics.
    pub fn trilu<const D: usize, K: burn::tensor::kind::Numeric>(x: Tensor<D, K>, k: i64, upper: bool) -> Tensor<D, K> {
        if x.dims().contains(&0) {
            x
        } else if upper {
            x.triu(k)
        } else {
            x.tril(k)
        }
    }

    /// ONNX `Pad` with `pads` as `[begins..., ends...]` over `axes` (all axes when empty);
    /// negative pads crop.
    pub fn pad<const D: usize, K: burn::tensor::kind::Numeric>(
        x: Tensor<D, K>,
        pads: &[i64],
        axes: &[i64],
        mode: burn::tensor::ops::PadMode,
    ) -> Tensor<D, K> {
        let (x, pairs) = crop_negative_pads(x, pads, axes);
        x.pad(pairs, mode)
    }

    /// ONNX `Pad` with mode `wrap` (opset 19), as numpy's: the padding before an axis repeats
    /// its end, the padding after it its start, going round the axis as often as the pad needs;
    /// negative pads crop first (as in [`pad`]).
    pub fn pad_wrap<const D: usize, K: Basic>(x: Tensor<D, K>, pads: &[i64], axes: &[i64]) -> Tensor<D, K> {
        let (x, pairs) = crop_negative_pads(x, pads, axes);
        pairs.into_iter().enumerate().fold(x, |x, (axis, (begin, end))| {
            if begin == 0 && end == 0 {
                return x;
            }
            let n = x.dims()[axis];
            assert!(n > 0, "Pad: mode wrap cannot pad axis {axis}, which is empty");
            // Whole copies of the axis around it, then the window from `begin` before the middle one.
            let (before, after) = (begin.div_ceil(n), end.div_ceil(n));
            let start = before * n - begin;
            x.repeat_dim(axis, before + 1 + after).slice_dim(axis, start..start + begin + n + end)
        })
    }

    /// `x` cropped where `pads` (`[begins..., ends...]` over `axes`, all axes when empty) are
    /// negative, and the `(begin, end)` padding left per axis.
    fn crop_negative_pads<const D: usize, K: Basic>(
        x: Tensor<D, K>,
        pads: &[i64],
        axes: &[i64],
    ) -> (Tensor<D, K>, Vec<(usize, usize)>) {
        let listed: Vec<usize> = if axes.is_empty() {
            (0..D).collect()
        } else {
            axes.iter().map(|&a| if a < 0 { a + D as i64 } else { a } as usize).collect()
        };
        let n = listed.len();
        let mut pairs = vec![(0usize, 0usize); D];
        let (mut starts, mut ends, mut crop_axes) = (vec![], vec![], vec![]);
        for (i, &axis) in listed.iter().enumerate() {
            let (begin, end) = (pads[i], pads[i + n]);
            pairs[axis] = (begin.max(0) as usize, end.max(0) as usize);
            if begin < 0 || end < 0 {
                starts.push((-begin).max(0));
                ends.push(if end < 0 { end } else { i64::MAX });
                crop_axes.push(axis as i64);
            }
        }
        let x = if crop_axes.is_empty() { x } else { slice(x, &starts, &ends, &crop_axes, &[]) };
        (x, pairs)
    }

    /// ONNX `ReverseSequence`: along `time_axis` (0 or 1; the batch axis is the other one), the
    /// first `lens[b]` elements of batch entry `b` reversed, the rest kept. The gather indices
    /// are computed by tensor ops, so the lengths are never read back: position `t` of entry `b`
    /// reads `lens[b] - 1 - t` where `t < lens[b]`, else `t`. Lengths are clamped into
    /// `0..=time` (ONNX Runtime refuses others) so that no index leaves the axis.
    pub fn reverse_sequence<const D: usize, K: Basic>(
        x: Tensor<D, K>,
        lens: Tensor<1, Int>,
        time_axis: usize,
    ) -> Tensor<D, K> {
        let dims = x.dims();
        let (time, batch_axis) = (dims[time_axis], 1 - time_axis);
        if time == 0 || dims[batch_axis] == 0 {
            return x; // Nothing to reverse (and Burn's reshape reads a 0 as 'keep this dim').
        }
        // The [time, batch] (or [batch, time]) plane, the other dims 1.
        let mut plane = [1usize; D];
        plane[time_axis] = time;
        plane[batch_axis] = dims[batch_axis];
        let (mut steps_dims, mut lens_dims) = ([1usize; D], [1usize; D]);
        steps_dims[time_axis] = time;
        lens_dims[batch_axis] = dims[batch_axis];
        let device = x.device();
        let steps = Tensor::<1, Int>::arange(0..time as i64, &device).reshape(steps_dims).expand(plane);
        let lens = default_int(lens).clamp(0, time as i64).reshape(lens_dims).expand(plane);
        let reversed = lens.clone().sub(steps.clone()).sub_scalar(1);
        let index = steps.clone().mask_where(steps.lower(lens), reversed);
        let dtype = x.dtype();
        of_dtype(x.gather(time_axis, index.expand(dims)), dtype)
    }

    /// ONNX `BitShift` of integers of `bits` bits (opset 28's rules, which earlier opsets left
    /// undefined): a right shift of a signed value is arithmetic; a shift by a negative amount
    /// or by `bits` or more gives what the sign fill alone gives, -1 for a right shift of a
    /// negative value and 0 otherwise. A left shift's result is wrapped into the type after.
    pub fn bit_shift<const D: usize>(
        x: Tensor<D, Int>,
        shift: Tensor<D, Int>,
        left: bool,
        bits: u32,
    ) -> Tensor<D, Int> {
        let dims = broadcast_dims(&[x.dims(), shift.dims()]);
        let (x, shift) = (x.expand(dims), shift.expand(dims));
        let bits = i64::from(bits);
        let out_of_range = shift.clone().lower_elem(0).bool_or(shift.clone().greater_equal_elem(bits));
        let shift = shift.clamp(0, bits - 1);
        if left {
            x.bitwise_left_shift(shift).mask_fill(out_of_range, 0)
        } else {
            let sign_fill = x.clone().lower_elem(0).int().neg();
            x.bitwise_right_shift(shift).mask_where(out_of_range, sign_fill)
        }
    }

    /// ONNX `CenterCropPad`: each of `axes` cropped or zero-padded about its centre to the size
    /// in `sizes` (an odd difference puts the extra element at the end), as a Pad with negative
    /// pads where it crops.
    pub fn center_crop_pad<const D: usize, K: burn::tensor::kind::Numeric>(
        x: Tensor<D, K>,
        sizes: &[i64],
        axes: &[usize],
    ) -> Tensor<D, K> {
        let dims = x.dims();
        let mut pads = vec![0i64; 2 * axes.len()];
        for (i, (&axis, &size)) in axes.iter().zip(sizes).enumerate() {
            assert!(size >= 0, "CenterCropPad: target size {size} of axis {axis} is negative");
            let diff = size - dims[axis] as i64;
            // Half the difference (rounded towards zero) before, the rest after.
            pads[i] = diff / 2;
            pads[i + axes.len()] = diff - diff / 2;
        }
        let axes: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
        pad(x, &pads, &axes, burn::tensor::ops::PadMode::Constant(0.0))
    }

    /// The attention mask input: boolean (true keeps a position) or added to the scores.
    pub enum AttentionMask {
        Keep(Tensor<4, Bool>),
        Add(Tensor<4>),
    }

    /// Attributes of ONNX `Attention`; the default is the schema's (no scale, mask, softcap or
    /// window, mode 0).
    #[derive(Default)]
    pub struct AttentionOptions {
        /// Defaults to `1 / sqrt(head size)`.
        pub scale: Option<f64>,
        pub causal: bool,
        /// `softcap * tanh(qk / softcap)` when positive.
        pub softcap: f64,
        /// The fourth output: 0 QK, 1 after softcap, 2 with the mask also added, 3 after softmax.
        pub qk_output_mode: usize,
        /// `left_window_size` (opset 25): a query at absolute position `p` sees no key before
        /// `p - left`; `None` (-1) leaves that side open.
        pub left_window: Option<usize>,
        /// `right_window_size` (opset 25): nor any key after `p + right`.
        pub right_window: Option<usize>,
        /// `softmax_precision`: the float type the softmax computes in; `None` for the scores'.
        pub softmax_precision: Option<burn::tensor::FloatDType>,
    }

    /// `bias` plus `-inf` where `hidden`, broadcast together.
    fn hide(bias: Tensor<4>, hidden: Tensor<4, Bool>) -> Tensor<4> {
        let dims = broadcast_dims(&[bias.dims(), hidden.dims()]);
        let add =
            Tensor::<4>::zeros(hidden.dims(), (&bias.device(), bias.dtype())).mask_fill(hidden, f32::NEG_INFINITY);
        bias.expand(dims).add(add.expand(dims))
    }

    /// ONNX `Attention` on `[batch, heads, seq, head size]` tensors. Returns the output, the
    /// present key and value (past caches concatenated), and the QK intermediate. As the spec's
    /// function body (onnx 1.23): the causal and window masks are offset by the count of valid
    /// keys before the query block (the past's length, or `nonpad_kv_seqlen - q_len` per batch
    /// without a past), and a query row whose bias hides every key gives zero probabilities.
    #[allow(clippy::too_many_arguments)]
    pub fn attention(
        q: Tensor<4>,
        k: Tensor<4>,
        v: Tensor<4>,
        mask: Option<AttentionMask>,
        past_key: Option<Tensor<4>>,
        past_value: Option<Tensor<4>>,
        nonpad_kv_seqlen: Option<Tensor<1, Int>>,
        options: AttentionOptions,
    ) -> (Tensor<4>, Tensor<4>, Tensor<4>, Tensor<4>) {
        let device = q.device();
        // Tensors made here have q's float dtype (f64, f16, ...), as the scores do.
        let float = (&device, q.dtype());
        let past = past_key.as_ref().map_or(0, |p| p.dims()[2]);
        let k = match past_key {
            Some(p) => Tensor::cat(vec![p, k], 2),
            None => k,
        };
        let v = match past_value {
            Some(p) => Tensor::cat(vec![p, v], 2),
            None => v,
        };
        let (present_key, present_value) = (k.clone(), v.clone());
        let [batch, q_heads, q_len, head] = q.dims();
        let [_, _, kv_len, _] = k.dims();
        let inf = f32::NEG_INFINITY;
        // Additive bias [*, *, q_len, kv_len]; a shorter mask is padded with masked positions.
        let mut bias = Tensor::<4>::zeros([1, 1, q_len, kv_len], float);
        // Whether anything hides keys (else no row can be fully masked).
        let windowed = options.left_window.is_some() || options.right_window.is_some();
        let hides_keys = mask.is_some() || options.causal || windowed || nonpad_kv_seqlen.is_some();
        if let Some(mask) = mask {
            let additive = match mask {
                AttentionMask::Keep(m) => Tensor::<4>::zeros(m.dims(), float).mask_fill(m.bool_not(), inf),
                AttentionMask::Add(m) => m,
            };
            let width = additive.dims()[3];
            let additive = if width < kv_len {
                additive.pad([(0, 0), (0, 0), (0, 0), (0, kv_len - width)], burn::tensor::ops::PadMode::Constant(inf))
            } else {
                additive
            };
            let dims = broadcast_dims(&[bias.dims(), additive.dims()]);
            bias = bias.expand(dims).add(additive.expand(dims));
        }
        if options.causal || windowed {
            // How far query i's absolute position (i plus the keys before the block) lies past
            // key j, per batch `[batch or 1, 1, q_len, kv_len]`.
            let offsets = match &nonpad_kv_seqlen {
                Some(lengths) if past == 0 => lengths.clone().sub_scalar(q_len as i64).reshape([batch, 1, 1, 1]),
                _ => Tensor::<4, Int>::full([1, 1, 1, 1], past as i64, &device),
            };
            let dims = [offsets.dims()[0], 1, q_len, kv_len];
            let queries = Tensor::<1, Int>::arange(0..q_len as i64, &device).reshape([1, 1, q_len, 1]).expand(dims);
            let keys = Tensor::<1, Int>::arange(0..kv_len as i64, &device).reshape([1, 1, 1, kv_len]).expand(dims);
            let distance = queries.add(offsets.expand(dims)).sub(keys);
            if options.causal {
                bias = hide(bias, distance.clone().lower_elem(0));
            }
            if let Some(left) = options.left_window {
                bias = hide(bias, distance.clone().greater_elem(left as i64));
            }
            if let Some(right) = options.right_window {
                bias = hide(bias, distance.neg().greater_elem(right as i64));
            }
        }
        if let Some(lengths) = nonpad_kv_seqlen {
            let positions =
                Tensor::<1, Int>::arange(0..kv_len as i64, &device).reshape([1, kv_len]).expand([batch, kv_len]);
            let padding = positions.greater_equal(lengths.reshape([batch, 1]).expand([batch, kv_len]));
            bias = hide(bias, padding.reshape([batch, 1, 1, kv_len]));
        }
        let (k, v) = (repeat_kv_heads(k, q_heads, "Attention"), repeat_kv_heads(v, q_heads, "Attention"));
        // sqrt(scale) rounded to q's type first, as the function body's Cast.
        let root = sqrt(options.scale.unwrap_or(1.0 / sqrt(head as f64)));
        let root = Tensor::<4>::full([1, 1, 1, 1], root, float);
        let qk = q.mul(root.clone()).matmul(k.swap_dims(2, 3).mul(root));
        // Softcap before the mask, so that masked scores stay -inf.
        let capped = if options.softcap > 0.0 {
            qk.clone().div_scalar(options.softcap).tanh().mul_scalar(options.softcap)
        } else {
            qk.clone()
        };
        let dims = broadcast_dims(&[capped.dims(), bias.dims()]);
        // A row the bias hides entirely has no key to attend: its probabilities are zero.
        let all_hidden = hides_keys.then(|| bias.clone().max_dim(3).equal_elem(inf).expand(dims));
        let with_bias = capped.clone().expand(dims).add(bias.expand(dims));
        let scores = match options.softmax_precision {
            Some(dtype) => with_bias.clone().cast(dtype),
            None => with_bias.clone(),
        };
        let probs = guarded_softmax(scores);
        let probs = match all_hidden {
            Some(rows) => probs.mask_fill(rows, 0.0),
            None => probs,
        }
        .cast(float.1);
        let y = probs.clone().matmul(v);
        let qk_output = match options.qk_output_mode {
            1 => capped,
            2 => with_bias,
            3 => probs,
            _ => qk,
        };
        (y, present_key, present_value, qk_output)
    }

    /// Softmax over `axis` as ONNX's function body writes it, `exp(x - max) / sum(exp(x - max))`,
    /// each step a tensor of `x`'s type: for f16 and bf16 tensors, whose every step ONNX's
    /// reference rounds (a softmax computed in f32 and rounded once differs in the last bit).
    pub fn softmax_in_steps<const D: usize>(x: Tensor<D>, axis: usize) -> Tensor<D> {
        let max = x.clone().max_dim(axis);
        let exp = x.sub(max).exp();
        let sum = exp.clone().sum_dim(axis);
        exp.div(sum)
    }

    /// Softmax over the last axis as ONNX's reference computes it: a row whose scores are all
    /// `-inf` gives zeros (not NaN), each step in `x`'s type.
    fn guarded_softmax(x: Tensor<4>) -> Tensor<4> {
        let max = x.clone().max_dim(3);
        let all_inf = max.clone().equal_elem(f32::NEG_INFINITY);
        let exp = x.sub(max.mask_fill(all_inf, 0.0)).exp();
        let sum = exp.clone().sum_dim(3);
        let empty = sum.clone().equal_elem(0.0);
        exp.div(sum.mask_fill(empty, 1.0))
    }

    /// Grouped-query attention: each of `t`'s key/value heads serves `q_heads / kv_heads`
    /// contiguous query heads (query head `h` reads key/value head `h / group`), so each is
    /// repeated that many times in place. `op` names the node's op in the panic when the head
    /// counts do not divide.
    fn repeat_kv_heads(t: Tensor<4>, q_heads: usize, op: &str) -> Tensor<4> {
        let [b, kv_heads, s, d] = t.dims();
        if kv_heads == q_heads {
            return t;
        }
        assert!(
            kv_heads > 0 && q_heads.is_multiple_of(kv_heads),
            "{op}: {q_heads} query heads are not a multiple of {kv_heads} key/value heads"
        );
        let group = q_heads / kv_heads;
        t.unsqueeze_dim::<5>(2).expand([b, kv_heads, group, s, d]).reshape([b, q_heads, s, d])
    }

    /// FlexAttention's scores (`ai.onnx.preview`): `(q·√s)(k·√s)ᵀ` in q's dtype, √s rounded to
    /// f32 first (as ONNX's reference), k's heads repeated for grouped-query attention, cast to
    /// `softmax` (the dtype the softmax and the modifiers compute in). `scale` defaults to
    /// `1 / sqrt(head size)`.
    pub fn flex_attention_scores(
        q: Tensor<4>,
        k: Tensor<4>,
        scale: Option<f64>,
        softmax: burn::tensor::FloatDType,
    ) -> Tensor<4> {
        let [_, q_heads, _, head] = q.dims();
        let scale = scale.unwrap_or(1.0 / sqrt(head as f64)) as f32;
        let root = sqrt(f64::from(scale)) as f32;
        let k = repeat_kv_heads(k, q_heads, "FlexAttention");
        q.mul_scalar(root).matmul(k.mul_scalar(root).swap_dims(2, 3)).cast(softmax)
    }

    /// FlexAttention's output: `probs·v` in the probabilities' dtype (v cast to it, its heads
    /// repeated for grouped-query attention), cast to v's dtype.
    pub fn flex_attention_output(probs: Tensor<4>, v: Tensor<4>) -> Tensor<4> {
        let (q_heads, out) = (probs.dims()[1], v.dtype());
        let v = repeat_kv_heads(v, q_heads, "FlexAttention").cast(probs.dtype());
        probs.matmul(v).cast(out)
    }

    /// `softmax(q·kᵀ·scale + mask, 3)·v`, the attention pattern fused at import, when the
    /// operands have one batch and head count and the mask broadcasts to the scores: through our
    /// kernel on flex f32 tensors (`kernels::attention`), else the backend's attention kernel;
    /// otherwise (ONNX MatMul also broadcasts those dims) as the separate ops. A row whose scores are all `-inf` is zeros from the kernel, NaN from
    /// the separate ops (as in ONNX).
    pub fn scaled_dot_product_attention(
        q: Tensor<4>,
        key_t: Tensor<4>,
        v: Tensor<4>,
        mask: Option<Tensor<4>>,
        scale: f64,
    ) -> Tensor<4> {
        let [batch, heads, q_len, _] = q.dims();
        let [kb, kh, _, kv_len] = key_t.dims();
        let [vb, vh, _, _] = v.dims();
        let scores = [batch, heads, q_len, kv_len];
        let mask_fits = mask.as_ref().is_none_or(|m| m.dims().iter().zip(scores).all(|(&d, full)| d == 1 || d == full));
        if [kb, vb] == [batch; 2] && [kh, vh] == [heads; 2] && mask_fits {
            let (q, key_t, v, mask) = match crate::kernels::attention((q, key_t, v, mask), scale as f32) {
                Ok(out) => return out,
                Err(operands) => operands,
            };
            let options = burn::tensor::ops::AttentionModuleOptions { scale: Some(scale), ..Default::default() };
            return burn::tensor::module::attention(q, key_t.swap_dims(2, 3), v, None, mask, options);
        }
        let mut scores = q.matmul(key_t).mul_scalar(scale);
        if let Some(mask) = mask {
            let dims = broadcast_dims(&[scores.dims(), mask.dims()]);
            scores = scores.expand(dims).add(mask.expand(dims));
        }
        burn::tensor::activation::softmax(scores, 3).matmul(v)
    }
}

/// What user hooks (`#[onnx_custom_op]`) receive and declare.
///
/// A hook whose declared signature does not fit the node is a compile error (E0080, the
/// failed signature check, with a message naming the hook, the node and the expected types):
///
/// ```compile_fail,E0080
/// use burn_onnx::burn::tensor::Tensor;
/// use burn_onnx::hook::NodeAttributes;
/// use burn_onnx::{onnx_custom_op, onnx_model};
///
/// // The model's ChannelScale node takes and returns a rank-4 tensor, not rank 2.
/// #[onnx_custom_op]
/// fn channel_scale(x: Tensor<2>, _attributes: &NodeAttributes) -> Tensor<2> { x }
///
/// #[onnx_custom_op]
/// fn scale_bias(x: Tensor<4>, _attributes: &NodeAttributes) -> Tensor<4> { x }
///
/// #[onnx_model(
///     "../ui-tests/models/unsupported_ops.onnx",
///     custom_ops = ["example.custom::ChannelScale" => channel_scale, "example.custom::ScaleBias" => scale_bias]
/// )]
/// struct Model;
///
/// fn main() {}
/// ```
///
/// The same model with fitting hooks compiles:
///
/// ```
/// use burn_onnx::burn::tensor::Tensor;
/// use burn_onnx::hook::NodeAttributes;
/// use burn_onnx::{onnx_custom_op, onnx_model};
///
/// #[onnx_custom_op]
/// fn channel_scale(x: Tensor<4>, _attributes: &NodeAttributes) -> Tensor<4> { x }
///
/// #[onnx_custom_op]
/// fn scale_bias(x: Tensor<4>, _attributes: &NodeAttributes) -> Tensor<4> { x }
///
/// #[onnx_model(
///     "../ui-tests/models/unsupported_ops.onnx",
///     custom_ops = ["example.custom::ChannelScale" => channel_scale, "example.custom::ScaleBias" => scale_bias]
/// )]
/// struct Model;
///
/// fn main() {}
/// ```
pub mod hook {
    /// A tensor kind in a hook signature.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum TensorKind {
        Float,
        Int,
        Bool,
    }

    /// The ranks and kinds of a hook's tensor arguments and results, as declared in Rust.
    #[derive(Debug, Clone, Copy)]
    pub struct HookSignature {
        pub inputs: &'static [(usize, TensorKind)],
        pub outputs: &'static [(usize, TensorKind)],
    }

    const fn same(a: &[(usize, TensorKind)], b: &[(usize, TensorKind)]) -> bool {
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i].0 != b[i].0 || a[i].1 as u8 != b[i].1 as u8 {
                return false;
            }
            i += 1;
        }
        true
    }

    /// Whether a hook declared as `signature` fits a node with these inputs and outputs
    /// (evaluated at compile time by the generated code).
    pub const fn fits(
        signature: &HookSignature,
        inputs: &[(usize, TensorKind)],
        outputs: &[(usize, TensorKind)],
    ) -> bool {
        same(signature.inputs, inputs) && same(signature.outputs, outputs)
    }

    /// An attribute of the node, as a constant.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum AttributeValue {
        Int(i64),
        Float(f64),
        Ints(&'static [i64]),
        Floats(&'static [f64]),
        String(&'static str),
    }

    /// The node's attributes, passed to the hook as its last argument.
    #[derive(Debug, Clone, Copy)]
    pub struct NodeAttributes(pub &'static [(&'static str, AttributeValue)]);

    impl NodeAttributes {
        pub fn get(&self, name: &str) -> Option<AttributeValue> {
            self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
        }

        pub fn int(&self, name: &str) -> Option<i64> {
            match self.get(name)? {
                AttributeValue::Int(i) => Some(i),
                _ => None,
            }
        }

        pub fn float(&self, name: &str) -> Option<f64> {
            match self.get(name)? {
                AttributeValue::Float(f) => Some(f),
                _ => None,
            }
        }

        pub fn ints(&self, name: &str) -> Option<&'static [i64]> {
            match self.get(name)? {
                AttributeValue::Ints(v) => Some(v),
                _ => None,
            }
        }

        pub fn floats(&self, name: &str) -> Option<&'static [f64]> {
            match self.get(name)? {
                AttributeValue::Floats(v) => Some(v),
                _ => None,
            }
        }

        pub fn string(&self, name: &str) -> Option<&'static str> {
            match self.get(name)? {
                AttributeValue::String(s) => Some(s),
                _ => None,
            }
        }
    }
}
