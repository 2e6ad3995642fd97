//! The no_std digits library as firmware links it: a `#![no_std]` static library with its own
//! panic handler and heap, called from C.
//!
//! Building it proves, on a host whose toolchain has no no_std target, that nothing in the
//! dependency graph links the standard library: std defines the panic handler too, so a crate
//! that pulled std in would make this one a duplicate `panic_impl` lang item (error E0152,
//! naming the crate). `scripts/check_no_std.sh` builds it.

#![no_std]

extern crate alloc;

use core::alloc::{GlobalAlloc, Layout};

/// The heap of the C runtime the firmware is linked with (newlib, picolibc, an RTOS's libc).
struct CHeap;

extern "C" {
    fn aligned_alloc(align: usize, size: usize) -> *mut u8;
    fn free(ptr: *mut u8);
}

unsafe impl GlobalAlloc for CHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // C11 wants the size to be a multiple of the alignment.
        aligned_alloc(layout.align(), layout.size().next_multiple_of(layout.align()))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        free(ptr)
    }
}

#[global_allocator]
static HEAP: CHeap = CHeap;

/// Firmware has nowhere to unwind to: stop.
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    loop {}
}

/// Classifies `images` 8x8 images (`images * 64` pixels in [0, 1] at `pixels`) into `digits`
/// (`images` bytes, 0 to 9).
///
/// # Safety
/// `pixels` must point to `images * 64` floats and `digits` to `images` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn digits_classify(pixels: *const f32, images: usize, digits: *mut u8) {
    let pixels = core::slice::from_raw_parts(pixels, images * digits_no_std::PIXELS);
    let classes = digits_no_std::classify(&digits_no_std::model(), pixels);
    core::slice::from_raw_parts_mut(digits, images).copy_from_slice(&classes);
}
