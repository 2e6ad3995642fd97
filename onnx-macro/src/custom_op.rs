//! `#[onnx_custom_op]`: keeps the hook function and emits its signature constant
//! (`__onnx_hook_signature_<name>`), which the model's generated code checks at compile time.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, ItemFn, PathArguments, ReturnType, Type};

/// `(rank, kind)` tokens of a `Tensor<D>`, `Tensor<D, Int>` or `Tensor<D, Bool>` type.
fn tensor_entry(ty: &Type) -> syn::Result<TokenStream> {
    let fail = || syn::Error::new(ty.span(), "hook tensors must be `Tensor<D>`, `Tensor<D, Int>` or `Tensor<D, Bool>`");
    let Type::Path(path) = ty else { return Err(fail()) };
    let last = path.path.segments.last().ok_or_else(fail)?;
    if last.ident != "Tensor" {
        return Err(fail());
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else { return Err(fail()) };
    let mut args = args.args.iter();
    let rank = match args.next() {
        Some(GenericArgument::Const(syn::Expr::Lit(l))) => l.lit.clone(),
        Some(GenericArgument::Type(Type::Path(p))) if p.path.get_ident().is_none() => return Err(fail()),
        _ => return Err(fail()),
    };
    let kind = match args.next() {
        None => quote! { Float },
        Some(GenericArgument::Type(Type::Path(p))) => {
            match p.path.segments.last().map(|s| s.ident.to_string()).as_deref() {
                Some("Float") => quote! { Float },
                Some("Int") => quote! { Int },
                Some("Bool") => quote! { Bool },
                _ => return Err(fail()),
            }
        }
        _ => return Err(fail()),
    };
    Ok(quote_spanned! {ty.span()=> (#rank, burn_onnx::hook::TensorKind::#kind) })
}

pub fn expand(item: TokenStream) -> syn::Result<TokenStream> {
    let func: ItemFn = syn::parse2(item)?;
    let mut inputs = vec![];
    let arg_count = func.sig.inputs.len();
    for (i, arg) in func.sig.inputs.iter().enumerate() {
        let FnArg::Typed(typed) = arg else {
            return Err(syn::Error::new_spanned(arg, "a hook is a free function, not a method"));
        };
        if i + 1 == arg_count {
            // The last argument receives the node's attributes.
            if !matches!(&*typed.ty, Type::Reference(_)) {
                return Err(syn::Error::new(
                    typed.ty.span(),
                    "a hook's last argument must be `&burn_onnx::hook::NodeAttributes`",
                ));
            }
            continue;
        }
        inputs.push(tensor_entry(&typed.ty)?);
    }
    if arg_count == 0 {
        return Err(syn::Error::new_spanned(
            &func.sig,
            "a hook takes the node's tensors and `&burn_onnx::hook::NodeAttributes`",
        ));
    }
    let outputs = match &func.sig.output {
        ReturnType::Default => {
            return Err(syn::Error::new_spanned(&func.sig, "a hook returns the node's output tensor(s)"))
        }
        ReturnType::Type(_, ty) => match &**ty {
            Type::Tuple(t) => t.elems.iter().map(tensor_entry).collect::<syn::Result<Vec<_>>>()?,
            other => vec![tensor_entry(other)?],
        },
    };
    let name = format_ident!("__onnx_hook_signature_{}", func.sig.ident);
    let vis = &func.vis;
    Ok(quote! {
        #func

        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        #vis const #name: burn_onnx::hook::HookSignature = burn_onnx::hook::HookSignature {
            inputs: &[#(#inputs),*],
            outputs: &[#(#outputs),*],
        };
    })
}
