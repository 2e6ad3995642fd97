//! The ops on string tensors ([`DType::String`]): StringConcat, StringSplit, StringNormalizer,
//! RegexFullMatch (default domain) and ai.onnx.ml's LabelEncoder. Equal and Identity also read
//! strings ([`reads_strings`]), and the ops that only move elements (Gather, Reshape, Slice, ...)
//! move them by their positions ([`string_movement`]); every other op refuses them at import.

use super::elementwise::{BinaryConfig, BinaryOp};
use super::lowered::{Lowered, Src};
use super::InferOp;
use super::{IdentityConfig, NodeCtx, Op, Parsed};
use crate::error::Result;
use crate::proto::TensorProto;
use crate::types::{DType, Dim, TensorType};
pub use onnx_op_types::CaseChange;

/// A text op, its attributes parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum TextOp {
    /// `StringConcat(X, Y)` (opset 20): elementwise concatenation, broadcast.
    Concat,
    /// `StringSplit(X)` (opset 20): each string's parts along a new last axis, padded with empty
    /// strings to the longest, and the number of parts (int64, X's shape).
    Split {
        /// The separator; `None` (the attribute unset or empty): runs of whitespace, leading and
        /// trailing whitespace ignored.
        delimiter: Option<String>,
        /// At most this many splits (the rest stays in the last part); `None`: no limit.
        max_splits: Option<usize>,
    },
    /// `StringNormalizer(X)` (opset 10) on `[C]` or `[1, C]`.
    Normalize(NormalizeConfig),
    /// `RegexFullMatch(X)` (opset 20): whether the whole string matches `pattern`.
    FullMatch {
        /// The model's RE2 pattern, rewritten for Rust's `regex` (see [`rust_pattern`]).
        pattern: String,
    },
    /// ai.onnx.ml `LabelEncoder` (ml opsets 2 to 4): each element looked up in `keys`, the value
    /// at its position, `default` when absent.
    LabelEncoder(LabelEncoderConfig),
    /// Each element's row-major position in X (int64, X's shape): what a data-movement op moves
    /// in place of the strings ([`string_movement`]).
    Positions,
    /// `Take(X, P)`: the elements of X at the positions P (P's shape).
    Take,
}

/// StringNormalizer's attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizeConfig {
    /// Elements equal to one of these are removed (before the case change).
    pub stopwords: Vec<String>,
    /// Whether stopwords match only with the same case.
    pub case_sensitive: bool,
    /// `case_change_action`.
    pub case: CaseChange,
    /// Only ASCII letters change case (`locale` C or POSIX); otherwise each character maps to
    /// its one-character Unicode counterpart (English locales).
    pub ascii_case: bool,
}

/// A LabelEncoder table: keys, values and the default, one type each.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelEncoderConfig {
    /// What elements of the input are compared with.
    pub keys: Labels,
    /// The value of each key, position by position.
    pub values: Labels,
    /// The output for an element matching no key (a one-element list of the values' type).
    pub default: Labels,
    /// The output's element type.
    pub value_dtype: DType,
}

/// A list of labels of one type.
#[derive(Debug, Clone, PartialEq)]
pub enum Labels {
    /// Strings.
    Strings(Vec<String>),
    /// Integers of any integer type.
    Ints(Vec<i64>),
    /// Floats (f32 and f64), as f64.
    Floats(Vec<f64>),
}

impl Labels {
    pub(crate) fn len(&self) -> usize {
        match self {
            Labels::Strings(v) => v.len(),
            Labels::Ints(v) => v.len(),
            Labels::Floats(v) => v.len(),
        }
    }
}

/// Whether `op` may read or produce string tensors: the text ops, Equal, Identity and
/// ai.onnx.ml's CastMap and DictVectorizer.
pub fn reads_strings(op: &Op) -> bool {
    matches!(
        op,
        Op::Text(_)
            | Op::Identity(IdentityConfig)
            | Op::Binary(BinaryConfig { op: BinaryOp::Equal, .. })
            | Op::CastMap(_)
            | Op::DictVectorizer(_)
    )
}

/// `op` applied to a string tensor by moving its elements' positions: `Positions(X)`, the op on
/// them (the other inputs as given), then `Take(X, moved)` (Shape and Size read the positions'
/// shape directly). For the ops that only move, copy or drop elements, X their first input, of
/// rank 1 or more (rank-0 strings are held as one-element vectors), no other input a string.
pub fn string_movement(op: &Op, inputs: &[Option<&TensorType>]) -> Option<Lowered> {
    let x = inputs.first().copied().flatten()?;
    let moves = op.keeps_low_bit_values()
        && !matches!(op, Op::Cast(_) | Op::Quantize(_) | Op::Concat(_) | Op::Split(_) | Op::ConstantOfShape(_));
    let other_strings = inputs[1..].iter().flatten().any(|t| t.dtype == DType::String);
    if !moves || x.dtype != DType::String || x.rank() == 0 || other_strings || reads_strings(op) {
        return None;
    }
    let mut plan = Lowered::default();
    let positions = plan.op(Op::Text(TextOp::Positions), &[Src::Input(0)]);
    let rest = (1..inputs.len()).map(|i| inputs[i].map(|_| Src::Input(i)));
    let moved = plan.op_optional(op.clone(), std::iter::once(Some(positions)).chain(rest).collect());
    let y = match op {
        Op::Shape(_) | Op::Size(_) => moved,
        _ => plan.op(Op::Text(TextOp::Take), &[Src::Input(0), moved]),
    };
    Some(plan.done(vec![Some(y)]))
}

/// Output types from input types.
pub fn infer(op: &TextOp, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
    let x = inputs[0];
    let label_input = matches!(op, TextOp::LabelEncoder(_));
    if !label_input && x.dtype != DType::String {
        return Err(format!("input X must be a string tensor, got {x}"));
    }
    Ok(match op {
        TextOp::Concat => {
            let y = inputs[1];
            if y.dtype != DType::String {
                return Err(format!("input Y must be a string tensor, got {y}"));
            }
            vec![TensorType::new(DType::String, super::common::broadcast_shapes(&x.shape, &y.shape)?)]
        }
        TextOp::Split { .. } => {
            let mut parts = x.shape.clone();
            parts.push(Dim::Unknown);
            vec![TensorType::new(DType::String, parts), TensorType::new(DType::I64, x.shape.clone())]
        }
        TextOp::Normalize(_) => {
            let shape = match x.shape[..] {
                [_] => vec![Dim::Unknown],
                [_, _] => vec![Dim::Static(1), Dim::Unknown],
                _ => return Err(format!("input X must be [C] or [1, C], got {x}")),
            };
            vec![TensorType::new(DType::String, shape)]
        }
        TextOp::FullMatch { .. } => vec![TensorType::new(DType::Bool, x.shape.clone())],
        TextOp::LabelEncoder(c) => vec![TensorType::new(c.value_dtype, x.shape.clone())],
        TextOp::Positions => vec![TensorType::new(DType::I64, x.shape.clone())],
        TextOp::Take => vec![TensorType::new(DType::String, inputs[1].shape.clone())],
    })
}

/// StringConcat (opset 20): no attributes.
pub fn parse_concat(_ctx: &NodeCtx) -> Result<Parsed> {
    Ok(Parsed::new(Op::Text(TextOp::Concat), 2))
}

/// StringSplit (opset 20): `delimiter`, `maxsplit`.
pub fn parse_split(ctx: &NodeCtx) -> Result<Parsed> {
    let delimiter = ctx.attrs.string("delimiter")?.filter(|d| !d.is_empty());
    let max_splits = match ctx.attrs.int("maxsplit")? {
        None => None,
        Some(n) => Some(usize::try_from(n).map_err(|_| ctx.error(format!("`maxsplit` must be positive, got {n}")))?),
    };
    Ok(Parsed::new(Op::Text(TextOp::Split { delimiter, max_splits }), 1))
}

/// StringNormalizer (opset 10): `case_change_action`, `is_case_sensitive`, `locale`, `stopwords`.
pub fn parse_normalizer(ctx: &NodeCtx) -> Result<Parsed> {
    let case = ctx.attrs.choice_or("case_change_action", CaseChange::Keep)?;
    let case_sensitive = ctx.attrs.int_or("is_case_sensitive", 0)? != 0;
    // C and POSIX change only ASCII letters; English locales (ONNX Runtime's default is
    // en_US.UTF-8) map characters one to one as Unicode does. Other locales' rules (Turkish
    // dotted i) are not implemented.
    let locale = ctx.attrs.string("locale")?.filter(|l| !l.is_empty());
    let base = locale.as_deref().map(|l| l.split(['.', '@']).next().unwrap_or_default());
    let ascii_case = matches!(base, Some("C" | "POSIX"));
    if let (Some(locale), Some(base)) = (&locale, base) {
        if !ascii_case && !base.starts_with("en") {
            return Err(ctx.error(format!(
                "attribute `locale` = `{locale}` is not supported (C, POSIX and English locales are)"
            )));
        }
    }
    let stopwords = ctx.attrs.strings_or_none("stopwords")?.unwrap_or_default();
    let x = ctx.input_type(0)?;
    if x.rank() == 2 && x.shape[0].as_static().is_some_and(|n| n != 1) {
        return Err(ctx.error(format!("input X must be [C] or [1, C], got {x}")));
    }
    Ok(Parsed::new(Op::Text(TextOp::Normalize(NormalizeConfig { stopwords, case_sensitive, case, ascii_case })), 1))
}

/// RegexFullMatch (opset 20): `pattern`, checked and rewritten at import.
pub fn parse_full_match(ctx: &NodeCtx) -> Result<Parsed> {
    let pattern = ctx.attrs.string("pattern")?.ok_or_else(|| ctx.error("attribute `pattern` is required"))?;
    let pattern = rust_pattern(&pattern).map_err(|e| ctx.error(format!("attribute `pattern` = `{pattern}`: {e}")))?;
    Ok(Parsed::new(Op::Text(TextOp::FullMatch { pattern }), 1))
}

/// An RE2 pattern as a Rust `regex` pattern matching the whole string with the same meaning:
/// anchored at both ends, and `\w`, `\d`, `\s`, `\b` (and their negations) ASCII-only as in RE2
/// (Rust's are Unicode-aware). Syntax Rust's regex does not accept (RE2 accepts little more) is
/// an error.
pub fn rust_pattern(re2: &str) -> Result<String, String> {
    use regex_syntax::ast::{self, visit, Ast, ClassPerlKind, Visitor};

    /// The byte ranges of the Perl classes and word boundaries, with their ASCII spelling.
    struct PerlSpans(Vec<(usize, usize, &'static str)>);
    impl Visitor for PerlSpans {
        type Output = Vec<(usize, usize, &'static str)>;
        type Err = String;
        fn finish(self) -> Result<Self::Output, String> {
            Ok(self.0)
        }
        fn visit_pre(&mut self, ast: &Ast) -> Result<(), String> {
            match ast {
                Ast::ClassPerl(c) => {
                    self.0.push((c.span.start.offset, c.span.end.offset, perl(&c.kind, c.negated, false)))
                }
                Ast::Assertion(a) => {
                    let ascii = match a.kind {
                        ast::AssertionKind::WordBoundary => r"(?-u:\b)",
                        ast::AssertionKind::NotWordBoundary => r"(?-u:\B)",
                        _ => return Ok(()),
                    };
                    self.0.push((a.span.start.offset, a.span.end.offset, ascii));
                }
                _ => {}
            }
            Ok(())
        }
        fn visit_class_set_item_pre(&mut self, item: &ast::ClassSetItem) -> Result<(), String> {
            if let ast::ClassSetItem::Perl(c) = item {
                self.0.push((c.span.start.offset, c.span.end.offset, perl(&c.kind, c.negated, true)));
            }
            Ok(())
        }
    }
    /// RE2's ASCII classes; inside brackets without their own.
    fn perl(kind: &ClassPerlKind, negated: bool, in_brackets: bool) -> &'static str {
        match (kind, negated, in_brackets) {
            (ClassPerlKind::Digit, false, false) => "[0-9]",
            (ClassPerlKind::Digit, false, true) => "0-9",
            (ClassPerlKind::Digit, true, false) => "[^0-9]",
            (ClassPerlKind::Digit, true, true) => "[:^digit:]",
            (ClassPerlKind::Word, false, false) => "[0-9A-Za-z_]",
            (ClassPerlKind::Word, false, true) => "0-9A-Za-z_",
            (ClassPerlKind::Word, true, false) => "[^0-9A-Za-z_]",
            (ClassPerlKind::Word, true, true) => "[:^word:]",
            (ClassPerlKind::Space, false, false) => r"[\t\n\f\r ]",
            (ClassPerlKind::Space, false, true) => r"\t\n\f\r ",
            (ClassPerlKind::Space, true, false) => r"[^\t\n\f\r ]",
            // [:^space:] also excludes \v, which RE2's \S matches: too rare to spell out.
            (ClassPerlKind::Space, true, true) => "[:^space:]",
        }
    }

    let parsed = ast::parse::Parser::new().parse(re2).map_err(|e| e.kind().to_string())?;
    let mut spans = visit(&parsed, PerlSpans(vec![]))?;
    spans.sort_unstable();
    let mut rewritten = String::with_capacity(re2.len() + 16);
    let mut at = 0;
    for (start, end, ascii) in spans {
        rewritten.push_str(&re2[at..start]);
        rewritten.push_str(ascii);
        at = end;
    }
    rewritten.push_str(&re2[at..]);
    let anchored = format!("^(?:{rewritten})$");
    regex_syntax::Parser::new().parse(&anchored).map_err(|e| e.to_string())?;
    Ok(anchored)
}

/// ai.onnx.ml LabelEncoder, ml opsets 2 to 4 (opset 1's `classes_strings` form is refused).
pub fn parse_label_encoder(ctx: &NodeCtx) -> Result<Parsed> {
    if ctx.opset < 2 {
        return Err(ctx.error("LabelEncoder of ai.onnx.ml opset 1 (`classes_strings`) is not supported, opset 2+ is"));
    }
    let (keys, key_dtype) = one_label_list(ctx, "keys")?;
    let (values, value_dtype) = one_label_list(ctx, "values")?;
    if keys.len() != values.len() {
        return Err(ctx.error(format!("{} keys but {} values: they must pair up", keys.len(), values.len())));
    }
    let x = ctx.input_type(0)?;
    if !same_label_type(x.dtype, key_dtype) {
        return Err(ctx.error(format!("input X is {x}, but the keys are {key_dtype}")));
    }
    let default = label_default(ctx, &values, value_dtype)?;
    Ok(Parsed::new(Op::Text(TextOp::LabelEncoder(LabelEncoderConfig { keys, values, default, value_dtype })), 1))
}

/// Whether elements of `x` can equal keys of `keys` (floats of both widths compare as f64).
fn same_label_type(x: DType, keys: DType) -> bool {
    x == keys || (matches!(x, DType::F32 | DType::F64) && matches!(keys, DType::F32 | DType::F64))
}

/// The one attribute of `<prefix>_strings`, `<prefix>_int64s`, `<prefix>_floats` or
/// `<prefix>_tensor` the node sets, and its element type.
fn one_label_list(ctx: &NodeCtx, prefix: &str) -> Result<(Labels, DType)> {
    let strings = ctx.attrs.strings_or_none(&format!("{prefix}_strings"))?;
    let ints = ctx.attrs.ints(&format!("{prefix}_int64s"))?;
    let floats = ctx.attrs.floats(&format!("{prefix}_floats"))?;
    let tensor = if ctx.opset >= 4 { ctx.attrs.tensor_proto(&format!("{prefix}_tensor"))? } else { None };
    let mut given: Vec<(Labels, DType)> = vec![];
    given.extend(strings.map(|v| (Labels::Strings(v), DType::String)));
    given.extend(ints.map(|v| (Labels::Ints(v), DType::I64)));
    given.extend(floats.map(|v| (Labels::Floats(v.into_iter().map(f64::from).collect()), DType::F32)));
    if let Some(t) = tensor {
        given.push(tensor_labels(ctx, t, &format!("{prefix}_tensor"))?);
    }
    match given.len() {
        1 => Ok(given.remove(0)),
        n => Err(ctx.error(format!(
            "exactly one of `{prefix}_strings`, `{prefix}_int64s`, `{prefix}_floats`{} must be set, {n} are",
            if ctx.opset >= 4 { format!(", `{prefix}_tensor`") } else { String::new() }
        ))),
    }
}

/// A tensor attribute's labels: strings, integers or floats, of one of LabelEncoder-4's types.
fn tensor_labels(ctx: &NodeCtx, proto: &TensorProto, name: &str) -> Result<(Labels, DType)> {
    let dtype = DType::from_onnx(proto.data_type());
    let fail = |message: String| ctx.error(format!("attribute `{name}`: {message}"));
    match dtype {
        Some(DType::String) => {
            let (_, values) = crate::tensor::strings_from_proto(proto).map_err(|e| fail(e.to_string()))?;
            Ok((Labels::Strings(values), DType::String))
        }
        Some(t @ (DType::I64 | DType::I32 | DType::I16 | DType::F32 | DType::F64)) => {
            let data = crate::tensor::TensorData::from_proto(proto, &crate::external::SideData::new(None))
                .map_err(|e| fail(e.to_string()))?;
            let labels = if t.kind() == crate::types::Kind::Int {
                Labels::Ints(data.to_i64s().ok_or_else(|| fail("unreadable integers".into()))?)
            } else {
                Labels::Floats(data.to_f64s().ok_or_else(|| fail("unreadable floats".into()))?)
            };
            Ok((labels, t))
        }
        _ => Err(fail(format!(
            "type code {} is not one of string, int64, int32, int16, float, double",
            proto.data_type()
        ))),
    }
}

/// The value for keys not found: `default_tensor` (opset 4) or the `default_*` of the values'
/// type, with the schema's defaults (`_Unused`, -1, -0.0).
fn label_default(ctx: &NodeCtx, values: &Labels, dtype: DType) -> Result<Labels> {
    if ctx.opset >= 4 {
        if let Some(t) = ctx.attrs.tensor_proto("default_tensor")? {
            let (default, default_dtype) = tensor_labels(ctx, t, "default_tensor")?;
            if default_dtype != dtype || default.len() != 1 {
                return Err(ctx.error(format!(
                    "attribute `default_tensor` must hold one {dtype} value, got {} of {default_dtype}",
                    default.len()
                )));
            }
            ctx.attrs.ignore(&["default_string", "default_int64", "default_float"]);
            return Ok(default);
        }
    }
    // The defaults of the other types are read (and so accepted) but cannot matter.
    let string = ctx.attrs.string("default_string")?.unwrap_or_else(|| "_Unused".into());
    let int = ctx.attrs.int_or("default_int64", -1)?;
    let float = ctx.attrs.float_or("default_float", -0.0)?;
    Ok(match values {
        Labels::Strings(_) => Labels::Strings(vec![string]),
        Labels::Ints(_) => Labels::Ints(vec![int]),
        Labels::Floats(_) => Labels::Floats(vec![f64::from(float)]),
    })
}

impl InferOp for TextOp {
    fn infer_outputs(&self, inputs: &[&TensorType]) -> Result<Vec<TensorType>, String> {
        infer(self, inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::rust_pattern;

    #[test]
    fn patterns_are_anchored_with_ascii_perl_classes() {
        assert_eq!(rust_pattern(r"a\w+").unwrap(), r"^(?:a[0-9A-Za-z_]+)$");
        assert_eq!(rust_pattern(r"[\w.\-]{0,25}\b").unwrap(), r"^(?:[0-9A-Za-z_.\-]{0,25}(?-u:\b))$");
        assert_eq!(rust_pattern(r"\D[\S]").unwrap(), r"^(?:[^0-9][[:^space:]])$");
        assert_eq!(rust_pattern(r"x|y").unwrap(), r"^(?:x|y)$");
    }

    #[test]
    fn invalid_patterns_are_errors() {
        assert!(rust_pattern(r"(a").is_err());
        assert!(rust_pattern(r"(a)\1").is_err());
    }
}
