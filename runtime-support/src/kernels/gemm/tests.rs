//! The product against a naive triple loop, on every path (tiles, edges, skinny, narrow).

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
fn tasks_are_whole_tiles_within_a_packed_block_and_balanced() {
    for threads in [2, 3, 4, 8] {
        for (m, n) in [(64, 3136), (192, 196), (352, 49), (128, 784), (6, 40), (1000, 12544), (16, 8)] {
            let (width, rows) = task_shape(m, n, threads);
            assert!(width > 0 && width <= NC && width % NR == 0, "{m}x{n}, {threads} threads: width {width}");
            assert!(rows == m || rows % MR == 0, "{m}x{n}, {threads} threads: rows {rows}");
            let tasks = n.div_ceil(width) * m.div_ceil(rows);
            // Every thread busy: at most one task's panels more than an even split of them
            // (fewer tasks than threads only where that finishes as soon).
            let (panels, per_task) = (n.div_ceil(NR), width / NR);
            let makespan = tasks.div_ceil(threads) * per_task.min(panels);
            let even = panels.div_ceil(threads);
            assert!(rows < m || makespan <= even + per_task, "{m}x{n}, {threads} threads: {tasks} tasks of {width}");
            assert!(rows < m || tasks >= threads.min(panels.div_ceil(per_task)), "{m}x{n}: {tasks} tasks");
            if n.div_ceil(NC) >= 2 * threads {
                assert_eq!(tasks % threads, 0, "{m}x{n}, {threads} threads: {tasks} tasks");
            }
        }
    }
}

/// Both paths (AVX2 where present, and the baseline lanes) on lengths around their block
/// sizes (8 lanes, 32 per AVX2 step): integer-valued products, so every summation order
/// gives the exact sum; a longer operand is cut to the shorter's length.
#[test]
fn dot_is_the_exact_sum_of_products_on_every_path() {
    for n in [0, 1, 7, 8, 9, 31, 32, 33, 64, 100, 257] {
        let a: Vec<f32> = (0..n).map(|i| ((i * 37) % 19) as f32 - 9.0).collect();
        let b: Vec<f32> = (0..n + 3).map(|i| ((i * 11) % 7) as f32 - 3.0).collect();
        let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert_eq!(dot(&a, &b), want, "n = {n}");
        assert_eq!(dot_lanes(&a, &b), want, "baseline, n = {n}");
        assert_eq!(dot(&b, &a), want, "longer first, n = {n}");
    }
}

#[test]
fn four_dot_products_match_one_at_a_time() {
    for n in [0, 3, 8, 21, 64, 130] {
        let rows: Vec<Vec<f32>> =
            (0..4).map(|r| (0..n).map(|i| ((i * 31 + r * 7) % 17) as f32 - 8.0).collect()).collect();
        let b: Vec<f32> = (0..n).map(|i| ((i * 13) % 11) as f32 - 5.0).collect();
        let want: Vec<f32> = rows.iter().map(|row| row.iter().zip(&b).map(|(x, y)| x * y).sum()).collect();
        assert_eq!(dot4(std::array::from_fn(|r| &rows[r][..]), &b).to_vec(), want, "n = {n}");
    }
}

/// Below eight terms a product of few columns (each a dot product) sums as MLAS does: one
/// fused multiply-add per term in depth order, which non-integer values tell apart from
/// products rounded before they are added.
#[test]
fn short_narrow_products_are_fma_chains_in_depth_order() {
    if skipped_without_avx2("short_narrow_products_are_fma_chains_in_depth_order") {
        return;
    }
    let (m, n) = (24, 3);
    for k in 1..8 {
        let a: Vec<f32> = (0..m * k).map(|i| 4.0 + ((i * 7919) % 97) as f32 / 31.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| 1.0 + ((i * 104729) % 89) as f32 / 37.0).collect();
        let mut c = vec![f32::NAN; m * n];
        let (am, bm) =
            (Matrix { data: &a, rows: m, cols: k, stride: k }, Matrix { data: &b, rows: k, cols: n, stride: n });
        sgemm(am, &bm, &mut c, &|_, _, _| {});
        let chain = |i: usize, j: usize| (0..k).fold(0.0f32, |acc, p| a[i * k + p].mul_add(b[p * n + j], acc));
        let want: Vec<f32> = (0..m * n).map(|e| chain(e / n, e % n)).collect();
        assert_eq!(c, want, "depth {k}");
        let rounded_first = (0..m * n).any(|e| {
            let (i, j) = (e / n, e % n);
            (0..k).fold(0.0f32, |acc, p| acc + a[i * k + p] * b[p * n + j]) != want[e]
        });
        assert!(k == 1 || rounded_first, "depth {k}: the values do not tell the two sums apart");
    }
}

/// Whether a test of the AVX2 paths cannot run here (the CPU lacks them, or
/// `BURN_ONNX_KERNELS` leaves them out); it says so in the test's output.
fn skipped_without_avx2(test: &str) -> bool {
    let skipped = !available();
    if skipped {
        println!("{test}: skipped, the kernels in force are {}", crate::cpu::describe());
    }
    skipped
}

#[test]
fn matches_the_naive_product_on_edge_sizes() {
    if skipped_without_avx2("matches_the_naive_product_on_edge_sizes") {
        return;
    }
    for (m, k, n) in [
        (1, 1, 1),
        (7, 3, 17),
        (6, 256, 16),
        (13, 300, 530),
        (73, 513, 33),
        (2, 1000, 1),
        (40, 77, 3),
        (9, 5, 7),
        (7, 37, 6),
        // Fewer than 16 columns, many terms: dot products.
        (5, 200, 9),
        (7, 130, 15),
        // No terms: zeros.
        (3, 0, 20),
        (3, 0, 5),
    ] {
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 104729) % 11) as f32 - 5.0).collect();
        let mut c = vec![f32::NAN; m * n];
        let (am, bm) =
            (Matrix { data: &a, rows: m, cols: k, stride: k }, Matrix { data: &b, rows: k, cols: n, stride: n });
        sgemm(am, &bm, &mut c, &|_, _, _| {});
        let want = naive(&a, &b, m, k, n);
        assert_eq!(c, want, "{m}x{k}x{n}");
        // Into unwritten slots (here NaN, which a value left unwritten would keep).
        let mut slots = vec![MaybeUninit::new(f32::NAN); m * n];
        let rows = std::sync::Mutex::new(vec![0; m]);
        sgemm_into(am, &bm, &mut slots, &|i, _, values| {
            assert!(values.iter().all(|v| !v.is_nan()), "{m}x{k}x{n}: the epilogue saw an unwritten value");
            rows.lock().expect("not poisoned")[i] += values.len();
        });
        // SAFETY: `sgemm_into` wrote every slot.
        assert_eq!(unsafe { written::assume_written(&mut slots) }, &want[..], "{m}x{k}x{n}, into");
        assert_eq!(rows.into_inner().expect("not poisoned"), vec![n; m], "{m}x{k}x{n}: epilogue per row");
    }
}

/// Few rows of A (a Linear's input), the bias added, on one thread and split by columns,
/// against the naive product.
#[test]
fn skinny_matches_the_naive_product_plus_bias() {
    if skipped_without_avx2("skinny_matches_the_naive_product_plus_bias") {
        return;
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool");
    for (m, k, n) in [(1, 1, 1), (1, 70, 33), (3, 9, 200), (4, 1500, 1100)] {
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 104729) % 11) as f32 - 5.0).collect();
        let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.5).collect();
        let mut c = vec![f32::NAN; m * n];
        let (am, bm) =
            (Matrix { data: &a, rows: m, cols: k, stride: k }, Matrix { data: &b, rows: k, cols: n, stride: n });
        pool.install(|| skinny(am, bm, Some(&bias[..]), &mut c));
        let mut want = naive(&a, &b, m, k, n);
        want.iter_mut().enumerate().for_each(|(i, v)| *v += bias[i % n]);
        assert_eq!(c, want, "{m}x{k}x{n}");
    }
}

/// With several threads, tall products split rows and share one packing of B; wide ones
/// split columns; the last, below `PARALLEL_MIN_FMAS`, stays one task. All on edge sizes,
/// against the naive product.
#[test]
fn parallel_splits_match_the_naive_product() {
    if skipped_without_avx2("parallel_splits_match_the_naive_product") {
        return;
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool");
    for (m, k, n) in [(200, 300, 40), (97, 600, 33), (300, 40, 100), (48, 257, 1100), (25, 9, 17)] {
        let shares_b = task_shape(m, n, 3).1 < m;
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 104729) % 11) as f32 - 5.0).collect();
        let mut c = vec![f32::NAN; m * n];
        let (am, bm) =
            (Matrix { data: &a, rows: m, cols: k, stride: k }, Matrix { data: &b, rows: k, cols: n, stride: n });
        pool.install(|| sgemm(am, &bm, &mut c, &|_, _, _| {}));
        assert_eq!(c, naive(&a, &b, m, k, n), "{m}x{k}x{n}, B shared: {shares_b}");
    }
    assert!(task_shape(200, 40, 3).1 < 200, "the first case splits rows");
}

/// `a · b` through `sgemm_into` on `pool`, into NaN-filled slots, each row's epilogue seeing
/// only written values.
fn product_into(pool: &rayon::ThreadPool, a: Matrix, b: &impl Right) -> Vec<f32> {
    let mut slots = vec![MaybeUninit::new(f32::NAN); a.rows * b.cols()];
    pool.install(|| {
        sgemm_into(a, b, &mut slots, &|_, _, values| assert!(values.iter().all(|v| !v.is_nan()), "unwritten"))
    });
    // SAFETY: `sgemm_into` wrote every slot.
    unsafe { written::assume_written(&mut slots) }.to_vec()
}

/// B packed once ([`PackedB`]), from a matrix and from the transpose of one ([`Transposed`]),
/// gives the naive product on edge sizes (depths past a depth block, a last partial panel,
/// column blocks of whole panels, more rows than a row block) on one thread and on three, and
/// reads back as B.
#[test]
fn packed_and_transposed_operands_match_the_naive_product() {
    if skipped_without_avx2("packed_and_transposed_operands_match_the_naive_product") {
        return;
    }
    let pools = [1, 3].map(|threads| rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool"));
    for (m, k, n) in [(1, 1, 16), (5, 7, 17), (16, 300, 530), (40, 513, 4100), (130, 256, 48)] {
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 104729) % 11) as f32 - 5.0).collect();
        let bt: Vec<f32> = (0..n * k).map(|i| b[(i % k) * n + i / k]).collect();
        let am = Matrix { data: &a, rows: m, cols: k, stride: k };
        let packed = PackedB::pack(&Matrix { data: &b, rows: k, cols: n, stride: n }).expect("wide enough");
        let transposed =
            PackedB::pack(&Transposed(Matrix { data: &bt, rows: n, cols: k, stride: k })).expect("wide enough");
        for p in [0, k / 2, k - 1] {
            let mut row = vec![0.0; n - 1];
            packed.segment(p, 1, &mut row);
            assert_eq!(row, b[p * n + 1..][..n - 1], "{m}x{k}x{n}: row {p}");
        }
        let mut column = vec![0.0; k];
        transposed.column(n - 1, &mut column);
        assert_eq!(column, bt[(n - 1) * k..], "{m}x{k}x{n}: last column");
        let want = naive(&a, &b, m, k, n);
        for pool in &pools {
            let threads = pool.current_num_threads();
            assert_eq!(product_into(pool, am, &packed), want, "{m}x{k}x{n}, {threads} threads");
            assert_eq!(product_into(pool, am, &transposed), want, "{m}x{k}x{n}, {threads} threads, from Bᵀ");
        }
    }
    let b = [1.0; 30];
    assert!(PackedB::pack(&Matrix { data: &b, rows: 2, cols: 15, stride: 15 }).is_none(), "narrow: dot products");
    assert!(PackedB::pack(&Matrix { data: &b, rows: 0, cols: 30, stride: 30 }).is_none(), "no depth");
}
