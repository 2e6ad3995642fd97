//! The register tiles: 6×16 in AVX2 registers, and where the CPU has AVX-512, 12×16 and the
//! 8×48 tile over three panels of B.

use super::*;

/// The register tile through AVX-512 where the CPU has it (checked once), else AVX2.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA; as [`kernel`] requires of its pointers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn tile_kernel(
    depth: usize,
    a: (*const f32, [usize; MR]),
    b: *const f32,
    ldb: impl PanelRows,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        if avx512() {
            kernel_avx512(depth, a, b, ldb, c, ldc, accumulate)
        } else {
            kernel(depth, a, b, ldb, c, ldc, accumulate)
        }
    }
}

/// Whether the AVX-512 tiles run (the CPU has AVX-512, and `BURN_ONNX_KERNELS` allows them).
#[cfg(target_arch = "x86_64")]
pub(super) fn avx512() -> bool {
    crate::cpu::avx512()
}

/// An R×16 tile (R = 6 or 12) with one 16-lane register per row: half the instructions of the
/// AVX2 tile per row.
///
/// # Safety
///
/// The CPU must have AVX-512F; `a` plus each row offset must point to `depth` floats,
/// `b` to `depth` rows of 16 floats where `ldb` puts them, and `c` to R rows of 16 writable
/// floats `ldc` apart.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn kernel_avx512<const R: usize>(
    depth: usize,
    (a, row_offsets): (*const f32, [usize; R]),
    b: *const f32,
    ldb: impl PanelRows,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        let mut acc = [_mm512_setzero_ps(); R];
        for p in 0..depth {
            let bv = _mm512_loadu_ps(b.add(ldb.at(p)));
            for (r, row) in acc.iter_mut().enumerate() {
                *row = _mm512_fmadd_ps(_mm512_set1_ps(*a.add(row_offsets[r] + p)), bv, *row);
            }
        }
        for (r, row) in acc.iter().enumerate() {
            let dst = c.add(r * ldc);
            let v = if accumulate { _mm512_add_ps(*row, _mm512_loadu_ps(dst)) } else { *row };
            _mm512_storeu_ps(dst, v);
        }
    }
}

/// An 8×16P tile (P = 2 or 3 adjacent panels of B, rows where `ldb` puts them): each of A's eight
/// rows broadcast once for P multiply-adds, 24 FMAs for 11 loads at P = 3, where the 12×16 tile
/// makes 12 for 13 and waits on the load ports. Eight row pointers and 8P accumulators fit the
/// registers (twelve rows spilled row pointers to the stack).
///
/// # Safety
///
/// The CPU must have AVX-512F; `a` plus each row offset must point to `depth` floats,
/// each pointer of `b` to `depth` rows of 16 floats where `ldb` puts them, and `c` to 8 rows
/// of 16P writable floats `ldc` apart.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn kernel_avx512_wide<const P: usize>(
    depth: usize,
    (a, row_offsets): (*const f32, [usize; WIDE_ROWS]),
    b: [*const f32; P],
    ldb: impl PanelRows,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        let mut acc = [[_mm512_setzero_ps(); P]; WIDE_ROWS];
        for p in 0..depth {
            // A loop, not `array::from_fn`: see `dots_avx512` on closures around intrinsics.
            let mut bv = [_mm512_setzero_ps(); P];
            for (bv, b) in bv.iter_mut().zip(b) {
                *bv = _mm512_loadu_ps(b.add(ldb.at(p)));
            }
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.add(row_offsets[r] + p));
                for (acc, &b) in row.iter_mut().zip(&bv) {
                    *acc = _mm512_fmadd_ps(av, b, *acc);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            let dst = c.add(r * ldc);
            for (half, &v) in row.iter().enumerate() {
                let dst = dst.add(half * 16);
                let v = if accumulate { _mm512_add_ps(v, _mm512_loadu_ps(dst)) } else { v };
                _mm512_storeu_ps(dst, v);
            }
        }
    }
}

/// The 6×16 register tile: `c (+)= a_rows · b_panel` over `depth`, B's rows where `ldb` puts
/// them. Each of A's six rows is a sequential stream, as cheap for the prefetcher as a packed
/// panel.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA; `a` plus each row offset must point to `depth`
/// floats, `b` to `depth` rows of 16 floats where `ldb` puts them, and `c` to 6 rows of 16
/// writable floats `ldc` apart.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn kernel(
    depth: usize,
    (a, row_offsets): (*const f32, [usize; MR]),
    b: *const f32,
    ldb: impl PanelRows,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        let mut acc = [[_mm256_setzero_ps(); 2]; MR];
        for p in 0..depth {
            let b0 = _mm256_loadu_ps(b.add(ldb.at(p)));
            let b1 = _mm256_loadu_ps(b.add(ldb.at(p) + 8));
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm256_broadcast_ss(&*a.add(row_offsets[r] + p));
                row[0] = _mm256_fmadd_ps(av, b0, row[0]);
                row[1] = _mm256_fmadd_ps(av, b1, row[1]);
            }
        }
        for (r, row) in acc.iter().enumerate() {
            let dst = c.add(r * ldc);
            let (mut v0, mut v1) = (row[0], row[1]);
            if accumulate {
                v0 = _mm256_add_ps(v0, _mm256_loadu_ps(dst));
                v1 = _mm256_add_ps(v1, _mm256_loadu_ps(dst.add(8)));
            }
            _mm256_storeu_ps(dst, v0);
            _mm256_storeu_ps(dst.add(8), v1);
        }
    }
}
