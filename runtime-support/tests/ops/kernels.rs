//! The flex kernels of `burn_onnx::ops` against Burn's own ops on the same inputs: random
//! values, odd sizes, asymmetric padding, dilation, strided views and shared buffers.

use burn::tensor::{activation, Device, Int, Tensor, TensorData};
use burn_onnx::ops;

/// Deterministic values in [-scale, scale) (a 64-bit LCG: no extra dependency).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

fn tensor<const D: usize>(shape: [usize; D], seed: u64, scale: f32) -> Tensor<D> {
    let n = shape.iter().product();
    Tensor::from_data(TensorData::new(values(n, seed, scale), shape), &Device::flex())
}

fn assert_close<const D: usize>(ours: Tensor<D>, burn: Tensor<D>, tolerance: f32, what: &str) {
    assert_eq!(ours.dims(), burn.dims(), "{what}: shape");
    let (a, b) = (ours.into_data().try_to_vec::<f32>().unwrap(), burn.into_data().try_to_vec::<f32>().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let ok = (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= tolerance * (1.0 + y.abs());
        assert!(ok, "{what}: element {i}: ours {x}, burn {y}");
    }
}

/// A pooling window over an `h × w` plane: `(h, w, kernel, strides, pads, dilations)`.
type PoolCase = (usize, usize, [usize; 2], [usize; 2], [(usize, usize); 2], [usize; 2]);

/// Odd sizes, strides, asymmetric padding and the given dilations: every combination where a
/// window fits and no pad reaches a whole window.
fn pool_cases(dilations: &[[usize; 2]]) -> Vec<PoolCase> {
    let mut cases = vec![];
    for (h, w) in [(1, 1), (5, 7), (8, 8), (13, 6)] {
        for kernel in [[1, 1], [2, 2], [3, 3], [2, 3]] {
            for strides in [[1, 1], [2, 2], [1, 3]] {
                for pads in [[(0, 0), (0, 0)], [(1, 1), (1, 1)], [(0, 1), (1, 0)]] {
                    for &dilations in dilations {
                        let fits = (0..2).all(|a| {
                            let size = [h, w][a] + pads[a].0 + pads[a].1;
                            size > dilations[a] * (kernel[a] - 1) && pads[a].0.max(pads[a].1) < kernel[a]
                        });
                        if fits {
                            cases.push((h, w, kernel, strides, pads, dilations));
                        }
                    }
                }
            }
        }
    }
    cases
}

/// Floor and ceil mode (ceil: the end padding widened to the windows rounding up brings in).
#[test]
fn max_pool2d_matches_burn_on_odd_sizes_padding_strides_and_dilations() {
    for (seed, (h, w, kernel, strides, pads, dilations)) in pool_cases(&[[1, 1], [2, 1]]).into_iter().enumerate() {
        for ceil in [false, true] {
            let x = tensor([2, 3, h, w], seed as u64 + 1, 4.0);
            let ours = ops::max_pool2d(x.clone(), kernel, strides, pads, dilations, ceil);
            let burn = burn::tensor::module::max_pool2d(
                x,
                burn::tensor::ops::MaxPoolOptions::new(kernel)
                    .with_stride(strides)
                    .with_padding_pairs(pads)
                    .with_dilation(dilations)
                    .with_ceil_mode(ceil),
            );
            let what =
                format!("{h}x{w} kernel {kernel:?} strides {strides:?} pads {pads:?} dil {dilations:?} ceil {ceil}");
            assert_close(ours, burn, 0.0, &what);
        }
    }
}

/// NaN wins a window wherever it stands in it, infinities and signed zeros as Burn's.
#[test]
fn max_pool2d_propagates_nan_as_burn() {
    let values = [f32::NAN, 1.0, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, 3.0, f32::NAN, -2.0];
    let x = Tensor::<4>::from_data(
        TensorData::new((0..2 * 81).map(|i| values[(i * 7 + i / 9) % 9]).collect::<Vec<f32>>(), [1, 2, 9, 9]),
        &Device::flex(),
    );
    for (strides, pads) in [([1, 1], [(0, 0), (0, 0)]), ([2, 2], [(1, 1), (1, 1)]), ([2, 1], [(0, 1), (1, 0)])] {
        let ours = ops::max_pool2d(x.clone(), [3, 3], strides, pads, [1, 1], false);
        let burn = burn::tensor::module::max_pool2d(
            x.clone(),
            burn::tensor::ops::MaxPoolOptions::new([3, 3]).with_stride(strides).with_padding_pairs(pads),
        );
        assert_close(ours, burn, 0.0, &format!("strides {strides:?} pads {pads:?}"));
    }
}

#[test]
fn avg_pool2d_matches_burn_with_and_without_the_padding_counted() {
    let mut seed = 500;
    for (h, w, kernel, strides, pads, _) in pool_cases(&[[1, 1]]) {
        for count_include_pad in [true, false] {
            seed += 1;
            let x = tensor([2, 3, h, w], seed, 4.0);
            let ours = ops::avg_pool2d(x.clone(), kernel, strides, pads, count_include_pad);
            let burn = burn::tensor::module::avg_pool2d(
                x,
                burn::tensor::ops::AvgPoolOptions::new(kernel)
                    .with_stride(strides)
                    .with_padding_pairs(pads)
                    .with_count_include_pad(count_include_pad),
            );
            let what =
                format!("{h}x{w} kernel {kernel:?} strides {strides:?} pads {pads:?} counted {count_include_pad}");
            assert_close(ours, burn, 1e-6, &what);
        }
    }
}

#[test]
fn max_pool2d_of_a_strided_view_matches_burn() {
    let x = tensor([1, 2, 6, 9], 7, 1.0).swap_dims(2, 3);
    let ours = ops::max_pool2d(x.clone(), [2, 2], [2, 2], [(0, 0), (0, 0)], [1, 1], false);
    let burn = burn::tensor::module::max_pool2d(x, burn::tensor::ops::MaxPoolOptions::new([2, 2]).with_stride([2, 2]));
    assert_close(ours, burn, 0.0, "transposed input");
}

#[test]
fn sigmoid_and_silu_match_burn_within_the_approximation() {
    for (n, scale) in [(1, 3.0), (17, 10.0), (100_003, 30.0), (4096, 100.0)] {
        let x = tensor([n], n as u64, scale);
        assert_close(ops::sigmoid(x.clone()), activation::sigmoid(x.clone()), 1e-6, "sigmoid");
        // ONNX Runtime's rational sigmoid is within 2e-7 of the exact one; SiLU scales that by |x|.
        assert_close(ops::silu(x.clone()), activation::silu(x), 2e-7 * scale, "silu");
    }
    let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 88.7, -104.0];
    let special = Tensor::<1>::from_data(special, &Device::flex());
    assert_close(ops::sigmoid(special.clone()), activation::sigmoid(special.clone()), 1e-6, "sigmoid specials");
    let silu = ops::silu(special).into_data().try_to_vec::<f32>().unwrap();
    assert!(silu[0].is_nan() && silu[1] == f32::INFINITY && silu[3] == 0.0, "silu specials: {silu:?}");
}

#[test]
fn a_shared_buffer_is_not_overwritten_and_views_are_mapped() {
    let x = tensor([3, 5], 3, 5.0);
    let before = x.clone().into_data();
    let kept = x.clone();
    let y = ops::silu(x);
    assert_eq!(kept.into_data(), before, "the other handle still sees the input");
    assert_close(y, activation::silu(tensor([3, 5], 3, 5.0)), 1e-6, "silu of a shared buffer");
    let view = tensor([4, 6], 9, 5.0).transpose();
    assert_close(ops::sigmoid(view.clone()), activation::sigmoid(view), 1e-6, "sigmoid of a transposed view");
}

#[test]
fn conv2d_matches_burn_on_kernels_strides_padding_dilations_groups_and_block_edges() {
    use burn::tensor::ops::ConvOptions;
    /// x `[n, c, h, w]`, weight `[co, ci / groups, kh, kw]`, strides, pads, dilations, groups,
    /// bias.
    type Case = ([usize; 4], [usize; 4], [usize; 2], [(usize, usize); 2], [usize; 2], usize, bool);
    let cases: &[Case] = &[
        ([1, 3, 9, 11], [5, 3, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1, true),
        ([2, 4, 8, 8], [7, 4, 1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 1, true),
        ([1, 4, 8, 8], [6, 4, 1, 1], [2, 2], [(0, 0), (0, 0)], [1, 1], 1, false),
        ([1, 2, 13, 10], [3, 2, 3, 2], [2, 1], [(0, 1), (2, 0)], [1, 2], 1, true),
        ([1, 3, 23, 29], [13, 3, 7, 7], [2, 2], [(3, 3), (3, 3)], [1, 1], 1, true),
        ([1, 40, 12, 12], [17, 40, 3, 3], [1, 1], [(1, 1), (1, 1)], [2, 2], 1, true),
        ([1, 8, 30, 40], [20, 8, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1, false),
        // On the stride phases' grid, B read in place: more terms than a depth block, a
        // partial last panel; fewer than 8 grid columns (dot products).
        ([1, 40, 10, 12], [24, 40, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1, true),
        ([1, 16, 1, 6], [4, 16, 1, 2], [1, 1], [(0, 0), (0, 0)], [1, 1], 1, true),
        // Three images, each enough work for a job of its own on the pool.
        ([3, 16, 20, 20], [24, 16, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 1, true),
        // Column-vector images (magika's 1-D convolution along H): computed transposed.
        ([1, 6, 31, 1], [9, 6, 5, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 1, true),
        ([2, 4, 40, 1], [7, 4, 3, 1], [2, 1], [(2, 1), (0, 0)], [3, 1], 1, false),
        ([1, 3, 12, 1], [5, 3, 3, 1], [1, 1], [(1, 1), (1, 1)], [1, 1], 1, true),
        // Fewer than 8 output pixels (dot products over im2col columns): padding, strides,
        // dilation, a transposed 1-D one.
        ([1, 5, 3, 4], [7, 5, 3, 3], [2, 2], [(1, 1), (1, 0)], [1, 1], 1, true),
        ([2, 3, 5, 1], [4, 3, 2, 1], [3, 1], [(0, 1), (0, 0)], [2, 1], 1, false),
        ([1, 1, 1, 40], [6, 1, 1, 16], [1, 8], [(0, 0), (0, 0)], [1, 1], 1, true),
        // Taps that never reach the image cut from the kernel: dilation past the map (only the
        // centre tap left, then a pointwise product), a window cut to its last row, a grouped
        // one cut on both sides of one axis; one whose cut would start inside the image (kept
        // whole).
        ([1, 6, 4, 4], [5, 6, 3, 3], [1, 1], [(12, 12), (12, 12)], [12, 12], 1, true),
        ([2, 3, 3, 6], [4, 3, 3, 3], [1, 1], [(6, 0), (1, 1)], [3, 1], 1, true),
        ([1, 4, 3, 20], [6, 2, 5, 3], [2, 1], [(4, 4), (2, 2)], [2, 2], 2, false),
        ([1, 2, 5, 5], [3, 2, 3, 3], [1, 1], [(1, 1), (1, 1)], [3, 3], 1, true),
        // Grouped, not depthwise: a product per image and group (the group's weights, input
        // and output channels), pointwise, 3×3 with strides and padding (on the phase grid and
        // as im2col), more outputs than inputs a group, groups enough work for jobs apart.
        ([2, 12, 7, 9], [8, 3, 1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 4, true),
        ([1, 12, 11, 10], [6, 4, 3, 3], [2, 2], [(1, 1), (1, 0)], [1, 1], 3, true),
        ([1, 32, 9, 9], [8, 8, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 4, false),
        ([2, 6, 8, 7], [12, 2, 3, 3], [1, 2], [(0, 1), (1, 1)], [2, 1], 3, true),
        ([1, 96, 28, 28], [96, 32, 1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 3, true),
        // Depthwise: strides 1 to 3, dilation, uneven padding, 5×5, a channel multiplier of 2,
        // planes smaller and larger than a register block, a 1×1 output.
        ([1, 8, 14, 14], [8, 1, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 8, true),
        ([2, 6, 15, 13], [6, 1, 3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], 6, true),
        ([1, 5, 21, 30], [5, 1, 5, 5], [1, 1], [(2, 2), (2, 2)], [1, 1], 5, false),
        ([1, 4, 19, 17], [4, 1, 5, 5], [2, 2], [(2, 2), (2, 2)], [1, 1], 4, true),
        ([1, 3, 11, 12], [6, 1, 3, 3], [1, 2], [(0, 2), (1, 0)], [2, 1], 3, true),
        ([1, 4, 9, 10], [4, 1, 3, 2], [3, 3], [(1, 0), (0, 1)], [1, 2], 4, true),
        ([1, 2, 3, 3], [2, 1, 3, 3], [1, 1], [(0, 0), (0, 0)], [1, 1], 2, true),
        // Small planes, channels last: a last partial vector, two images, a block of 32
        // channels and a vector past it, stride 2 on a plane wider than 16 columns.
        ([2, 13, 8, 8], [13, 1, 3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], 13, true),
        ([1, 41, 3, 3], [41, 1, 3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], 41, true),
        ([1, 9, 16, 19], [9, 1, 3, 3], [2, 2], [(1, 1), (0, 1)], [1, 1], 9, true),
        ([1, 20, 4, 4], [20, 1, 5, 5], [1, 1], [(2, 2), (2, 2)], [1, 1], 20, false),
        ([2, 3, 1, 1], [3, 1, 1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], 3, false),
    ];
    for (seed, &(xs, ws, strides, pads, dilations, groups, with_bias)) in cases.iter().enumerate() {
        let x = tensor(xs, 100 + seed as u64, 1.0);
        let w = tensor(ws, 200 + seed as u64, 1.0);
        let b = with_bias.then(|| tensor([ws[0]], 300 + seed as u64, 1.0));
        let options = ConvOptions::new_with_padding(strides, pads, dilations, groups);
        let ours = ops::conv2d(x.clone(), w.clone(), b.clone(), options.clone(), ops::ConvActivation::None);
        let burn = burn::tensor::module::conv2d(x.clone(), w.clone(), b.clone(), options.clone());
        let case = format!("conv case {seed}: x {xs:?} w {ws:?} groups {groups}");
        assert_close(ours, burn.clone(), 1e-5, &case);
        // A residual sum, then the activation, fused (the ResNet block's Add and Relu).
        let residual = tensor(burn.dims(), 350 + seed as u64, 1.0);
        let fused = ops::conv2d_residual(x, w, b, options, residual.clone(), ops::ConvActivation::Relu);
        assert_close(fused, activation::relu(burn + residual), 1e-5, &format!("{case}, residual"));
    }
}

/// 3-D convolutions, as 2-D ones over the planes under each output depth, against Burn's
/// `conv3d` (which pads both sides of an axis alike: per-side pads are compared against Burn's
/// on the input padded by hand): depth padding, strides and dilation, 1×1×1 kernels, several
/// images and output depths on the pool, grouped ones (Burn's), a fused residual and Relu.
#[test]
fn conv3d_matches_burn_on_depth_windows_strides_padding_and_dilations() {
    use burn::tensor::ops::ConvOptions;
    /// x `[n, c, d, h, w]`, weight `[co, ci / groups, kd, kh, kw]`, strides, pads, dilations,
    /// groups, bias.
    type Case = ([usize; 5], [usize; 5], [usize; 3], [(usize, usize); 3], [usize; 3], usize, bool);
    let cases: &[Case] = &[
        ([1, 3, 4, 9, 9], [8, 3, 3, 3, 3], [1, 1, 1], [(1, 1), (1, 1), (1, 1)], [1, 1, 1], 1, true),
        ([2, 3, 4, 16, 16], [16, 3, 3, 7, 7], [1, 2, 2], [(1, 1), (3, 3), (3, 3)], [1, 1, 1], 1, true),
        ([1, 4, 7, 8, 6], [6, 4, 3, 3, 3], [2, 2, 2], [(1, 1), (1, 1), (1, 1)], [1, 1, 1], 1, false),
        ([2, 8, 4, 6, 6], [5, 8, 1, 1, 1], [2, 2, 2], [(0, 0), (0, 0), (0, 0)], [1, 1, 1], 1, true),
        ([1, 5, 3, 5, 5], [7, 5, 1, 1, 1], [1, 1, 1], [(0, 0), (0, 0), (0, 0)], [1, 1, 1], 1, false),
        ([1, 2, 9, 7, 8], [3, 2, 3, 2, 3], [2, 1, 2], [(0, 1), (1, 0), (2, 1)], [2, 2, 1], 1, true),
        ([2, 16, 6, 10, 10], [24, 16, 3, 3, 3], [1, 1, 1], [(1, 1), (1, 1), (1, 1)], [1, 1, 1], 1, true),
        // Grouped: Burn's.
        ([1, 6, 4, 5, 5], [4, 3, 3, 3, 3], [1, 1, 1], [(1, 1), (1, 1), (1, 1)], [1, 1, 1], 2, true),
    ];
    for (seed, &(xs, ws, strides, pads, dilations, groups, with_bias)) in cases.iter().enumerate() {
        let x = tensor(xs, 900 + seed as u64, 1.0);
        let w = tensor(ws, 920 + seed as u64, 1.0);
        let b = with_bias.then(|| tensor([ws[0]], 940 + seed as u64, 1.0));
        let options = ConvOptions::new_with_padding(strides, pads, dilations, groups);
        let ours = ops::conv3d(x.clone(), w.clone(), b.clone(), options.clone(), ops::ConvActivation::None);
        // Burn's, the excess of one side's padding over the other's padded on by hand.
        let excess = pads.map(|(begin, end)| (begin - begin.min(end), end - begin.min(end)));
        let [(d0, d1), (h0, h1), (w0, w1)] = excess;
        let padded = Tensor::<5>::zeros([xs[0], xs[1], xs[2] + d0 + d1, xs[3] + h0 + h1, xs[4] + w0 + w1], &x.device())
            .slice_assign([0..xs[0], 0..xs[1], d0..d0 + xs[2], h0..h0 + xs[3], w0..w0 + xs[4]], x.clone());
        let common = pads.map(|(begin, end)| (begin.min(end), begin.min(end)));
        let burn_options = ConvOptions::new_with_padding(strides, common, dilations, groups);
        let burn = burn::tensor::module::conv3d(padded, w.clone(), b.clone(), burn_options);
        let case = format!("conv3d case {seed}: x {xs:?} w {ws:?} pads {pads:?} groups {groups}");
        assert_close(ours, burn.clone(), 1e-5, &case);
        let residual = tensor(burn.dims(), 960 + seed as u64, 1.0);
        let fused = ops::conv3d_residual(x, w, b, options, residual.clone(), ops::ConvActivation::Relu);
        assert_close(fused, activation::relu(burn + residual), 1e-5, &format!("{case}, residual"));
    }
}

/// `a · bᵀ` with B's rows read in place (few rows of A) against Burn's matmul of the transposed
/// view: one row and several, depths under and over a dot-product block, and Burn's own path
/// from 16 rows on.
#[test]
fn matmul_transposed_matches_burn() {
    for (seed, &(m, k, n)) in [(1, 9, 7), (1, 300, 33), (3, 130, 17), (15, 64, 40), (20, 50, 9)].iter().enumerate() {
        let a = tensor([m, k], 980 + seed as u64, 1.0);
        let b = tensor([n, k], 990 + seed as u64, 1.0);
        let ours = ops::matmul_transposed(a.clone(), b.clone());
        assert_close(ours, a.matmul(b.transpose()), 1e-5, &format!("matmul_transposed {m}×{k} · ({n}×{k})ᵀ"));
    }
}

#[test]
fn a_residual_of_another_shape_broadcasts_as_burns_add() {
    use burn::tensor::ops::ConvOptions;
    let options = ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], 1);
    let (x, w, r) = (tensor([1, 3, 6, 6], 860, 1.0), tensor([4, 3, 3, 3], 861, 1.0), tensor([1, 4, 1, 6], 862, 1.0));
    let plain = burn::tensor::module::conv2d(x.clone(), w.clone(), None, options.clone());
    let fused = ops::conv2d_residual(x, w, None, options, r.clone(), ops::ConvActivation::None);
    assert_close(fused, plain + r, 1e-5, "broadcast residual");
}

#[test]
fn conv2d_of_a_strided_view_matches_burn() {
    use burn::tensor::ops::ConvOptions;
    // A transposed input (magika's Conv reads one): copied into row-major order first.
    let (x, w) = (tensor([1, 4, 9, 3], 850, 1.0).swap_dims(1, 2), tensor([5, 9, 3, 1], 851, 1.0));
    let options = ConvOptions::new_with_padding([1, 1], [(1, 1), (0, 0)], [1, 1], 1);
    let ours = ops::conv2d(x.clone(), w.clone(), None, options.clone(), ops::ConvActivation::None);
    assert_close(ours, burn::tensor::module::conv2d(x, w, None, options), 1e-5, "transposed input");
}

#[test]
fn conv1d_matches_burn() {
    use burn::tensor::ops::ConvOptions;
    for (seed, (len, k, stride, pads, dilation)) in
        [(20, 3, 1, (1, 1), 1), (33, 5, 2, (0, 3), 2)].into_iter().enumerate()
    {
        let x = tensor([2, 6, len], 400 + seed as u64, 1.0);
        let w = tensor([9, 6, k], 500 + seed as u64, 1.0);
        let b = Some(tensor([9], 600 + seed as u64, 1.0));
        let options = ConvOptions::new_with_padding([stride], [pads], [dilation], 1);
        let ours = ops::conv1d(x.clone(), w.clone(), b.clone(), options.clone(), ops::ConvActivation::None);
        assert_close(ours, burn::tensor::module::conv1d(x, w, b, options), 1e-5, "conv1d");
    }
}

#[test]
fn fused_activations_match_burns_after_the_convolution() {
    use burn::tensor::ops::ConvOptions;
    let options = ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], 1);
    let (x, w, b) = (tensor([1, 5, 9, 9], 700, 2.0), tensor([6, 5, 3, 3], 701, 1.0), Some(tensor([6], 702, 1.0)));
    let plain = burn::tensor::module::conv2d(x.clone(), w.clone(), b.clone(), options.clone());
    let expected = [
        (ops::ConvActivation::Relu, activation::relu(plain.clone())),
        (ops::ConvActivation::LeakyRelu(0.1), activation::leaky_relu(plain.clone(), 0.1)),
        (ops::ConvActivation::Sigmoid, activation::sigmoid(plain.clone())),
        (ops::ConvActivation::Silu, activation::silu(plain.clone())),
        (ops::ConvActivation::HardSigmoid(0.3, 0.4), plain.clone().mul_scalar(0.3).add_scalar(0.4).clamp(0.0, 1.0)),
        (ops::ConvActivation::Clamp(0.0, 6.0), plain.clone().clamp_min(0.0).clamp_max(6.0)),
        (ops::ConvActivation::Clamp(-1.5, 0.5), plain.clone().clamp_min(-1.5).clamp_max(0.5)),
        (
            ops::ConvActivation::HardSwish,
            plain.clone().mul(plain.mul_scalar(1.0 / 6.0).add_scalar(0.5).clamp(0.0, 1.0)),
        ),
    ];
    for (act, want) in expected {
        let ours = ops::conv2d(x.clone(), w.clone(), b.clone(), options.clone(), act);
        assert_close(ours, want, 1e-5, &format!("{act:?}"));
    }
}

#[test]
fn conv2d_with_taps_entirely_in_the_padding_matches_burn() {
    use burn::tensor::ops::ConvOptions;
    // Width 4 with 3 columns of padding on each side and a 5-wide kernel dilated by 2: some
    // taps never touch the image for whole output rows.
    let (x, w) = (tensor([1, 2, 3, 4], 800, 1.0), tensor([3, 2, 3, 5], 801, 1.0));
    let options = ConvOptions::new_with_padding([1, 2], [(2, 1), (3, 3)], [1, 2], 1);
    let ours = ops::conv2d(x.clone(), w.clone(), None, options.clone(), ops::ConvActivation::None);
    assert_close(ours, burn::tensor::module::conv2d(x, w, None, options), 1e-5, "padding-only taps");
}

#[test]
fn the_lstm_fast_path_matches_the_general_recurrence() {
    // States shorter than a vector, with a tail, and a whole number of vectors.
    for hidden in [4, 21, 64] {
        for quantized in [false, true] {
            for batch_first in [false, true] {
                lstm_fast_path_matches_the_general_recurrence(hidden, quantized, batch_first);
            }
        }
    }
}

/// `quantized`: DynamicQuantizeLSTM (`recurrent_quantized`: integer weights with column
/// scales, the input and each step's state quantized to uint8), whose kernel runs every
/// direction at once.
fn lstm_fast_path_matches_the_general_recurrence(hidden: usize, quantized: bool, batch_first: bool) {
    use ops::{Activation, Cell, RecurrentOptions};
    let (steps, batch, input) = (5, 2, 3);
    let time_major = |t: Tensor<3>| if batch_first { t.swap_dims(0, 1) } else { t };
    let x = time_major(tensor([steps, batch, input], 900, 1.0));
    let (h0, c0) = (tensor([2, batch, hidden], 904, 0.5), tensor([2, batch, hidden], 905, 0.5));
    let (h0, c0) = (time_major(h0), time_major(c0));
    let b = tensor([2, 8 * hidden], 903, 0.5);
    // Quantized weights are integers less a zero point, each column with a scale.
    let weights = |shape: [usize; 3], seed| match quantized {
        true => tensor(shape, seed, 127.0).round(),
        false => tensor(shape, seed, 0.5),
    };
    let (w, r) = (weights([2, 4 * hidden, input], 901), weights([2, 4 * hidden, hidden], 902));
    let scales = |seed| tensor([2, 4 * hidden], seed, 0.004).abs().add_scalar(0.001);
    let (w_scales, r_scales) = (scales(906), scales(907));
    let options = |clip| RecurrentOptions {
        cell: Cell::Lstm { input_forget: false },
        hidden,
        directions: vec![false, true],
        activations: [Activation::Sigmoid, Activation::Tanh, Activation::Tanh].repeat(2),
        clip,
        batch_first,
    };
    let run = |clip| {
        let (w, r, b, h0, c0) = (w.clone(), r.clone(), Some(b.clone()), Some(h0.clone()), Some(c0.clone()));
        match quantized {
            true => {
                let scales = (w_scales.clone(), r_scales.clone());
                ops::recurrent_quantized(x.clone(), w, r, scales, b, None, h0, c0, None, &options(clip))
            }
            false => ops::recurrent(x.clone(), w, r, b, None, h0, c0, None, &options(clip)),
        }
    };
    // A clip no value reaches takes the general path.
    let ((y, h, c), (y_ref, h_ref, c_ref)) = (run(None), run(Some(1e30)));
    let what = |name| format!("{name}, hidden {hidden}, quantized {quantized}, batch first {batch_first}");
    assert_close(y, y_ref, 1e-5, &what("Y"));
    assert_close(h, h_ref, 1e-5, &what("Y_h"));
    assert_close(c, c_ref, 1e-5, &what("Y_c"));
}

#[test]
fn linear_matches_burns_layer_on_ranks_row_counts_and_wide_outputs() {
    use burn::module::Param;
    // Row counts on both sides of the in-place-B threshold and of the few-row product (split
    // across threads from 2^20 multiply-adds); widths past
    // one column block (the bias offset of later blocks) and not a multiple of the register
    // tile; depths not a multiple of four.
    for (seed, (lead, k, n, with_bias)) in [
        (vec![1], 7, 5, true),
        (vec![1], 1001, 2050, true),
        (vec![4], 384, 1536, false),
        (vec![15], 130, 70, true),
        // More rows than the skinny product and fewer than `PACKED_WEIGHT_MAX_ROWS`: B packed
        // once (blocks of whole panels and a last, partial one; depths past one depth block),
        // or, narrower than a panel, dot products.
        (vec![8], 384, 1536, true),
        (vec![6], 40, 5000, false),
        (vec![6], 40, 10, true),
        (vec![3, 8], 384, 600, true),
        (vec![50], 33, 1030, false),
        (vec![16], 300, 4100, true),
        (vec![2, 9], 600, 200, true),
        (vec![2, 2, 31], 16, 17, true),
    ]
    .into_iter()
    .enumerate()
    {
        let seed = 1300 + 10 * seed as u64;
        let mut layer = burn::nn::LinearConfig::new(k, n).with_bias(with_bias).init(&Device::flex());
        layer.weight = Param::from_tensor(tensor([k, n], seed, 1.0));
        layer.bias = with_bias.then(|| Param::from_tensor(tensor([n], seed + 1, 1.0)));
        let what = format!("linear {lead:?} x {k} -> {n}");
        match lead.len() {
            1 => {
                let x = tensor([lead[0], k], seed + 2, 1.0);
                assert_close(ops::linear(&layer, x.clone()), layer.forward(x), 1e-5, &what);
            }
            2 => {
                let x = tensor([lead[0], lead[1], k], seed + 2, 1.0);
                assert_close(ops::linear(&layer, x.clone()), layer.forward(x), 1e-5, &what);
            }
            _ => {
                let x = tensor([lead[0], lead[1], lead[2], k], seed + 2, 1.0);
                assert_close(ops::linear(&layer, x.clone()), layer.forward(x), 1e-5, &what);
            }
        }
    }
    // A layer whose weight changes between calls (fine-tuning) gives the new weight's product,
    // not the one packed for the old.
    let mut layer = burn::nn::LinearConfig::new(300, 4100).init(&Device::flex());
    let x = tensor([20, 300], 1390, 1.0);
    for seed in [1391, 1392] {
        layer.weight = Param::from_tensor(tensor([300, 4100], seed, 1.0));
        assert_close(ops::linear(&layer, x.clone()), layer.forward(x.clone()), 1e-5, "a new weight");
    }
    // A transposed (strided) input takes Burn's layer and gives the same result.
    let layer = burn::nn::LinearConfig::new(6, 4).init(&Device::flex());
    let x = tensor([6, 5], 1400, 1.0).transpose();
    assert_close(ops::linear(&layer, x.clone()), layer.forward(x), 1e-5, "transposed input");
}

#[test]
fn tanh_and_exp_match_burn_within_float_rounding() {
    for (n, scale) in [(1, 0.5), (1000, 3.0), (100_003, 20.0)] {
        let x = tensor([n], 1500 + n as u64, scale);
        assert_close(ops::tanh(x.clone()), x.clone().tanh(), 1e-6, "tanh");
        assert_close(ops::exp(x.clone()), x.exp(), 1e-6, "exp");
    }
}

#[test]
fn erf_and_gelu_match_burn_within_float_rounding() {
    for (n, scale) in [(1, 0.5), (1000, 3.0), (100_003, 6.0)] {
        let x = tensor([n], 1600 + n as u64, scale);
        assert_close(ops::erf(x.clone()), x.clone().erf(), 3e-7, "erf");
        assert_close(ops::gelu(x.clone()), activation::gelu(x), 1e-6, "gelu");
    }
}

/// ONNX's LRN written with Burn's ops, element by element over the channel window.
fn lrn_reference<const D: usize>(x: Tensor<D>, size: usize, alpha: f64, beta: f64, bias: f64) -> Tensor<D> {
    let channels = x.dims()[1];
    let squares = x.clone().square();
    let window = |c: usize| c.saturating_sub((size - 1) / 2)..(c + size / 2 + 1).min(channels);
    let sums: Vec<Tensor<D>> =
        (0..channels).map(|c| squares.clone().narrow(1, window(c).start, window(c).len()).sum_dim(1)).collect();
    x.div(Tensor::cat(sums, 1).mul_scalar(alpha / size as f64).add_scalar(bias).powf_scalar(beta))
}

#[test]
fn local_response_norm_matches_the_onnx_formula() {
    for (seed, (size, alpha, beta, bias)) in
        [(5, 1e-4, 0.75, 1.0), (3, 0.5, 0.6, 2.0), (1, 2.0, 1.5, 0.5), (2, 1e-3, 0.75, 1.0), (7, 1.0, 0.3, 3.0)]
            .into_iter()
            .enumerate()
    {
        let seed = 900 + 10 * seed as u64;
        let x4 = tensor([2, 6, 9, 11], seed, 3.0);
        let ours = ops::local_response_norm(x4.clone(), size, alpha, beta, bias);
        assert_close(ours, lrn_reference(x4, size, alpha, beta, bias), 1e-5, &format!("LRN size {size}"));
        let x3 = tensor([1, 4, 70], seed + 1, 3.0);
        let ours = ops::local_response_norm(x3.clone(), size, alpha, beta, bias);
        assert_close(ours, lrn_reference(x3, size, alpha, beta, bias), 1e-5, &format!("LRN rank 3, size {size}"));
    }
    // Bases that are not positive normal floats (infinity, NaN, zero) take libm's powf.
    let x = Tensor::<4>::from_data(
        TensorData::new(vec![1e30, f32::NAN, 0.0, 2.0, f32::INFINITY, -3.0, 1e-20, 5.0], [1, 2, 2, 2]),
        &Device::flex(),
    );
    let ours = ops::local_response_norm(x.clone(), 2, 1.0, 0.75, 0.0);
    assert_close(ours, lrn_reference(x, 2, 1.0, 0.75, 0.0), 1e-5, "LRN at the edges of the float range");
}

#[test]
fn batch_norm_matches_burns_layer_then_the_activation() {
    use burn::module::{Param, RunningState};
    for (seed, dims) in [[2, 5, 7, 3], [1, 3, 1, 1], [1, 16, 9, 9]].into_iter().enumerate() {
        let seed = 900 + 10 * seed as u64;
        let c = dims[1];
        let mut layer = burn::nn::BatchNormConfig::new(c).with_epsilon(1e-3).init(&Device::flex());
        layer.gamma = Param::from_tensor(tensor([c], seed, 2.0));
        layer.beta = Param::from_tensor(tensor([c], seed + 1, 1.0));
        layer.running_mean = RunningState::new(tensor([c], seed + 2, 3.0));
        layer.running_var = RunningState::new(tensor([c], seed + 3, 1.0).abs().add_scalar(0.1));
        let x = tensor(dims, seed + 4, 4.0);
        for (act, burn) in [
            (ops::ConvActivation::None, layer.forward(x.clone())),
            (ops::ConvActivation::Relu, activation::relu(layer.forward(x.clone()))),
        ] {
            assert_close(ops::batch_norm(&layer, x.clone(), act), burn, 1e-5, &format!("{dims:?} {act:?}"));
        }
    }
}

/// Concatenation along every axis, of inputs of different sizes along it, a strided view among
/// them, and one large enough to be copied in several jobs (DenseNet's channel concatenation).
#[test]
fn cat_matches_burn_along_every_axis() {
    for dim in 0..4 {
        let shape = |size: usize| std::array::from_fn::<usize, 4, _>(|d| if d == dim { size } else { [2, 3, 4, 5][d] });
        let inputs = vec![tensor(shape(1), 1, 1.0), tensor(shape(3), 2, 1.0), tensor(shape(2), 3, 1.0)];
        assert_close(ops::cat(inputs.clone(), dim), Tensor::cat(inputs, dim), 0.0, &format!("axis {dim}"));
    }
    let view = tensor([2, 5, 4, 3], 4, 1.0).swap_dims(1, 3);
    let inputs = vec![tensor([2, 3, 4, 5], 5, 1.0), view];
    assert_close(ops::cat(inputs.clone(), 0), Tensor::cat(inputs, 0), 0.0, "a transposed view");
    let inputs = vec![tensor([1, 96, 56, 56], 6, 1.0), tensor([1, 32, 56, 56], 7, 1.0), tensor([1, 1, 56, 56], 8, 1.0)];
    assert_close(ops::cat(inputs.clone(), 1), Tensor::cat(inputs, 1), 0.0, "DenseNet's channels");
}

#[test]
fn attention_matches_burns_separate_ops_on_shapes_and_masks() {
    let reference = |q: Tensor<4>, key_t: Tensor<4>, v: Tensor<4>, mask: Option<Tensor<4>>, scale: f64| {
        let scores = q.matmul(key_t).mul_scalar(scale);
        let scores = match mask {
            Some(mask) => scores.clone().add(mask.expand(scores.dims())),
            None => scores,
        };
        activation::softmax(scores, 3).matmul(v)
    };
    // (batch, heads, queries, keys, head size, value size); the last ones split across heads.
    let shapes =
        [(1, 1, 1, 1, 1, 1), (2, 3, 5, 7, 8, 4), (1, 2, 33, 9, 24, 24), (2, 1, 17, 40, 3, 5), (2, 3, 64, 64, 8, 8)];
    for (seed, (b, h, lq, lk, d, dv)) in shapes.into_iter().enumerate() {
        let seed = 900 + 10 * seed as u64;
        let (q, key_t, v) = (
            tensor([b, h, lq, d], seed, 2.0),
            tensor([b, h, d, lk], seed + 1, 2.0),
            tensor([b, h, lk, dv], seed + 2, 1.0),
        );
        let masks = [
            None,
            Some(tensor([b, h, lq, lk], seed + 3, 3.0)),
            Some(tensor([1, 1, lq, lk], seed + 4, 3.0)),
            Some(tensor([b, 1, 1, lk], seed + 5, 3.0)),
        ];
        for mask in masks {
            let what = format!(
                "{b}x{h} heads, {lq} queries, {lk} keys, d {d}, dv {dv}, mask {:?}",
                mask.as_ref().map(|m| m.dims())
            );
            let ours = ops::scaled_dot_product_attention(q.clone(), key_t.clone(), v.clone(), mask.clone(), 0.37);
            assert_close(ours, reference(q.clone(), key_t.clone(), v.clone(), mask, 0.37), 1e-5, &what);
        }
    }
}

#[test]
fn attention_of_views_and_fully_masked_rows() {
    // Q a permuted view, as the generated code passes it.
    let q = tensor([1, 6, 2, 4], 950, 1.0).permute([0, 2, 1, 3]);
    let (key_t, v) = (tensor([1, 2, 4, 6], 951, 1.0), tensor([1, 2, 6, 3], 952, 1.0));
    let ours = ops::scaled_dot_product_attention(q.clone(), key_t.clone(), v.clone(), None, 0.5);
    let burn = activation::softmax(q.matmul(key_t.clone()).mul_scalar(0.5), 3).matmul(v.clone());
    assert_close(ours, burn, 1e-5, "a permuted Q");
    // Row 0 of every head masked out entirely: zeros (as Burn's attention kernel gives).
    let mut mask = vec![0.0f32; 6 * 6];
    mask[..6].fill(f32::NEG_INFINITY);
    let mask = Tensor::from_data(TensorData::new(mask, [1, 1, 6, 6]), &Device::flex());
    let q = tensor([1, 2, 6, 4], 953, 1.0);
    let out = ops::scaled_dot_product_attention(q, key_t, v, Some(mask), 0.5).into_data().try_to_vec::<f32>().unwrap();
    for head in out.chunks(6 * 3) {
        assert_eq!(&head[..3], &[0.0; 3], "a fully masked row");
        assert!(head[3..].iter().all(|v| v.is_finite() && *v != 0.0), "{head:?}");
    }
    // A masked key weighs exactly 0: its value, 1e38, must not leak into the output.
    let mut values = vec![1.0f32; 6 * 3];
    values[..3].fill(1e38);
    let v = Tensor::from_data(TensorData::new(values, [1, 1, 6, 3]), &Device::flex());
    let mut mask = vec![0.0f32; 6];
    mask[0] = f32::NEG_INFINITY;
    let mask = Tensor::from_data(TensorData::new(mask, [1, 1, 1, 6]), &Device::flex());
    let (q, key_t) = (tensor([1, 1, 4, 2], 954, 1.0), tensor([1, 1, 2, 6], 955, 1.0));
    let out = ops::scaled_dot_product_attention(q, key_t, v, Some(mask), 1.0).into_data().try_to_vec::<f32>().unwrap();
    assert!(out.iter().all(|&v| (v - 1.0).abs() < 1e-6), "{out:?}");
}

/// `ops::integer_conv2d` on 8-bit operands less their zero points at their extremes (±255, so
/// each product is ±255²) equals the convolution summed in 64-bit integers, on both sides of
/// the number of terms up to which it takes the f32 convolution (258 per output) and past it
/// (the integer product): a depthwise, two pointwise and a 3×3 convolution. Past 2^24 the sum
/// is the int32 one converted to f32, as ONNX Runtime converts it.
#[test]
fn integer_conv2d_is_exact_at_the_extremes_of_eight_bit_operands() {
    let device = Device::default();
    // (channels, groups, kernel): 9, 258, 259 and 576 terms per output.
    for (channels, groups, k) in [(4, 4, 3), (258, 1, 1), (259, 1, 1), (64, 1, 3)] {
        let (out_channels, size) = (if groups > 1 { groups } else { 4 }, 5);
        let x_shape = [1, channels, size, size];
        let w_shape = [out_channels, channels / groups, k, k];
        // Near the extremes, every product negative: the sums reach their largest magnitudes,
        // with low bits that an f32 sum past 2^24 would lose.
        let x: Vec<f32> = (0..x_shape.iter().product()).map(|i| (255 - i * 7 % 6) as f32).collect();
        let w: Vec<f32> = (0..w_shape.iter().product()).map(|i| -((255 - i * 11 % 5) as f32)).collect();
        let options = burn::tensor::ops::ConvOptions::new_with_padding([1, 1], [(1, 1), (1, 1)], [1, 1], groups);
        // The input as uint8 values with zero point 0: `x` itself.
        let quantized: Vec<i64> = x.iter().map(|&v| v as i64).collect();
        let ours = ops::integer_conv2d(
            Tensor::<4, Int>::from_data(TensorData::new(quantized, x_shape), &device),
            Some(Tensor::<1>::zeros([1], &device)),
            Tensor::<4>::from_data(TensorData::new(w.clone(), w_shape), &device),
            options,
        );
        let [_, _, oh, ow] = ours.dims();
        let ours = ours.into_data().try_to_vec::<f32>().expect("f32");
        let per_group = channels / groups;
        for o in 0..out_channels {
            let g = o / (out_channels / groups);
            for (oy, ox) in (0..oh).flat_map(|oy| (0..ow).map(move |ox| (oy, ox))) {
                let mut sum = 0i64;
                for (c, ky, kx) in
                    (0..per_group).flat_map(|c| (0..k).flat_map(move |ky| (0..k).map(move |kx| (c, ky, kx))))
                {
                    let (iy, ix) = ((oy + ky) as isize - 1, (ox + kx) as isize - 1);
                    if iy < 0 || ix < 0 || iy >= size as isize || ix >= size as isize {
                        continue;
                    }
                    let xv = x[((g * per_group + c) * size + iy as usize) * size + ix as usize] as i64;
                    sum += xv * w[((o * per_group + c) * k + ky) * k + kx] as i64;
                }
                assert_eq!(ours[(o * oh + oy) * ow + ox], sum as f32, "{channels} channels, {groups} groups, {k}x{k}");
            }
        }
    }
}

/// `ops::requantize` (one pass on flex) gives Burn's ops' answer: per-tensor, per-channel (dim 1)
/// and per-column (last dim) scales, halves that round to even, and sums past either end of
/// the output range (uint8 and int8).
#[test]
fn requantize_matches_burns_ops_on_ties_saturation_and_per_channel_scales() {
    let device = Device::default();
    let shape = [2, 3, 4, 5];
    // Integer sums whose products with the scales below land on halves and far outside 0..=255.
    let sums: Vec<f32> = (0..120).map(|i| ((i * 37) % 121) as f32 * if i % 3 == 0 { -9.0 } else { 5.0 }).collect();
    let acc = Tensor::<4>::from_data(TensorData::new(sums, shape), &device);
    let scales: [(&[f32], [usize; 4]); 3] =
        [(&[0.5], [1, 1, 1, 1]), (&[0.5, 0.25, 1.5], [1, 3, 1, 1]), (&[0.1, 0.5, 2.5, 0.3, 0.7], [1, 1, 1, 5])];
    for (values, scale_shape) in scales {
        let scale = Tensor::<4>::from_data(TensorData::new(values.to_vec(), scale_shape), &device);
        for (zero, range) in [(128.0, (0.0, 255.0)), (-3.0, (-128.0, 127.0))] {
            let zero = Tensor::<4>::from_data(TensorData::new(vec![zero], [1, 1, 1, 1]), &device);
            let ours = ops::requantize(acc.clone(), scale.clone(), zero.clone(), range);
            let burn = acc.clone().mul(scale.clone()).round().add(zero).clamp(range.0, range.1).int();
            assert_eq!(
                ours.into_data().convert::<i64>(),
                burn.into_data().convert::<i64>(),
                "scale {scale_shape:?} range {range:?}"
            );
        }
    }
}

/// `ops::dequantize_sums` (one pass on flex) gives each sum as int32, plus its bias wrapping as
/// ONNX Runtime's int32 Add does, as f32, times its scale: with and without a bias, per-tensor,
/// per-channel (dim 1) and per-column (last dim) scales and biases, biases that wrap past either
/// end of int32. (Computed here from that definition: Burn's int Add panics on overflow in
/// debug builds.)
#[test]
fn dequantize_sums_adds_the_bias_wrapping_and_scales_per_channel() {
    use burn::tensor::Int;
    let device = Device::default();
    let shape = [2, 3, 4, 5];
    let sums: Vec<f32> = (0..120).map(|i| ((i * 37) % 121) as f32 * if i % 3 == 0 { -9.0 } else { 5.0 }).collect();
    let acc = Tensor::<4>::from_data(TensorData::new(sums.clone(), shape), &device);
    let params: [(&[f32], &[i32], [usize; 4]); 3] = [
        (&[0.5], &[i32::MAX], [1, 1, 1, 1]),
        (&[0.5, 0.25, 1.5], &[7, -300, i32::MIN], [1, 3, 1, 1]),
        (&[0.1, 0.5, 2.5, 0.3, 0.7], &[1, 2, 3, 4, 5], [1, 1, 1, 5]),
    ];
    for (scales, biases, param_shape) in params {
        // The parameter index of element i: its channel (dim 1), its column, or the one value.
        let index = |i: usize| match scales.len() {
            1 => 0,
            3 => i / 20 % 3,
            _ => i % 5,
        };
        let scale = Tensor::<4>::from_data(TensorData::new(scales.to_vec(), param_shape), &device);
        let bias = Tensor::<4, Int>::from_data(TensorData::new(biases.to_vec(), param_shape), &device);
        for bias in [Some(bias), None] {
            let with_bias = bias.is_some();
            let ours = ops::dequantize_sums(acc.clone(), bias, scale.clone()).into_data().try_to_vec::<f32>().unwrap();
            for (i, (&ours, &sum)) in ours.iter().zip(&sums).enumerate() {
                let bias = if with_bias { biases[index(i)] } else { 0 };
                let expected = (sum as i32).wrapping_add(bias) as f32 * scales[index(i)];
                assert_eq!(ours, expected, "params {param_shape:?}, bias {with_bias}, element {i}");
            }
        }
    }
}

/// `ops::minus_zero_point` (one pass on flex for a single zero point) gives Burn's conversion and
/// subtraction, for a row-major tensor, a transposed view, and a zero point per row.
#[test]
fn minus_zero_point_matches_burns_ops() {
    let device = Device::default();
    let x = Tensor::<2, burn::tensor::Int>::from_data(
        TensorData::new((0..12).map(|i| i * 23 % 256).collect::<Vec<i32>>(), [3, 4]),
        &device,
    );
    let single = Tensor::<2>::from_data(TensorData::new(vec![128.0f32], [1, 1]), &device);
    let per_row = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, 100.0, 255.0], [3, 1]), &device);
    for (x, zero) in [(x.clone(), single.clone()), (x.clone().transpose(), single), (x.clone(), per_row)] {
        let ours = ops::minus_zero_point(x.clone(), zero.clone());
        assert_eq!(ours.into_data(), x.float().sub(zero).into_data());
    }
}

/// `mean_dims` against Burn's `mean_dim` axis by axis: over trailing axes (one pass per run,
/// runs shorter and longer than a vector, with a tail, enough runs for the pool), in any order
/// given, and over axes that are not trailing (Burn's own path); each axis kept as size 1.
#[test]
fn mean_dims_matches_burns_means_axis_by_axis() {
    let x = tensor([2, 3, 5, 7], 41, 1.0);
    for axes in [vec![2, 3], vec![3, 2], vec![3], vec![1, 2, 3], vec![1], vec![0, 2]] {
        let burn = axes.iter().fold(x.clone(), |y, &a| y.mean_dim(a));
        assert_close(ops::mean_dims(x.clone(), &axes), burn, 1e-6, &format!("axes {axes:?}"));
    }
    let many = tensor([64, 1280, 2, 2], 42, 1.0);
    let burn = many.clone().mean_dim(3).mean_dim(2);
    assert_close(ops::mean_dims(many, &[2, 3]), burn, 1e-6, "1280 planes of 2×2");
}
