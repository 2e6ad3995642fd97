//! The option types of ONNX operators that both sides of Burn ONNX name: the importer's IR
//! (`onnx-ir`, which reads them from a model's attributes) and the runtime (`burn_onnx`, whose
//! functions the generated code calls with them). One definition each, so that the two cannot
//! drift apart; `no_std`, no dependencies. The code generator names a value by its variant
//! ([`Spelled::variant_name`]), which is the same on both sides because the type is.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// An enum that a model spells as a string attribute (declared with [`spelled_enum!`]).
pub trait Spelled: Copy + PartialEq + 'static {
    /// Every accepted spelling and its value, in the order an error message lists them.
    const SPELLINGS: &'static [(&'static str, Self)];

    /// The variant's Rust name: the runtime's enums name their variants the same, so the code
    /// generator names them from this closed set, never from a model's string.
    fn variant_name(self) -> &'static str;

    /// The value's first spelling, as messages quote it (`spelled_enum!` gives every variant one).
    fn spelling(self) -> &'static str {
        Self::SPELLINGS.iter().find(|(_, v)| *v == self).map_or("", |(s, _)| s)
    }
}

/// Declares a fieldless enum and its [`Spelled`] table: `Variant = "spelling" | "alias"`.
#[macro_export]
macro_rules! spelled_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($(#[$vmeta:meta])* $variant:ident = $($spelling:literal)|+),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name { $($(#[$vmeta])* #[doc = concat!("\n\nONNX spelling: ", $("`", $spelling, "` "),+)] $variant),+ }

        impl $crate::Spelled for $name {
            const SPELLINGS: &'static [(&'static str, Self)] = &[$($(($spelling, Self::$variant)),+),+];

            fn variant_name(self) -> &'static str {
                match self { $(Self::$variant => stringify!($variant)),+ }
            }
        }
    };
}

spelled_enum! {
    /// Resize's `nearest_mode`: how a nearest-neighbour coordinate rounds.
    pub enum NearestMode {
        /// Round half down (the default).
        RoundPreferFloor = "round_prefer_floor",
        /// Round half up.
        RoundPreferCeil = "round_prefer_ceil",
        /// Toward negative infinity.
        Floor = "floor",
        /// Toward positive infinity.
        Ceil = "ceil",
    }
}

spelled_enum! {
    /// Resize's `coordinate_transformation_mode`: how an output coordinate maps to the input.
    pub enum CoordinateMode {
        /// `(x + 0.5) / scale - 0.5` (the default).
        HalfPixel = "half_pixel",
        /// Half pixel about the centre of the resized extent.
        HalfPixelSymmetric = "half_pixel_symmetric",
        /// Half pixel, but 0 where the output length is 1.
        PytorchHalfPixel = "pytorch_half_pixel",
        /// The corners' centres aligned.
        AlignCorners = "align_corners",
        /// `x / scale`.
        Asymmetric = "asymmetric",
        /// TensorFlow's crop-and-resize, within `roi`.
        TfCropAndResize = "tf_crop_and_resize",
    }
}

spelled_enum! {
    /// Resize's `keep_aspect_ratio_policy` (with `sizes`).
    pub enum AspectPolicy {
        /// Each axis to its size (the default).
        Stretch = "stretch",
        /// One scale for every axis, the largest that keeps each within its size.
        NotLarger = "not_larger",
        /// One scale for every axis, the smallest that keeps each at least its size.
        NotSmaller = "not_smaller",
    }
}

spelled_enum! {
    /// GridSample's `padding_mode`: the value of a sample outside the input.
    pub enum GridPadding {
        /// Zero (the default).
        Zeros = "zeros",
        /// The nearest border value.
        Border = "border",
        /// Reflected about the border.
        Reflection = "reflection",
    }
}

spelled_enum! {
    /// StringNormalizer's `case_change_action`.
    pub enum CaseChange {
        /// To lower case.
        Lower = "LOWER",
        /// To upper case.
        Upper = "UPPER",
        /// Unchanged (the default).
        Keep = "NONE",
    }
}

spelled_enum! {
    /// TfIdfVectorizer's `mode`: what each n-gram's entry counts.
    pub enum TfIdfMode {
        /// The n-gram's count.
        Tf = "TF",
        /// Its weight where it occurs.
        Idf = "IDF",
        /// Its count times its weight.
        TfIdf = "TFIDF",
    }
}

spelled_enum! {
    /// How a cast to FLOAT8E8M0 rounds (Cast's `round_mode`).
    pub enum E8M0Rounding {
        /// To the power of two at or above the magnitude (the default).
        Up = "up",
        /// To the power of two at or below it.
        Down = "down",
        /// To the nearer of the two, ties up.
        Nearest = "nearest",
    }
}

impl E8M0Rounding {
    /// `x` as FLOAT8E8M0 (the powers of two 2^-127 ..= 2^127, and NaN), as the spec's table
    /// and ONNX Runtime have it: a value in that range rounds to a power of two (`Nearest`: up
    /// from 1.5 times the one below); one outside it, infinities, zero and negative values
    /// (which the spec leaves unspecified) included, becomes the nearer end with `saturate` and
    /// NaN without. ONNX's reference instead rounds the f32 exponent bits of any value (zero
    /// and the f32 subnormals to 2^-127 or 2^-126, infinities to NaN, the sign ignored); its
    /// backend tests hold only values where the two agree.
    pub fn round(self, x: f32, saturate: bool) -> f32 {
        let (smallest, largest) = (f32::from_bits(1 << 22), f32::from_bits(254 << 23));
        if x.is_nan() {
            return f32::NAN;
        }
        if x < smallest || x > largest {
            return match (saturate, x < smallest) {
                (false, _) => f32::NAN,
                (true, true) => smallest,
                (true, false) => largest,
            };
        }
        // The power of two at or below x: its exponent field, or 2^-127 for an f32 subnormal.
        let below = match x.to_bits() >> 23 {
            0 => smallest,
            exponent => f32::from_bits(exponent << 23),
        };
        let fraction = x / below;
        let up = match self {
            Self::Up => fraction > 1.0,
            Self::Down => false,
            Self::Nearest => fraction >= 1.5,
        };
        if up {
            2.0 * below
        } else {
            below
        }
    }
}

/// The tree ensembles' `aggregate_function`: how the trees' leaf weights for a target combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreeAggregate {
    /// The sum over the trees, divided by the number of trees (0).
    Average,
    /// The sum (1, the default).
    Sum,
    /// The smallest (2; the type's largest value where no tree reaches the target).
    Min,
    /// The largest (3; the type's lowest value where no tree reaches the target).
    Max,
}

/// A tree branch's comparison of its feature with its split (`nodes_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreeMode {
    /// `x <= split` (`BRANCH_LEQ`, 0).
    Leq,
    /// `x < split` (`BRANCH_LT`, 1).
    Lt,
    /// `x >= split` (`BRANCH_GTE`, 2).
    Gte,
    /// `x > split` (`BRANCH_GT`, 3).
    Gt,
    /// `x == split` (`BRANCH_EQ`, 4).
    Eq,
    /// `x != split` (`BRANCH_NEQ`, 5).
    Neq,
    /// `x` is one of the node's set members (`BRANCH_MEMBER`, 6, TreeEnsemble at ai.onnx.ml 5).
    Member,
}

/// Where a tree branch leads: another branch node or a leaf, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreeChild {
    /// A branch node.
    Node(usize),
    /// A leaf (an index into the leaves' weights).
    Leaf(usize),
}

/// ONNX's narrow float types (8 and 4 bits), which no backend computes in: the IR decodes their
/// stored bit patterns, the runtime rounds f32 values to them (a Cast to one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MiniFloat {
    /// FLOAT8E4M3FN: no infinities, NaN, largest 448.
    E4M3FN,
    /// FLOAT8E4M3FNUZ: no infinities, no -0, NaN, largest 240.
    E4M3FNUZ,
    /// FLOAT8E5M2: infinities and NaN as IEEE 754, largest 57344.
    E5M2,
    /// FLOAT8E5M2FNUZ: no infinities, no -0, NaN, largest 57344.
    E5M2FNUZ,
    /// FLOAT4E2M1: no infinities, no NaN, largest 6.
    E2M1,
}

/// Which bit patterns of a narrow float are special.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Specials {
    /// IEEE 754 style: an all-ones exponent is ±inf (mantissa 0) or NaN (FLOAT8E5M2).
    Ieee,
    /// "Finite": no infinities; all ones (either sign) is NaN (FLOAT8E4M3FN).
    AllOnesNan,
    /// "Finite, unsigned zero": no infinities and no -0; the pattern of -0 (0x80) is the only
    /// NaN (the FNUZ types).
    NegativeZeroNan,
    /// No infinities and no NaN (FLOAT4E2M1).
    None,
}

/// A narrow float's encoding: field widths, exponent bias, special patterns and largest value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MiniFloatLayout {
    /// Bits of the exponent field.
    pub exponent_bits: u32,
    /// Bits of the mantissa field.
    pub mantissa_bits: u32,
    /// Exponent bias: a normal value is `1.m × 2^(e - bias)`, a subnormal `0.m × 2^(1 - bias)`.
    pub bias: i32,
    /// The special patterns.
    pub specials: Specials,
    /// The largest finite value.
    pub max: f64,
}

impl MiniFloat {
    /// The type's encoding.
    pub const fn layout(self) -> MiniFloatLayout {
        let (exponent_bits, mantissa_bits, bias, specials, max) = match self {
            Self::E4M3FN => (4, 3, 7, Specials::AllOnesNan, 448.0),
            Self::E4M3FNUZ => (4, 3, 8, Specials::NegativeZeroNan, 240.0),
            Self::E5M2 => (5, 2, 15, Specials::Ieee, 57344.0),
            Self::E5M2FNUZ => (5, 2, 16, Specials::NegativeZeroNan, 57344.0),
            Self::E2M1 => (2, 1, 1, Specials::None, 6.0),
        };
        MiniFloatLayout { exponent_bits, mantissa_bits, bias, specials, max }
    }
}

impl MiniFloatLayout {
    /// Whether the type has infinities.
    pub fn infinities(&self) -> bool {
        self.specials == Specials::Ieee
    }

    /// Whether the type has a negative zero.
    pub fn negative_zero(&self) -> bool {
        self.specials != Specials::NegativeZeroNan
    }

    /// Whether the type has NaN.
    pub fn nan(&self) -> bool {
        self.specials != Specials::None
    }
}
