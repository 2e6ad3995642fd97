//! String tensors (`burn_onnx::StringTensor`, on the host): the text ops and Equal of strings,
//! each one call of `burn_onnx::ops`.

use super::EmitOp;
use crate::emitter::{lit, some_or_none, Emitter};
use crate::error::Result;
use onnx_ir::ops::text::{CaseChange, Labels, TextOp};
use onnx_ir::Node;
use proc_macro2::TokenStream;
use quote::quote;

pub fn text(e: &mut Emitter, node: &Node, op: &TextOp) -> Result<TokenStream> {
    match op {
        TextOp::Concat => {
            let (a, b, ranks) = broadcast_operands(e, node)?;
            Ok(quote! { burn_onnx::ops::string_concat::<#ranks>(#a, #b) })
        }
        TextOp::Split { delimiter, max_splits } => {
            let x_id = e.input_id(&node.inputs, 0)?;
            if e.rank(x_id) == 0 {
                return Err(e.error("StringSplit of a rank-0 string is not supported yet (only of tensors)"));
            }
            let (rank, parts_rank) = (lit(e.rank(x_id)), lit(e.rank(x_id) + 1));
            let x = e.input(&node.inputs, 0)?;
            let delimiter = some_or_none(delimiter.as_ref().map(|d| quote! { #d }));
            let max_splits = some_or_none(max_splits.map(lit).map(|n| quote! { #n }));
            let device = e.device();
            Ok(quote! { burn_onnx::ops::string_split::<#rank, #parts_rank>(#x, #delimiter, #max_splits, #device) })
        }
        TextOp::Normalize(c) => {
            let x = e.input(&node.inputs, 0)?;
            let stopwords = &c.stopwords;
            let (case_sensitive, ascii_case) = (c.case_sensitive, c.ascii_case);
            let case = match c.case {
                CaseChange::Lower => quote! { Lower },
                CaseChange::Upper => quote! { Upper },
                CaseChange::Keep => quote! { Keep },
            };
            Ok(quote! {
                burn_onnx::ops::string_normalize(
                    #x,
                    &[#(#stopwords),*],
                    #case_sensitive,
                    burn_onnx::ops::CaseChange::#case,
                    #ascii_case,
                )
            })
        }
        TextOp::FullMatch { pattern } => {
            let x = e.input(&node.inputs, 0)?;
            let device = e.device();
            Ok(quote! { burn_onnx::ops::regex_full_match(#x, #pattern, #device) })
        }
        TextOp::LabelEncoder(c) => {
            let x = e.input(&node.inputs, 0)?;
            let keys: Vec<TokenStream> = match &c.keys {
                Labels::Strings(v) => v.iter().map(|s| quote! { burn_onnx::ops::LabelKey::Str(#s) }).collect(),
                Labels::Ints(v) => v.iter().map(|&i| quote! { burn_onnx::ops::LabelKey::Int(#i) }).collect(),
                Labels::Floats(v) => v.iter().map(|&f| quote! { burn_onnx::ops::LabelKey::float(#f) }).collect(),
            };
            let (values, default) = (label_values(&c.values), label_values(&c.default));
            let default = &default[0];
            let device = e.device();
            let out = crate::emitter::tensor_type_tokens(e.ty(node.outputs[0]));
            Ok(quote! {
                burn_onnx::ops::label_encode::<_, _, #out>(#x, &[#(#keys),*], &[#(#values),*], #default, #device)
            })
        }
        TextOp::Positions => {
            let x = e.input(&node.inputs, 0)?;
            let device = e.device();
            Ok(quote! { burn_onnx::ops::string_positions(&#x, #device) })
        }
        TextOp::Take => {
            let (x, positions) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?);
            Ok(quote! { burn_onnx::ops::string_take(#x, #positions) })
        }
    }
}

/// ONNX `Equal` of two string tensors.
pub fn equal(e: &mut Emitter, node: &Node) -> Result<TokenStream> {
    let (a, b, ranks) = broadcast_operands(e, node)?;
    let device = e.device();
    Ok(quote! { burn_onnx::ops::string_equal::<#ranks>(#a, #b, #device) })
}

/// The two operands of a broadcasting string op and its `A, B, D` ranks (rank-0 values are
/// one-element vectors).
fn broadcast_operands(e: &mut Emitter, node: &Node) -> Result<(TokenStream, TokenStream, TokenStream)> {
    let (a_id, b_id) = (e.input_id(&node.inputs, 0)?, e.input_id(&node.inputs, 1)?);
    let ranks = [e.rank(a_id), e.rank(b_id), e.rank(node.outputs[0])].map(|r| lit(r.max(1)));
    let (a, b) = (e.input(&node.inputs, 0)?, e.input(&node.inputs, 1)?);
    Ok((a, b, quote! { #(#ranks),* }))
}

/// LabelEncoder values as literals of the output's `Labelled::Value` type.
fn label_values(labels: &Labels) -> Vec<TokenStream> {
    match labels {
        Labels::Strings(v) => v.iter().map(|s| quote! { #s }).collect(),
        Labels::Ints(v) => v.iter().map(|&i| quote! { #i }).collect(),
        Labels::Floats(v) => v.iter().map(|&f| quote! { #f }).collect(),
    }
}

impl EmitOp for TextOp {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        text(e, node, self)
    }
}
