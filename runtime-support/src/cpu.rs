//! Which of the hand-written kernel paths this CPU runs, detected once at run time. The
//! environment variable `BURN_ONNX_KERNELS` narrows the choice, so that one machine tests every
//! path its CPU allows (the test command runs the kernel tests under each): `avx2` leaves out
//! the AVX-512 tiles and VNNI integer products, `portable` every x86 path (Burn's kernels and
//! the baseline lanes run).

use std::sync::LazyLock;

/// The kernel paths, narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Path {
    Portable,
    Avx2,
    Avx512,
}

fn path() -> Path {
    static PATH: LazyLock<Path> = LazyLock::new(|| detected().min(requested()));
    *PATH
}

/// The widest path the CPU has.
fn detected() -> Path {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if !(has!("avx2") && has!("fma")) {
            Path::Portable
        } else if has!("avx512f") {
            Path::Avx512
        } else {
            Path::Avx2
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    Path::Portable
}

/// The widest path `BURN_ONNX_KERNELS` allows (any other value allows all).
fn requested() -> Path {
    match std::env::var("BURN_ONNX_KERNELS").as_deref() {
        Ok("portable") => Path::Portable,
        Ok("avx2") => Path::Avx2,
        _ => Path::Avx512,
    }
}

/// Whether the AVX2 + FMA kernels run.
pub(crate) fn avx2_fma() -> bool {
    path() >= Path::Avx2
}

/// Whether the AVX-512 tiles run.
pub(crate) fn avx512() -> bool {
    path() == Path::Avx512
}

/// Whether the AVX-512 VNNI integer products run (the AVX-512 path, on a CPU with VNNI).
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) fn avx512_vnni() -> bool {
    static VNNI: LazyLock<bool> = LazyLock::new(|| {
        #[cfg(target_arch = "x86_64")]
        return std::arch::is_x86_feature_detected!("avx512vnni");
        #[cfg(not(target_arch = "x86_64"))]
        false
    });
    avx512() && *VNNI
}

/// The path in force, for a test that skips to say which.
#[cfg(all(test, feature = "flex"))]
pub(crate) fn describe() -> &'static str {
    match path() {
        Path::Portable => "portable (no AVX2 kernels)",
        Path::Avx2 => "AVX2",
        Path::Avx512 => "AVX-512",
    }
}
