//! glibc's malloc kept from handing a model's freed tensors back to the system between ops.
//!
//! By default glibc maps each allocation of 128 KiB or more on its own (the threshold rising to
//! the largest block freed so far) and returns the top of its heap once more than twice that
//! lies free. A forward allocates and frees tensors of a few MiB op after op, so ops kept
//! writing into fresh pages, one page fault per 4 KiB: 625 faults per forward of a 1,000-row
//! SVR, four fifths of its time (ONNX Runtime keeps its tensors in an arena). The first forward
//! therefore sets the mmap threshold to 32 MiB (glibc's largest) and the trim threshold to
//! 1 GiB: freed memory stays with the process and is reused. `BURN_ONNX_MALLOC=system`, or a
//! `glibc.malloc` tunable in `GLIBC_TUNABLES`, leaves malloc as it is.

/// Applies the settings once per process (see the module's documentation).
pub(crate) fn keep_freed_memory() {
    #[cfg(all(feature = "std", target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let system = std::env::var_os("BURN_ONNX_MALLOC").is_some_and(|v| v == "system");
            let tuned = std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc."));
            if !system && !tuned {
                glibc::set(glibc::M_MMAP_THRESHOLD, 32 << 20);
                glibc::set(glibc::M_TRIM_THRESHOLD, 1 << 30);
            }
        });
    }
}

#[cfg(all(feature = "std", target_os = "linux", target_env = "gnu"))]
mod glibc {
    use core::ffi::c_int;

    pub(super) const M_TRIM_THRESHOLD: c_int = -1;
    pub(super) const M_MMAP_THRESHOLD: c_int = -3;

    unsafe extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }

    /// One of malloc's parameters; glibc refuses (and ignores) a value out of its range.
    pub(super) fn set(param: c_int, value: c_int) {
        // SAFETY: mallopt takes any parameter and value and only changes malloc's settings.
        unsafe { mallopt(param, value) };
    }
}
