//! The `#[onnx_model]` attribute: parses its arguments and hands the work to `onnx-codegen`.
//! Every failure becomes a `compile_error!`: one about the model at its path literal, one about
//! an option at the option; a panic inside the library is caught and reported as a bug rather
//! than crashing the compiler.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod custom_op;

use onnx_codegen::{CodegenError, DimSize, FrontDoor, Hook, InputShape, Request, WeightsMode};
use proc_macro::TokenStream;
use syn::parse::{Parse, ParseStream};
use syn::{ItemStruct, LitBool, LitStr, Token};

/// What `weights` takes.
const WEIGHTS: &str = "\"embed\", \"file\" or \"none\"";
/// What `simplify` and `partition` take.
const BOOL: &str = "`true` or `false`";
const OPTIONS: &str = "weights = \"embed\" | \"file\" | \"none\", simplify = <bool>, partition = <bool>, dump = \"<dir>\", input_shapes = [\"name=[d0, d1, ...]\", ...], dims = [\"dim_name=size\", ...], custom_ops = [\"domain::Op\" => hook, ...]";

struct Args {
    model: LitStr,
    /// `None` when the attribute names none (see `Request::weights`).
    weights: Option<WeightsMode>,
    simplify: bool,
    partition: bool,
    dump: Option<LitStr>,
    input_shapes: Vec<InputShape>,
    dim_sizes: Vec<DimSize>,
    hooks: Vec<Hook>,
}

/// A declaration in a string literal (`"name=[d0, d1, ...]"`, `"dim_name=size"`), its syntax
/// error at the literal.
fn parse_declaration<T: std::str::FromStr<Err = String>>(input: ParseStream) -> syn::Result<T> {
    let spec: LitStr = input.parse()?;
    spec.value().parse().map_err(|message: String| syn::Error::new(spec.span(), message))
}

/// `"domain::OpType" => path::to::hook` (no domain: the default ONNX domain).
fn parse_hook(input: ParseStream) -> syn::Result<Hook> {
    let key: LitStr = input.parse()?;
    input.parse::<Token![=>]>()?;
    let path: syn::Path = input.parse()?;
    let text = key.value();
    let (domain, op_type) = match text.rsplit_once("::") {
        Some((d, o)) => (if d == "ai.onnx" { String::new() } else { d.to_string() }, o.to_string()),
        None => (String::new(), text.clone()),
    };
    if op_type.is_empty() {
        return Err(syn::Error::new(
            key.span(),
            format!("expected \"domain::OpType\" (e.g. \"com.microsoft::FusedMatMul\"), got {text:?}"),
        ));
    }
    let mut signature = path.clone();
    if let Some(last) = signature.segments.last_mut() {
        last.ident = quote::format_ident!("__onnx_hook_signature_{}", last.ident, span = last.ident.span());
    }
    let label = quote::quote!(#path).to_string().replace(' ', "");
    Ok(Hook { domain, op_type, call: quote::quote!(#path), signature: quote::quote!(#signature), label })
}

/// The value of option `key`; a value of the wrong kind is an error at it saying what `key` takes.
fn option_value<T: Parse>(input: ParseStream, key: &syn::Ident, takes: &str) -> syn::Result<T> {
    input.parse().map_err(|e| syn::Error::new(e.span(), format!("`{key}` takes {takes}")))
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let model: LitStr = input
            .parse()
            .map_err(|e| syn::Error::new(e.span(), "expected the model path: #[onnx_model(\"path/to/model.onnx\")]"))?;
        let mut args = Args {
            model,
            weights: None,
            simplify: true,
            partition: true,
            dump: None,
            input_shapes: vec![],
            dim_sizes: vec![],
            hooks: vec![],
        };
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "weights" => {
                    let v: LitStr = option_value(input, &key, WEIGHTS)?;
                    args.weights = Some(match v.value().as_str() {
                        "embed" => WeightsMode::Embed,
                        "file" => WeightsMode::File,
                        "none" => WeightsMode::None,
                        other => {
                            return Err(syn::Error::new(
                                v.span(),
                                format!("unknown weights mode `{other}`; expected {WEIGHTS}"),
                            ))
                        }
                    });
                }
                "simplify" => args.simplify = option_value::<LitBool>(input, &key, BOOL)?.value,
                "partition" => args.partition = option_value::<LitBool>(input, &key, BOOL)?.value,
                "dump" => args.dump = Some(option_value(input, &key, "a folder path: dump = \"<dir>\"")?),
                "input_shapes" => {
                    let content;
                    syn::bracketed!(content in input);
                    args.input_shapes.extend(content.parse_terminated(parse_declaration, Token![,])?);
                }
                "dims" => {
                    let content;
                    syn::bracketed!(content in input);
                    args.dim_sizes.extend(content.parse_terminated(parse_declaration, Token![,])?);
                }
                "custom_ops" => {
                    let content;
                    syn::bracketed!(content in input);
                    let hooks = content.parse_terminated(parse_hook, Token![,])?;
                    args.hooks.extend(hooks);
                }
                other => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!("unknown option `{other}`; valid options: {OPTIONS}"),
                    ))
                }
            }
        }
        Ok(args)
    }
}

// The examples expand into code that names `burn_onnx` (which re-exports this crate): they are
// doc-tests of the book's crate (book/lib.rs), which depends on it. A dev-dependency here would
// make cargo build burn a second time, for the host, as a proc macro's dependencies are.
#[cfg_attr(not(doctest), doc = include_str!("onnx_model.md"))]
#[proc_macro_attribute]
pub fn onnx_model(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> syn::Result<proc_macro2::TokenStream> {
    let args: Args = syn::parse2(attr)?;
    let item: ItemStruct = syn::parse2(item)?;
    if !item.fields.is_empty() || !item.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(&item, "#[onnx_model] expects a unit struct: `pub struct Model;`"));
    }
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(Into::into).unwrap_or_default();
    let attrs = &item.attrs;
    let vis = &item.vis;
    let request = Request {
        manifest_dir,
        model: args.model.value(),
        weights: args.weights,
        simplify: args.simplify,
        partition: args.partition,
        dump: args.dump.as_ref().map(LitStr::value),
        name: item.ident.clone(),
        vis: quote::quote! { #vis },
        attrs: quote::quote! { #(#attrs)* },
        input_shapes: args.input_shapes,
        dim_sizes: args.dim_sizes,
        hooks: args.hooks,
    };
    // What the import reports is about the model, so it points at the path; failing to write
    // the dump points at that option.
    let span = args.model.span();
    let span_of = |e: &CodegenError| match (e, &args.dump) {
        (CodegenError::Dump { .. }, Some(dump)) => dump.span(),
        _ => span,
    };
    match std::panic::catch_unwind(|| onnx_codegen::expand(&request)) {
        Ok(Ok(tokens)) => Ok(tokens),
        Ok(Err(e)) => {
            Err(syn::Error::new(span_of(&e), format!("{}: {}", args.model.value(), e.report(FrontDoor::Macro))))
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(syn::Error::new(
                span,
                format!("{}: internal error in the ONNX importer (please report it): {message}", args.model.value()),
            ))
        }
    }
}

// Its example is a doc-test of the book's crate, as `onnx_model`'s are.
#[cfg_attr(not(doctest), doc = include_str!("onnx_custom_op.md"))]
#[proc_macro_attribute]
pub fn onnx_custom_op(_attr: TokenStream, item: TokenStream) -> TokenStream {
    match custom_op::expand(item.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}
