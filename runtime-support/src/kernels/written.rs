//! Output buffers that the kernel computing them writes whole, left unzeroed until then.
//!
//! `vec![0.0; len]` writes every value before the kernel overwrites it: a pass over memory that
//! costs as much as the kernel's own stores, run on the calling thread while the pool's others
//! wait. At two threads it was also the pass that slowed most in the processes that ran slowly
//! (SqueezeNet at two threads ran at one thread's speed in 4 of 12 processes, its zeroing four
//! times as long there; without it, in 1 of 10).

use std::mem::MaybeUninit;

/// A vector of `len` floats, each set by `write`.
///
/// # Safety
///
/// `write` must write every value of the slice it is given (a panic leaves the vector empty).
pub(crate) unsafe fn written_by(len: usize, write: impl FnOnce(&mut [MaybeUninit<f32>])) -> Vec<f32> {
    let mut values = Vec::with_capacity(len);
    write(&mut values.spare_capacity_mut()[..len]);
    // SAFETY: the capacity is at least `len` and `write` wrote the first `len` values.
    unsafe { values.set_len(len) };
    values
}

/// `values` set to zero, as the floats they now are.
pub(crate) fn zeroed(values: &mut [MaybeUninit<f32>]) -> &mut [f32] {
    values.fill(MaybeUninit::new(0.0));
    // SAFETY: every value was just written.
    unsafe { assume_written(values) }
}

/// `values` as floats.
///
/// # Safety
///
/// Every value of `values` must have been written.
pub(crate) unsafe fn assume_written(values: &mut [MaybeUninit<f32>]) -> &mut [f32] {
    // SAFETY: `MaybeUninit<f32>` has the layout of `f32`, and the caller vouches for the values.
    unsafe { &mut *(values as *mut [MaybeUninit<f32>] as *mut [f32]) }
}

/// `values` as slots for a kernel that writes into unwritten ones.
///
/// # Safety
///
/// Only floats may be written through the slots (never `MaybeUninit::uninit()`): the values
/// are read as floats again afterwards.
pub(crate) unsafe fn as_slots(values: &mut [f32]) -> &mut [MaybeUninit<f32>] {
    // SAFETY: `MaybeUninit<f32>` has the layout of `f32`; the caller keeps the values written.
    unsafe { &mut *(values as *mut [f32] as *mut [MaybeUninit<f32>]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_values_are_the_ones_set() {
        // SAFETY: the closure writes every slot.
        let values = unsafe {
            written_by(5, |slots| {
                slots.iter_mut().enumerate().for_each(|(i, v)| {
                    v.write(i as f32);
                })
            })
        };
        assert_eq!(values, [0.0, 1.0, 2.0, 3.0, 4.0]);
        let mut slots = [MaybeUninit::new(7.0f32); 3];
        assert_eq!(zeroed(&mut slots), [0.0; 3]);
    }
}
