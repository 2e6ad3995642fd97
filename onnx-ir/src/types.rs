//! Element types and (possibly symbolic) shapes of the values flowing through a graph.

use std::fmt;

/// Element type of a tensor, restricted to the ONNX types the importer can represent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    F16,
    BF16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Bool,
}

/// The three tensor kinds Burn distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Float,
    Int,
    Bool,
}

impl DType {
    /// Maps `TensorProto.DataType`; `None` for types we cannot hold (strings, complex, fp8).
    pub fn from_onnx(code: i32) -> Option<Self> {
        Some(match code {
            1 => Self::F32,
            2 => Self::U8,
            3 => Self::I8,
            4 => Self::U16,
            5 => Self::I16,
            6 => Self::I32,
            7 => Self::I64,
            9 => Self::Bool,
            10 => Self::F16,
            11 => Self::F64,
            12 => Self::U32,
            13 => Self::U64,
            16 => Self::BF16,
            _ => return None,
        })
    }

    /// Bytes per element in the little-endian raw layout.
    pub fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 | Self::Bool => 1,
            Self::F16 | Self::BF16 | Self::I16 | Self::U16 => 2,
            Self::F32 | Self::I32 | Self::U32 => 4,
            Self::F64 | Self::I64 | Self::U64 => 8,
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            Self::F16 | Self::BF16 | Self::F32 | Self::F64 => Kind::Float,
            Self::Bool => Kind::Bool,
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
    Static(usize),
    /// A named dimension (`dim_param`), such as a dynamic batch.
    Symbolic(String),
    Unknown,
}

impl Dim {
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

/// Element type and shape of a tensor value; the rank is always known.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Vec<Dim>,
}

impl TensorType {
    pub fn new(dtype: DType, shape: Vec<Dim>) -> Self {
        Self { dtype, shape }
    }

    pub fn from_static(dtype: DType, dims: &[usize]) -> Self {
        Self::new(dtype, dims.iter().map(|&d| Dim::Static(d)).collect())
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Same dtype and rank: what typed Rust needs of two values that share a variable.
    pub fn same_kind(&self, other: &TensorType) -> bool {
        self.dtype == other.dtype && self.rank() == other.rank()
    }

    /// The shape as numbers when every dimension is known at import time.
    pub fn static_shape(&self) -> Option<Vec<usize>> {
        self.shape.iter().map(Dim::as_static).collect()
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
