//! Spatial transforms on images: AffineGrid and Col2Im.

use super::*;

/// ONNX `AffineGrid` (opset 20): `theta` `[N, S, S + 1]` (S = D - 2 spatial axes) applied to
/// the normalised coordinates of the spatial dims of `size` (`[N, C, spatial...]`), giving
/// `[N, spatial..., S]` whose last axis is (x, y, z): the last spatial axis's coordinate
/// first. A coordinate runs from -1 to 1 along its axis, over the centres of the end elements
/// with `align_corners`, else over their outer edges (the centres of `n` equal parts). An axis
/// of one element has coordinate 1 with `align_corners` and 0 without, as ONNX Runtime
/// computes it (Eigen's one-point `LinSpaced` is its upper end; ONNX's reference has none).
pub fn affine_grid<const D: usize>(theta: Tensor<3>, size: &[i64], align_corners: bool) -> Tensor<D> {
    let spatial: Vec<usize> = size[2..].iter().map(|&d| d.max(0) as usize).collect();
    let axes = spatial.len();
    let count = spatial.iter().try_fold(1usize, |p, &n| p.checked_mul(n));
    let count = count.unwrap_or_else(|| panic!("AffineGrid: size {size:?} has too many positions"));
    let coordinate = |i: usize, n: usize| -> f64 {
        match (n, align_corners) {
            (1, true) => 1.0,
            (_, true) => -1.0 + 2.0 * i as f64 / (n - 1) as f64,
            (_, false) => -1.0 + (2 * i + 1) as f64 / n as f64,
        }
    };
    // The homogeneous coordinates (x, y, z, 1) of every position, in row-major order.
    let mut base = Vec::with_capacity(count * (axes + 1));
    let mut position = vec![0.0; axes];
    for flat in 0..count {
        let mut rest = flat;
        for (axis, &n) in spatial.iter().enumerate().rev() {
            position[axes - 1 - axis] = coordinate(rest % n, n);
            rest /= n;
        }
        base.extend_from_slice(&position);
        base.push(1.0);
    }
    let (device, dtype, batch) = (theta.device(), theta.dtype(), theta.dims()[0]);
    let mut dims = [0; D];
    dims[0] = batch;
    dims[1..D - 1].copy_from_slice(&spatial);
    dims[D - 1] = axes;
    if count == 0 || batch == 0 {
        // Burn's reshape reads a 0 as 'keep this dim'.
        return Tensor::zeros(dims, (&device, dtype));
    }
    let base = Tensor::<2>::from_data(TensorData::new(base, [count, axes + 1]), (&device, dtype));
    // [N, count, S + 1] times [N, S + 1, S].
    let grid = base.unsqueeze::<3>().expand([batch, count, axes + 1]).matmul(theta.swap_dims(1, 2));
    grid.reshape(dims)
}

/// Col2Im's per-axis attributes: `pads` holds all begins, then all ends.
pub struct Col2ImWindow<'a> {
    pub strides: &'a [usize],
    pub dilations: &'a [usize],
    pub pads: &'a [usize],
}

/// ONNX `Col2Im`: columns `[N, C * prod(block), L]` summed into images `[N, C, image...]`
/// (`D` = 2 + the spatial rank). Column `l` is the block at the `l`-th sliding position (row
/// major) over the padded image, entry `c * prod(block) + k` its element `k` of channel `c`;
/// overlapping entries add up. One scatter-add into the flattened padded image, whose
/// positions are computed here, then the padding cropped.
pub fn col2im<const D: usize>(columns: Tensor<3>, image: &[i64], block: &[i64], window: Col2ImWindow) -> Tensor<D> {
    let [batch, rows, count] = columns.dims();
    let spatial = image.len();
    assert!(
        spatial + 2 == D && block.len() == spatial && image.iter().chain(block).all(|&d| d > 0),
        "Col2Im: image_shape {image:?} and block_shape {block:?} must give {} positive dims",
        D - 2
    );
    let (image, block) = (to_usizes(image), to_usizes(block));
    let padded: Vec<usize> = (0..spatial).map(|i| image[i] + window.pads[i] + window.pads[i + spatial]).collect();
    let blocks_along: Vec<usize> = (0..spatial)
        .map(|i| {
            let span = window.dilations[i] * (block[i] - 1) + 1;
            assert!(span <= padded[i], "Col2Im: block {block:?} does not fit the padded image {padded:?}");
            (padded[i] - span) / window.strides[i] + 1
        })
        .collect();
    let block_size: usize = block.iter().product();
    assert!(
        rows % block_size == 0 && blocks_along.iter().product::<usize>() == count,
        "Col2Im: columns [{batch}, {rows}, {count}] do not hold blocks {block:?} at {blocks_along:?} positions"
    );
    // The row-major coordinates of `index` in a grid of `dims`.
    let coordinates = |mut index: usize, dims: &[usize]| {
        let mut at = vec![0; dims.len()];
        for (a, &d) in at.iter_mut().zip(dims).rev() {
            *a = index % d;
            index /= d;
        }
        at
    };
    let mut positions = Vec::with_capacity(block_size * count);
    for k in 0..block_size {
        let offset = coordinates(k, &block);
        for l in 0..count {
            let start = coordinates(l, &blocks_along);
            let flat = (0..spatial)
                .fold(0, |flat, i| flat * padded[i] + start[i] * window.strides[i] + offset[i] * window.dilations[i]);
            positions.push(flat as i64);
        }
    }
    let channels = rows / block_size;
    let device = columns.device();
    let entries = block_size * count;
    let positions = Tensor::<1, Int>::from_data(TensorData::new(positions, [entries]), &device)
        .reshape([1, 1, entries])
        .expand([batch, channels, entries]);
    let pixels: usize = padded.iter().product();
    let summed = Tensor::<3>::zeros([batch, channels, pixels], (&device, columns.dtype())).scatter(
        2,
        positions,
        columns.reshape([batch, channels, entries]),
        burn::tensor::ops::IndexingUpdateOp::Add,
    );
    let mut dims = vec![batch, channels];
    dims.extend_from_slice(&padded);
    let mut crop: Vec<burn::tensor::Slice> = vec![burn::tensor::Slice::full(); 2];
    crop.extend(
        (0..spatial)
            .map(|i| burn::tensor::Slice::new(window.pads[i] as isize, Some((window.pads[i] + image[i]) as isize), 1)),
    );
    summed.reshape::<D, _>(burn::tensor::Shape::from(dims)).slice(crop.as_slice())
}
