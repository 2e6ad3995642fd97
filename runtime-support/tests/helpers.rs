//! The runtime helpers of `burn_onnx::ops` that generated code calls, each on the examples of
//! the ONNX operator documentation (onnx.ai, `docs/Operators.md` of onnx 1.22) or on values
//! worked out by hand from the operator's definition, edge cases included.

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
