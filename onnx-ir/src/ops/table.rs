//! The op table: every IR op, its payload (the op's config type, in its family module) and the
//! ONNX op types of the default domain its family parses. From this one list come the `Op`
//! enum, the parser registry (`lookup`, [`op_types`](super::op_types)), `Op::infer` (each
//! payload's [`InferOp`](super::InferOp)) and, in `onnx-codegen`, the code generator's dispatch
//! (each payload's `EmitOp`): adding an op is its family files, one line here and its tests.
//!
//! A line is `Variant(Payload) = family::parser["OpType", ...], ...;`, or `Variant(Payload);`
//! (the payload may be named by its family path, `ml::ZipMapConfig`, so that nothing central
//! re-exports it) for an op that no ONNX op type parses into directly (made by another op's parser, such as
//! ReshapeRuntime by Reshape's, or by a pass, such as ScaledDotProductAttention). An op type
//! appears once in the table. Input and output counts come from `onnx.defs` (`arity`).

/// Applies the macro `$apply` to the op table (see the module's documentation): `onnx-ir`
/// defines `Op` and the registry with it, `onnx-codegen` its dispatch.
#[macro_export]
#[doc(hidden)]
macro_rules! op_table {
    ($apply:ident) => {
        $apply! {
            /// An elementwise op of two tensors (Add, Less, And, PRelu, ...).
            Binary(BinaryConfig) = elementwise::parse_binary["Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Less",
                "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr",
                "BitwiseXor", "PRelu"];
            /// An elementwise function of one tensor (Relu, Exp, Gelu, ...).
            Unary(UnaryOp) = elementwise::parse_unary["Relu", "Sigmoid", "Tanh", "LeakyRelu", "Abs", "Neg", "Exp",
                "Log", "Sqrt", "Reciprocal", "Ceil", "Floor", "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
                "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf", "Sign", "Softplus", "Softsign", "Elu", "Selu",
                "Celu", "HardSigmoid", "HardSwish", "Swish", "Mish", "Gelu", "ThresholdedRelu", "Shrink", "IsNaN",
                "IsInf", "Not", "BitwiseNot"];
            /// Max, Min, Sum or Mean of any number of tensors.
            Variadic(VariadicOp) = elementwise::parse_variadic["Max", "Min", "Sum", "Mean"];
            /// `Where(condition, x, y)`.
            Where(WhereConfig) = elementwise::parse_where["Where"];
            /// `SwiGLU(A, B)` (opset 28): `Swish_alpha(A) * B`.
            SwiGlu(SwiGluConfig) = elementwise::parse_swiglu["SwiGLU"];
            /// `Cast` to another element type.
            Cast(CastConfig) = elementwise::parse_cast["Cast", "CastLike"];
            /// The input's bits read as `to`, a type of the same width.
            BitCast(BitCastConfig) = elementwise::parse_bitcast["BitCast"];
            /// A Reduce* op.
            Reduce(ReduceConfig) = reduce::parse_reduce["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"];
            /// Run-time `Shape` of dims `start..end` (static shapes are folded at import).
            Shape(ShapeConfig) = indexing::parse_shape["Shape"];
            /// Run-time `Size`: the element count, an int64 scalar (static shapes are folded at import).
            Size(SizeConfig) = indexing::parse_size["Size"];
            /// `ConstantOfShape`: a tensor of `shape` filled with `value`.
            ConstantOfShape(ConstantOfShapeConfig) = indexing::parse_constant_of_shape["ConstantOfShape"];
            /// `Range(start, limit, delta)`: `ceil((limit - start) / delta)` elements from `start` by `delta`.
            Range(RangeConfig) = indexing::parse_range["Range"];
            /// `Expand(input, shape)`: numpy broadcast of the input to `shape`.
            Expand(ExpandConfig) = indexing::parse_expand["Expand"];
            /// `Gather(data, indices)`: slices of `data` along `axis` picked by `indices` (negatives from the end).
            Gather(GatherConfig) = indexing::parse_gather["Gather"];
            /// `Slice(data, starts, ends, axes?, steps?)`; attributes before opset 10.
            Slice(SliceConfig) = indexing::parse_slice["Slice"];
            /// `Split` into several outputs along `axis`.
            Split(SplitConfig) = indexing::parse_split["Split"];
            /// `Tile(input, repeats)`: the input repeated `repeats[i]` times along axis `i`.
            Tile(TileConfig) = indexing::parse_tile["Tile"];
            /// `Trilu` (opset 14): the upper or lower triangle of the last two dims, the rest zeroed.
            Trilu(TriluConfig) = indexing::parse_trilu["Trilu"];
            /// `axis` is `None` when it is only known at run time.
            CumSum(CumSumConfig) = indexing::parse_cumsum["CumSum", "CumProd"];
            /// `Squeeze` with axes computed at run time.
            SqueezeRuntime(SqueezeRuntimeConfig);
            /// `Unsqueeze` with axes computed at run time.
            UnsqueezeRuntime(UnsqueezeRuntimeConfig);
            /// `Hardmax`: 1 at the first maximum along `axis`, 0 elsewhere.
            Hardmax(HardmaxConfig) = indexing::parse_hardmax["Hardmax"];
            /// `TopK(x, k)`: the `k` largest (or smallest) values along `axis`, sorted, and their int64 indices.
            TopK(TopKConfig) = indexing::parse_topk["TopK"];
            /// `OneHot(indices, depth, values)`: `values[1]` where the new axis's index is the class, else `values[0]`.
            OneHot(OneHotConfig) = indexing::parse_one_hot["OneHot"];
            /// A string op ([`text::TextOp`]): StringConcat, StringSplit, StringNormalizer, RegexFullMatch, ai.onnx.ml
            /// LabelEncoder.
            Text(TextOp) = text::parse_concat["StringConcat"], text::parse_split["StringSplit"],
                text::parse_normalizer["StringNormalizer"], text::parse_full_match["RegexFullMatch"];
            /// `ReverseSequence(input, sequence_lens)`: the first `sequence_lens[b]` elements of each batch entry
            /// reversed along the time axis; the batch axis is the other one of 0 and 1.
            ReverseSequence(ReverseSequenceConfig) = indexing::parse_reverse_sequence["ReverseSequence"];
            /// `Pad(data, pads, constant_value?, axes?)`.
            Pad(PadConfig) = indexing::parse_pad["Pad"];
            /// `Compress(data, condition)` along `axis`, or over the flattened data when `None`.
            Compress(CompressConfig) = indexing::parse_compress["Compress"];
            /// The `[rank, count]` coordinates of the non-zero elements.
            NonZero(NonZeroConfig) = indexing::parse_non_zero["NonZero"];
            /// Outputs: the distinct elements (or slices along `axis`), first-occurrence indices, inverse indices and
            /// counts.
            Unique(UniqueConfig) = indexing::parse_unique["Unique"];
            /// Listed axes (normalised, in the model's order) centre-cropped or zero-padded to `shape`.
            CenterCropPad(CenterCropPadConfig) = indexing::parse_center_crop_pad["CenterCropPad"];
            /// QuantizeLinear or DequantizeLinear.
            Quantize(QuantizeConfig) = quantize::parse["QuantizeLinear", "DequantizeLinear"];
            /// MatMulInteger, ConvInteger, QLinearMatMul or QLinearConv.
            QuantizedLinear(QuantizedLinearConfig) = quantize::parse_linear["MatMulInteger", "ConvInteger",
                "QLinearMatMul", "QLinearConv"];
            /// Outputs: quantized uint8 values, scale, zero point.
            DynamicQuantize(DynamicQuantizeConfig) = quantize::parse_dynamic["DynamicQuantizeLinear"];
            /// ONNX Runtime's QLinearAdd of two quantized tensors of one shape (lowered from `com.microsoft`).
            QLinearAdd(quantize::QLinearAddConfig);
            /// LpNormalization along `axis` with p = 1 or 2.
            LpNorm(LpNormConfig) = norm::parse_lp_norm["LpNormalization"];
            /// ArgMax or ArgMin.
            ArgReduce(ArgReduceConfig) = reduce::parse_arg["ArgMax", "ArgMin"];
            /// `Clip(x, min?, max?)`.
            Clip(ClipConfig) = elementwise::parse_clip["Clip"];
            /// `Gemm(A, B, C?)`.
            Gemm(GemmConfig) = linear::parse_gemm["Gemm"];
            /// `MatMul(a, b)` with numpy semantics. A model's MatMul has two inputs; the one that
            /// `passes::fuse_matmul_bias` makes of a MatMul and an Add has a third, a bias of shape `[n]` added to
            /// every row, and then `b` is a constant `[k, n]` matrix and `a` has rank 2 or more.
            MatMul(MatMulConfig) = linear::parse_matmul["MatMul"];
            /// `Det`: the determinant of each square matrix of the last two dims.
            Det(DetConfig) = linear::parse_det["Det"];
            /// `Einsum` of any number of inputs.
            Einsum(EinsumConfig) = linear::parse_einsum["Einsum"];
            /// `Conv(X, W, B?)`.
            Conv(ConvConfig) = conv::parse["Conv"];
            /// `ConvTranspose(X, W, B?)`.
            ConvTranspose(ConvTransposeConfig) = conv::parse_transpose["ConvTranspose"];
            /// `Col2Im(columns, image_shape, block_shape)` (opset 18).
            Col2Im(Col2ImConfig) = conv::parse_col2im["Col2Im"];
            /// `DeformConv(X, W, offset, B?, mask?)` (opsets 19, 22), 2-D.
            DeformConv(DeformConvConfig) = conv::parse_deform_conv["DeformConv"];
            /// MaxPool (with its optional `Indices` output), AveragePool or LpPool.
            Pool(PoolConfig) = pool::parse["MaxPool", "AveragePool", "LpPool"];
            /// `MaxUnpool(X, I, output_shape?)`: values scattered back to the positions MaxPool took them from.
            MaxUnpool(MaxUnpoolConfig) = pool::parse_max_unpool["MaxUnpool"];
            /// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: the window's reduction over all spatial dims, kept
            /// with size 1 (an average never counts padding: there is none).
            GlobalPool(PoolKind) = pool::parse_global["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"];
            /// InstanceNormalization, GroupNormalization or MeanVarianceNormalization.
            GroupNorm(GroupNormConfig) = norm::parse_group_norm["InstanceNormalization", "GroupNormalization",
                "MeanVarianceNormalization"];
            /// `DepthToSpace` or `SpaceToDepth` on `[N, C, H, W]`.
            DepthSpace(DepthSpaceConfig) = shape::parse_depth_space["DepthToSpace", "SpaceToDepth"];
            /// RandomUniform, RandomNormal (and `Like`), Bernoulli, Multinomial ([`random`]).
            Random(RandomConfig) = random::parse_random["RandomUniform", "RandomNormal", "RandomUniformLike",
                "RandomNormalLike", "Bernoulli", "Multinomial"];
            /// `EyeLike`: ones on a diagonal of a 2-D tensor of the input's shape, zeros elsewhere.
            EyeLike(EyeLikeConfig) = shape::parse_eye_like["EyeLike"];
            /// Softmax or LogSoftmax.
            Softmax(SoftmaxConfig) = softmax::parse["Softmax", "LogSoftmax"];
            /// BatchNormalization in inference form.
            BatchNorm(BatchNormConfig) = norm::parse["BatchNormalization"];
            /// LayerNormalization or RMSNormalization.
            LayerNorm(LayerNormConfig) = norm::parse_layer_norm["LayerNormalization", "RMSNormalization"];
            /// LRN (LocalResponseNormalization).
            Lrn(LrnConfig) = norm::parse_lrn["LRN"];
            /// `GatherElements(data, indices)`: `data` indexed along `axis` by `indices`, elementwise.
            GatherElements(GatherElementsConfig) = indexing::parse_gather_elements["GatherElements"];
            /// GatherND after `batch_dims` shared leading axes.
            GatherNd(GatherNdConfig) = indexing::parse_gather_nd["GatherND"];
            /// `ScatterElements` (and Scatter, opsets 9 and 10): `updates` written into `data` along `axis`.
            Scatter(ScatterConfig) = indexing::parse_scatter["ScatterElements", "Scatter", "ScatterND"];
            /// `ScatterND(data, indices, updates)`: slices of `updates` written at index tuples.
            ScatterNd(ScatterNdConfig);
            /// NegativeLogLikelihoodLoss or SoftmaxCrossEntropyLoss.
            Loss(LossConfig) = loss::parse["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"];
            /// Outputs: Y and, when requested, present key, present value and the QK product.
            Attention(AttentionConfig) = attention::parse["Attention"];
            /// `MatMul(Softmax(MatMul(Q, Kᵀ) · scale + mask, last axis), V)` on rank-4 float tensors, fused at import
            /// from the ops exporters write (no ONNX op of its own). Inputs: Q, Kᵀ as the model computes it, V, and an
            /// optional additive mask that broadcasts to the scores.
            ScaledDotProductAttention(ScaledDotProductAttentionConfig);
            /// `LinearAttention(query, key, value, past_state?, decay?, beta?)`: outputs the attention output and the
            /// present state.
            LinearAttention(LinearAttentionConfig) = attention::parse_linear_attention["LinearAttention"];
            /// `CausalConvWithState(input, weight, bias?, past_state?)`, SiLU applied when `silu`: outputs the
            /// convolution and the present state.
            CausalConv(CausalConvConfig) = conv::parse_causal_conv["CausalConvWithState"];
            /// `TensorScatter(past_cache, update, write_indices?)` along `axis`.
            TensorScatter(TensorScatterConfig) = indexing::parse_tensor_scatter["TensorScatter"];
            /// `DFT(input, dft_length?, axis?)`.
            Dft(DftConfig) = signal::parse_dft["DFT"];
            /// `STFT(signal, frame_step, window?, frame_length?)`.
            Stft(StftConfig) = signal::parse_stft["STFT"];
            /// `HannWindow`, `HammingWindow`, `BlackmanWindow` of `size` values.
            Window(WindowConfig) = signal::parse_window["HannWindow", "HammingWindow", "BlackmanWindow"];
            /// `MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)`:
            /// `[dft_length / 2 + 1, num_mel_bins]`.
            MelWeightMatrix(MelWeightMatrixConfig) = signal::parse_mel_weight_matrix["MelWeightMatrix"];
            /// `RotaryEmbedding(X, cos_cache, sin_cache, position_ids?)`: X rotated pairwise by the cached angles of
            /// each position; the output has X's type.
            RotaryEmbedding(RotaryConfig) = attention::parse_rotary["RotaryEmbedding"];
            /// Resize or Upsample.
            Resize(ResizeConfig) = resize::parse["Resize", "Upsample"];
            /// `NonMaxSuppression(boxes, scores, max_output_boxes_per_class?, iou_threshold?, score_threshold?)`; boxes
            /// as corners `[y1, x1, y2, x2]`, or `center_point_box` as `[x_center, y_center, width, height]`.
            NonMaxSuppression(NonMaxSuppressionConfig) = detection::parse_non_max_suppression["NonMaxSuppression"];
            /// `RoiAlign(X, rois, batch_indices)`: `[num_rois, C, output_height, output_width]`.
            RoiAlign(RoiAlignConfig) = detection::parse_roi_align["RoiAlign"];
            /// `MaxRoiPool(X, rois)`: `[num_rois, C, pooled_height, pooled_width]`.
            MaxRoiPool(MaxRoiPoolConfig) = detection::parse_max_roi_pool["MaxRoiPool"];
            /// `TfIdfVectorizer(X)`: each row's weighted n-gram counts of integer tokens, f32.
            TfIdfVectorizer(TfIdfConfig) = tfidf::parse_tfidf_vectorizer["TfIdfVectorizer"];
            /// ai.onnx.ml `TreeEnsemble(X)`: `[N, n_targets]` of X's type.
            TreeEnsemble(Box<TreeEnsembleConfig>);
            /// ai.onnx.ml SVMClassifier's calibrated probabilities from its one-vs-one scores: `[N, classes]`.
            SvmProbabilities(ml::SvmProbabilitiesConfig);
            /// ai.onnx.ml `ZipMap(X)`: each row of X `[N, C]` as a map from the class labels to its scores.
            ZipMap(ml::ZipMapConfig);
            /// ai.onnx.ml `DictVectorizer(X)`: a map's values at the vocabulary's keys, `[1, V]` (0 where absent).
            DictVectorizer(ml::DictVectorizerConfig);
            /// ai.onnx.ml `CastMap(X)`: an int64-keyed map's values in key order, cast, `[1, N]`.
            CastMap(ml::CastMapConfig);
            /// RNN/GRU/LSTM: outputs Y, Y_h (and Y_c for LSTM).
            Recurrent(RecurrentConfig) = recurrent::parse["RNN", "GRU", "LSTM"];
            /// `GridSample(X, grid)`: 2-D (4-D tensors) or any number of spatial axes.
            GridSample(GridSampleConfig) = resize::parse_grid_sample["GridSample"];
            /// `AffineGrid(theta, size)` (opset 20): the sampling grid `[N, spatial..., 2 or 3]`.
            AffineGrid(AffineGridConfig) = resize::parse_affine_grid["AffineGrid"];
            /// A node computed by a user hook.
            Custom(CustomOp);
            /// `If`: one branch runs, chosen by a boolean scalar; each branch's nodes read values of the enclosing
            /// graph and produce the If's outputs.
            If(Box<IfConfig>);
            /// `Scan` (opset 9 on): the body runs once per slice of the scan inputs, carrying states.
            Scan(Box<ScanConfig>);
            /// `Loop`: the body runs while the trip count and its condition allow, carrying values.
            Loop(Box<LoopConfig>);
            /// A sequence or optional op (see `sequence`).
            Sequence(SequenceOp) = sequence::parse["SequenceEmpty", "SequenceConstruct", "SequenceInsert",
                "SequenceAt", "SequenceErase", "SequenceLength", "SplitToSequence", "ConcatFromSequence", "Optional",
                "OptionalHasElement", "OptionalGetElement"];
            /// `SequenceMap`: the body runs once per position of the input sequences.
            SequenceMap(Box<SequenceMapConfig>);
            /// `ai.onnx.preview` `FlexAttention(Q, K, V)`: attention whose scores and probabilities pass through the
            /// model's own subgraphs.
            FlexAttention(Box<FlexAttentionConfig>);
            /// Output `[prod(dims[..axis]), prod(dims[axis..])]`.
            Flatten(FlattenConfig) = shape::parse_flatten["Flatten"];
            /// Target shape with ONNX's `0` (copy) and `-1` (infer) entries.
            Reshape(ReshapeConfig) = shape::parse_reshape["Reshape"];
            /// Reshape to a shape read at run time (same `0`/`-1` rules), of known rank. With `allowzero` a 0 is an
            /// empty dim rather than a copy of the input's.
            ReshapeRuntime(ReshapeRuntimeConfig);
            /// `Transpose` by `perm`.
            Transpose(TransposeConfig) = shape::parse_transpose["Transpose"];
            /// `Concat` along `axis`.
            Concat(ConcatConfig) = shape::parse_concat["Concat"];
            /// Sorted, normalised axes.
            Squeeze(SqueezeConfig) = shape::parse_squeeze["Squeeze"];
            /// Sorted axes of the output.
            Unsqueeze(UnsqueezeConfig) = shape::parse_unsqueeze["Unsqueeze"];
            /// Identity and inference-mode Dropout.
            Identity(IdentityConfig) = passthrough::parse["Identity", "Dropout"];
            /// Dropout that is not an Identity: in training mode random elements zeroed and the rest scaled, else the
            /// input; and, when asked for, the mask of kept elements. Inputs: the data and, when they are known only at
            /// run time, the ratio and training_mode.
            Dropout(DropoutConfig);
        }
    };
}

/// Defines [`Op`](super::Op), its type inference and the registry from the table (expanded in
/// the parent module, so that the op, like the IR's other types, sits above its families).
macro_rules! define_ops {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($payload:ty) $(= $($family:ident::$parser:ident[$($name:literal),+]),+)?;
    )*) => {
        /// A parsed operator, one variant per line of the table. Attribute-vs-input differences
        /// between opsets are resolved by the parsers, so code generation sees one meaning per
        /// variant.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Op {
            $($(#[doc = $doc])* $variant($payload),)*
        }

        impl Op {
            /// Output types from input types. The error message names the types seen.
            pub fn infer(&self, inputs: &[&TensorType]) -> std::result::Result<Vec<TensorType>, String> {
                match self {
                    $(Op::$variant(config) => config.infer_outputs(inputs),)*
                }
            }
        }

        /// The parser for an op of the default domain (`""` or `ai.onnx`), or `None` if unsupported.
        pub(crate) fn lookup(domain: &str, op_type: &str) -> Option<Parser> {
            if !crate::domain::is_default(domain) {
                return None;
            }
            match op_type {
                $($($($($name)|+ => Some($family::$parser),)+)?)*
                _ => None,
            }
        }

        /// Every op type of the default domain the table parses, in table order.
        pub fn op_types() -> &'static [&'static str] {
            &[$($($($($name,)+)+)?)*]
        }
    };
}

#[cfg(test)]
mod tests {
    use super::super::{arity, op_types};

    #[test]
    fn an_op_type_is_parsed_by_one_line() {
        let mut seen = std::collections::BTreeSet::new();
        for name in op_types() {
            assert!(seen.insert(name), "{name} appears twice in the op table");
        }
    }

    #[test]
    fn every_op_type_has_a_schema() {
        for name in op_types() {
            assert!(arity::schema(name, arity::NEWEST_OPSET).is_some(), "{name} has no schema in onnx.defs");
        }
    }
}
