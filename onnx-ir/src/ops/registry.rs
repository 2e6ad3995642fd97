//! The one table from (domain, op_type) to the family that parses it.

use super::{
    attention, conv, detection, elementwise, indexing, linear, loss, norm, passthrough, pool, quantize, random,
    recurrent, reduce, resize, sequence, shape, signal, softmax, text, tfidf, NodeCtx, Parsed,
};
use crate::error::Result;

type Parser = fn(&NodeCtx) -> Result<Parsed>;

/// The parser for an op of the default domain (`""` or `ai.onnx`), or `None` if unsupported.
pub fn lookup(domain: &str, op_type: &str) -> Option<Parser> {
    if !crate::domain::is_default(domain) {
        return None;
    }
    Some(match op_type {
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "Equal" | "Less" | "LessOrEqual" | "Greater"
        | "GreaterOrEqual" | "And" | "Or" | "Xor" | "BitShift" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor"
        | "PRelu" => elementwise::parse_binary,
        "Relu" | "Sigmoid" | "Tanh" | "LeakyRelu" | "Abs" | "Neg" | "Exp" | "Log" | "Sqrt" | "Reciprocal" | "Ceil"
        | "Floor" | "Round" | "Sin" | "Cos" | "Tan" | "Asin" | "Acos" | "Atan" | "Sinh" | "Cosh" | "Asinh"
        | "Acosh" | "Atanh" | "Erf" | "Sign" | "Softplus" | "Softsign" | "Elu" | "Selu" | "Celu" | "HardSigmoid"
        | "HardSwish" | "Swish" | "Mish" | "Gelu" | "ThresholdedRelu" | "Shrink" | "IsNaN" | "IsInf" | "Not"
        | "BitwiseNot" => elementwise::parse_unary,
        "Max" | "Min" | "Sum" | "Mean" => elementwise::parse_variadic,
        "Where" => elementwise::parse_where,
        "Cast" | "CastLike" => elementwise::parse_cast,
        "BitCast" => elementwise::parse_bitcast,
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce::parse_reduce,
        "ArgMax" | "ArgMin" => reduce::parse_arg,
        "Shape" => indexing::parse_shape,
        "Size" => indexing::parse_size,
        "ConstantOfShape" => indexing::parse_constant_of_shape,
        "Range" => indexing::parse_range,
        "Expand" => indexing::parse_expand,
        "Gather" => indexing::parse_gather,
        "Slice" => indexing::parse_slice,
        "Split" => indexing::parse_split,
        "Tile" => indexing::parse_tile,
        "Trilu" => indexing::parse_trilu,
        "CumSum" | "CumProd" => indexing::parse_cumsum,
        "Hardmax" => indexing::parse_hardmax,
        "TopK" => indexing::parse_topk,
        "OneHot" => indexing::parse_one_hot,
        "Pad" => indexing::parse_pad,
        "Unique" => indexing::parse_unique,
        "CenterCropPad" => indexing::parse_center_crop_pad,
        "Compress" => indexing::parse_compress,
        "NonZero" => indexing::parse_non_zero,
        "Col2Im" => conv::parse_col2im,
        "QuantizeLinear" | "DequantizeLinear" => quantize::parse,
        "MatMulInteger" | "ConvInteger" | "QLinearMatMul" | "QLinearConv" => quantize::parse_linear,
        "DynamicQuantizeLinear" => quantize::parse_dynamic,
        "LpNormalization" => norm::parse_lp_norm,
        "LRN" => norm::parse_lrn,
        "Attention" => attention::parse,
        "RotaryEmbedding" => attention::parse_rotary,
        "DFT" => signal::parse_dft,
        "STFT" => signal::parse_stft,
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => signal::parse_window,
        "MelWeightMatrix" => signal::parse_mel_weight_matrix,
        "LinearAttention" => attention::parse_linear_attention,
        "CausalConvWithState" => conv::parse_causal_conv,
        "TensorScatter" => indexing::parse_tensor_scatter,
        "Resize" | "Upsample" => resize::parse,
        "GridSample" => resize::parse_grid_sample,
        "AffineGrid" => resize::parse_affine_grid,
        "NonMaxSuppression" => detection::parse_non_max_suppression,
        "RoiAlign" => detection::parse_roi_align,
        "MaxRoiPool" => detection::parse_max_roi_pool,
        "TfIdfVectorizer" => tfidf::parse_tfidf_vectorizer,
        "RNN" | "GRU" | "LSTM" => recurrent::parse,
        "Clip" => elementwise::parse_clip,
        "Gemm" => linear::parse_gemm,
        "MatMul" => linear::parse_matmul,
        "Einsum" => linear::parse_einsum,
        "Det" => linear::parse_det,
        "Conv" => conv::parse,
        "DeformConv" => conv::parse_deform_conv,
        "MaxUnpool" => pool::parse_max_unpool,
        "ConvTranspose" => conv::parse_transpose,
        "MaxPool" | "AveragePool" | "LpPool" => pool::parse,
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => pool::parse_global,
        "InstanceNormalization" | "GroupNormalization" | "MeanVarianceNormalization" => norm::parse_group_norm,
        "DepthToSpace" | "SpaceToDepth" => shape::parse_depth_space,
        "EyeLike" => shape::parse_eye_like,
        "RandomUniform" | "RandomNormal" | "RandomUniformLike" | "RandomNormalLike" | "Bernoulli" | "Multinomial" => {
            random::parse_random
        }
        "Softmax" | "LogSoftmax" => softmax::parse,
        "BatchNormalization" => norm::parse,
        "LayerNormalization" | "RMSNormalization" => norm::parse_layer_norm,
        "GatherElements" => indexing::parse_gather_elements,
        "ReverseSequence" => indexing::parse_reverse_sequence,
        "StringConcat" => text::parse_concat,
        "StringSplit" => text::parse_split,
        "StringNormalizer" => text::parse_normalizer,
        "RegexFullMatch" => text::parse_full_match,
        "GatherND" => indexing::parse_gather_nd,
        "ScatterElements" | "Scatter" | "ScatterND" => indexing::parse_scatter,
        "NegativeLogLikelihoodLoss" | "SoftmaxCrossEntropyLoss" => loss::parse,
        "Flatten" => shape::parse_flatten,
        "Reshape" => shape::parse_reshape,
        "Transpose" => shape::parse_transpose,
        "Concat" => shape::parse_concat,
        "Squeeze" => shape::parse_squeeze,
        "Unsqueeze" => shape::parse_unsqueeze,
        "Identity" | "Dropout" => passthrough::parse,
        "SequenceEmpty" | "SequenceConstruct" | "SequenceInsert" | "SequenceAt" | "SequenceErase"
        | "SequenceLength" | "SplitToSequence" | "ConcatFromSequence" | "Optional" | "OptionalHasElement"
        | "OptionalGetElement" => sequence::parse,
        _ => return None,
    })
}
