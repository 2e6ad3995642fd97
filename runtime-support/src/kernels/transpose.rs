//! Matrix transposes in 8×8 blocks of AVX2 registers: the depthwise kernel's trips between
//! channel planes and pixels of channel vectors (a scalar element at a time, those trips cost
//! more than its multiply-adds on a mobile network's small planes).

use std::mem::MaybeUninit;

/// Rows and columns of one register block.
const BLOCK: usize = 8;

/// `dst[j * dst_stride + i] = src[i * src_stride + j]` for `i < rows`, `j < cols`: the
/// `rows × cols` matrix at `src` (rows `src_stride` apart) written transposed into `dst` (its
/// rows `dst_stride` apart). Other values of `dst` are left as they are.
///
/// # Panics
///
/// If either matrix does not fit its slice or a stride is shorter than its row.
pub(crate) fn transpose(
    src: &[f32],
    [rows, cols]: [usize; 2],
    src_stride: usize,
    dst: &mut [MaybeUninit<f32>],
    dst_stride: usize,
) {
    if rows == 0 || cols == 0 {
        return;
    }
    assert!(src_stride >= cols && (rows - 1) * src_stride + cols <= src.len(), "source out of bounds");
    assert!(dst_stride >= rows && (cols - 1) * dst_stride + rows <= dst.len(), "destination out of bounds");
    let whole = |n: usize| n / BLOCK * BLOCK;
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx2_fma() {
        for i in (0..whole(rows)).step_by(BLOCK) {
            for j in (0..whole(cols)).step_by(BLOCK) {
                // SAFETY: the CPU has AVX2; the block's 8 rows of 8 lie within both slices
                // (asserted above: i + 8 ≤ rows and j + 8 ≤ cols).
                unsafe {
                    block_avx2(
                        src.as_ptr().add(i * src_stride + j),
                        src_stride,
                        dst.as_mut_ptr().add(j * dst_stride + i).cast(),
                        dst_stride,
                    )
                };
            }
        }
        scalar(src, [whole(rows), cols], [0, whole(cols)], src_stride, dst, dst_stride);
        scalar(src, [rows, cols], [whole(rows), 0], src_stride, dst, dst_stride);
        return;
    }
    scalar(src, [rows, cols], [0, 0], src_stride, dst, dst_stride);
}

/// [`transpose`] of rows `from[0]..rows` and columns `from[1]..cols`, an element at a time.
fn scalar(
    src: &[f32],
    [rows, cols]: [usize; 2],
    from: [usize; 2],
    src_stride: usize,
    dst: &mut [MaybeUninit<f32>],
    dst_stride: usize,
) {
    for i in from[0]..rows {
        for j in from[1]..cols {
            dst[j * dst_stride + i].write(src[i * src_stride + j]);
        }
    }
}

/// One 8×8 block: rows interleaved in pairs, then in pairs of pairs, then halves swapped.
///
/// # Safety
///
/// The CPU must have AVX2; `src` must point to 8 rows of 8 readable floats `src_stride` apart,
/// `dst` to 8 rows of 8 writable floats `dst_stride` apart.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_avx2(src: *const f32, src_stride: usize, dst: *mut f32, dst_stride: usize) {
    use std::arch::x86_64::*;
    // SAFETY: this function's own contract (# Safety above) is the caller's.
    unsafe {
        // Loops, not closures, around the intrinsics (as `gemm::dots_avx512`): a closure LLVM
        // leaves out of line is compiled without this function's target features.
        let mut r = [_mm256_setzero_ps(); BLOCK];
        for (i, row) in r.iter_mut().enumerate() {
            *row = _mm256_loadu_ps(src.add(i * src_stride));
        }
        // Rows 2k and 2k + 1 interleaved: (a0 b0 a1 b1 | a4 b4 a5 b5) and the odd pairs.
        let (mut lo, mut hi) = ([_mm256_setzero_ps(); 4], [_mm256_setzero_ps(); 4]);
        for k in 0..4 {
            lo[k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
            hi[k] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
        }
        // Four rows' element j in each 128-bit half: columns (0, 4), (1, 5), (2, 6), (3, 7) of
        // rows 0–3 (`top`) and of rows 4–7 (`bottom`).
        let (mut top, mut bottom) = ([_mm256_setzero_ps(); 4], [_mm256_setzero_ps(); 4]);
        for (quads, k) in [(&mut top, 0), (&mut bottom, 2)] {
            *quads = [
                _mm256_shuffle_ps::<0x44>(lo[k], lo[k + 1]),
                _mm256_shuffle_ps::<0xEE>(lo[k], lo[k + 1]),
                _mm256_shuffle_ps::<0x44>(hi[k], hi[k + 1]),
                _mm256_shuffle_ps::<0xEE>(hi[k], hi[k + 1]),
            ];
        }
        for j in 0..4 {
            _mm256_storeu_ps(dst.add(j * dst_stride), _mm256_permute2f128_ps::<0x20>(top[j], bottom[j]));
            _mm256_storeu_ps(dst.add((j + 4) * dst_stride), _mm256_permute2f128_ps::<0x31>(top[j], bottom[j]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size around the block's (whole blocks, tails of rows, of columns, of both, fewer
    /// than a block), with strides past the rows, against the definition; values of `dst`
    /// outside the transpose are left alone.
    #[test]
    fn transposes_match_the_definition() {
        for (rows, cols) in [(8, 8), (16, 24), (13, 9), (3, 21), (8, 1), (1, 8), (7, 7), (17, 40), (0, 5)] {
            let (src_stride, dst_stride) = (cols + 3, rows + 2);
            let src: Vec<f32> = (0..rows * src_stride).map(|v| v as f32).collect();
            let mut dst = vec![MaybeUninit::new(-1.0f32); cols * dst_stride];
            transpose(&src, [rows, cols], src_stride, &mut dst, dst_stride);
            for (k, v) in dst.iter().enumerate() {
                // SAFETY: every slot was made with a value.
                let v = unsafe { v.assume_init() };
                let (j, i) = (k / dst_stride, k % dst_stride);
                let want = if i < rows { src[i * src_stride + j] } else { -1.0 };
                assert_eq!(v, want, "{rows}×{cols}: dst[{j}][{i}]");
            }
        }
    }
}
