//! Single-precision matrix product for x86-64 with AVX2 and FMA: `C = A · B` (row-major, unit
//! column stride), blocked as in BLIS (packed panels of B in L1 and L2, A read in place, a 6×16
//! register tile; where the CPU has AVX-512, 8×48 tiles in 16-lane registers over three panels
//! of B, and 12×16 at the edges), parallel over column blocks on rayon's pool. It is the core of the convolution kernel; `available()` says
//! whether the CPU has the instructions (callers fall back to Burn otherwise).

use crate::kernels::written;
use crate::parallel::threads_for;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Rows and columns of the register tile.
const MR: usize = 6;
const NR: usize = 16;
/// Rows of the AVX-512 tile over two panels of B (32 columns).
const WIDE_ROWS: usize = 8;
/// Depth of a block, rows of A per block, columns of B per task.
const KC: usize = 256;
const MC: usize = 72;
const NC: usize = 512;

/// Whether `sgemm` can run on this CPU.
pub fn available() -> bool {
    crate::cpu::avx2_fma()
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

/// The right operand of a product as the packing reads it, row segment by row segment: a
/// matrix in memory, or one computed on the fly (a convolution's im2col columns, which are
/// then never stored whole).
pub trait Right: Sync {
    fn rows(&self) -> usize;
    fn cols(&self) -> usize;
    /// Row `p`, columns `j0..j0 + out.len()`.
    fn segment(&self, p: usize, j0: usize, out: &mut [f32]);
    /// Column `j`, all rows (what the narrow product needs of a B of few columns).
    fn column(&self, j: usize, out: &mut [f32]);
    /// The operand as a matrix in memory, when it is one (then read in place where that pays).
    fn matrix(&self) -> Option<Matrix<'_>> {
        None
    }
    /// The operand's rows in memory, when they are though not evenly spaced: row `p` is
    /// `data[starts[p]..][..cols]`. Read in place by products of any number of rows.
    fn rows_in_place(&self) -> Option<(&[f32], &[usize])> {
        None
    }
    /// The operand packed into the tiles' panels already, when it was ([`PackedB`]).
    fn packed(&self) -> Option<&PackedB> {
        None
    }
}

/// Where the register tiles find row `p` of a panel of B, from the panel's first element.
pub(super) trait PanelRows: Copy {
    /// # Safety
    ///
    /// `p` must be a row of the panel.
    unsafe fn at(self, p: usize) -> usize;
}

/// Rows a fixed number of floats apart (a packed panel: NR; a matrix read in place: its stride).
impl PanelRows for usize {
    #[inline(always)]
    unsafe fn at(self, p: usize) -> usize {
        p * self
    }
}

/// Rows where a list of starts puts them ([`Right::rows_in_place`]).
#[derive(Clone, Copy)]
pub(super) struct Listed(*const usize);

impl PanelRows for Listed {
    #[inline(always)]
    unsafe fn at(self, p: usize) -> usize {
        // SAFETY: the list has an entry for each row of the panel (this method's contract).
        unsafe { *self.0.add(p) }
    }
}

impl Right for Matrix<'_> {
    fn rows(&self) -> usize {
        self.rows
    }
    fn cols(&self) -> usize {
        self.cols
    }
    fn segment(&self, p: usize, j0: usize, out: &mut [f32]) {
        out.copy_from_slice(&self.data[p * self.stride + j0..][..out.len()]);
    }
    fn column(&self, j: usize, out: &mut [f32]) {
        out.iter_mut().enumerate().for_each(|(p, v)| *v = self.data[p * self.stride + j]);
    }
    fn matrix(&self) -> Option<Matrix<'_>> {
        Some(*self)
    }
}

/// The transpose of a matrix in memory, as a right operand: row `p` of Bᵀ is column `p` of the
/// matrix (an RNN's input weights, `[gates · hidden, input]`, multiply as Wᵀ).
#[derive(Clone, Copy)]
pub struct Transposed<'a>(pub Matrix<'a>);

impl Right for Transposed<'_> {
    // Bᵀ's rows are the matrix's columns, and its columns the matrix's rows.
    fn rows(&self) -> usize {
        let Matrix { cols, .. } = self.0;
        cols
    }
    fn cols(&self) -> usize {
        let Matrix { rows, .. } = self.0;
        rows
    }
    fn segment(&self, p: usize, j0: usize, out: &mut [f32]) {
        let m = self.0;
        out.iter_mut().enumerate().for_each(|(j, v)| *v = m.data[(j0 + j) * m.stride + p]);
    }
    fn column(&self, j: usize, out: &mut [f32]) {
        out.copy_from_slice(&self.0.data[j * self.0.stride..][..out.len()]);
    }
}

/// A right operand packed once into the register tiles' panels, for a B that is the same from
/// call to call (a layer's weights), as ONNX Runtime packs constant weights when it loads a
/// model. Packing reads and writes every element of B: for a product of few rows it cost as
/// much as the product (ddddocr's 16 × 1024 → 8210 output layer, whose 34 MB B was packed on
/// every call).
pub struct PackedB {
    rows: usize,
    cols: usize,
    panels: SharedPanels,
}

/// Columns per block of a [`PackedB`] (each block a task): at most this many, and at least
/// eight blocks where B has the panels for them, so that the pool has tasks to share.
const PACKED_WIDTH: usize = 16 * NR;

impl PackedB {
    /// `b` packed; `None` for a B the register tiles do not take (fewer columns than a
    /// panel, which are dot products, or no rows).
    pub fn pack(b: &impl Right) -> Option<Self> {
        let (rows, cols) = (b.rows(), b.cols());
        if rows == 0 || cols < NR || !available() {
            return None;
        }
        let width = (cols.div_ceil(NR).div_ceil(8) * NR).min(PACKED_WIDTH);
        Some(Self { rows, cols, panels: SharedPanels::pack(b, width) })
    }

    /// The bytes the packing holds.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(self.panels.packed.as_slice())
    }

    /// Element `(p, j)`, from where `pack_b` put it.
    fn at(&self, p: usize, j: usize) -> f32 {
        let width = self.panels.width;
        let (j0, jp, lane) = (j / width * width, j % width / NR, j % NR);
        let (p0, depth) = (p / KC * KC, KC.min(self.rows - p / KC * KC));
        let panels = width.min(self.cols - j0).div_ceil(NR);
        self.panels.of_block(j0)[p0 * panels * NR + (jp * depth + p - p0) * NR + lane]
    }
}

impl Right for PackedB {
    fn rows(&self) -> usize {
        self.rows
    }
    fn cols(&self) -> usize {
        self.cols
    }
    fn segment(&self, p: usize, j0: usize, out: &mut [f32]) {
        out.iter_mut().enumerate().for_each(|(j, v)| *v = self.at(p, j0 + j));
    }
    fn column(&self, j: usize, out: &mut [f32]) {
        out.iter_mut().enumerate().for_each(|(p, v)| *v = self.at(p, j));
    }
    fn packed(&self) -> Option<&PackedB> {
        Some(self)
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
/// `epilogue(row, first column, values)` on each finished row segment (bias, activation) while
/// it is in cache.
///
/// # Panics
/// If the shapes do not agree, a view reaches past its slice, or `available()` is false.
pub fn sgemm(a: Matrix, b: &impl Right, c: &mut [f32], epilogue: &Epilogue<'_>) {
    if is_narrow(a, b) {
        return narrow(a, b, c, epilogue);
    }
    if a.cols == 0 {
        c.fill(0.0);
    }
    // SAFETY: `tiles` writes only floats.
    tiles(a, b, unsafe { written::as_slots(c) }, epilogue)
}

/// [`sgemm`] into unwritten values (a new output buffer, not zeroed first): every value of `c`
/// is written before `epilogue` reads it.
///
/// # Panics
/// As [`sgemm`].
pub fn sgemm_into(a: Matrix, b: &impl Right, c: &mut [MaybeUninit<f32>], epilogue: &Epilogue<'_>) {
    if is_narrow(a, b) || a.cols == 0 {
        return sgemm(a, b, written::zeroed(c), epilogue);
    }
    tiles(a, b, c, epilogue)
}

/// Whether a product goes to [`narrow`] rather than the register tiles.
fn is_narrow(a: Matrix, b: &impl Right) -> bool {
    b.cols() < TILE_MIN_COLS || b.cols() < NR && a.cols >= DOTS_MIN_DEPTH
}

/// [`sgemm`] in register tiles: writes every value of `c` when the depth is not zero (a product
/// of no terms leaves `c` as it is, then runs `epilogue`).
fn tiles(a: Matrix, b: &impl Right, c: &mut [MaybeUninit<f32>], epilogue: &Epilogue<'_>) {
    let (m, k, n) = (a.rows, a.cols, b.cols());
    assert!(b.rows() == k && c.len() == m * n && a.fits() && fits(b), "sgemm: shapes do not agree");
    assert!(available(), "sgemm needs AVX2 and FMA");
    if m == 0 || n == 0 {
        return;
    }
    let out = Output(c.as_mut_ptr().cast());
    // A small product is one task on the calling thread.
    let threads = threads_for(m.saturating_mul(n).saturating_mul(k));
    // A B packed already is split by its column blocks.
    let prepacked = b.packed().map(|packed| &packed.panels);
    let (width_per_task, rows_per_task) = match prepacked {
        Some(panels) => (panels.width, m),
        None => task_shape(m, n, threads),
    };
    let tasks: Vec<(usize, usize)> =
        (0..n).step_by(width_per_task).flat_map(|j0| (0..m).step_by(rows_per_task).map(move |i0| (j0, i0))).collect();
    // Tasks that share columns read one packing of B, made once by all threads, instead of
    // each packing the same panels (YOLO's and ResNet's late layers: many rows, few columns).
    // (B's rows read in place need no packing.)
    let packed_here = (prepacked.is_none() && rows_per_task < m && b.rows_in_place().is_none())
        .then(|| SharedPanels::pack(b, width_per_task));
    let shared = prepacked.or(packed_here.as_ref());
    let task = move |&(j0, i0): &(usize, usize)| {
        let (width, rows) = (width_per_task.min(n - j0), rows_per_task.min(m - i0));
        // SAFETY: AVX2 and FMA were checked; the task's rows i0..i0 + rows and columns
        // j0..j0 + width lie inside `c` and no other task writes them; `block` wrote them all
        // before the epilogue reads them (or, of no depth, they were written before).
        unsafe {
            match shared {
                Some(panels) => {
                    let source = PanelsOfB::Packed(panels.of_block(j0));
                    block(a, b, j0, width, i0..i0 + rows, out.ptr(), n, source)
                }
                None => PACKED_B.with_borrow_mut(|packed_b| {
                    block(a, b, j0, width, i0..i0 + rows, out.ptr(), n, PanelsOfB::Pack(packed_b))
                }),
            }
            for i in i0..i0 + rows {
                epilogue(i, j0, std::slice::from_raw_parts_mut(out.ptr().add(i * n + j0), width));
            }
        }
    };
    // One task, or a small product, runs here: handing it to the pool and waiting costs more.
    if tasks.len() > 1 && threads > 1 {
        use rayon::prelude::*;
        crate::parallel::start_polling();
        tasks.par_iter().for_each(task);
        return;
    }
    tasks.iter().for_each(task);
}

/// Products with at most this many rows take [`skinny`] in `burn_onnx::ops::linear`: reading B
/// is all their cost (openwakeword's one-row layers: 0.04–0.05 → 0.03 ms a model). At eight rows
/// (MiniLM) the product is no longer bound by B, and `skinny`, which passes over C once per four
/// rows of B, took 1.4× Burn's time.
pub const SKINNY_MAX_ROWS: usize = 4;

/// `C = A · B + bias` for an A of few rows (a batch of one, a short sequence: a Linear's
/// input), B a matrix in memory (the Linear's weights). Bound by reading B, so each task owns a
/// range of C's columns and streams its part of every row of B once, in long runs that the
/// prefetcher follows, four rows of B per pass over its part of C (which stays in cache).
/// Burn's matrix-vector product runs on one thread; this one splits the columns across the pool
/// when there is enough work.
///
/// # Panics
/// If the shapes do not agree, a view reaches past its slice, or `available()` is false.
pub fn skinny(a: Matrix, b: Matrix, bias: Option<&[f32]>, c: &mut [f32]) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(b.rows == k && c.len() == m * n && a.fits() && b.fits(), "skinny: shapes do not agree");
    assert!(bias.is_none_or(|bias| bias.len() == n), "skinny: bias length");
    assert!(available(), "skinny needs AVX2 and FMA");
    if m == 0 || n == 0 {
        return;
    }
    let threads = threads_for(m.saturating_mul(n).saturating_mul(k));
    let width = n.div_ceil(threads).next_multiple_of(NR);
    let out = Output(c.as_mut_ptr());
    let task = move |j0: usize| {
        let width = width.min(n - j0);
        // SAFETY: AVX2 and FMA were checked; the task writes only columns j0..j0 + width of
        // C's m rows, which no other task writes.
        unsafe {
            let rows: Vec<&mut [f32]> =
                (0..m).map(|i| std::slice::from_raw_parts_mut(out.ptr().add(i * n + j0), width)).collect();
            skinny_columns(a, b, bias.map(|bias| &bias[j0..j0 + width]), j0, rows)
        }
    };
    if threads > 1 {
        use rayon::prelude::*;
        crate::parallel::start_polling();
        (0..n).into_par_iter().step_by(width).for_each(task);
        return;
    }
    (0..n).step_by(width).for_each(task);
}

/// Columns `j0..j0 + rows[i].len()` of every row of `C = A · B + bias` (see [`skinny`]),
/// compiled with FMA.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA (see [`available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn skinny_columns(a: Matrix, b: Matrix, bias: Option<&[f32]>, j0: usize, rows: Vec<&mut [f32]>) {
    skinny_columns_body(a, b, bias, j0, rows)
}

/// # Safety
///
/// None here; the signature is the x86-64 version's, whose contract callers keep.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn skinny_columns(a: Matrix, b: Matrix, bias: Option<&[f32]>, j0: usize, rows: Vec<&mut [f32]>) {
    skinny_columns_body(a, b, bias, j0, rows)
}

#[inline(always)]
fn skinny_columns_body(a: Matrix, b: Matrix, bias: Option<&[f32]>, j0: usize, mut rows: Vec<&mut [f32]>) {
    let width = rows.first().map_or(0, |row| row.len());
    for row in rows.iter_mut() {
        match bias {
            Some(bias) => row.copy_from_slice(bias),
            None => row.fill(0.0),
        }
    }
    let b_row = |p: usize| &b.data[p * b.stride + j0..][..width];
    let mut p = 0;
    while p + 4 <= a.cols {
        let (b0, b1, b2, b3) = (b_row(p), b_row(p + 1), b_row(p + 2), b_row(p + 3));
        for (i, row) in rows.iter_mut().enumerate() {
            let x = &a.data[i * a.stride + p..][..4];
            for ((((c, &v0), &v1), &v2), &v3) in row.iter_mut().zip(b0).zip(b1).zip(b2).zip(b3) {
                *c = x[3].mul_add(v3, x[2].mul_add(v2, x[1].mul_add(v1, x[0].mul_add(v0, *c))));
            }
        }
        p += 4;
    }
    for p in p..a.cols {
        let bp = b_row(p);
        for (i, row) in rows.iter_mut().enumerate() {
            let x = a.data[i * a.stride + p];
            for (c, &v) in row.iter_mut().zip(bp) {
                *c = x.mul_add(v, *c);
            }
        }
    }
}

/// Products with fewer rows than this take the register tiles in `burn_onnx::ops::linear` only
/// where the tiles read B packed once ([`PackedB`]) or in place ([`reads_b_in_place`]): B is
/// then streamed once and split across the pool (MiniLM's 8-row layers, 384 and 1536 wide, in
/// place: 2.2 → 1.8 ms at one thread, 1.9 → 1.1 ms at two, where Burn's product ran on one
/// thread). Elsewhere such rows stay on Burn's matmul: the tiles packing B on every call for
/// them were the slower. `burn_onnx::ops::matmul_transposed` reads B in place below this.
pub const LINEAR_MIN_ROWS: usize = 16;

/// Whether the tiles read `b` in place, not packed, for a product of `rows` rows of A.
pub fn reads_b_in_place(rows: usize, b: &Matrix) -> bool {
    (rows <= DIRECT_B_ROWS || b.rows * b.stride <= DIRECT_B_CACHED) && b.stride <= DIRECT_B_STRIDE
}

/// Whether a matrix operand lies inside its slice (computed operands always do).
fn fits(b: &impl Right) -> bool {
    let listed = b.rows_in_place().is_none_or(|(data, starts)| {
        starts.len() == b.rows() && starts.iter().all(|&s| s.checked_add(b.cols()).is_some_and(|end| end <= data.len()))
    });
    listed && b.matrix().is_none_or(|m| m.fits())
}

/// Products with fewer columns than this are dot products of A's rows with B's columns: a
/// register tile 16 columns wide would be mostly padding (a 1×1 convolution on a 1×1 map,
/// Silero's convolutions on four frames).
const TILE_MIN_COLS: usize = 8;

/// ... and so are products of fewer than 16 columns with at least this many terms: the tile
/// would compute 16, dot products cost about a sixteenth of the terms plus a fixed sum each
/// (SqueezeNet 1.1's layers on 3×3 maps, kernels bench: 256 terms 1.42× → 1.19× Burn's time,
/// 432 terms 1.02× → 0.83×; at 64 terms 1.37× → 1.82×).
const DOTS_MIN_DEPTH: usize = 128;

/// `C = A · B` for a B of few columns: each column of B copied out once, then one dot product
/// per element of C, rows in parallel when there is enough work.
fn narrow(a: Matrix, b: &impl Right, c: &mut [f32], epilogue: &Epilogue<'_>) {
    let (m, k, n) = (a.rows, a.cols, b.cols());
    assert!(b.rows() == k && c.len() == m * n && a.fits() && fits(b), "sgemm: shapes do not agree");
    assert!(available(), "sgemm needs AVX2 and FMA");
    if m == 0 || n == 0 {
        return;
    }
    let mut columns = vec![vec![0.0f32; k]; n];
    columns.iter_mut().enumerate().for_each(|(j, column)| b.column(j, column));
    let columns: Vec<&[f32]> = columns.iter().map(Vec::as_slice).collect();
    let a_row = |i: usize| &a.data[i * a.stride..][..k];
    // Two rows at a time in 16-lane registers where the CPU has them and the depth fills one.
    let pairs = NarrowPairs::available(k);
    let rows = |(pair, out): (usize, &mut [f32])| {
        let i = 2 * pair;
        match (pairs, out.len() == 2 * n) {
            (Some(pairs), true) => pairs.products([a_row(i), a_row(i + 1)], &columns, out),
            _ => out.chunks_mut(n).enumerate().for_each(|(r, out)| narrow_row(a_row(i + r), &columns, out)),
        }
        out.chunks_mut(n).enumerate().for_each(|(r, out)| epilogue(i + r, 0, out));
    };
    if threads_for(m.saturating_mul(n).saturating_mul(k)) > 1 {
        use rayon::prelude::*;
        crate::parallel::start_polling();
        c.par_chunks_mut(2 * n).enumerate().for_each(rows);
        return;
    }
    c.chunks_mut(2 * n).enumerate().for_each(rows);
}

/// One row of the narrow product: `out[j] = a_row · columns[j]`, four columns at a time.
fn narrow_row(a_row: &[f32], columns: &[&[f32]], out: &mut [f32]) {
    let mut quads = out.chunks_exact_mut(4);
    for (values, columns) in (&mut quads).zip(columns.chunks_exact(4)) {
        values.copy_from_slice(&dot4(std::array::from_fn(|c| columns[c]), a_row));
    }
    let rest = quads.into_remainder();
    let first = columns.len() - rest.len();
    for (v, column) in rest.iter_mut().zip(&columns[first..]) {
        *v = dot(a_row, column);
    }
}

/// The narrow product's AVX-512 path: two rows of A against four columns of B per pass, eight
/// 16-lane accumulators, so that each load of a row or a column feeds two or four multiply-adds
/// (one row against four columns, in 8 lanes, was bound by its loads: a mobile network's 1×1
/// convolutions on 2×2 maps). Not taken below 16 terms, whose sums keep the 8-lane path's
/// order (a k-means distance over 4 features gives ONNX Runtime's bits).
#[derive(Clone, Copy)]
struct NarrowPairs;

impl NarrowPairs {
    fn available(depth: usize) -> Option<Self> {
        (crate::cpu::avx512() && depth >= 16).then_some(Self)
    }

    /// `out[r · n + j] = rows[r] · columns[j]` for the two rows.
    fn products(self, rows: [&[f32]; 2], columns: &[&[f32]], out: &mut [f32]) {
        let n = columns.len();
        let (top, bottom) = out.split_at_mut(n);
        let mut j = 0;
        while j < n {
            if j + 4 <= n {
                // SAFETY: `available` checked AVX-512; every row and column holds the depth.
                let sums = unsafe { dots_avx512::<4>(rows, std::array::from_fn(|c| columns[j + c])) };
                top[j..j + 4].copy_from_slice(&sums[0]);
                bottom[j..j + 4].copy_from_slice(&sums[1]);
                j += 4;
            } else {
                // SAFETY: as above.
                let [[t], [b]] = unsafe { dots_avx512::<1>(rows, [columns[j]]) };
                (top[j], bottom[j]) = (t, b);
                j += 1;
            }
        }
    }
}

/// `[[rows[r] · columns[c]; C]; 2]` over the columns' length (the rows at least as long), in
/// 16-lane accumulators, the tail under a mask.
///
/// # Safety
///
/// The CPU must have AVX-512F; every row must hold at least the columns' length.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn dots_avx512<const C: usize>(rows: [&[f32]; 2], columns: [&[f32]; C]) -> [[f32; C]; 2] {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        let k = columns.first().map_or(0, |c| c.len());
        let mut acc = [[_mm512_setzero_ps(); C]; 2];
        let mut i = 0;
        while i < k {
            let mask: __mmask16 = if k - i >= 16 { !0 } else { (1u16 << (k - i)) - 1 };
            // Loops, not closures, around the intrinsics: a closure LLVM leaves out of line is
            // compiled without the function's target features, and each intrinsic becomes a call
            // (a fifth of MNASNet's time in one build).
            let mut b = [_mm512_setzero_ps(); C];
            for (b, column) in b.iter_mut().zip(columns) {
                *b = _mm512_maskz_loadu_ps(mask, column.as_ptr().add(i));
            }
            for (acc, row) in acc.iter_mut().zip(rows) {
                let a = _mm512_maskz_loadu_ps(mask, row.as_ptr().add(i));
                for (acc, &b) in acc.iter_mut().zip(&b) {
                    *acc = _mm512_fmadd_ps(a, b, *acc);
                }
            }
            i += 16;
        }
        let mut sums = [[0.0f32; C]; 2];
        if C == 4 {
            // All eight at once: halves added, then pairwise sums across registers (a third of
            // the instructions of eight reductions, which took a third of a 112-term pass).
            // (Loops, as above: no closures around the intrinsics.)
            let mut halves = [_mm256_setzero_ps(); 8];
            for (half, &acc) in halves.iter_mut().zip(acc.as_flattened()) {
                let upper = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(acc)));
                *half = _mm256_add_ps(_mm512_castps512_ps256(acc), upper);
            }
            let mut pairs = [_mm256_setzero_ps(); 4];
            for (pair, two) in pairs.iter_mut().zip(halves.chunks_exact(2)) {
                *pair = _mm256_hadd_ps(two[0], two[1]);
            }
            let quads = [_mm256_hadd_ps(pairs[0], pairs[1]), _mm256_hadd_ps(pairs[2], pairs[3])];
            let low = _mm256_permute2f128_ps::<0x20>(quads[0], quads[1]);
            let high = _mm256_permute2f128_ps::<0x31>(quads[0], quads[1]);
            let mut all = [0.0f32; 8];
            _mm256_storeu_ps(all.as_mut_ptr(), _mm256_add_ps(low, high));
            for (r, sums) in sums.iter_mut().enumerate() {
                sums.copy_from_slice(&all[4 * r..][..C]);
            }
            return sums;
        }
        for (sums, acc) in sums.iter_mut().zip(&acc) {
            for (sum, &acc) in sums.iter_mut().zip(acc) {
                *sum = _mm512_reduce_add_ps(acc);
            }
        }
        sums
    }
}

/// # Safety
///
/// Never called: `NarrowPairs::available` is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn dots_avx512<const C: usize>(rows: [&[f32]; 2], columns: [&[f32]; C]) -> [[f32; C]; 2] {
    [columns.map(|c| dot(rows[0], c)), columns.map(|c| dot(rows[1], c))]
}

/// `Σ a[i] · b[i]`: four 8-lane AVX2 accumulators where the CPU has them, else eight scalar
/// lanes that LLVM vectorises for the baseline target.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if available() {
        // SAFETY: the CPU has AVX2 and FMA.
        return unsafe { dot_avx2(a, b) };
    }
    dot_lanes(a, b)
}

/// `dot` for the baseline target: eight accumulators that LLVM vectorises.
fn dot_lanes(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut lanes = [0.0f32; 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ac.zip(bc) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// # Safety
///
/// The CPU must have AVX2 and FMA (see [`available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        let n = a.len().min(b.len());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        while i + 32 <= n {
            for (l, acc) in acc.iter_mut().enumerate() {
                let (x, y) = (_mm256_loadu_ps(a.as_ptr().add(i + 8 * l)), _mm256_loadu_ps(b.as_ptr().add(i + 8 * l)));
                *acc = _mm256_fmadd_ps(x, y, *acc);
            }
            i += 32;
        }
        let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let mut lanes = [0.0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), sum);
        fma_chain(lanes.iter().sum::<f32>(), &a[i..n], &b[i..n])
    }
}

/// `acc + Σ a[i] · b[i]` as one fused multiply-add per term in order: below a vector's
/// length, the same sum as ONNX Runtime's matrix product (MLAS accumulates each element of C
/// along the depth with FMAs), so that a product of depth under 8 (a k-means distance on 4
/// features) gives its bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn fma_chain(mut acc: f32, a: &[f32], b: &[f32]) -> f32 {
    for (x, y) in a.iter().zip(b) {
        acc = x.mul_add(*y, acc);
    }
    acc
}

/// `[a[0] · b, a[1] · b, a[2] · b, a[3] · b]` (each row at least as long as `b`): four dot
/// products sharing the loads of `b` and one horizontal reduction, where four separate ones
/// would spend most of their time reducing when `b` is short (an LSTM's state).
pub fn dot4(a: [&[f32]; 4], b: &[f32]) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    if available() && a.iter().all(|row| row.len() >= b.len()) {
        // SAFETY: the CPU has AVX2 and FMA; every row holds `b.len()` elements.
        return unsafe { dot4_avx2(a, b) };
    }
    a.map(|row| dot(row, b))
}

/// # Safety
///
/// The CPU must have AVX2 and FMA (see [`available`]); every row of `a` must hold
/// at least `b.len()` values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot4_avx2(a: [&[f32]; 4], b: &[f32]) -> [f32; 4] {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        let n = b.len();
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        while i + 8 <= n {
            let bv = _mm256_loadu_ps(b.as_ptr().add(i));
            for (acc, row) in acc.iter_mut().zip(a) {
                *acc = _mm256_fmadd_ps(_mm256_loadu_ps(row.as_ptr().add(i)), bv, *acc);
            }
            i += 8;
        }
        // Pairwise sums within each 128-bit half, three times, leave row r's half-sums in lane r
        // of each half; adding the halves gives the four totals.
        let t = _mm256_hadd_ps(_mm256_hadd_ps(acc[0], acc[1]), _mm256_hadd_ps(acc[2], acc[3]));
        let sums = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
        let mut out = [0.0f32; 4];
        _mm_storeu_ps(out.as_mut_ptr(), sums);
        for (out, row) in out.iter_mut().zip(a) {
            *out = fma_chain(*out, &row[i..n], &b[i..n]);
        }
        out
    }
}

/// What runs on each finished segment of a row of C: `(row, first column, values)`.
pub type Epilogue<'a> = dyn Fn(usize, usize, &mut [f32]) + Sync + 'a;

/// Columns and rows of C per task, so that every thread gets about the same work: column blocks
/// of at most `NC`, as many as a multiple of the threads when there are enough of them. With
/// too few, narrower column blocks, unless C has many more rows than columns: then each block
/// is also split into rows, and the tasks of a block share one packing of B.
fn task_shape(m: usize, n: usize, threads: usize) -> (usize, usize) {
    let round_up = |x: usize, to: usize| x.div_ceil(to) * to;
    let column_blocks = n.div_ceil(NC);
    if threads == 1 {
        return (NC, m);
    }
    if column_blocks >= 2 * threads {
        return (round_up(n.div_ceil(round_up(column_blocks, threads)), NR), m);
    }
    let row_blocks = (2 * threads).div_ceil(column_blocks);
    let many_rows = m > ROWS_PER_COLUMN * n || n.div_ceil(NR) < 2 * threads;
    if many_rows && m >= 2 * row_blocks * MR {
        return (round_up(n.div_ceil(column_blocks), NR), round_up(m.div_ceil(row_blocks), MR));
    }
    // One or two column tasks per thread, whichever finishes first in whole panels (13 panels
    // on two threads: 7 + 6, not 4 + 4 + 4 + 1); two on a tie, for balance on a busy machine.
    let panels = n.div_ceil(NR);
    let makespan = |tasks: usize| tasks.div_ceil(threads) * panels.div_ceil(tasks);
    let fewer = makespan(threads) < makespan(2 * threads) && panels.div_ceil(threads) * NR <= NC;
    let tasks = if fewer { threads } else { 2 * threads };
    (panels.div_ceil(tasks) * NR, m)
}

/// Rows of C per column above which tasks split rows rather than columns: packing an element
/// of B (an im2col gather, then a copy into its panel) costs more than reading one of A in
/// place. Magika's convolution (512 × 508) packed its whole B four times at two threads.
const ROWS_PER_COLUMN: usize = 2;

/// Products with at most this many rows read B in place (its rows are contiguous) instead of
/// packing it: each panel of B is used by so few rows of A that copying it costs more than the
/// strided reads.
const DIRECT_B_ROWS: usize = 4 * MR;

/// ... and whose rows lie at most this many floats apart: farther, each row of a panel is pages
/// away from the last, and the strided reads miss the TLB and the prefetcher (ddddocr_common's
/// 1024 × 8210 output layer, 16 rows of A: the model took 2.0× ONNX Runtime's time with B read
/// in place, 1.6× packed).
const DIRECT_B_STRIDE: usize = 4096;

/// ... or, for any number of rows, whose floats are at most this many: B stays in the L2 cache
/// between the row blocks that read it.
const DIRECT_B_CACHED: usize = 1 << 15;

/// How a panel's rows lie: evenly apart, or where a list of starts puts them.
#[derive(Clone, Copy)]
enum Rows {
    Apart(usize),
    Listed(Listed),
}

/// `$call` with `$rows` bound to the panel rows `$of` as their own type, so that each register
/// tile is compiled for both (an even stride stays a multiplication, not a load per row).
macro_rules! with_rows {
    ($of:expr, |$rows:ident| $call:expr) => {
        match $of {
            Rows::Apart($rows) => $call,
            Rows::Listed($rows) => $call,
        }
    };
}

thread_local! {
    /// Each thread's packed block of B, kept between products (packing overwrites what it reads).
    static PACKED_B: std::cell::RefCell<Aligned> = const { std::cell::RefCell::new(Aligned(Vec::new())) };
}

/// One block: `C[rows, j0..j0 + width] = A[rows, :] · B[:, j0..j0 + width]`, C with row stride
/// `ldc`.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA (see [`available`]); `c` must point to `rows.len()`
/// rows of `ldc` floats, each with `width` writable values from `j0` on, that nothing else
/// reads or writes during the call.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn block(
    a: Matrix,
    b: &impl Right,
    j0: usize,
    width: usize,
    rows: std::ops::Range<usize>,
    c: *mut f32,
    ldc: usize,
    mut source: PanelsOfB<'_>,
) {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        let k = a.cols;
        let panels_b = width.div_ceil(NR);
        let in_place = matches!(source, PanelsOfB::Pack(_));
        let direct = b.matrix().filter(|m| in_place && reads_b_in_place(a.rows, m));
        let listed = b.rows_in_place().filter(|_| in_place);
        let read_in_place = direct.is_some() || listed.is_some();
        if let PanelsOfB::Pack(packed_b) = &mut source {
            packed_b.reserve(if read_in_place { NR * KC } else { panels_b * NR * KC });
        }
        for p0 in (0..k).step_by(KC) {
            let depth = KC.min(k - p0);
            // This depth block's panels, packed here or by `SharedPanels`.
            let packed: *const f32 = match &mut source {
                PanelsOfB::Pack(packed_b) => {
                    if !read_in_place {
                        pack_b(b, p0, depth, j0, width, packed_b.as_mut_slice());
                    }
                    packed_b.as_slice().as_ptr()
                }
                PanelsOfB::Packed(all) => all[p0 * panels_b * NR..].as_ptr(),
            };
            for i0 in rows.clone().step_by(MC) {
                let rows = MC.min(rows.end - i0);
                // The panel `jp` of B: in place (B's rows) or packed (NR apart).
                let mut panel = |jp: usize| -> (*const f32, Rows) {
                    let (column, cols) = (j0 + jp * NR, NR.min(width - jp * NR));
                    match (direct, listed, &mut source) {
                        (Some(m), _, _) if cols == NR => {
                            (m.data.as_ptr().add(p0 * m.stride + column), Rows::Apart(m.stride))
                        }
                        (_, Some((data, starts)), _) if cols == NR => {
                            (data.as_ptr().add(column), Rows::Listed(Listed(starts.as_ptr().add(p0))))
                        }
                        (_, _, PanelsOfB::Pack(packed_b)) if read_in_place => {
                            // The last, partial panel is packed (zero-padded) so no read passes B's end.
                            pack_b(b, p0, depth, column, cols, packed_b.as_mut_slice());
                            (packed_b.as_slice().as_ptr(), Rows::Apart(NR))
                        }
                        _ => (packed.add(jp * NR * depth), Rows::Apart(NR)),
                    }
                };
                let tiles = Tiles { a, depth, p0, first_row: i0, rows, c, ldc, accumulate: p0 > 0 };
                let mut jp = 0;
                while jp < panels_b {
                    let dst_column = j0 + jp * NR;
                    // Three (or two) whole panels side by side: 8×48 (8×32) tiles, then the rows
                    // left per panel.
                    let whole = (width - jp * NR) / NR;
                    if avx512() && whole >= 2 {
                        let wide_rows = rows / WIDE_ROWS * WIDE_ROWS;
                        let ldb = panel(jp).1;
                        if whole >= 3 {
                            let b = [panel(jp).0, panel(jp + 1).0, panel(jp + 2).0];
                            with_rows!(ldb, |ldb| tiles.wide(wide_rows, b, ldb, dst_column));
                        } else {
                            let b = [panel(jp).0, panel(jp + 1).0];
                            with_rows!(ldb, |ldb| tiles.wide(wide_rows, b, ldb, dst_column));
                        }
                        let panels = whole.min(3);
                        for k in 0..panels {
                            let pb = panel(jp + k).0;
                            with_rows!(ldb, |ldb| tiles.narrow(wide_rows, pb, ldb, dst_column + k * NR, NR));
                        }
                        jp += panels;
                    } else {
                        let (pb, ldb) = panel(jp);
                        let cols = NR.min(width - jp * NR);
                        with_rows!(ldb, |ldb| tiles.narrow(0, pb, ldb, dst_column, cols));
                        jp += 1;
                    }
                }
            }
        }
    }
}

/// Columns at B's edge at most this many are dot products (`Tiles::thin`): a 16-column tile
/// would do 16 / cols times their work (a 7×7 map has 49 columns: three panels and one).
const THIN_COLS: usize = 4;

/// The register tiles of one block of rows of C against one depth block of A and B.
#[cfg(target_arch = "x86_64")]
struct Tiles<'a> {
    a: Matrix<'a>,
    depth: usize,
    /// The depth block's first column of A.
    p0: usize,
    /// The block's first row of C and its number of rows.
    first_row: usize,
    rows: usize,
    c: *mut f32,
    ldc: usize,
    /// Whether the products add to C (depth blocks after the first).
    accumulate: bool,
}

#[cfg(target_arch = "x86_64")]
impl Tiles<'_> {
    /// Where row `row` of the block (and the `R` rows after it) lie in A: the rows are read in
    /// place from column p0 on, rows past the block's end repeating its last one (their
    /// results are not stored).
    fn a_rows<const R: usize>(&self, row: usize) -> (*const f32, [usize; R]) {
        let first = self.first_row + row;
        let last = self.rows - row - 1;
        let pa = self.a.data[first * self.a.stride + self.p0..].as_ptr();
        (pa, std::array::from_fn(|r| r.min(last) * self.a.stride))
    }

    /// Rows from `row` on against the `cols <= THIN_COLS` columns of a panel: each column
    /// copied out once, then four dot products per row of A (`dot4`, zero columns past `cols`).
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and FMA; `pb` must point to `depth` rows of `cols` floats
    /// where `ldb` puts them, and the tile's rows of C from `row` on (at `column`) must be
    /// writable.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn thin(&self, row: usize, pb: *const f32, ldb: impl PanelRows, column: usize, cols: usize) {
        // SAFETY: this function's own contract (# Safety above) is the caller's.
        unsafe {
            let mut columns = [[0.0f32; KC]; THIN_COLS];
            for (c, values) in columns.iter_mut().enumerate().take(cols) {
                for (p, v) in values[..self.depth].iter_mut().enumerate() {
                    *v = *pb.add(ldb.at(p) + c);
                }
            }
            let columns: [&[f32]; THIN_COLS] = std::array::from_fn(|c| &columns[c][..self.depth]);
            for r in row..self.rows {
                let a_row = &self.a.data[(self.first_row + r) * self.a.stride + self.p0..][..self.depth];
                let sums = dot4(columns, a_row);
                let dst = self.c.add((self.first_row + r) * self.ldc + column);
                for (c, &sum) in sums.iter().enumerate().take(cols) {
                    *dst.add(c) = if self.accumulate { *dst.add(c) + sum } else { sum };
                }
            }
        }
    }

    /// The first `rows` rows (whole tiles of WIDE_ROWS) against P 16-column panels at once.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512F; each pointer of `b` must point to `depth` rows of 16
    /// floats where `ldb` puts them, and the first `rows` rows of C (at `column`) must be
    /// writable.
    #[target_feature(enable = "avx512f")]
    unsafe fn wide<const P: usize>(&self, rows: usize, b: [*const f32; P], ldb: impl PanelRows, column: usize) {
        // SAFETY: this function's own contract (# Safety above) is the caller's.
        unsafe {
            for row in (0..rows).step_by(WIDE_ROWS) {
                let dst = self.c.add((self.first_row + row) * self.ldc + column);
                kernel_avx512_wide(self.depth, self.a_rows(row), b, ldb, dst, self.ldc, self.accumulate);
            }
        }
    }

    /// Rows from `row` on against one panel of `cols` columns (NR, or fewer at B's edge).
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and FMA; `pb` must point to `depth` rows of `cols` floats
    /// where `ldb` puts them, and the tile's rows of C from `row` on (at `column`) must be
    /// writable.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn narrow(&self, mut row: usize, pb: *const f32, ldb: impl PanelRows, column: usize, cols: usize) {
        // SAFETY: this function's own contract (# Safety above) is the caller's.
        unsafe {
            let (depth, ldc, accumulate) = (self.depth, self.ldc, self.accumulate);
            if cols <= THIN_COLS {
                return self.thin(row, pb, ldb, column, cols);
            }
            let mut tile = [0.0f32; MR * NR];
            while row < self.rows {
                let dst = self.c.add((self.first_row + row) * ldc + column);
                if cols == NR && self.rows - row >= 2 * MR && avx512() {
                    // Two full tiles at once: twelve independent accumulators keep both 512-bit
                    // FMA ports busy where six would wait on their latency.
                    kernel_avx512(depth, self.a_rows::<{ 2 * MR }>(row), pb, ldb, dst, ldc, accumulate);
                    row += 2 * MR;
                    continue;
                }
                let tile_rows = MR.min(self.rows - row);
                let a = self.a_rows::<MR>(row);
                if tile_rows == MR && cols == NR {
                    tile_kernel(depth, a, pb, ldb, dst, ldc, accumulate);
                } else {
                    // Edge tile: computed in a full scratch tile, then the part that exists (read
                    // first only when accumulating onto an earlier depth block).
                    if accumulate {
                        for r in 0..tile_rows {
                            std::ptr::copy_nonoverlapping(dst.add(r * ldc), tile.as_mut_ptr().add(r * NR), cols);
                        }
                    }
                    tile_kernel(depth, a, pb, ldb, tile.as_mut_ptr(), NR, accumulate);
                    for r in 0..tile_rows {
                        std::ptr::copy_nonoverlapping(tile.as_ptr().add(r * NR), dst.add(r * ldc), cols);
                    }
                }
                row += MR;
            }
        }
    }
}

/// # Safety
///
/// None here; the signature is the x86-64 version's, whose contract callers keep.
#[cfg(not(target_arch = "x86_64"))]
#[allow(clippy::too_many_arguments)]
unsafe fn block(
    _: Matrix,
    _: &impl Right,
    _: usize,
    _: usize,
    _: std::ops::Range<usize>,
    _: *mut f32,
    _: usize,
    _: PanelsOfB<'_>,
) {
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe { unreachable!("sgemm is only called where available() holds") }
}

/// Where a block finds its panels of B: packed by the block itself into the thread's buffer
/// (or read in place), or packed already (all depth blocks of its columns, one after the
/// other, as `pack_b` lays them out).
enum PanelsOfB<'a> {
    Pack(&'a mut Aligned),
    Packed(&'a [f32]),
}

/// B packed once for every column block of the tasks, shared by the tasks that split rows.
struct SharedPanels {
    packed: Vec<f32>,
    /// Columns per block, and the offset of each block's panels in `packed`.
    width: usize,
    offsets: Vec<usize>,
}

impl SharedPanels {
    /// Packs B's column blocks of `width` columns, each depth block of each in parallel.
    fn pack(b: &impl Right, width: usize) -> Self {
        let (k, n) = (b.rows(), b.cols());
        let sizes: Vec<usize> = (0..n).step_by(width).map(|j0| width.min(n - j0).div_ceil(NR) * NR * k).collect();
        let offsets: Vec<usize> = sizes.iter().scan(0, |at, &size| Some(std::mem::replace(at, *at + size))).collect();
        let mut packed = vec![0.0f32; sizes.iter().sum()];
        // Disjoint parts of `packed`, one per (column block, depth block).
        let mut parts = vec![];
        let mut rest = &mut packed[..];
        for j0 in (0..n).step_by(width) {
            let cols = width.min(n - j0);
            for p0 in (0..k).step_by(KC) {
                let depth = KC.min(k - p0);
                let (part, tail) = std::mem::take(&mut rest).split_at_mut(cols.div_ceil(NR) * NR * depth);
                parts.push((part, j0, cols, p0, depth));
                rest = tail;
            }
        }
        let pack = |(part, j0, cols, p0, depth): (&mut [f32], usize, usize, usize, usize)| {
            pack_b(b, p0, depth, j0, cols, part)
        };
        use rayon::prelude::*;
        // Packing copies each element of a part once.
        let per_part = crate::parallel::job_len(parts.len(), width * KC.min(k), crate::parallel::PARALLEL_MIN_ELEMENTS);
        parts.into_par_iter().with_min_len(per_part).for_each(pack);
        Self { packed, width, offsets }
    }

    /// The panels of the column block starting at column `j0`.
    fn of_block(&self, j0: usize) -> &[f32] {
        &self.packed[self.offsets[j0 / self.width]..]
    }
}

/// An f32 buffer aligned to 32 bytes, so the kernel loads packed B with aligned loads.
struct Aligned(Vec<Lane>);

#[derive(Clone, Copy)]
#[repr(align(32))]
struct Lane(#[allow(dead_code)] [f32; 8]); // read through `Aligned::as_slice`

impl Aligned {
    /// Grows the buffer to at least `len` floats (new lanes zeroed).
    fn reserve(&mut self, len: usize) {
        if self.0.len() * 8 < len {
            self.0.resize(len.div_ceil(8), Lane([0.0; 8]));
        }
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

/// Packs `B[p0..p0 + depth, j0..j0 + width]` (`width <= NC`) as `NR`-column panels, row after
/// row, zero-padded.
fn pack_b(b: &impl Right, p0: usize, depth: usize, j0: usize, width: usize, packed: &mut [f32]) {
    let mut copy = [0.0f32; NC];
    let matrix = b.matrix();
    for p in 0..depth {
        // A matrix's row is read where it lies; another operand's is made into `copy` first.
        let row = match matrix {
            Some(m) => &m.data[(p0 + p) * m.stride + j0..][..width],
            None => {
                b.segment(p0 + p, j0, &mut copy[..width]);
                &copy[..width]
            }
        };
        let mut panels = row.chunks_exact(NR);
        for (jp, values) in (&mut panels).enumerate() {
            // A copy of a fixed size, inlined, where a slice copy is a call to memmove.
            let dst: &mut [f32; NR] = (&mut packed[(jp * depth + p) * NR..][..NR]).try_into().expect("NR floats");
            *dst = values.try_into().expect("NR floats");
        }
        let (jp, rest) = (width / NR, panels.remainder());
        if !rest.is_empty() {
            let dst = &mut packed[(jp * depth + p) * NR..][..NR];
            dst[..rest.len()].copy_from_slice(rest);
            dst[rest.len()..].fill(0.0);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod tiles;
#[cfg(target_arch = "x86_64")]
use tiles::*;

#[cfg(test)]
mod tests;
