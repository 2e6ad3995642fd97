//! Integer matrix product of quantized models: `C = A · B` with A unsigned 8-bit (activations
//! quantized at run time), B signed 8-bit (weights, packed once), C 32-bit and exact, as ONNX
//! Runtime's u8×s8 kernels compute it. AVX-512 VNNI where the CPU has it (`vpdpbusd`: four
//! u8×s8 products summed into each 32-bit lane), AVX2 otherwise (the bytes widened to 16 bits
//! and `vpmaddwd`: exact, where `vpmaddubsw` saturates its 16-bit pair sums), plain Rust
//! elsewhere; every path gives the same integers. Each operand is bytes plus an offset (A's
//! values less a zero point, B's brought into i8), applied outside the product:
//! `Σ (x + oa)(w + ob) = Σ x·w + ob·Σx + oa·Σw + K·oa·ob`, with the sums of B kept by the
//! packing and those of A taken once per row. Values lie in -255..=255 and the depth is at most
//! [`MAX_DEPTH`], so every result fits in 32 bits; the terms are summed wrapping, which gives
//! that result whatever their own sizes.

use crate::parallel::threads_for;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Columns of B per panel (one 512-bit register of 32-bit sums).
const PANEL: usize = 16;
/// Depth of B per group: the bytes one 32-bit lane multiplies and sums.
const QUAD: usize = 4;
/// Bytes of one panel for one group of depth.
const PANEL_QUAD: usize = PANEL * QUAD;
/// Depth up to which a sum of products of values in -255..=255 fits in 32 bits (255²·K < 2^31).
pub(crate) const MAX_DEPTH: usize = 1 << 15;
/// The values either operand may hold.
const LIMIT: f32 = 255.0;

/// B (`k × n`, signed 8-bit values less an offset) packed for the product: groups of four
/// rows, each column's four values adjacent, in panels of 16 columns; depth and columns padded
/// with zeros.
pub(crate) struct PackedB {
    k: usize,
    n: usize,
    quads: usize,
    data: Vec<i8>,
    /// Σ over depth of each column's packed values.
    column_sums: Vec<i32>,
    /// What each packed value is less than B's value: `b = packed + offset`.
    offset: i32,
}

impl PackedB {
    /// Packs `value(p, j)` (row `p` of `k`, column `j` of `n`) when every value is an integer
    /// in -255..=255, their range spans at most 255 (then one offset brings it into i8) and
    /// `k` is at most [`MAX_DEPTH`]; `None` otherwise.
    pub(crate) fn pack(k: usize, n: usize, value: impl Fn(usize, usize) -> f32 + Sync) -> Option<Self> {
        if k > MAX_DEPTH {
            return None;
        }
        let (low, high) = integer_range((0..k).flat_map(|p| (0..n).map(move |j| (p, j))).map(|(p, j)| value(p, j)))?;
        let offset = signed_offset(low, high);
        Self::from_rows(k, n, offset, |p, first, segment| {
            for (j, packed) in segment.iter_mut().enumerate() {
                *packed = (value(p, first + j) as i32 - offset) as i8;
            }
        })
    }

    /// Packs `k` rows of `n` bytes, each byte standing for `byte + offset`, with `offset` in
    /// -255..=255; `fill(p, first, segment)` writes columns `first..first + segment.len()` of
    /// row `p`. Blocks of whole panels are packed side by side on the pool when there is enough
    /// work (an im2col of a large convolution was a serial stretch of every forward). `None`
    /// for `k` over [`MAX_DEPTH`].
    pub(crate) fn from_rows(
        k: usize,
        n: usize,
        offset: i32,
        fill: impl Fn(usize, usize, &mut [i8]) + Sync,
    ) -> Option<Self> {
        use rayon::prelude::*;
        if k > MAX_DEPTH || offset.abs() > LIMIT as i32 {
            return None;
        }
        let quads = k.div_ceil(QUAD);
        let mut data = vec![0i8; n.div_ceil(PANEL) * quads * PANEL_QUAD];
        let mut column_sums = vec![0i32; n];
        let per_job = crate::parallel::job_len(n.div_ceil(PANEL), k * PANEL, crate::parallel::PARALLEL_MIN_ELEMENTS);
        // Per group of four rows: the rows filled and summed into their columns (loops over
        // whole rows, which vectorise), then interleaved into each panel's 64 bytes. A scatter
        // of each byte to its packed place with a read-modify-write of its column's sum was as
        // slow as the product it fed.
        let pack_block = |(block, (data, sums)): (usize, (&mut [i8], &mut [i32]))| {
            let width = sums.len();
            let mut rows = vec![0i8; QUAD * width];
            for quad in 0..quads {
                for (lane, row) in rows.chunks_exact_mut(width.max(1)).enumerate() {
                    let p = quad * QUAD + lane;
                    if p >= k {
                        row.fill(0);
                        continue;
                    }
                    fill(p, block * per_job * PANEL, row);
                    for (sum, &b) in sums.iter_mut().zip(row.iter()) {
                        *sum += b as i32;
                    }
                }
                for (panel, packed) in data.chunks_exact_mut(quads * PANEL_QUAD).enumerate() {
                    let packed = &mut packed[quad * PANEL_QUAD..][..PANEL_QUAD];
                    let columns = (width - panel * PANEL).min(PANEL);
                    let row = |lane: usize| &rows[lane * width + panel * PANEL..][..columns];
                    // Zipped slices: no index to check per byte.
                    let lanes = row(0).iter().zip(row(1)).zip(row(2)).zip(row(3));
                    for (bytes, (((&a, &b), &c), &d)) in packed.chunks_exact_mut(QUAD).zip(lanes) {
                        bytes.copy_from_slice(&[a, b, c, d]);
                    }
                }
            }
        };
        // (`max(1)`: a depth of 0 packs nothing, and chunks must not be empty.)
        data.par_chunks_mut((per_job * quads * PANEL_QUAD).max(1))
            .zip(column_sums.par_chunks_mut(per_job * PANEL))
            .enumerate()
            .for_each(pack_block);
        Some(PackedB { k, n, quads, data, column_sums, offset })
    }

    /// Rows (depth) and columns.
    pub(crate) fn dims(&self) -> (usize, usize) {
        (self.k, self.n)
    }
}

/// The least and greatest of integer values in -255..=255 whose range spans at most 255 (0 and 0
/// when there are none); `None` for others.
pub(crate) fn integer_range(values: impl Iterator<Item = f32>) -> Option<(i32, i32)> {
    let (mut low, mut high) = (f32::INFINITY, f32::NEG_INFINITY);
    for v in values {
        if !is_integer(v) {
            return None;
        }
        (low, high) = (low.min(v), high.max(v));
    }
    range_of(low, high)
}

/// [`integer_range`] of a slice, vectorised (see [`crate::kernels::min_max_where`]): whole
/// values found by `trunc` (`vroundps`; the conversion to i32 and back stays scalar), and those
/// past i32, or infinite, turned away by the range's bounds.
pub(crate) fn integer_range_of(values: &[f32]) -> Option<(i32, i32)> {
    let (low, high) = crate::kernels::min_max_where(values, |v| v.trunc() == v)?;
    range_of(low, high)
}

/// Whether `v` is an integer that fits i32. Not `fract`, a call to `truncf` per value on
/// baseline x86-64 (NaN, infinities and values past i32 fail too).
#[inline(always)]
fn is_integer(v: f32) -> bool {
    (v as i32) as f32 == v
}

/// [`integer_range`]'s answer for the least and greatest values seen (`low > high`: none).
fn range_of(low: f32, high: f32) -> Option<(i32, i32)> {
    if low > high {
        return Some((0, 0));
    }
    (high - low <= 255.0 && low >= -LIMIT && high <= LIMIT).then_some((low as i32, high as i32))
}

/// The offset that brings integers from `low` to `high` (a span of at most 255) into i8: the
/// one nearest 0.
pub(crate) fn signed_offset(low: i32, high: i32) -> i32 {
    (high - 127).max(0).min(low + 128)
}

/// A's rows as unsigned bytes, depth padded to whole groups, and their offset: each value is
/// its byte plus the offset.
pub(crate) struct RowsOfA {
    rows: usize,
    stride: usize,
    data: Vec<u8>,
    row_sums: Vec<i32>,
    offset: i32,
}

impl RowsOfA {
    /// `rows × k` integer values (row-major) in -255..=255 whose range spans at most 255;
    /// `None` otherwise.
    pub(crate) fn new(values: &[f32], rows: usize, k: usize) -> Option<Self> {
        if values.len() != rows * k || k > MAX_DEPTH {
            return None;
        }
        let (offset, _) = integer_range_of(values)?;
        Some(Self::from_bytes(rows, k, offset, |i, p| (values[i * k + p] as i32 - offset) as u8))
    }

    /// `rows × k` values (row-major) quantized to uint8 together, as ONNX Runtime's dynamic
    /// quantization does it ([`crate::kernels::quantize_u8_bytes`]), each byte standing for its
    /// value less the zero point, into this buffer (a recurrence's state, every step); returns
    /// the scale.
    ///
    /// # Panics
    /// If `values` does not hold `rows × k` values.
    pub(crate) fn quantize(&mut self, values: &[f32], rows: usize, k: usize) -> f32 {
        assert_eq!(values.len(), rows * k, "igemm: values are not rows × k");
        let (scale, zero) = crate::kernels::u8_quantization_of(values);
        self.rows = rows;
        self.stride = k.div_ceil(QUAD) * QUAD;
        // Zeros in the padding of each row's last group, which the product reads.
        self.data.clear();
        self.data.resize(rows * self.stride, 0);
        self.row_sums.clear();
        for (row, bytes) in values.chunks_exact(k.max(1)).zip(self.data.chunks_exact_mut(self.stride.max(1))) {
            crate::kernels::quantize_u8_into(row, &mut bytes[..k], scale, zero);
            self.row_sums.push(bytes.iter().map(|&b| b as i32).sum());
        }
        self.row_sums.resize(rows, 0);
        self.offset = -(zero as i32);
        scale
    }

    /// No rows: a buffer for [`RowsOfA::quantize`].
    pub(crate) fn empty() -> Self {
        RowsOfA { rows: 0, stride: 0, data: Vec::new(), row_sums: Vec::new(), offset: 0 }
    }

    /// Rows of `byte(i, p)`, each standing for `byte + offset`.
    pub(crate) fn from_bytes(rows: usize, k: usize, offset: i32, byte: impl Fn(usize, usize) -> u8) -> Self {
        let stride = k.div_ceil(QUAD) * QUAD;
        let mut data = vec![0u8; rows * stride];
        let mut row_sums = vec![0i32; rows];
        for i in 0..rows {
            for p in 0..k {
                let x = byte(i, p);
                data[i * stride + p] = x;
                row_sums[i] += x as i32;
            }
        }
        RowsOfA { rows, stride, data, row_sums, offset }
    }
}

/// `C = A · B`, exact in 32 bits (`c` row-major, `a.rows × b.n`), where A and B stand for
/// their bytes less their offsets. Parallel over column panels for large products.
///
/// # Panics
/// If the depths or `c`'s length do not agree.
pub(crate) fn gemm(a: &RowsOfA, b: &PackedB, c: &mut [i32]) {
    let (m, n, k) = (a.rows, b.n, b.k);
    assert!(a.stride == b.quads * QUAD && c.len() == m * n, "igemm: shapes do not agree");
    let panels = n.div_ceil(PANEL);
    let threads = threads_for(m.saturating_mul(n).saturating_mul(k));
    let per_task = panels.div_ceil(threads).max(1);
    let out = Output(c.as_mut_ptr());
    let task = |first: usize| {
        let panels = first..(first + per_task).min(panels);
        // SAFETY: each task writes the columns of its own panels only, inside `c`.
        unsafe { products(a, b, panels, out) }
    };
    if threads > 1 && panels > 1 {
        use rayon::prelude::*;
        crate::parallel::start_polling();
        (0..panels).into_par_iter().step_by(per_task).for_each(task);
    } else {
        task(0);
    }
}

/// `C`'s data, written by tasks at disjoint columns.
#[derive(Clone, Copy)]
struct Output(*mut i32);
// SAFETY: tasks write disjoint elements of the one buffer.
unsafe impl Send for Output {}
unsafe impl Sync for Output {}

/// Which kernel computes the raw sums `Σ x·w` of a tile.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kernel {
    #[cfg(target_arch = "x86_64")]
    Vnni,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    Portable,
}

fn kernel() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::cpu::avx512_vnni() {
            return Kernel::Vnni;
        }
        if crate::cpu::avx2_fma() {
            return Kernel::Avx2;
        }
    }
    Kernel::Portable
}

/// Rows per tile of each kernel.
const TILE_ROWS: usize = 4;

/// C's columns of `panels`, every row: raw sums per tile of rows and panel, then the offsets.
///
/// # Safety
/// `out` must hold `a.rows × b.n` values; no other thread writes these columns.
unsafe fn products(a: &RowsOfA, b: &PackedB, panels: std::ops::Range<usize>, out: Output) {
    let kernel = kernel();
    let both_offsets = (b.k as i32).wrapping_mul(a.offset).wrapping_mul(b.offset);
    let mut sums = [[0i32; PANEL]; TILE_ROWS];
    for panel in panels {
        let packed = &b.data[panel * b.quads * PANEL_QUAD..][..b.quads * PANEL_QUAD];
        let first = panel * PANEL;
        let width = PANEL.min(b.n - first);
        let mut column_terms = [0i32; PANEL];
        for (term, &sum) in column_terms.iter_mut().zip(&b.column_sums[first..first + width]) {
            *term = a.offset.wrapping_mul(sum);
        }
        for i0 in (0..a.rows).step_by(TILE_ROWS) {
            let rows = TILE_ROWS.min(a.rows - i0);
            let a_rows = &a.data[i0 * a.stride..][..rows * a.stride];
            raw_sums(kernel, a_rows, a.stride, rows, packed, b.quads, &mut sums);
            for (r, sums) in sums.iter().enumerate().take(rows) {
                let i = i0 + r;
                let row_term = b.offset.wrapping_mul(a.row_sums[i]).wrapping_add(both_offsets);
                // SAFETY: columns `first..first + width` of row i lie inside C and in this
                // task's panels, which no other task writes.
                let row = unsafe { std::slice::from_raw_parts_mut(out.0.add(i * b.n + first), width) };
                for ((c, &sum), &column_term) in row.iter_mut().zip(sums).zip(&column_terms) {
                    *c = sum.wrapping_add(row_term).wrapping_add(column_term);
                }
            }
        }
    }
}

/// `sums[r][j] = Σ_p x[r][p] · w[p][j]` for `rows` rows of `a_rows` (stride `stride`) and one
/// panel of packed B.
fn raw_sums(
    kernel: Kernel,
    a_rows: &[u8],
    stride: usize,
    rows: usize,
    panel: &[i8],
    quads: usize,
    sums: &mut [[i32; PANEL]; TILE_ROWS],
) {
    match kernel {
        // SAFETY: the CPU has the kernel's features (`kernel()` checked); the slices hold
        // `rows` rows of `quads` groups and one panel of `quads` groups.
        #[cfg(target_arch = "x86_64")]
        Kernel::Vnni => unsafe { vnni(a_rows, stride, rows, panel, quads, sums) },
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => unsafe { avx2(a_rows, stride, rows, panel, quads, sums) },
        Kernel::Portable => portable(a_rows, stride, rows, panel, quads, sums),
    }
}

fn portable(
    a_rows: &[u8],
    stride: usize,
    rows: usize,
    panel: &[i8],
    quads: usize,
    sums: &mut [[i32; PANEL]; TILE_ROWS],
) {
    for (r, sums) in sums.iter_mut().enumerate().take(rows) {
        let x = &a_rows[r * stride..][..quads * QUAD];
        *sums = [0; PANEL];
        for (q, group) in panel.chunks_exact(PANEL_QUAD).enumerate() {
            let xq = &x[q * QUAD..][..QUAD];
            for (sum, w) in sums.iter_mut().zip(group.chunks_exact(QUAD)) {
                *sum += xq.iter().zip(w).map(|(&x, &w)| x as i32 * w as i32).sum::<i32>();
            }
        }
    }
}

/// # Safety
/// The CPU must have AVX-512F and AVX-512 VNNI; `a_rows` holds `rows` rows of `quads * 4`
/// bytes at `stride`, `panel` `quads * 64` bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn vnni(
    a_rows: &[u8],
    stride: usize,
    rows: usize,
    panel: &[i8],
    quads: usize,
    sums: &mut [[i32; PANEL]; TILE_ROWS],
) {
    let mut acc = [_mm512_setzero_si512(); TILE_ROWS];
    for q in 0..quads {
        // SAFETY: group q of the panel is 64 bytes inside `panel`.
        let w = unsafe { _mm512_loadu_si512(panel.as_ptr().add(q * PANEL_QUAD).cast()) };
        for (r, acc) in acc.iter_mut().enumerate().take(rows) {
            let group = &a_rows[r * stride + q * QUAD..][..QUAD];
            let x = _mm512_set1_epi32(i32::from_le_bytes([group[0], group[1], group[2], group[3]]));
            *acc = _mm512_dpbusd_epi32(*acc, x, w);
        }
    }
    for (sums, acc) in sums.iter_mut().zip(acc).take(rows) {
        // SAFETY: `sums` is 16 i32s.
        unsafe { _mm512_storeu_si512(sums.as_mut_ptr().cast(), acc) };
    }
}

/// # Safety
/// The CPU must have AVX2; the slices as for [`vnni`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2(
    a_rows: &[u8],
    stride: usize,
    rows: usize,
    panel: &[i8],
    quads: usize,
    sums: &mut [[i32; PANEL]; TILE_ROWS],
) {
    // Each 256-bit sum holds two partial sums of four columns (lanes 2c and 2c + 1 of column
    // c): the four groups of a panel are 4 registers per row.
    for r in 0..rows {
        let mut acc = [_mm256_setzero_si256(); 4];
        for q in 0..quads {
            let group = &a_rows[r * stride + q * QUAD..][..QUAD];
            let x = i64::from_le_bytes([group[0], 0, group[1], 0, group[2], 0, group[3], 0]);
            let x = _mm256_set1_epi64x(x);
            for (c, acc) in acc.iter_mut().enumerate() {
                // SAFETY: 16 bytes of group q, inside `panel`.
                let w = unsafe { _mm_loadu_si128(panel.as_ptr().add(q * PANEL_QUAD + c * 16).cast()) };
                *acc = _mm256_add_epi32(*acc, _mm256_madd_epi16(x, _mm256_cvtepi8_epi16(w)));
            }
        }
        for (c, acc) in acc.iter().enumerate() {
            let mut lanes = [0i32; 8];
            // SAFETY: `lanes` is 8 i32s.
            unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), *acc) };
            for j in 0..4 {
                sums[r][c * 4 + j] = lanes[2 * j] + lanes[2 * j + 1];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so the test needs no dependency.
    fn values(len: usize, seed: u64, low: i32, high: i32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (low + (s % (high - low + 1) as u64) as i32) as f32
            })
            .collect()
    }

    /// The vectorised range of a slice is the value-by-value one: lengths around the vector's,
    /// extremes in the last partial vector, a non-integer, a NaN or an infinity anywhere, spans
    /// past 255; and the minima and maxima `u8_quantization_of` takes, NaN ignored.
    #[test]
    fn the_range_of_a_slice_is_the_range_of_its_values() {
        for len in [0, 1, 15, 16, 17, 33, 100] {
            for (seed, (low, high)) in [(-128, 127), (-255, 0), (3, 200), (-300, 0)].into_iter().enumerate() {
                let mut v = values(len, seed as u64 + 1, low, high);
                assert_eq!(integer_range_of(&v), integer_range(v.iter().copied()), "{len} in {low}..={high}");
                if let Some(last) = v.last_mut() {
                    *last = 250.0;
                    assert_eq!(integer_range_of(&v), integer_range(v.iter().copied()), "{len}, 250 last");
                }
                for bad in [0.5, f32::NAN, f32::INFINITY, 3e9] {
                    for at in [0, len / 2, len.saturating_sub(1)].into_iter().filter(|&at| at < len) {
                        let mut w = v.clone();
                        w[at] = bad;
                        assert_eq!(integer_range_of(&w), None, "{len}: {bad} at {at}");
                    }
                }
                let mut w: Vec<f32> = v.iter().map(|x| x * 0.37).collect();
                w.extend([f32::NAN, -0.5]);
                let fold = w.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
                assert_eq!(crate::kernels::min_max_where(&w, |_| true), Some(fold), "{len}: min and max");
            }
        }
    }

    fn reference(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<i32> {
        let mut c = vec![0i32; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|p| a[i * k + p] as i32 * b[p * n + j] as i32).sum();
            }
        }
        c
    }

    /// Every path this CPU has gives the exact integers, for ranges of A and B with and
    /// without offsets (u8 and s8 values, values less a zero point), depths and widths that
    /// are not whole groups and panels.
    #[test]
    fn products_are_exact_on_every_path() {
        let shapes = [(1, 1, 1), (3, 5, 17), (4, 8, 16), (7, 33, 40), (9, 130, 70), (2, 1000, 3), (1, MAX_DEPTH, 2)];
        let ranges =
            [((0, 255), (-128, 127)), ((-128, 127), (0, 255)), ((-200, 55), (-37, 218)), ((-255, 0), (-255, 0))];
        let kernels = [
            #[cfg(target_arch = "x86_64")]
            (Kernel::Vnni, crate::cpu::avx512_vnni()),
            #[cfg(target_arch = "x86_64")]
            (Kernel::Avx2, crate::cpu::avx2_fma()),
            (Kernel::Portable, true),
        ];
        for &(kernel, _) in kernels.iter().filter(|(_, available)| !available) {
            println!("igemm: the {} kernel skipped: not on this path ({})", name(kernel), crate::cpu::describe());
        }
        let kernels: Vec<Kernel> =
            kernels.iter().filter(|(_, available)| *available).map(|&(kernel, _)| kernel).collect();
        for (seed, &(m, k, n)) in shapes.iter().enumerate() {
            for &((al, ah), (bl, bh)) in &ranges {
                let a = values(m * k, seed as u64 + 1, al, ah);
                let b = values(k * n, seed as u64 + 100, bl, bh);
                let (rows, packed) =
                    (RowsOfA::new(&a, m, k).unwrap(), PackedB::pack(k, n, |p, j| b[p * n + j]).unwrap());
                let expected = reference(&a, &b, m, k, n);
                let mut c = vec![0i32; m * n];
                gemm(&rows, &packed, &mut c);
                assert_eq!(c, expected, "{m}x{k}x{n}, A in {al}..={ah}, B in {bl}..={bh}");
                for &kernel in &kernels {
                    let mut sums = [[0i32; PANEL]; TILE_ROWS];
                    let rows_here = m.min(TILE_ROWS);
                    let first_panel = &packed.data[..packed.quads * PANEL_QUAD];
                    raw_sums(kernel, &rows.data, rows.stride, rows_here, first_panel, packed.quads, &mut sums);
                    let mut portable_sums = [[0i32; PANEL]; TILE_ROWS];
                    portable(&rows.data, rows.stride, rows_here, first_panel, packed.quads, &mut portable_sums);
                    assert_eq!(sums[..rows_here], portable_sums[..rows_here], "{} kernel", name(kernel));
                }
            }
        }
    }

    /// A reused buffer of quantized rows (depths that are not whole groups, a larger then a
    /// smaller matrix) multiplies as the values `quantize_u8_bytes` gives less the zero point.
    #[test]
    fn quantized_rows_multiply_as_their_bytes_less_the_zero_point() {
        let mut rows = RowsOfA::empty();
        for (seed, &(m, k, n)) in [(7, 33, 20), (1, 6, 5), (3, 4, 17)].iter().enumerate() {
            let x: Vec<f32> = values(m * k, seed as u64 + 7, -300, 200).iter().map(|v| v / 97.0).collect();
            let w = values(k * n, seed as u64 + 70, -128, 127);
            let scale = rows.quantize(&x, m, k);
            let mut bytes = vec![0u8; m * k];
            let (expected_scale, zero) = crate::kernels::quantize_u8_bytes(&x, &mut bytes);
            assert_eq!(scale, expected_scale);
            let a: Vec<f32> = bytes.iter().map(|&b| b as f32 - zero).collect();
            let mut c = vec![0i32; m * n];
            gemm(&rows, &PackedB::pack(k, n, |p, j| w[p * n + j]).unwrap(), &mut c);
            assert_eq!(c, reference(&a, &w, m, k, n), "{m}x{k}x{n}");
        }
    }

    fn name(kernel: Kernel) -> &'static str {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni => "AVX-512 VNNI",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => "AVX2",
            Kernel::Portable => "portable",
        }
    }

    #[test]
    fn refuses_what_it_cannot_hold_exactly() {
        assert!(PackedB::pack(2, 1, |p, _| if p == 0 { 0.0 } else { 256.0 }).is_none());
        assert!(PackedB::pack(1, 1, |_, _| 0.5).is_none());
        assert!(RowsOfA::new(&[-1.0, 255.0], 1, 2).is_none());
        assert!(RowsOfA::new(&[0.0, 255.0], 1, 2).is_some());
        assert!(RowsOfA::new(&[250.0, 256.0], 1, 2).is_none());
        assert!(PackedB::pack(MAX_DEPTH + 1, 1, |_, _| 0.0).is_none());
    }
}
