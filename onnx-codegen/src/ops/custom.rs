use super::EmitOp;
use crate::emitter::{float_literal, lit, Emitter};
use crate::error::Result;
use onnx_ir::ops::{AttrValue, CustomOp};
use onnx_ir::{Kind, Node, TensorType};
use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};

fn attribute_tokens(value: &AttrValue) -> TokenStream {
    let v = quote! { burn_onnx::hook::AttributeValue };
    match value {
        AttrValue::Int(i) => {
            let i = Literal::i64_unsuffixed(*i);
            quote! { #v::Int(#i) }
        }
        AttrValue::Float(f) => {
            let f = float_literal(*f);
            quote! { #v::Float(#f) }
        }
        AttrValue::Ints(list) => {
            let list = list.iter().map(|i| Literal::i64_unsuffixed(*i));
            quote! { #v::Ints(&[#(#list),*]) }
        }
        AttrValue::Floats(list) => {
            let list = list.iter().map(|f| float_literal(*f));
            quote! { #v::Floats(&[#(#list),*]) }
        }
        AttrValue::String(s) => quote! { #v::String(#s) },
    }
}

fn signature_entry(ty: &TensorType) -> TokenStream {
    let rank = lit(ty.rank().max(1));
    let kind = match ty.dtype.kind() {
        Kind::Float => quote! { Float },
        Kind::Int => quote! { Int },
        // Never reached: the IR refuses string tensors outside the text ops.
        Kind::Bool | Kind::String => quote! { Bool },
    };
    quote! { (#rank, burn_onnx::hook::TensorKind::#kind) }
}

fn describe(types: &[&TensorType]) -> String {
    let parts: Vec<String> =
        types.iter().map(|t| format!("Tensor<{}, {:?}>", t.rank().max(1), t.dtype.kind())).collect();
    parts.join(", ")
}

/// The hook call for a node, and a compile-time check that the hook's declared signature fits
/// the node (registered with the emitter, emitted beside the struct).
pub fn custom(e: &mut Emitter, node: &Node, c: &CustomOp) -> Result<TokenStream> {
    let op_name = format!("{}::{}", onnx_ir::domain::display(&c.domain), c.op_type);
    let hook = e.hook(&c.domain, &c.op_type).ok_or_else(|| e.error(format!("no hook for {op_name}")))?;
    let mut args = vec![];
    let mut input_types = vec![];
    for i in 0..node.inputs.len() {
        let id = e.input_id(&node.inputs, i).map_err(|_| {
            e.error(format!("hook `{}`: optional input {i} is absent, which hooks cannot receive yet", hook.label))
        })?;
        input_types.push(e.ty(id));
        args.push(e.use_value(id)?);
    }
    let output_types: Vec<&TensorType> = node.outputs.iter().map(|&o| e.ty(o)).collect();
    let attributes = c.attributes.iter().map(|(name, value)| {
        let value = attribute_tokens(value);
        quote! { (#name, #value) }
    });
    let (inputs_sig, outputs_sig) =
        (input_types.iter().map(|t| signature_entry(t)), output_types.iter().map(|t| signature_entry(t)));
    let message = format!(
        "hook `{}` does not fit node `{}` ({op_name}): it must take ({}, &burn_onnx::hook::NodeAttributes) and return ({})",
        hook.label,
        node.name,
        describe(&input_types),
        describe(&output_types)
    );
    let signature = &hook.signature;
    let span = signature.clone().into_iter().next().map(|t| t.span()).unwrap_or_else(proc_macro2::Span::call_site);
    e.checks.push(quote_spanned! {span=>
        const _: () = assert!(burn_onnx::hook::fits(&#signature, &[#(#inputs_sig),*], &[#(#outputs_sig),*]), #message);
    });
    let call = &hook.call;
    Ok(quote! { #call(#(#args,)* &burn_onnx::hook::NodeAttributes(&[#(#attributes),*])) })
}

impl EmitOp for CustomOp {
    fn emit(&self, e: &mut Emitter, node: &Node) -> Result<TokenStream> {
        custom(e, node, self)
    }
}
