//! The hooks compute the model as the NumPy reference does, and every MatMul went through the
//! user's kernel.

use std::sync::atomic::Ordering;

#[test]
fn matches_numpy_reference_and_routes_every_matmul() {
    let (output, max_diff) = custom_ops_example::run();
    assert_eq!(output.len(), 2 * 3 * 4 * 5);
    assert!(max_diff <= 1e-4, "max difference {max_diff:e}");
    assert_eq!(custom_ops_example::MATMUL_CALLS.load(Ordering::SeqCst), 2, "both MatMul nodes call the override");
}
