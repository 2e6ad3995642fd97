//! The runtime helpers of `burn_onnx::ops` defined in `src/ops/` that generated code calls, each
//! on the examples of the ONNX operator documentation (onnx.ai, `docs/Operators.md` of onnx
//! 1.22), on values worked out by hand from the operator's definition, edge cases included, or on
//! a case of `scripts/helper_references.py` (named in the test), whose expected values come from
//! ONNX's reference evaluator or ONNX Runtime. The helpers of the other files are tested in their
//! file's `mod tests`.

use burn::tensor::ops::PadMode;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use burn_onnx::ops;

fn device() -> Device {
    Device::flex()
}

fn floats<const D: usize>(values: &[f32], shape: [usize; D]) -> Tensor<D> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), &device())
}

fn ints<const D: usize>(values: &[i64], shape: [usize; D]) -> Tensor<D, Int> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), &device())
}

fn float_values<const D: usize>(t: Tensor<D>) -> (Vec<usize>, Vec<f32>) {
    (t.dims().to_vec(), t.into_data().iter::<f32>().collect())
}

fn int_values<const D: usize>(t: Tensor<D, Int>) -> (Vec<usize>, Vec<i64>) {
    (t.dims().to_vec(), t.into_data().iter::<i64>().collect())
}

#[test]
fn host_values_and_dims() {
    assert_eq!(ops::host_floats(floats(&[0.5, -2.0], [2])), [0.5, -2.0]);
    assert_eq!(ops::host_ints(ints(&[3, -1, 0, 7], [2, 2])), [3, -1, 0, 7]);
    // Reshape-style shapes: missing trailing dims are 1, negatives clamp to 0.
    assert_eq!(ops::to_dims::<3>(&[4, -1]), [4, 0, 1]);
    assert_eq!(ops::to_usizes(&[2, -3, 0]), [2, 0, 0]);
    assert_eq!(int_values(ops::shape_tensor(&[2, 3, 5], &device())), (vec![3], vec![2, 3, 5]));
    assert_eq!(int_values(ops::shape_tensor(&[], &device())), (vec![0], vec![]));
}

#[test]
fn runtime_axes_are_normalised_sorted_and_unique() {
    assert_eq!(ops::runtime_axes(ints(&[-1, 0, 3, -4], [4]), 4), [0, 3]);
    assert_eq!(ops::runtime_axes(ints(&[2, -2], [2]), 3), [1, 2]);
}

#[test]
fn broadcast_and_expand_dims_follow_numpy() {
    assert_eq!(ops::broadcast_dims(&[[2, 1, 4], [1, 3, 1], [1, 1, 1]]), [2, 3, 4]);
    // Expand's documentation: [3, 1] expanded with shape [2, 1, 6] is [2, 3, 6]; with
    // shape [3, 4], [3, 4].
    assert_eq!(ops::expand_dims::<2, 3>([3, 1], &[2, 1, 6]), [2, 3, 6]);
    assert_eq!(ops::expand_dims::<2, 2>([3, 1], &[3, 4]), [3, 4]);
    // A shape shorter than the input broadcasts from the right.
    assert_eq!(ops::expand_dims::<3, 3>([2, 1, 5], &[4, 1]), [2, 4, 5]);
}

#[test]
fn where_broadcasts_condition_and_both_branches() {
    // Where's documentation: condition [[1, 0], [1, 1]], x [[1, 2], [3, 4]], y [[9, 8], [7, 6]].
    let condition: Tensor<2, Bool> = ints(&[1, 0, 1, 1], [2, 2]).equal_elem(1);
    let y = ops::where_op(condition, floats(&[1.0, 2.0, 3.0, 4.0], [2, 2]), floats(&[9.0, 8.0, 7.0, 6.0], [2, 2]));
    assert_eq!(float_values(y), (vec![2, 2], vec![1.0, 8.0, 3.0, 4.0]));
    // A row condition against a column of x and a scalar-like y.
    let condition: Tensor<2, Bool> = ints(&[1, 0, 1], [1, 3]).equal_elem(1);
    let y = ops::where_op(condition, floats(&[1.0, 2.0], [2, 1]), floats(&[0.0], [1, 1]));
    assert_eq!(float_values(y), (vec![2, 3], vec![1.0, 0.0, 1.0, 2.0, 0.0, 2.0]));
}

#[test]
fn default_int_converts_to_the_device_integer_type() {
    let stored = Tensor::<1, Int>::from_data(TensorData::new(vec![1i32, -2], [2]), &device());
    let converted = ops::default_int(stored);
    assert_eq!(converted.dtype(), burn::tensor::DType::from(device().settings().int_dtype));
    assert_eq!(int_values(converted), (vec![2], vec![1, -2]));
}

#[test]
fn default_int_saturates_int64_values_beyond_the_device_integer_type() {
    // An int64 weight or input narrowed to flex's i32: sentinels such as INT64_MAX ("no limit",
    // torchvision's NonMaxSuppression) stay the largest value instead of wrapping to -1.
    let device = device();
    assert_eq!(device.settings().int_dtype, burn::tensor::IntDType::I32, "flex's default integer");
    let values = vec![i64::MAX, i64::MIN, 3_000_000_000, -3_000_000_000, 7, -7];
    let stored = Tensor::<1, Int>::from_data(TensorData::new(values, [6]), (&device, burn::tensor::DType::I64));
    let converted = ops::default_int(stored);
    assert_eq!(converted.dtype(), burn::tensor::DType::I32);
    let (max, min) = (i64::from(i32::MAX), i64::from(i32::MIN));
    assert_eq!(int_values(converted), (vec![6], vec![max, min, max, min, 7, -7]));
}

#[test]
fn a_host_shape_beyond_the_device_integer_type_saturates() {
    // A host array holding INT64_MAX (a constant "to the end" joined to computed dims) made a
    // tensor of flex's i32: Burn's conversion panicked on it.
    let t = ops::ints_tensor(&[i64::MAX, i64::MIN, 3_000_000_000, 5], &device());
    let (max, min) = (i64::from(i32::MAX), i64::from(i32::MIN));
    assert_eq!(int_values(t), (vec![4], vec![max, min, max, 5]));
}

#[test]
fn range_matches_the_documentation() {
    // Range's documentation: (3, 9, 3) gives [3, 6]; (10, 4, -3) gives [10, 7].
    assert_eq!(int_values(ops::range_int(ints(&[3], [1]), ints(&[9], [1]), ints(&[3], [1]))), (vec![2], vec![3, 6]));
    assert_eq!(int_values(ops::range_int(ints(&[10], [1]), ints(&[4], [1]), ints(&[-3], [1]))), (vec![2], vec![10, 7]));
    // ceil((limit - start) / delta) elements, none when the limit is behind the start.
    let r = ops::range_float(floats(&[1.0], [1]), floats(&[2.0], [1]), floats(&[0.3], [1]));
    let (dims, values) = float_values(r);
    assert_eq!(dims, [4]);
    for (v, want) in values.iter().zip([1.0, 1.3, 1.6, 1.9]) {
        assert!((v - want).abs() < 1e-6, "{values:?}");
    }
    assert_eq!(int_values(ops::range_int(ints(&[5], [1]), ints(&[1], [1]), ints(&[2], [1]))), (vec![0], vec![]));
}

#[test]
fn gather_wraps_negative_indices_and_keeps_index_dims() {
    // Gather's documentation, axis 0: data [[1, 1.2], [2.3, 3.4], [4.5, 5.7]], indices
    // [[0, 1], [1, 2]] gives [[[1, 1.2], [2.3, 3.4]], [[2.3, 3.4], [4.5, 5.7]]].
    let data = floats(&[1.0, 1.2, 2.3, 3.4, 4.5, 5.7], [3, 2]);
    let y: Tensor<3> = ops::gather(data.clone(), ints(&[0, 1, 1, 2], [4]), &[2, 2], 0);
    assert_eq!(float_values(y), (vec![2, 2, 2], vec![1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]));
    // Axis 1 with a negative index (-1 is the last column), a scalar index dropping the axis.
    let y: Tensor<1> = ops::gather(data, ints(&[-1], [1]), &[], 1);
    assert_eq!(float_values(y), (vec![3], vec![1.2, 3.4, 5.7]));
    assert_eq!(int_values(ops::wrap_indices(ints(&[-3, 0, 2], [3]), 3)), (vec![3], vec![0, 0, 2]));
}

#[test]
fn slice_matches_the_documentation() {
    let data = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [2, 4]);
    // Slice's documentation: starts [1, 0], ends [2, 3], axes [0, 1], steps [1, 2] gives
    // [[5, 7]].
    let y = ops::slice(data.clone(), &[1, 0], &[2, 3], &[0, 1], &[1, 2]);
    assert_eq!(float_values(y), (vec![1, 2], vec![5.0, 7.0]));
    // starts [0, 1], ends [-1, 1000] gives [[2, 3, 4]] (the end clamps to the axis).
    let y = ops::slice(data.clone(), &[0, 1], &[-1, 1000], &[], &[]);
    assert_eq!(float_values(y), (vec![1, 3], vec![2.0, 3.0, 4.0]));
    // A negative step from the end walks backwards: [8, 6] then [4, 2] rows reversed.
    let y = ops::slice(data.clone(), &[-1, -1], &[i64::MIN, i64::MIN], &[0, 1], &[-1, -2]);
    assert_eq!(float_values(y), (vec![2, 2], vec![8.0, 6.0, 4.0, 2.0]));
    // An empty range keeps the axis with size 0.
    let y = ops::slice(data, &[3], &[1], &[1], &[]);
    assert_eq!(float_values(y).0, [2, 0]);
}

#[test]
fn split_sizes_and_equal_parts() {
    // Split's documentation (opset 18, num_outputs 3 of 7 elements): [3, 3, 1]; 6 into 3: 2 each.
    assert_eq!(ops::equal_split(7, 3), [3, 3, 1]);
    assert_eq!(ops::equal_split(6, 3), [2, 2, 2]);
    assert_eq!(ops::equal_split(0, 2), [0, 0]);
    let x = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1, 6]);
    let [a, b]: [Tensor<2>; 2] = ops::split(x, &[2, 4], 1);
    assert_eq!(float_values(a), (vec![1, 2], vec![1.0, 2.0]));
    assert_eq!(float_values(b), (vec![1, 4], vec![3.0, 4.0, 5.0, 6.0]));
}

#[test]
fn repeat_blocks_repeats_each_value_and_cuts_the_last_block() {
    // By the definition: blocks of 2 along axis 1 of a length-5 axis, the last block short.
    let scale = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let expected = vec![1.0, 1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0];
    assert_eq!(float_values(ops::repeat_blocks(scale, 1, 2, 5)), (vec![2, 5], expected));
}

#[test]
fn hardmax_marks_the_first_maximum() {
    // Ties go to the first occurrence, as numpy's argmax in ONNX's reference.
    let x = floats(&[3.0, 0.0, 1.0, 2.0, 1.0, 2.0, 2.0, 2.0], [2, 4]);
    assert_eq!(float_values(ops::hardmax(x.clone(), 1)), (vec![2, 4], vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]));
    assert_eq!(float_values(ops::hardmax(x, 0)), (vec![2, 4], vec![1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]));
}

#[test]
fn pad_matches_the_documentation() {
    // Pad's documentation: data [[1, 1.2], [2.3, 3.4], [4.5, 5.7]], pads [0, 2, 0, 0].
    let data = floats(&[1.0, 1.2, 2.3, 3.4, 4.5, 5.7], [3, 2]);
    let constant = ops::pad(data.clone(), &[0, 2, 0, 0], &[], PadMode::Constant(0.0));
    assert_eq!(float_values(constant), (vec![3, 4], vec![0.0, 0.0, 1.0, 1.2, 0.0, 0.0, 2.3, 3.4, 0.0, 0.0, 4.5, 5.7]));
    let reflect = ops::pad(floats(&[1.0, 1.2, 2.3, 3.4, 4.5, 5.7], [3, 2]), &[0, 1, 0, 0], &[], PadMode::Reflect);
    assert_eq!(float_values(reflect), (vec![3, 3], vec![1.2, 1.0, 1.2, 3.4, 2.3, 3.4, 5.7, 4.5, 5.7]));
    let edge = ops::pad(data.clone(), &[0, 2, 0, 0], &[], PadMode::Edge);
    assert_eq!(float_values(edge), (vec![3, 4], vec![1.0, 1.0, 1.0, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7]));
    // Listed axes (negative counted from the end) and negative pads, which crop.
    let cropped = ops::pad(data, &[-1, 1], &[-2], PadMode::Constant(9.0));
    assert_eq!(float_values(cropped), (vec![3, 2], vec![2.3, 3.4, 4.5, 5.7, 9.0, 9.0]));
}

#[test]
fn pad_wrap_goes_round_the_axis_after_cropping() {
    // scripts/helper_references.py, case pad_wrap (ONNX's reference evaluator, and ONNX Runtime
    // for the negative pads): [[1, 2, 3], [4, 5, 6]] padded more than once round an axis,
    // cropped then wrapped, and one listed axis.
    let x = || floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    let row = |a: f32, b: f32, c: f32| [c, a, b, c, a, b, c, a, b];
    let expected: Vec<f32> = [row(4.0, 5.0, 6.0), row(1.0, 2.0, 3.0), row(4.0, 5.0, 6.0)].concat();
    assert_eq!(float_values(ops::pad_wrap(x(), &[1, 4, 0, 2], &[])), (vec![3, 9], expected));
    let expected = vec![2.0, 3.0, 2.0, 3.0, 5.0, 6.0, 5.0, 6.0, 2.0, 3.0, 2.0, 3.0];
    assert_eq!(float_values(ops::pad_wrap(x(), &[0, -1, 1, 2], &[])), (vec![3, 4], expected));
    let expected = vec![2.0, 3.0, 2.0, 5.0, 6.0, 5.0];
    assert_eq!(float_values(ops::pad_wrap(x(), &[-1, 1], &[-1])), (vec![2, 3], expected));
    // Integers and no padding at all.
    let (dims, values) = int_values(ops::pad_wrap(ints(&[7, 8], [1, 2]), &[0, 1, 0, 0], &[]));
    assert_eq!((dims, values), (vec![1, 3], vec![8, 7, 8]));
    assert_eq!(float_values(ops::pad_wrap(x(), &[0, 0, 0, 0], &[])).1, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn reverse_sequence_reverses_each_prefix() {
    // scripts/helper_references.py, case reverse_sequence (ONNX Runtime): 0..12 as [3, 2, 2]
    // with lengths [3, 1] along time axis 0, and as [2, 3, 2] with [2, 0] along time axis 1.
    let x = |shape: [usize; 3]| floats(&(0..12).map(|v| v as f32).collect::<Vec<_>>(), shape);
    let expected = [8.0, 9.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 0.0, 1.0, 10.0, 11.0];
    let y = ops::reverse_sequence(x([3, 2, 2]), ints(&[3, 1], [2]), 0);
    assert_eq!(float_values(y), (vec![3, 2, 2], expected.to_vec()));
    let expected = [2.0, 3.0, 0.0, 1.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0];
    let y = ops::reverse_sequence(x([2, 3, 2]), ints(&[2, 0], [2]), 1);
    assert_eq!(float_values(y), (vec![2, 3, 2], expected.to_vec()));
    // Bools move the same way; a length beyond the axis is clamped to it.
    let flags = Tensor::<2, Bool>::from_data(TensorData::new(vec![true, false, false, false], [2, 2]), &device());
    let y = ops::reverse_sequence(flags, ints(&[5, 1], [2]), 0);
    assert_eq!(y.into_data().iter::<bool>().collect::<Vec<_>>(), [false, false, true, false]);
}

#[test]
fn affine_grid_maps_normalised_coordinates() {
    // scripts/helper_references.py, case affine_grid (ONNX Runtime): a 2-D theta on a 2 x 3
    // grid without and with align_corners, and a 3-D theta on 2 x 1 x 2 with align_corners (the
    // axis of one element at coordinate 1, as ONNX Runtime puts it).
    let theta2 = || floats(&[1.0, 0.5, 0.2, -0.3, 2.0, 0.1], [1, 2, 3]);
    let expected =
        [-0.716_666_7, -0.7, -0.05, -0.9, 0.616_666_7, -1.1, -0.216_666_68, 1.3, 0.45, 1.1, 1.116_666_7, 0.9];
    assert_close(ops::affine_grid::<4>(theta2(), &[1, 1, 2, 3], false), [1, 2, 3, 2], &expected, 1e-6);
    let expected = [-1.3, -1.6, -0.3, -1.9, 0.7, -2.2, -0.3, 2.4, 0.7, 2.1, 1.7, 1.8];
    assert_close(ops::affine_grid::<4>(theta2(), &[1, 1, 2, 3], true), [1, 2, 3, 2], &expected, 1e-6);
    let theta3 = floats(&[1.0, 0.1, 0.2, 0.3, 0.0, 1.5, -0.5, 0.0, 0.2, 0.0, 0.7, -1.0], [1, 3, 4]);
    let expected = [-0.8, 2.0, -1.9, 1.2, 2.0, -1.5, -0.4, 1.0, -0.5, 1.6, 1.0, -0.1];
    assert_close(ops::affine_grid::<5>(theta3, &[1, 1, 2, 1, 2], true), [1, 2, 1, 2, 3], &expected, 1e-6);
    // No positions: an empty grid.
    assert_eq!(float_values(ops::affine_grid::<4>(theta2(), &[1, 1, 0, 3], false)).0, [1, 0, 3, 2]);
}

#[test]
fn nll_loss_picks_target_log_probabilities_with_weights_and_ignore_index() {
    // log_prob [2 samples, 3 classes], targets [2, 0]; class weights [0.2, 0.3, 0.5]; the
    // second sample ignored (ignore_index 0).
    let log_prob = floats(&[-1.0, -2.0, -3.0, -0.5, -1.5, -2.5], [2, 3]);
    let (loss, weight) = ops::nll_loss(log_prob.clone(), ints(&[2, 0], [2]), None, None);
    assert_eq!(float_values(loss), (vec![2], vec![3.0, 0.5]));
    assert_eq!(float_values(weight), (vec![2], vec![1.0, 1.0]));
    let class_weight = floats(&[0.2, 0.3, 0.5], [3]);
    let (loss, weight) = ops::nll_loss(log_prob, ints(&[2, 0], [2]), Some(class_weight), Some(0));
    assert_eq!(float_values(loss), (vec![2], vec![1.5, 0.0]));
    assert_eq!(float_values(weight), (vec![2], vec![0.5, 0.0]));
}

#[test]
fn forward_runs_on_the_calling_thread_as_a_worker_of_its_pool() {
    let caller = std::thread::current().id();
    let (index, same_thread) = ops::on_pool(|| (rayon::current_thread_index(), std::thread::current().id() == caller));
    assert_eq!(index, Some(0), "the caller is its pool's first worker");
    assert!(same_thread, "no hand-over to another thread");
    // Nested calls (a model inside a model's hook) just run.
    assert_eq!(ops::on_pool(|| ops::on_pool(rayon::current_thread_index)), Some(0));
    // Parallel work inside still gets every thread of the pool.
    let threads = ops::on_pool(rayon::current_num_threads);
    assert_eq!(threads, rayon::ThreadPoolBuilder::new().build().unwrap().current_num_threads());
}

/// ONNX Cast's "discard higher bits and reinterpret" (the spec's example: 200 as int16 to
/// int8 is -56), in both storages a model's integers come in: 32-bit computed tensors and
/// 64-bit weights.
#[test]
fn wrap_int_discards_higher_bits_in_either_storage() {
    let values = [200, -1, 300, -129, 65_536 + 7, i32::MIN as i64];
    for storage in [burn::tensor::IntDType::I32, burn::tensor::IntDType::I64] {
        let x = || ints(&values, [6]).cast(storage);
        assert_eq!(int_values(ops::wrap_int(x(), 8, true)).1, [-56, -1, 44, 127, 7, 0]);
        assert_eq!(int_values(ops::wrap_int(x(), 8, false)).1, [200, 255, 44, 127, 7, 0]);
        assert_eq!(int_values(ops::wrap_int(x(), 16, true)).1, [200, -1, 300, -129, 7, 0]);
        assert_eq!(int_values(ops::wrap_int(x(), 4, true)).1, [-8, -1, -4, -1, 7, 0]);
        // uint32 widens 32-bit storage: -1 is 2^32 - 1.
        assert_eq!(
            int_values(ops::wrap_int(x(), 32, false)).1,
            [200, 4_294_967_295, 300, 4_294_967_167, 65_543, 2_147_483_648]
        );
        assert_eq!(int_values(ops::wrap_int(x(), 32, true)).1, values);
    }
}

/// helper_references.py, case cast_float_to_int (ONNX Runtime on x86): NaN, the infinities and
/// out-of-range values become the minimum of the 64- or 32-bit integer the cast goes through,
/// whose low bits the narrower targets keep (0). Flex's integers are 32-bit: int64's minimum and
/// 3e9 saturate there (ONNX Runtime: -2^63, 3000000000).
#[test]
fn cast_float_to_int_follows_onnx_runtime() {
    let x = || floats(&[f32::NEG_INFINITY, f32::INFINITY, f32::NAN, 3e9, -3e9, 1e20, -2.7, 2.7, 300.0], [9]);
    let min = i64::from(i32::MIN);
    let max = i64::from(i32::MAX);
    assert_eq!(int_values(ops::cast_float_to_int(x(), 64, true)).1, [min, min, min, max, min, min, -2, 2, 300]);
    assert_eq!(int_values(ops::cast_float_to_int(x(), 32, true)).1, [min, min, min, min, min, min, -2, 2, 300]);
    assert_eq!(int_values(ops::cast_float_to_int(x(), 16, true)).1, [0, 0, 0, 0, 0, 0, -2, 2, 300]);
    assert_eq!(int_values(ops::cast_float_to_int(x(), 8, true)).1, [0, 0, 0, 0, 0, 0, -2, 2, 44]);
    assert_eq!(int_values(ops::cast_float_to_int(x(), 8, false)).1, [0, 0, 0, 0, 0, 0, 254, 2, 44]);
}

/// `actual` has `dims` and each value within `tolerance` of `expected` (relative beyond 1).
#[track_caller]
fn assert_close<const D: usize>(actual: Tensor<D>, dims: [usize; D], expected: &[f32], tolerance: f32) {
    let (got_dims, values) = float_values(actual);
    assert_eq!(got_dims, dims, "shape");
    assert_eq!(values.len(), expected.len(), "{values:?}");
    for (i, (&x, &want)) in values.iter().zip(expected).enumerate() {
        assert!((x - want).abs() <= tolerance * want.abs().max(1.0), "element {i}: {x}, expected {want} ({values:?})");
    }
}

/// `scripts/helper_references.py`'s `weights`: `sin(1.7 i + seed) / 2` to two decimals.
fn wave<const D: usize>(shape: [usize; D], seed: u32) -> Tensor<D> {
    let n = shape.iter().product();
    let values: Vec<f32> =
        (0..n).map(|i| ((((i as f64) * 1.7 + f64::from(seed)).sin() * 50.0).round() / 100.0) as f32).collect();
    floats(&values, shape)
}

#[test]
fn ints_tensor_and_lazy_parameters_have_the_given_shape() {
    assert_eq!(int_values(ops::ints_tensor(&[4, -1, 0], &device())), (vec![3], vec![4, -1, 0]));
    assert_eq!(burn_onnx::float_param([2, 3], &device()).val().dims(), [2, 3]);
    assert_eq!(burn_onnx::int_param([4], &device()).val().dims(), [4]);
    assert_eq!(burn_onnx::bool_param([1, 5], &device()).val().dims(), [1, 5]);
}

#[test]
fn one_hot_marks_the_class_and_leaves_out_of_range_indices_off() {
    // OneHot's definition: negatives count from the end of depth; an index outside
    // -depth..depth gives a row of "off" values.
    let hot: Tensor<2, Bool> = ops::one_hot(ints(&[0, -1, 3, 1], [4]), 3, 1);
    let values: Vec<bool> = hot.clone().into_data().iter::<bool>().collect();
    let rows = [[true, false, false], [false, false, true], [false, false, false], [false, true, false]];
    assert_eq!((hot.dims(), values), ([4, 3], rows.concat()));
    // The class axis first: the transpose.
    let hot: Tensor<2, Bool> = ops::one_hot(ints(&[2, 0], [2]), 3, 0);
    assert_eq!(hot.into_data().iter::<bool>().collect::<Vec<_>>(), [false, true, false, false, true, false]);
}

#[test]
fn gather_nd_with_and_without_batch_dims() {
    // scripts/helper_references.py, case gather_nd (ONNX's reference evaluator): data 0..8 as
    // [2, 2, 2].
    let data = || ints(&[0, 1, 2, 3, 4, 5, 6, 7], [2, 2, 2]);
    let y: Tensor<2, Int> = ops::gather_nd::<3, 2, 4, 2, Int>(data(), ints(&[0, 1, -1, 0], [2, 2]), 0);
    assert_eq!(int_values(y), (vec![2, 2], vec![2, 3, 4, 5]));
    let y: Tensor<2, Int> = ops::gather_nd::<3, 2, 3, 2, Int>(data(), ints(&[1, 0], [2, 1]), 1);
    assert_eq!(int_values(y), (vec![2, 2], vec![2, 3, 4, 5]));
    let y: Tensor<2, Int> = ops::gather_nd::<3, 3, 4, 2, Int>(data(), ints(&[0, -1, 1, 0], [2, 1, 2]), 1);
    assert_eq!(int_values(y), (vec![2, 1], vec![1, 6]));
}

#[test]
fn compress_keeps_the_slices_where_the_condition_holds() {
    // Compress's documentation: [[1, 2], [3, 4], [5, 6]] with [0, 1, 1] along axis 0 is
    // [[3, 4], [5, 6]]; with [0, 1] along axis 1 (shorter than the axis) [[2], [4], [6]].
    let data = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2]);
    let condition = |c: &[i64]| ints(c, [c.len()]).equal_elem(1);
    assert_eq!(
        float_values(ops::compress(data.clone(), condition(&[0, 1, 1]), 0)),
        (vec![2, 2], vec![3.0, 4.0, 5.0, 6.0])
    );
    assert_eq!(float_values(ops::compress(data, condition(&[0, 1]), 1)), (vec![3, 1], vec![2.0, 4.0, 6.0]));
}

#[test]
fn extremes_of_empty_axes_are_the_identity() {
    let x = floats(&[3.0, -1.0, 2.0, 5.0, 0.0, 4.0], [2, 3]);
    assert_eq!(float_values(ops::extreme_dim(x.clone(), 1, true, f32::NEG_INFINITY)), (vec![2, 1], vec![3.0, 5.0]));
    assert_eq!(float_values(ops::extreme_dim(x.clone(), 0, false, f32::INFINITY)), (vec![1, 3], vec![3.0, -1.0, 2.0]));
    assert_eq!(float_values(ops::extreme_all(x, true, f32::NEG_INFINITY)), (vec![1], vec![5.0]));
    // ReduceMax over an empty axis is -inf; ReduceMin of int64 over nothing int64's maximum,
    // held in 64 bits even where the tensor's integers are 32.
    let empty = Tensor::<2>::empty([2, 0], &device());
    assert_eq!(
        float_values(ops::extreme_dim(empty, 1, true, f32::NEG_INFINITY)),
        (vec![2, 1], vec![f32::NEG_INFINITY; 2])
    );
    let empty = Tensor::<2, Int>::empty([0, 3], &device()).cast(burn::tensor::IntDType::I32);
    assert_eq!(int_values(ops::extreme_all(empty, false, i64::MAX)), (vec![1], vec![i64::MAX]));
}

#[test]
fn gather_and_scatter_elements_address_only_the_corner_indices_cover() {
    // scripts/helper_references.py, case gather_scatter_elements (ONNX Runtime): data 1..9 as
    // [3, 3], indices narrower than the data on the other axis.
    let data = || floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [3, 3]);
    let y = ops::gather_elements(data(), 0, ints(&[2, 0, 2, 1], [2, 2]));
    assert_eq!(float_values(y), (vec![2, 2], vec![7.0, 2.0, 7.0, 5.0]));
    let y = ops::gather_elements(data(), 1, ints(&[0, 2, 2], [1, 3]));
    assert_eq!(float_values(y), (vec![1, 3], vec![1.0, 3.0, 3.0]));
    use burn::tensor::ops::IndexingUpdateOp;
    let updates = || floats(&[10.0, 20.0, 30.0, 40.0], [2, 2]);
    let y = ops::scatter_elements(data(), 0, ints(&[2, 0, 0, 1], [2, 2]), updates(), IndexingUpdateOp::Assign);
    assert_eq!(float_values(y).1, [30.0, 20.0, 3.0, 4.0, 40.0, 6.0, 10.0, 8.0, 9.0]);
    let y =
        ops::scatter_elements(data(), 1, ints(&[1, 1], [1, 2]), floats(&[10.0, 20.0], [1, 2]), IndexingUpdateOp::Add);
    assert_eq!(float_values(y).1, [1.0, 32.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let y = ops::scatter_elements(data(), 0, ints(&[2, 0, 2, 1], [2, 2]), updates(), IndexingUpdateOp::Max);
    assert_eq!(float_values(y).1, [1.0, 20.0, 3.0, 4.0, 40.0, 6.0, 30.0, 8.0, 9.0]);
}

#[test]
fn col2im_sums_blocks_into_the_padded_image_then_crops() {
    // scripts/helper_references.py, case col2im (ONNX's reference evaluator).
    let window = ops::Col2ImWindow { strides: &[1, 2], dilations: &[1, 1], pads: &[0, 1, 0, 0] };
    let columns = floats(&(1..=12).map(|v| v as f32).collect::<Vec<_>>(), [1, 2, 6]);
    let y: Tensor<4> = ops::col2im(columns, &[3, 4], &[1, 2], window);
    let expected = [7.0, 2.0, 8.0, 0.0, 9.0, 4.0, 10.0, 0.0, 11.0, 6.0, 12.0, 0.0];
    assert_eq!(float_values(y), (vec![1, 1, 3, 4], expected.to_vec()));
    let window = ops::Col2ImWindow { strides: &[1, 1], dilations: &[1, 2], pads: &[0, 0, 0, 0] };
    let columns = floats(&(1..=8).map(|v| v as f32).collect::<Vec<_>>(), [1, 8, 1]);
    let y: Tensor<4> = ops::col2im(columns, &[2, 3], &[2, 2], window);
    let expected = [1.0, 0.0, 2.0, 3.0, 0.0, 4.0, 5.0, 0.0, 6.0, 7.0, 0.0, 8.0];
    assert_eq!(float_values(y), (vec![1, 2, 2, 3], expected.to_vec()));
}

#[test]
fn center_crop_pad_crops_and_pads_about_the_centre() {
    // scripts/helper_references.py, case center_crop_pad (ONNX's reference evaluator): 1..15
    // as [5, 3] to [2, 6] (crop 3 rows: 1 before, 2 after; pad 3 columns: 1 before, 2 after),
    // and its rows alone to 4.
    let x = || floats(&(1..=15).map(|v| v as f32).collect::<Vec<_>>(), [5, 3]);
    let expected = [0.0, 4.0, 5.0, 6.0, 0.0, 0.0, 0.0, 7.0, 8.0, 9.0, 0.0, 0.0];
    assert_eq!(float_values(ops::center_crop_pad(x(), &[2, 6], &[0, 1])), (vec![2, 6], expected.to_vec()));
    let (dims, values) = float_values(ops::center_crop_pad(x(), &[4], &[0]));
    assert_eq!((dims, values), (vec![4, 3], (1..=12).map(|v| v as f32).collect::<Vec<_>>()));
}

#[test]
fn attention_without_options_returns_the_caches_and_raw_scores() {
    // scripts/helper_references.py, case attention_plain (ONNX's reference evaluator).
    let (q, k, v) = (wave([1, 1, 2, 2], 20), wave([1, 1, 3, 2], 21), wave([1, 1, 3, 2], 22));
    let options = ops::AttentionOptions::default();
    let (y, key, value, qk) = ops::attention(q, k.clone(), v.clone(), None, None, None, None, options);
    assert_close(y, [1, 1, 2, 2], &[-0.044_105_906, -0.174_368_22, -0.030_034_551, -0.100_724_22], 1e-5);
    assert_close(key, [1, 1, 3, 2], &float_values(k).1, 0.0);
    assert_close(value, [1, 1, 3, 2], &float_values(v).1, 0.0);
    let expected_qk = [0.103_944_7, -0.066_750_88, 0.028_284_274, -0.140_855_67, 0.108_540_9, -0.073_044_136];
    assert_close(qk, [1, 1, 2, 3], &expected_qk, 1e-5);
}

#[test]
fn attention_shares_key_heads_and_hides_future_keys_after_the_past() {
    // Case attention_grouped_causal_past: two query heads on one key/value head, a cached
    // past step, is_causal.
    let (q, k, v) = (wave([1, 2, 2, 2], 30), wave([1, 1, 2, 2], 31), wave([1, 1, 2, 2], 32));
    let (past_key, past_value) = (wave([1, 1, 1, 2], 33), wave([1, 1, 1, 2], 34));
    let options = ops::AttentionOptions { causal: true, ..Default::default() };
    let (y, key, value, _) = ops::attention(q, k, v, None, Some(past_key), Some(past_value), None, options);
    let expected =
        [0.271_474_1, 0.026_175_38, 0.042_132_523, -0.165_482_6, 0.271_65, 0.033_475_537, 0.027_592_666, -0.168_373_26];
    assert_close(y, [1, 2, 2, 2], &expected, 1e-5);
    assert_close(key, [1, 1, 3, 2], &[0.5, -0.07, -0.2, 0.48, 0.08, -0.5], 0.0);
    assert_close(value, [1, 1, 3, 2], &[0.26, -0.45, 0.28, 0.38, -0.37, -0.28], 0.0);
}

#[test]
fn attention_masks_softcap_and_each_qk_output() {
    // Case attention_masks_softcap: two batches of one head, three keys.
    let qkv = || (wave([2, 1, 2, 2], 40), wave([2, 1, 3, 2], 41), wave([2, 1, 3, 2], 42));
    let plain = || ops::AttentionOptions::default();
    // A boolean mask narrower than the keys: the third key is masked.
    let keep: Tensor<4, Bool> = ints(&[1, 0, 1, 1], [1, 1, 2, 2]).equal_elem(1);
    let (q, k, v) = qkv();
    let (y, ..) = ops::attention(q, k, v, Some(ops::AttentionMask::Keep(keep)), None, None, None, plain());
    let expected = [-0.46, -0.14, 0.070_815_41, -0.056_187_04, 0.47, -0.24, 0.053_964_153, 0.034_205_448];
    assert_close(y, [2, 1, 2, 2], &expected, 1e-5);
    // A float mask added after a softcap of 1.5 with scale 0.8; each QK output mode.
    let expected: [[f32; 12]; 3] = [
        [
            0.121_970_1,
            -0.071_465_835,
            0.014_639_519,
            -0.154_965_12,
            0.111_394_53,
            -0.059_009_52,
            -0.042_868_316,
            -0.011_839_757,
            0.063_961_19,
            0.086_304_57,
            -0.036_952_52,
            -0.011_999_745,
        ],
        [
            0.621_970_1,
            -1.071_465_8,
            0.014_639_519,
            0.345_034_9,
            -0.888_605_5,
            -0.059_009_52,
            0.457_131_68,
            -1.011_839_7,
            0.063_961_19,
            0.586_304_5,
            -1.036_952_5,
            -0.011_999_745,
        ],
        [
            0.578_472_7,
            0.106_373_4,
            0.315_153_84,
            0.510_504_96,
            0.148_674_58,
            0.340_820_5,
            0.524_913_5,
            0.120_815_19,
            0.354_271_3,
            0.572_410_5,
            0.112_910_93,
            0.314_678_67,
        ],
    ];
    for (mode, want) in (1..=3).zip(expected) {
        let (q, k, v) = qkv();
        let mask = ops::AttentionMask::Add(floats(&[0.5, -1.0, 0.0], [1, 1, 1, 3]));
        let options =
            ops::AttentionOptions { scale: Some(0.8), softcap: 1.5, qk_output_mode: mode, ..Default::default() };
        let (.., qk) = ops::attention(q, k, v, Some(mask), None, None, None, options);
        assert_close(qk, [2, 1, 2, 3], &want, 1e-5);
    }
    // nonpad_kv_seqlen: the first batch sees two keys, the second all three (ONNX Runtime).
    let (q, k, v) = qkv();
    let (y, ..) = ops::attention(q, k, v, None, None, None, Some(ints(&[2, 3], [2])), plain());
    let expected = [
        -0.025_575_431,
        -0.071_406_65,
        0.070_815_41,
        -0.056_187_045,
        0.128_018_47,
        -0.112_621_26,
        0.140_647_65,
        -0.113_790_09,
    ];
    assert_close(y, [2, 1, 2, 2], &expected, 1e-5);
}

#[test]
fn scaled_dot_product_attention_through_the_kernel_or_the_separate_ops() {
    // Case scaled_dot_product_attention: ONNX's MatMul, Mul, Add, Softmax and MatMul on q
    // [2, 1, 2, 2], kᵀ [1, 1, 2, 3], v [1, 1, 3, 2] (broadcast over the batch: the separate
    // ops), then the same with kᵀ and v repeated per batch (the kernel).
    let expected = [
        0.305_444_96,
        -0.211_478_43,
        0.334_945_6,
        -0.215_273_02,
        0.301_678_4,
        -0.202_425_44,
        0.335_122_14,
        -0.222_975_92,
    ];
    let (q, key_t, v) = (wave([2, 1, 2, 2], 50), wave([1, 1, 2, 3], 51), wave([1, 1, 3, 2], 52));
    let mask = || Some(floats(&[0.0, -1.0, 0.5], [1, 1, 1, 3]));
    let y = ops::scaled_dot_product_attention(q.clone(), key_t.clone(), v.clone(), mask(), 0.6);
    assert_close(y, [2, 1, 2, 2], &expected, 1e-5);
    let (key_t, v) = (key_t.repeat_dim(0, 2), v.repeat_dim(0, 2));
    let y = ops::scaled_dot_product_attention(q, key_t, v, mask(), 0.6);
    assert_close(y, [2, 1, 2, 2], &expected, 1e-5);
}

#[test]
fn hooks_fit_by_rank_and_kind_and_read_attributes_by_name_and_type() {
    use burn_onnx::hook::{fits, AttributeValue, HookSignature, NodeAttributes, TensorKind};
    let signature = HookSignature { inputs: &[(4, TensorKind::Float)], outputs: &[(4, TensorKind::Float)] };
    assert!(fits(&signature, &[(4, TensorKind::Float)], &[(4, TensorKind::Float)]));
    assert!(!fits(&signature, &[(4, TensorKind::Int)], &[(4, TensorKind::Float)]));
    assert!(!fits(&signature, &[(4, TensorKind::Float)], &[(2, TensorKind::Float)]));
    assert!(!fits(&signature, &[], &[(4, TensorKind::Float)]));
    let attributes = NodeAttributes(&[
        ("k", AttributeValue::Int(3)),
        ("alpha", AttributeValue::Float(0.5)),
        ("pads", AttributeValue::Ints(&[1, 2])),
        ("scales", AttributeValue::Floats(&[2.0])),
        ("mode", AttributeValue::String("edge")),
    ]);
    assert_eq!((attributes.int("k"), attributes.float("alpha")), (Some(3), Some(0.5)));
    assert_eq!((attributes.ints("pads"), attributes.floats("scales")), (Some(&[1i64, 2][..]), Some(&[2.0][..])));
    assert_eq!((attributes.string("mode"), attributes.get("missing")), (Some("edge"), None));
    // The wrong type is None, not a conversion.
    assert_eq!((attributes.float("k"), attributes.int("alpha"), attributes.string("pads")), (None, None, None));
}

fn assert_slices_close(actual: &[f32], expected: &[f32]) {
    assert_eq!(actual.len(), expected.len(), "{actual:?} vs {expected:?}");
    for (a, e) in actual.iter().zip(expected) {
        assert!((a - e).abs() < 1e-5, "{actual:?} vs {expected:?}");
    }
}

/// Burn's triangle masks panic on an empty matrix; `trilu` returns it as it is.
#[test]
fn trilu_keeps_empty_tensors_and_masks_others() {
    assert_eq!(float_values(ops::trilu(floats(&[], [3, 0, 5]), 6, false)).0, [3, 0, 5]);
    assert_eq!(float_values(ops::trilu(floats(&[1.0, 2.0, 3.0, 4.0], [2, 2]), 0, false)).1, [1.0, 0.0, 3.0, 4.0]);
    assert_eq!(float_values(ops::trilu(floats(&[1.0, 2.0, 3.0, 4.0], [2, 2]), 1, true)).1, [0.0, 2.0, 0.0, 0.0]);
}

/// Windows of the generalized-cosine definitions, worked out by hand.
#[test]
fn cosine_windows_periodic_and_symmetric() {
    let window = |kind, size, periodic| float_values(ops::window(kind, size, periodic, &device())).1;
    assert_slices_close(&window(ops::Window::Hann, 4, true), &[0.0, 0.5, 1.0, 0.5]);
    assert_slices_close(&window(ops::Window::Hann, 5, false), &[0.0, 0.5, 1.0, 0.5, 0.0]);
    assert_slices_close(&window(ops::Window::Hamming, 2, true), &[4.0 / 46.0, 1.0]);
    assert_slices_close(&window(ops::Window::Blackman, 3, false), &[0.0, 1.0, 0.0]);
    assert!(window(ops::Window::Hann, 0, true).is_empty());
}

/// DFT of [1, 2, 3, 4] is [10, -2+2i, -2, -2-2i]; the inverse and the real inverse of the
/// one-sided half give the signal back.
#[test]
fn dft_forward_inverse_and_real_inverse() {
    let options = |inverse, onesided| ops::DftOptions { inverse, onesided };
    let signal = floats(&[1.0, 2.0, 3.0, 4.0], [1, 4, 1]);
    let spectrum = [10.0, 0.0, -2.0, 2.0, -2.0, 0.0, -2.0, -2.0];
    let full = ops::dft(signal.clone(), 1, None, options(false, false));
    assert_eq!(full.dims(), [1, 4, 2]);
    assert_slices_close(&float_values(full).1, &spectrum);
    assert_slices_close(&float_values(ops::dft(signal.clone(), 1, None, options(false, true))).1, &spectrum[..6]);
    // Zero-padded to 8 points, bin 4 is 1 - 2 + 3 - 4.
    let padded = float_values(ops::dft(signal, 1, Some(8), options(false, false))).1;
    assert_slices_close(&padded[8..10], &[-2.0, 0.0]);
    let back = ops::dft(floats(&spectrum, [1, 4, 2]), 1, None, options(true, false));
    assert_slices_close(&float_values(back).1, &[1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0]);
    let real = ops::dft(floats(&spectrum[..6], [1, 3, 2]), 1, None, options(true, true));
    assert_eq!(real.dims(), [1, 4, 1]);
    assert_slices_close(&float_values(real).1, &[1.0, 2.0, 3.0, 4.0]);
}

/// Frames [1, 2] and [3, 4], each transformed: [3, -1] and [7, -1].
#[test]
fn stft_frames_then_transforms() {
    let y = ops::stft(floats(&[1.0, 2.0, 3.0, 4.0], [1, 4, 1]), 2, None, Some(2), true);
    assert_eq!(y.dims(), [1, 2, 2, 2]);
    assert_slices_close(&float_values(y).1, &[3.0, 0.0, -1.0, 0.0, 7.0, 0.0, -1.0, 0.0]);
}

/// One band with edges at 0, 700 and 2100 Hz (mel-spaced up to 4900 Hz: 700·(2^i − 1)), in
/// bins of 6000 / 9 Hz: bins 0, 1 and 3, so the triangle is [0, 1, 0.5, 0, 0].
#[test]
fn mel_weight_matrix_one_triangle() {
    let m = ops::mel_weight_matrix(1, 8, 6000, 0.0, 4900.0, &device());
    assert_eq!(m.dims(), [5, 1]);
    assert_slices_close(&float_values(m).1, &[0.0, 1.0, 0.5, 0.0, 0.0]);
}

/// One head of one feature: q = [1, 2], k = [1, 1], v = [3, 4], scale 1.
#[test]
fn linear_attention_rules_by_hand() {
    let run = |decay: Option<Tensor<3>>, beta: Option<Tensor<3>>| {
        let options = ops::LinearAttentionOptions { q_heads: 1, kv_heads: 1, scale: Some(1.0) };
        let (q, k, v) =
            (floats(&[1.0, 2.0], [1, 2, 1]), floats(&[1.0, 1.0], [1, 2, 1]), floats(&[3.0, 4.0], [1, 2, 1]));
        let (y, state) = ops::linear_attention(q, k, v, None, decay, beta, options);
        (float_values(y).1, float_values(state).1)
    };
    // linear: S = 3, then 7.
    assert_eq!(run(None, None), (vec![3.0, 14.0], vec![7.0]));
    // gated, decay ln 0.5 at the second step: S = 3 · 0.5 + 4.
    let (y, state) = run(Some(floats(&[0.0, 0.5f32.ln()], [1, 2, 1])), None);
    assert_slices_close(&y, &[3.0, 11.0]);
    assert_slices_close(&state, &[5.5]);
    // delta, beta 1: the second write is 4 − 3 (what S recalls for k).
    assert_eq!(run(None, Some(floats(&[1.0, 1.0], [1, 2, 1]))), (vec![3.0, 8.0], vec![4.0]));
}

/// Two query heads sharing one key/value head read the same state.
#[test]
fn linear_attention_grouped_heads_share_state() {
    let options = ops::LinearAttentionOptions { q_heads: 2, kv_heads: 1, scale: Some(1.0) };
    let (q, k, v) = (floats(&[1.0, 2.0], [1, 1, 2]), floats(&[1.0], [1, 1, 1]), floats(&[3.0], [1, 1, 1]));
    let past = floats(&[1.0], [1, 1, 1, 1]);
    let (y, state) = ops::linear_attention(q, k, v, Some(past), None, None, options);
    assert_eq!((float_values(y).1, float_values(state).1), (vec![4.0, 8.0], vec![4.0]));
}

/// Kernel [1, 10] over [0 or 5, 1, 2, 3]: `w0·x[t−1] + w1·x[t]`.
#[test]
fn causal_conv_with_and_without_state() {
    let run = |past: Option<Tensor<3>>, silu| {
        let x = floats(&[1.0, 2.0, 3.0], [1, 1, 3]);
        let (y, state) = ops::causal_conv_with_state(x, floats(&[1.0, 10.0], [1, 1, 2]), None, past, silu);
        (float_values(y).1, float_values(state).1)
    };
    assert_eq!(run(None, false), (vec![10.0, 21.0, 32.0], vec![3.0]));
    assert_eq!(run(Some(floats(&[5.0], [1, 1, 1])), false), (vec![15.0, 21.0, 32.0], vec![3.0]));
    let silu = |x: f32| x / (1.0 + (-x).exp());
    assert_slices_close(&run(None, true).0, &[silu(10.0), silu(21.0), silu(32.0)]);
    // A kernel of 1 keeps no state.
    let x = floats(&[1.0, 2.0], [1, 1, 2]);
    let (y, state) = ops::causal_conv_with_state(x, floats(&[2.0], [1, 1, 1]), Some(floats(&[1.0], [1])), None, false);
    assert_eq!((float_values(y).1, state.dims()), (vec![3.0, 5.0], [1, 1, 0]));
}

#[test]
fn tensor_scatter_positions_from_write_indices() {
    let positions = |starts: Option<Tensor<1, Int>>, circular| {
        int_values(ops::tensor_scatter_indices(starts, [2, 3], 1, 4, circular, &device())).1
    };
    assert_eq!(positions(None, false), [0, 1, 2, 0, 1, 2]);
    assert_eq!(positions(Some(ints(&[1, 2], [2])), true), [1, 2, 3, 2, 3, 0]);
}

/// Every way generated code makes or moves a bool tensor gives the one storage flex makes bools
/// in (issue 36: a bool `select` typed `U8` met a comparison's `Bool(Native)` in `bool_and`, a
/// debug assertion in flex, in every TorchScript-exported transformer). Each result is also
/// combined with a comparison's bool, as the generated code would.
#[test]
fn bool_tensors_keep_one_storage_through_every_op() {
    let native = burn::tensor::DType::Bool(burn::tensor::BoolStore::Native);
    let compared = floats(&[1.0, -1.0, 2.0, -2.0, 3.0, -3.0], [2, 3]).greater_elem(0.0);
    let b = || {
        Tensor::<2, Bool>::from_data(TensorData::new(vec![true, false, false, true, true, false], [2, 3]), &device())
    };
    let made: Vec<(&str, Tensor<2, Bool>)> = vec![
        ("from_data", b()),
        ("comparison", compared.clone()),
        ("Int::bool (Cast)", ints(&[1, 0, 2, 0, 0, 3], [2, 3]).bool()),
        ("Float::bool (Cast)", floats(&[1.0, 0.0, 0.5, 0.0, 0.0, 3.0], [2, 3]).bool()),
        ("is_nan", floats(&[1.0, f32::NAN, 0.5, 0.0, 0.0, 3.0], [2, 3]).is_nan()),
        ("bool_not", b().bool_not()),
        ("bool_and", b().bool_and(compared.clone())),
        ("bool_or", b().bool_or(compared.clone())),
        ("bool_xor", b().bool_xor(compared.clone())),
        ("equal", b().equal(compared.clone())),
        ("ops::gather", ops::gather::<2, 2, _>(b(), ints(&[1, 0], [2]), &[2], 0)),
        ("ops::compress", ops::compress(b(), Tensor::from_data(TensorData::new(vec![true, true], [2]), &device()), 0)),
        ("ops::gather_elements", ops::gather_elements(b(), 1, ints(&[2, 1, 0, 0, 1, 2], [2, 3]))),
        ("ops::reverse_sequence", ops::reverse_sequence(b(), ints(&[2, 1, 2], [3]), 0)),
        ("ops::slice", ops::slice(b().repeat_dim(1, 2), &[0], &[3], &[1], &[1])),
        ("ops::where_op", ops::where_op(compared.clone(), b(), b().bool_not())),
        ("reshape", b().reshape([3, 2]).reshape([2, 3])),
        ("permute", b().permute([1, 0]).permute([1, 0])),
        ("flip", b().flip([1])),
        ("cat", Tensor::cat(vec![b(), b()], 0).slice([0..2, 0..3])),
        ("expand", b().slice([0..1, 0..3]).expand([2, 3])),
        ("mask_where", b().mask_where(compared.clone(), b().bool_not())),
        ("mask_fill", b().mask_fill(compared.clone(), true)),
        ("bool_param (weights)", {
            let param: burn::module::Param<Tensor<2, Bool>> = burn_onnx::bool_param([2, 3], &device());
            param.val().slice([0..2, 0..3]).bool_or(b())
        }),
    ];
    for (op, t) in made {
        assert_eq!(t.dtype(), native, "{op}");
        assert_eq!(t.clone().bool_and(compared.clone()).dtype(), native, "{op} and a comparison");
    }
}

/// With two classes the pairwise coupling's answer is the pair's Platt probability
/// `1 - σ(s·a + b)` and its complement (clamped to [1e-7, 1 - 1e-7]), which libsvm's iteration
/// reaches to within its stopping tolerance (0.005 / k on the gradient; the sklearn zoo checks
/// the exact values against ONNX Runtime); with three classes whose pairs all say "even", every
/// class gets a third at once.
#[test]
fn svm_probabilities_couple_the_platt_probabilities() {
    let scores = Tensor::<2>::from_data(TensorData::new(vec![0.8f32, -1.5, 40.0], [3, 1]), &device());
    let got: Vec<f32> = ops::svm_probabilities(scores, &[-2.0], &[0.25], 2).into_data().iter::<f32>().collect();
    for (row, s) in [0.8f32, -1.5, 40.0].into_iter().enumerate() {
        let p = (1.0 - 1.0 / (1.0 + (-(s * -2.0 + 0.25)).exp())).clamp(1e-7, 1.0 - 1e-7);
        let (first, second) = (got[2 * row], got[2 * row + 1]);
        assert!((first - p).abs() < 1e-3 && (first + second - 1.0).abs() < 1e-6, "{row}: {got:?}");
    }
    // A score of 0 with b = 0 is an even pair (1 - σ(0) = 0.5).
    let even = Tensor::<2>::from_data(TensorData::new(vec![0.0f32; 3], [1, 3]), &device());
    let thirds: Vec<f32> = ops::svm_probabilities(even, &[1.0; 3], &[0.0; 3], 3).into_data().iter::<f32>().collect();
    assert!(thirds.iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-6), "{thirds:?}");
}
