//! Convolution on flex f32 tensors: 2-D convolutions as register-tile products over im2col
//! columns computed on the fly, depthwise convolutions over stride phases, with the bias,
//! residual and activation applied to each finished row.

use super::*;
use crate::kernels::gemm::Matrix;
use crate::kernels::transpose::transpose;
use crate::kernels::written::{as_slots, assume_written, written_by};
use std::mem::MaybeUninit;

use crate::kernels::ConvOperands;

type FlexOperands = (FlexTensor, FlexTensor, Option<FlexTensor>, Option<FlexTensor>);

/// The convolution's operands as flex tensors, or all of them back unchanged.
fn take_operands<const D: usize>(
    (x, weight, bias, residual): ConvOperands<D>,
) -> Result<FlexOperands, ConvOperands<D>> {
    let tx = match take(x) {
        Ok(t) => t,
        Err(x) => return Err((x, weight, bias, residual)),
    };
    let tw = match take(weight) {
        Ok(t) => t,
        Err(w) => return Err((give(tx), w, bias, residual)),
    };
    let tb = match bias.map(take).transpose() {
        Ok(b) => b,
        Err(b) => return Err((give(tx), give(tw), Some(b), residual)),
    };
    match residual.map(take).transpose() {
        Ok(r) => Ok((tx, tw, tb, r)),
        Err(r) => Err((give(tx), give(tw), tb.map(give), Some(r))),
    }
}

pub fn conv2d(
    (x, weight, bias, residual): ConvOperands<4>,
    options: &ConvOptions<2>,
    activation: crate::kernels::ConvActivation,
) -> Result<Tensor<4>, ConvOperands<4>> {
    let (groups, [ci, wci]) = (options.groups, [x.dims()[1], weight.dims()[1]]);
    let depthwise = wci == 1 && groups == ci && groups > 1;
    if groups == 0 || !crate::kernels::gemm::available() {
        return Err((x, weight, bias, residual));
    }
    let (tx, tw, tb, tr) = take_operands((x, weight, bias, residual))?;
    let back =
        |tx, tw, tb: Option<FlexTensor>, tr: Option<FlexTensor>| Err((give(tx), give(tw), tb.map(give), tr.map(give)));
    let [n, ci, h, w]: [usize; 4] = tx.layout().shape().dims();
    let [co, wci, kh, kw]: [usize; 4] = tw.layout().shape().dims();
    let window =
        Window { kernel: [kh, kw], strides: options.stride, pads: options.padding, dilations: options.dilation };
    let (Some(oh), Some(ow)) = (window.out_dim(h, 0), window.out_dim(w, 1)) else { return back(tx, tw, tb, tr) };
    // Empty images and outputs go to flex (the products cut both into images).
    let channels_ok = wci * groups == ci && co % groups == 0 && ci * h * w * co > 0;
    // The depthwise kernel splits planes: empty ones (and zero strides) go to flex.
    let planes_ok = !depthwise || h * w * oh * ow > 0 && options.stride.iter().all(|&s| s > 0);
    let (Some(input), Some(weights), Some(finish), true) = (
        tx.as_slice::<f32>(),
        tw.as_slice::<f32>(),
        Finish::new(&tb, &tr, [n, co, oh, ow], activation),
        channels_ok && planes_ok,
    ) else {
        return back(tx, tw, tb, tr);
    };
    // A column-vector image (a 1-D convolution along H: w = kw = ow = 1) is, in memory, the
    // row-vector image of the transposed convolution, whose im2col rows are contiguous runs
    // rather than one pixel per output row.
    let transposed = (w == 1 && kw == 1 && ow == 1).then(|| transposed(options));
    let geometry = match &transposed {
        Some(options) => Geometry { h: w, w: h, kh: kw, kw: kh, oh: ow, ow: oh, options },
        None => Geometry { h, w, kh, kw, oh, ow, options },
    };
    let cut = (!depthwise).then(|| geometry.taps_reaching_image(weights)).flatten();
    let (weights, geometry) = match &cut {
        Some((weights, [kh, kw], options)) => (weights.as_slice(), Geometry { kh: *kh, kw: *kw, options, ..geometry }),
        None => (weights, geometry),
    };
    let convolve = |output: &mut [MaybeUninit<f32>]| {
        if depthwise {
            // One input channel per group: a product per channel would have a single row.
            geometry.depthwise(input, weights, [ci, co / ci], output, &finish)
        } else {
            geometry.gemm(input, weights, [ci, co, groups], output, &finish)
        }
    };
    // SAFETY: both kernels write every output.
    let output = unsafe { written_by(n * co * oh * ow, convolve) };
    Ok(from_vec(output, [n, co, oh, ow]))
}

/// What finishes a convolution's outputs: the bias (one per output channel) and the residual
/// (of the output's shape) added, then the activation, in the order of the ops they replace.
pub(super) struct Finish<'a> {
    bias: Option<&'a [f32]>,
    residual: Option<&'a [f32]>,
    activation: crate::kernels::ConvActivation,
}

impl<'a> Finish<'a> {
    /// Sums left as they are.
    const NOTHING: Finish<'static> =
        Finish { bias: None, residual: None, activation: crate::kernels::ConvActivation::None };

    /// The bias and residual read from their flex tensors for an output of `shape`; `None`
    /// when either does not fit.
    fn new<const D: usize>(
        bias: &'a Option<FlexTensor>,
        residual: &'a Option<FlexTensor>,
        shape: [usize; D],
        activation: crate::kernels::ConvActivation,
    ) -> Option<Self> {
        let bias = match bias {
            Some(b) => Some(b.as_slice::<f32>().filter(|v| v.len() == shape[1])?),
            None => None,
        };
        let residual = match residual {
            Some(r) => Some(r.as_slice::<f32>().filter(|_| r.layout().shape().dims::<D>() == shape)?),
            None => None,
        };
        Some(Self { bias, residual, activation })
    }

    /// Finishes `values`, a run of output channel `row`'s outputs from `offset` in the whole
    /// output.
    fn apply(&self, row: usize, offset: usize, values: &mut [f32]) {
        if !self.is_nothing() {
            vectorised(
                #[inline(always)]
                || self.finish_run(row, offset, values),
            )
        }
    }

    /// Finishes `values`, runs of `run` outputs of the channels from `row` on (whole planes),
    /// from `offset` in the whole output: one call for the many short rows of a product on a
    /// small plane, where a call per row cost more than its product.
    fn apply_runs(&self, row: usize, offset: usize, values: &mut [f32], run: usize) {
        if !self.is_nothing() {
            vectorised(
                #[inline(always)]
                || {
                    for (r, values) in values.chunks_mut(run.max(1)).enumerate() {
                        self.finish_run(row + r, offset + r * run, values)
                    }
                },
            )
        }
    }

    fn is_nothing(&self) -> bool {
        self.bias.is_none() && self.residual.is_none() && self.activation == crate::kernels::ConvActivation::None
    }

    #[inline(always)]
    fn finish_run(&self, row: usize, offset: usize, values: &mut [f32]) {
        let residual = self.residual.map(|r| &r[offset..][..values.len()]);
        finish_outputs(values, self.bias.map(|b| b[row]), residual, self.activation)
    }
}

/// 3-D convolution (`[n, c, d, h, w]`, weight `[o, c, kd, kh, kw]`, one group) as 2-D ones:
/// output depth `z` of an image is the 2-D convolution of the planes under its depth window,
/// `(c, kz)` taken as channels, so the weight is read as `[o, c·kd, kh, kw]`, its own layout.
/// Those planes are gathered into one image per output depth (zero planes in the depth
/// padding), all of them convolved by [`Geometry::gemm`] (images side by side, or each product
/// split), and each output plane then moved to its depth, where it is finished.
pub fn conv3d(
    (x, weight, bias, residual): ConvOperands<5>,
    options: &ConvOptions<3>,
    activation: crate::kernels::ConvActivation,
) -> Result<Tensor<5>, ConvOperands<5>> {
    if options.groups != 1 || !crate::kernels::gemm::available() {
        return Err((x, weight, bias, residual));
    }
    let (tx, tw, tb, tr) = take_operands((x, weight, bias, residual))?;
    let back =
        |tx, tw, tb: Option<FlexTensor>, tr: Option<FlexTensor>| Err((give(tx), give(tw), tb.map(give), tr.map(give)));
    let [n, ci, d, h, w]: [usize; 5] = tx.layout().shape().dims();
    let [co, wci, kd, kh, kw]: [usize; 5] = tw.layout().shape().dims();
    let ([sd, sh, sw], [pd, ph, pw], [dd, dh, dw]) = (options.stride, options.padding, options.dilation);
    let depth = Window { kernel: [kd, 1], strides: [sd, 1], pads: [pd, (0, 0)], dilations: [dd, 1] };
    let planar = ConvOptions { stride: [sh, sw], padding: [ph, pw], dilation: [dh, dw], groups: 1 };
    let window = Window { kernel: [kh, kw], strides: planar.stride, pads: planar.padding, dilations: planar.dilation };
    let (Some(od), Some(oh), Some(ow)) = (depth.out_dim(d, 0), window.out_dim(h, 0), window.out_dim(w, 1)) else {
        return back(tx, tw, tb, tr);
    };
    let (Some(input), Some(weights), Some(finish), true) = (
        tx.as_slice::<f32>(),
        tw.as_slice::<f32>(),
        Finish::new(&tb, &tr, [n, co, od, oh, ow], activation),
        wci == ci && ci * kd * h * w * co > 0,
    ) else {
        return back(tx, tw, tb, tr);
    };
    let (plane, out_plane, image_len) = (h * w, oh * ow, ci * kd * h * w);
    let mut images = vec![0.0f32; n * od * image_len];
    let gathers = images.par_chunks_mut(image_len).enumerate();
    gathers.with_min_len(job_len(n * od, image_len, PARALLEL_MIN_ELEMENTS)).for_each(|(index, image)| {
        let (b, z) = (index / od, index % od);
        for (p, plane_out) in image.chunks_mut(plane).enumerate() {
            let (c, kz) = (p / kd, p % kd);
            if let Some(iz) = (z * sd + kz * dd).checked_sub(pd.0).filter(|&iz| iz < d) {
                plane_out.copy_from_slice(&input[((b * ci + c) * d + iz) * plane..][..plane]);
            }
        }
    });
    let geometry = Geometry { h, w, kh, kw, oh, ow, options: &planar };
    let gemm = |by_depth: &mut [MaybeUninit<f32>]| {
        geometry.gemm(&images, weights, [ci * kd, co, 1], by_depth, &Finish::NOTHING)
    };
    // SAFETY: `Geometry::gemm` writes every output.
    let by_depth = unsafe { written_by(n * od * co * out_plane, gemm) };
    let mut output = vec![0.0f32; n * co * od * out_plane];
    let volumes = output.par_chunks_mut(od * out_plane).enumerate();
    volumes.with_min_len(job_len(n * co, od * out_plane, PARALLEL_MIN_ELEMENTS)).for_each(|(index, volume)| {
        let (b, o) = (index / co, index % co);
        for (z, out) in volume.chunks_mut(out_plane).enumerate() {
            out.copy_from_slice(&by_depth[((b * od + z) * co + o) * out_plane..][..out_plane]);
            finish.apply(o, (index * od + z) * out_plane, out);
        }
    });
    Ok(from_vec(output, [n, co, od, oh, ow]))
}

/// The options of the convolution with H and W swapped.
fn transposed(o: &ConvOptions<2>) -> ConvOptions<2> {
    let swap = |[a, b]: [usize; 2]| [b, a];
    ConvOptions {
        stride: swap(o.stride),
        padding: [o.padding[1], o.padding[0]],
        dilation: swap(o.dilation),
        groups: o.groups,
    }
}

/// Bias, then the residual sum, then the activation, in the order of the ops they replace:
/// one pass for the piecewise-linear activations, which select per element.
#[inline(always)]
pub(super) fn finish_outputs(
    values: &mut [f32],
    bias: Option<f32>,
    residual: Option<&[f32]>,
    activation: crate::kernels::ConvActivation,
) {
    use crate::kernels::ConvActivation as A;
    match activation {
        A::None => add_then(values, bias, residual, |x| x),
        A::Relu => add_then(values, bias, residual, |x| if x < 0.0 { 0.0 } else { x }),
        A::LeakyRelu(alpha) => add_then(values, bias, residual, |x| if x < 0.0 { x * alpha } else { x }),
        A::HardSigmoid(alpha, beta) => {
            add_then(values, bias, residual, |x| crate::kernels::hard_sigmoid(x, alpha, beta))
        }
        A::HardSwish => add_then(values, bias, residual, |x| x * crate::kernels::hard_sigmoid(x, 1.0 / 6.0, 0.5)),
        A::Clamp(min, max) => add_then(values, bias, residual, |x| crate::kernels::clamp(x, min, max)),
        A::Sigmoid | A::Silu => {
            add_then(values, bias, residual, |x| x);
            activation.apply_slice(values)
        }
    }
}

/// `v = f(v + bias + residual)` for each value, each loop specialised to the terms present.
#[inline(always)]
fn add_then(values: &mut [f32], bias: Option<f32>, residual: Option<&[f32]>, f: impl Fn(f32) -> f32) {
    match (bias, residual) {
        (Some(b), Some(r)) => values.iter_mut().zip(r).for_each(|(v, r)| *v = f(*v + b + r)),
        (None, Some(r)) => values.iter_mut().zip(r).for_each(|(v, r)| *v = f(*v + r)),
        (Some(b), None) => values.iter_mut().for_each(|v| *v = f(*v + b)),
        // `+ 0.0` keeps the select on a computed value: on the value read in place, a ReLU or
        // clamp became masked stores (`vmaskmovps`, microcoded on AMD: four fifths of a
        // channels-last ReLU's time). The kernels' sums start from +0 and so are never -0, the
        // one value the add would change.
        (None, None) => values.iter_mut().for_each(|v| *v = f(*v + 0.0)),
    }
}

/// What runs on each finished run of one product's outputs: `(row, offset in the product's
/// output, values)`.
type RowFinish<'a> = dyn Fn(usize, usize, &mut [f32]) + Sync + 'a;

/// Output planes up to this size are finished a product at a time rather than a row at a time.
const SMALL_PLANE: usize = 64;

/// Sizes of one image's convolution.
struct Geometry<'a> {
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    options: &'a ConvOptions<2>,
}

impl Geometry<'_> {
    /// The input position under kernel tap `k` of output position `o` along `axis` (0 for
    /// H, 1 for W), or `None` in the padding.
    fn source(&self, axis: usize, o: usize, k: usize) -> Option<usize> {
        let options = self.options;
        (o * options.stride[axis] + k * options.dilation[axis])
            .checked_sub(options.padding[axis].0)
            .filter(|&i| i < [self.h, self.w][axis])
    }

    /// The kernel cut to the taps that reach the image for some output: their weights (every
    /// kernel of `weights` cut alike), window and padding. A dilated convolution on a map
    /// smaller than its dilation reads only padding with its other taps (DeepLabV3's atrous
    /// pyramid at 64×64: of 3×3 taps 12 to 36 apart on a 4×4 map, only the centre, and a third
    /// of the model's time went to im2col rows of zeros); without them the product is the
    /// same sums. `None` when every tap reaches the image, none does, or the cut window would
    /// start inside the image (a negative padding).
    fn taps_reaching_image(&self, weights: &[f32]) -> Option<(Vec<f32>, [usize; 2], ConvOptions<2>)> {
        let o = self.options;
        let reaching = |axis: usize| {
            let (taps, outputs) = ([self.kh, self.kw][axis], [self.oh, self.ow][axis]);
            let reaches = |t: &usize| (0..outputs).any(|out| self.source(axis, out, *t).is_some());
            Some((0..taps).find(reaches)?..(0..taps).rfind(reaches)? + 1)
        };
        let (rows, columns) = (reaching(0)?, reaching(1)?);
        // Each weight kept is copied once per call: worth it where the taps left out would
        // have cost more, a sixteenth of a copy per multiply-add (Silero's convolutions of a
        // 3-tap kernel on 1-frame maps ran 1.5× slower copying their weights to save 2 of 3
        // multiply-adds per weight).
        let (taps, kept) = (self.kh * self.kw, rows.len() * columns.len());
        if (taps - kept) * self.oh * self.ow < 16 * kept {
            return None;
        }
        let window = [rows.clone(), columns.clone()];
        let sizes = [(self.h, self.oh), (self.w, self.ow)];
        let mut padding = o.padding;
        for (axis, ((begin, end), (size, outputs))) in padding.iter_mut().zip(sizes).enumerate() {
            *begin = begin.checked_sub(window[axis].start * o.dilation[axis])?;
            // Enough at the end for the last output's last tap.
            let extent = (outputs - 1) * o.stride[axis] + (window[axis].len() - 1) * o.dilation[axis] + 1;
            *end = extent.saturating_sub(size + *begin);
        }
        let offsets: Vec<usize> =
            rows.clone().flat_map(|ky| columns.clone().map(move |kx| ky * self.kw + kx)).collect();
        let mut cut = vec![0.0f32; weights.len() / taps * kept];
        for (cut, kernel) in cut.chunks_exact_mut(kept).zip(weights.chunks_exact(taps)) {
            cut.iter_mut().zip(&offsets).for_each(|(w, &t)| *w = kernel[t]);
        }
        Some((cut, [rows.len(), columns.len()], ConvOptions { padding, ..o.clone() }))
    }

    /// The padded plane's height and width.
    fn padded(&self) -> (usize, usize) {
        let pads = self.options.padding;
        (self.h + pads[0].0 + pads[0].1, self.w + pads[1].0 + pads[1].1)
    }

    /// A 1×1 kernel with unit stride and no padding: the image itself is the right operand.
    fn is_pointwise(&self) -> bool {
        let o = self.options;
        self.kh == 1 && self.kw == 1 && o.stride == [1, 1] && o.padding == [(0, 0), (0, 0)]
    }

    /// Every image, each group of channels apart, as one matrix product of the group's weights
    /// with its im2col columns (the image itself for a pointwise kernel), the weights read in
    /// place: every output written. A group's input channels, weights and output channels are
    /// contiguous runs, so an (image, group) pair is one product on slices.
    fn gemm(
        &self,
        input: &[f32],
        weights: &[f32],
        [ci, co, groups]: [usize; 3],
        output: &mut [MaybeUninit<f32>],
        finish: &Finish,
    ) {
        let ([ci, co], plane, out_plane) = ([ci / groups, co / groups], self.h * self.w, self.oh * self.ow);
        let k = ci * self.kh * self.kw;
        let parts = input.par_chunks(ci * plane).zip(output.par_chunks_mut(co * out_plane)).enumerate();
        // Products side by side where one is too small to be split (the zoo's ResNet-18 ×0.25:
        // 0.6M multiply-adds an image, run on one thread of two; ShuffleNet's groups).
        let jobs = job_len(parts.len(), co * k * out_plane, crate::parallel::PARALLEL_MIN_FMAS);
        parts.with_min_len(jobs).for_each(|(index, (image, out))| {
            let group = index % groups;
            let a = Matrix { data: &weights[group * co * k..][..co * k], rows: co, cols: k, stride: k };
            let first = index * co * out_plane;
            let by_row = |row, column, values: &mut [f32]| {
                finish.apply(group * co + row, first + row * out_plane + column, values)
            };
            // Small planes are finished whole after the product (see `Finish::apply_runs`).
            let small = out_plane <= SMALL_PLANE;
            let finish_rows: &RowFinish = if small { &|_, _, _| {} } else { &by_row };
            if self.is_pointwise() {
                let b = Matrix { data: image, rows: ci, cols: plane, stride: plane };
                crate::kernels::gemm::sgemm_into(a, &b, out, finish_rows);
            } else if self.phase_grid_pays(k, co) {
                self.gemm_on_phases(a, image, ci, out, finish_rows);
            } else {
                crate::kernels::gemm::sgemm_into(a, &Im2col { geometry: self, image, rows: k }, out, finish_rows);
            }
            if small {
                // SAFETY: each path above wrote every output.
                finish.apply_runs(group * co, first, unsafe { assume_written(out) }, out_plane);
            }
        });
    }

    /// Whether [`Self::gemm_on_phases`] pays for a product of `depth` terms and `rows` rows: it
    /// saves packing B (`depth` values per output pixel) for a pass over C (`rows` values per
    /// pixel), and computes its grid's extra columns, so at least as many terms as rows and at
    /// most a quarter more columns than outputs (SqueezeNet's 3×3/2 stem, 27 terms for 64
    /// rows, took 1.3× the time of im2col on the grid; kernels bench).
    fn phase_grid_pays(&self, depth: usize, rows: usize) -> bool {
        let width = self.padded().1.div_ceil(self.options.stride[1]);
        depth >= rows && 4 * width <= 5 * self.ow
    }

    /// One image's product with B the im2col matrix over the image's stride phases (see
    /// [`Self::depthwise_in_phases`]): its row `(c, ky, kx)` is the phase of tap `(ky, kx)` of
    /// channel `c` from the tap's offset on, contiguous over a grid of `oh` rows of the phase
    /// width, whose first `ow` columns are the outputs. Packing such a row is one copy, where
    /// the im2col rows' are a copy per output row and a gather with a stride: narrow networks,
    /// whose products have few rows of A to spread the packing over, spent a third of their
    /// time packing. The grid's extra columns are computed and dropped.
    fn gemm_on_phases(&self, a: Matrix, image: &[f32], ci: usize, out: &mut [MaybeUninit<f32>], finish: &RowFinish) {
        let phases = self.phases();
        let per_plane = phases.plane_len();
        let mut split = vec![0.0f32; ci * per_plane];
        for (plane, split) in image.chunks(self.h * self.w).zip(split.chunks_mut(per_plane)) {
            vectorised(
                #[inline(always)]
                || self.split_phases(plane, &phases, split),
            );
        }
        let taps = phases.offsets.len();
        let rows = (0..ci * taps).map(|p| (p / taps) * per_plane + phases.offsets[p % taps]).collect();
        let b = PhaseGrid { split: &split, rows, cols: self.oh * phases.width };
        // SAFETY: `sgemm_into` writes every value.
        let grid =
            unsafe { written_by(a.rows * b.cols, |grid| crate::kernels::gemm::sgemm_into(a, &b, grid, &|_, _, _| {})) };
        let out_plane = self.oh * self.ow;
        let planes = out.par_chunks_mut(out_plane).zip(grid.par_chunks(b.cols)).enumerate();
        planes
            .with_min_len(job_len(a.rows, out_plane, PARALLEL_MIN_ELEMENTS))
            .for_each(|(row, (out, sums))| finish(row, 0, self.plane_from_grid(out, sums, phases.width)));
    }

    /// The output plane `out` (`oh` rows of `ow`) written from the first `ow` columns of each
    /// row of `sums`, a grid of `oh` rows of `width` (or more rows, left unread).
    ///
    /// # Panics
    /// If `out` is not one plane or `sums` holds fewer than `oh` rows.
    #[inline(always)]
    fn plane_from_grid<'o>(&self, out: &'o mut [MaybeUninit<f32>], sums: &[f32], width: usize) -> &'o mut [f32] {
        assert!(out.len() == self.oh * self.ow && sums.len() >= self.oh * width && width >= self.ow);
        for (out, sums) in out.chunks_exact_mut(self.ow).zip(sums.chunks(width)) {
            out.write_copy_of_slice(&sums[..self.ow]);
        }
        // SAFETY: `out` is `oh` rows of `ow`, and `sums` has `oh` rows to copy them from.
        unsafe { assume_written(out) }
    }
}

/// The im2col matrix of [`Geometry::gemm_on_phases`]: row `p` is `split` from `rows[p]` on.
struct PhaseGrid<'a> {
    split: &'a [f32],
    rows: Vec<usize>,
    cols: usize,
}

impl crate::kernels::gemm::Right for PhaseGrid<'_> {
    fn rows(&self) -> usize {
        self.rows.len()
    }

    fn cols(&self) -> usize {
        self.cols
    }

    fn segment(&self, p: usize, j0: usize, out: &mut [f32]) {
        out.copy_from_slice(&self.split[self.rows[p] + j0..][..out.len()]);
    }

    fn column(&self, j: usize, out: &mut [f32]) {
        out.iter_mut().zip(&self.rows).for_each(|(v, &row)| *v = self.split[row + j]);
    }

    fn rows_in_place(&self) -> Option<(&[f32], &[usize])> {
        Some((self.split, &self.rows))
    }
}

/// How a depthwise convolution lays out the stride phases of a padded input plane.
struct Phases {
    strides: [usize; 2],
    /// Columns of a phase, and of the grid the sums are computed on.
    width: usize,
    /// Elements of a phase, slack included.
    len: usize,
    /// Where each kernel tap reads, relative to the output's grid position.
    offsets: Vec<usize>,
}

impl Phases {
    /// Elements of one plane split into its phases.
    fn plane_len(&self) -> usize {
        self.strides[0] * self.strides[1] * self.len
    }
}

impl Geometry<'_> {
    /// A depthwise convolution (`multiplier` output channels per input channel) as shifted
    /// multiply-adds: on small planes channels last, a channel per lane of a vector, else
    /// channel by channel over whole planes.
    fn depthwise(
        &self,
        input: &[f32],
        weights: &[f32],
        [channels, multiplier]: [usize; 2],
        output: &mut [MaybeUninit<f32>],
        finish: &Finish,
    ) {
        if multiplier == 1 && self.oh * self.ow <= CHANNELS_LAST_MAX_OUTPUTS {
            self.depthwise_channels_last(input, weights, channels, output, finish)
        } else {
            self.depthwise_in_phases(input, weights, [channels, multiplier], output, finish)
        }
    }

    /// [`Self::depthwise`] plane by plane. The padded input is split into stride phases
    /// (`phase (ry, rx)` holds the padded pixels `(qy·sy + ry, qx·sx + rx)`), so every
    /// kernel tap reads one phase at a fixed offset from the output pixel: output `(y, x)`
    /// of tap `(ky, kx)` is phase `(ky·dy mod sy, kx·dx mod sx)` at `(y + ky·dy / sy,
    /// x + kx·dx / sx)`. Outputs are computed on the phase width (columns past the output
    /// width are discarded), REGISTER_BLOCK at a time with all taps in registers.
    fn depthwise_in_phases(
        &self,
        input: &[f32],
        weights: &[f32],
        [channels, multiplier]: [usize; 2],
        output: &mut [MaybeUninit<f32>],
        finish: &Finish,
    ) {
        let phases = self.phases();
        let (plane, out_plane) = (self.h * self.w, self.oh * self.ow);
        // A tap costs about what an element visit of a memory-bound op does (it reloads the
        // shifted phase), far more than a multiply-add of the matrix product.
        let per_plane = multiplier * out_plane * phases.offsets.len();
        let planes = input.par_chunks(plane).zip(output.par_chunks_mut(multiplier * out_plane)).enumerate();
        let jobs = job_len(planes.len(), per_plane, PARALLEL_MIN_ELEMENTS);
        planes.with_min_len(jobs).for_each(|(index, (image, out))| {
            let oc = (index % channels) * multiplier;
            let kernels = &weights[oc * phases.offsets.len()..][..multiplier * phases.offsets.len()];
            let first = index * multiplier * out_plane;
            let finish = |j, out: &mut [f32]| finish.apply(oc + j, first + j * out_plane, out);
            DEPTHWISE.with_borrow_mut(|buffers| {
                vectorised(
                    #[inline(always)]
                    || self.depthwise_plane(image, &phases, kernels, buffers, out, &finish),
                )
            })
        });
    }

    /// The outputs of one input plane `image`, one plane per kernel of `kernels`.
    #[inline(always)]
    fn depthwise_plane(
        &self,
        image: &[f32],
        phases: &Phases,
        kernels: &[f32],
        (split, sums): &mut (Vec<f32>, Vec<f32>),
        out: &mut [MaybeUninit<f32>],
        finish: &dyn Fn(usize, &mut [f32]),
    ) {
        split.clear();
        split.resize(phases.plane_len(), 0.0);
        self.split_phases(image, phases, split);
        // Whole register blocks.
        sums.resize((self.oh * phases.width).div_ceil(REGISTER_BLOCK) * REGISTER_BLOCK, 0.0);
        let taps = phases.offsets.len();
        for (j, (out, kernel)) in out.chunks_mut(self.oh * self.ow).zip(kernels.chunks(taps)).enumerate() {
            shifted_sums(split, &phases.offsets, kernel, sums);
            finish(j, self.plane_from_grid(out, sums, phases.width));
        }
    }

    /// How [`Self::split_phases`] lays out a padded input plane: the phase grid's width, each
    /// phase's length, and where each kernel tap reads relative to an output's grid position.
    fn phases(&self) -> Phases {
        let o = self.options;
        let ([sy, sx], [dy, dx]) = (o.stride, o.dilation);
        let (hp, wp) = self.padded();
        let (hq, wq) = (hp.div_ceil(sy), wp.div_ceil(sx));
        // Sums past the last output read past the last phase row: a row and a block of slack.
        let phase_len = hq * wq + wq + REGISTER_BLOCK;
        let offsets: Vec<usize> = (0..self.kh * self.kw)
            .map(|t| {
                let (oy, ox) = ((t / self.kw) * dy, (t % self.kw) * dx);
                ((oy % sy) * sx + ox % sx) * phase_len + (oy / sy) * wq + ox / sx
            })
            .collect();
        Phases { strides: [sy, sx], width: wq, len: phase_len, offsets }
    }

    /// The padded plane `image`, split into its stride phases (see
    /// [`Self::depthwise_in_phases`]) in `phases`, zeroed, of the layout's size. At strides 1 and
    /// 2, no division per row or value (the strides are only known at run time, and divisions
    /// per row took most of a stride-2 depthwise convolution's time on 32×32 planes).
    #[inline(always)]
    fn split_phases(&self, image: &[f32], layout: &Phases, phases: &mut [f32]) {
        let Phases { strides: [sy, sx], width: wq, len: phase_len, .. } = *layout;
        let (pt, pl) = (self.options.padding[0].0, self.options.padding[1].0);
        // Padded row py lies in row qy of the phases with ry = py mod sy.
        let (mut ry, mut qy) = (pt % sy, pt / sy);
        // Column x goes to phase (x + pl) mod sx at (x + pl) / sx, followed there by every
        // sx-th column.
        let start = |x: usize| ((x + pl) % sx) * phase_len + (x + pl) / sx;
        let pair = [start(0), start(1)];
        for line in image.chunks(self.w) {
            let row = &mut phases[ry * sx * phase_len + qy * wq..];
            match sx {
                1 => row[pl..][..line.len()].copy_from_slice(line),
                // Sixteen columns at a time, split into their two phases by shuffles (written
                // pair by pair, or phase by phase with a stride, the loop stayed scalar).
                2 => {
                    let blocks = line.chunks_exact(16);
                    let done = line.len() - blocks.remainder().len();
                    for (b, block) in blocks.enumerate() {
                        for (phase, &start) in pair.iter().enumerate() {
                            let run: [f32; 8] = std::array::from_fn(|i| block[2 * i + phase]);
                            row[start + 8 * b..][..8].copy_from_slice(&run);
                        }
                    }
                    for (x, &v) in line.iter().enumerate().skip(done) {
                        row[pair[x % 2] + x / 2] = v;
                    }
                }
                _ => {
                    for first in 0..sx.min(line.len()) {
                        let columns = line[first..].iter().step_by(sx);
                        row[start(first)..].iter_mut().zip(columns).for_each(|(p, &v)| *p = v);
                    }
                }
            }
            ry += 1;
            if ry == sy {
                (ry, qy) = (0, qy + 1);
            }
        }
    }
}

/// Output planes up to this size take [`Geometry::depthwise_channels_last`]: the phase kernel
/// computes its sums a register block (64 outputs) at a time along rows of the padded width, so
/// on a mobile network's last planes (2×2 to 8×8) it discards most of what it computes, and its
/// per-plane copies and calls outweigh the sums.
const CHANNELS_LAST_MAX_OUTPUTS: usize = 64;

/// Channels per vector: a channels-last pixel is whole vectors, lanes past the last channel 0.
const LANES: usize = 8;

/// Channels whose sums a pixel holds in registers at once (four vectors).
const CHANNEL_BLOCK: usize = 32;

impl Geometry<'_> {
    /// A depthwise convolution of one output channel per input channel, channels last: each
    /// image transposed to pixels of channel vectors, each output pixel the sum over its kernel
    /// taps inside the image of the tap's weight vector times the pixel under it, the bias and
    /// activation applied to the whole image at once (a residual, when there is one, to each
    /// output plane after), and the image transposed back. The taps are summed in the phase
    /// kernel's order with the same fused multiply-adds, and the taps in the padding, which
    /// add a product with 0 to the sum, are left out: the same bits where the weights are finite
    /// (an infinite one times the padding's 0 is NaN there).
    fn depthwise_channels_last(
        &self,
        input: &[f32],
        weights: &[f32],
        channels: usize,
        output: &mut [MaybeUninit<f32>],
        finish: &Finish,
    ) {
        let (plane, out_plane, taps) = (self.h * self.w, self.oh * self.ow, self.kh * self.kw);
        let width = channels.next_multiple_of(LANES);
        let (starts, sources) = self.taps_inside();
        let mut kernels = vec![0.0f32; taps * width];
        // SAFETY: only floats are written through the slots.
        transpose(weights, [channels, taps], taps, unsafe { as_slots(&mut kernels) }, width);
        let in_lanes = finish.residual.is_none();
        let bias = finish.bias.filter(|_| in_lanes).map(|b| {
            let mut lanes = b.to_vec();
            lanes.resize(width, 0.0);
            lanes
        });
        let (mut pixels, mut sums) = (vec![0.0f32; plane * width], vec![0.0f32; out_plane * width]);
        let jobs = job_len(out_plane, width * taps, PARALLEL_MIN_ELEMENTS);
        for (image, (input, output)) in
            input.chunks(channels * plane).zip(output.chunks_mut(channels * out_plane)).enumerate()
        {
            // SAFETY: only floats are written through the slots.
            transpose(input, [channels, plane], plane, unsafe { as_slots(&mut pixels) }, width);
            sums.par_chunks_mut(jobs * width).enumerate().for_each(|(job, sums)| {
                vectorised(
                    #[inline(always)]
                    || {
                        for (o, sums) in sums.chunks_exact_mut(width).enumerate() {
                            let o = job * jobs + o;
                            pixel_sums(&pixels, &kernels, &sources[starts[o]..starts[o + 1]], sums);
                        }
                    },
                )
            });
            if in_lanes && !finish.is_nothing() {
                vectorised(
                    #[inline(always)]
                    || {
                        if let Some(bias) = &bias {
                            sums.chunks_exact_mut(width)
                                .for_each(|p| p.iter_mut().zip(bias).for_each(|(v, b)| *v += b));
                        }
                        finish_outputs(&mut sums, None, None, finish.activation)
                    },
                );
            }
            transpose(&sums, [out_plane, channels], width, output, out_plane);
            if !in_lanes {
                for (c, out) in output.chunks_mut(out_plane).enumerate() {
                    // SAFETY: the transpose wrote every output of every channel.
                    finish.apply(c, (image * channels + c) * out_plane, unsafe { assume_written(out) });
                }
            }
        }
    }

    /// For each output pixel, its kernel taps over the image (not the padding) in order, with
    /// the input pixel under each: pixel `o`'s are `sources[starts[o]..starts[o + 1]]`, each
    /// `(tap, input pixel)`.
    fn taps_inside(&self) -> (Vec<usize>, Vec<(usize, usize)>) {
        let (mut starts, mut sources) = (vec![0], Vec::new());
        for (oy, ox) in (0..self.oh).flat_map(|oy| (0..self.ow).map(move |ox| (oy, ox))) {
            for (t, (ky, kx)) in (0..self.kh).flat_map(|ky| (0..self.kw).map(move |kx| (ky, kx))).enumerate() {
                if let (Some(y), Some(x)) = (self.source(0, oy, ky), self.source(1, ox, kx)) {
                    sources.push((t, y * self.w + x));
                }
            }
            starts.push(sources.len());
        }
        (starts, sources)
    }
}

/// One output pixel's sums over `taps` (`(tap, input pixel)`, in order), channels last:
/// `sums[c] = Σ kernels[tap][c] · pixels[pixel][c]`, [`CHANNEL_BLOCK`] channels at a time in
/// registers, then a vector at a time.
#[inline(always)]
fn pixel_sums(pixels: &[f32], kernels: &[f32], taps: &[(usize, usize)], sums: &mut [f32]) {
    let width = sums.len();
    let mut blocks = sums.chunks_exact_mut(CHANNEL_BLOCK);
    for (b, block) in (&mut blocks).enumerate() {
        block.copy_from_slice(&channel_sums::<CHANNEL_BLOCK>(pixels, kernels, width, b * CHANNEL_BLOCK, taps));
    }
    let done = width / CHANNEL_BLOCK * CHANNEL_BLOCK;
    for (b, vector) in blocks.into_remainder().chunks_exact_mut(LANES).enumerate() {
        vector.copy_from_slice(&channel_sums::<LANES>(pixels, kernels, width, done + b * LANES, taps));
    }
}

/// [`pixel_sums`] of the `B` channels from `first`, rows of `width` channels.
#[inline(always)]
fn channel_sums<const B: usize>(
    pixels: &[f32],
    kernels: &[f32],
    width: usize,
    first: usize,
    taps: &[(usize, usize)],
) -> [f32; B] {
    let mut acc = [0.0f32; B];
    for &(tap, pixel) in taps {
        let x: &[f32; B] = pixels[pixel * width + first..][..B].try_into().expect("B channels");
        let w: &[f32; B] = kernels[tap * width + first..][..B].try_into().expect("B channels");
        for ((a, &x), &w) in acc.iter_mut().zip(x).zip(w) {
            *a = x.mul_add(w, *a);
        }
    }
    acc
}

/// `sums[i] = Σ_t kernel[t] · phases[i + offsets[t]]`, a register block at a time.
#[inline(always)]
fn shifted_sums(phases: &[f32], offsets: &[usize], kernel: &[f32], sums: &mut [f32]) {
    for (b, block) in sums.chunks_exact_mut(REGISTER_BLOCK).enumerate() {
        let mut acc = [0.0f32; REGISTER_BLOCK];
        for (&offset, &w) in offsets.iter().zip(kernel) {
            let source = &phases[offset + b * REGISTER_BLOCK..][..REGISTER_BLOCK];
            for (a, &v) in acc.iter_mut().zip(source) {
                *a = v.mul_add(w, *a);
            }
        }
        block.copy_from_slice(&acc);
    }
}

/// The im2col matrix of one image, `[(c, ky, kx), (y, x)]`: the input pixel under kernel
/// tap (ky, kx) for output pixel (y, x) of channel c, or 0 in the padding. Computed segment
/// by segment as the matrix product packs it, never stored whole.
struct Im2col<'a> {
    geometry: &'a Geometry<'a>,
    image: &'a [f32],
    rows: usize,
}

impl crate::kernels::gemm::Right for Im2col<'_> {
    fn rows(&self) -> usize {
        self.rows
    }

    fn cols(&self) -> usize {
        self.geometry.oh * self.geometry.ow
    }

    /// Column j: the window of output pixel j, channel by channel, row by row, without
    /// the divisions a call of `segment` per element would make.
    fn column(&self, j: usize, out: &mut [f32]) {
        let g = self.geometry;
        let (y, x) = (j / g.ow, j % g.ow);
        let planes = self.image.chunks(g.h * g.w).zip(out.chunks_mut(g.kh * g.kw));
        for (plane, window) in planes {
            for (ky, window_row) in window.chunks_mut(g.kw).enumerate() {
                let iy = g.source(0, y, ky);
                for (kx, v) in window_row.iter_mut().enumerate() {
                    *v = match (iy, g.source(1, x, kx)) {
                        (Some(iy), Some(ix)) => plane[iy * g.w + ix],
                        _ => 0.0,
                    };
                }
            }
        }
    }

    fn segment(&self, p: usize, j0: usize, out: &mut [f32]) {
        let g = self.geometry;
        let o = g.options;
        let (pl, sx, dx) = (o.padding[1].0, o.stride[1], o.dilation[1]);
        let (c, ky, kx) = (p / (g.kh * g.kw), (p / g.kw) % g.kh, p % g.kw);
        let plane = &self.image[c * g.h * g.w..][..g.h * g.w];
        let shift = kx * dx;
        // Output columns whose input column x * sx + shift - pl lies in 0..w.
        let (first, end) = valid_columns(shift, pl, sx, g.w, g.ow);
        // Output rows from (y, x) on: divisions once, not per row (narrow maps have many).
        let (mut y, mut x, mut out) = (j0 / g.ow, j0 % g.ow, out);
        while !out.is_empty() {
            let len = (g.ow - x).min(out.len());
            let (line, rest) = std::mem::take(&mut out).split_at_mut(len);
            let (a, b) = (first.clamp(x, x + line.len()), end.clamp(x, x + line.len()));
            match g.source(0, y, ky) {
                Some(iy) if a < b => {
                    let source = &plane[iy * g.w..][..g.w];
                    line[..a - x].fill(0.0);
                    line[b - x..].fill(0.0);
                    let (start, dst) = (a * sx + shift - pl, &mut line[a - x..b - x]);
                    if sx == 1 {
                        dst.copy_from_slice(&source[start..start + dst.len()]);
                    } else {
                        dst.iter_mut().zip(source[start..].iter().step_by(sx)).for_each(|(v, &s)| *v = s);
                    }
                }
                _ => line.fill(0.0),
            }
            (y, x, out) = (y + 1, 0, rest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` deterministic values in [-0.5, 0.5].
    fn values(n: usize, seed: u32) -> Vec<f32> {
        crate::test_util::wave([n], seed).into_data().try_to_vec::<f32>().expect("f32 values")
    }

    /// The channels-last depthwise kernel gives the phase kernel's bits (the same multiply-adds
    /// in the same order), bias, residual and activation included: channels short of a whole
    /// vector and across several blocks, strides, dilations, uneven padding, 5×5 and 1×1
    /// kernels, two images.
    #[test]
    fn depthwise_channels_last_gives_the_phase_kernels_bits() {
        if !crate::kernels::gemm::available() {
            return;
        }
        use crate::kernels::ConvActivation as A;
        // (n, c, h, w), (kh, kw), strides, pads, dilations, with a residual, activation.
        type Case = ([usize; 4], [usize; 2], [usize; 2], [(usize, usize); 2], [usize; 2], bool, A);
        let cases: &[Case] = &[
            ([1, 13, 4, 4], [3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], false, A::Relu),
            ([2, 8, 8, 8], [3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], true, A::Relu),
            ([1, 20, 7, 5], [5, 5], [1, 1], [(2, 2), (2, 2)], [1, 1], false, A::HardSwish),
            ([1, 3, 9, 6], [3, 3], [2, 1], [(0, 2), (1, 0)], [2, 1], false, A::Clamp(0.0, 0.2)),
            ([1, 77, 2, 2], [3, 3], [1, 1], [(1, 1), (1, 1)], [1, 1], false, A::Silu),
            ([2, 9, 3, 3], [1, 1], [1, 1], [(0, 0), (0, 0)], [1, 1], true, A::None),
            ([1, 5, 6, 7], [3, 2], [3, 2], [(1, 0), (0, 1)], [1, 2], false, A::None),
            ([1, 40, 4, 4], [3, 3], [2, 2], [(1, 1), (1, 1)], [1, 1], true, A::Sigmoid),
        ];
        for (seed, &([n, c, h, w], [kh, kw], stride, padding, dilation, residual, activation)) in
            cases.iter().enumerate()
        {
            let options = ConvOptions { stride, padding, dilation, groups: c };
            let window = Window { kernel: [kh, kw], strides: stride, pads: padding, dilations: dilation };
            let (oh, ow) = (window.out_dim(h, 0).unwrap(), window.out_dim(w, 1).unwrap());
            let g = Geometry { h, w, kh, kw, oh, ow, options: &options };
            let input = values(n * c * h * w, seed as u32);
            let weights = values(c * kh * kw, 100 + seed as u32);
            let bias = values(c, 200 + seed as u32);
            let residual = residual.then(|| values(n * c * oh * ow, 300 + seed as u32));
            let finish = Finish { bias: Some(&bias), residual: residual.as_deref(), activation };
            // Both write every output (NaN left would fail the comparison).
            let mut last = vec![MaybeUninit::new(f32::NAN); n * c * oh * ow];
            let mut phases = last.clone();
            g.depthwise_channels_last(&input, &weights, c, &mut last, &finish);
            g.depthwise_in_phases(&input, &weights, [c, 1], &mut phases, &finish);
            // SAFETY: the slots were made with values.
            let (last, phases) = unsafe { (assume_written(&mut last), assume_written(&mut phases)) };
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(last), bits(phases), "case {seed}");
            assert!(
                last.iter().all(|v| !v.is_nan()) && last.iter().any(|&v| v > 0.0),
                "case {seed}: unwritten or all zero"
            );
        }
    }
}
