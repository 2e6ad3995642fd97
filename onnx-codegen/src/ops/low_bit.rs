//! Casts into ONNX's low-bit types, whose values run in carrier tensors (f32 for the 8- and
//! 4-bit floats, Int for the 4- and 2-bit integers): runtime-support rounds or wraps each value
//! as ONNX does. Casts out of them need nothing: a carrier already holds the exact values.
//! Integer-to-integer casts wrap here too, whatever the width.

use crate::emitter::variant;
use onnx_ir::ops::E8M0Rounding;
use onnx_ir::{DType, Kind};
use proc_macro2::TokenStream;
use quote::quote;

/// The `burn_onnx::ops::MiniFloat` variant of a narrow float type: the IR's own value (one type,
/// `onnx-op-types`, on both sides), named by its variant.
pub fn mini_float(dtype: DType) -> Option<TokenStream> {
    let format = proc_macro2::Ident::new(&format!("{:?}", dtype.mini_float()?), proc_macro2::Span::call_site());
    Some(quote! { #format })
}

fn narrow_int(dtype: DType) -> Option<TokenStream> {
    Some(match dtype {
        DType::U4 => quote! { U4 },
        DType::I4 => quote! { I4 },
        DType::U2 => quote! { U2 },
        DType::I2 => quote! { I2 },
        _ => return None,
    })
}

/// `x`, a tensor of type `from`, cast to FLOAT8E8M0 (`saturate`, `round_mode`: see `Op::Cast`).
pub fn cast_to_e8m0(x: TokenStream, from: DType, saturate: bool, round_mode: E8M0Rounding) -> TokenStream {
    let x = float(x, from);
    let rounding = variant(round_mode);
    quote! { burn_onnx::ops::cast_to_e8m0(#x, burn_onnx::ops::E8M0Rounding::#rounding, #saturate) }
}

/// `x` as a float tensor (`from` is its IR type).
fn float(x: TokenStream, from: DType) -> TokenStream {
    if from.kind() == Kind::Float {
        x
    } else {
        quote! { #x.float() }
    }
}

/// `x`, a tensor of type `from`, cast to the low-bit type `to` (`saturate`: see `Op::Cast`);
/// `None` when `to` is not low-bit.
pub fn cast_to(x: TokenStream, from: DType, to: DType, saturate: bool) -> Option<TokenStream> {
    if let Some(format) = mini_float(to) {
        let x = float(x, from);
        return Some(quote! { burn_onnx::ops::cast_to_mini_float(#x, burn_onnx::ops::MiniFloat::#format, #saturate) });
    }
    let variant = narrow_int(to)?;
    Some(match from.kind() {
        Kind::Float => quote! { burn_onnx::ops::cast_float_to_narrow_int(#x, burn_onnx::ops::NarrowInt::#variant) },
        Kind::Int => int_to_int(x, from, to),
        // 0 and 1 are in every narrow integer's range but int2's, where 1 still is.
        Kind::Bool => quote! { #x.int() },
        Kind::String => return None,
    })
}

/// `x`, a tensor of integer type `from`, cast to integer type `to`: values outside `to`'s
/// range wrap (see `burn_onnx::ops::wrap_int`); nothing to do when `to` holds all of `from`.
pub fn int_to_int(x: TokenStream, from: DType, to: DType) -> TokenStream {
    match to.int_bits() {
        Some((bits, signed)) if bits < 64 && !from.int_range_within(to) => {
            quote! { burn_onnx::ops::wrap_int(#x, #bits, #signed) }
        }
        _ => x,
    }
}
