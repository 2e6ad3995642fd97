//! Single-precision matrix product for x86-64 with AVX2 and FMA: `C = A · B` (row-major, unit
//! column stride), blocked as in BLIS (panels of B in L2, of A in L1, a 6×16 register tile),
//! parallel over column blocks on rayon's pool. It is the core of the convolution kernel;
//! `available()` says whether the CPU has the instructions (callers fall back to Burn otherwise).

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Rows and columns of the register tile.
const MR: usize = 6;
const NR: usize = 16;
/// Depth of a packed block, rows of A per packed block, columns of B per task.
const KC: usize = 256;
const MC: usize = 72;
const NC: usize = 512;

/// Whether `sgemm` can run on this CPU.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A row-major matrix view: element `(i, j)` at `data[i * stride + j]`.
#[derive(Clone, Copy)]
pub struct Matrix<'a> {
    pub data: &'a [f32],
    pub rows: usize,
    pub cols: usize,
    pub stride: usize,
}

impl Matrix<'_> {
    fn fits(&self) -> bool {
        self.rows == 0 || self.cols == 0 || (self.rows - 1) * self.stride + self.cols <= self.data.len()
    }
}

/// The output pointer, shared by the column-block tasks: each writes only its own columns.
#[derive(Clone, Copy)]
struct Output(*mut f32);
// SAFETY: tasks write disjoint column ranges of the buffer, which outlives them.
unsafe impl Send for Output {}
unsafe impl Sync for Output {}

impl Output {
    /// A method, so that closures capture the whole `Send` wrapper, not its raw field.
    fn ptr(self) -> *mut f32 {
        self.0
    }
}

/// `c[i * n + j] = Σ_p a[i, p] · b[p, j]` for the `m × n` result `c` (overwritten), then
/// `epilogue(row, values)` on each finished row segment (bias, activation) while it is in cache.
///
/// # Panics
/// If the shapes do not agree, a view reaches past its slice, or `available()` is false.
pub fn sgemm(a: Matrix, b: Matrix, c: &mut [f32], epilogue: &(dyn Fn(usize, &mut [f32]) + Sync)) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(b.rows == k && c.len() == m * n && a.fits() && b.fits(), "sgemm: shapes do not agree");
    assert!(available(), "sgemm needs AVX2 and FMA");
    if m == 0 || n == 0 {
        return;
    }
    let out = Output(c.as_mut_ptr());
    // Tasks are column blocks; with few of them (a small image), row blocks too, so that
    // every thread has work.
    let column_blocks = n.div_ceil(NC);
    let threads = threads();
    let rows_per_task = if threads == 1 || column_blocks >= 2 * threads { m } else { MC };
    let tasks: Vec<(usize, usize)> =
        (0..n).step_by(NC).flat_map(|j0| (0..m).step_by(rows_per_task).map(move |i0| (j0, i0))).collect();
    let task = move |&(j0, i0): &(usize, usize)| {
        let (width, rows) = (NC.min(n - j0), rows_per_task.min(m - i0));
        // SAFETY: AVX2 and FMA were checked; the task's rows i0..i0 + rows and columns
        // j0..j0 + width lie inside `c` and no other task writes them.
        unsafe {
            block(a, b, j0, width, i0..i0 + rows, out.ptr(), n);
            for i in i0..i0 + rows {
                epilogue(i, std::slice::from_raw_parts_mut(out.ptr().add(i * n + j0), width));
            }
        }
    };
    // One task runs here: handing it to the pool and waiting costs more than small products.
    #[cfg(feature = "flex")]
    if tasks.len() > 1 {
        use rayon::prelude::*;
        tasks.par_iter().for_each(task);
        return;
    }
    tasks.iter().for_each(task);
}

/// Threads of rayon's pool (1 without it).
pub fn threads() -> usize {
    #[cfg(feature = "flex")]
    return rayon::current_num_threads();
    #[cfg(not(feature = "flex"))]
    1
}

/// One block: `C[rows, j0..j0 + width] = A[rows, :] · B[:, j0..j0 + width]`, C with row stride
/// `ldc`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn block(a: Matrix, b: Matrix, j0: usize, width: usize, rows: std::ops::Range<usize>, c: *mut f32, ldc: usize) {
    let k = a.cols;
    let panels_b = width.div_ceil(NR);
    let mut packed_b = Aligned::zeros(panels_b * NR * KC);
    let mut packed_a = vec![0.0f32; MC.div_ceil(MR) * MR * KC];
    let mut tile = [0.0f32; MR * NR];
    for p0 in (0..k).step_by(KC) {
        let depth = KC.min(k - p0);
        pack_b(b, p0, depth, j0, width, packed_b.as_mut_slice());
        for i0 in rows.clone().step_by(MC) {
            let rows = MC.min(rows.end - i0);
            pack_a(a, i0, rows, p0, depth, &mut packed_a);
            for jp in 0..panels_b {
                let cols = NR.min(width - jp * NR);
                for ip in 0..rows.div_ceil(MR) {
                    let tile_rows = MR.min(rows - ip * MR);
                    let pa = packed_a.as_ptr().add(ip * MR * depth);
                    let pb = packed_b.as_slice().as_ptr().add(jp * NR * depth);
                    let dst = c.add((i0 + ip * MR) * ldc + j0 + jp * NR);
                    if tile_rows == MR && cols == NR {
                        kernel(depth, pa, pb, dst, ldc, p0 > 0);
                    } else {
                        // Edge tile: computed in a full scratch tile, then the part that exists.
                        for r in 0..tile_rows {
                            std::ptr::copy_nonoverlapping(dst.add(r * ldc), tile.as_mut_ptr().add(r * NR), cols);
                        }
                        kernel(depth, pa, pb, tile.as_mut_ptr(), NR, p0 > 0);
                        for r in 0..tile_rows {
                            std::ptr::copy_nonoverlapping(tile.as_ptr().add(r * NR), dst.add(r * ldc), cols);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn block(_: Matrix, _: Matrix, _: usize, _: usize, _: std::ops::Range<usize>, _: *mut f32, _: usize) {
    unreachable!("sgemm is only called where available() holds")
}

/// A zeroed f32 buffer aligned to 32 bytes, so the kernel loads packed B with aligned loads.
struct Aligned(Vec<Lane>);

#[derive(Clone, Copy)]
#[repr(align(32))]
struct Lane(#[allow(dead_code)] [f32; 8]); // read through `Aligned::as_slice`

impl Aligned {
    fn zeros(len: usize) -> Self {
        Self(vec![Lane([0.0; 8]); len.div_ceil(8)])
    }

    fn as_slice(&self) -> &[f32] {
        // SAFETY: `Lane` is eight f32 with no padding.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), self.0.len() * 8) }
    }

    fn as_mut_slice(&mut self) -> &mut [f32] {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.0.len() * 8) }
    }
}

/// Packs `B[p0..p0 + depth, j0..j0 + width]` as `NR`-column panels, row after row, zero-padded.
fn pack_b(b: Matrix, p0: usize, depth: usize, j0: usize, width: usize, packed: &mut [f32]) {
    for (jp, panel) in packed.chunks_mut(NR * depth).take(width.div_ceil(NR)).enumerate() {
        let (start, cols) = (j0 + jp * NR, NR.min(width - jp * NR));
        for (p, dst) in panel.chunks_exact_mut(NR).enumerate() {
            let row = &b.data[(p0 + p) * b.stride + start..];
            if let (Ok(dst), Some(Ok(src))) =
                (<&mut [f32; NR]>::try_from(&mut *dst), row.get(..NR).map(<&[f32; NR]>::try_from))
            {
                *dst = *src;
            } else {
                dst[..cols].copy_from_slice(&row[..cols]);
                dst[cols..].fill(0.0);
            }
        }
    }
}

/// Packs `A[i0..i0 + rows, p0..p0 + depth]` as `MR`-row panels, column after column,
/// zero-padded.
fn pack_a(a: Matrix, i0: usize, rows: usize, p0: usize, depth: usize, packed: &mut [f32]) {
    for (ip, panel) in packed.chunks_mut(MR * depth).take(rows.div_ceil(MR)).enumerate() {
        let present = MR.min(rows - ip * MR);
        for r in 0..MR {
            if r < present {
                let row = &a.data[(i0 + ip * MR + r) * a.stride + p0..][..depth];
                for (p, &v) in row.iter().enumerate() {
                    panel[p * MR + r] = v;
                }
            } else {
                for p in 0..depth {
                    panel[p * MR + r] = 0.0;
                }
            }
        }
    }
}

/// The 6×16 register tile: `c (+)= a_panel · b_panel` over `depth`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn kernel(depth: usize, a: *const f32, b: *const f32, c: *mut f32, ldc: usize, accumulate: bool) {
    let mut acc = [[_mm256_setzero_ps(); 2]; MR];
    for p in 0..depth {
        // Packed B is 32-byte aligned (`Aligned`) and panels are whole lanes.
        let b0 = _mm256_load_ps(b.add(p * NR));
        let b1 = _mm256_load_ps(b.add(p * NR + 8));
        for (r, row) in acc.iter_mut().enumerate() {
            let av = _mm256_broadcast_ss(&*a.add(p * MR + r));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
        let mut c = vec![0.0f32; m * n];
        for i in 0..m {
            for p in 0..k {
                for j in 0..n {
                    c[i * n + j] += a[i * k + p] * b[p * n + j];
                }
            }
        }
        c
    }

    #[test]
    fn matches_the_naive_product_on_edge_sizes() {
        if !available() {
            return;
        }
        for (m, k, n) in [(1, 1, 1), (7, 3, 17), (6, 256, 16), (13, 300, 530), (73, 513, 33), (2, 1000, 1)] {
            let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| ((i * 104729) % 11) as f32 - 5.0).collect();
            let mut c = vec![f32::NAN; m * n];
            let (am, bm) =
                (Matrix { data: &a, rows: m, cols: k, stride: k }, Matrix { data: &b, rows: k, cols: n, stride: n });
            sgemm(am, bm, &mut c, &|_, _| {});
            assert_eq!(c, naive(&a, &b, m, k, n), "{m}x{k}x{n}");
        }
    }
}
