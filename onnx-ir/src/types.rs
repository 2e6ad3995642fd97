//! Element types and (possibly symbolic) shapes of the values flowing through a graph.

use crate::proto::tensor_shape_proto::{dimension::Value as DimValue, Dimension};
use crate::proto::TypeProto;
pub use onnx_op_types::MiniFloat;
use std::fmt;

/// Element type of a tensor, restricted to the ONNX types the importer can represent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE half precision (`FLOAT16`).
    F16,
    /// bfloat16 (`BFLOAT16`).
    BF16,
    /// `FLOAT`.
    F32,
    /// `DOUBLE`.
    F64,
    /// `INT8`.
    I8,
    /// `INT16`.
    I16,
    /// `INT32`.
    I32,
    /// `INT64`.
    I64,
    /// `UINT8`.
    U8,
    /// `UINT16`.
    U16,
    /// `UINT32`.
    U32,
    /// `UINT64`.
    U64,
    /// `BOOL`.
    Bool,
    /// The ONNX 8-bit and 4-bit floats and 4-bit and 2-bit integers. No backend computes in
    /// them: their values travel in a carrier type ([`DType::carrier`]), f32 for the floats
    /// (each value exactly representable in the narrow type) and Burn's int for the integers.
    /// Only casts, quantization and data movement touch them (see `ops::keeps_low_bit_values`).
    ///
    /// This one is `FLOAT8E4M3FN`: 4 exponent, 3 mantissa bits, no infinities.
    F8E4M3FN,
    /// `FLOAT8E4M3FNUZ`: as [`DType::F8E4M3FN`] with no negative zero (its pattern is NaN).
    F8E4M3FNUZ,
    /// `FLOAT8E5M2`: 5 exponent, 2 mantissa bits, with infinities.
    F8E5M2,
    /// `FLOAT8E5M2FNUZ`: 5 exponent, 2 mantissa bits, no infinities, no negative zero.
    F8E5M2FNUZ,
    /// `FLOAT8E8M0`: 8 exponent bits, no sign, no mantissa: the powers of two 2^-127 ..
    /// 2^127 (bias 127), the all-ones pattern NaN; no zero. The scales of the MX formats.
    F8E8M0,
    /// `FLOAT4E2M1`: 2 exponent, 1 mantissa bit.
    F4E2M1,
    /// `UINT4`, carried in u8.
    U4,
    /// `INT4`, carried in i8.
    I4,
    /// `UINT2`, carried in u8.
    U2,
    /// `INT2`, carried in i8.
    I2,
    /// `STRING`: UTF-8 text, one string per element. Not a Burn tensor: the generated code
    /// holds string tensors in `burn_onnx::StringTensor`, and only the text ops, Equal and
    /// Identity read them (`ops::reads_strings`). Never a [`crate::TensorData`].
    String,
}

/// The three tensor kinds Burn distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Floating point, any width.
    Float,
    /// Signed or unsigned integer, any width.
    Int,
    /// Boolean.
    Bool,
    /// Text ([`DType::String`]).
    String,
}

impl DType {
    /// The narrow float this type is (the 8- and 4-bit floats), `None` for every other type.
    pub fn mini_float(self) -> Option<MiniFloat> {
        Some(match self {
            Self::F8E4M3FN => MiniFloat::E4M3FN,
            Self::F8E4M3FNUZ => MiniFloat::E4M3FNUZ,
            Self::F8E5M2 => MiniFloat::E5M2,
            Self::F8E5M2FNUZ => MiniFloat::E5M2FNUZ,
            Self::F4E2M1 => MiniFloat::E2M1,
            _ => return None,
        })
    }

    /// Maps `TensorProto.DataType`; `None` for types we cannot hold (complex).
    pub fn from_onnx(code: i32) -> Option<Self> {
        Some(match code {
            1 => Self::F32,
            2 => Self::U8,
            3 => Self::I8,
            4 => Self::U16,
            5 => Self::I16,
            6 => Self::I32,
            7 => Self::I64,
            8 => Self::String,
            9 => Self::Bool,
            10 => Self::F16,
            11 => Self::F64,
            12 => Self::U32,
            13 => Self::U64,
            16 => Self::BF16,
            17 => Self::F8E4M3FN,
            18 => Self::F8E4M3FNUZ,
            19 => Self::F8E5M2,
            20 => Self::F8E5M2FNUZ,
            21 => Self::U4,
            22 => Self::I4,
            23 => Self::F4E2M1,
            24 => Self::F8E8M0,
            25 => Self::U2,
            26 => Self::I2,
            _ => return None,
        })
    }

    /// Bytes per element in the little-endian layout of [`crate::TensorData`] (the carrier's,
    /// for the low-bit types).
    pub fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 | Self::Bool => 1,
            Self::F16 | Self::BF16 | Self::I16 | Self::U16 => 2,
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F64 | Self::I64 | Self::U64 => 8,
            // No byte layout: string values never become a `TensorData` (`from_proto` refuses them).
            Self::String => 0,
            low => low.carrier().size(),
        }
    }

    /// The tensor kind holding this type (a low-bit type's carrier's kind).
    pub fn kind(self) -> Kind {
        self.carrier().kind_of_standard()
    }

    /// The type whose layout holds this type's values: the low-bit types' carriers (f32 for
    /// the narrow floats, i8/u8 for the narrow integers), every other type itself.
    pub fn carrier(self) -> DType {
        match self {
            Self::F8E4M3FN | Self::F8E4M3FNUZ | Self::F8E5M2 | Self::F8E5M2FNUZ | Self::F8E8M0 | Self::F4E2M1 => {
                Self::F32
            }
            Self::I4 | Self::I2 => Self::I8,
            Self::U4 | Self::U2 => Self::U8,
            standard => standard,
        }
    }

    /// One of the 8-, 4- and 2-bit types carried in a wider type.
    pub fn is_low_bit(self) -> bool {
        self.carrier() != self
    }

    /// Bits per element in ONNX's serialized layout (`raw_data`): 4- and 2-bit elements are
    /// packed, first element in the least significant bits.
    pub fn onnx_bits(self) -> usize {
        match self {
            Self::F8E4M3FN | Self::F8E4M3FNUZ | Self::F8E5M2 | Self::F8E5M2FNUZ | Self::F8E8M0 => 8,
            Self::F4E2M1 | Self::U4 | Self::I4 => 4,
            Self::U2 | Self::I2 => 2,
            standard => 8 * standard.size(),
        }
    }

    /// Width in bits and signedness of an integer type (the narrow ones included); `None`
    /// for floats and bool.
    pub fn int_bits(self) -> Option<(u32, bool)> {
        let signed = matches!(self, Self::I2 | Self::I4 | Self::I8 | Self::I16 | Self::I32 | Self::I64);
        (self.kind() == Kind::Int).then(|| (self.onnx_bits() as u32, signed))
    }

    /// Whether every value of integer type `self` is a value of integer type `wider` (so a
    /// cast between them changes no value).
    pub fn int_range_within(self, wider: DType) -> bool {
        match (self.int_bits(), wider.int_bits()) {
            (Some((bits, signed)), Some((wider_bits, wider_signed))) => {
                (signed == wider_signed && bits <= wider_bits) || (!signed && wider_signed && bits < wider_bits)
            }
            _ => false,
        }
    }

    fn kind_of_standard(self) -> Kind {
        match self {
            Self::F16 | Self::BF16 | Self::F32 | Self::F64 => Kind::Float,
            Self::Bool => Kind::Bool,
            Self::String => Kind::String,
            _ => Kind::Int,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = format!("{self:?}").to_lowercase();
        f.write_str(&name)
    }
}

/// One dimension of a shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A size known at import time (`dim_value`).
    Static(usize),
    /// A named dimension (`dim_param`), such as a dynamic batch.
    Symbolic(String),
    /// Neither a size nor a name: the model leaves it open, or inference cannot tell.
    Unknown,
}

impl Dim {
    /// A dim as a `TensorShapeProto` gives it: a size, a name, or neither.
    pub(crate) fn from_proto(dim: &Dimension) -> Self {
        match &dim.value {
            Some(DimValue::DimValue(v)) if *v >= 0 => Self::Static(*v as usize),
            Some(DimValue::DimParam(p)) if !p.is_empty() => Self::Symbolic(p.clone()),
            _ => Self::Unknown,
        }
    }

    /// The size, when known at import time.
    pub fn as_static(&self) -> Option<usize> {
        match self {
            Self::Static(n) => Some(*n),
            _ => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Static(n) => write!(f, "{n}"),
            Self::Symbolic(s) => f.write_str(s),
            Self::Unknown => f.write_str("?"),
        }
    }
}

/// What holds a value's tensors: a tensor itself, or one of ONNX's sequence and optional
/// types. The tensors a sequence holds share one dtype and rank (typed Rust needs both), their
/// dims may differ (merged to [`Dim::Unknown`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Holder {
    /// A tensor.
    #[default]
    Tensor,
    /// `seq(tensor)`.
    Sequence,
    /// A sequence known to be empty at import (what `SequenceEmpty` makes, before anything is
    /// inserted): its rank is not fixed yet, `shape` is empty and says nothing.
    EmptySequence,
    /// `optional(tensor)`.
    Optional,
    /// `optional(seq(tensor))`.
    OptionalSequence,
    /// `seq(map(int64 or string, float))`, what ai.onnx.ml ZipMap makes: one map per row from
    /// each class label to its score (`dtype` is the scores', `shape` the rows).
    MapSequence {
        /// The keys are strings (else int64).
        string_keys: bool,
    },
    /// `map(int64 or string, T)`, what ai.onnx.ml DictVectorizer and CastMap read: one map from
    /// keys to values of `dtype` (`shape` is empty).
    Map {
        /// The keys are strings (else int64).
        string_keys: bool,
    },
}

impl Holder {
    /// A sequence (known empty or not), optional or not.
    pub fn is_sequence(self) -> bool {
        matches!(self, Self::Sequence | Self::EmptySequence | Self::OptionalSequence)
    }

    /// An optional of a tensor or of a sequence.
    pub fn is_optional(self) -> bool {
        matches!(self, Self::Optional | Self::OptionalSequence)
    }
}

/// Element type and shape of a tensor value, or of the tensors a sequence or optional holds
/// ([`Holder`]); the rank is always known (but for [`Holder::EmptySequence`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// The element type.
    pub dtype: DType,
    /// One entry per axis, outermost first; empty for a scalar.
    pub shape: Vec<Dim>,
    /// A tensor, or the sequence or optional holding tensors of this dtype and shape.
    pub holder: Holder,
}

impl TensorType {
    /// A tensor type from its parts.
    pub fn new(dtype: DType, shape: Vec<Dim>) -> Self {
        Self { dtype, shape, holder: Holder::Tensor }
    }

    /// This type's tensors held as `holder`.
    pub fn held(self, holder: Holder) -> Self {
        Self { holder, ..self }
    }

    /// The type of one tensor this value holds (itself for a tensor).
    pub fn tensor(&self) -> Self {
        Self::new(self.dtype, self.shape.clone())
    }

    /// A tensor, not a sequence or optional.
    pub fn is_tensor(&self) -> bool {
        self.holder == Holder::Tensor
    }

    /// A type whose every dimension is known.
    pub fn from_static(dtype: DType, dims: &[usize]) -> Self {
        Self::new(dtype, dims.iter().map(|&d| Dim::Static(d)).collect())
    }

    /// The number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Same dtype, rank and holder: what typed Rust needs of two values that share a variable.
    pub fn same_kind(&self, other: &TensorType) -> bool {
        self.dtype == other.dtype && self.rank() == other.rank() && self.holder == other.holder
    }

    /// The one type holding values of both types (a value of either can take the other's
    /// variable), dims that differ unknown: same dtype, rank and holder, or a sequence empty at
    /// import and a sequence of the same dtype.
    pub fn unify(&self, other: &TensorType) -> Option<TensorType> {
        let (a, b) = match (self.holder, other.holder) {
            (Holder::EmptySequence, Holder::Sequence) => (other, other),
            (Holder::Sequence, Holder::EmptySequence) => (self, self),
            _ => (self, other),
        };
        let shape = a.shape.iter().zip(&b.shape).map(|(x, y)| if x == y { x.clone() } else { Dim::Unknown });
        (self.dtype == other.dtype && a.same_kind(b)).then(|| TensorType::new(a.dtype, shape.collect()).held(a.holder))
    }

    /// The shape as numbers when every dimension is known at import time.
    pub fn static_shape(&self) -> Option<Vec<usize>> {
        self.shape.iter().map(Dim::as_static).collect()
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.holder {
            Holder::Tensor => {}
            Holder::Sequence => return write!(f, "seq({})", self.tensor()),
            Holder::EmptySequence => return write!(f, "seq({}, empty)", self.dtype),
            Holder::Optional => return write!(f, "optional({})", self.tensor()),
            Holder::OptionalSequence => return write!(f, "optional(seq({}))", self.tensor()),
            Holder::MapSequence { string_keys } => {
                return write!(f, "seq(map({}, {}))", if string_keys { "string" } else { "int64" }, self.dtype)
            }
            Holder::Map { string_keys } => {
                return write!(f, "map({}, {})", if string_keys { "string" } else { "int64" }, self.dtype)
            }
        }
        write!(f, "{}[", self.dtype)?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// A value's type from its `TypeProto`: a tensor, a sequence of tensors, or an optional of
/// either, ZipMap's sequence of maps, or a map of numbers or strings (the types [`Holder`]
/// holds). Sequences of sequences, other maps and sparse tensors are refused.
pub(crate) fn type_of(ty: &TypeProto) -> Result<TensorType, String> {
    use crate::proto::type_proto::Value as Type;
    fn element(ty: &Option<Box<TypeProto>>) -> Result<&TypeProto, String> {
        ty.as_deref().ok_or("it does not say its element type".to_string())
    }
    match &ty.value {
        Some(Type::TensorType(_)) => tensor_type_of(ty),
        Some(Type::SequenceType(s)) => {
            let element = element(&s.elem_type)?;
            if let Some(Type::MapType(map)) = &element.value {
                return score_maps_of(map);
            }
            let tensors = tensor_type_of(element).map_err(|m| format!("its tensors' type: {m}"))?;
            Ok(tensors.held(Holder::Sequence))
        }
        Some(Type::OptionalType(o)) => {
            let inner = type_of(element(&o.elem_type)?)?;
            match inner.holder {
                Holder::Tensor => Ok(inner.held(Holder::Optional)),
                Holder::Sequence => Ok(inner.held(Holder::OptionalSequence)),
                _ => Err(format!("an optional of {inner} is not supported")),
            }
        }
        Some(Type::MapType(map)) => map_of(map),
        _ => Err("only tensors, sequences of tensors, optionals of either, maps and sequences of maps from labels to \
                  floats are supported"
            .into()),
    }
}

/// `map(int64 or string, float, double, int64 or string)`.
fn map_of(map: &crate::proto::type_proto::Map) -> Result<TensorType, String> {
    let refused =
        || "of maps, only maps from int64 or string keys to float, double, int64 or string values are supported";
    let string_keys = match DType::from_onnx(map.key_type()) {
        Some(DType::String) => true,
        Some(DType::I64) => false,
        _ => return Err(refused().into()),
    };
    let value = map.value_type.as_deref().and_then(|v| v.tensor_type()).and_then(|t| DType::from_onnx(t.elem_type()));
    match value {
        Some(dtype @ (DType::F32 | DType::F64 | DType::I64 | DType::String)) => {
            Ok(TensorType::new(dtype, vec![]).held(Holder::Map { string_keys }))
        }
        _ => Err(refused().into()),
    }
}

/// `seq(map(int64 or string, float))`, ZipMap's output; other maps are refused.
fn score_maps_of(map: &crate::proto::type_proto::Map) -> Result<TensorType, String> {
    let string_keys = match DType::from_onnx(map.key_type()) {
        Some(DType::String) => true,
        Some(DType::I64) => false,
        _ => return Err("of maps, only sequences of maps from int64 or string keys to floats are supported".into()),
    };
    let value = map.value_type.as_deref().and_then(|v| v.tensor_type()).map(|t| t.elem_type());
    if value.and_then(DType::from_onnx) != Some(DType::F32) {
        return Err("of maps, only sequences of maps from int64 or string keys to floats are supported".into());
    }
    Ok(TensorType::new(DType::F32, vec![Dim::Unknown]).held(Holder::MapSequence { string_keys }))
}

fn tensor_type_of(ty: &TypeProto) -> Result<TensorType, String> {
    let tensor =
        ty.tensor_type().ok_or("only sequences of tensors are supported (not of sequences, maps or optionals)")?;
    let dtype = DType::from_onnx(tensor.elem_type())
        .ok_or_else(|| format!("unsupported element type code {}", tensor.elem_type()))?;
    let shape = tensor.shape.as_ref().ok_or("the model gives it no shape, but its rank is needed")?;
    let dims = shape.dim.iter().map(Dim::from_proto).collect();
    Ok(TensorType::new(dtype, dims))
}

#[cfg(test)]
mod tests {
    use super::DType;

    #[test]
    fn int_ranges_nest_by_width_and_sign() {
        assert!(DType::U8.int_range_within(DType::I16));
        assert!(DType::U8.int_range_within(DType::U8));
        assert!(DType::I4.int_range_within(DType::I8));
        assert!(!DType::U8.int_range_within(DType::I8));
        assert!(!DType::I8.int_range_within(DType::U64));
        assert!(!DType::I64.int_range_within(DType::I32));
        assert!(!DType::F32.int_range_within(DType::I64));
    }
}
